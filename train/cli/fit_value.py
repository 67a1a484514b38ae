"""``caledonia fit-value``: the learned afterstate value of one player count
(:mod:`train.fit_value`), written as a value file (:mod:`agents.afterstate_value`) that
``vmcts:N:FILE`` plays with. ``--loss mse`` (default) prints the held-out R² by round beside the
hand-written evaluation's; ``--loss listwise`` fits to the search's sibling rollouts (labels
file) and prints the held-out sibling ranking beside the hand-written margin's."""
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
  caledonia fit-value --loss listwise --labels labels_2p.npz --games 100 --out lw_2p.npz
      # labels: 100 self-play games of mcts:16h1:2p, every rollout leaf kept (~25 s a game;
      # rerun with a larger --games to add games to the same labels file)
then: caledonia play --players vmcts:16:value_2p.npz,greedy:2p --games 200

The shipped files (agents/pretrained/value_Np.npz, played by vmcts) are runs of this command;
their model cards give each command and its held-out fit.
"""


def add_fit_value_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "fit-value", help="fit the learned afterstate value that vmcts's rollouts end on",
        description="--loss mse (default): play --games greedy games (clans drafted, every "
                    "seat with --weights), keep every seat's features at the start of every "
                    "round, and fit a small MLP to each seat's final margin (own VP minus the "
                    "best opponent's). The last tenth of the games is held out: the R² by "
                    "round is printed beside that of the hand-written evaluation's margin, "
                    "which the network replaces at the leaves of vmcts's rollouts. --loss "
                    "listwise: fit to the search's sibling rollouts instead (below). "
                    "docs/agents.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=FIT_EXAMPLES)
    p.add_argument("--out", "-o", required=True, metavar="FILE.npz", help="value file to write")
    p.add_argument("--players", type=parse_int, default=2, help="1 (solo) to 4 (default 2)")
    p.add_argument("--games", type=parse_int, default=None,
                   help="games played (default 20000; listwise: label games, default 100)")
    p.add_argument("--seed", type=parse_int, default=0,
                   help="game g is set up from (seed, g) (default 0)")
    p.add_argument("--weights", default=None, metavar="WEIGHTS",
                   help="the greedy weights of every seat and of the evaluation features "
                        "(default: the tuned set of the player count, e.g. 2p; solo: solo)")
    p.add_argument("--hidden", type=parse_int, default=64, help="units per layer (default 64)")
    p.add_argument("--epochs", type=parse_int, default=None, help="default 40 (listwise 30)")
    lw = p.add_argument_group(
        "listwise fit (--loss listwise)",
        "Self-play games of the flat search --label-agent keep every rollout of every searched "
        "decision: its leaf's features and that rollout played on to the end of the game with "
        "the greedy bot. The siblings of one search call (candidates on the same "
        "determinizations) are ranked by those played-on margins; the network learns that "
        "ranking of their leaves (ListNet, softmax cross-entropy at temperature --tau) plus "
        "--anchor times the squared error to the played-on margin. The last tenth of the "
        "label games is held out: Kendall tau, top-1 agreement and regret of the sibling "
        "ranking are printed for the hand-written margin, the shipped value and this one.")
    lw.add_argument("--loss", choices=("mse", "listwise"), default="mse",
                    help="mse: final margins at round starts of greedy games (default); "
                         "listwise: the search's sibling rollouts (needs --labels)")
    lw.add_argument("--labels", metavar="FILE.npz", default=None,
                    help="labels file: read, extended to --games games (resumed: saved every "
                         "5 games) and kept")
    lw.add_argument("--label-agent", default=None, metavar="AGENT",
                    help="the labelling search (default mcts:16h1:WEIGHTS, e.g. mcts:16h1:2p)")
    lw.add_argument("--tau", type=float, default=4.0, help="softmax temperature, VP (default 4)")
    lw.add_argument("--anchor", type=float, default=0.1,
                    help="weight of the squared-error anchor (default 0.1)")
    lw.add_argument("--init", default=None, metavar="VALUE.npz",
                    help="start from this value file (e.g. the MSE-fitted one; default: fresh)")
    p.add_argument("--ruleset", default=None, metavar="PATH",
                   help="ruleset override file (default: the bundled ruleset)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_fit_value)
    return p


def command_line(args) -> str:
    words = ["caledonia", "fit-value", "--out", args.out, "--players", str(args.players),
             "--games", str(args.games), "--seed", str(args.seed), "--hidden",
             str(args.hidden), "--epochs", str(args.epochs)]
    if args.loss == "listwise":
        words += ["--loss", "listwise", "--labels", args.labels, "--tau", str(args.tau),
                  "--anchor", str(args.anchor)]
        if args.label_agent:
            words += ["--label-agent", args.label_agent]
        if args.init:
            words += ["--init", args.init]
    for flag, value in (("--weights", args.weights), ("--ruleset", args.ruleset)):
        if value:
            words += [flag, value]
    return shlex.join(words)


def _check(args) -> str:
    listwise = args.loss == "listwise"
    if args.games is None:
        args.games = 100 if listwise else 20000
    if args.epochs is None:
        args.epochs = 30 if listwise else 40
    if listwise and not args.labels:
        raise CommandError("--loss listwise needs --labels FILE.npz (read, extended and kept)")
    if not listwise and (args.labels or args.init or args.label_agent):
        raise CommandError("--labels, --init and --label-agent are for --loss listwise")
    if listwise and not args.labels.endswith(".npz"):
        raise CommandError(f"--labels must name a .npz file, got {args.labels!r}")
    if not args.tau > 0 or args.anchor < 0:
        raise CommandError("--tau must be > 0 and --anchor >= 0")
    if not 1 <= args.players <= 4:
        raise CommandError(f"--players must be 1 (solo) to 4, got {args.players}")
    if args.games < (2 if listwise else 10):
        raise CommandError(f"--games must be >= {2 if listwise else 10} (a tenth is held "
                           f"out), got {args.games}")
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
    if args.loss == "listwise":
        try:
            return _listwise(args, weights_name, weights, say, t0)
        except ValueError as e:
            print(f"caledonia fit-value: error: {e}", file=sys.stderr)
            return 2

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


def _listwise(args, weights_name: str, weights, say, t0) -> int:
    """``--loss listwise``: labels (extended to --games), fit, held-out ranking, file."""
    import numpy as np

    init = load_value(args.init) if args.init else None
    if init is not None and init.players != args.players:
        raise ValueError(f"--init {args.init} values {init.players}-player games")
    agent = args.label_agent or f"mcts:16h1:{weights_name}"
    every = max(1, args.games // 20)

    def progress(g, games, seconds):
        if g % every == 0 or g == games:
            say(f"label games {g}/{games}  {seconds:.0f} s")

    labels = fit_value.search_labels(args.players, args.games, args.seed, agent, weights,
                                     args.ruleset, path=args.labels, command=command_line(args),
                                     progress=progress)
    games = np.arange(labels["meta"]["games"])
    if len(games) > args.games:
        say(f"{args.labels} holds {len(games)} games: fitting on the first {args.games}")
        games = games[:args.games]
    cut = max(1, int(round(len(games) * 0.1)))
    train_g, test_g = games[:-cut], games[-cut:]
    train = fit_value.sibling_groups(labels, train_g)
    test = fit_value.sibling_groups(labels, test_g)
    say(f"{len(train['group_start']) - 1} sibling groups ({len(train['rows'])} leaves) to "
        f"train from {len(train_g)} games, {len(test['group_start']) - 1} held out from "
        f"{len(test_g)}")
    arrays = fit_value.fit_listwise(
        labels, train, hidden=args.hidden, epochs=args.epochs, tau=args.tau,
        anchor=args.anchor, init=None if init is None else init.arrays, seed=args.seed,
        log=lambda e, n, lw, mse: say(f"epoch {e}/{n}  listwise {lw:.4f}  anchor RMSE "
                                      f"{mse ** 0.5:.1f} VP") if e % 5 == 0 or e == n else None)
    nets = {}
    try:
        nets["shipped value (MSE)"] = load_value(args.players).arrays
    except ValueError:
        pass
    if init is not None:
        nets[f"--init {args.init}"] = init.arrays
    nets["this value (listwise)"] = arrays
    report = fit_value.listwise_report(labels, test, nets)
    print(f"held-out sibling ranking ({report[0]['groups']} groups of {len(test_g)} games) "
          f"against the played-on margins: Kendall tau, top-1 agreement, regret (VP), "
          f"leaf RMSE (VP)")
    for r in report:
        print(f"  {r['what']:<34} tau {r['kendall']:6.3f}  top-1 {r['top1']:6.3f}  regret "
              f"{r['regret']:5.2f}  RMSE {r['rmse']:5.1f}")
    save_value(args.out, arrays, weights, args.players, command=command_line(args),
               loss="listwise", weights_name=weights_name, label_agent=agent,
               label_games=int(len(games)), seed=args.seed, tau=args.tau, anchor=args.anchor,
               init=args.init, leaves=int(len(train["rows"])), report=report,
               date=datetime.date.today().isoformat(),
               seconds=round(time.perf_counter() - t0, 1))
    load_value(args.out)
    print(f"value written to {args.out} ({time.perf_counter() - t0:.0f} s)")
    return 0
