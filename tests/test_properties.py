"""Property tests over random full games (hypothesis + random legal playouts)."""
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from caledonia_env import Game, GameConfig, IllegalActionError
from caledonia_env.engine.layout import STATE_SIZE
from caledonia_env.engine.playout import random_games
from invariants import check_invariants

SETTINGS = settings(max_examples=6, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def play_random(game, seed, check=True):
    rng = np.random.default_rng(seed)
    rounds_seen = set()
    while not game.is_terminal:
        legal = game.legal_actions()
        assert len(legal) > 0, f"empty mask in context {game.context}"
        game.step(int(rng.choice(legal)))
        rounds_seen.add(game.round)
        if check:
            check_invariants(game)
    return rounds_seen


@pytest.mark.parametrize("players", [2, 3, 4])
@SETTINGS
@given(seed=st.integers(0, 2**20))
def test_random_game_invariants_and_end(players, seed):
    game = Game(GameConfig(num_players=players, seed=seed))
    rounds = play_random(game, seed)
    assert game.is_terminal and game.round == 5 and rounds == {1, 2, 3, 4, 5}
    scores = game.scores()
    breakdown = game.score_breakdown()
    assert [b["total"] for b in breakdown] == list(scores)
    assert all(sum(v for k, v in b.items() if k != "total") == b["total"] for b in breakdown)


@pytest.mark.parametrize("players", [2, 3, 4])
@SETTINGS
@given(seed=st.integers(0, 2**20))
def test_json_replay_reproduces_state(players, seed):
    game = Game(GameConfig(num_players=players, seed=seed))
    play_random(game, seed + 1, check=False)
    replay = Game.from_json(game.to_json())
    assert np.array_equal(replay.state, game.state)
    assert json.loads(replay.to_json()) == json.loads(game.to_json())


@SETTINGS
@given(seed=st.integers(0, 2**20), players=st.integers(2, 4))
def test_same_seed_same_game(seed, players):
    a = Game(GameConfig(num_players=players, seed=seed))
    b = Game(GameConfig(num_players=players, seed=seed))
    assert a.map == b.map and np.array_equal(a.state, b.state)
    play_random(a, 5, check=False)
    play_random(b, 5, check=False)
    assert np.array_equal(a.state, b.state)


@SETTINGS
@given(seed=st.integers(0, 2**20), players=st.integers(2, 4), data=st.data())
def test_random_illegal_action_raises(seed, players, data):
    game = Game(GameConfig(num_players=players, seed=seed))
    rng = np.random.default_rng(seed)
    for _ in range(data.draw(st.integers(0, 120))):
        if game.is_terminal:
            break
        game.step(int(rng.choice(game.legal_actions())))
    if game.is_terminal:
        with pytest.raises(IllegalActionError):
            game.step(0)
        return
    illegal = np.flatnonzero(~game.legal_mask())
    a = int(data.draw(st.sampled_from(list(illegal))))
    before = game.state.copy()
    with pytest.raises(IllegalActionError, match="not legal"):
        game.step(a)
    assert np.array_equal(before, game.state), "a rejected action must not change the state"


def test_clone_is_independent():
    game = Game(GameConfig(num_players=3, seed=3))
    clone = game.clone()
    clone.step(int(clone.legal_actions()[0]))
    assert not np.array_equal(clone.state, game.state)
    assert len(game.history) == 0


@pytest.mark.parametrize("players", [2, 3, 4])
def test_many_random_games_in_numba_never_dead_end(players):
    """400 random games per player count inside numba: no empty mask, all end."""
    tables = Game(GameConfig(num_players=players, seed=11)).tables
    finals = np.zeros((400, STATE_SIZE), np.int32)
    steps = random_games(tables, 400, 1234 + players, finals)
    assert steps > 0, "a random game hit a state with no legal action"
    from caledonia_env.engine import layout as L
    assert (finals[:, L.S_DONE] == 1).all()
    assert (finals[:, L.S_ROUND] == 5).all()
