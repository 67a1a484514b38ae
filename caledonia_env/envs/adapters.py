"""Small adapters from the AEC env to what RL libraries expect.

``rllib_env(**options)``: the AEC env whose observation dict uses the key names of the
action-masking RLModule in RLlib's examples folder (``ActionMaskingTorchRLModule``),
``{"observations": float32[OBS_SIZE], "action_mask": int8[N_ACTIONS]}``, for code written
against that module. RLlib needs no adapter: ``PettingZooEnv(caledonia_env.env())`` with
:mod:`caledonia_env.train.rllib_module`'s module reads the env's own keys. See
``docs/libraries.md``.
"""
from __future__ import annotations

from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

from caledonia_env.envs.aec import env as aec_env


class RLlibKeys(BaseWrapper):
    """Rename ``observation`` to ``observations`` (the mask keeps its key and int8 dtype)."""

    def __init__(self, env):
        super().__init__(env)
        self.observation_spaces = {}
        for a in self.possible_agents:
            inner = env.observation_space(a)
            self.observation_spaces[a] = spaces.Dict({
                "observations": inner["observation"], "action_mask": inner["action_mask"]})

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def observe(self, agent):
        o = super().observe(agent)
        return {"observations": o["observation"], "action_mask": o["action_mask"]}


def rllib_env(**options):
    """``caledonia_env.env(**options)`` (illegal actions penalized by default) with RLlib's keys."""
    return RLlibKeys(aec_env(**options))
