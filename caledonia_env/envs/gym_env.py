"""Gymnasium single-agent view ``Caledonia-v0``: one learning seat, opponents inside.

======================  =================================================================
Import                  ``gymnasium.make("Caledonia-v0", **options)`` (registered by
                        ``import caledonia_env``), or
                        ``from caledonia_env.envs.gym_env import CaledoniaEnv``
Actions                 ``Discrete(2039)`` (``N_ACTIONS``, ``docs/actions.md``)
Parallel API            no
Agents                  one learner at ``seat`` (None: drawn at every reset among the
                        non-Automa seats); ``num_players`` 2-4, the opponents play inside
Observation             ``float32[5019]`` in ``Box(0, OBS_HIGH)`` (``docs/observation.md``)
Action mask             ``action_masks()``: ``bool[2039]`` (MaskablePPO);
                        ``info["action_mask"]`` the same as int8
Reward                  terminal: ``reward`` ``"win"`` (default) / ``"rank"`` /
                        ``"score_diff"`` of the learner; ``illegal_reward`` for an illegal
                        action under ``"penalize"``; ``shaping=W`` > 0 adds W times each
                        step's change of the learner's projected VP lead (0 by default)
Terminal condition      the game is over (R-7) or (``"penalize"``) an illegal action;
                        never truncated
Illegal action          ``gymnasium.make``: ``"penalize"`` (as ``caledonia_env.env()``, so
                        the env checkers pass); the class: ``"raise"``
                        (IllegalActionError, nothing applied)
Options                 ``num_players``, ``opponents``, ``seat``, ``reward``, ``shaping``,
                        ``illegal_action``, ``illegal_reward``, ``render_mode``,
                        GameConfig fields
======================  =================================================================

Each ``step`` applies the learner's action, then lets the opponents play until the learner
decides again or the game ends. See ``docs/envs.md``.
"""
from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from caledonia_env.config import check_seed
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.constants import CONTEXT_NAMES
from caledonia_env.engine.layout import S_CTX, S_PLAYER, S_ROUND
from caledonia_env.game import Game, IllegalActionError
from caledonia_env.envs.common import (
    ILLEGAL_MODES,
    RENDER_MODES,
    SEED_BOUND,
    Potential,
    check_choice,
    learner_step,
    final_info,
    make_config,
    observe,
    render,
    rewards_of,
)
from caledonia_env.envs.observation import OBS_HIGH, OBS_SIZE
from caledonia_env.envs.opponents import automa_level, make_opponent, opponent_specs, reset_opponent
from caledonia_env.envs.rewards import reward_mode


class CaledoniaEnv(gym.Env):
    """Single-agent Clans of Caledonia.

    Options: ``num_players`` (2-4); ``opponents``: one spec for every opponent
    or a list in seat order after the learner — a name (``"random"`` built in,
    others from ``agents.make``), an object with ``act(game)`` or a callable
    ``f(game) -> action id``; ``seat``: the learner's player index, or None to
    draw it at every reset; ``reward`` (``"win"``, ``"rank"``, ``"score_diff"``);
    ``shaping`` (0 default: the weight of :class:`~.common.Potential`, the change of the
    learner's projected VP lead over its step and the opponents' moves after it);
    ``illegal_action`` (``"raise"``, the class default, or ``"penalize"``, the default
    of ``gymnasium.make("Caledonia-v0")``: the episode ends with ``illegal_reward`` —
    for unmasked algorithms and API checkers that sample any action id); ``render_mode``; and every GameConfig field.
    ``"automa:LEVEL"`` opponents are Automa seats played inside the engine (A-0).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(self, num_players: int = 4, opponents="random", seat: int | None = None,
                 reward: str = "win", illegal_action: str = "raise",
                 illegal_reward: float = -1.0, render_mode: str | None = None,
                 shaping: float = 0.0, **config):
        self.config = make_config(num_players, config)
        n = self.config.num_players
        if seat is not None and not (isinstance(seat, (int, np.integer)) and 0 <= seat < n):
            raise ValueError(f"seat must be None (drawn each reset) or in 0..{n - 1}, got {seat!r}")
        if seat is not None and seat in (self.config.automa or {}):
            raise ValueError(f"seat {seat} is an Automa seat (automa={self.config.automa}); the "
                             f"learner needs a non-Automa seat")
        if render_mode is not None:
            check_choice("render_mode", render_mode, RENDER_MODES)
        check_choice("illegal_action", illegal_action, ILLEGAL_MODES)
        self.render_mode = render_mode
        self.fixed_seat = None if seat is None else int(seat)
        self.reward_mode = reward
        self._reward_mode = reward_mode(reward)
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.shaping = float(shaping)
        self._potential = Potential(shaping) if shaping else None   # None: a cheap test per step
        self.opponent_specs = opponent_specs(opponents, n - 1)
        self.opponents = [make_opponent(spec, seed=i) for i, spec in enumerate(self.opponent_specs)]
        self._automa_levels = [automa_level(spec) for spec in self.opponent_specs]
        self.observation_space = spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.game: Game | None = None
        self.seat = 0
        self._first = True

    # ------------------------------------------------------------ reset
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """New game: ``seed`` is the game's seed (as ``Game(seed=seed)``); the seat and the
        opponents' seeds come from the env's ``np_random``."""
        if seed is not None:
            seed = check_seed(seed, "reset(seed=...)")
        super().reset(seed=seed)
        if seed is not None:
            game_seed = seed
        elif self._first:
            game_seed = self.config.seed
            if self._np_random is None:
                self._np_random, _ = gym.utils.seeding.np_random(self.config.seed)
        else:
            game_seed = int(self.np_random.integers(SEED_BOUND))
        self._first = False
        n = self.config.num_players
        free = [p for p in range(n) if p not in (self.config.automa or {})]   # not Automa
        self.seat = self.fixed_seat if self.fixed_seat is not None else free[int(
            self.np_random.integers(len(free)))]
        automa = {(self.seat + 1 + i) % n: lv for i, lv in enumerate(self._automa_levels) if lv}
        config = dataclasses.replace(self.config, seed=game_seed)
        if automa:
            config = dataclasses.replace(config, automa={**(self.config.automa or {}), **automa})
        self.game = Game(config)
        for agent in self.opponents:
            if agent is not None:
                reset_opponent(agent, int(self.np_random.integers(SEED_BOUND)))
        self._play_opponents()
        if self._potential is not None:
            self._potential.reset(self.game)
        return observe(self.game, self.seat), self._info()

    def _opponent_of(self, player):
        return self.opponents[(player - self.seat) % self.game.num_players - 1]

    def _play_opponents(self):
        game = self.game
        while not game.is_terminal and game.current_player != self.seat:
            p = game.current_player
            a = self._opponent_of(p).act(game)
            try:
                game.step(a)
            except IllegalActionError as e:
                raise IllegalActionError(f"opponent {self._opponent_of(p)!r} at seat {p}: {e}") \
                    from None

    def _info(self, extra=None):
        """No None values (Tianshou); ``action_mask`` (int8, AgileRL reads it here) equals
        ``action_masks()``; ``acting_player`` is -1 at game over."""
        s = self.game.state
        p = int(s[S_PLAYER])
        d = {"context": CONTEXT_NAMES[int(s[S_CTX])], "seat": self.seat, "round": int(s[S_ROUND]),
             "acting_player": p, "action_mask": self.action_masks().astype(np.int8)}
        if extra:
            d.update(extra)
        return d

    # ------------------------------------------------------------- step
    def step(self, action):
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        game = self.game
        illegal = learner_step(game, action, self.illegal_action)
        if illegal is not None:
            info = self._info({"illegal_action": illegal})
            return observe(game, self.seat), self.illegal_reward, True, False, info
        self._play_opponents()
        obs = observe(game, self.seat)
        shaped = 0.0
        if self._potential is not None:
            shaped = float(self._potential.step(game)[self.seat])
        if game.is_terminal:
            r = rewards_of(game, self._reward_mode)
            info = self._info(final_info(game))
            return obs, float(r[self.seat]) + shaped, True, False, info
        return obs, shaped, False, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool[N_ACTIONS]; all False once the game is over)."""
        if self.game is None or self.game.current_player != self.seat:
            return np.zeros(N_ACTIONS, bool)
        return self.game.legal_mask()          # cached by the game: step() reuses it

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='human', "
                            "'ansi' or 'rgb_array' to gymnasium.make")
            return None
        return render(self.game, self.render_mode)

    def close(self):
        pass
