"""``caledonia evaluate``: checkpoints against bots (win rate with a 95% Wilson interval,
VP by component), scaled out through :mod:`caledonia_env.scale`, and the league table
(:mod:`train.rating`)."""
from __future__ import annotations

import argparse
import glob
import os
import contextlib
import sys
import time
import uuid
import warnings

from caledonia_env import scale
from caledonia_env import tournament as tn
from caledonia_env.agents.checkpoint import PlayerCountWarning, load
from caledonia_env.agents.policy import checkpoint_path
from caledonia_env.config import check_player_count
from caledonia_env.train import rating
from caledonia_env.train.batched_play import EvalStudy, checkpoint_sha256, summarize
from caledonia_env.train.cli.common import CommandError, game_options

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


def add_evaluate_parser(subparsers) -> argparse.ArgumentParser:
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
    scale.add_backend_options(p, title="scale-out of single matches, not --league")
    tn.add_rules_options(p, solo=False)
    p.set_defaults(func=cmd_evaluate)
    return p


def _ppo_spec(text: str) -> str:
    return text if text.startswith("ppo:") else f"ppo:{text}"


def _play_match(study, m: int, args) -> tuple[list[dict], float]:
    """Match m of the study in this process (batched), with a progress bar."""
    t0 = time.perf_counter()
    games = list(range(m * study.per_match, (m + 1) * study.per_match))
    with tn.progress_bar(len(games), quiet=args.quiet) as bar:
        rows = study.play(games, progress=bar.update)
    return rows, time.perf_counter() - t0


def _play_study(study, args, on_rows) -> tuple[list[dict], dict]:
    """Every game of the study through caledonia_env.scale (Ray or local processes; rows
    streamed to --out, resumable)."""
    try:
        with tn.progress_bar(study.games, quiet=args.quiet) as bar:
            summary = scale.run_study(study, args.out or None, backend=args.backend,
                                      workers=args.workers, address=args.address,
                                      resume=args.resume, progress=bar.update,
                                      on_rows=on_rows, connect_timeout=args.connect_timeout)
    except ImportError as e:
        raise CommandError(str(e)) from None
    rows = scale.read_rows(args.out) if args.out else summary["rows"]
    for r in rows:
        r["role"] = study.role(r)
    return rows, summary


def _print_match(c: str, b: str, rows: list[dict], wall: float | None) -> None:
    st = summarize(rows, role=0)
    print(tn.format_results(rows))
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
    try:                          # --out locked for the whole run: a second one fails at once
        with tn.lock_output(args.out, "--out") if args.out else contextlib.nullcontext():
            return _evaluate(args)
    except (CommandError, ValueError) as e:     # ValueError: CheckpointError, bad agent names
        print(f"caledonia evaluate: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        note = scale.interrupt_note(e)
        print("\ncaledonia evaluate: interrupted" + (f"; {note}" if note else ""),
              file=sys.stderr)
        return 130


def _check_options(args) -> bool:
    """CommandError for options that do not go together; True when the games are played
    through :mod:`caledonia_env.scale` (streamed)."""
    try:
        check_player_count(args.players, what="--players", solo_flag=None)
    except ValueError as e:
        raise CommandError(str(e)) from None
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
    if args.out and args.league:
        raise CommandError("--out is for single matches; the league keeps its games in "
                           "--league-file")
    return streamed


def _check_checkpoints(specs, num_players: int) -> None:
    """Load every checkpoint once now: a clear error for a missing, unsafe or mismatched
    file; a one-line warning for one trained for another player count."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PlayerCountWarning)
        for c in specs:
            load(checkpoint_path(c[4:], num_players), num_players=num_players)
    for w in caught:
        if issubclass(w.category, PlayerCountWarning):
            print(f"caledonia evaluate: warning: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _evaluate(args) -> int:
    try:
        import torch  # noqa: F401  (optional extra: a clear message without it)
    except ImportError:
        raise CommandError("evaluating checkpoints needs torch: pip install -e '.[train]'")
    streamed = _check_options(args)
    args.game_kw = game_options(args, args.players)
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
    _check_checkpoints(ckpts + [b for b in bots if b.startswith("ppo:")], args.players)
    hashes = {s: checkpoint_sha256(s, args.players) for s in ckpts + bots}
    # unique per invocation: the league groups rows by (match, game)
    match_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    if not args.league:
        return _matches(args, ckpts, bots, hashes, match_id, streamed)
    return _league(args, ckpts, bots, hashes, match_id)


def _matches(args, ckpts, bots, hashes, match_id, streamed) -> int:
    """Each checkpoint against each bot (players - 1 copies): report, rows, league file."""
    if not ckpts:
        raise CommandError("give a CHECKPOINT (e.g. runs/x/best.zip or 'pretrained')")
    league = args.league_file or None
    versions = {s: h[:8] for s, h in hashes.items()}
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


def _league(args, ckpts, bots, hashes, match_id) -> int:
    """Round robin of the checkpoints and bots (2 players), then the rating table."""
    if args.players != 2:
        raise CommandError("--league plays 2-player head-to-head matches (--players 2)")
    league = args.league_file or None
    if not league:
        raise CommandError("--league needs a --league-file")
    versions = {s: h[:8] for s, h in hashes.items()}
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
