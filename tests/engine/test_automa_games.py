"""Whole games with Automa seats (A-0 … A-8): they end, money stays >= 0 (A-0.4), the
same seed gives the same Automa turns (A-3.3), records replay exactly; Automa seats in
the Game API and the envs (A-0.1)."""
import re

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test

import caledonia_env
from caledonia_env import Game, GameConfig
from caledonia_env.engine.automa import turn as A
from caledonia_env.engine import layout as L
from caledonia_env.engine.board import pofs
from caledonia_env.envs.common import rewards_of
from caledonia_env.envs.gym_env import CaledoniaEnv
from caledonia_env.envs.rewards import reward_mode
from caledonia_env.envs.vector import CaledoniaVectorEnv


def play_random(config, seed):
    g = Game(config)
    rng = np.random.default_rng(seed)
    while not g.is_terminal:
        assert not g.is_automa(g.current_player)
        g.step(int(rng.choice(g.legal_actions())))
        for p in range(g.num_players):
            assert g.state[pofs(p) + L.P_MONEY] >= 0
            if g.is_automa(p):
                assert not g.state[pofs(p) + L.P_GOODS:pofs(p) + L.P_GOODS + 6].any()
    return g


@st.composite
def automa_configs(draw):
    n = draw(st.integers(2, 4))
    k = draw(st.integers(1, n - 1))
    seats = draw(st.permutations(range(n)))[:k]
    levels = [draw(st.integers(1, 5)) for _ in seats]
    return GameConfig(num_players=n, automa=dict(zip(seats, levels)),
                      seed=draw(st.integers(0, 10_000)),
                      clans=draw(st.sampled_from([None, "draft"])))


@settings(max_examples=4, deadline=None)
@given(automa_configs(), st.integers(0, 1000))
def test_a0_random_games_with_automa_end_and_replay(config, seed):
    """A-0.4 money >= 0, A-3.3 determinism: from_json replays states and Automa turns."""
    g = play_random(config, seed)
    assert g.is_terminal and len(g.scores()) == config.num_players
    r = Game.from_json(g.to_json())
    assert np.array_equal(r.state, g.state)
    assert [e["text"] for e in r.automa_events] == [e["text"] for e in g.automa_events]
    for p in config.automa:
        assert g.score_breakdown()[p]["glory"] == 10 * config.automa[p]
    assert np.array_equal(rewards_of(g, reward_mode("win")), g.returns())   # ties


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(automa_configs(), st.integers(0, 1000))
def test_a0_many_random_games_with_automa(config, seed):
    play_random(config, seed)


def test_a3_every_automa_turn_is_logged_with_text():
    """A-3: the Game API lists every Automa turn, e.g. 'automa P1: expand cow @ B2-07 (card 14)'."""
    g = play_random(GameConfig(num_players=2, automa={1: 3}, seed=5), 5)
    kinds = {e["kind"] for e in g.automa_events}
    assert {"start_worker", "pass"} <= kinds and kinds & {"expand", "trade", "take_contract"}
    assert all(e["text"].startswith("automa P1: ") for e in g.automa_events)
    passes = sum(e["kind"] == "pass" for e in g.automa_events)
    assert passes == 5                       # once per round
    text = g.history_text()
    assert len(text) == len(g.history) + len(g.automa_events)


def test_a10_scenarios_refuse_automa_games():
    g = Game(GameConfig(num_players=2, automa={1: 2}))
    with pytest.raises(ValueError, match="to_json"):
        g.to_scenario()


def test_a0_aec_env_automa_seats_are_not_agents():
    env = caledonia_env.env(num_players=3, automa={1: 4}, seed=3)
    env.reset()
    assert env.possible_agents == ["player_0", "player_2"]
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, r, term, trunc, info = env.last()
        assert agent != "player_1"
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.unwrapped.game.is_terminal


def test_a0_gym_env_automa_opponents():
    env = gymnasium.make("Caledonia-v0", num_players=3, opponents=["automa:2", "random"])
    obs, info = env.reset(seed=4)
    game = env.unwrapped.game
    seat = env.unwrapped.seat
    assert game.config.automa == {(seat + 1) % 3: 2}
    done = False
    while not done:
        a = int(np.flatnonzero(env.unwrapped.action_masks())[0])
        obs, r, done, trunc, info = env.step(a)
    assert len(info["scores"]) == 3


def test_a0_vector_env_automa_opponents_fast_path():
    v = CaledoniaVectorEnv(num_envs=3, num_players=2, opponents="automa:5", seed=1)
    assert v.fast and v.fixed_seat == 0
    assert v.configs[0].automa == {1: 5}
    v.reset()
    done = 0
    rng = np.random.default_rng(0)
    while done < 3:
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in v.action_masks()])
        obs, rew, dones, infos = v.step(acts)
        done += int(dones.sum())
    with pytest.raises(ValueError, match="Automa seat"):
        CaledoniaVectorEnv(num_envs=1, num_players=2, opponents="automa:5", seat=1, automa={1: 5})


def test_a0_aec_api_test_with_automa_seats():
    api_test(caledonia_env.env(num_players=3, automa={2: 5}), num_cycles=300)


def test_a0_gym_check_env_with_automa_and_seat_rules():
    check_env(CaledoniaEnv(num_players=2, opponents="automa:1", illegal_action="penalize"),
              skip_render_check=True)
    env = CaledoniaEnv(num_players=3, automa={0: 3})
    for s in range(4):
        env.reset(seed=s)
        assert env.seat != 0
    with pytest.raises(ValueError, match="Automa seat"):
        CaledoniaEnv(num_players=2, automa={1: 3}, seat=1)


def test_a13_pass_bonuses_in_passing_order_a48():
    """A-13 / A-4.8: successive passes get the table's bonuses 1st, 2nd, 3rd (the source's
    16, 14, 12, 10 once the ruleset carries them)."""
    g = Game(GameConfig(num_players=4, automa={1: 1, 2: 1, 3: 1}, seed=8))
    s, T = g.state, g.tables
    s[L.S_N_PASSED] = 0
    for pos, p in enumerate((1, 2, 3)):
        m0 = int(s[pofs(p) + L.P_MONEY])
        A.am_pass(s, T, p, 0, None)
        assert s[pofs(p) + L.P_MONEY] - m0 == T[L.T_PASS_BONUS + pos]
        assert s[L.S_NEXT_ORDER + pos] == p


def test_a3_event_text_format():
    g = play_random(GameConfig(num_players=2, automa={0: 4}, seed=11), 2)
    pat = re.compile(r"^automa P0: expand \w+ @ [A-D][12]-\d+(, neighborhood buy \d \w+)? "
                     r"\(card \d+\)$")
    expands = [e["text"] for e in g.automa_events if e["kind"] == "expand"]
    assert expands and all(pat.match(t) for t in expands)
