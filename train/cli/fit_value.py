"""``caledonia fit-value``: the learned afterstate value of one player count
(:mod:`train.fit_value`), written as a value file (:mod:`agents.afterstate_value`) that
``vmcts:N:FILE`` plays with; prints the held-out R² by round beside the hand-written
evaluation's."""
from __future__ import annotations

import argparse
import datetime
import shlex
import sys
import time

from caledonia_env import tournament as tn
from caledonia_env.agents.afterstate_value import load_value, save_value
from caledonia_env.agents.weights import load_weights
from caledonia_env.train import fit_value
from caledonia_env.train.cli.common import CommandError, parse_int

FIT_EXAMPLES = """\
examples:
  caledonia fit-value --players 2 --out value_2p.npz            # 20,000 games, ~4 min
  caledonia fit-value --players 4 --games 12000 --out value_4p.npz
  caledonia fit-value --players 2 --games 500 --epochs 5 --out quick.npz
then: caledonia play --players vmcts:16:value_2p.npz,greedy:2p --games 200

The shipped files (agents/pretrained/value_Np.npz, played by vmcts) are runs of this command;
their model cards give each command and its held-out fit.
"""


def add_fit_value_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "fit-value", help="fit the learned afterstate value that vmcts's rollouts end on",
        description="Play --games greedy games (clans drafted, every seat with --weights), "
                    "keep every seat's features at the start of every round, and fit a small "
                    "MLP to each seat's final margin (own VP minus the best opponent's). The "
                    "last tenth of the games is held out: the R² by round is printed beside "
                    "that of the hand-written evaluation's margin, which the network replaces "
                    "at the leaves of vmcts's rollouts. docs/agents.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=FIT_EXAMPLES)
    p.add_argument("--out", "-o", required=True, metavar="FILE.npz", help="value file to write")
    p.add_argument("--players", type=parse_int, default=2, help="1 (solo) to 4 (default 2)")
    p.add_argument("--games", type=parse_int, default=20000, help="games played (default 20000)")
    p.add_argument("--seed", type=parse_int, default=0,
                   help="game g is set up from (seed, g) (default 0)")
    p.add_argument("--weights", default=None, metavar="WEIGHTS",
                   help="the greedy weights of every seat and of the evaluation features "
                        "(default: the tuned set of the player count, e.g. 2p; solo: solo)")
    p.add_argument("--hidden", type=parse_int, default=64, help="units per layer (default 64)")
    p.add_argument("--epochs", type=parse_int, default=40, help="default 40")
    p.add_argument("--ruleset", default=None, metavar="PATH",
                   help="ruleset override file (default: the bundled ruleset)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_fit_value)
    return p


def command_line(args) -> str:
    words = ["caledonia", "fit-value", "--out", args.out, "--players", str(args.players),
             "--games", str(args.games), "--seed", str(args.seed), "--hidden",
             str(args.hidden), "--epochs", str(args.epochs)]
    for flag, value in (("--weights", args.weights), ("--ruleset", args.ruleset)):
        if value:
            words += [flag, value]
    return shlex.join(words)


def _check(args) -> str:
    if not 1 <= args.players <= 4:
        raise CommandError(f"--players must be 1 (solo) to 4, got {args.players}")
    if args.games < 10:
        raise CommandError(f"--games must be >= 10 (a tenth is held out), got {args.games}")
    if args.hidden < 1 or args.epochs < 1:
        raise CommandError("--hidden and --epochs must be >= 1")
    if not args.out.endswith(".npz"):
        raise CommandError(f"--out must name a .npz file, got {args.out!r}")
    tn.check_output_file(args.out, "--out")
    return args.weights or ("solo" if args.players == 1 else f"{args.players}p")


def cmd_fit_value(args) -> int:
    try:
        weights_name = _check(args)
        weights = load_weights(weights_name)
    except (CommandError, ValueError) as e:
        print(f"caledonia fit-value: error: {e}", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
    except ImportError:
        print("caledonia fit-value: error: needs torch (pip install 'caledonia-env[train]')",
              file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    say = (lambda *a: None) if args.quiet else (lambda text: print(text, flush=True))
    every = max(1, args.games // 10)

    def progress(g, games, seconds):
        if g % every == 0 or g == games:
            say(f"games {g}/{games}  {seconds:.0f} s")

    samples = fit_value.value_samples(args.players, args.games, args.seed, weights,
                                      args.ruleset, progress)
    train, test = fit_value.split(samples)
    say(f"{len(samples['y'])} samples ({int(train.sum())} to train, {int(test.sum())} held "
        f"out by game)")
    arrays = fit_value.fit(samples, train, hidden=args.hidden, epochs=args.epochs,
                           seed=args.seed,
                           log=lambda e, n, mse: say(f"epoch {e}/{n}  train RMSE "
                                                     f"{mse ** 0.5:.2f} VP")
                           if e % 10 == 0 or e == n else None)
    report = fit_value.fit_report(arrays, samples, test)
    print(f"held-out fit ({int(test.sum())} positions): R² of the value | of the hand-written "
          f"evaluation's margin, RMSE in VP")
    for r in report:
        print(f"  round {r['round']!s:>3}  n {r['n']:>6}  R² {r['r2_value']:6.3f} | "
              f"{r['r2_evaluation']:6.3f}   RMSE {r['rmse_value']:5.1f} | "
              f"{r['rmse_evaluation']:5.1f}")
    save_value(args.out, arrays, weights, args.players, command=command_line(args),
               weights_name=weights_name, games=args.games, seed=args.seed,
               samples=int(len(samples["y"])), report=report,
               date=datetime.date.today().isoformat(),
               seconds=round(time.perf_counter() - t0, 1))
    load_value(args.out)                    # the file reads back
    print(f"value written to {args.out} ({time.perf_counter() - t0:.0f} s)")
    return 0
