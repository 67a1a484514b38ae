"""``caledonia fit-qpolicy``: the learned policy over the greedy evaluation (:mod:`agents.qpolicy`)
distilled from the flat search by DAgger (:mod:`train.fit_qpolicy`), written as a policy file
that ``qpolicy:FILE`` plays."""
from __future__ import annotations

import argparse
import datetime
import os
import shlex
import sys
import time

from caledonia_env import tournament as tn
from caledonia_env.agents.qpolicy import QPolicy, load_qpolicy, save_qpolicy
from caledonia_env.agents.weights import load_weights
from caledonia_env.train.cli.common import CommandError, parse_int

FIT_EXAMPLES = """\
examples:
  caledonia fit-qpolicy --out qpolicy_2p.npz --records runs/qp --iterations 2 --games 200
  caledonia fit-qpolicy --players 3 --out qpolicy_3p.npz --records runs/qp3 --games 80
  caledonia fit-qpolicy --out quick.npz --records /tmp/qp --iterations 1 --games 4 --epochs 2
then: caledonia play --players qpolicy:qpolicy_2p.npz,greedy:2p --games 100

Iteration i plays --games games of --players N seats of seed --seed + i with the policy fitted
so far (iteration 0: the untrained policy, which is greedy:Np), labels every searched decision
of every seat, writes RECORDS/iter<i>.npz and refits on all the records. A record file that
exists is read instead of played again, so a run that stopped resumes (and a rerun only
refits). The policy file records N and plays only N-player games. The shipped files
(agents/pretrained/qpolicy_<N>p.npz, which the agent qpolicy plays by the game's player count)
are runs of this command; their model cards give them.
"""


def _positive_float(text: str) -> float:
    v = float(text)
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return v


def add_fit_qpolicy_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "fit-qpolicy", help="distil the flat search into qpolicy, a fast learned policy over the "
                            "greedy evaluation (DAgger, Gumbel-top-k labels)",
        description="DAgger: the current policy plays --players N games (clans drafted, every seat), "
                    "the teacher labels its searched decisions (Gumbel-top-k candidates on the "
                    "policy's logits, each scored by greedy rollouts of --horizon rounds ending "
                    "on the hand-written margin over the best opponent, as mcts:16h1:Np), and "
                    "the policy is refitted "
                    "by cross-entropy to the completed-Q improved policy (Danihelka et al. "
                    "2022). The last tenth of the games is held out. docs/agents.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=FIT_EXAMPLES)
    p.add_argument("--out", "-o", required=True, metavar="FILE.npz", help="policy file to write")
    p.add_argument("--records", required=True, metavar="DIR",
                   help="folder of the label records (iter<i>.npz; existing ones are reused)")
    p.add_argument("--iterations", type=parse_int, default=2, help="DAgger iterations (default 2)")
    p.add_argument("--games", type=parse_int, default=200,
                   help="games labelled per iteration (default 200)")
    p.add_argument("--seed", type=parse_int, default=0,
                   help="iteration i plays the games of seed + i (default 0)")
    p.add_argument("--candidates", type=parse_int, default=8,
                   help="Gumbel-top-k candidates per decision (default 8)")
    p.add_argument("--rollouts", type=parse_int, default=2,
                   help="rollouts per candidate, common determinizations (default 2)")
    p.add_argument("--horizon", type=parse_int, default=1, help="rollout rounds (default 1)")
    p.add_argument("--q-temp", type=_positive_float, default=1.0,
                   help="VP of completed Q per nat of the improved policy (default 1.0)")
    p.add_argument("--players", type=parse_int, default=2, choices=(2, 3, 4), metavar="N",
                   help="players per game, 2-4 (default 2); the policy file records it")
    p.add_argument("--weights", default=None, metavar="WEIGHTS",
                   help="the greedy evaluation's weights (default Np, the tuned set of "
                        "--players N: greedy:Np)")
    p.add_argument("--hidden", type=parse_int, default=64, help="hidden units (default 64)")
    p.add_argument("--epochs", type=parse_int, default=30, help="default 30")
    p.add_argument("--ruleset", default=None, metavar="PATH",
                   help="ruleset override file (default: the bundled ruleset)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_fit_qpolicy)
    return p


def command_line(args) -> str:
    words = ["caledonia", "fit-qpolicy", "--out", args.out, "--records", args.records]
    for flag in ("players", "iterations", "games", "seed", "candidates", "rollouts", "horizon",
                 "q_temp", "weights", "hidden", "epochs", "ruleset"):
        value = getattr(args, flag)
        if value is not None:
            words += ["--" + flag.replace("_", "-"), str(value)]
    return shlex.join(words)


def _check(args) -> None:
    for flag in ("iterations", "games", "candidates", "rollouts", "horizon", "hidden", "epochs"):
        if getattr(args, flag) < 1:
            raise CommandError(f"--{flag} must be >= 1, got {getattr(args, flag)}")
    if args.candidates < 2:
        raise CommandError(f"--candidates must be >= 2, got {args.candidates}")
    if not args.out.endswith(".npz"):
        raise CommandError(f"--out must name a .npz file, got {args.out!r}")
    tn.check_output_file(args.out, "--out")


def cmd_fit_qpolicy(args) -> int:
    try:
        _check(args)
        if args.weights is None:
            args.weights = f"{args.players}p"
        weights = load_weights(args.weights)
    except (CommandError, ValueError) as e:
        print(f"caledonia fit-qpolicy: error: {e}", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
    except ImportError:
        print("caledonia fit-qpolicy: error: needs torch (pip install 'caledonia-env[train]')",
              file=sys.stderr)
        return 2
    from caledonia_env.train import fit_qpolicy as fq

    t0 = time.perf_counter()
    say = (lambda *a: None) if args.quiet else (lambda text: print(text, flush=True))
    os.makedirs(args.records, exist_ok=True)
    policy = QPolicy.zero(weights, hidden=args.hidden, seed=args.seed, players=args.players)
    sets, fits = [], []
    for it in range(args.iterations):
        path = os.path.join(args.records, f"iter{it}.npz")
        if os.path.exists(path):
            if fq.records_players(path) != args.players:
                print(f"caledonia fit-qpolicy: error: {path} holds "
                      f"{fq.records_players(path)}-player games, not {args.players}-player "
                      f"ones: give another --records folder", file=sys.stderr)
                return 2
            rec = fq.load_records(path)
            say(f"iteration {it}: {len(rec['n_legal'])} decisions read from {path}")
        else:
            every = max(1, args.games // 10)

            def progress(g, games, seconds, k, it=it):
                if g % every == 0 or g == games:
                    say(f"iteration {it}: games {g}/{games}  {seconds:.0f} s")

            rec = fq.label_games(policy, args.games, args.seed + it, args.candidates,
                                 args.rollouts, args.horizon, args.ruleset, progress)
            fq.save_records(path, rec, players=args.players, seed=args.seed + it, games=args.games, iteration=it,
                            candidates=args.candidates, rollouts=args.rollouts,
                            horizon=args.horizon)
            say(f"iteration {it}: {len(rec['n_legal'])} decisions labelled, written to {path}")
        sets.append(rec)
        records = fq.merge(sets)
        train, test = fq.split(records)
        policy = fq.fit(records, train, weights, hidden=args.hidden, epochs=args.epochs,
                        q_temp=args.q_temp, seed=args.seed, players=args.players,
                        log=lambda e, n, ce: say(f"  epoch {e}/{n}  train cross-entropy "
                                                 f"{ce:.4f}") if e % 10 == 0 or e == n else None)
        report = fq.evaluate_fit(policy, records, test, args.q_temp)
        fits.append(report)
        say(f"iteration {it}: held-out {report['decisions']} decisions: cross-entropy "
            f"{report['ce']:.4f} (greedy {report['ce_greedy']:.4f}), argmax = the improved "
            f"policy's {100 * report['agree']:.1f}% (greedy {100 * report['agree_greedy']:.1f}%)")
    save_qpolicy(args.out, policy, command=command_line(args), players=args.players,
                 games=args.games,
                 iterations=args.iterations, seeds=[args.seed + i for i in range(args.iterations)],
                 decisions=int(len(records["n_legal"])), fits=fits,
                 date=datetime.date.today().isoformat(),
                 seconds=round(time.perf_counter() - t0, 1))
    load_qpolicy(args.out)                  # the file reads back
    print(f"policy written to {args.out} ({time.perf_counter() - t0:.0f} s)")
    return 0
