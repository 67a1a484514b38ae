"""The Parallel view ``caledonia_env.parallel_env`` (caledonia_env/envs/parallel.py): PettingZoo's
parallel_api_test, the waiting agents' single legal action, the same game as the AEC env."""
import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

import caledonia_env
from caledonia_env import IllegalActionError
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.envs.parallel import WAIT


def test_wait_is_the_id_after_the_games_actions():
    env = caledonia_env.parallel_env(num_players=2)
    assert WAIT == N_ACTIONS and env.action_space("player_0").n == N_ACTIONS + 1


@pytest.mark.parametrize("n", [2, 3, 4])
def test_parallel_api_test_passes_quietly(n):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(caledonia_env.parallel_env(num_players=n), num_cycles=3000)
    assert [str(w.message) for w in caught] == []


def test_parallel_api_test_passes_with_flat_observations():
    """Flat: parallel_api_test samples unmasked ids (it reads masks only in a Dict
    observation), so the default penalty ends the game; nothing else is reported."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(caledonia_env.parallel_env(num_players=3, obs_type="flat"), num_cycles=500)
    assert all("illegal action by" in str(w.message) for w in caught)


def play_both(n, seed, other_action=lambda a: WAIT):
    """Random legal play on the AEC and the Parallel view from one seed: the same game."""
    aec = caledonia_env.env(num_players=n)
    par = caledonia_env.parallel_env(num_players=n)
    aec.reset(seed=seed)
    obs, infos = par.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    while par.agents:
        decider = aec.agent_selection
        ref, *_ = aec.last()
        for a in par.agents:
            mask = obs[a]["action_mask"]
            assert infos[a]["action_mask"] is mask and infos[a]["acting_agent"] == decider
            np.testing.assert_array_equal(obs[a]["observation"], aec.observe(a)["observation"])
            if a == decider:
                np.testing.assert_array_equal(mask[:N_ACTIONS], ref["action_mask"])
                assert mask[WAIT] == 0
            else:
                assert np.flatnonzero(mask).tolist() == [WAIT]
        action = int(rng.choice(np.flatnonzero(ref["action_mask"])))
        actions = {a: action if a == decider else other_action(a) for a in par.agents}
        aec.step(action)
        obs, rewards, terms, truncs, infos = par.step(actions)
        steps += 1
        assert rewards == {a: aec.rewards[a] for a in rewards}
        assert terms == {a: aec.terminations[a] for a in terms} and not any(truncs.values())
    assert all(terms.values()) and set(terms) == set(par.possible_agents)
    for a, o in obs.items():                # game over: every agent can only wait
        assert np.flatnonzero(o["action_mask"]).tolist() == [WAIT]
    return steps, rewards, infos


@pytest.mark.parametrize("n", [2, 4])
def test_one_parallel_step_is_one_aec_step_of_the_decider(n):
    steps, rewards, infos = play_both(n, seed=n)
    assert steps > 100 and sorted(rewards.values())[-1] == 1.0
    assert all("scores" in info for info in infos.values())


def test_the_waiting_agents_actions_are_ignored():
    """Any id from the waiting agents (not only WAIT) leaves the game as it would be."""
    ref = play_both(2, seed=7)
    noise = np.random.default_rng(99)
    noisy = play_both(2, seed=7, other_action=lambda a: int(noise.integers(N_ACTIONS)))
    assert noisy[0] == ref[0] and noisy[1] == ref[1]


def test_the_decider_must_act():
    env = caledonia_env.parallel_env(num_players=2)
    env.reset(seed=0)
    decider = env.aec.agent_selection
    other = next(a for a in env.agents if a != decider)
    with pytest.raises(ValueError, match=f"deciding agent '{decider}'"):
        env.step({other: WAIT})


def test_wait_by_the_decider_is_penalized_by_default_or_raises():
    env = caledonia_env.parallel_env(num_players=2)
    env.reset(seed=0)
    decider = env.aec.agent_selection
    with pytest.warns(UserWarning, match="illegal action"):
        _, rewards, terms, _, infos = env.step({a: WAIT for a in env.agents})
    assert rewards[decider] == -1.0 and all(terms.values()) and env.agents == []
    assert infos[decider]["offender"] == decider
    with pytest.raises(RuntimeError, match="reset"):
        env.step({decider: 0})
    env = caledonia_env.parallel_env(num_players=2, illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="wait"):
        env.step({a: WAIT for a in env.agents})
    assert env.agents == env.possible_agents


def test_flat_parallel_observation_and_infos_mask():
    env = caledonia_env.parallel_env(num_players=3, obs_type="flat")
    obs, infos = env.reset(seed=1)
    decider = infos["player_0"]["acting_agent"]
    for a, o in obs.items():
        assert env.observation_space(a).contains(o)
        assert infos[a]["action_mask"].shape == (N_ACTIONS + 1,)
        assert bool(infos[a]["action_mask"][WAIT]) == (a != decider)
