"""Rollouts with a horizon (agents/rollouts.py, agents/netroll.py): the flat searches' rollouts
stopped when a later round begins (R-2.1) and valued by the greedy evaluation's estimate of
the final margin; the ``hH`` suffix of ``mcts`` / ``nmcts`` / ``nmctsg`` names, and the ``cK``
suffix (the candidate count) after it."""
import numpy as np
import pytest
from invariants import play_checked

from caledonia_env import Game, GameConfig, agents
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS, evaluate
from caledonia_env.agents.rollouts import (NO_HORIZON, final_margin, greedy_action,
                                           greedy_rollout, leaf_margin, rollout_margins,
                                           seed_numba, stop_round)
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.step import apply_action

W = DEFAULT_WEIGHTS


def _game(num_players=2, seed=3, moves=25, **kw):
    game = Game(GameConfig(num_players=num_players, seed=seed, **kw))
    bot = agents.make("greedy", seed=1)
    for _ in range(moves):
        game.step(bot.act(game))
    return game


@pytest.mark.parametrize("num_players", [1, 2, 4])
def test_r2_1_a_rollout_with_a_horizon_stops_where_the_next_round_begins(num_players):
    """A greedy rollout to round + 1 (``stop``) plays exactly the greedy moves of a whole rollout
    up to the first state of the next round, then stops there."""
    kw = dict(solo=True) if num_players == 1 else {}
    game = _game(num_players, seed=num_players, **kw)
    s, T = game.state, game.tables
    r0 = int(s[L.S_ROUND])
    cut = s.copy()
    seed_numba(11)
    steps = greedy_rollout(cut, T, W, 100000, None, stop_round(cut, 1))
    assert steps > 0 and int(cut[L.S_ROUND]) == r0 + 1 and not L.game_over(cut)
    ref = s.copy()                    # the same greedy moves, one at a time
    mask = np.zeros(N_ACTIONS, np.int8)
    buf = np.empty_like(ref)
    seed_numba(11)
    for _ in range(steps):
        apply_action(ref, T, greedy_action(ref, T, W, mask, buf, None), None)
    assert np.array_equal(ref, cut) and int(ref[L.S_ROUND]) == r0 + 1
    assert stop_round(s, 0) == NO_HORIZON


def test_a_rollout_without_a_horizon_or_past_the_last_round_plays_the_whole_game():
    game = _game(2, seed=5)
    T = game.tables
    whole, cut = game.state.copy(), game.state.copy()
    seed_numba(3)
    n = greedy_rollout(whole, T, W, 100000, None)
    seed_numba(3)
    assert greedy_rollout(cut, T, W, 100000, None, stop_round(cut, 9)) == n
    assert L.game_over(cut) and np.array_equal(whole, cut)


@pytest.mark.parametrize("num_players", [1, 2, 3])
def test_r7_leaf_margin_is_the_final_margin_at_the_end_and_the_evaluated_one_before(num_players):
    kw = dict(solo=True) if num_players == 1 else {}
    game = _game(num_players, seed=7, **kw)
    s, T = game.state, game.tables
    est = [evaluate(s, T, q, W) for q in range(num_players)]
    want = est[0] if num_players == 1 else est[0] - max(est[1:])
    assert leaf_margin(s, T, 0, W) == pytest.approx(want)
    end = s.copy()
    greedy_rollout(end, T, W, 100000, None)
    assert L.game_over(end)
    for p in range(num_players):
        assert leaf_margin(end, T, p, W) == final_margin(end, T, p)


def test_margins_with_a_horizon_value_the_cut_rollouts_and_depend_on_it():
    game = _game(2, seed=9)
    s, T = game.state, game.tables
    acts = np.array(game.legal_actions()[:2] * 3, np.int64)
    seeds = np.arange(1, 7, dtype=np.int64)
    out = {}
    for h in (0, 1, 2):
        out[h] = np.empty(len(acts))
        seed_numba(5)
        rollout_margins(s, T, W, 0, acts, seeds, h, np.empty_like(s), out[h], None)
        assert (out[h] > -1e8).all()
    assert not np.array_equal(out[0], out[1]) and not np.array_equal(out[1], out[2])


@pytest.mark.parametrize("name,horizon,budget", [("mcts:32h1", 1, 32), ("mcts:0.5sh2", 2, None),
                                                 ("nmctsg:64h1", 1, 64), ("nmcts:8h3", 3, 8)])
def test_the_h_suffix_names_the_rollout_horizon(name, horizon, budget):
    if name.startswith("nm"):
        pytest.importorskip("torch")
    bot = agents.make(name)
    assert bot.evaluator.horizon == horizon and bot.name == name
    if budget:
        assert bot.rollouts == budget
    assert agents.make(name.split("h")[0]).evaluator.horizon == 0


@pytest.mark.parametrize("bad", ["mcts:32h0", "mcts:32h", "mcts:32hx", "mcts:h1", "mcts:32h-1",
                                 "nmctsg:64h0", "nmctsg:64hh1"])
def test_bad_horizons_raise_valueerror(bad):
    with pytest.raises(ValueError):
        agents.make(bad)


@pytest.mark.parametrize("name,candidates,horizon", [("mcts:128c24", 24, 0), ("mcts:32h2c12", 12, 2),
                                                     ("mcts:0.5sc8", 8, 0), ("nmctsg:16h2c8", 8, 2)])
def test_the_c_suffix_names_the_candidate_count(name, candidates, horizon):
    if name.startswith("nm"):
        pytest.importorskip("torch")
    bot = agents.make(name)
    assert (bot.candidates, bot.evaluator.horizon, bot.name) == (candidates, horizon, name)
    assert agents.make(name.rsplit("c", 1)[0]).candidates == 6


@pytest.mark.parametrize("bad", ["mcts:32c1", "mcts:32c", "mcts:32cx",
                                 "mcts:32c12h2", "mcts:32h0c8", "nmctsg:64c1"])
def test_bad_candidate_suffixes_raise_valueerror_naming_the_order(bad):
    with pytest.raises(ValueError, match=r"N\[hH\]\[cK\]"):
        agents.make(bad)


@pytest.mark.parametrize("bad,message", [("mcts:c8", "rollout count N"),
                                         ("nmcts:runs/checkpoint.zip", "ROLLOUTS")])
def test_a_name_without_its_budget_gets_the_kinds_own_message(bad, message):
    with pytest.raises(ValueError, match=message):
        agents.make(bad)


def test_more_candidates_are_searched_with_the_c_suffix():
    game = _game(num_players=1, solo=True, moves=6)
    counts = {}
    for name in ("mcts:16", "mcts:16c20"):
        bot = agents.make(name, seed=2)
        bot.act(game.clone())
        counts[name] = bot.last_stats["candidates"]
    legal = len(game.legal_actions())
    assert counts["mcts:16"] <= 7 < counts["mcts:16c20"] <= min(21, legal)


def test_random_rollouts_have_no_horizon():
    with pytest.raises(ValueError, match="horizon"):
        agents.make("mcts:8h1", rollout="random")


@pytest.mark.parametrize("config", [dict(num_players=1, solo=True),
                                    dict(num_players=2, automa={1: 3}),
                                    dict(num_players=4)])
def test_searches_with_a_horizon_play_legally(config):
    game = Game(GameConfig(seed=2, **config))
    bots = [agents.make("mcts:6h1", seed=p) for p in range(game.num_players)]
    play_checked(game, bots, limit=120)


def test_nmctsg_with_a_horizon_plays_legally_and_deterministically():
    pytest.importorskip("torch")
    game = _game(2, seed=4, moves=6)
    while len(game.legal_actions()) < 2:
        game.step(agents.make("greedy").act(game))
    picks = [agents.make("nmctsg:12h1", seed=3).act(game) for _ in range(2)]
    assert picks[0] == picks[1] and game.legal_mask()[picks[0]]
    play_checked(Game(GameConfig(num_players=3, seed=4)),
                 [agents.make("nmctsg:4h2", seed=p) for p in range(3)], limit=60)
