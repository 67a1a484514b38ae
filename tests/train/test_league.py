"""The training league (train/league.py): Bradley-Terry ratings of the self-play games, the
PFSP draw of ``league`` opponents, the league file, and a multi-player self-play smoke test
(3 players, clans drafted: the draft picks are the learner's decisions, R-1.7) with resume,
a changed opponent mix, reload, and 3- and 4-player games with clans."""
import csv
import json
import shutil

import numpy as np
import pytest

from caledonia_env import Game, GameConfig
from caledonia_env.train import rating
from caledonia_env.train.league import LEARNER, League, ranks
from caledonia_env.train.batched_play import EvalStudy


def test_ranks_share_equal_vp():
    assert ranks([150, 170, 150, 90]) == [2, 1, 2, 4]


def _games(league, rng, n, p_beats):
    """n 2-player games of the learner against opponents with win probabilities p_beats."""
    names = list(p_beats)
    for _ in range(n):
        opp = names[int(rng.integers(len(names)))]
        win = rng.random() < p_beats[opp]
        league.record([LEARNER, opp], [100, 90] if win else [90, 100])


def test_pfsp_draws_the_opponents_the_learner_beats_least_most():
    league = League(window=5000, refit_every=50)
    assert np.allclose(league.weights(["a", "b"]), [0.5, 0.5])      # unrated: p = 1/2
    _games(league, np.random.default_rng(0), 3000, {"weak": 0.9, "mid": 0.6, "strong": 0.3})
    p = {s: league.expected_score(s) for s in ("weak", "mid", "strong")}
    assert 0.85 < p["weak"] < 0.95 and 0.55 < p["mid"] < 0.65 and 0.25 < p["strong"] < 0.35
    w = league.weights(["weak", "mid", "strong"])
    assert w[2] > w[1] > w[0] and w.sum() == pytest.approx(1.0)
    # AlphaStar's hard weighting: (1 - p)^2, normalized
    raw = np.array([(1 - p[s]) ** 2 for s in ("weak", "mid", "strong")])
    assert np.allclose(w, raw / raw.sum())
    assert np.allclose(League(power=0).weights(["x", "y", "z"]), 1 / 3)
    rng = np.random.default_rng(1)
    picks = np.bincount([league.pick(["weak", "strong"], rng) for _ in range(2000)], minlength=2)
    assert picks[1] > 5 * picks[0]


def test_league_window_forgets_old_games():
    league = League(window=200, refit_every=10)
    rng = np.random.default_rng(2)
    _games(league, rng, 400, {"s": 0.05})          # the learner used to lose...
    _games(league, rng, 200, {"s": 0.95})          # ...and now wins
    assert len(league.games) == 200 and league.recorded == 600
    assert league.expected_score("s") > 0.85


def test_league_file_is_an_evaluate_league_file_and_survives_a_resume(tmp_path):
    path = tmp_path / "league.csv"
    league = League(window=100, refit_every=1000, path=str(path))
    league.record([LEARNER, "greedy", "step_000100000"], [150, 160, 150])
    league.record([LEARNER, LEARNER, "greedy"], [170, 120, 130], wins=[1.0, 0.0, 0.0])
    rows = list(csv.DictReader(open(path)))
    assert [r["rank"] for r in rows] == ["2", "1", "2", "1", "3", "2"]
    assert {r["game"] for r in rows} == {"0", "1"} and rows[0].keys() >= set(rating.LEAGUE_FIELDS)
    games = rating.read_league(str(path))
    assert games == [[(LEARNER, 2.0), ("greedy", 1.0), ("step_000100000", 2.0)],
                     [(LEARNER, 1.0), (LEARNER, 3.0), ("greedy", 2.0)]]
    again = League(window=100, path=str(path))      # a resumed run reads its games back
    assert again.recorded == 2 and len(again.games) == 2
    again.record([LEARNER, "greedy"], [1, 2])
    assert {r["game"] for r in csv.DictReader(open(path))} == {"0", "1", "2"}


def test_selfplay_env_records_every_finished_game_with_the_learner_label():
    pytest.importorskip("torch")
    from caledonia_env.agents.checkpoint import Arch
    from caledonia_env.train.selfplay import OpponentMix, SelfPlayVecEnv, SnapshotPool
    pool = SnapshotPool(Arch(16, (8,), (8,)), size=3, seed=0)
    state = pool.current.actor.state_dict()
    pool.add(state, "s0")
    pool.add(state, "s1")
    league = League(window=500, refit_every=5)
    env = SelfPlayVecEnv(4, 3, OpponentMix("self=1,league=2,random=1"), pool, seed=3,
                         league=league, game_kw={"clans": None})
    env.reset()
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(600):
        _, _, d, infos = env.step(np.array([rng.choice(np.flatnonzero(m))
                                            for m in env.action_masks()]))
        finished += int(d.sum())
    assert finished > 0 and league.recorded == finished
    labels = {a for g in league.games for a, _ in g}
    assert LEARNER in labels and labels <= {LEARNER, "s0", "s1", "random"}
    assert "s0" in labels or "s1" in labels
    assert all(sum(a == LEARNER for a, _ in g) >= 1 for g in league.games)


# ------------------------------------------------------------ multi-player smoke test
def _needs_train():
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")


def test_three_player_selfplay_with_drafted_clans_league_resume_and_reload(tmp_path):
    """R-1.7: the standard game; the learner's draft picks are ordinary decisions."""
    _needs_train()
    from caledonia_env import agents
    import caledonia_env.agents.ppo  # noqa: F401
    from caledonia_env.agents import checkpoint as ck
    from caledonia_env.cli import build_parser
    from caledonia_env.train.cli.train import config_from_args
    from caledonia_env.train.trainer import TrainConfig, train
    out = tmp_path / "run3p"
    cfg = TrainConfig(players=3, timesteps=2048, out=str(out), n_envs=4, n_steps=64,
                      batch_size=128, n_epochs=1, net="32:16", fast_fraction=0.25,
                      eval_every=1024, eval_games=3, eval_vs="greedy", checkpoint_every=1024,
                      snapshot_every=256, pool_size=3, opponents="self=1,league=2,greedy=1")
    assert GameConfig(num_players=3, **cfg.game).clans == "draft"     # the standard game
    train(cfg, progress=False, log=lambda m: None)
    assert (out / "league.csv").exists() and (out / "league.txt").exists()
    league_games = rating.read_league(str(out / "league.csv"))
    assert league_games and all(len(g) == 3 for g in league_games)
    assert "learner" in (out / "league.txt").read_text()
    # resume a copy with more steps, a new time budget and another opponent mix
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    args = build_parser().parse_args(
        ["train", "--out", str(copy), "--resume", "--timesteps", "3072",
         "--opponents", "league=1,random=1", "--max-minutes", "30", "--n-envs", "8"])
    cfg2 = config_from_args(args)
    assert cfg2.out == str(copy) and cfg2.timesteps == 3072 and cfg2.max_minutes == 30
    assert cfg2.opponents == "league=1,random=1" and cfg2.n_envs == 4     # the model stays
    train(cfg2, resume=True, progress=False, log=lambda m: None)
    assert json.load(open(copy / "config.json"))["opponents"] == "league=1,random=1"
    assert len(rating.read_league(str(copy / "league.csv"))) > len(league_games)
    assert len(rating.read_league(str(out / "league.csv"))) == len(league_games)  # untouched
    meta = ck.load(copy / "last.zip").meta
    assert meta["timesteps"] >= 3072 and meta["train"]["players"] == 3
    # the checkpoint plays 3- and 4-player games with drafted clans
    for n in (3, 4):
        bot = agents.make(f"ppo:{copy / 'best.zip'}", seed=0)
        game = Game(GameConfig(num_players=n, seed=40 + n))
        others = agents.make("random", seed=1)
        while not game.is_terminal:
            game.step((bot if game.current_player == 0 else others).act(game))
        assert len(game.scores()) == n and all(game.clan(p) is not None for p in range(n))
    # --init: a new run starts from the checkpoint's weights (policy and value head)
    import torch
    from caledonia_env.train.trainer import Trainer
    fresh = Trainer(TrainConfig(players=4, timesteps=512, out=str(tmp_path / "ft"), n_envs=2,
                                n_steps=64, batch_size=64, net="32:16", fast_fraction=0.0,
                                opponents="league=1,greedy=1", init=str(copy / "best.zip")),
                    progress=False, log=lambda m: None)
    with pytest.warns(ck.PlayerCountWarning, match="trained for 3-player games, not for 4"):
        fresh.setup()
    saved = ck.load(copy / "best.zip").state_dict
    own = fresh.model.policy.state_dict()
    for k in ("action_net.weight", "value_net.weight", "features_extractor.net.0.weight"):
        assert torch.equal(own[k], saved[k]), k
    with pytest.raises(ck.CheckpointError, match="network"), pytest.warns(ck.PlayerCountWarning):
        Trainer(TrainConfig(players=2, out=str(tmp_path / "bad"), n_envs=2, net="64:16",
                            init=str(copy / "best.zip")), progress=False,
                log=lambda m: None).setup()
    assert not (tmp_path / "bad" / "config.json").exists()   # so the same --out can be retried


def test_eval_study_resume_names_another_seed_agent_or_rules():
    """EvalStudy.mismatch (what --resume of `caledonia evaluate` checks): the rows of one of
    its own games match; the same rows seen by a study with another seed, other agents or
    other rules (a variant) are refused with the difference named."""
    study = EvalStudy(matches=(("greedy", "random"),), per_match=2, seed=3)
    rows = study.play([1])
    assert study.mismatch(rows) is None and study.belongs(rows[0])
    assert "game seed" in EvalStudy(matches=study.matches, per_match=2, seed=4).mismatch(rows)
    assert "agent" in EvalStudy(matches=(("random", "greedy"),), per_match=2,
                                seed=3).mismatch(rows)
    other_rules = EvalStudy(matches=study.matches, per_match=2, seed=3,
                            game_kw={"ports": False})
    assert "variants" in other_rules.mismatch(rows)
    assert "not one of" in EvalStudy(matches=study.matches, per_match=1, seed=3).mismatch(rows)
