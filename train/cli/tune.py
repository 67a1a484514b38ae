"""``caledonia tune-weights``: the greedy evaluation's weights tuned for one player count
(:mod:`train.tune_weights`), written as a weights file (:mod:`agents.weights`); the search's
state is saved after every generation beside it (``FILE.state.json``) for ``--resume``."""
from __future__ import annotations

import argparse
import datetime
import json
import shlex
import sys
import time

import numpy as np

from caledonia_env import tournament as tn
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS
from caledonia_env.agents.weights import load_weights, save_weights
from caledonia_env.atomic import atomic_path
from caledonia_env.data.safe_io import InputError, parse_json, read_bytes
from caledonia_env.data import load_ruleset
from caledonia_env.train import tune_weights
from caledonia_env.train.cli.common import CommandError, parse_int

TUNE_EXAMPLES = """\
examples:
  caledonia tune-weights --out solo.json       # solo: 20 generations x 20 vectors x 400 games
  caledonia tune-weights --players 4 --init solo --out 4p.json    # against greedy and solo
  caledonia tune-weights --players 4 --init solo --out 4p.json --resume  # after a stop
  caledonia tune-weights --players 2 --minutes 10 --out 2p.json   # stop after 10 minutes
  caledonia tune-weights --games 100 --generations 5 --out quick.json
then: caledonia play --solo --players greedy:solo.json --games 200
      caledonia play --players greedy:4p.json,greedy,greedy,greedy --games 400 --seed 9

The shipped sets (greedy:solo, greedy:2p, greedy:3p, greedy:4p, mcts:N:SET) are runs of this
command (their model cards in agents/pretrained/ give each command).
"""


def add_tune_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "tune-weights", help="tune the greedy bot's evaluation weights for a player count",
        description="The cross-entropy method over the greedy evaluation's weights "
                    "(agents.greedy_value) on the same --games games (clans drafted). Solo: "
                    "the fitness of a weight vector is the greedy bot's mean final VP. 2-4 "
                    "players: its win share (ties split) plus 0.002 x its mean margin over the "
                    "best opponent, in a rotating seat, the other seats played by the "
                    "--opponents weights and the last generation's mean. Writes a weights "
                    "file that greedy:FILE and mcts:N:FILE play with, and after every "
                    "generation the search's state (FILE.state.json), from which --resume "
                    "goes on exactly. A line per generation shows its progress. "
                    "docs/agents.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=TUNE_EXAMPLES)
    p.add_argument("--out", "-o", required=True, metavar="FILE.json",
                   help="weights file to write, e.g. --out solo.json")
    p.add_argument("--players", type=parse_int, default=1,
                   help="1 (the solo game, default) to 4")
    p.add_argument("--opponents", default="greedy,solo", metavar="W[,W]",
                   help="2-4 players: the fixed opponents' weights, 'greedy' (the default "
                        "weights), a shipped set's name or a weights file (default greedy,solo)")
    p.add_argument("--games", type=parse_int, default=400,
                   help="games every vector plays (default 400)")
    p.add_argument("--generations", type=parse_int, default=20, help="default 20")
    p.add_argument("--population", type=parse_int, default=20,
                   help="vectors per generation, >= 4 (default 20)")
    p.add_argument("--seed", type=parse_int, default=31337,
                   help="game g is set up from (seed, g); also seeds the search (default 31337)")
    p.add_argument("--init", default=None, metavar="WEIGHTS",
                   help="start from these weights (a file, or 'solo'; default: the greedy bot's)")
    p.add_argument("--ruleset", default=None, metavar="PATH",
                   help="ruleset override file (default: the bundled ruleset)")
    p.add_argument("--minutes", type=float, default=None,
                   help="stop after the generation that passes this many minutes; the "
                        "weights so far are written and --resume goes on")
    p.add_argument("--resume", action="store_true",
                   help="go on from FILE.state.json (the same options, else an error naming "
                        "the difference)")
    p.add_argument("-q", "--quiet", action="store_true", help="no line per generation")
    p.set_defaults(func=cmd_tune)
    return p


def command_line(args) -> str:
    """The command that writes this file again: every option spelled out."""
    words = ["caledonia", "tune-weights", "--out", args.out]
    if args.players > 1:
        words += ["--players", str(args.players), "--opponents", args.opponents]
    words += ["--games", str(args.games), "--generations", str(args.generations),
              "--population", str(args.population), "--seed", str(args.seed)]
    for flag, value in (("--init", args.init), ("--ruleset", args.ruleset)):
        if value:
            words += [flag, value]
    return shlex.join(words)


def state_path(out: str) -> str:
    """The search's state file beside the weights file ``out``."""
    return (out[:-5] if out.endswith(".json") else out) + ".state.json"


def opponent_weights(text: str) -> list[np.ndarray]:
    """The --opponents list: 'greedy' is the default weights, else a set's name or a file."""
    names = [x.strip() for x in text.split(",") if x.strip()]
    if not names:
        raise CommandError("--opponents: name at least one weight set (greedy, solo or a file)")
    return [DEFAULT_WEIGHTS.copy() if n == "greedy" else load_weights(n) for n in names]


#: the options a resumed run must share with the run that wrote the state
RESUME_KEYS = ("players", "opponents", "games", "population", "seed", "init", "ruleset")


def read_state(args) -> dict:
    """The saved search state of ``args.out`` for --resume; CommandError if it is missing or
    was written by a run with other options."""
    path = state_path(args.out)
    try:
        saved = parse_json(read_bytes(path))
    except (OSError, InputError) as e:
        raise CommandError(f"--resume: cannot read {path}: {e}") from None
    if not isinstance(saved, dict) or "state" not in saved or "options" not in saved:
        raise CommandError(f"--resume: {path} is not a tune-weights state file")
    for key in RESUME_KEYS:
        if saved["options"].get(key) != getattr(args, key):
            raise CommandError(f"--resume: {path} was written with --{key} "
                               f"{saved['options'].get(key)!r}, this run has "
                               f"{getattr(args, key)!r}")
    return saved["state"]


def write_state(args, state: dict) -> None:
    path = state_path(args.out)
    with atomic_path(path, ".json") as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"options": {k: getattr(args, k) for k in RESUME_KEYS},
                       "state": state}, f)


def cmd_tune(args) -> int:
    try:
        if args.games < 1:
            raise CommandError(f"--games must be >= 1, got {args.games}")
        if args.generations < 1 or args.population < 4:
            raise CommandError(f"need --generations >= 1 and --population >= 4, got "
                               f"{args.generations} and {args.population}")
        if not 1 <= args.players <= 4:
            raise CommandError(f"--players must be 1 (solo) to 4, got {args.players}")
        if args.minutes is not None and not args.minutes > 0:
            raise CommandError(f"--minutes must be > 0, got {args.minutes}")
        if not args.resume:
            tn.check_output_file(args.out, "--out")
        init = load_weights(args.init) if args.init else None
        opponents = opponent_weights(args.opponents) if args.players > 1 else []
        ruleset = load_ruleset(args.ruleset)
        state = read_state(args) if args.resume else None
    except (CommandError, ValueError) as e:
        print(f"caledonia tune-weights: error: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    starts = tune_weights.game_starts(args.seed, args.games, args.players, args.ruleset)
    unit = "VP" if args.players == 1 else ""

    def progress(gen, row):
        if not args.quiet:
            print(f"generation {gen + 1}/{args.generations}: mean {row['mean_fitness']:.3f}"
                  f"{unit and ' ' + unit}, best {row['best']:.3f}, elite {row['elite']:.3f} "
                  f"({row['seconds']:.0f} s)", file=sys.stderr, flush=True)

    if state is not None and not args.quiet:
        print(f"resuming after generation {state['generation']} of {args.generations} "
              f"({state_path(args.out)})", file=sys.stderr)
    deadline = time.monotonic() + 60 * args.minutes if args.minutes else None
    result = tune_weights.tune(starts, args.generations, args.population, args.seed, init,
                               progress, opponents=opponents, state=state,
                               checkpoint=lambda st: write_state(args, st), deadline=deadline)
    start_fit, tuned_fit = result["start_fitness"], result["fitness"]
    what = "mean solo VP" if args.players == 1 else \
        f"{args.players}-player fitness (win share + margin term)"
    meta = dict(command=command_line(args),
                made=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                ruleset_fingerprint=ruleset.fingerprint(), players=args.players,
                seed=args.seed, games=args.games, generations=args.generations,
                population=args.population, generations_run=len(result["history"]))
    if args.players == 1:
        meta.update(start_mean_vp=start_fit, tuned_mean_vp=tuned_fit)
    else:
        meta.update(opponents=args.opponents, start_fitness=start_fit, tuned_fitness=tuned_fit)
    save_weights(args.out, result["weights"], **meta, history=result["history"])
    done = "" if result["done"] else (
        f"; stopped after generation {len(result['history'])} of {args.generations} "
        f"(--minutes): go on with the same command and --resume")
    print(f"greedy's {what} on the {args.games} tuning games: {start_fit:.3f} -> "
          f"{tuned_fit:.3f} ({time.perf_counter() - t0:.0f} s); weights written to "
          f"{args.out}{done}")
    return 0
