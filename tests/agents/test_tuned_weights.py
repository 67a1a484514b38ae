"""The evaluation's terms for play with opponents (the opponent term, the money curve), games
where each seat plays its own weights, and the multi-player tuner with its resumable state
(agents.greedy_value, agents.rollouts, train.tune_weights, caledonia tune-weights)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from caledonia_env import Game, GameConfig, agents
from caledonia_env.agents import greedy_value as gv
from caledonia_env.agents.rollouts import action_values, greedy_rollout, seed_numba
from caledonia_env.agents.weights import ADDED_LATER, WEIGHT_NAMES, weights_from_dict
from caledonia_env.cli import main
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine.layout import S_PLAYER
from caledonia_env.engine.step import apply_action
from caledonia_env.train import tune_weights as tw

D = gv.DEFAULT_WEIGHTS


def _main_action_game(players=2, seed=3):
    game = Game(GameConfig(num_players=players, seed=seed, clans="draft"))
    while game.context != "main action":
        game.step(agents.make("greedy").act(game))
    return game


def _values(game, w):
    out = np.empty(N_ACTIONS)
    action_values(game.state, game.tables, np.asarray(w, np.float64),
                  np.zeros(N_ACTIONS, np.int8), np.empty_like(game.state), out,
                  automa_switch(game.tables))
    return out


def test_the_added_terms_are_off_by_default():
    assert WEIGHT_NAMES[gv.W_OPPONENT] == "opponent"
    assert WEIGHT_NAMES[gv.W_MONEY_CURVE] == "money_curve"
    assert D[gv.W_OPPONENT] == 0.0 and D[gv.W_MONEY_CURVE] == 0.0
    assert set(ADDED_LATER) == {"opponent", "money_curve"}


def test_a_file_from_before_the_added_terms_reads_them_as_off():
    named = {n: float(v) for n, v in zip(WEIGHT_NAMES, D) if n not in ADDED_LATER}
    np.testing.assert_array_equal(weights_from_dict(named), D)
    with pytest.raises(ValueError, match="missing \\['sell'\\]"):
        weights_from_dict({n: v for n, v in named.items() if n != "sell"})


def test_the_opponent_term_subtracts_lambda_times_the_best_opponents_value():
    """With lambda, each action's value is the own value minus lambda x the best other
    seat's evaluation after it (exact here: mobility, the one term valued from the position
    before the action, is 0)."""
    game = _main_action_game(3)
    base = D.copy()
    base[gv.W_MOBILITY] = 0.0
    own = _values(game, base)
    w = base.copy()
    w[gv.W_OPPONENT] = 0.5
    rel = _values(game, w)
    legal = np.flatnonzero(np.isfinite(own))
    assert len(legal) > 5 and np.array_equal(legal, np.flatnonzero(np.isfinite(rel)))
    me = int(game.state[S_PLAYER])
    for a in legal[:: max(1, len(legal) // 8)]:
        s = game.state.copy()
        apply_action(s, game.tables, int(a), automa_switch(game.tables))
        best = max(gv.evaluate(s, game.tables, q, base) for q in range(3) if q != me)
        assert rel[a] == pytest.approx(own[a] - 0.5 * best)


def test_the_money_curve_values_early_money_more():
    s, T = _main_action_game().state, _main_action_game().tables
    w = D.copy()
    base = gv.money_value(T, 3, w)
    w[gv.W_MONEY_CURVE] = 0.01
    assert gv.money_value(T, 3, w) == pytest.approx(base + 0.09)
    assert gv.money_value(T, 0, w) == gv.money_value(T, 0, D)
    assert gv.evaluate(s, T, 0, w) > gv.evaluate(s, T, 0, D)


def test_each_seat_plays_its_own_weights():
    """One vector for every seat and the same vector repeated per seat play the same game;
    another vector in one seat changes the game."""
    game = _main_action_game(2, seed=5)
    T, switch = game.tables, automa_switch(game.tables)

    def final(w):
        s = game.state.copy()
        seed_numba(9)
        assert greedy_rollout(s, T, np.ascontiguousarray(w), 100000, switch) > 0
        return s

    same = final(D)
    np.testing.assert_array_equal(same, final(np.concatenate([D, D])))
    other = D.copy()
    other[gv.W_MONEY_SLOPE] = 0.2
    assert not np.array_equal(same, final(np.concatenate([D, other])))
    with pytest.raises(ValueError, match="one vector per seat"):
        final(np.concatenate([D, D, D]))


def test_seat_plan_rotates_the_candidate_and_the_pool():
    plans = [tw.seat_plan(g, 4, 3) for g in range(12)]
    assert [me for me, _ in plans[:4]] == [0, 1, 2, 3]
    assert all(len(o) == 3 for _, o in plans)
    assert {tuple(o) for _, o in plans} == {(0, 1, 2), (1, 2, 0), (2, 0, 1)}


def test_match_scores_are_win_shares_and_margins():
    starts = tw.game_starts(4, 6, 2)
    wins, margins = tw.match_scores(D, [D], starts)
    assert set(wins) <= {0.0, 0.5, 1.0}
    assert ((margins > 0) == (wins == 1.0)).all()
    zeros = np.zeros(gv.N_WEIGHTS)
    assert tw.fitness(zeros, [D], starts) < tw.fitness(D, [D], starts)


def test_the_multiplayer_tuning_resumes_exactly(tmp_path):
    starts = tw.game_starts(5, 4, 2)
    whole = tw.tune(starts, 2, 4, seed=1, opponents=[D])
    saved = []
    first = tw.tune(starts, 2, 4, seed=1, opponents=[D], checkpoint=saved.append,
                    deadline=0.0)
    assert not first["done"] and len(first["history"]) == 1
    state = json.loads(json.dumps(saved[-1]))          # through JSON, as the state file
    rest = tw.tune(starts, 2, 4, seed=1, opponents=[D], state=state)
    assert rest["done"]
    np.testing.assert_array_equal(rest["weights"], whole["weights"])
    assert whole["weights"][gv.W_NOISE] == D[gv.W_NOISE]
    with pytest.raises(ValueError, match="opponent"):
        tw.tune(starts, 1, 4, seed=1)


def test_the_command_tunes_for_a_player_count_and_resumes(tmp_path, capsys):
    out = tmp_path / "w.json"
    args = ["tune-weights", "--players", "2", "--games", "2", "--generations", "2",
            "--population", "4", "-q", "--out", str(out)]
    assert main(args + ["--minutes", "0.0001"]) == 0
    said = capsys.readouterr().out
    assert "stopped after generation 1 of 2" in said and "--resume" in said
    state = json.loads((tmp_path / "w.state.json").read_text())
    assert state["state"]["generation"] == 1
    assert main(args + ["--resume"]) == 0
    data = json.loads(out.read_text())
    assert data["players"] == 2 and data["generations_run"] == 2
    assert data["command"].startswith(f"caledonia tune-weights --out {out} --players 2 "
                                      f"--opponents greedy,solo --games 2")
    assert main(args[:4] + ["3"] + args[5:] + ["--resume"]) == 2
    assert "--games 2, this run has 3" in capsys.readouterr().err
    assert main(["tune-weights", "--players", "5", "--out", str(tmp_path / "v.json")]) == 2
    assert "--players must be 1 (solo) to 4" in capsys.readouterr().err
    assert main(["tune-weights", "--players", "2", "--opponents", "nosuch",
                 "--out", str(tmp_path / "v.json")]) == 2
    assert "shipped set" in capsys.readouterr().err
