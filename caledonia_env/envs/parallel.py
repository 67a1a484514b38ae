"""PettingZoo Parallel view of the turn-based game: ``caledonia_env.parallel_env(**options)``.

======================  =================================================================
Import                  ``caledonia_env.parallel_env(**options)``, or
                        ``from caledonia_env.envs.parallel import CaledoniaParallelEnv``
Actions                 ``Discrete(2040)``: the game's ``N_ACTIONS`` ids
                        (``docs/actions.md``) plus ``WAIT`` = 2039
Parallel API            yes: every agent acts at every step; only the deciding agent's
                        action is applied, the others wait
Agents                  ``player_0 … player_{n-1}`` as the AEC env (Automa seats, A-0,
                        are no agents); all stay until the game is over
Observation             ``obs_type="dict"`` (default): ``{"observation": float32[5019],
                        "action_mask": int8[2040]}``; ``"flat"``: ``float32[5019]`` in
                        ``Box(0, OBS_HIGH)`` (``docs/observation.md``)
Action mask             in the observation (``"dict"``) and in ``infos[agent]["action_mask"]``
                        (both types): the decider's legal ids, ``WAIT`` only for the others
                        and for everyone once the game is over
Reward                  as the AEC env: terminal only (``reward`` ``"win"`` / ``"rank"`` /
                        ``"score_diff"``); an illegal action (``"penalize"``):
                        ``illegal_reward`` for the decider, 0 for the others
Terminal condition      the game is over (R-7) or (``"penalize"``) an illegal action by the
                        decider: every agent terminates at once; never truncated
Illegal action          ``"penalize"`` (default, as ``caledonia_env.env()``) or ``"raise"``;
                        the waiting agents' actions are ignored
Options                 ``obs_type``, and those of the AEC env (``num_players``, ``reward``,
                        ``illegal_action``, ``illegal_reward``, ``render_mode``, GameConfig
                        fields)
======================  =================================================================

One parallel step is one AEC step of the deciding agent (``infos[agent]["acting_agent"]``
names it): the same sequence of decisions, rewards and terminations as
``caledonia_env.env()`` (docs/envs.md). This is the view SuperSuit's vectorisation
(``pettingzoo_env_to_vec_env_v1``) and AgileRL's multi-agent trainers need; PettingZoo's
own ``aec_to_parallel`` refuses turn-based games.
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.game import IllegalActionError
from caledonia_env.envs.aec import raw_env
from caledonia_env.envs.common import RENDER_MODES, observe
from caledonia_env.envs.flat import check_obs_type

#: the action of the agents that do not decide now (their only legal action)
WAIT = N_ACTIONS


def _wait_only() -> np.ndarray:
    mask = np.zeros(N_ACTIONS + 1, np.int8)
    mask[WAIT] = 1
    mask.flags.writeable = False
    return mask


class CaledoniaParallelEnv(ParallelEnv):
    """Every agent acts each step; only the deciding agent's action counts (see the module
    docstring). Options: ``obs_type`` (``"dict"`` or ``"flat"``) and every option of
    :class:`caledonia_env.envs.aec.raw_env`, with ``illegal_action`` defaulting to
    ``"penalize"``."""

    metadata = {"name": "caledonia_parallel_v0", "render_modes": list(RENDER_MODES),
                "render_fps": 1}

    def __init__(self, obs_type: str = "dict", illegal_action: str = "penalize", **options):
        check_obs_type(obs_type)
        self.obs_type = obs_type
        self.aec = raw_env(illegal_action=illegal_action, **options)
        self.render_mode = self.aec.render_mode
        self.possible_agents = self.aec.possible_agents[:]
        self.agents = []
        box = self.aec.observation_space(self.possible_agents[0])["observation"]
        mask_space = spaces.Box(0, 1, (N_ACTIONS + 1,), np.int8)
        self.observation_spaces = {
            a: box if obs_type == "flat" else spaces.Dict({"observation": box,
                                                           "action_mask": mask_space})
            for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS + 1) for a in self.possible_agents}
        self._wait = _wait_only()

    @property
    def game(self):
        """The live :class:`caledonia_env.Game` (None before the first reset)."""
        return self.aec.game

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict | None = None):
        """New game; ``seed`` as in the AEC env (the game's seed)."""
        self.aec.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        return self._observe(over=False)

    # ------------------------------------------------------------- step
    def step(self, actions):
        """Apply the deciding agent's action (the others' are ignored: they wait)."""
        if not self.agents:
            hint = ""
            if not actions:     # what SuperSuit's black_death_v3 sends after the game's end
                hint = (" (SuperSuit's black_death_v3 ends an episode only when every agent "
                        "is both terminated and truncated; here every agent stays until the "
                        "game is over and all terminate at once, never truncated, so "
                        "pettingzoo_env_to_vec_env_v1 needs no black_death: docs/libraries.md)")
            raise RuntimeError(f"the game is over: call reset() before step(){hint}")
        decider = self.aec.agent_selection
        if decider not in actions:
            raise ValueError(f"actions must hold one for the deciding agent {decider!r} "
                             f"(the others wait, action {WAIT}); got agents {sorted(actions)}")
        action = actions[decider]
        if self.aec.illegal_action == "raise" and _is_wait(action):
            raise IllegalActionError(f"{decider} decides now (context {self.game.context!r}); "
                                     f"wait ({WAIT}) is only for the agents that do not decide")
        self.aec.step(action)
        over = all(self.aec.terminations.values())
        rewards = {a: float(self.aec.rewards[a]) for a in self.agents}
        terminations = {a: bool(self.aec.terminations[a]) for a in self.agents}
        truncations = {a: False for a in self.agents}
        obs, infos = self._observe(over)
        if over:
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def _observe(self, over: bool):
        """(observations, infos) of every live agent; the masks in both."""
        aec = self.aec
        decider = None if over else aec.agent_selection
        obs, infos = {}, {}
        for a in self.agents:
            if a == decider:
                mask = np.zeros(N_ACTIONS + 1, np.int8)
                mask[:N_ACTIONS] = aec.infos[a]["action_mask"]
            else:
                mask = self._wait
            info = dict(aec.infos[a])
            info["action_mask"] = mask
            infos[a] = info
            o = observe(aec.game, aec._index[a])
            obs[a] = o if self.obs_type == "flat" else {"observation": o, "action_mask": mask}
        return obs, infos

    # ----------------------------------------------------------- render
    def render(self):
        return self.aec.render()

    def close(self):
        self.aec.close()


def _is_wait(action) -> bool:
    try:
        return int(action) == WAIT
    except (TypeError, ValueError):
        return False


def parallel_env(**options) -> CaledoniaParallelEnv:
    """The Parallel view (options as :class:`CaledoniaParallelEnv`)."""
    return CaledoniaParallelEnv(**options)
