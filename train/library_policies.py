"""Win rate of any library's policy against a bot, seats rotated (the examples' learning check).

A library's policy is a function ``policy(obs, masks) -> actions`` on batches
(``obs``: float32[B, OBS_SIZE], ``masks``: int8[B, N_ACTIONS]; one legal action id per row).
:func:`win_rate_vs` plays it against a bot (``"random"`` by default) with
:func:`caledonia_env.train.batched_play.play_games`: the policy's seat rotates over the games
(game g puts it at player index g mod n), so no seat advantage enters the rate.
"""
from __future__ import annotations

import numpy as np

from caledonia_env.train.batched_play import play_games, summarize


class FunctionPlayer:
    """A batched player (``play_games`` gives it every game waiting on it at once) from a
    ``policy(obs, masks) -> actions`` function; an illegal choice raises ValueError."""

    batched = True

    def __init__(self, policy, name: str = "policy"):
        self.policy = policy
        self.name = name

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, rngs=None) -> np.ndarray:
        actions = np.asarray(self.policy(obs, masks), dtype=np.int64).reshape(-1)
        if actions.shape != (len(obs),):
            raise ValueError(f"policy returned {actions.shape[0]} actions for {len(obs)} "
                             f"positions")
        legal = masks[np.arange(len(obs)), actions] > 0
        if not legal.all():
            j = int(np.flatnonzero(~legal)[0])
            raise ValueError(f"policy chose illegal action {int(actions[j])} (row {j}); "
                             f"pick among the mask's nonzero entries")
        return actions


def win_rate_vs(policy, games: int = 100, num_players: int = 2, opponent: str = "random",
                seed: int = 0) -> dict:
    """Play ``games`` games of ``policy`` against ``num_players - 1`` copies of the bot
    ``opponent``, seats rotated; returns :func:`summarize`'s dict (``win_rate``, ``ci_low``,
    ``ci_high``, ``vp``, ``opp_vp``, ``games``)."""
    rows = play_games([FunctionPlayer(policy)] + [opponent] * (num_players - 1), games,
                      num_players=num_players, seed=seed, labels=["policy"] +
                      [opponent] * (num_players - 1))
    return summarize(rows, role=0)


def format_rate(label: str, st: dict) -> str:
    """One line: ``label: win rate 0.47 [0.38, 0.56] over 100 games vs random``."""
    return (f"{label}: win rate {st['win_rate']:.2f} [{st['ci_low']:.2f}, {st['ci_high']:.2f}] "
            f"over {st['games']} games (VP {st['vp']:.1f} vs {st['opp_vp']:.1f})")
