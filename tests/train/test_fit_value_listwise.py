"""The listwise fit of the afterstate value: the search's recorded sibling rollouts
(RecordingRollouts, train.fit_value.search_labels), ListNet, the ranking report and the
``caledonia fit-value --loss listwise`` command."""
from __future__ import annotations

import numpy as np
import pytest

from caledonia_env import Game, GameConfig, agents
from caledonia_env.agents import afterstate_value as av
from caledonia_env.agents.rollouts import rollout_margins
from caledonia_env.agents.search_values import RecordingRollouts
from caledonia_env.agents.weights import load_weights
from caledonia_env.cli import main
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.train import fit_value as fv

W2 = load_weights("2p")
AGENT = "mcts:2h1c2:2p"         # the cheapest labelling search


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("labels") / "labels.npz")
    fv.search_labels(2, 2, 11, AGENT, W2, path=path, save_every=1, command="test")
    return path


def test_recorded_rollouts_give_the_search_its_margins_and_keep_the_leaves():
    game = Game(GameConfig(num_players=2, seed=4, clans="draft"))
    s, T = game.state, game.tables
    ev = RecordingRollouts(W2, 1)
    legal, _ = ev.prior(s, T)
    acts = np.repeat(legal[:3], 2).astype(np.int64)
    seeds = np.tile(np.arange(2, dtype=np.int64), 3)
    out, ref = np.empty(6), np.empty(6)
    ev.playouts(s, T, 0, acts, seeds, out)
    rollout_margins(s, T, W2, 0, acts, seeds, 1, np.empty_like(s), ref, automa_switch(T))
    assert out.tolist() == ref.tolist()
    p, a, sd, margins, feats, done, deep = ev.calls[0]
    assert p == 0 and a.tolist() == acts.tolist() and margins.tolist() == ref.tolist()
    assert feats.shape == (6, av.N_FEATURES) and not done.any()
    assert np.isfinite(deep).all() and (np.abs(deep) < 200).all()
    assert feats[:, 4 * av.SEAT_FEATURES + 2].tolist() == [1.0] * 6    # leaves: round 2 begins


def test_the_recording_search_plays_the_plain_searchs_moves():
    game = Game(GameConfig(num_players=2, seed=6, clans="draft"))
    plain, rec = agents.make(AGENT, seed=3), fv.recording_agent(AGENT, W2)
    rec.reset(3)
    for _ in range(12):
        a = plain.act(game)
        assert rec.act(game) == a
        game.step(a)
    assert rec.evaluator.calls
    with pytest.raises(ValueError, match="greedy rollouts of whole rounds"):
        fv.recording_agent("mcts:4", W2)


def test_label_records_have_one_row_per_rollout_and_replay(labels):
    L = fv.load_labels(labels)
    n = len(L["x"])
    assert n > 20 and L["meta"]["games"] == 2 and L["meta"]["command"] == "test"
    assert all(len(L[k]) == n for k in fv.LABEL_ROWS) and L["x"].shape[1] == av.N_FEATURES
    assert L["hist_start"][[0, -1]].tolist() == [0, len(L["hist"])]
    assert sorted(set(L["game"].tolist())) == [0, 1]
    for g in (0, 1):                      # 2 players: each seat's final margin is the other's, negated
        mine = L["game"] == g
        o = [set(L["outcome"][mine & (L["player"] == q)].tolist()) for q in (0, 1)]
        assert len(o[0]) == len(o[1]) == 1 and o[0].pop() == pytest.approx(-o[1].pop())
    assert np.all(L["deep"][L["done"]] == L["leaf"][L["done"]])
    g = int(L["group"][n // 2])
    sel = L["group"] == g
    ply, p = int(L["ply"][sel][0]), int(L["player"][sel][0])
    from caledonia_env.tournament import TournamentSpec
    from caledonia_env.tournament.spec import game_seeds
    spec = TournamentSpec(players=(AGENT, AGENT), games=1, seed=11,
                          config=GameConfig(num_players=2))
    game = Game(spec.game_config(game_seeds(11, 0, 2)[0], 0))
    game.apply_sequence(L["hist"][:ply].tolist())
    assert game.current_player == p
    k = int(sel.sum())
    out, deep = np.empty(k), np.empty(k)
    feats, done = np.empty((k, av.N_FEATURES)), np.zeros(k, np.bool_)
    s, T = game.state, game.tables
    av.recorded_rollout_margins(s, T, W2, p, L["action"][sel], L["seed"][sel], 1,
                                np.empty_like(s), out, automa_switch(T), W2, feats, done, deep)
    assert np.allclose(out, L["leaf"][sel], atol=1e-3) and np.allclose(deep, L["deep"][sel])
    assert np.allclose(feats, L["x"][sel], atol=1e-6)


def test_labels_resume_only_the_same_labelling(labels):
    same = fv.search_labels(2, 2, 11, AGENT, W2, path=labels)      # nothing left to play
    assert same["meta"]["games"] == 2
    with pytest.raises(ValueError, match="another labelling.*seed"):
        fv.search_labels(2, 2, 12, AGENT, W2, path=labels)


def _hand_groups():
    # two groups: candidates 0-2 (targets 3, 1, 2) and 3-4 (targets 5, 5)
    return {"group_start": np.array([0, 3, 5]),
            "cand_deep": np.array([3.0, 1.0, 2.0, 5.0, 5.0])}


def test_ranking_quality_on_a_hand_example():
    g = _hand_groups()
    right = fv.ranking_quality(g, np.array([9.0, 0.0, 1.0, 0.0, 1.0]))
    assert right == {"groups": 2, "kendall": 1.0, "top1": 1.0, "regret": 0.0}
    wrong = fv.ranking_quality(g, np.array([0.0, 9.0, 1.0, 0.0, 0.0]))
    # group 0: pairs (0,1) (0,2) (1,2) all discordant; group 1: no pair of distinct targets
    assert wrong["kendall"] == -1.0 and wrong["top1"] == 0.5
    assert wrong["regret"] == pytest.approx((3.0 - 1.0) / 2)
    half = fv.ranking_quality(g, np.array([1.0, 1.0, 0.0, 0.0, 0.0]))   # a tie on top
    assert half["top1"] == pytest.approx((0.5 + 1.0) / 2)
    assert half["kendall"] == 0.0         # (0,1) tied in scores, (0,2) right, (1,2) wrong
    third = fv.ranking_quality(g, np.array([2.0, 1.0, 0.0, 0.0, 0.0]))
    assert third["kendall"] == pytest.approx(1 / 3) and third["top1"] == 1.0


def _synthetic(groups=400, k=4, seed=0):
    rng = np.random.default_rng(seed)
    n = groups * k * 2
    x = np.zeros((n, av.N_FEATURES), np.float32)
    x[:, :8] = rng.normal(size=(n, 8))         # the others constant
    deep = (10 * x[:, 0] + 3 * rng.normal(size=n)).astype(np.float32)
    group = np.repeat(np.arange(groups), k * 2)
    action = np.tile(np.repeat(np.arange(k), 2), groups)
    zeros = np.zeros(n, np.int64)
    return {"x": x, "done": np.zeros(n, bool), "leaf": np.zeros(n, np.float32), "deep": deep,
            "group": group, "action": action, "seed": zeros, "game": group // 40,
            "ply": zeros, "player": zeros, "round": zeros, "outcome": deep}


def test_the_listwise_loss_falls_and_learns_the_siblings_order():
    L = _synthetic()
    train, test = fv.sibling_groups(L, range(8)), fv.sibling_groups(L, [8, 9])
    assert len(train["group_start"]) - 1 == 320 and train["cand_count"].tolist() == [2] * 1280
    losses = []
    arrays = fv.fit_listwise(L, train, hidden=16, epochs=8, batch=64, lr=3e-3, tau=4.0,
                             log=lambda e, n, lw, mse: losses.append(lw))
    assert losses[-1] < losses[0] - 0.05
    pred = fv.leaf_predictions(arrays, L, test)
    assert fv.ranking_quality(test, fv.candidate_scores(test, pred))["kendall"] > 0.6
    report = fv.listwise_report(L, test, {"net": arrays})
    assert [r["what"] for r in report] == ["hand-written margin", "net"]
    assert report[1]["kendall"] > report[0]["kendall"]


def test_an_initial_value_is_taken_over_exactly():
    L = _synthetic(groups=20)
    g = fv.sibling_groups(L)
    init = av.load_value(2).arrays
    arrays = fv.fit_listwise(L, g, epochs=1, lr=0.0, weight_decay=0.0, init=init)
    x = L["x"][:50]
    assert np.allclose(fv.predict(arrays, x), fv.predict(init, x), atol=1e-3)


def test_fit_value_listwise_command(labels, tmp_path, capsys):
    assert main(["fit-value", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--loss" in text and "ListNet" in text and "--labels" in text
    out = str(tmp_path / "lw.npz")
    assert main(["fit-value", "--loss", "listwise", "--labels", labels, "--games", "2",
                 "--seed", "11", "--label-agent", AGENT, "--epochs", "2", "--out", out]) == 0
    text = capsys.readouterr().out
    assert "held-out sibling ranking" in text and "hand-written margin" in text
    net = av.load_value(out)
    assert net.meta["loss"] == "listwise" and net.meta["label_games"] == 2
    assert "--loss listwise" in net.meta["command"]
    assert main(["fit-value", "--loss", "listwise", "--out", out]) == 2
    assert "--labels" in capsys.readouterr().err
