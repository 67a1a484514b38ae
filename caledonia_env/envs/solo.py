"""Gymnasium single-agent view of the solo game (R-9.2): ``CaledoniaSolo-v0``.

======================  =================================================================
Import                  ``gymnasium.make("CaledoniaSolo-v0", **options)`` (registered by
                        ``import caledonia_env``), or
                        ``from caledonia_env.envs.solo import CaledoniaSoloEnv``
Actions                 ``Discrete(2039)`` (``N_ACTIONS``, ``docs/actions.md``)
Parallel API            no
Agents                  one player against the solo rules (R-9.2)
Observation             ``float32[5019]`` in ``Box(0, OBS_HIGH)`` (``docs/observation.md``)
Action mask             ``action_masks()``: ``bool[2039]`` (MaskablePPO);
                        ``info["action_mask"]`` the same as int8 (reset and every step)
Reward                  ``"vp"`` (default): the final VP at the last step; ``"round"``: the
                        glory of each round's scoring (R-6.4) when it is scored and the
                        rest of the final VP at the end (same sum); both times
                        ``reward_scale``; ``illegal_reward`` (not scaled) for an illegal
                        action under ``"penalize"``
Terminal condition      the solo game is over or (``"penalize"``) an illegal action;
                        never truncated
Illegal action          ``gymnasium.make``: ``"penalize"``; the class: ``"raise"``
Options                 ``reward``, ``reward_scale``, ``illegal_action``,
                        ``illegal_reward``, ``render_mode``, GameConfig fields
                        (``num_players``, ``solo`` and ``automa`` are fixed)
======================  =================================================================

Every decision of the game is one step. The last ``info`` holds ``score``,
``score_breakdown`` and the ``rating`` band (R-9.2). See ``docs/envs.md``.
"""
from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from caledonia_env.config import GameConfig, check_seed
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.constants import CONTEXT_NAMES
from caledonia_env.engine.layout import P_GLORY, S_CTX, S_PLAYERS, S_ROUND
from caledonia_env.game import Game
from caledonia_env.envs.common import ILLEGAL_MODES, learner_step, RENDER_MODES, SEED_BOUND, check_choice, observe, render
from caledonia_env.envs.observation import OBS_HIGH, OBS_SIZE

SOLO_REWARDS = ("vp", "round")


class CaledoniaSoloEnv(gym.Env):
    """The solo game (R-9.2) as a single-agent benchmark.

    Options: ``reward`` (``"vp"`` or ``"round"``), ``reward_scale`` (multiplies every
    reward), ``illegal_action`` (``"raise"`` or ``"penalize"``: the episode ends with
    ``illegal_reward``), ``render_mode``, and the GameConfig fields (``seed``, ``map``,
    ``ruleset``, variants; ``num_players`` and ``solo`` are fixed).
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    def __init__(self, reward: str = "vp", reward_scale: float = 1.0,
                 illegal_action: str = "raise", illegal_reward: float = -1.0,
                 render_mode: str | None = None, **config):
        check_choice("reward", reward, SOLO_REWARDS)
        check_choice("illegal_action", illegal_action, ILLEGAL_MODES)
        if render_mode is not None:
            check_choice("render_mode", render_mode, RENDER_MODES)
        for key in ("num_players", "solo", "automa"):
            if key in config:
                raise TypeError(f"CaledoniaSolo-v0 fixes {key!r} (the solo game, R-9.2)")
        self.config = GameConfig(num_players=1, solo=True, **config)
        self.reward_mode = reward
        self.reward_scale = float(reward_scale)
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.game: Game | None = None
        self._glory = 0
        self._first = True

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """New solo game; ``seed`` is the game's seed (as ``Game(seed=seed)``)."""
        if seed is not None:
            seed = check_seed(seed, "reset(seed=...)")
        super().reset(seed=seed)
        if seed is not None:
            game_seed = seed
        elif self._first:
            game_seed = self.config.seed
        else:
            game_seed = int(self.np_random.integers(SEED_BOUND))
        self._first = False
        self.game = Game(dataclasses.replace(self.config, seed=game_seed))
        self._glory = self._glory_now()
        return observe(self.game, 0), self._info()

    def _glory_now(self) -> int:
        return int(self.game.state[S_PLAYERS + P_GLORY])

    def _info(self, extra=None):
        """``action_mask`` (int8, as ``Caledonia-v0``'s infos: AgileRL reads it here) equals
        ``action_masks()``: all zeros once the game is over."""
        s = self.game.state
        d = {"context": CONTEXT_NAMES[int(s[S_CTX])], "round": int(s[S_ROUND]),
             "action_mask": self.action_masks().astype(np.int8)}
        if extra:
            d.update(extra)
        return d

    def step(self, action):
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        game = self.game
        illegal = learner_step(game, action, self.illegal_action)
        if illegal is not None:
            return (observe(game, 0), self.illegal_reward, True, False,
                    self._info({"illegal_action": illegal}))
        obs = observe(game, 0)
        reward = 0.0
        if self.reward_mode == "round":
            glory = self._glory_now()
            reward = float(glory - self._glory)
            self._glory = glory
        if game.is_terminal:
            breakdown = game.score_breakdown()[0]
            total = breakdown["total"]
            reward = float(total) if self.reward_mode == "vp" else reward + total - self._glory
            info = self._info({"score": total, "score_breakdown": breakdown,
                               "rating": breakdown["rating"]})
            return obs, reward * self.reward_scale, True, False, info
        return obs, reward * self.reward_scale, False, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions now (bool[N_ACTIONS]; all False once the game is over)."""
        if self.game is None or self.game.is_terminal:
            return np.zeros(N_ACTIONS, bool)
        return self.game.legal_mask()          # cached by the game: step() reuses it

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode")
            return None
        return render(self.game, self.render_mode)

    def close(self):
        pass
