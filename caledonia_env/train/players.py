"""Batched policy players and many-game evaluation.

:class:`PolicyPlayer` plays a checkpoint's actor for many positions at once
(one torch forward per batch). :func:`play_games` runs a set of games between
any players — policy players (batched across the games in flight) and
ordinary bots from ``agents.make`` — and returns one row per player per game
in the format of :mod:`caledonia_env.tournament` (so its ``report`` prints
the same tables as ``caledonia play``).
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.mask import legal_mask
from caledonia_env.env.observation import OBS_SIZE, encode_obs

from ..agents.policy import PolicyPlayer
from ..tournament import result_rows

def resolve(spec, deterministic: bool = True):
    """A player from a spec: ``ppo:PATH`` / a PolicyPlayer (batched), or a bot name /
    agent object (one instance per game slot, made by the returned factory)."""
    if isinstance(spec, str):
        kind, sep, param = spec.strip().partition(":")
        if kind == "ppo":
            if not param:
                raise ValueError("ppo needs a checkpoint: ppo:PATH.zip or ppo:pretrained")
            return PolicyPlayer.from_param(param, deterministic, name=spec.strip())
        from .. import agents
        agents.make(spec, seed=0)           # validate the name now (clear error)
        return _BotFactory(spec.strip())
    if getattr(spec, "batched", False) or hasattr(spec, "act"):
        return spec
    raise TypeError(f"a player is an agent name, 'ppo:PATH' or an object with act(game); "
                    f"got {spec!r}")


class _BotFactory:
    """Makes one bot per game slot (bots keep a random stream; slots must not share it)."""
    batched = False

    def __init__(self, name):
        self.name = name

    def make(self, seed):
        from .. import agents
        return agents.make(self.name, seed=seed)


def _label(player) -> str:
    return getattr(player, "name", None) or repr(player)


def play_games(players: list, games: int, num_players: int | None = None, seed: int = 0,
               rotate: bool = True, batch: int = 64, map=None, labels=None,
               progress: Callable[[int], None] | None = None, game_kw: dict | None = None,
               deterministic: bool = True) -> list[dict]:
    """Play ``games`` games; ``players[r]`` plays role r. With ``rotate``, role r sits at
    player index (r + g) mod n in game g, so every role plays every index equally often.

    Game g's setup and the bots' seeds come from ``(seed, g)`` as in
    :func:`caledonia_env.tournament.game_seeds`, so results do not depend on ``batch``.
    Returns tournament CSV rows (one per player per game), sorted by (game, player);
    ``agent`` is the role's label; ``deterministic=False`` makes ``ppo:`` players sample.
    """
    from caledonia_env.config import GameConfig
    from caledonia_env.game import Game
    from caledonia_env.tournament import game_seeds

    n = num_players or len(players)
    if len(players) != n:
        raise ValueError(f"need one player per seat: {n} players, got {len(players)}")
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    roles = [resolve(p, deterministic) for p in players]
    labels = list(labels) if labels else [_label(p) for p in roles]
    rows: list[dict] = []
    active: dict[int, dict] = {}
    next_g = 0
    obs_buf = np.zeros((batch, OBS_SIZE), np.float32)
    mask_buf = np.zeros((batch, N_ACTIONS), np.int8)
    while active or next_g < games:
        while len(active) < batch and next_g < games:
            g = next_g
            next_g += 1
            game_seed, agent_seeds = game_seeds(seed, g, n)
            game = Game(GameConfig(num_players=n, seed=game_seed, map=map, **(game_kw or {})))
            seat_role = [((p - g) % n) if rotate else p for p in range(n)]
            ctrl = []
            for p in range(n):
                role = roles[seat_role[p]]
                if isinstance(role, _BotFactory):
                    bot = role.make(agent_seeds[p])
                else:
                    bot = role
                    if not getattr(bot, "batched", False) and hasattr(bot, "reset"):
                        bot.reset(agent_seeds[p])
                ctrl.append(bot)
            order = [int(x) for x in game.state[L.S_ORDER:L.S_ORDER + n]]
            active[g] = {"game": game, "ctrl": ctrl, "roles": seat_role, "order": order,
                         "think": [0.0] * n, "dec": [0] * n, "seed": game_seed}
        groups: dict[int, list] = {}
        for g, st in active.items():
            game = st["game"]
            p = game.current_player
            c = st["ctrl"][p]
            if getattr(c, "batched", False):
                groups.setdefault(id(c), [c, []])[1].append(g)
            else:
                t0 = time.perf_counter()
                a = c.act(game)
                st["think"][p] += time.perf_counter() - t0
                st["dec"][p] += 1
                game.step(a)
        for c, gs in groups.values():
            t0 = time.perf_counter()
            k = len(gs)
            for j, g in enumerate(gs):
                game = active[g]["game"]
                encode_obs(game.state, game.tables, game.current_player, obs_buf[j])
                legal_mask(game.state, game.tables, mask_buf[j])
            acts = c.act_batch(obs_buf[:k], mask_buf[:k])
            dt = (time.perf_counter() - t0) / k
            for j, g in enumerate(gs):
                st = active[g]
                p = st["game"].current_player
                st["think"][p] += dt
                st["dec"][p] += 1
                st["game"].step(int(acts[j]))
        for g in [g for g, st in active.items() if st["game"].is_terminal]:
            st = active.pop(g)
            game = st["game"]
            rows.extend(_rows(g, st, game, labels))
            if progress:
                progress(1)
    rows.sort(key=lambda r: (r["game"], r["player"]))
    return rows


def _rows(g, st, game, labels):
    rows = result_rows(game, g, st["seed"], st["order"], [labels[r] for r in st["roles"]],
                       st["dec"], st["think"])
    for p, row in enumerate(rows):
        row["role"] = st["roles"][p]
    return rows


def summarize(rows: list[dict], role: int = 0) -> dict:
    """Win share of ``role`` with its Wilson 95% CI, mean VP (own and the others')."""
    from caledonia_env.tournament import wilson
    mine = [r for r in rows if r["role"] == role]
    others = [r for r in rows if r["role"] != role]
    n = len(mine)
    if n == 0:
        raise ValueError(f"no games for role {role}")
    wins = float(sum(r["win"] for r in mine))
    lo, hi = wilson(wins, n)
    return {"games": n, "wins": wins, "win_rate": wins / n, "ci_low": lo, "ci_high": hi,
            "vp": float(np.mean([r["total"] for r in mine])),
            "opp_vp": float(np.mean([r["total"] for r in others])) if others else float("nan")}
