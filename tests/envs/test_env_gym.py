"""Gymnasium single-agent view Caledonia-v0 (issue #5): checkers, masks, opponents, rewards."""
import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import caledonia_env  # noqa: F401  (registers Caledonia-v0)
from caledonia_env import IllegalActionError
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.envs.gym_env import CaledoniaEnv
from caledonia_env.envs.observation import OBS_SIZE


def run_episode(env, seed, pick=None):
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    steps = 0
    while True:
        legal = np.flatnonzero(env.action_masks())
        assert len(legal) > 0
        a = int(rng.choice(legal)) if pick is None else pick(legal)
        obs, reward, term, trunc, info = env.step(a)
        steps += 1
        assert obs.shape == (OBS_SIZE,) and not trunc
        if term:
            return reward, info, steps


def test_registered_on_import_and_spaces():
    env = gymnasium.make("Caledonia-v0", num_players=2)
    assert env.observation_space.shape == (OBS_SIZE,)
    assert env.action_space.n == N_ACTIONS


REGISTERED = ["Caledonia-v0", "CaledoniaSolo-v0"]


@pytest.mark.parametrize("env_id", REGISTERED)
def test_gymnasium_check_env_on_the_registered_id(env_id):
    """The checkers sample unmasked action ids: the registered ids penalize them (as
    ``caledonia_env.env()``), so ``check_env(gymnasium.make(id))`` passes as made."""
    env = gymnasium.make(env_id)
    assert env.unwrapped.illegal_action == "penalize"
    check_env(env.unwrapped)
    check_env(env)                      # wrapped as made (only a "wrapped env" warning)


@pytest.mark.parametrize("env_id", REGISTERED)
def test_sb3_check_env_on_the_registered_id(env_id):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check_env
    sb3_check_env(gymnasium.make(env_id), warn=True)


@pytest.mark.parametrize("env_id", REGISTERED)
def test_registered_id_raises_one_argument_away(env_id):
    env = gymnasium.make(env_id, illegal_action="raise")
    env.reset(seed=0)
    bad = int(np.flatnonzero(~env.unwrapped.action_masks())[0])
    with pytest.raises(IllegalActionError, match="penalize"):
        env.step(bad)


def test_registered_id_penalizes_an_illegal_action():
    env = gymnasium.make("Caledonia-v0", num_players=2)
    env.reset(seed=0)
    bad = int(np.flatnonzero(~env.unwrapped.action_masks())[0])
    _, reward, term, trunc, info = env.step(bad)
    assert reward == -1.0 and term and not trunc and "illegal_action" in info


@pytest.mark.parametrize("n", [2, 3, 4])
def test_R_7_episode_reward_matches_game_returns(n):
    env = CaledoniaEnv(num_players=n)
    reward, info, steps = run_episode(env, seed=n)
    game = env.game
    assert game.is_terminal
    assert reward == game.returns()[env.seat]
    assert info["scores"] == [int(x) for x in game.scores()]
    assert not env.action_masks().any()


def test_learner_only_acts_on_its_own_decisions():
    env = CaledoniaEnv(num_players=4, seat=2)
    env.reset(seed=5)
    for _ in range(40):
        assert env.game.current_player == 2
        mask = env.action_masks()
        assert mask.tolist() == env.game.legal_mask().tolist()
        _, _, term, _, info = env.step(int(np.flatnonzero(mask)[0]))
        assert info["seat"] == 2
        if term:
            break


def test_seat_drawn_from_seed_and_reproducible():
    env = CaledoniaEnv(num_players=4)
    seats = set()
    for s in range(12):
        o1, _ = env.reset(seed=s)
        seat = env.seat
        o2, _ = env.reset(seed=s)
        assert env.seat == seat and np.array_equal(o1, o2)
        seats.add(seat)
    assert len(seats) > 1


def test_callable_and_agent_opponents_receive_the_game():
    calls = []

    def first_legal(game):
        calls.append(game.current_player)
        return int(game.legal_actions()[0])

    env = CaledoniaEnv(num_players=3, seat=0, opponents=[first_legal, "random"])
    reward, info, _ = run_episode(env, seed=3)
    assert calls and set(calls) == {1}
    assert reward in (-1.0, 0.0, 1.0)


def test_unknown_opponent_name_is_a_clear_error():
    with pytest.raises(ValueError, match="random"):
        CaledoniaEnv(num_players=2, opponents="no-such-bot")


def test_opponent_names_from_the_agents_package():
    agents = pytest.importorskip("caledonia_env.agents")
    names = [n for n in agents.available() if n != "random"]
    if not names:
        pytest.skip("the agents package offers no bot besides random")
    env = CaledoniaEnv(num_players=2, opponents=names[0])
    _, info, _ = run_episode(env, seed=1)
    assert len(info["scores"]) == 2


def test_illegal_action_raises_by_default_and_penalize_option():
    env = CaledoniaEnv(num_players=2)
    env.reset(seed=0)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(IllegalActionError, match="penalize"):
        env.step(bad)
    env = CaledoniaEnv(num_players=2, illegal_action="penalize", illegal_reward=-3.0)
    env.reset(seed=0)
    _, reward, term, trunc, info = env.step(bad)
    assert reward == -3.0 and term and not trunc and "illegal_action" in info


def test_render_modes():
    env = gymnasium.make("Caledonia-v0", num_players=2, render_mode="ansi")
    env.reset(seed=0)
    assert "Clans of Caledonia" in env.render()


def test_maskable_ppo_learns_a_few_steps():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    env = CaledoniaEnv(num_players=2)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1,
                        policy_kwargs={"net_arch": [32]}, seed=0)
    model.learn(total_timesteps=64)
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks())
    assert env.action_masks()[int(action)]
