"""``caledonia ladder``: the rating ladder with a cost axis, or the sequential test that
accepts a new agent over the one it replaces (:mod:`caledonia_env.train.ladder`)."""
from __future__ import annotations

import argparse
import os
import sys
import time

from caledonia_env import tournament as tn
from caledonia_env.train import ladder
from caledonia_env.train.cli.common import CommandError, parse_int

LADDER_EXAMPLES = """\
examples:
  caledonia ladder --players 2 --games 900 --seed 20261210 --workers 2 --plot ladder_2p.png
  caledonia ladder --players 2 --rungs random,greedy,greedy:2p,mcts:8,mcts:32,automa:3 \\
      --games 600 --seed 20261211 --out ladder_2p.csv
  caledonia ladder --players 4 --games 400 --seed 20261212
  caledonia ladder --accept greedy:new.json --against greedy:2p --players 2 --seed 20261213
  caledonia ladder --accept greedy:new4p.json --against greedy:4p --players 4 \\
      --opponents greedy,random --elo1 30 --max-games 2000

default rungs: 2p {r2}; 3p {r3}; 4p {r4}
Use a --seed never used to choose or tune any rung (docs/ladder.md). The saved result
file and the README chart are written by: python benchmarks/ladder.py --save ...
"""


def add_ladder_parser(subparsers) -> argparse.ArgumentParser:
    rungs = {n: ",".join(r) for n, r in ladder.DEFAULT_RUNGS.items()}
    p = subparsers.add_parser(
        "ladder", help="rate agents on one Elo ladder beside their CPU cost; SPRT a new agent",
        description="Play mixed tables of N different rungs (every pair of rungs meets "
                    "equally often per round; every table in every cyclic seat rotation on "
                    "one shared setup; clans drafted), rate the rungs by a Bradley-Terry fit "
                    "(Elo, random = 0, 95% CI) and print each with its mean thinking "
                    "seconds a game; --plot draws strength against cost. With --accept NEW "
                    "--against OLD: Wald's sequential probability ratio test of NEW against "
                    "OLD (H0: NEW is at most --elo0 better, H1: at least --elo1), played in "
                    "batches until it decides or --max-games; exit code 0 when NEW is "
                    "accepted, 1 otherwise. docs/ladder.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=LADDER_EXAMPLES.format(r2=rungs[2], r3=rungs[3], r4=rungs[4]))
    p.add_argument("--players", type=parse_int, default=2,
                   help="players per game, 2-4 (default 2)")
    p.add_argument("--rungs", default=None, metavar="A,B[,...]",
                   help="the agents to rate (default: the player count's rungs, below); "
                        "automa:LEVEL rungs are 2-player only")
    p.add_argument("--games", type=parse_int, default=900,
                   help="ladder games, rounded up to whole blocks of --players games "
                        "(default 900)")
    p.add_argument("--seed", type=parse_int, default=0,
                   help="block b is set up from (seed, b); use a fresh seed (default 0)")
    p.add_argument("--workers", type=parse_int, default=1,
                   help="parallel worker processes (default 1)")
    p.add_argument("--out", default=None, metavar="FILE.csv",
                   help="write one row per player per game (tournament columns); must not "
                        "exist yet")
    p.add_argument("--plot", default=None, metavar="FILE.png",
                   help="draw Elo (95%% CI) against CPU seconds a game (log scale)")
    p.add_argument("--accept", default=None, metavar="NEW",
                   help="run the SPRT of agent NEW against --against OLD instead of a ladder")
    p.add_argument("--against", default=None, metavar="OLD", help="the agent NEW replaces")
    p.add_argument("--opponents", default="greedy", metavar="A[,B]",
                   help="SPRT in 3-4 players: the other seats, cycled (default greedy)")
    p.add_argument("--elo0", type=float, default=0.0, help="SPRT H0 bound (default 0 Elo)")
    p.add_argument("--elo1", type=float, default=20.0, help="SPRT H1 bound (default 20 Elo)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="SPRT false acceptance rate (default 0.05)")
    p.add_argument("--beta", type=float, default=0.05,
                   help="SPRT false rejection rate (default 0.05)")
    p.add_argument("--max-games", type=parse_int, default=4000,
                   help="SPRT game cap: undecided there is 'inconclusive' (default 4000)")
    p.add_argument("--batch", type=parse_int, default=200,
                   help="SPRT games played between checks of the verdict (default 200)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=cmd_ladder)
    return p


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def check_outputs(args) -> None:
    if args.out:
        tn.check_output_file(args.out, "--out")
        if os.path.exists(args.out):
            raise CommandError(f"--out {args.out} exists; give a new file name (a ladder's "
                               f"games are never overwritten)")
    if args.plot:
        tn.check_output_file(args.plot, "--plot")


def cmd_ladder(args) -> int:
    try:
        if args.workers < 1:
            raise CommandError(f"--workers must be >= 1, got {args.workers}")
        if (args.accept is None) != (args.against is None):
            raise CommandError("--accept NEW and --against OLD go together")
        check_outputs(args)
        if args.accept is not None:
            return _cmd_sprt(args)
        rungs = ladder.check_rungs(_names(args.rungs) if args.rungs is not None else
                                   ladder.DEFAULT_RUNGS.get(args.players, ()), args.players)
        if args.games < 1:
            raise CommandError(f"--games must be >= 1, got {args.games}")
        games = ladder.schedule(rungs, args.players, args.games, args.seed)
    except (CommandError, ValueError) as e:
        print(f"caledonia ladder: error: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    with tn.progress_bar(len(games), label="ladder", quiet=args.quiet) as bar:
        rows = ladder.play(games, seed=args.seed, workers=args.workers, progress=bar.update)
    table = ladder.rate(rows)
    print(ladder.format_ladder(table))
    print(f"{len(games)} games of {args.players} players, {len(rungs)} rungs, seed {args.seed}; "
          f"wall time {time.perf_counter() - t0:.0f} s with {args.workers} worker(s)")
    if args.out:
        tn.write_csv(rows, args.out)
        print(f"{len(rows)} rows written to {args.out}")
    if args.plot:
        ladder.plot_ladder(table, args.plot, f"{args.players}-player ladder ({len(games)} "
                                             f"games, seed {args.seed})")
        print(f"chart written to {args.plot}")
    return 0


def _cmd_sprt(args) -> int:
    opponents = _names(args.opponents)
    if args.players > 2 and not opponents:
        raise CommandError("--opponents: name at least one agent for the other seats")
    if args.batch < 1:
        raise CommandError(f"--batch must be >= 1, got {args.batch}")
    kw = dict(players=args.players, elo0=args.elo0, elo1=args.elo1, alpha=args.alpha,
              beta=args.beta, max_games=args.max_games, batch=args.batch,
              opponents=opponents, seed=args.seed, workers=args.workers)
    t0 = time.perf_counter()
    with tn.progress_bar(args.max_games, label="sprt", quiet=args.quiet) as bar:
        res = ladder.sprt(args.accept, args.against, progress=bar.update, **kw)
    print(format_sprt(res))
    print(f"wall time {time.perf_counter() - t0:.0f} s with {args.workers} worker(s)")
    if args.out:
        tn.write_csv(res["rows"], args.out)
        print(f"{len(res['rows'])} rows written to {args.out}")
    return 0 if res["verdict"] == "accept" else 1


def format_sprt(res: dict) -> str:
    """The SPRT's outcome in a few lines."""
    what = {"accept": f"ACCEPTED: {res['new']} is at least {res['elo1']:g} Elo better",
            "reject": f"REJECTED: {res['new']} is at most {res['elo0']:g} Elo better",
            "inconclusive": "INCONCLUSIVE at the game cap: not accepted"}[res["verdict"]]
    return (f"SPRT {res['new']} against {res['old']} ({res['players']} players), H0 elo <= "
            f"{res['elo0']:g}, H1 elo >= {res['elo1']:g}, alpha {res['alpha']:g}, beta "
            f"{res['beta']:g}\nLLR {res['llr']:.3f} in [{res['lower']:.3f}, "
            f"{res['upper']:.3f}] after {res['games']} games (score {100 * res['score']:.1f}% "
            f"against {res['old']})\n{what}")
