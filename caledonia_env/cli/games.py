"""``caledonia play``: a tournament between bots, and the game playing it shares with
``balance`` (:mod:`caledonia_env.cli.balance`). Rows go to --out, and game records to
``--record-dir``, through :mod:`caledonia_env.scale` (streamed as games finish, resumable);
--out is locked for the command's whole life and checked to hold every game (and
--record-dir every record) before 'N rows written'."""
from __future__ import annotations

import time

from caledonia_env import scale
from caledonia_env import tournament as tn
from caledonia_env.config import check_player_count
from caledonia_env.game import Game
from caledonia_env.tournament.spec import game_seeds
from caledonia_env.cli.common import UsageError, check_output_path, game_config, locked_output


def _spec_from_args(args):
    """The TournamentSpec of ``caledonia play``'s options; UsageError if invalid."""
    players = tuple(p.strip() for p in args.players.split(",")) if args.players else ()
    if any(not p for p in players):
        raise UsageError(f"--players: empty agent name in {args.players!r} "
                         f"(use commas between names, e.g. greedy,random)")
    try:
        check_player_count(len(players), args.solo, f"--players: the count of agent names "
                           f"({args.players})", "--solo")
    except ValueError as e:
        raise UsageError(str(e)) from None
    spec = tn.TournamentSpec(players=players, games=args.games, seed=args.seed,
                             config=game_config(args, len(players)))
    try:
        tn.validate(spec)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return spec


def warm_up(spec, progress=None) -> None:
    """Compile (or load from numba's cache) the engine and the bots' code in this process,
    before the progress bar and the worker processes: the workers then find it cached (or
    inherit it, forked) instead of each compiling it at the same time. ``progress`` (the
    command's :class:`~caledonia_env.engine.compile.first_run.CompileProgress`) closes its line
    before the bar starts. Results do not change: every game resets its bots."""
    game_seed, _ = game_seeds(spec.seed, 0, len(spec.players))
    game = Game(spec.game_config(game_seed, 0))
    game.legal_actions()
    for i, name in enumerate(spec.players):
        if not game.is_automa(i):
            tn.warm_agent(name, i, spec.agent_kw, game)
    if progress is not None:
        progress.finish()


def play_spec_games(args, spec):
    """``(rows, wall seconds)`` of every game of ``spec``: the code compiled once here (not
    in every worker), then the games under a progress bar."""
    t0 = time.perf_counter()
    if args.backend != "ray":
        warm_up(spec, getattr(args, "compile_progress", None))
    with tn.progress_bar(spec.games, quiet=args.quiet) as bar:
        rows = _run_games(args, spec, bar)
    return rows, time.perf_counter() - t0


def _run_games(args, spec, bar):
    """The rows of every game of ``spec``: through caledonia_env.scale whenever there is an
    --out (streamed there as games finish, so an interruption keeps them for --resume; CSV
    or Parquet) or a --record-dir (each record written as its game finishes; local backend
    only); else the local runner (rows in memory)."""
    out = args.out or None
    record_dir = getattr(args, "record_dir", None)
    if record_dir and args.backend == "ray":
        raise UsageError("--record-dir works with the local backend only (Ray tasks send "
                         "back no game records): drop --backend ray or --record-dir")
    if (args.backend == "ray" or args.resume) and not out:
        raise UsageError("--backend ray, --resume and Parquet output need --out x.csv or "
                         "x.parquet (rows are streamed there as games finish)")
    if not (out or record_dir):
        if args.address:
            raise UsageError("--address needs --backend ray")
        return tn.run(spec, workers=args.workers, progress=bar.update)
    try:
        summary = scale.run_study(spec, out, backend=args.backend, workers=args.workers,
                                  address=args.address, resume=args.resume,
                                  progress=bar.update, connect_timeout=args.connect_timeout,
                                  record_dir=record_dir)
    except (ValueError, ImportError) as e:     # ClusterUnreachable is a ValueError
        raise UsageError(str(e)) from None
    if summary.get("cut_row"):
        print(f"--resume: the last row of {out} was cut short (an interrupted write); "
              f"it was dropped and its game played again")
    if summary["replayed"]:
        n = summary["replayed"]
        print(f"--resume: {n} game{'s' * (n != 1)} of {out} had no record in {record_dir}; "
              f"played again")
    if summary["skipped"]:
        print(f"--resume: {summary['skipped']} games already in {out}, "
              f"{summary['games']} played now")
    return scale.read_rows(out) if out else summary["rows"]


def cmd_play(args) -> int:
    """``caledonia play``: a tournament; tables by agent and seat, rows to --out."""
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    spec = _spec_from_args(args)
    if args.out:
        check_output_path(args.out, "--out")
    if args.record_dir:
        check_output_path(args.record_dir, "--record-dir", folder=True)
    with locked_output(args.out), locked_output(args.record_dir, "--record-dir", folder=True):
        return _play(args, spec)


def _play(args, spec) -> int:
    """``caledonia play`` once its --out is locked."""
    rows, wall = play_spec_games(args, spec)
    print(tn.format_results(rows))
    if spec.template.solo:
        print("\n" + tn.format_solo(tn.solo_summary(rows, spec.template.ruleset),
                                    rows[0]["agent"]))
    print(f"wall time {wall:.1f} s ({wall / spec.games:.3f} s per game with "
          f"{args.workers} worker{'s' if args.workers > 1 else ''})")
    if args.out:
        print(f"{len(rows)} rows written to {args.out}")
    if args.record_dir:
        print(f"{spec.games} game records written to {args.record_dir}")
    return 0
