"""Expert iteration (train/expert.py, ``caledonia expert``): self-play data from puct, the
policy fitted to the visit counts, the value head held, a checkpoint both agents play."""
import json

import numpy as np
import pytest
from invariants import play_checked
from small_nets import save_small

from caledonia_env import Game, GameConfig, agents

torch = pytest.importorskip("torch", reason="expert iteration needs the train extra (torch)")

from caledonia_env.agents import checkpoint as ck  # noqa: E402
from caledonia_env.cli import main  # noqa: E402
from caledonia_env.engine.actions import N_ACTIONS  # noqa: E402
from caledonia_env.train import expert  # noqa: E402


def test_sb3_state_is_the_inverse_of_actor_critic_state():
    net = ck.build_actor_critic(ck.Arch(16, (8,), (8,)), *ck.spaces())
    sd = net.state_dict()
    stored = ck.sb3_state(sd)
    assert set(stored) != set(sd) and ck.actor_critic_state(stored).keys() == sd.keys()


def test_self_play_records_the_root_visits_of_every_searched_decision(tmp_path):
    net = save_small(tmp_path / "net.zip", 3, seed=1)
    data = expert.collect(net, num_players=3, sims=4, games=2, seed=5, quiet=True)
    n = len(data["lens"])
    assert n > 50 and data["obs"].shape == (n, data["obs"].shape[1])
    assert data["obs"].dtype == np.float16 and len(data["game"]) == n
    assert set(np.unique(data["game"])) == {0, 1}
    offs = np.concatenate([[0], np.cumsum(data["lens"])])
    for i in range(n):
        ids = data["legal"][offs[i]:offs[i + 1]]
        visits = data["visits"][offs[i]:offs[i + 1]]
        assert len(ids) >= 2 and ids.max() < N_ACTIONS and visits.sum() == 4
    again = expert.collect(net, num_players=3, sims=4, games=1, seed=5, workers=2, quiet=True)
    k = int(data["lens"][data["game"] == 0].size)
    assert np.array_equal(again["obs"], data["obs"][:k])        # game g is the same anywhere


def test_flat_search_expert_against_another_agent_records_its_choices(tmp_path):
    """--expert nmctsg --vs greedy: only the expert's seat (g % players) is recorded, the
    target is the action the search chose (one-hot), and the data join with other files."""
    net = save_small(tmp_path / "net.zip", 2, seed=4)
    game = expert.self_play_game(net, 2, 4, 9, 1, expert="nmctsg", vs="greedy")
    assert game["obs"] and 0 <= game["won"] <= 1
    for ids, target in zip(game["legal"], game["visits"]):
        assert len(ids) >= 2 and sorted(target) == [0] * (len(ids) - 1) + [1]
    # the recorded observations are seat 1's (g = 1): replaying the seeded game with the
    # same agents reaches each of them at a searched decision of player 1
    game_seed = 9 * 1_000_003 + 1
    g = Game(GameConfig(num_players=2, seed=game_seed))
    bots = [agents.make("greedy", seed=game_seed * 8),
            expert.make_expert("nmctsg", net, 4, game_seed * 8 + 1)]
    seen = []
    while not g.is_terminal:
        p = g.current_player
        a = bots[p].act(g)
        if p == 1 and expert.search_target(bots[p].last_stats):
            seen.append(a)
        g.step(a)
    chosen = [int(ids[np.argmax(t)]) for ids, t in zip(game["legal"], game["visits"])]
    assert chosen == seen
    one = expert.merge([game], 2, 4, "nmctsg", "greedy")
    assert str(one["expert"]) == "nmctsg" and str(one["vs"]) == "greedy"
    expert.save_data(one, tmp_path / "a.npz")
    other = expert.merge([expert.self_play_game(net, 2, 4, 9, 0, expert="nmcts", vs="greedy")],
                         2, 4, "nmcts", "greedy")
    expert.save_data(other, tmp_path / "b.npz")
    both = expert.load_data(tmp_path / "a.npz", tmp_path / "b.npz")
    assert len(both["lens"]) == len(one["lens"]) + len(other["lens"])
    assert len(np.unique(both["game"])) == 2                # game numbers kept apart
    assert len(both["legal"]) == both["lens"].sum() and len(both["won"]) == 2
    older = {k: v for k, v in one.items() if k != "won"}       # a file of an earlier version
    expert.save_data(older, tmp_path / "c.npz")
    assert "won" not in expert.load_data(tmp_path / "b.npz", tmp_path / "c.npz")
    with pytest.raises(ValueError, match="unknown expert"):
        expert.collect(net, games=1, expert="mcts")
    with pytest.raises(ValueError, match="unknown agent"):
        expert.collect(net, games=1, vs="nobody")
    with pytest.raises(ValueError, match="engine seat"):
        expert.collect(net, games=1, vs="automa:3")


def test_dagger_the_policy_moves_and_the_search_labels_its_positions(tmp_path):
    """--dagger: the policy of the checkpoint plays the recorded seat, so the game is the
    policy's game against greedy; every recorded position is one the policy reached, with
    the search's choice as target and each candidate's mean margin (NaN off the candidates)."""
    net = save_small(tmp_path / "net.zip", 2, seed=6)
    game = expert.self_play_game(net, 2, 4, 11, 0, expert="nmctsg", vs="greedy", horizon=1,
                                 dagger=True)
    assert game["obs"] and len(game["margins"]) == len(game["obs"])
    game_seed = 11 * 1_000_003
    g = Game(GameConfig(num_players=2, seed=game_seed))
    policy, search = agents.make(f"ppo:{net}"), expert.make_expert("nmctsg", net, 4,
                                                                    game_seed * 8, horizon=1)
    bots = [policy, agents.make("greedy", seed=game_seed * 8 + 1)]
    labels, moves = [], []
    while not g.is_terminal:
        p = g.current_player
        if p == 0:
            label = search.act(g)
            if expert.search_target(search.last_stats):
                labels.append(label)
                moves.append(policy.act(g))
        g.step(bots[p].act(g))
    assert g.winners() and 0 <= game["won"] <= 1
    chosen = [int(ids[np.argmax(t)]) for ids, t in zip(game["legal"], game["visits"])]
    assert chosen == labels
    assert any(a != b for a, b in zip(labels, moves))     # the labels are not the moves
    for ids, t, m in zip(game["legal"], game["visits"], game["margins"]):
        cands = ~np.isnan(m)
        assert 2 <= cands.sum() <= 7 and cands[np.argmax(t)]
    data = expert.merge([game], 2, 4, "nmctsg", "greedy", horizon=1, dagger=True)
    assert bool(data["dagger"]) and int(data["horizon"]) == 1
    assert len(data["margins"]) == data["lens"].sum()
    with pytest.raises(ValueError, match="horizon"):
        expert.collect(net, games=1, expert="puct", horizon=2)
    # a search on another network labels the same positions (the policy still moves)
    other = expert.self_play_game(net, 2, 4, 11, 0, expert="nmctsg", vs="greedy", horizon=1,
                                  dagger=True, search_net=save_small(tmp_path / "o.zip", seed=8))
    assert all(np.array_equal(a, b) for a, b in zip(other["obs"], game["obs"]))
    assert len(other["obs"]) == len(game["obs"])


def test_anchor_holds_the_policy_nearer_its_own_distribution(tmp_path):
    """fit(anchor=w): the target is (1 - w) of the search's preference and w of the source
    policy's distribution, so a larger anchor leaves the policy nearer the source."""
    net = save_small(tmp_path / "net.zip", 2, seed=7)
    data = expert.merge([expert.self_play_game(net, 2, 4, 3, g, expert="nmctsg", vs="greedy")
                         for g in range(2)], 2, 4, "nmctsg", "greedy")
    offs = np.concatenate([[0], np.cumsum(data["lens"])])
    x, mask, _ = expert._batch(data, offs, np.arange(len(data["lens"])), 1.0)

    def kl_from_source(path):
        with torch.no_grad():
            lp = [torch.log_softmax(ck.load_actor_critic(ck.load(q))(x)[0].masked_fill(
                ~mask, -1e9), 1) for q in (net, path)]
        return float((lp[0].exp() * (lp[0] - lp[1])).sum(1).mean())

    drift = {}
    for w in (0.0, 0.8):
        out = str(tmp_path / f"a{w}.zip")
        report = expert.fit(net, data, out, epochs=3, lr=3e-3, batch=16, anchor=w, quiet=True)
        assert ck.load(out).meta["expert_iteration"]["anchor"] == w
        drift[w] = kl_from_source(out)
    assert drift[0.8] < drift[0.0] / 2
    assert report["after"]["argmax_agreement"] >= 0
    with pytest.raises(ValueError, match="anchor"):
        expert.fit(net, data, str(tmp_path / "bad.zip"), anchor=1.0)


def test_margin_targets_are_the_softmax_of_the_candidates_margins(tmp_path):
    net = save_small(tmp_path / "net.zip", 2, seed=5)
    data = expert.merge([expert.self_play_game(net, 2, 6, 4, 0, expert="nmctsg", vs="greedy")],
                        2, 6, "nmctsg", "greedy")
    offs = np.concatenate([[0], np.cumsum(data["lens"])])
    idx = np.arange(len(data["lens"]))
    _, mask, target = expert._batch(data, offs, idx, 1.0, margin_temp=2.0)
    for r, i in enumerate(idx):
        ids, m = data["legal"][offs[i]:offs[i + 1]], data["margins"][offs[i]:offs[i + 1]]
        t = target[r, ids].numpy()
        assert np.isclose(t.sum(), 1) and np.all(t[np.isnan(m)] == 0)
        cand = ~np.isnan(m)
        want = np.exp((m[cand] - m[cand].max()) / 2.0)
        assert np.allclose(t[cand], want / want.sum(), atol=1e-6)
    _, _, cold = expert._batch(data, offs, idx, 1.0, margin_temp=0.01)
    assert np.array_equal(cold.argmax(1), target.argmax(1))       # the best mean margin
    out = str(tmp_path / "m.zip")
    expert.fit(net, data, out, epochs=1, margin_temp=2.0, quiet=True)
    assert ck.load(out).meta["expert_iteration"]["margin_temp"] == 2.0
    older = {k: v for k, v in data.items() if k != "margins"}
    with pytest.raises(ValueError, match="margins"):
        expert.fit(net, older, out, margin_temp=2.0)
    puct = expert.collect(net, num_players=2, sims=2, games=1, seed=1, quiet=True)
    assert np.isnan(puct["margins"]).all()              # puct has no rollout margins
    with pytest.raises(ValueError, match="margins"):
        expert.fit(net, puct, out, margin_temp=2.0)


def test_fit_moves_the_policy_toward_the_visits_and_holds_the_value(tmp_path):
    net = save_small(tmp_path / "net.zip", 2, seed=2, train={"reward": "score_diff",
                                                               "shaping": 0.5})
    data = expert.collect(net, num_players=2, sims=8, games=3, seed=1, quiet=True)
    expert.save_data(data, tmp_path / "data.npz")
    data = expert.load_data(tmp_path / "data.npz")
    out = tmp_path / "expert.zip"
    report = expert.fit(net, data, str(out), epochs=4, lr=3e-3, tau=0.5, batch=16, quiet=True)
    assert report["epochs"][-1] < report["epochs"][0]
    offs = np.concatenate([[0], np.cumsum(data["lens"])])
    x, mask, target = expert._batch(data, offs, np.arange(len(data["lens"])), 0.5)

    def cross_entropy(path):                    # over all positions, most of them trained on
        logits, _ = ck.load_actor_critic(ck.load(path))(x)
        return -(target * torch.log_softmax(logits.masked_fill(~mask, -1e9), 1)).sum(1).mean()

    with torch.no_grad():
        assert cross_entropy(out) < cross_entropy(net) - 0.05
    # the value head is anchored to the starting network's values: without the anchor
    # (value_weight 0) the same fit moves them further
    free = expert.fit(net, data, str(tmp_path / "free.zip"), epochs=4, lr=3e-3, tau=0.5,
                      batch=16, value_weight=0.0, quiet=True)
    assert report["before"]["value_drift"] == 0
    assert report["after"]["value_drift"] < min(0.1, free["after"]["value_drift"])
    meta = ck.load(out).meta
    assert meta["train"]["shaping"] == 0.5                  # puct still adds the potential back
    assert meta["expert_iteration"]["tau"] == 0.5 and meta["expert_iteration"]["positions"] > 0
    for bot in (agents.make(f"ppo:{out}", seed=0), agents.make(f"puct:4:{out}", seed=0)):
        play_checked(Game(GameConfig(num_players=2, seed=3)), [bot, agents.make("greedy")],
                     limit=40)
    # a training run starts from it (--init): SB3's aliases of the shared extractor are filled
    from caledonia_env.train.trainer import TrainConfig, Trainer
    run = Trainer(TrainConfig(players=2, out=str(tmp_path / "ft"), n_envs=2, n_steps=64,
                              batch_size=64, net="16:8", fast_fraction=0.0, init=str(out)),
                  progress=False, log=lambda m: None)
    run.setup()
    own, saved = run.model.policy.state_dict(), ck.load(out).state_dict
    for k in ("pi_features_extractor.net.0.weight", "action_net.weight", "value_net.weight"):
        assert torch.equal(own[k], saved[k.removeprefix("pi_")]), k


def test_bad_inputs_raise_clear_errors(tmp_path):
    net = save_small(tmp_path / "net.zip")
    with pytest.raises(ValueError, match="games or minutes"):
        expert.collect(net)
    with pytest.raises(ValueError, match="players"):
        expert.collect(net, num_players=5, games=1)
    with pytest.raises(ck.CheckpointError, match="no value head"):
        expert.collect(save_small(tmp_path / "actor.zip", value_head=False), games=1)
    np.savez(tmp_path / "bad.npz", obs=np.zeros(3))
    with pytest.raises(ValueError, match="not expert-iteration data"):
        expert.load_data(tmp_path / "bad.npz")


def test_expert_command_writes_data_checkpoint_and_report(tmp_path, capsys):
    net = save_small(tmp_path / "net.zip")
    out = tmp_path / "run"
    assert main(["expert", "--from", net, "--games", "2", "--sims", "3", "--epochs", "1",
                 "--out", str(out), "--quiet"]) == 0
    assert "checkpoint written to" in capsys.readouterr().out
    report = json.loads((out / "expert.json").read_text())
    assert report["positions"] > 0 and report["source"] == net
    assert report["args"]["sims"] == 3 and report["args"]["out"] == str(out)
    assert "compile_progress" not in report["args"] and "func" not in report["args"]
    again = tmp_path / "again"
    assert main(["expert", "--from", net, "--data", str(out / "data.npz"), "--tau", "1",
                 "--epochs", "1", "--out", str(again), "--quiet"]) == 0
    assert not (again / "data.npz").exists() and (again / "expert.zip").exists()
    flat = tmp_path / "flat"
    assert main(["expert", "--from", net, "--expert", "nmctsg", "--vs", "greedy", "--games",
                 "2", "--sims", "2", "--epochs", "1", "--out", str(flat), "--quiet"]) == 0
    assert "the expert won" in capsys.readouterr().out
    meta = ck.load(flat / "expert.zip").meta["expert_iteration"]
    assert meta["expert"] == "nmctsg" and meta["vs"] == "greedy" and not meta["dagger"]
    dag = tmp_path / "dag"
    assert main(["expert", "--from", net, "--expert", "nmctsg", "--horizon", "1", "--dagger",
                 "--vs", "greedy", "--games", "2", "--sims", "2", "--epochs", "1",
                 "--anchor", "0.5", "--out", str(dag), "--quiet"]) == 0
    assert "the policy (labelled by the expert) won" in capsys.readouterr().out
    meta = ck.load(dag / "expert.zip").meta["expert_iteration"]
    assert meta["dagger"] and meta["horizon"] == 1 and meta["anchor"] == 0.5
    assert meta["search_net"] is None
    other = save_small(tmp_path / "searcher.zip", seed=9)
    fixed = tmp_path / "fixed"
    assert main(["expert", "--from", net, "--search-net", other, "--expert", "nmctsg",
                 "--dagger", "--vs", "greedy", "--games", "1", "--sims", "2", "--epochs", "1",
                 "--out", str(fixed), "--quiet"]) == 0
    meta = ck.load(fixed / "expert.zip").meta["expert_iteration"]
    assert meta["search_net"] == "searcher.zip" and meta["from"] == "net.zip"
    joined = tmp_path / "joined"
    assert main(["expert", "--from", net, "--data", str(out / "data.npz"), str(flat / "data.npz"),
                 "--epochs", "1", "--out", str(joined), "--quiet"]) == 0
    assert json.loads((joined / "expert.json").read_text())["positions"] == \
        report["positions"] + json.loads((flat / "expert.json").read_text())["positions"]
    assert main(["expert", "--from", str(tmp_path / "missing.zip"), "--games", "1",
                 "--out", str(tmp_path / "x")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["expert", "--from", net, "--games", "1", "--minutes", "1",
                 "--out", str(tmp_path / "y")]) == 2
