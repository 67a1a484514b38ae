"""Action masks from ``infos`` for Stable-Baselines3 vector envs (sb3-contrib's MaskablePPO).

MaskablePPO asks its vector env for ``env_method("action_masks")``. Vector envs built by
other libraries have no such method (SuperSuit's ``concat_vec_envs_v1(...,
base_class="stable_baselines3")`` over ``caledonia_env.parallel_env(obs_type="flat")``),
but our envs put each agent's mask in ``infos[i]["action_mask"]`` at every step and reset
(the Parallel view: the decider's legal ids, ``WAIT`` alone for the others).
:class:`InfoActionMasks` keeps the latest ones and answers MaskablePPO::

    env = InfoActionMasks(ss.concat_vec_envs_v1(..., base_class="stable_baselines3"))
    MaskablePPO("MlpPolicy", env).learn(100_000)

See ``docs/libraries.md`` (SuperSuit).
"""
from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env import VecEnvWrapper

MASK_KEY = "action_mask"


class InfoActionMasks(VecEnvWrapper):
    """``action_masks()`` (bool[num_envs, n]) from the latest infos of ``venv``.

    After a reset: ``venv.reset_infos``. After a step: its infos, except for an env that
    ended and was reset automatically, whose mask is in the new game's reset info. SB3's
    own vector envs put that one in a fresh ``venv.reset_infos[i]`` (the step info is the
    last one of the old game); SuperSuit's merge it into the step info and leave
    ``reset_infos`` as it was: a ``reset_infos[i]`` replaced during the step is read,
    otherwise the step info. An info without the key leaves that env's row all True."""

    def __init__(self, venv, key: str = MASK_KEY):
        super().__init__(venv)
        self.key = key
        self._masks = np.ones((venv.num_envs, venv.action_space.n), bool)
        self._seen_reset_infos = []

    def _reset_infos(self):
        infos = getattr(self.venv, "reset_infos", None)
        return list(infos) if infos else [{}] * self.num_envs

    def reset(self):
        obs = self.venv.reset()
        infos = self._reset_infos()
        self._seen_reset_infos = infos
        for i, info in enumerate(infos):
            self._read(i, info)
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        reset_infos = self._reset_infos()
        seen = self._seen_reset_infos
        for i, info in enumerate(infos):
            fresh = dones[i] and i < len(seen) and reset_infos[i] is not seen[i]
            self._read(i, reset_infos[i] if fresh else info)
        self._seen_reset_infos = reset_infos
        return obs, rewards, dones, infos

    def _read(self, i, info):
        mask = info.get(self.key)
        self._masks[i] = True if mask is None else np.asarray(mask, bool)

    def action_masks(self) -> np.ndarray:
        return self._masks.copy()

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or self.venv.has_attr(attr_name)

    def env_method(self, method_name, *args, indices=None, **kwargs):
        if method_name != "action_masks":
            return self.venv.env_method(method_name, *args, indices=indices, **kwargs)
        if indices is None:
            indices = range(self.num_envs)
        elif isinstance(indices, (int, np.integer)):
            indices = [int(indices)]
        return [self._masks[i].copy() for i in indices]


__all__ = ["InfoActionMasks", "MASK_KEY"]
