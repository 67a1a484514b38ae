"""Training and evaluation (train/, agents/ppo.py): checkpoint safety and errors, the
self-play env, evaluation math (Wilson CI, win shares with R-7 ties), league ratings,
a training smoke test with resume, the CLI, and the shipped pretrained policy.

Tests that need torch / sb3-contrib skip without the ``train`` extra.
"""
import csv
import io
import json
import math
import os
import zipfile

import numpy as np
import pytest

from caledonia_env import Game, GameConfig
from caledonia_env.tournament import wilson
from caledonia_env.train import rating
from caledonia_env.agents.checkpoint import Arch


def _needs_train():
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")


# ------------------------------------------------------------ evaluation math
def test_wilson_interval_reference_values():
    # Wilson (1927) score interval, z = 1.96: 90/100 -> [0.8256, 0.9448]
    lo, hi = wilson(90, 100)
    assert lo == pytest.approx(0.82565, abs=1e-4) and hi == pytest.approx(0.94477, abs=1e-4)
    # all wins: upper bound 1, lower bound n / (n + z^2)
    lo, hi = wilson(200, 200)
    assert hi == 1.0 and lo == pytest.approx(200 / (200 + 1.96 ** 2), abs=1e-9)
    lo, hi = wilson(0, 50)
    assert lo == 0.0 and hi == pytest.approx(1.96 ** 2 / (50 + 1.96 ** 2), abs=1e-9)
    # symmetric around 1/2, narrower with more games
    a = wilson(50, 100)
    assert a[0] == pytest.approx(1 - a[1])
    assert wilson(500, 1000)[1] - wilson(500, 1000)[0] < a[1] - a[0]


def _rows(results):
    """Rows as play_games makes them: results = [(role-0 win share, role-1 win share)]."""
    rows = []
    for g, (w0, w1) in enumerate(results):
        for role, w in ((0, w0), (1, w1)):
            rows.append({"game": g, "player": role, "role": role, "agent": f"a{role}",
                         "win": w, "total": 100 + 10 * role, "rank": 1 if w > 0 else 2})
    return rows


def test_R_7_summarize_counts_tied_wins_as_half():
    from caledonia_env.train.batched_play import summarize
    # 6 wins, 2 ties (shared win: 1/2 each, R-7 tiebreak left them equal), 2 losses
    rows = _rows([(1.0, 0.0)] * 6 + [(0.5, 0.5)] * 2 + [(0.0, 1.0)] * 2)
    st = summarize(rows, role=0)
    assert st["games"] == 10 and st["wins"] == 7.0 and st["win_rate"] == 0.7
    assert (st["ci_low"], st["ci_high"]) == pytest.approx(wilson(7.0, 10))
    assert st["ci_low"] < 0.7 < st["ci_high"]
    assert st["vp"] == 100 and st["opp_vp"] == 110
    assert summarize(rows, role=1)["wins"] == 3.0


# ------------------------------------------------------------ league rating
def test_bradley_terry_recovers_a_known_win_probability():
    # A beats B 3 times out of 4: Elo difference 400 log10(3) = 190.8 (weak prior shrinks a bit)
    games = [[("A", 1), ("B", 2)]] * 300 + [[("A", 2), ("B", 1)]] * 100
    rows = rating.ratings(games, anchor="B")
    by = {r["agent"]: r for r in rows}
    assert by["B"]["elo"] == 0.0 and by["B"]["ci"] == 0.0
    assert by["A"]["elo"] == pytest.approx(400 * math.log10(3), rel=0.02)
    assert 0 < by["A"]["ci"] < 100
    assert by["A"]["score"] == 0.75 and by["A"]["games"] == 400
    # more games, narrower interval
    more = rating.ratings(games * 4, anchor="B")
    assert {r["agent"]: r for r in more}["A"]["ci"] < by["A"]["ci"]


def test_rating_is_finite_for_an_unbeaten_agent_and_orders_a_chain():
    games = ([[("greedy", 1), ("random", 2)]] * 50 + [[("ppo", 1), ("random", 2)]] * 45
             + [[("random", 1), ("ppo", 2)]] * 5 + [[("greedy", 1), ("ppo", 2)]] * 40
             + [[("ppo", 1), ("greedy", 2)]] * 10)
    rows = rating.ratings(games)          # anchored at random = 0
    assert [r["agent"] for r in rows] == ["greedy", "ppo", "random"]
    assert all(math.isfinite(r["elo"]) and math.isfinite(r["ci"]) for r in rows)
    assert rows[-1]["elo"] == 0.0
    text = rating.format_ratings(rows)
    assert "greedy" in text and "random = 0" in text


def test_pairwise_ties_and_multiplayer_games():
    names, score, count = rating.pairwise([[("a", 1), ("b", 1), ("c", 3)]])
    i = {n: k for k, n in enumerate(names)}
    assert score[i["a"], i["b"]] == 0.5 and score[i["a"], i["c"]] == 1.0
    assert score[i["c"], i["a"]] == 0.0 and count.sum() == 6


def test_league_file_roundtrip(tmp_path):
    path = str(tmp_path / "league.csv")
    rows = _rows([(1.0, 0.0), (0.0, 1.0), (1.0, 0.0)])
    rating.append_league(path, "m1", rows, {"a0": "abc123"})
    rating.append_league(path, "m2", rows, {})
    games = rating.read_league(path)
    assert len(games) == 6
    assert {a for g in games for a, _ in g} == {"a0@abc123", "a0", "a1"}


# ------------------------------------------------------------ opponent mix
def test_opponent_mix_parsing_and_errors():
    _needs_train()
    from caledonia_env.train.selfplay import OpponentMix
    mix = OpponentMix("self=2,greedy=1,random")
    assert mix.names == ["self", "greedy", "random"]
    assert mix.probs == pytest.approx([0.5, 0.25, 0.25])
    assert mix.uses_pool()
    rng = np.random.default_rng(0)
    draws = [mix.sample(rng) for _ in range(4000)]
    assert draws.count("self") / 4000 == pytest.approx(0.5, abs=0.03)
    with pytest.raises(ValueError, match="unknown agent"):
        OpponentMix("self=1,alphago=1")
    with pytest.raises(ValueError, match="not a number"):
        OpponentMix("greedy=lots")
    with pytest.raises(ValueError, match=">= 0"):
        OpponentMix("greedy=-1")
    with pytest.raises(ValueError, match="empty"):
        OpponentMix(" , ")


def test_arch_parse():
    a = Arch.parse("128:64,32", activation="tanh")
    assert (a.features_dim, a.pi, a.vf, a.activation) == (128, (64, 32), (64, 32), "tanh")
    with pytest.raises(ValueError, match="--net"):
        Arch.parse("big")
    with pytest.raises(ValueError, match="activation"):
        Arch(activation="gelu")


# ------------------------------------------------------------ checkpoints
@pytest.fixture(scope="module")
def small_ckpt(tmp_path_factory):
    """A checkpoint of an untrained small network (fast to build)."""
    _needs_train()
    from caledonia_env.agents import checkpoint as ck
    arch = Arch(16, (8,), (8,))
    obs, n = ck.spaces()
    actor = ck.build_actor(arch, obs, n)
    sd = {"features_extractor.net.0." + k[len("features.0."):]: v
          for k, v in actor.state_dict().items() if k.startswith("features.")}
    sd.update({"mlp_extractor.policy_net." + k[len("policy_net."):]: v
               for k, v in actor.state_dict().items() if k.startswith("policy_net.")})
    sd.update({k: v for k, v in actor.state_dict().items() if k.startswith("action_net.")})
    path = tmp_path_factory.mktemp("ck") / "small.zip"
    ck.save(path, sd, ck.make_meta(arch, 2, 0))
    return str(path)


def test_checkpoint_roundtrip_and_actor(small_ckpt):
    from caledonia_env.agents import checkpoint as ck
    c = ck.load(small_ckpt)
    assert (c.meta["obs_size"], c.meta["n_actions"]) == ck.spaces()
    assert c.arch == Arch(16, (8,), (8,)) and len(c.sha256) == 64
    with zipfile.ZipFile(small_ckpt) as zf:
        assert set(zf.namelist()) == {ck.META_NAME, ck.WEIGHTS_NAME}
    actor = ck.load_actor(c)
    assert not actor.training


def test_missing_checkpoint_says_so_and_lists_zips(tmp_path, small_ckpt):
    _needs_train()
    from caledonia_env.agents import checkpoint as ck
    (tmp_path / "best.zip").write_bytes(open(small_ckpt, "rb").read())
    with pytest.raises(ck.CheckpointError, match="does not exist.*best.zip"):
        ck.load(tmp_path / "bset.zip")
    with pytest.raises(ck.CheckpointError, match="is a folder"):
        ck.load(tmp_path)
    (tmp_path / "notes.zip").write_text("hello")
    with pytest.raises(ck.CheckpointError, match="not a zip"):
        ck.load(tmp_path / "notes.zip")


def _rewrite(src, dst, meta_fn=None, weights=None):
    from caledonia_env.agents import checkpoint as ck
    with zipfile.ZipFile(src) as zf:
        meta = json.loads(zf.read(ck.META_NAME))
        w = zf.read(ck.WEIGHTS_NAME)
    if meta_fn:
        meta_fn(meta)
    with zipfile.ZipFile(dst, "w") as zf:
        zf.writestr(ck.META_NAME, json.dumps(meta))
        zf.writestr(ck.WEIGHTS_NAME, weights if weights is not None else w)
    return str(dst)


def test_mismatched_spaces_fail_clearly(tmp_path, small_ckpt):
    from caledonia_env.agents import checkpoint as ck
    bad = _rewrite(small_ckpt, tmp_path / "a.zip", lambda m: m.update(n_actions=m["n_actions"] - 215))
    with pytest.raises(ck.CheckpointError, match="actions.*N_ACTIONS.*retrain"):
        ck.load(bad)
    bad = _rewrite(small_ckpt, tmp_path / "o.zip", lambda m: m.update(obs_size=4000))
    with pytest.raises(ck.CheckpointError, match="observation size 4000"):
        ck.load(bad)
    bad = _rewrite(small_ckpt, tmp_path / "f.zip", lambda m: m.update(obs_fingerprint="0" * 16))
    with pytest.raises(ck.CheckpointError, match="layout changed"):
        ck.load(bad)
    bad = _rewrite(small_ckpt, tmp_path / "w.zip",
                   lambda m: m.update(arch=dict(m["arch"], features_dim=32)))
    with pytest.raises(ck.CheckpointError, match="do not match the architecture"):
        ck.load(bad)                    # checked before any network is built


def test_sb3_model_zip_is_refused_with_an_explanation(tmp_path):
    _needs_train()
    from caledonia_env.agents import checkpoint as ck
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", "{}")
        zf.writestr("policy.pth", b"")
    with pytest.raises(ck.CheckpointError, match="cloudpickle"):
        ck.load(path)


PWNED = []


def _pwn():
    PWNED.append(True)
    return {}


class _Evil:
    def __reduce__(self):
        return (_pwn, ())


def test_loading_never_runs_code_from_the_file(tmp_path, small_ckpt):
    import torch
    from caledonia_env.agents import checkpoint as ck
    buf = io.BytesIO()
    torch.save({"x": _Evil()}, buf)
    bad = _rewrite(small_ckpt, tmp_path / "evil.zip", weights=buf.getvalue())
    with pytest.raises(ck.CheckpointError, match="weights-only"):
        ck.load(bad)
    assert PWNED == []


# ------------------------------------------------------------ policy players
def test_policy_player_plays_legal_moves_and_respects_the_mask(small_ckpt):
    from caledonia_env.agents.policy import PolicyPlayer
    for det in (True, False):
        pl = PolicyPlayer.from_checkpoint(small_ckpt, deterministic=det, seed=1)
        game = Game(GameConfig(num_players=2, seed=5))
        while not game.is_terminal:
            a = pl.act(game)
            assert game.legal_mask()[a]
            game.step(a)
    obs = np.zeros((2, pl._obs.shape[1]), np.float32)
    masks = np.zeros((2, pl.meta["n_actions"]), bool)
    masks[0, 7] = masks[1, 3] = True
    assert list(pl.act_batch(obs, masks)) == [7, 3]
    masks[1, 3] = False
    with pytest.raises(ValueError, match="without legal actions"):
        pl.act_batch(obs, masks)


def test_play_games_rotates_seats_and_matches_tournament_rows(small_ckpt):
    from caledonia_env.tournament import CSV_FIELDS
    from caledonia_env.train.batched_play import play_games
    rows = play_games([f"ppo:{small_ckpt}", "random"], 4, seed=3, batch=3)
    assert len(rows) == 8 and set(CSV_FIELDS) <= set(rows[0])
    roles = {(r["game"], r["player"]): r["role"] for r in rows}
    assert [roles[(g, 0)] for g in range(4)] == [0, 1, 0, 1]
    for g in range(4):
        assert sum(r["win"] for r in rows if r["game"] == g) == pytest.approx(1.0)
    # batch size does not change the games
    again = play_games([f"ppo:{small_ckpt}", "random"], 4, seed=3, batch=1)
    assert [r["total"] for r in again] == [r["total"] for r in rows]


def test_play_games_game_ids_give_the_full_runs_rows_even_when_sampling(small_ckpt):
    """A chunk of game numbers plays exactly those games of the full run (what a Ray task
    of ``caledonia evaluate --backend ray`` does), also with a sampling policy: each game
    draws from its own stream, seeded from (seed, g)."""
    from caledonia_env.train.batched_play import load_policy, play_games

    def untimed(rows):
        return [{k: v for k, v in r.items() if k != "think_seconds"} for r in rows]
    for det in (True, False):
        full = play_games([f"ppo:{small_ckpt}", "random"], 5, seed=4, deterministic=det)
        part = play_games([f"ppo:{small_ckpt}", "random"], None, seed=4, deterministic=det,
                          game_ids=[3, 1], batch=2)
        assert untimed(part) == untimed([r for r in full if r["game"] in (1, 3)])
    with pytest.raises(ValueError, match="distinct"):
        play_games(["random", "random"], None, game_ids=[1, 1])
    with pytest.raises(ValueError, match="not both"):
        play_games(["random", "random"], 2, game_ids=[1])
    # loaded once per process (path + content hash); a wrong hash is refused
    assert load_policy(small_ckpt) is load_policy(small_ckpt)
    with pytest.raises(ValueError, match="sha256"):
        load_policy(small_ckpt, sha256="0" * 64)


def test_ppo_agent_registry_kind(small_ckpt):
    _needs_train()
    from caledonia_env import agents
    import caledonia_env.agents.ppo  # noqa: F401
    bot = agents.make(f"ppo:{small_ckpt}", seed=2)
    assert bot.name == f"ppo:{small_ckpt}" and "ppo" not in agents.available()
    game = Game(GameConfig(num_players=2, seed=1))
    a = bot.act(game)
    assert game.legal_mask()[a]
    with pytest.raises(ValueError, match="does not exist"):
        agents.make("ppo:no/such/file.zip")
    with pytest.raises(ValueError, match="needs a parameter"):
        agents.make("ppo")


# ------------------------------------------------------------ self-play env
def test_selfplay_env_draws_opponents_and_finishes_games(small_ckpt):
    from caledonia_env.agents import checkpoint as ck
    from caledonia_env.train.selfplay import OpponentMix, SelfPlayVecEnv, SnapshotPool
    c = ck.load(small_ckpt)
    pool = SnapshotPool(c.arch, size=2, seed=0)
    env = SelfPlayVecEnv(6, 2, OpponentMix(f"snapshot=1,random=1,ppo:{small_ckpt}=1"), pool,
                         reward="win", seed=4)
    obs = env.reset()
    assert obs.shape == (6, c.meta["obs_size"]) and env.action_masks().any(axis=1).all()
    state = ck.actor_state(c.state_dict)
    for k in range(3):
        pool.add(state, f"s{k}")
    assert [p.name for p in pool.snapshots] == ["s1", "s2"]
    rng = np.random.default_rng(0)
    seen, finished = set(), 0
    for _ in range(400):
        m = env.action_masks()
        for i in range(6):
            assert env.games[i].current_player == env.seats[i]
        _, r, d, infos = env.step(np.array([rng.choice(np.flatnonzero(x)) for x in m]))
        for i in np.flatnonzero(d):
            finished += 1
            assert r[i] in (-1.0, 0.0, 1.0)
            assert infos[i]["win"] == {1.0: 1.0, 0.0: 0.5, -1.0: 0.0}[float(r[i])]
            assert "terminal_observation" in infos[i]
            seen.update(infos[i]["opponents"])
        assert not r[~d].any()
    assert finished > 0 and len(seen) >= 2
    with pytest.raises(Exception, match="not legal"):
        bad = np.array([int(np.flatnonzero(~x)[0]) for x in env.action_masks()])
        env.step(bad)


def test_projected_score_diff_is_the_final_score_diff_and_leaves_the_state_alone():
    """R-7: the shaping potential scores a copy; at the end it equals the score_diff reward."""
    from caledonia_env import agents
    from caledonia_env.envs.rewards import R_SCORE_DIFF, projected_score_diff, terminal_rewards
    game = Game(GameConfig(num_players=3, seed=5))
    bot = agents.make("random", seed=2)
    out, ref = np.zeros(4), np.zeros(4)
    scratch = np.empty_like(game.state)
    while not game.is_terminal:
        before = game.state.copy()
        projected_score_diff(game.state, game.tables, scratch, out)
        assert np.array_equal(before, game.state)
        assert abs(out[:3].sum()) < 1e-9 and not out[3]
        game.step(bot.act(game))
    projected_score_diff(game.state, game.tables, scratch, out)
    terminal_rewards(game.state, game.tables, R_SCORE_DIFF, ref)
    assert np.allclose(out, ref) and ref.any()


@pytest.mark.parametrize("players", [2, 4])
def test_selfplay_shaping_telescopes_to_the_terminal_reward(players):
    """Potential-based shaping (gamma 1): an episode's rewards sum to the terminal reward
    minus W * phi(first observation); without shaping the same games give the bare reward."""
    from caledonia_env.envs.rewards import projected_score_diff
    from caledonia_env.train.selfplay import OpponentMix, SelfPlayVecEnv, SnapshotPool
    w = 0.7
    runs = {}
    for shaping in (0.0, w):
        env = SelfPlayVecEnv(3, players, OpponentMix("random=1,greedy=1"),
                             SnapshotPool(Arch.parse("32:16"), 1, seed=0), seed=11,
                             reward="score_diff", shaping=shaping, gamma=1.0)
        env.reset()
        buf, scratch = np.zeros(4), np.empty_like(env.games[0].state)
        phi0, total, ends, inner = [], np.zeros(3), [], 0
        for i in range(3):
            projected_score_diff(env.games[i].state, env.games[i].tables, scratch, buf)
            phi0.append(buf[env.seats[i]])
        rng = np.random.default_rng(1)
        while len(ends) < 4:
            m = env.action_masks()
            _, r, d, _ = env.step(np.array([rng.choice(np.flatnonzero(x)) for x in m]))
            total += r
            inner += int(np.count_nonzero(r[~d]))
            for i in np.flatnonzero(d):
                ends.append((i, total[i], phi0[i]))
                total[i] = 0.0
                projected_score_diff(env.games[i].state, env.games[i].tables, scratch, buf)
                phi0[i] = buf[env.seats[i]]
        runs[shaping] = (ends, inner)
    bare, shaped = runs[0.0][0], runs[w][0]
    assert runs[0.0][1] == 0 and runs[w][1] > 0          # shaping gives rewards before the end
    assert [e[0] for e in bare] == [e[0] for e in shaped]
    for (i, r_bare, _), (_, r_shaped, phi) in zip(bare, shaped):
        assert r_shaped == pytest.approx(r_bare - w * phi, abs=1e-4)


def test_shaping_needs_the_self_play_phase():
    from caledonia_env.train.trainer import TrainConfig
    with pytest.raises(ValueError, match="--fast-fraction 0"):
        TrainConfig(players=2, shaping=1.0, fast_fraction=0.3).validate()
    with pytest.raises(ValueError, match="--shaping"):
        TrainConfig(players=2, shaping=-1.0, fast_fraction=0).validate()
    TrainConfig(players=2, shaping=1.0, fast_fraction=0).validate()


# ------------------------------------------------------------ training smoke test
def _tiny(out, **kw):
    from caledonia_env.train.trainer import TrainConfig
    base = dict(players=2, timesteps=1024, out=str(out), n_envs=4, n_steps=64, batch_size=128,
                n_epochs=1, net="32:16", fast_fraction=0.5, eval_every=512, eval_games=4,
                checkpoint_every=512, snapshot_every=256, pool_size=2,
                opponents="self=1,snapshot=1,greedy=1,random=1")
    base.update(kw)
    return TrainConfig(**base)


def test_train_smoke_save_reload_play_and_resume(tmp_path):
    _needs_train()
    from caledonia_env import agents
    import caledonia_env.agents.ppo  # noqa: F401
    from caledonia_env.agents import checkpoint as ck
    from caledonia_env.train.trainer import load_config, train
    out = tmp_path / "run"
    logs = []
    train(_tiny(out), progress=False, log=logs.append)
    for f in ("config.json", "eval.csv", "train.csv", "best.zip", "last.zip", "resume.pt",
              "curve.png"):
        assert (out / f).exists(), f
    assert list((out / "tb").iterdir())
    evals = list(csv.DictReader(open(out / "eval.csv")))
    assert {r["opponent"] for r in evals} == {"random", "greedy"}
    assert int(evals[0]["timesteps"]) == 0 and int(evals[-1]["timesteps"]) >= 1024
    phases = {r["phase"] for r in csv.DictReader(open(out / "train.csv"))}
    assert phases == {"fast", "self-play"}
    assert len(list((out / "pool").iterdir())) >= 1
    last = ck.load(out / "last.zip")
    assert last.meta["timesteps"] >= 1024 and last.meta["train"]["players"] == 2
    from caledonia_env.data import load_ruleset
    assert last.meta["ruleset_fingerprint"] == load_ruleset().fingerprint()
    # reload through the registry and play a whole game
    bot = agents.make(f"ppo:{out / 'best.zip'}", seed=0)
    game = Game(GameConfig(num_players=2, seed=9))
    other = agents.make("random", seed=1)
    while not game.is_terminal:
        game.step((bot if game.current_player == 0 else other).act(game))
    assert len(game.scores()) == 2
    # a second start in the same folder is refused; --resume continues to a new total
    with pytest.raises(FileExistsError, match="--resume"):
        train(_tiny(out), progress=False, log=logs.append)
    cfg = load_config(str(out), timesteps=1536)
    assert cfg.fast_steps == 512          # the phase boundary stays where it was
    train(cfg, resume=True, progress=False, log=logs.append)
    assert any("resuming" in x for x in logs)
    assert ck.load(out / "last.zip").meta["timesteps"] >= 1536
    assert int(list(csv.DictReader(open(out / "eval.csv")))[-1]["timesteps"]) >= 1536


def test_train_solo_evaluates_mean_vp_and_rating_bands_r92(tmp_path):
    """`caledonia train --solo`: vector env of solo games, VP reward x 0.01, evaluation = mean
    VP with a CI and the rating bands; the checkpoint plays a solo game through the registry."""
    _needs_train()
    from caledonia_env import agents
    import caledonia_env.agents.ppo  # noqa: F401
    from caledonia_env.agents import checkpoint as ck
    from caledonia_env.cli import main
    out = tmp_path / "solo"
    assert main(["train", "--solo", "--timesteps", "512", "--out", str(out), "--n-envs", "4",
                 "--n-steps", "64", "--batch-size", "128", "--n-epochs", "1", "--net", "32:16",
                 "--eval-every", "256", "--eval-games", "4", "-q"]) == 0
    cfg = json.loads((out / "config.json").read_text())
    assert (cfg["players"], cfg["reward"], cfg["reward_scale"], cfg["fast_fraction"],
            cfg["game"]["solo"]) == (1, "vp", 0.01, 1.0, True)
    evals = list(csv.DictReader(open(out / "eval.csv")))
    assert {r["opponent"] for r in evals} == {"solo"}
    for r in evals:
        assert float(r["vp_ci_low"]) <= float(r["vp"]) <= float(r["vp_ci_high"])
        bands = dict(x.split("=") for x in r["bands"].split())
        assert "Expert" in bands and sum(int(v) for v in bands.values()) == 4
    trains = list(csv.DictReader(open(out / "train.csv")))
    assert all(float(r["ep_reward"]) > 10 for r in trains)     # logged in VP, not VP x 0.01
    assert (out / "curve.png").exists()
    assert ck.load(out / "best.zip").meta["train"]["game"]["solo"] is True
    bot = agents.make(f"ppo:{out / 'best.zip'}", seed=0)
    game = Game(GameConfig(num_players=1, solo=True, seed=3))
    while not game.is_terminal:
        game.step(bot.act(game))
    assert game.score_breakdown()[0]["total"] > 0


@pytest.mark.parametrize("args, needle", [
    (["--solo", "--players", "2"], "one player"),
    (["--solo", "--reward", "win"], "--reward vp"),
    (["--solo", "--fast-fraction", "0.5"], "no opponents"),
    (["--reward-scale", "0"], "--reward-scale"),
])
def test_train_solo_bad_options_exit_2(tmp_path, capsys, args, needle):
    _needs_train()
    from caledonia_env.cli import main
    assert main(["train", "--out", str(tmp_path / "x"), *args, "-q"]) == 2
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_resume_without_a_run_fails_clearly(tmp_path):
    _needs_train()
    from caledonia_env.agents import checkpoint as ck
    from caledonia_env.train.trainer import Trainer, load_config
    with pytest.raises(ck.CheckpointError, match="config.json not found"):
        load_config(str(tmp_path / "nothing"))
    (tmp_path / "r").mkdir()
    t = Trainer(_tiny(tmp_path / "r"), resume=True, progress=False, log=lambda *_: None)
    with pytest.raises(ck.CheckpointError, match="no last.zip"):
        t.setup()


def test_actor_matches_the_sb3_policy(tmp_path):
    """The plain-torch actor that plays checkpoints gives the MaskablePPO policy's own
    deterministic (masked argmax) actions."""
    _needs_train()
    import torch
    from caledonia_env.envs import make_sb3_vec_env
    from caledonia_env.agents import checkpoint as ck
    from caledonia_env.train.trainer import TrainConfig, build_model
    cfg = TrainConfig(n_envs=4, n_steps=16, batch_size=32, net="32:16")
    env = make_sb3_vec_env(4, num_players=2, seed=1)
    model = build_model(cfg, env)
    obs = env.reset()
    for _ in range(20):
        obs, *_ = env.step(env.sample_actions())
    masks = env.action_masks()
    want, _ = model.predict(obs, action_masks=masks, deterministic=True)
    ck.save(tmp_path / "m.zip", model.policy.state_dict(),
            ck.make_meta(model.caledonia_arch, 2, model.num_timesteps))
    actor = ck.load_actor(ck.load(tmp_path / "m.zip"))
    with torch.no_grad():
        logits = actor(torch.as_tensor(obs)).numpy()
        ref = model.policy.get_distribution(torch.as_tensor(obs)).distribution.logits.numpy()
    assert np.allclose(logits - logits.max(1, keepdims=True),
                       ref - ref.max(1, keepdims=True), atol=1e-4)
    got = np.where(masks, logits, -np.inf).argmax(1)
    assert list(got) == list(want)


# ------------------------------------------------------------ CLI
def test_cli_evaluate_prints_win_rate_and_league(small_ckpt, tmp_path, capsys):
    from caledonia_env.cli import main
    league = str(tmp_path / "league.csv")
    code = main(["evaluate", small_ckpt, "--vs", "random", "--games", "4", "-q",
                 "--league-file", league, "--out", str(tmp_path / "rows.csv")])
    out = capsys.readouterr().out
    assert code == 0
    assert "win rate" in out and "95% CI" in out and "by agent" in out
    assert len(list(csv.DictReader(open(tmp_path / "rows.csv")))) == 8
    code = main(["evaluate", "--league", small_ckpt, "--vs", "random,greedy", "--games", "2",
                 "-q", "--league-file", league])
    out = capsys.readouterr().out
    assert code == 0 and "league table" in out and "Elo" in out
    assert len(rating.read_league(league)) == 4 + 3 * 2


def test_cli_evaluate_runs_in_one_second_stay_separate_league_matches(small_ckpt, tmp_path,
                                                                      monkeypatch):
    """Two evaluations started in the same second: their games 0.. are different games of
    the league (the match id is unique per run, not just a timestamp)."""
    import time
    from caledonia_env.cli import main
    monkeypatch.setattr(time, "strftime", lambda fmt, *a: "20250101-000000")
    league = str(tmp_path / "league.csv")
    for _ in range(2):
        assert main(["evaluate", small_ckpt, "--vs", "random", "--games", "2", "-q",
                     "--league-file", league]) == 0
    assert len(rating.read_league(league)) == 4


def test_cli_errors_are_one_line_messages(tmp_path, capsys):
    _needs_train()
    from caledonia_env.cli import main
    assert main(["evaluate", str(tmp_path / "none.zip"), "--games", "2", "-q",
                 "--league-file", ""]) == 2
    err = capsys.readouterr().err
    assert "error" in err and "does not exist" in err and "Traceback" not in err
    assert main(["train", "--out", str(tmp_path / "x"), "--opponents", "nobody=1", "-q"]) == 2
    assert "unknown agent" in capsys.readouterr().err
    assert main(["train", "--out", str(tmp_path / "x"), "--players", "5", "-q"]) == 2
    assert "--players" in capsys.readouterr().err


# ------------------------------------------------------------ shipped checkpoint
PRETRAINED = os.path.join(os.path.dirname(__file__), "..", "..", "agents", "pretrained", "ppo_2p.zip")


def test_pretrained_checkpoint_is_small_loads_and_plays():
    _needs_train()
    from caledonia_env import agents
    import caledonia_env.agents.ppo  # noqa: F401
    folder = os.path.dirname(PRETRAINED)
    for name in os.listdir(folder):
        if name.endswith(".zip"):
            assert os.path.getsize(os.path.join(folder, name)) <= 10 * 2**20, name
    bot = agents.make("ppo:pretrained", seed=0)
    assert bot.meta["num_players"] == 2
    game = Game(GameConfig(num_players=2, seed=11))
    other = agents.make("greedy", seed=0)
    while not game.is_terminal:
        game.step((bot if game.current_player == 1 else other).act(game))
    assert game.scores()[1] > 0


@pytest.mark.slow
def test_pretrained_beats_random_in_90_percent_of_games():
    """The documented claim (docs/training.md): >= 90% against random, 2 players."""
    _needs_train()
    from caledonia_env.train.batched_play import play_games, summarize
    rows = play_games(["ppo:pretrained", "random"], 300, seed=2024)
    st = summarize(rows, role=0)
    assert st["ci_low"] >= 0.9, st


def test_play_with_a_ppo_agent_on_two_workers_finishes(tmp_path):
    """Workers start from a fresh process once torch is loaded (a forked torch thread pool
    deadlocks): `caledonia play --players ppo:pretrained,greedy --workers 2` finishes."""
    from caledonia_env.cli import main
    out = tmp_path / "r.csv"
    assert main(["play", "--players", "ppo:pretrained,greedy", "--games", "4", "--workers", "2",
                 "--clans", "none", "--out", str(out), "-q"]) == 0
    assert len(out.read_text().splitlines()) == 1 + 8


def test_play_games_names_bad_game_ids_as_plain_ints():
    """A bad game_ids list is echoed as plain ints, not numpy scalar reprs (np.int64(1))."""
    from caledonia_env.train.batched_play import play_games
    with pytest.raises(ValueError, match=r"got \[1, 1\]$"):
        play_games(["random", "random"], None, game_ids=np.array([1, 1]))
