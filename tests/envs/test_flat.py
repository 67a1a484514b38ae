"""The flat observation option ``caledonia_env.env(obs_type="flat")`` (caledonia_env/envs/flat.py):
a Box observation, the mask in infos, PettingZoo's api_test without its Dict-space warnings."""
import warnings

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test

import caledonia_env
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.envs.observation import OBS_SIZE

DICT_WARNINGS = ("Observation space should be Box or Discrete", "Observation is not a NumPy array",
                 "Observation space for each agent probably should be")


def api_test_warnings(env):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(env, num_cycles=300)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("n", [2, 4])
def test_api_test_is_quiet_with_flat_observations(n):
    messages = api_test_warnings(caledonia_env.env(num_players=n, obs_type="flat"))
    assert messages == []


def test_api_test_warns_about_the_dict_observation_it_replaces():
    """The warnings the flat option silences are real in the Dict view (the test can fail)."""
    messages = api_test_warnings(caledonia_env.env(num_players=2))
    assert any(m.startswith(DICT_WARNINGS) for m in messages)


def test_flat_observation_is_the_dict_views_observation_and_the_mask_is_in_infos():
    flat = caledonia_env.env(num_players=3, obs_type="flat", seed=5)
    full = caledonia_env.env(num_players=3, seed=5)
    flat.reset()
    full.reset()
    space = flat.observation_space("player_0")
    assert isinstance(space, spaces.Box) and space.shape == (OBS_SIZE,) and space.dtype == np.float32
    rng = np.random.default_rng(0)
    for _ in range(150):
        agent = flat.agent_selection
        assert agent == full.agent_selection
        obs, _, term, trunc, info = flat.last()
        ref, *_ = full.last()
        assert isinstance(obs, np.ndarray) and space.contains(obs)
        np.testing.assert_array_equal(obs, ref["observation"])
        np.testing.assert_array_equal(info["action_mask"], ref["action_mask"])
        assert info["action_mask"].shape == (N_ACTIONS,)
        for other in flat.agents:
            np.testing.assert_array_equal(flat.observe(other), full.observe(other)["observation"])
        if term or trunc:                  # the game ended: the check covered all of it
            break
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        flat.step(a)
        full.step(a)


def test_flat_env_penalizes_like_env():
    env = caledonia_env.env(num_players=2, obs_type="flat")
    env.reset(seed=0)
    offender = env.agent_selection
    _, _, _, _, info = env.last()
    with pytest.warns(UserWarning, match="illegal action"):
        env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert all(env.terminations.values()) and env.rewards[offender] == -1.0


def test_unknown_obs_type_is_rejected():
    with pytest.raises(ValueError, match=r"obs_type must be one of \('dict', 'flat'\), got 'box'"):
        caledonia_env.env(obs_type="box")
