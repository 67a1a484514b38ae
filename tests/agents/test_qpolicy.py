"""qpolicy (agents.qpolicy): the learned policy over the greedy evaluation, its DAgger fit
(train.fit_qpolicy) and ``caledonia fit-qpolicy``."""
from __future__ import annotations

import numpy as np
import pytest

from caledonia_env import Game, GameConfig, agents
from caledonia_env.agents import qpolicy as qp
from caledonia_env.agents.mcts import SEARCHED_CONTEXTS
from caledonia_env.agents.rollouts import greedy_action, seed_numba
from caledonia_env.agents.weights import load_weights
from caledonia_env.cli import main
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine.layout import game_over
from caledonia_env.engine.step import apply_action

W2 = load_weights("2p")


def _positions(seed=3, moves=120, players=2, w=W2):
    """Positions of a greedy game (clans drafted, weights ``w``): states, tables, switch."""
    game = Game(GameConfig(num_players=players, seed=seed, clans="draft"))
    s, T = game.state.copy(), game.tables
    sw = automa_switch(T)
    mask, buf = np.zeros(N_ACTIONS, np.int8), np.empty_like(s)
    out = []
    for i in range(moves):
        if game_over(s):
            break
        out.append(s.copy())
        seed_numba(i)
        apply_action(s, T, greedy_action(s, T, w, mask, buf, sw), sw)
    return out, T, sw


def _random_policy(seed=1, hidden=8):
    rng = np.random.default_rng(seed)
    arrays = {"w1": rng.normal(0, 0.3, (qp.N_FEATURES, hidden)), "b1": rng.normal(0, 0.3, hidden),
              "w2": rng.normal(0, 0.3, (hidden, qp.N_OUT)), "b2": rng.normal(0, 0.3, qp.N_OUT)}
    return qp.QPolicy(arrays, 1.0, 1.5, W2)


def test_action_types_cover_every_action():
    assert qp.ACTION_TYPES.shape == (N_ACTIONS,)
    assert qp.ACTION_TYPES.min() == 0 and qp.ACTION_TYPES.max() == qp.N_TYPES - 1
    assert len(set(qp.TYPE_NAMES)) == qp.N_TYPES
    assert qp.TYPE_NAMES[qp.ACTION_TYPES[0]] == "pass"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_zero_head_plays_exactly_the_tuned_greedy_move(players):
    w = load_weights(f"{players}p")
    states, T, sw = _positions(players=players, w=w, moves=120 if players == 2 else 80)
    dec = qp.Decision(qp.QPolicy.zero(w, players=players))
    mask, buf = np.zeros(N_ACTIONS, np.int8), np.empty_like(states[0])
    for i, s in enumerate(states):
        seed_numba(1000 + i)
        want = greedy_action(s, T, w, mask, buf, sw)
        seed_numba(1000 + i)
        assert dec.run(s, T, sw) == want


def test_logits_are_legal_only_and_argmax_is_the_move():
    states, T, sw = _positions(moves=60)
    dec = qp.Decision(_random_policy())
    for s in states:
        a = dec.run(s, T, sw)
        legal = dec.mask.astype(bool)
        assert legal[a]
        if legal.sum() > 1:
            assert np.all(np.isneginf(dec.logits[~legal])) and np.all(np.isfinite(dec.logits[legal]))
            assert a == int(np.argmax(dec.logits))
            pr = np.exp(dec.logits[legal] - dec.logits[legal].max())
            assert np.isclose((pr / pr.sum()).sum(), 1.0)


def test_numba_forward_equals_the_torch_forward():
    torch = pytest.importorskip("torch")
    from caledonia_env.train import fit_qpolicy as fq
    torch.manual_seed(0)
    net = fq.make_net(8)
    torch.nn.init.normal_(net[2].weight, 0, 0.3)
    torch.nn.init.normal_(net[2].bias, 0, 0.3)
    rng = np.random.default_rng(2)
    mu, sd = rng.normal(size=qp.N_FEATURES), rng.uniform(0.5, 2, qp.N_FEATURES)
    pol = fq.export(net, mu, sd, 1.0, 1.5, W2, 2, {})
    dec = qp.Decision(pol)
    states, T, sw = _positions(moves=80)
    checked = 0
    for s in states:
        dec.run(s, T, sw)
        legal = np.flatnonzero(dec.mask)
        if len(legal) < 2 or not qp.HEAD_CONTEXTS[int(s[qp.S_CTX])]:
            continue
        q = dec.q[legal]
        x = torch.tensor(((dec.x - mu) / sd)[None], dtype=torch.float32)
        z = torch.tensor(((q - q.max()) / 1.5)[None], dtype=torch.float32)
        typ = torch.tensor(qp.ACTION_TYPES[legal][None])
        ok = torch.ones_like(typ, dtype=torch.bool)
        with torch.no_grad():
            lg, v = fq.torch_logits(net, x, z, typ, ok, 1.0)
        np.testing.assert_allclose(lg.numpy()[0], dec.logits[legal], rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(v.item(), dec.head[qp.OUT_VALUE], rtol=1e-4, atol=1e-4)
        checked += 1
    assert checked >= 10


def test_head_applies_only_at_searched_contexts():
    assert {qp.CONTEXT_NAMES[i] for i in np.flatnonzero(qp.HEAD_CONTEXTS)} == set(SEARCHED_CONTEXTS)


def test_policy_file_round_trip_and_agent_plays(tmp_path):
    path = str(tmp_path / "p.npz")
    pol = _random_policy()
    qp.save_qpolicy(path, pol, note="x")
    back = qp.load_qpolicy(path)
    for k in qp.ARRAYS:
        np.testing.assert_array_equal(back.arrays[k], pol.arrays[k])
    assert back.tau == 1.5 and back.meta["note"] == "x"
    bot = agents.make(f"qpolicy:{path}", seed=4)
    game = Game(GameConfig(num_players=2, seed=9))
    for _ in range(30):
        a = bot.act(game)
        assert a in game.legal_actions()
        game.step(a)
    with pytest.raises(ValueError, match="no qpolicy file"):
        agents.make(f"qpolicy:{tmp_path}/none.npz")


def test_a_policy_file_refuses_games_of_another_player_count(tmp_path):
    path = qp.save_qpolicy(str(tmp_path / "p2.npz"), _random_policy())
    bot = agents.make(f"qpolicy:{path}", seed=1)
    with pytest.raises(ValueError, match=r"p2.npz was trained for 2-player games, not "
                                         r"3-player ones.*fit-qpolicy --players 3"):
        bot.act(Game(GameConfig(num_players=3, seed=1)))
    bot.act(Game(GameConfig(num_players=2, seed=1)))       # its own count still plays


def test_shipped_qpolicy_by_player_count_and_a_clear_error_when_missing(tmp_path, monkeypatch):
    bot = agents.make("qpolicy", seed=2)
    game = Game(GameConfig(num_players=2, seed=5))
    game.step(bot.act(game))
    assert bot.decision(2).policy.players == 2
    monkeypatch.setattr(qp, "PRETRAINED_DIR", str(tmp_path))
    qp.save_qpolicy(str(tmp_path / "qpolicy_3p.npz"), qp.QPolicy.zero(load_weights("3p"),
                                                                     players=3))
    bot = agents.make("qpolicy", seed=2)
    game3 = Game(GameConfig(num_players=3, seed=5))
    assert bot.act(game3) in game3.legal_actions()
    assert bot.decision(3).policy.players == 3
    with pytest.raises(ValueError, match=r"no shipped qpolicy for 4-player games: .*"
                                         r"qpolicy_4p.npz is missing .*fit-qpolicy --players 4"):
        bot.act(Game(GameConfig(num_players=4, seed=5)))
    with pytest.raises(ValueError, match="2-4-player games, not 1-player"):
        bot.act(Game(GameConfig(num_players=1, solo=True, seed=5)))


def test_records_round_trip_and_targets(tmp_path):
    pytest.importorskip("torch")
    from caledonia_env.train import fit_qpolicy as fq
    rec = fq.label_games(qp.QPolicy.zero(W2), 1, 11, candidates=3, rollouts=1)
    n = rec["n_legal"]
    assert len(n) > 20 and rec["act"].shape == (n.sum(),) and rec["x"].shape == (len(n), qp.N_FEATURES)
    assert set(rec["seat"].tolist()) == {0, 1}
    drawn = np.add.reduceat((~np.isnan(rec["qhat"])).astype(int), np.r_[0, np.cumsum(n)[:-1]])
    assert np.all(drawn == np.minimum(3, n))
    path = fq.save_records(str(tmp_path / "r.npz"), rec)
    back = fq.load_records(path)
    for k in fq.RECORD_KEYS:
        np.testing.assert_array_equal(back[k], rec[k])
    tgt, value = fq.targets(rec)
    sums = np.add.reduceat(tgt, np.r_[0, np.cumsum(n)[:-1]])
    np.testing.assert_allclose(sums, 1.0)
    assert np.all(np.isfinite(value))


def test_fit_qpolicy_command_end_to_end(tmp_path, capsys):
    pytest.importorskip("torch")
    out, rec = str(tmp_path / "q.npz"), str(tmp_path / "rec")
    args = ["fit-qpolicy", "--out", out, "--records", rec, "--iterations", "1", "--games", "2",
            "--candidates", "2", "--rollouts", "1", "--epochs", "2", "--hidden", "8", "-q"]
    assert main(args) == 0
    assert "policy written" in capsys.readouterr().out
    pol = qp.load_qpolicy(out)
    assert pol.meta["command"].startswith("caledonia fit-qpolicy") and pol.meta["games"] == 2
    assert (tmp_path / "rec" / "iter0.npz").exists()
    again = str(tmp_path / "q2.npz")                # a rerun reads the records, refits
    assert main(args[:2] + [again] + args[3:-1]) == 0
    assert "decisions read from" in capsys.readouterr().out
    np.testing.assert_array_equal(qp.load_qpolicy(again).arrays["w2"], pol.arrays["w2"])
    assert main(args[:2] + ["bad.txt"] + args[3:]) == 2
    assert "--out" in capsys.readouterr().err


def test_fit_qpolicy_three_players_end_to_end(tmp_path, capsys):
    pytest.importorskip("torch")
    from caledonia_env.train import fit_qpolicy as fq
    out, rec = str(tmp_path / "q3.npz"), str(tmp_path / "rec")
    args = ["fit-qpolicy", "--players", "3", "--out", out, "--records", rec, "--iterations", "1",
            "--games", "1", "--candidates", "2", "--rollouts", "1", "--epochs", "2",
            "--hidden", "8", "-q"]
    assert main(args) == 0
    pol = qp.load_qpolicy(out)
    assert pol.players == 3 and pol.meta["players"] == 3
    assert "--players 3" in pol.meta["command"] and "--weights 3p" in pol.meta["command"]
    np.testing.assert_array_equal(pol.weights, load_weights("3p"))
    records = fq.load_records(str(tmp_path / "rec" / "iter0.npz"))
    assert set(records["seat"].tolist()) == {0, 1, 2}
    bot = agents.make(f"qpolicy:{out}", seed=3)
    game = Game(GameConfig(num_players=3, seed=4))
    for _ in range(20):
        game.step(bot.act(game))
    capsys.readouterr()
    assert main(["fit-qpolicy", "--out", str(tmp_path / "q2.npz"), "--records", rec,
                 "--iterations", "1", "-q"]) == 2            # 3-player records, 2-player run
    assert "3-player games, not 2-player" in capsys.readouterr().err


def test_fit_qpolicy_help(capsys):
    assert main(["fit-qpolicy", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--records" in text and "DAgger" in text and "examples:" in text
