"""``caledonia_env.train.sb3_masks.InfoActionMasks``: MaskablePPO's ``action_masks`` read from
the infos of any SB3 vector env (the SuperSuit route of docs/libraries.md)."""
import gymnasium
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

import caledonia_env  # noqa: E402,F401
from caledonia_env.train.sb3_masks import InfoActionMasks  # noqa: E402


def venv(n=3):
    return DummyVecEnv([lambda i=i: gymnasium.make("Caledonia-v0", num_players=2, seed=i)
                        for i in range(n)])


def env_masks(v):
    return np.stack([e.unwrapped.action_masks() for e in v.envs])


def test_masks_follow_reset_and_every_step_including_auto_resets():
    inner = venv()
    v = InfoActionMasks(inner)
    assert is_masking_supported(v)
    v.reset()
    np.testing.assert_array_equal(get_action_masks(v), env_masks(inner))
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(300):
        masks = get_action_masks(v)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, _, dones, _ = v.step(actions)
        ends += int(dones.sum())
        np.testing.assert_array_equal(get_action_masks(v), env_masks(inner))
    assert ends > 0                     # auto-resets were crossed


def test_env_method_takes_indices_and_passes_other_methods_through():
    v = InfoActionMasks(venv(2))
    v.reset()
    assert len(v.env_method("action_masks", indices=1)) == 1
    assert len(v.env_method("action_masks")) == 2
    assert v.env_method("action_masks", indices=[0])[0].dtype == bool
    assert v.env_method("close") == [None, None]            # forwarded to the envs


def test_an_info_without_the_mask_allows_every_action():
    v = InfoActionMasks(venv(1), key="no_such_key")
    v.reset()
    assert get_action_masks(v).all()


def test_maskable_ppo_trains_on_it_without_an_illegal_action():
    v = InfoActionMasks(venv(2))            # the class default: illegal actions would raise
    for e in v.venv.envs:
        e.unwrapped.illegal_action = "raise"
    MaskablePPO("MlpPolicy", v, n_steps=32, batch_size=32, seed=0).learn(64)


class MergedResetInfos(DummyVecEnv):
    """A vector env like SuperSuit's: an auto-reset's reset info is merged into the step
    info, and ``reset_infos`` keeps the objects of the last explicit reset."""

    def step_wait(self):
        kept = list(self.reset_infos)
        obs, rewards, dones, infos = super().step_wait()
        for i in np.flatnonzero(dones):
            infos[i] = {**infos[i], **self.reset_infos[i]}
        self.reset_infos = kept
        return obs, rewards, dones, infos


def test_masks_of_envs_that_merge_the_reset_info_into_the_step_info():
    inner = MergedResetInfos([lambda i=i: gymnasium.make("Caledonia-v0", num_players=2, seed=i)
                              for i in range(2)])
    v = InfoActionMasks(inner)
    v.reset()
    rng = np.random.default_rng(1)
    ends = 0
    for _ in range(300):
        masks = get_action_masks(v)
        _, _, dones, _ = v.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        ends += int(dones.sum())
        np.testing.assert_array_equal(get_action_masks(v), env_masks(inner))
    assert ends > 0
