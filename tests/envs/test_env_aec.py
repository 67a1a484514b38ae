"""PettingZoo AEC env caledonia_v0 (issue #5): API, seeding, rewards, infos, errors, render."""
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import caledonia_env
from caledonia_env import Game, IllegalActionError
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.envs.aec import raw_env
from caledonia_env.envs.observation import OBS_SIZE


def play_random(env, seed, rng_seed=0):
    """Random legal actions to the end; returns the last infos of every agent."""
    rng = np.random.default_rng(rng_seed)
    env.reset(seed=seed)
    seen = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        seen[agent] = (reward, info)
        if term or trunc:
            env.step(None)
            continue
        assert "context" in info
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return seen


@pytest.mark.parametrize("n", [2, 3, 4])
def test_pettingzoo_api_test(n):
    api_test(caledonia_env.env(num_players=n), num_cycles=1000)


@pytest.mark.parametrize("options", [{"clans": "draft"}, {"clans": "draft", "clan_auction": True}])
def test_pettingzoo_api_test_with_clans(options):
    """R-8 / R-9.4: the clan decisions (draft, auction, clan powers) pass the same API test."""
    api_test(caledonia_env.env(num_players=3, **options), num_cycles=1000)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_pettingzoo_seed_test(n):
    seed_test(lambda: caledonia_env.env(num_players=n), num_cycles=500)


def test_metadata_agents_and_spaces():
    env = caledonia_env.env(num_players=3)
    env.reset(seed=0)
    assert env.metadata["name"] == "caledonia_v0"
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    space = env.observation_space("player_1")
    assert space["observation"].shape == (OBS_SIZE,)
    assert space["action_mask"].shape == (N_ACTIONS,)
    assert env.action_space("player_0").n == N_ACTIONS
    assert caledonia_env.raw_env is raw_env


def test_R_1_7_reset_seed_is_the_game_seed():
    """env.reset(seed=s) starts the same game as Game(seed=s)."""
    env = raw_env(num_players=4)
    env.reset(seed=123)
    assert np.array_equal(env.game.state, Game(num_players=4, seed=123).state)
    assert env.agent_selection == f"player_{Game(num_players=4, seed=123).current_player}"


def test_mask_only_for_the_deciding_agent():
    env = raw_env(num_players=3)
    env.reset(seed=4)
    for a in env.agents:
        mask = env.observe(a)["action_mask"]
        assert mask.dtype == np.int8
        if a == env.agent_selection:
            assert mask.astype(bool).tolist() == env.game.legal_mask().tolist()
        else:
            assert not mask.any()



def test_mask_of_every_step_is_the_games_and_a_copy_of_the_info_mask():
    """last() reuses the mask its step computed for the info: same values as the game's
    legal mask at every decision, but its own array (editing it changes nothing else)."""
    env = caledonia_env.env(num_players=3, automa={1: 2})
    env.reset(seed=12)
    rng = np.random.default_rng(3)
    for _agent in env.agent_iter():
        obs, _r, term, trunc, info = env.last()
        if term or trunc:
            env.step(None)
            continue
        legal = env.unwrapped.game.legal_mask()
        assert obs["action_mask"].astype(bool).tolist() == legal.tolist()
        assert np.array_equal(info["action_mask"], obs["action_mask"])
        obs["action_mask"][:] = 0
        assert info["action_mask"].astype(bool).tolist() == legal.tolist()
        assert env.observe(env.agent_selection)["action_mask"].astype(bool).tolist() \
            == legal.tolist()
        env.step(int(rng.choice(np.flatnonzero(legal))))

def test_R_7_terminal_rewards_and_score_breakdown_in_infos():
    env = caledonia_env.env(num_players=4)
    seen = play_random(env, seed=31)
    game = env.unwrapped.game
    assert game.is_terminal
    returns = game.returns()
    for i in range(4):
        reward, info = seen[f"player_{i}"]
        assert reward == returns[i]
        assert info["scores"] == [int(x) for x in game.scores()]
        assert info["score_breakdown"] == game.score_breakdown()
        assert np.flatnonzero(info["winners"]).tolist() == game.winners()
        assert info["winners"].shape == (game.num_players,)
        assert info["context"] == "game over"


@pytest.mark.parametrize("mode", ["rank", "score_diff"])
def test_R_7_reward_options_are_zero_sum_and_ordered(mode):
    env = caledonia_env.env(num_players=3, reward=mode)
    seen = play_random(env, seed=8)
    game = env.unwrapped.game
    r = np.array([seen[f"player_{i}"][0] for i in range(3)])
    assert r.sum() == pytest.approx(0.0)
    vp = game.scores()
    order = np.argsort(-vp, kind="stable")
    if vp[order[0]] > vp[order[1]]:
        assert r[order[0]] == r.max()
    if mode == "score_diff":
        assert r == pytest.approx([(vp[i] - (vp.sum() - vp[i]) / 2) / 100 for i in range(3)])


def test_unknown_reward_mode_lists_the_options():
    with pytest.raises(ValueError, match="rank"):
        raw_env(reward="elo")


def test_illegal_action_raises_a_clear_error():
    env = caledonia_env.env(num_players=2, illegal_action="raise")
    env.reset(seed=0)
    obs, *_ = env.last()
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="not legal"):
        env.step(bad)
    with pytest.raises(IllegalActionError, match="outside"):
        env.step(N_ACTIONS + 5)
    with pytest.raises(IllegalActionError, match="must act"):
        env.step(None)


def test_illegal_action_penalize_option_ends_the_game():
    env = caledonia_env.env(num_players=3, illegal_action="penalize", illegal_reward=-2.0)
    env.reset(seed=0)
    offender = env.agent_selection
    obs, *_ = env.last()
    env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(env.terminations.values())
    assert env.rewards[offender] == -2.0
    assert sum(env.rewards.values()) == -2.0
    assert env.infos[offender]["offender"] == offender


def test_info_carries_context_every_step():
    env = raw_env(num_players=2)
    env.reset(seed=3)
    contexts = set()
    rng = np.random.default_rng(1)
    for _ in range(60):
        a = env.agent_selection
        assert env.infos[a]["context"] == env.game.context
        assert env.infos[a]["acting_agent"] == a
        contexts.add(env.infos[a]["context"])
        env.step(int(rng.choice(np.flatnonzero(env.observe(a)["action_mask"]))))
    assert {"starting pick", "starting worker", "main action"} <= contexts


def test_render_ansi_and_rgb_array():
    env = caledonia_env.env(num_players=2, render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert isinstance(text, str) and "Clans of Caledonia" in text
    env = raw_env(num_players=2, render_mode="rgb_array")
    env.reset(seed=1)
    for _ in range(6):       # place some starting units
        a = env.agent_selection
        env.step(int(np.flatnonzero(env.observe(a)["action_mask"])[0]))
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="3d")


def test_config_errors_are_clear():
    with pytest.raises(ValueError, match="num_players"):
        raw_env(num_players=5)
    with pytest.raises(TypeError, match="game options"):
        raw_env(colour="red")
