"""``caledonia tune-weights``: the greedy evaluation's weights tuned for the solo game
(:mod:`train.tune_weights`), written as a weights file (:mod:`agents.weights`)."""
from __future__ import annotations

import argparse
import datetime
import shlex
import sys
import time

from caledonia_env import tournament as tn
from caledonia_env.agents.weights import load_weights, save_weights
from caledonia_env.data import load_ruleset
from caledonia_env.train import tune_weights
from caledonia_env.train.cli.common import CommandError, parse_int

TUNE_EXAMPLES = """\
examples:
  caledonia tune-weights --out solo.json       # 20 generations x 20 vectors x 400 games
  caledonia tune-weights --games 100 --generations 5 --out quick.json
  caledonia tune-weights --init solo.json --seed 2 --out solo2.json     # go on from a file
then: caledonia play --solo --players greedy:solo.json --games 200
      caledonia play --solo --players mcts:256c36:solo.json --games 20 --workers 2

The shipped set (greedy:solo, mcts:N:solo) is this command's default run
(agents/pretrained/greedy_solo.md).
"""


def add_tune_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "tune-weights", help="tune the greedy bot's evaluation weights for the solo game",
        description="The cross-entropy method over the greedy evaluation's weights "
                    "(agents.greedy_value): the fitness of a weight vector is the greedy bot's "
                    "mean final VP in the same --games solo games (clans drafted). Writes a "
                    "weights file that greedy:FILE and mcts:N:FILE play with. With the defaults "
                    "a run takes minutes on one core (a line per generation shows its progress). docs/agents.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=TUNE_EXAMPLES)
    p.add_argument("--out", "-o", required=True, metavar="FILE.json",
                   help="weights file to write, e.g. --out solo.json")
    p.add_argument("--games", type=parse_int, default=400,
                   help="solo games every vector plays (default 400)")
    p.add_argument("--generations", type=parse_int, default=20, help="default 20")
    p.add_argument("--population", type=parse_int, default=20,
                   help="vectors per generation, >= 4 (default 20)")
    p.add_argument("--seed", type=parse_int, default=31337,
                   help="game g is set up from (seed, g); also seeds the search (default 31337)")
    p.add_argument("--init", default=None, metavar="WEIGHTS",
                   help="start from these weights (a file, or 'solo'; default: the greedy bot's)")
    p.add_argument("--ruleset", default=None, metavar="PATH",
                   help="ruleset override file (default: the bundled ruleset)")
    p.add_argument("-q", "--quiet", action="store_true", help="no line per generation")
    p.set_defaults(func=cmd_tune)
    return p


def command_line(args) -> str:
    """The command that writes this file again: every option spelled out."""
    words = ["caledonia", "tune-weights", "--out", args.out, "--games", str(args.games),
             "--generations", str(args.generations), "--population", str(args.population),
             "--seed", str(args.seed)]
    for flag, value in (("--init", args.init), ("--ruleset", args.ruleset)):
        if value:
            words += [flag, value]
    return shlex.join(words)


def cmd_tune(args) -> int:
    try:
        if args.games < 1:
            raise CommandError(f"--games must be >= 1, got {args.games}")
        if args.generations < 1 or args.population < 4:
            raise CommandError(f"need --generations >= 1 and --population >= 4, got "
                               f"{args.generations} and {args.population}")
        tn.check_output_file(args.out, "--out")
        init = load_weights(args.init) if args.init else None
        ruleset = load_ruleset(args.ruleset)
    except (CommandError, ValueError) as e:
        print(f"caledonia tune-weights: error: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    starts = tune_weights.solo_starts(args.seed, args.games, args.ruleset)

    def progress(gen, row):
        if not args.quiet:
            print(f"generation {gen + 1}/{args.generations}: mean {row['mean_fitness']:.2f} VP, "
                  f"best {row['best']:.2f}, elite {row['elite']:.2f} ({row['seconds']:.0f} s)",
                  file=sys.stderr, flush=True)

    result = tune_weights.tune(starts, args.generations, args.population, args.seed, init,
                               progress)
    start_vp, tuned_vp = result["start_fitness"], result["fitness"]
    save_weights(args.out, result["weights"],
                 command=command_line(args),
                 made=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                 ruleset_fingerprint=ruleset.fingerprint(), seed=args.seed, games=args.games,
                 generations=args.generations, population=args.population,
                 start_mean_vp=start_vp, tuned_mean_vp=tuned_vp,
                 history=result["history"])
    print(f"greedy's mean solo VP on the {args.games} tuning games: {start_vp:.2f} -> "
          f"{tuned_vp:.2f} ({time.perf_counter() - t0:.0f} s); weights written to {args.out}")
    return 0
