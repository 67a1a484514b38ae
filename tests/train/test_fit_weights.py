"""train/fit_weights.py: logged positions of greedy games, the evaluation's predictions,
the regression fit of its weights and the report; benchmarks/evaluation_fit.py end to end."""
import importlib.util
import os

import numpy as np
import pytest

from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS, N_WEIGHTS, W_NOISE, W_OPPONENT
from caledonia_env.agents.rollouts import final_margin
from caledonia_env.agents.weights import load_weights
from caledonia_env.engine.board import pofs
from caledonia_env.engine.layout import (P_MONEY, P_SCORE, SCORE_TOTAL, S_ROUND,
                                         T_MONEY_PER_VP, game_over)
from caledonia_env.train import fit_weights as fw
from caledonia_env.train.tune_weights import game_starts, play

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "evaluation_fit.py")
spec = importlib.util.spec_from_file_location("evaluation_fit_bench", _PATH)
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

SEED, GAMES, EVERY = 5, 3, 3
SEATS = np.stack([DEFAULT_WEIGHTS, load_weights("solo")])     # one vector per seat


@pytest.fixture(scope="module")
def ds():
    return fw.log_positions(SEATS, 2, GAMES, SEED, every=EVERY)


@pytest.fixture(scope="module")
def finals():
    return [play(SEATS, st) for st in game_starts(SEED, GAMES, 2)]


def test_every_logged_state_has_every_seat_and_its_games_final_vp(ds, finals):
    assert ds.states.shape[0] > 10 * GAMES and len(ds) == 2 * ds.states.shape[0]
    for k in range(ds.states.shape[0]):
        assert sorted(ds.seat[ds.pos == k]) == [0, 1]
        assert not game_over(ds.states[k])
    assert set(ds.state_game) == set(range(GAMES))
    assert np.array_equal(ds.state_round, ds.states[:, S_ROUND])
    for g, s in enumerate(finals):              # the moves of play(): the same final state
        T = ds.tables[g]
        for p in range(2):
            poff = pofs(p)
            score = s[poff + P_SCORE + SCORE_TOTAL] + (s[poff + P_MONEY] % T[T_MONEY_PER_VP]) / 100
            assert ds.finals[g, p] == pytest.approx(score, abs=1e-9)
        assert ds.finals[g, 0] - ds.finals[g, 1] == pytest.approx(final_margin(s, T, 0))
    assert np.array_equal(ds.target, ds.finals[ds.game, ds.seat])


def test_states_are_thinned_to_per_game():
    small = fw.log_positions(DEFAULT_WEIGHTS, 2, 1, SEED, every=1, per_game=7)
    assert small.states.shape[0] == 7 and len(small) == 14


def test_a_game_over_position_predicts_the_final_vp(finals, ds):
    s, T = finals[0], ds.tables[0]
    over = fw.Positions(s[None].copy(), np.zeros(1, np.int64), np.array([s[S_ROUND]]), T[None],
                        ds.finals[:1], np.zeros(2, np.int64), np.arange(2), ds.finals[0],
                        np.full(2, 2), ds.rounds)
    for w in (DEFAULT_WEIGHTS, SEATS[1], np.full(N_WEIGHTS, 3.0)):
        assert np.array_equal(fw.predictions(over, w), ds.finals[0])


def test_a_subset_of_games_keeps_its_samples(ds):
    sub = ds.games([2, 0])
    full = fw.predictions(ds, DEFAULT_WEIGHTS)
    order = np.concatenate([np.flatnonzero(ds.game == g) for g in (0, 2)])
    assert len(sub) == order.shape[0] and set(sub.game) == {0, 1}
    assert np.array_equal(np.sort(fw.predictions(sub, DEFAULT_WEIGHTS)), np.sort(full[order]))
    assert np.array_equal(np.sort(sub.target), np.sort(ds.target[order]))


def test_the_fit_lowers_the_mse_and_keeps_the_fixed_weights_and_the_bound(ds):
    init = DEFAULT_WEIGHTS.copy()
    init[W_OPPONENT] = 0.3
    res = fw.fit(ds, init, max_iter=6)
    assert res.mse_init == pytest.approx(fw.mse(ds, init))
    assert res.mse < 0.9 * res.mse_init
    assert res.mse == pytest.approx(fw.mse(ds, res.weights))
    assert np.all(res.weights >= 0) and res.weights.shape == (N_WEIGHTS,)
    assert res.weights[W_NOISE] == init[W_NOISE] and res.weights[W_OPPONENT] == 0.3
    assert not np.array_equal(res.weights, init)


def test_thirds_split_five_rounds_as_1_2_3_4_5():
    assert list(fw.third_of([0, 1, 2, 3, 4, 5, 6], 5)) == [0, 0, 0, 1, 1, 2, 2]
    assert fw.third_labels(5) == ["rounds 1-2", "rounds 3-4", "round 5"]


def test_the_report_lists_every_third_and_scores_each_set(ds):
    rows = fw.fit_report(ds, {"default": DEFAULT_WEIGHTS, "solo": SEATS[1]})
    assert [(r["set"], r["third"]) for r in rows] == [
        (n, t) for n in ("default", "solo")
        for t in ("rounds 1-2", "rounds 3-4", "round 5", "all")]
    for name, w in (("default", DEFAULT_WEIGHTS), ("solo", SEATS[1])):
        mine = [r for r in rows if r["set"] == name]
        assert sum(r["n"] for r in mine[:3]) == mine[3]["n"] == len(ds)
        for r in mine:
            assert r["n"] > 0 and r["r2"] <= 1.0 and r["rmse"] >= 0 and abs(r["corr"]) <= 1 + 1e-12
        e = fw.predictions(ds, w) - ds.target
        y = ds.target
        assert mine[3]["r2"] == pytest.approx(1 - np.sum(e ** 2) / np.sum((y - y.mean()) ** 2))
        assert mine[3]["rmse"] == pytest.approx(np.sqrt(np.mean(e ** 2)))
        assert mine[3]["bias"] == pytest.approx(e.mean())


def test_the_benchmark_runs_and_writes_the_fitted_weights(tmp_path, capsys):
    out = tmp_path / "fit.json"
    assert bench.main(["--players", "2", "--games", "2", "--seed", "1", "--every", "4",
                       "--play", "default", "--weights", "default,solo", "--fit",
                       "--max-iter", "3", "--out-weights", str(out)]) == 0
    table = capsys.readouterr().out.strip().splitlines()
    assert table[0].startswith("| players | weights |") and len(table) == 2 + 3 * 4
    assert any("| fitted | round 5 | held-out 1 of 2 |" in ln for ln in table)
    w = load_weights(str(out))
    assert np.all(w >= 0) and w[W_NOISE] == DEFAULT_WEIGHTS[W_NOISE]
