"""One conformance run over every env (as pgx's api_test does for its games): the PettingZoo AEC
env for 2, 3 and 4 players, ``gymnasium.make("Caledonia-v0")``, ``gymnasium.make(
"CaledoniaSolo-v0")`` and the numba vector env.

Each env is driven through a small driver with one interface: the current deciders'
observations (with their spaces) and masks, one action per decider, whether the episode is
over. Checked for every env: the reset / step contracts, observations inside their space,
the mask's shape and documented dtype, random legal play until termination (every action
taken from the mask is accepted, rewards are 0 before the end), same seed -> same
trajectory (another seed -> another one), and illegal actions: ``"raise"`` raises
IllegalActionError and changes nothing, ``"penalize"`` ends the episode with
``illegal_reward``. The env module docstrings (the env cards) name the true sizes.
"""
import gymnasium
import numpy as np
import pytest

import caledonia_env
from caledonia_env import IllegalActionError
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.envs import aec, gym_env, solo, vector
from caledonia_env.envs.observation import OBS_SIZE
from caledonia_env.envs.vector import CaledoniaVectorEnv

PENALTY = -3.0


class AECDriver:
    """``caledonia_env.env`` (PettingZoo AEC): the decider is ``agent_selection``."""

    mask_dtype = np.int8

    def __init__(self, num_players, **options):
        self.env = caledonia_env.env(num_players=num_players, **options)

    def reset(self, seed):
        assert self.env.reset(seed=seed) is None
        self.over = False

    def observations(self):
        agent = self.env.agent_selection
        obs, reward, term, trunc, info = self.env.last()
        assert isinstance(info, dict) and not trunc
        return [(obs, self.env.observation_space(agent))]

    def masks(self):
        return self.env.last()[0]["action_mask"][None]

    def step(self, actions):
        """One action of the deciding agent; returns the rewards it produced."""
        env = self.env
        assert env.step(int(actions[0])) is None
        rewards = [env.rewards[a] for a in env.agents]
        if all(env.terminations.values()):
            while env.agents:                      # dead agents step None (PettingZoo API)
                env.step(None)
            self.over = True
        return rewards

    def state(self):
        return self.env.unwrapped.game.state.copy()


class GymDriver:
    """A Gymnasium single-agent env from ``gymnasium.make``: one decider, ``action_masks()``."""

    mask_dtype = np.bool_

    def __init__(self, env_id, **options):
        self.env = gymnasium.make(env_id, **options)

    def reset(self, seed):
        obs, info = self.env.reset(seed=seed)
        assert isinstance(info, dict)
        self.obs, self.over = obs, False

    def observations(self):
        return [(self.obs, self.env.observation_space)]

    def masks(self):
        return self.env.get_wrapper_attr("action_masks")()[None]

    def step(self, actions):
        obs, reward, term, trunc, info = self.env.step(int(actions[0]))
        assert isinstance(reward, float) and isinstance(term, bool) and trunc is False
        assert isinstance(info, dict)
        self.obs, self.over = obs, term
        return [reward]

    def state(self):
        return self.env.unwrapped.game.state.copy()


class VectorDriver:
    """:class:`CaledoniaVectorEnv`: every env decides at every step; the run is over once
    each of its games has ended (they auto-reset)."""

    mask_dtype = np.bool_

    def __init__(self, **options):
        self.env = CaledoniaVectorEnv(3, num_players=2, copy=True, **options)

    def reset(self, seed):
        self.obs = self.env.reset(seed=seed)
        assert self.obs.shape == (3, OBS_SIZE)
        self.ended = np.zeros(3, bool)
        self.over = False

    def observations(self):
        return [(row, self.env.observation_space) for row in self.obs]

    def masks(self):
        return self.env.action_masks()

    def step(self, actions):
        obs, rewards, dones, infos = self.env.step(np.asarray(actions))
        assert obs.shape == (3, OBS_SIZE) and rewards.shape == dones.shape == (3,)
        assert dones.dtype == np.bool_ and len(infos) == 3
        for i in np.flatnonzero(dones):
            assert self.env.observation_space.contains(infos[i]["terminal_observation"])
        self.obs = obs
        self.ended |= dones
        self.over = bool(self.ended.all())
        return [r for r, d in zip(rewards, dones) if not d]    # finished games: terminal

    def state(self):
        return self.env.states.copy()


DRIVERS = {
    "aec-2": lambda **o: AECDriver(2, **o),
    "aec-3": lambda **o: AECDriver(3, **o),
    "aec-4": lambda **o: AECDriver(4, **o),
    "gym": lambda **o: GymDriver("Caledonia-v0", num_players=3, **o),
    "solo": lambda **o: GymDriver("CaledoniaSolo-v0", **o),
    "vector": lambda **o: VectorDriver(**o),
}
CARDS = {"aec-2": aec, "aec-3": aec, "aec-4": aec, "gym": gym_env, "solo": solo,
         "vector": vector}
KINDS = list(DRIVERS)


def check_now(driver):
    """Observations in their spaces; one mask row per decider, documented dtype, non-empty."""
    for obs, space in driver.observations():
        assert space.contains(obs)
    masks = driver.masks()
    assert masks.ndim == 2 and masks.shape[1] == N_ACTIONS
    assert masks.dtype == driver.mask_dtype
    assert masks.any(axis=1).all()
    return masks


def pick(masks, rng):
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def trajectory(driver, seed, steps):
    """Actions and observations of ``steps`` random legal steps after ``reset(seed)`` (the
    actions drawn by one fixed generator: only the env's seed differs between runs)."""
    rng = np.random.default_rng(0)
    driver.reset(seed)
    out = []
    for _ in range(steps):
        actions = pick(check_now(driver), rng)
        out.append((actions.tolist(), [o["observation"] if isinstance(o, dict) else o
                                       for o, _ in driver.observations()]))
        driver.step(actions)
        if driver.over:
            break
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_random_legal_play_until_termination(kind):
    driver = DRIVERS[kind](illegal_action="raise")
    driver.reset(seed=11)
    rng = np.random.default_rng(11)
    steps = 0
    while not driver.over:
        masks = check_now(driver)
        rewards = driver.step(pick(masks, rng))
        steps += 1
        if not driver.over:
            assert not any(rewards), "rewards are terminal only"
        assert steps < 20_000
    assert steps > 20                        # a whole game, not an early end


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_trajectory(kind):
    def same(a, b):
        return len(a) == len(b) and all(
            x == y and all(np.array_equal(p, q) for p, q in zip(ps, qs))
            for (x, ps), (y, qs) in zip(a, b))

    a = trajectory(DRIVERS[kind](), 5, 60)
    assert same(a, trajectory(DRIVERS[kind](), 5, 60))
    assert not same(a, trajectory(DRIVERS[kind](), 6, 60))


@pytest.mark.parametrize("kind", KINDS)
def test_illegal_action_raises_and_changes_nothing(kind):
    driver = DRIVERS[kind](illegal_action="raise")
    driver.reset(seed=2)
    masks = check_now(driver)
    actions = pick(masks, np.random.default_rng(0))
    actions[0] = int(np.flatnonzero(~masks[0].astype(bool))[0])
    before = driver.state()
    with pytest.raises(IllegalActionError):
        driver.step(actions)
    assert np.array_equal(driver.state(), before)
    check_now(driver)


@pytest.mark.parametrize("kind", KINDS)
def test_illegal_action_penalize_ends_the_episode(kind):
    driver = DRIVERS[kind](illegal_action="penalize", illegal_reward=PENALTY)
    driver.reset(seed=2)
    masks = check_now(driver)
    actions = pick(masks, np.random.default_rng(0))
    actions[0] = N_ACTIONS                      # outside the action space
    if kind == "vector":
        _, rewards, dones, infos = driver.env.step(actions)
        assert dones[0] and rewards[0] == PENALTY and "terminal_observation" in infos[0]
        check_now(driver)                       # env 0 restarted
    elif kind.startswith("aec"):
        env = driver.env
        offender = env.agent_selection
        with pytest.warns(UserWarning, match="illegal action"):
            env.step(int(actions[0]))
        assert all(env.terminations.values())
        assert env.rewards == {a: PENALTY if a == offender else 0.0 for a in env.agents}
    else:
        assert driver.step(actions) == [PENALTY] and driver.over


@pytest.mark.parametrize("kind", sorted(set(KINDS) - {"aec-3", "aec-4"}))
def test_env_card_states_the_true_sizes(kind):
    """The module docstring (the env's card) names the action space and observation size."""
    card = CARDS[kind].__doc__
    for row in ("Import", "Actions", "Parallel API", "Agents", "Observation", "Action mask",
                "Reward", "Terminal condition", "Options"):
        assert f"\n{row} " in card, row
    assert f"Discrete({N_ACTIONS})" in card
    assert str(OBS_SIZE) in card
