"""Commands ``train``, ``evaluate`` and ``plot`` of the ``caledonia`` CLI, added to its parser
by :func:`add_train_parser`, :func:`add_evaluate_parser` and :func:`add_plot_parser`.

Every command function returns an exit code and prints a one-line error (code 2) for
bad options, missing or mismatched checkpoints, instead of a traceback.
"""
from __future__ import annotations

import argparse
import dataclasses
import glob
import os
import sys
import time
import uuid

TRAIN_EXAMPLES = """\
examples:
  caledonia train --players 2 --timesteps 2_000_000 --out runs/x
  caledonia train --players 2 --timesteps 1_100_000 --out runs/ppo2p --n-envs 32 \\
      --fast-fraction 0.5 --opponents self=0.4,snapshot=0.2,greedy=0.4
  caledonia train --out runs/x --resume --timesteps 3_000_000     # continue, new total
  caledonia train --players 2 --init pretrained --fast-fraction 0 --out runs/ft2p \
      --opponents self=0.2,league=0.4,greedy=0.4          # fine-tune the shipped 2p policy
  caledonia train --out runs/x --resume --timesteps 5_000_000 --max-minutes 140 \
      --opponents self=0.2,league=0.4,greedy=0.3,random=0.1     # change the opponents
  caledonia train --solo --timesteps 3_000_000 --out runs/solo --max-minutes 60
      # the solo game (R-9.2): reward final VP x 0.01, evaluation = mean VP and rating bands
  tensorboard --logdir runs/x/tb

opponent mix (--opponents NAME=WEIGHT,...; drawn per episode and seat in the self-play phase):
  self      the current policy (weights synced at every rollout)
  snapshot  a past snapshot, uniform over the last --pool-size (one every --snapshot-every steps)
  latest    the newest snapshot
  league    a snapshot drawn by prioritized fictitious self-play: weight (1 - p)^--pfsp-power,
            p = the learner's expected score against it from a Bradley-Terry fit of the last
            --league-window self-play games (OUT/league.csv, table in OUT/league.txt)
  NAME      any bot: random, greedy, mcts:8, ppo:PATH
  (snapshot / latest play the current policy while the pool is empty)
"""

EVAL_EXAMPLES = """\
examples:
  caledonia evaluate runs/x/best.zip --vs greedy --games 400
  caledonia evaluate pretrained --vs random,greedy,mcts:16 --games 100
  caledonia evaluate --league --runs runs --vs random,greedy --games 50   # rate every run
  caledonia evaluate --league --games 0                # just print the league table
  caledonia evaluate pretrained --vs greedy --games 2000 --backend ray --workers 8
  caledonia evaluate pretrained --vs greedy --games 100000 --backend ray --address auto \\
      --out eval.parquet --resume            # an existing Ray cluster; resumable output

--backend ray, --workers N (> 1), --resume and a .parquet --out play the games in chunks
(Ray tasks or local processes; each worker loads the checkpoint once) and stream the rows to
--out as they finish (docs/scale.md); the rows are the same as in one process. --league
always plays in this process.

Checkpoints are read weights-only (torch.load(weights_only=True)): no code from the file runs.
"""

PLOT_EXAMPLES = """\
examples:
  caledonia plot runs/x                          # writes runs/x/curve.png
  caledonia plot runs/x -o docs/img/curve.png --title "2-player PPO"
"""


# settings a resumed run may change: the budget, the opponents and the bookkeeping, not the
# model, the game or the reward
RESUME_OVERRIDES = ("timesteps", "max_minutes", "threads", "opponents", "snapshot_every",
                    "pool_size", "pfsp_power", "league_window", "eval_every", "eval_games",
                    "eval_vs", "checkpoint_every", "keep_checkpoints")


class CommandError(Exception):
    """A user error: printed as 'caledonia COMMAND: error: ...' (exit code 2)."""


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r} (underscores are allowed, "
                                         f"e.g. 2_000_000)") from None


# ------------------------------------------------------------------ train
def add_train_parser(subparsers) -> argparse.ArgumentParser:
    from .trainer import TrainConfig
    d = TrainConfig()
    p = subparsers.add_parser(
        "train", help="train a MaskablePPO policy by self-play (needs the train extra)",
        description="Train a MaskablePPO policy (sb3-contrib) for one seat: first against random "
                    "opponents in the numba vector env, then by self-play against a pool of its "
                    "own snapshots and the baseline bots. Logs to TensorBoard (OUT/tb), evaluates "
                    "against random and greedy (win rate with 95% Wilson CI, OUT/eval.csv), keeps "
                    "OUT/best.zip and checkpoints, draws OUT/curve.png.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=TRAIN_EXAMPLES)
    a = p.add_argument
    a("--players", type=int, default=None,
      help=f"players per game, 2-4 (default {d.players}; 1 with --solo)")
    a("--timesteps", type=_int, default=None,
      help=f"total learner decisions to train, e.g. 2_000_000 (default {d.timesteps:_}); with "
           f"--resume the new total")
    a("--out", default=None, help=f"run folder, created if missing; its parent must exist "
                                  f"(default {d.out})")
    a("--resume", action="store_true",
      help="continue the run in --out from last.zip / resume.pt with its saved settings "
           "(config.json); the time budget, the opponents and the evaluation settings may "
           "change, not the model, the game or the reward")
    a("--init", default=None, metavar="CHECKPOINT",
      help="start from a checkpoint's weights (same --net; 'pretrained' = the shipped policy "
           "for --players), e.g. fine-tune the shipped policy with --fast-fraction 0")
    a("--seed", type=int, default=None, help=f"seed (default {d.seed})")
    g = p.add_argument_group("PPO")
    g.add_argument("--n-envs", type=int, default=None, help=f"parallel games (default {d.n_envs})")
    g.add_argument("--n-steps", type=int, default=None,
                   help=f"steps per env per rollout (default {d.n_steps})")
    g.add_argument("--batch-size", type=int, default=None, help=f"minibatch (default {d.batch_size})")
    g.add_argument("--n-epochs", type=int, default=None, help=f"epochs per rollout (default {d.n_epochs})")
    g.add_argument("--lr", dest="learning_rate", type=float, default=None,
                   help=f"learning rate (default {d.learning_rate})")
    g.add_argument("--gamma", type=float, default=None, help=f"discount (default {d.gamma})")
    g.add_argument("--gae-lambda", type=float, default=None, help=f"GAE lambda (default {d.gae_lambda})")
    g.add_argument("--clip-range", type=float, default=None, help=f"PPO clip (default {d.clip_range})")
    g.add_argument("--ent-coef", type=float, default=None, help=f"entropy bonus (default {d.ent_coef})")
    g.add_argument("--vf-coef", type=float, default=None, help=f"value loss weight (default {d.vf_coef})")
    g.add_argument("--net", default=None,
                   help=f"FEATURES:LAYERS, a shared feature layer then policy / value layers "
                        f"(default {d.net})")
    g.add_argument("--activation", choices=("relu", "tanh"), default=None,
                   help=f"(default {d.activation})")
    g.add_argument("--reward", choices=("win", "rank", "score_diff", "vp"), default=None,
                   help=f"terminal reward (default {d.reward}: own VP minus the others' mean, "
                        f"/100; vp with --solo)")
    g.add_argument("--reward-scale", type=float, default=None,
                   help="multiplies every reward (default 1; 0.01 with --solo, so the VP "
                        "reward is about 1)")
    g.add_argument("--shaping", type=float, default=None, metavar="W",
                   help="potential-based reward shaping (Ng et al. 1999): every learner step "
                        "also gets W x (gamma x phi(next) - phi(now)), phi = its VP lead if the "
                        "game were scored now (/100); the optimal policy is unchanged. "
                        "Self-play phase only: needs --fast-fraction 0 (default 0: off)")
    g = p.add_argument_group("opponents (self-play pool rules)")
    g.add_argument("--fast-fraction", type=float, default=None,
                   help=f"share of the timesteps played first against numba random opponents "
                        f"(default {d.fast_fraction})")
    g.add_argument("--opponents", default=None, metavar="MIX",
                   help=f"self-play opponent mix (default {d.opponents}); see below")
    g.add_argument("--snapshot-every", type=_int, default=None,
                   help=f"steps between pool snapshots (default {d.snapshot_every:_})")
    g.add_argument("--pool-size", type=int, default=None,
                   help=f"snapshots kept in the pool (default {d.pool_size})")
    g.add_argument("--pfsp-power", type=float, default=None,
                   help=f"league draws: weight (1 - p)^POWER (default {d.pfsp_power:g}; 0: "
                        f"uniform)")
    g.add_argument("--league-window", type=_int, default=None,
                   help=f"self-play games in the league's rating fit (default "
                        f"{d.league_window:_})")
    g = p.add_argument_group("evaluation and checkpoints")
    g.add_argument("--eval-every", type=_int, default=None,
                   help=f"steps between evaluations (default {d.eval_every:_})")
    g.add_argument("--eval-games", type=int, default=None,
                   help=f"games per evaluation opponent (default {d.eval_games})")
    g.add_argument("--eval-vs", default=None,
                   help=f"evaluation opponents (default {d.eval_vs})")
    g.add_argument("--checkpoint-every", type=_int, default=None,
                   help=f"steps between checkpoints (default {d.checkpoint_every:_})")
    g.add_argument("--keep-checkpoints", type=int, default=None,
                   help=f"checkpoints kept in OUT/checkpoints (default {d.keep_checkpoints})")
    g = p.add_argument_group("game and machine")
    g.add_argument("--map", default=None, help="fixed module sides, e.g. A1,B2,C1,D2 "
                                               "(default: a map drawn per game)")
    g.add_argument("--threads", type=int, default=None,
                   help="torch threads (default: torch's choice)")
    g.add_argument("--max-minutes", type=float, default=None,
                   help="stop (saving everything) when the run's wall time reaches this, e.g. "
                        "50 (default 0: no limit; a resumed run counts its earlier sessions)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    from caledonia_env.tournament import add_rules_options
    add_rules_options(p)
    p.set_defaults(func=cmd_train)
    return p


def _game_options(args, players: int) -> dict:
    """GameConfig options (clans, variants, ruleset…) of the rules options; ValueError if
    invalid (checked by building a GameConfig)."""
    from caledonia_env import tournament as tn
    from caledonia_env.config import GameConfig, clan_options
    clans, kw = tn.rules_from_args(args, players)
    kw.update(clan_options(clans))
    GameConfig(num_players=players, map=args.map, **kw)
    return kw


def _config_from_args(args):
    from .trainer import TrainConfig, load_config
    fields = [f.name for f in dataclasses.fields(TrainConfig)]
    given = {k: getattr(args, k) for k in fields if getattr(args, k, None) is not None}
    if not args.resume:
        if getattr(args, "solo", False):     # one player, scored by its final VP
            for k, v in (("players", 1), ("reward", "vp"), ("reward_scale", 0.01),
                         ("fast_fraction", 1.0)):
                given.setdefault(k, v)
            given["game"] = {"solo": True}
        cfg = TrainConfig(**given)
        cfg.validate()                       # --players and the rest first, then the rules
        cfg.game = _game_options(args, cfg.players)
        return cfg
    if args.resume:
        out = given.pop("out", TrainConfig().out)
        over = {k: given.pop(k) for k in RESUME_OVERRIDES if k in given}
        if given:
            print(f"caledonia train: --resume uses the run's saved settings; ignoring "
                  f"{', '.join('--' + k.replace('_', '-') for k in given)} (a resumed run "
                  f"may change only {', '.join('--' + k.replace('_', '-') for k in RESUME_OVERRIDES)})",
                  file=sys.stderr)
        return load_config(out, **over)
    return TrainConfig(**given)


def cmd_train(args) -> int:
    try:
        import sb3_contrib  # noqa: F401
    except ImportError:
        print("caledonia train: error: training needs the train extra "
              "(pip install -e '.[train]': torch, stable-baselines3, sb3-contrib, tensorboard)",
              file=sys.stderr)
        return 2
    import caledonia_env.agents.ppo  # noqa: F401  (ppo:PATH opponents)
    from ..agents.checkpoint import CheckpointError
    from .trainer import train
    from caledonia_env.tournament import check_output_folder
    try:
        cfg = _config_from_args(args)
        cfg.validate()
        check_output_folder(cfg.out, "--out")
        train(cfg, resume=args.resume, progress=not args.quiet)
    except (ValueError, FileExistsError, CheckpointError) as e:
        print(f"caledonia train: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


# --------------------------------------------------------------- evaluate
def add_evaluate_parser(subparsers) -> argparse.ArgumentParser:
    from caledonia_env.scale import add_backend_options
    from caledonia_env.tournament import add_rules_options
    p = subparsers.add_parser(
        "evaluate", help="win rate (95%% CI) and score breakdown of a checkpoint; league ratings",
        description="Play a trained checkpoint against bots: win rate with a 95% Wilson "
                    "interval and mean VP by component, by agent and by seat. Every game is "
                    "appended to a league file; --league plays every agent against every other "
                    "and prints a rating table (Bradley-Terry, Elo scale) over all recorded games.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EVAL_EXAMPLES)
    p.add_argument("checkpoints", nargs="*", metavar="CHECKPOINT",
                   help="checkpoint .zip (or 'pretrained', or ppo:PATH)")
    p.add_argument("--vs", default="greedy",
                   help="opponent bot(s), comma separated: random, greedy, mcts:16, ppo:PATH "
                        "(default greedy; in --league: the bots added to the league)")
    p.add_argument("--games", type=int, default=400, help="games per match (default 400)")
    p.add_argument("--players", type=int, default=2,
                   help="players per game, 2-4: the checkpoint against players-1 copies of the "
                        "opponent (default 2)")
    p.add_argument("--seed", type=int, default=0, help="match seed: game g is set up from "
                                                      "(seed, g) (default 0)")
    p.add_argument("--map", default=None, help="fixed module sides (default: drawn per game)")
    p.add_argument("--sample", action="store_true",
                   help="sample the policy's moves instead of taking the most likely legal one")
    p.add_argument("--out", default=None, metavar="FILE.csv|FILE.parquet",
                   help="one row per player per game (as 'caledonia play --out'); match m's "
                        "game g is game number m*GAMES+g")
    p.add_argument("--workers", type=int, default=1,
                   help="worker processes (local backend) or CPUs of the local Ray "
                        "(default 1); not with --league")
    p.add_argument("--league", action="store_true",
                   help="round robin of every CHECKPOINT, every RUNS/*/best.zip and the --vs bots "
                        "(2 players, --games per pair), then the rating table")
    p.add_argument("--runs", default=None, metavar="DIR",
                   help="with --league: add DIR/*/best.zip (e.g. --runs runs)")
    p.add_argument("--league-file", default="runs/league.csv", metavar="FILE.csv",
                   help="games are appended here and ratings read from here "
                        "(default runs/league.csv; its folder is created if missing, its parent "
                        "must exist; '' to skip)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    add_backend_options(p, title="scale-out of single matches, not --league")
    add_rules_options(p, solo=False)
    p.set_defaults(func=cmd_evaluate)
    return p


def _ppo_spec(text: str) -> str:
    return text if text.startswith("ppo:") else f"ppo:{text}"


def _play_match(study, m: int, args) -> tuple[list[dict], float]:
    """Match m of the study in this process (batched), with a progress bar."""
    from caledonia_env.tournament import progress_bar
    t0 = time.perf_counter()
    games = list(range(m * study.per_match, (m + 1) * study.per_match))
    with progress_bar(len(games), quiet=args.quiet) as bar:
        rows = study.play(games, progress=bar.update)
    return rows, time.perf_counter() - t0


def _play_study(study, args, on_rows) -> tuple[list[dict], dict]:
    """Every game of the study through caledonia_env.scale (Ray or local processes; rows
    streamed to --out, resumable)."""
    from caledonia_env import scale
    from caledonia_env.tournament import progress_bar
    try:
        with progress_bar(study.games, quiet=args.quiet) as bar:
            summary = scale.run_study(study, args.out or None, backend=args.backend,
                                      workers=args.workers, address=args.address,
                                      resume=args.resume, progress=bar.update,
                                      on_rows=on_rows)
    except ImportError as e:
        raise CommandError(str(e)) from None
    rows = scale.read_rows(args.out) if args.out else summary["rows"]
    for r in rows:
        r["role"] = study.role(r)
    return rows, summary


def _print_match(c: str, b: str, rows: list[dict], wall: float | None) -> None:
    from caledonia_env import tournament as tn
    from .players import summarize
    st = summarize(rows, role=0)
    print(tn.report(rows))
    print(f"\n{c} vs {b}: win rate {100 * st['win_rate']:.1f}% "
          f"(95% CI {100 * st['ci_low']:.1f}-{100 * st['ci_high']:.1f}%) over "
          f"{st['games']} games; mean VP {st['vp']:.1f} vs {st['opp_vp']:.1f}"
          + (f"; {wall:.1f} s\n" if wall is not None else "\n"))


def _print_study(summary: dict, args) -> None:
    warm = [w["warmup_s"] for w in summary["workers"]]
    rate = summary["games"] / summary["seconds"] if summary["seconds"] > 0 else 0.0
    line = (f"{summary['games']} games in {summary['seconds']:.1f} s ({rate:.1f} games/s), "
            f"backend {args.backend}, {len(warm)} worker process{'es' * (len(warm) != 1)}")
    if warm:
        line += f", warm-up {min(warm):.1f}-{max(warm):.1f} s each"
    print(line)
    if summary["skipped"]:
        print(f"--resume: {summary['skipped']} games already in {args.out}, "
              f"{summary['games']} played now")


def cmd_evaluate(args) -> int:
    try:
        return _evaluate(args)
    except CommandError as e:
        print(f"caledonia evaluate: error: {e}", file=sys.stderr)
        return 2
    except ValueError as e:            # includes CheckpointError and bad agent names
        print(f"caledonia evaluate: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ncaledonia evaluate: interrupted", file=sys.stderr)
        return 130


def _evaluate(args) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise CommandError("evaluating checkpoints needs torch: pip install -e '.[train]'")
    import caledonia_env.agents.ppo  # noqa: F401  (ppo:PATH names)
    from caledonia_env import tournament as tn
    from . import rating
    from ..agents.checkpoint import load
    from ..agents.policy import checkpoint_path
    from .players import EvalStudy, checkpoint_sha256, summarize
    if args.players not in (2, 3, 4):
        raise CommandError(f"--players must be 2, 3 or 4, got {args.players}")
    if args.games < (0 if args.league else 1):
        raise CommandError(f"--games must be >= 1, got {args.games}")
    if args.workers < 1:
        raise CommandError(f"--workers must be >= 1, got {args.workers}")
    streamed = (args.backend == "ray" or args.resume or args.workers > 1
                or (args.out or "").lower().endswith(".parquet"))
    if args.league and (streamed or args.address):
        raise CommandError("--league plays in this process: --backend ray, --address, "
                           "--workers and --resume are for single matches (without --league)")
    if args.address and args.backend != "ray":
        raise CommandError("--address needs --backend ray")
    if args.resume and not args.out:
        raise CommandError("--resume needs --out x.csv or x.parquet (the file to resume)")
    args.game_kw = _game_options(args, args.players)
    if args.out:
        tn.check_output_file(args.out, "--out")
    if args.league_file:
        tn.check_output_folder(os.path.dirname(os.path.abspath(args.league_file)),
                               "--league-file folder")
        if os.path.isdir(args.league_file):
            raise CommandError(f"--league-file {args.league_file} is a folder; give a file name")
    bots = [x.strip() for x in args.vs.split(",") if x.strip()]
    ckpts = [_ppo_spec(c) for c in args.checkpoints]
    if args.runs:
        found = sorted(glob.glob(os.path.join(args.runs, "*", "best.zip")))
        if not found and not ckpts:
            raise CommandError(f"--runs {args.runs}: no */best.zip found")
        ckpts += [_ppo_spec(f) for f in found if _ppo_spec(f) not in ckpts]
    for c in ckpts + [b for b in bots if b.startswith("ppo:")]:
        load(checkpoint_path(c[4:], args.players))   # clear error for missing / mismatched files
    if args.out and args.league:
        raise CommandError("--out is for single matches; the league keeps its games in "
                           "--league-file")
    league = args.league_file or None
    hashes = {s: checkpoint_sha256(s, args.players) for s in ckpts + bots}
    versions = {s: h[:8] for s, h in hashes.items()}
    # unique per invocation: the league groups rows by (match, game)
    match_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    if not args.league:
        if not ckpts:
            raise CommandError("give a CHECKPOINT (e.g. runs/x/best.zip or 'pretrained')")
        matches = tuple((c,) + (b,) * (args.players - 1) for c in ckpts for b in bots)
        study = EvalStudy(matches, args.games, seed=args.seed, map=args.map,
                          game_kw=args.game_kw, deterministic=not args.sample,
                          sha256={s: h for s, h in hashes.items() if h})

        def by_match(rows):
            out: dict = {}
            for r in rows:
                out.setdefault(study.match_game(r["game"])[0], []).append(r)
            return sorted(out.items())

        def to_league(rows):
            if league:
                for m, rs in by_match(rows):
                    rating.append_league(league, f"{match_id}:{matches[m][0]}:{matches[m][1]}",
                                         rs, versions)

        if streamed:
            all_rows, summary = _play_study(study, args, to_league)
            for m, rs in by_match(all_rows):
                _print_match(matches[m][0], matches[m][1], rs, None)
            _print_study(summary, args)
        else:
            all_rows = []
            for m, (c, b, *_) in enumerate(matches):
                rows, wall = _play_match(study, m, args)
                _print_match(c, b, rows, wall)
                to_league(rows)
                all_rows += rows
            if args.out:
                tn.write_csv(all_rows, args.out)
        if args.out:
            print(f"{len(all_rows)} rows written to {args.out}")
        return 0
    if args.players != 2:
        raise CommandError("--league plays 2-player head-to-head matches (--players 2)")
    if not league:
        raise CommandError("--league needs a --league-file")
    entrants = ckpts + [b for b in bots if b not in ckpts]
    if args.games > 0:
        if len(entrants) < 2:
            raise CommandError("the league needs at least two agents (checkpoints, --runs, --vs)")
        for i, a in enumerate(entrants):
            for b in entrants[i + 1:]:
                pair = EvalStudy(((a, b),), args.games, seed=args.seed, map=args.map,
                                 game_kw=args.game_kw, deterministic=not args.sample,
                                 sha256={s: hashes[s] for s in (a, b) if hashes[s]})
                rows, wall = _play_match(pair, 0, args)
                st = summarize(rows, role=0)
                print(f"{a} vs {b}: {100 * st['win_rate']:.1f}% (95% CI "
                      f"{100 * st['ci_low']:.1f}-{100 * st['ci_high']:.1f}%), VP {st['vp']:.1f} "
                      f"vs {st['opp_vp']:.1f}, {args.games} games, {wall:.1f} s")
                rating.append_league(league, f"{match_id}:{a}:{b}", rows, versions)
    games = rating.read_league(league)
    if not games:
        raise CommandError(f"{league}: no games recorded yet")
    print(f"\nleague table ({len(games)} games in {league}):")
    print(rating.format_ratings(rating.ratings(games)))
    return 0


# ------------------------------------------------------------------- plot
def add_plot_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("plot", help="draw a run's learning curve (PNG)",
                              description="Draw RUN/eval.csv and RUN/train.csv: evaluation win "
                                          "rates with 95% bands and the training reward.",
                              formatter_class=argparse.RawDescriptionHelpFormatter,
                              epilog=PLOT_EXAMPLES)
    p.add_argument("run", help="run folder, e.g. runs/x")
    p.add_argument("-o", "--output", default=None,
                   help="PNG to write (default RUN/curve.png), e.g. -o curve.png")
    p.add_argument("--title", default=None, help="figure title (default: the run folder's name "
                                                 "and the wall time), e.g. --title 'run 3'")
    p.set_defaults(func=cmd_plot)
    return p


def cmd_plot(args) -> int:
    from caledonia_env.tournament import check_output_file
    from .plot import plot_run
    try:
        out = args.output or os.path.join(args.run, "curve.png")
        if not os.path.isdir(args.run):
            raise ValueError(f"{args.run}: no such run folder")
        check_output_file(out, "-o")
        path = plot_run(args.run, out, args.title)
    except ValueError as e:
        print(f"caledonia plot: error: {e}", file=sys.stderr)
        return 2
    print(f"learning curve written to {path}")
    return 0


# --------------------------------------------------------------- expert
EXPERT_EXAMPLES = """\
examples:
  caledonia expert --from pretrained --players 2 --sims 32 --minutes 20 --workers 2 --out runs/ei1
  caledonia expert --from runs/ei1/expert.zip --players 2 --games 500 --out runs/ei2
  caledonia expert --data runs/ei1/data.npz --from pretrained --players 2 --tau 1 --out runs/ei1b
then: caledonia play --players ppo:runs/ei1/expert.zip,greedy --games 400
"""


def add_expert_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "expert", help="expert iteration: train the policy toward puct's visit counts",
        description="Play self-play games with puct:SIMS on a checkpoint in every seat (clans "
                    "drafted), keep the root visit counts of every searched decision "
                    "(OUT/data.npz), then fine-tune the checkpoint's policy toward them, the "
                    "value head held to its old values (OUT/expert.zip, OUT/expert.json). "
                    "The result plays as ppo:PATH and puct:SIMS:PATH. docs/training.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXPERT_EXAMPLES)
    p.add_argument("--from", dest="source", default="pretrained",
                   help="checkpoint to search with and to fine-tune (default: the shipped "
                        "policy for --players), e.g. --from runs/x/best.zip")
    p.add_argument("--out", required=True, help="output folder, e.g. --out runs/ei1")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4),
                   help="players per self-play game (default 2)")
    p.add_argument("--sims", type=_int, default=32, help="puct simulations per decision "
                                                          "(default 32)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--games", type=_int, default=None,
                        help="self-play games to play, e.g. --games 500")
    budget.add_argument("--minutes", type=float, default=None,
                        help="start self-play games for this long (default 10)")
    p.add_argument("--data", default=None, help="reuse the self-play data of an earlier run "
                                                "(data.npz) instead of playing")
    p.add_argument("--workers", type=_int, default=1, help="self-play processes (default 1)")
    p.add_argument("--noise", type=float, default=0.25,
                   help="Dirichlet noise share of the root prior in self-play (default 0.25)")
    p.add_argument("--epochs", type=_int, default=3, help="passes over the data (default 3)")
    p.add_argument("--lr", type=float, default=1e-4, help="Adam learning rate (default 1e-4)")
    p.add_argument("--tau", type=float, default=0.25,
                   help="target temperature: the policy learns N(a)^(1/tau), normalized "
                        "(default 0.25: sharper than the raw visits; 1: the visits)")
    p.add_argument("--value-weight", type=float, default=1.0,
                   help="weight of the term holding the value head to its old values")
    p.add_argument("--seed", type=_int, default=0, help="self-play and training seed")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_expert)
    return p


def cmd_expert(args) -> int:
    import json
    from ..agents.checkpoint import CheckpointError
    from ..agents.policy import checkpoint_path
    from caledonia_env.tournament import check_output_folder
    from . import expert
    try:
        check_output_folder(args.out, "--out")
        os.makedirs(args.out, exist_ok=True)
        source = checkpoint_path(args.source, args.players)
        if args.data:
            data = expert.load_data(args.data)
        else:
            minutes = args.minutes if args.games is None and args.minutes is not None else \
                (10.0 if args.games is None else None)
            data = expert.collect(source, args.players, args.sims, games=args.games,
                                  minutes=minutes, seed=args.seed, workers=args.workers,
                                  noise=args.noise, quiet=args.quiet)
            expert.save_data(data, os.path.join(args.out, "data.npz"))
        out = os.path.join(args.out, "expert.zip")
        report = expert.fit(source, data, out, epochs=args.epochs, lr=args.lr, tau=args.tau,
                            value_weight=args.value_weight, seed=args.seed, quiet=args.quiet)
    except (ValueError, FileExistsError, CheckpointError) as e:
        print(f"caledonia expert: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    with open(os.path.join(args.out, "expert.json"), "w") as f:
        json.dump(dict(report, source=source, args=vars(args) | {"func": None}), f, indent=1,
                  default=str)
    b, a = report["before"], report["after"]
    print(f"{report['positions']} searched positions ({report['held_out']} held out): "
          f"cross-entropy {b['cross_entropy']:.4f} -> {a['cross_entropy']:.4f}, argmax = most "
          f"visited {b['argmax_agreement']:.3f} -> {a['argmax_agreement']:.3f}, value drift "
          f"{a['value_drift']:.5f}")
    print(f"checkpoint written to {out}")
    return 0
