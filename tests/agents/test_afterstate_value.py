"""The learned afterstate value (agents.afterstate_value), its fit (train.fit_value,
caledonia fit-value) and the search that ends its rollouts on it (vmcts)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from caledonia_env import Game, GameConfig, agents
from caledonia_env.agents import afterstate_value as av
from caledonia_env.agents.greedy_value import evaluate
from caledonia_env.agents.rollouts import final_margin, greedy_rollout, seed_numba
from caledonia_env.agents.search_values import ValueRollouts
from caledonia_env.agents.weights import load_weights
from caledonia_env.cli import main
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine.layout import S_ROUND, game_over
from caledonia_env.tournament import TournamentSpec, run

W2 = load_weights("2p")


def _round_start(players=3, seed=5, rounds=1):
    """A game at the start of round 1 + ``rounds`` (greedy play)."""
    game = Game(GameConfig(num_players=players, seed=seed, clans="draft"))
    s, T = game.state.copy(), game.tables
    seed_numba(seed)
    greedy_rollout(s, T, W2, 100000, automa_switch(T), stop=int(s[S_ROUND]) + rounds)
    return s, T


def _arrays(rng, hidden=8):
    return {"w1": rng.normal(size=(av.N_FEATURES, hidden)), "b1": rng.normal(size=hidden),
            "w2": rng.normal(size=(hidden, hidden)), "b2": rng.normal(size=hidden),
            "w3": rng.normal(size=hidden), "b3": rng.normal(size=1)}


def test_features_put_the_seat_first_then_opponents_best_first_and_zero_absent_seats():
    s, T = _round_start(players=3)
    x = np.empty(av.N_FEATURES)
    for p in range(3):
        av.value_features(s, T, p, W2, x)
        evs = [evaluate(s, T, q, W2) for q in range(3)]
        blocks = x[:4 * av.SEAT_FEATURES].reshape(4, av.SEAT_FEATURES)
        assert blocks[0, 0] == pytest.approx(evs[p] / 100)
        others = sorted((evs[q] for q in range(3) if q != p), reverse=True)
        assert blocks[1:3, 0] == pytest.approx(np.array(others) / 100)
        assert not blocks[3].any()                      # no fourth player
        assert blocks[:3, 3 + 6 + 11].tolist() == [1.0, 1.0, 1.0]     # the seats that play
        g = 4 * av.SEAT_FEATURES
        assert x[g] == pytest.approx((evs[p] - others[0]) / 50)
        assert x[g + int(s[S_ROUND])] == 1.0 and x[g + 1:g + 7].sum() == 1.0
        assert np.isfinite(x).all()


def test_numba_forward_is_the_numpy_one():
    from caledonia_env.train.fit_value import predict
    rng = np.random.default_rng(0)
    a = _arrays(rng)
    s, T = _round_start(players=2)
    x = np.empty(av.N_FEATURES)
    av.value_features(s, T, 0, W2, x)
    net = av.ValueNet(a, W2, 2, {})
    assert net.margin(s, T, 0) == pytest.approx(predict(a, x[None])[0], rel=1e-9, abs=1e-9)


def test_a_finished_game_is_valued_by_its_final_margin():
    s, T = _round_start(players=2, rounds=10)
    assert game_over(s)
    net = av.ValueNet(_arrays(np.random.default_rng(1)), W2, 2, {})
    assert net.margin(s, T, 1) == final_margin(s, T, 1)


def test_value_files_round_trip_and_bad_files_say_why(tmp_path):
    a = _arrays(np.random.default_rng(2))
    path = av.save_value(str(tmp_path / "v.npz"), a, W2, 2, command="x")
    net = av.load_value(path)
    assert net.players == 2 and net.meta == {"command": "x"}
    assert np.array_equal(net.weights, W2) and np.array_equal(net.arrays["w1"], a["w1"])
    with pytest.raises(ValueError, match="no value network"):
        av.load_value(str(tmp_path / "missing.npz"))
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a value file"):
        av.load_value(str(tmp_path / "bad.npz"))
    with pytest.raises(ValueError, match="retrain"):
        av.ValueNet({**a, "w1": a["w1"][:10]}, W2, 2, {})


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_shipped_values_are_fitted_on_their_tuned_weights(players):
    net = av.load_value(players)
    assert net.players == players
    assert np.array_equal(net.weights, load_weights(f"{players}p"))
    assert "fit-value" in net.meta["command"]
    held_out = {r["round"]: r for r in net.meta["report"]}["all"]
    assert held_out["r2_value"] > held_out["r2_evaluation"]


def test_rollouts_end_on_the_value():
    """A constant network: every rollout that stops before the end is worth that constant."""
    rng = np.random.default_rng(3)
    a = _arrays(rng)
    a["w3"][:] = 0.0
    a["b3"][:] = 7.25
    game = Game(GameConfig(num_players=2, seed=4, clans="draft"))
    ev = ValueRollouts(weights=W2, horizon=1)
    ev._net = av.ValueNet(a, W2, 2, {})
    legal, _ = ev.prior(game.state, game.tables)
    actions = np.repeat(legal[:2], 3).astype(np.int64)
    out = np.empty(len(actions))
    ev.playouts(game.state, game.tables, 0, actions, np.arange(len(actions), dtype=np.int64), out)
    assert out.tolist() == [7.25] * len(actions)


def test_vmcts_plays_whole_games_and_rejects_bad_names(tmp_path):
    spec = TournamentSpec(players=("vmcts:2c2", "greedy"), games=2, seed=1)
    rows = run(spec)
    assert len(rows) == 4 and {r["agent"] for r in rows} == {"vmcts:2c2", "greedy"}
    agent = agents.make("vmcts:4h2")
    assert agent.rollouts == 4 and agent.evaluator.horizon == 2
    for bad in ("vmcts:0", "vmcts:x", "vmcts:4h0"):
        with pytest.raises(ValueError):
            agents.make(bad)
    with pytest.raises(ValueError, match="no value network"):
        agents.make(f"vmcts:4:{tmp_path / 'none.npz'}")
    three = av.save_value(str(tmp_path / "v3.npz"), _arrays(np.random.default_rng(4)),
                          load_weights("3p"), 3)
    game = Game(GameConfig(num_players=2, seed=2, clans="draft"))
    with pytest.raises(ValueError, match="3-player"):
        agents.make(f"vmcts:4:{three}").act(game)


def test_the_fit_learns_a_function_of_the_features():
    from caledonia_env.train.fit_value import fit, predict, r2
    rng = np.random.default_rng(5)
    x = rng.normal(size=(8000, av.N_FEATURES)).astype(np.float32)
    y = (20 * x[:, 0] - 10 * np.maximum(x[:, 5], 0)).astype(np.float32)
    samples = {"x": x, "y": y}
    mask = np.arange(8000) < 7000
    arrays = fit(samples, mask, hidden=32, epochs=20)
    assert r2(predict(arrays, x[~mask]), y[~mask]) > 0.9


def test_fit_value_command_writes_a_file_vmcts_plays(tmp_path, capsys):
    out = str(tmp_path / "v.npz")
    assert main(["fit-value", "--players", "2", "--games", "12", "--epochs", "2",
                 "--hidden", "8", "--out", out, "-q"]) == 0
    text = capsys.readouterr().out
    assert "held-out fit" in text and "round all" in text
    net = av.load_value(out)
    assert net.meta["games"] == 12 and net.meta["command"].startswith("caledonia fit-value")
    json.dumps(net.meta)
    assert agents.make(f"vmcts:2c2:{out}").act(Game(GameConfig(num_players=2, seed=1))) >= 0
    assert main(["fit-value", "--players", "5", "--out", out]) == 2
    assert "--players" in capsys.readouterr().err
