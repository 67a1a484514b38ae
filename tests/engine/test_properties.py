"""Property tests over random full games (hypothesis + random legal playouts)."""
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from caledonia_env import Game, GameConfig, IllegalActionError
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine import layout as L
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
    check_random_illegal_action(Game(GameConfig(num_players=players, seed=seed)), seed, data, 120)


def check_random_illegal_action(game, seed, data, max_moves):
    """After up to ``max_moves`` random legal moves, a random illegal action raises and
    leaves the state unchanged (after the end, any action raises)."""
    rng = np.random.default_rng(seed)
    for _ in range(data.draw(st.integers(0, max_moves))):
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
    steps = random_games(tables, 400, 1234 + players, finals, automa_switch(tables))
    assert steps > 0, "a random game hit a state with no legal action"
    assert all(L.game_over(f) for f in finals)
    assert (finals[:, L.S_ROUND] == 5).all()


# ------------------------------------------------------- clans, solo, variants
CLANS = ("buchanan", "campbell", "cunningham", "fergusson", "macdonald", "mackenzie",
         "robertson", "stewart", "brewer")


def _clan_config(players, seed, rotation):
    clans = tuple(CLANS[(p + rotation) % len(CLANS)] for p in range(players))
    return GameConfig(num_players=players, solo=players == 1, seed=seed, clans=clans)


@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_R_8_every_clan_in_every_seat_random_numba_games(players):
    """R-8: clans rotated over the seats (each clan in each seat), 8 random games per
    rotation inside numba: never an empty mask, every game ends after round 5, money,
    goods and merchants never negative."""
    for rotation in range(len(CLANS)):
        tables = Game(_clan_config(players, rotation, rotation)).tables
        finals = np.zeros((8, STATE_SIZE), np.int32)
        steps = random_games(tables, 8, 1000 * players + rotation, finals,
                             automa_switch(tables))
        assert steps > 0, f"dead end with clans rotation {rotation}"
        assert all(L.game_over(f) for f in finals) and (finals[:, L.S_ROUND] == 5).all()
        for p in range(players):
            poff = L.S_PLAYERS + p * L.P_SIZE
            clan = CLANS[(p + rotation) % len(CLANS)]
            assert (finals[:, poff + L.P_CLAN] == CLANS.index(clan)).all()
            assert (finals[:, poff + L.P_MONEY] >= 0).all()
            assert (finals[:, poff + L.P_GOODS:poff + L.P_GOODS + 6] >= 0).all()
            assert (finals[:, poff + L.P_MERCH] >= 0).all()


@pytest.mark.parametrize("players", [1, 2, 3, 4])
@SETTINGS
@given(seed=st.integers(0, 2**20), rotation=st.integers(0, 8))
def test_R_8_clan_games_invariants_every_step(players, seed, rotation):
    game = Game(_clan_config(players, seed, rotation))
    rounds = play_random(game, seed)
    assert game.is_terminal and rounds == {1, 2, 3, 4, 5}
    for b in game.score_breakdown():
        assert sum(v for k, v in b.items() if k not in ("total", "rating")) == b["total"]


@pytest.mark.parametrize("mode", ["draft", "auction"])
@SETTINGS
@given(seed=st.integers(0, 2**20), players=st.integers(1, 4))
def test_R_1_7_R_9_4_draft_and_auction_games_replay(mode, seed, players):
    cfg = GameConfig(num_players=players, solo=players == 1, seed=seed, clans="draft",
                     clan_auction=mode == "auction", kickstarter_clan=seed % 2 == 1)
    game = Game(cfg)
    play_random(game, seed)
    assert len({game.clan(p) for p in range(players)}) == players
    replay = Game.from_json(game.to_json())
    assert np.array_equal(replay.state, game.state)


@SETTINGS
@given(seed=st.integers(0, 2**20), players=st.integers(1, 4), data=st.data())
def test_random_illegal_action_raises_with_clans(seed, players, data):
    check_random_illegal_action(Game(_clan_config(players, seed, seed % len(CLANS))), seed, data,
                                200)


@pytest.mark.slow
@pytest.mark.parametrize("players", [1, 2, 3, 4])
def test_R_8_many_clan_games_in_numba(players):
    """Heavier run: 50 random games per clan rotation and player count, draft and auction."""
    configs = [_clan_config(players, r, r) for r in range(len(CLANS))]
    configs += [GameConfig(num_players=players, solo=players == 1, seed=s, clans="draft",
                           clan_auction=s == 1, kickstarter_clan=True) for s in range(2)]
    for i, cfg in enumerate(configs):
        finals = np.zeros((50, STATE_SIZE), np.int32)
        T = Game(cfg).tables
        assert random_games(T, 50, 77 * i + players, finals, automa_switch(T)) > 0
        assert all(L.game_over(f) for f in finals)
