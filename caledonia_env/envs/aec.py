"""PettingZoo AEC environment ``caledonia_v0`` over the Game API.

======================  =================================================================
Import                  ``caledonia_env.env(**options)`` (wrapped), or
                        ``from caledonia_env.envs.aec import env, raw_env``
Actions                 ``Discrete(2039)`` (``N_ACTIONS``, ``docs/actions.md``)
Parallel API            no (``metadata["is_parallelizable"]`` is False)
Agents                  ``player_0 … player_{n-1}``, ``num_players`` 2-4 (Automa seats,
                        A-0, are played by the engine and are no agents)
Observation             ``{"observation": float32[5019], "action_mask": int8[2039]}``;
                        the observation is in ``Box(0, OBS_HIGH)`` (``docs/observation.md``)
Action mask             ``obs["action_mask"]`` and ``infos[agent]["action_mask"]``: the
                        agent's legal actions, all zeros unless it decides now
Reward                  terminal: ``reward`` ``"win"`` (default) / ``"rank"`` /
                        ``"score_diff"``; an illegal action (``"penalize"``):
                        ``illegal_reward`` for the offender, 0 for the others;
                        ``shaping=W`` > 0 adds W times each step's change of every
                        agent's projected VP lead (potential-based, 0 by default)
Terminal condition      the game is over (R-7) or (``"penalize"``) an illegal action:
                        every agent terminates at once; never truncated
Illegal action          :func:`env`: ``"penalize"``; :class:`raw_env`: ``"raise"``
                        (IllegalActionError, nothing applied)
Options                 ``num_players``, ``reward``, ``shaping``, ``illegal_action``,
                        ``illegal_reward``, ``render_mode``, GameConfig fields (``seed``,
                        ``map``, ``automa``, …)
======================  =================================================================

Every decision of the game (main action, port free actions, all sub-decisions) is one AEC
step of the deciding agent, so an agent often acts several times in a row. See
``docs/envs.md``.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from gymnasium import spaces
from gymnasium.logger import warn
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

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
    final_info,
    make_config,
    observe,
    render,
    rewards_of,
)
from caledonia_env.envs.observation import OBS_HIGH, OBS_SIZE
from caledonia_env.envs.rewards import reward_mode


class raw_env(AECEnv):
    """Clans of Caledonia for 2-4 agents ``player_0..player_{n-1}``.

    Options: ``num_players`` (2-4), ``render_mode`` (``"human"`` prints the text
    view, ``"ansi"`` / ``"rgb_array"`` return it or the map picture),
    ``reward`` (``"win"`` default, ``"rank"``, ``"score_diff"``, see
    :mod:`caledonia_env.envs.rewards`), ``shaping`` (0 default: the weight W of the
    potential-based shaping of :class:`~.common.Potential`), ``illegal_action``
    (``"raise"`` default here: :class:`IllegalActionError`; ``"penalize"``, the default of
    :func:`env`: the game ends, the offender gets ``illegal_reward`` and the others 0), and
    every :class:`GameConfig` field
    (``seed`` seeds the first game and the seeds of later unseeded resets,
    ``map``, ``first_player``, ``ruleset``, variants). ``automa={seat: level}`` makes
    those seats Automa seats (A-0): the engine plays them and they are not agents.
    """

    metadata = {"name": "caledonia_v0", "render_modes": list(RENDER_MODES),
                "is_parallelizable": False, "render_fps": 1}

    def __init__(self, num_players: int = 4, render_mode: str | None = None,
                 reward: str = "win", illegal_action: str = "raise",
                 illegal_reward: float = -1.0, shaping: float = 0.0, **config):
        super().__init__()
        self.config = make_config(num_players, config)
        if render_mode is not None:
            check_choice("render_mode", render_mode, RENDER_MODES)
        check_choice("illegal_action", illegal_action, ILLEGAL_MODES)
        self.render_mode = render_mode
        self.reward_mode = reward
        self._reward_mode = reward_mode(reward)
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.shaping = float(shaping)
        self._potential = Potential(shaping) if shaping else None   # None: a cheap test per step
        n = self.config.num_players
        automa = self.config.automa or {}
        # Automa seats are played by the engine and are not agents
        self.possible_agents = [f"player_{i}" for i in range(n) if i not in automa]
        self._index = {f"player_{i}": i for i in range(n) if i not in automa}
        self._agent_of = {i: a for a, i in self._index.items()}
        self.observation_spaces = {a: spaces.Dict({
            "observation": spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8)}) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self._seed_rng = np.random.default_rng(self.config.seed)
        self._first_seed = self.config.seed
        self._no_mask = np.zeros(N_ACTIONS, np.int8)
        self._no_mask.flags.writeable = False
        self.game: Game | None = None
        self._mask_game = None      # the game, action count and mask _set_infos last gave
        self._mask_at = -1
        self._mask = None

    # ------------------------------------------------------------ spaces
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict | None = None):
        """New game. ``seed`` is the game's seed (same as ``Game(seed=seed)``) and reseeds
        later unseeded resets; without it the first reset uses the config seed."""
        if seed is not None:
            game_seed = check_seed(seed, "reset(seed=...)")
            self._seed_rng = np.random.default_rng(game_seed)
        elif self._first_seed is not None:
            game_seed = self._first_seed
        else:
            game_seed = int(self._seed_rng.integers(SEED_BOUND))
        self._first_seed = None
        self.game = Game(dataclasses.replace(self.config, seed=game_seed))
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.agent_selection = self._agent_of[self.game.current_player]
        if self._potential is not None:
            self._potential.reset(self.game)
        self._set_infos(self.game.legal_mask_int8())

    def _set_infos(self, mask, extra=None):
        """Infos hold no None and keep their keys (Tianshou's buffer reads None or a missing
        key as NaN): at game over (``mask`` None) ``acting_player`` is -1 and
        ``acting_agent`` ""; ``action_mask`` is the agent's legal mask (all zeros unless it
        decides now), as AgileRL reads it."""
        game = self.game
        s = game.state
        p = -1
        if mask is not None:
            p = s.item(S_PLAYER)
            self._mask_game, self._mask_at, self._mask = game, game.move_number, mask
        other = {"context": CONTEXT_NAMES[s.item(S_CTX)],
                 "acting_agent": self._agent_of[p] if p >= 0 else "",
                 "acting_player": p, "round": s.item(S_ROUND), "action_mask": self._no_mask}
        if extra is not None:
            other.update(extra)
        infos = {a: other.copy() for a in self.agents}
        if p >= 0 and self._agent_of[p] in infos:
            infos[self._agent_of[p]]["action_mask"] = mask
        self.infos = infos

    # ---------------------------------------------------------- observe
    def observe(self, agent):
        """The agent's view; its mask is all zeros unless it decides now. The mask is a
        copy of the one in its info when no action was applied since (the env's own
        steps are the only ones: a state edited by hand needs ``reset``)."""
        p = self._index[agent]
        game = self.game
        if game.state.item(S_PLAYER) == p:
            if self._mask_game is game and self._mask_at == game.move_number:
                mask = self._mask.copy()
            else:
                mask = game.legal_mask_int8()     # kept by the game: step() does not redo it
        else:
            mask = np.zeros(N_ACTIONS, np.int8)
        return {"observation": observe(game, p), "action_mask": mask}

    # ------------------------------------------------------------- step
    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} must act (context {self.game.context!r}); "
                                     f"None is only for terminated agents")
        game = self.game
        illegal = mask = None
        try:
            mask = game.step_mask(action)     # TypeError for a non-integer id (game.action_id)
        except IllegalActionError as e:
            if self.illegal_action == "raise":    # nothing changed: rewards cleared only below
                raise IllegalActionError(
                    f"{e} (samplers that ignore obs['action_mask'], e.g. RLlib's env checker, "
                    f"need illegal_action='penalize': the game ends with illegal_reward for "
                    f"{agent})") from None
            illegal = str(e)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if illegal is not None:
            warn(f"illegal action by {agent}: the game ends with illegal_reward "
                 f"{self.illegal_reward} for it and 0 for the others")
            self._end_illegal(agent, illegal)
            return
        if self._potential is not None:
            delta = self._potential.step(game)
            for a in self.possible_agents:
                self.rewards[a] = float(delta[self._index[a]])
        if mask is None:                      # the game is over
            r = rewards_of(game, self._reward_mode)
            for a in self.possible_agents:
                self.rewards[a] += float(r[self._index[a]])
                self.terminations[a] = True
            self._set_infos(None, final_info(game))
            self._accumulate_rewards()
        else:
            self.agent_selection = self._agent_of[game.state.item(S_PLAYER)]
            self._set_infos(mask)
            if self._potential is not None:     # without shaping every reward is 0 here
                self._accumulate_rewards()

    def _end_illegal(self, agent, message):
        for a in self.agents:
            self.rewards[a] = self.illegal_reward if a == agent else 0.0
            self.terminations[a] = True
        self._set_infos(None, {"illegal_action": message, "offender": agent})
        self._accumulate_rewards()

    # ----------------------------------------------------------- render
    def render(self):
        if self.render_mode is None:
            warn("render() called without a render_mode; pass render_mode='human', 'ansi' "
                 "or 'rgb_array'")
            return None
        return render(self.game, self.render_mode)

    def close(self):
        pass


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper with the same checks, minus the per-attribute
    ``__getattr__`` forwarding on the hot path: ``last()``, ``step()``, ``agent_selection``
    and ``agents`` (read by ``agent_iter``) go straight to the env once it has been reset."""

    @staticmethod
    def _not_reset(name):
        raise AttributeError(f"{name} cannot be accessed before reset")

    @property
    def agent_selection(self):
        if not self._has_reset:
            self._not_reset("agent_selection")
        return self.env.agent_selection

    @property
    def agents(self):
        if not self._has_reset:
            self._not_reset("agents")
        return self.env.agents

    def last(self, observe: bool = True):
        if not self._has_reset:
            self._not_reset("agent_selection")
        return self.env.last(observe)

    def step(self, action):
        env = self.env
        if self._has_reset and env.agents:
            self._has_updated = True
            env.step(action)
        else:
            super().step(action)          # PettingZoo's errors and warnings

    def __str__(self):
        return str(self.env)


def env(**options):
    """The AEC env in an :class:`OrderEnforcing` wrapper; same options as :class:`raw_env`
    except that ``illegal_action`` defaults to ``"penalize"``, as PettingZoo's classic games
    wrap theirs in ``TerminateIllegalWrapper`` (the game ends, the offender loses).

    (No AssertOutOfBoundsWrapper: ``Game.step`` already rejects any id outside the
    action space with a clear IllegalActionError, and each wrapper layer costs µs per step.)
    """
    options.setdefault("illegal_action", "penalize")
    return OrderEnforcing(raw_env(**options))
