"""``caledonia expert``: expert iteration (:mod:`train.expert`)."""
from __future__ import annotations

import argparse
import json
import os
import sys

from caledonia_env import tournament as tn
from caledonia_env.agents.checkpoint import CheckpointError
from caledonia_env.agents.policy import checkpoint_path
from caledonia_env.config import MULTIPLAYER_COUNTS
from caledonia_env.train import expert
from caledonia_env.train.cli.common import parse_int

EXPERT_EXAMPLES = """\
examples:
  caledonia expert --from pretrained --players 2 --sims 32 --minutes 20 --workers 2 --out runs/ei1
  caledonia expert --from runs/ei1/expert.zip --players 2 --games 500 --out runs/ei2
  caledonia expert --data runs/ei1/data.npz --from pretrained --players 2 --tau 1 --out runs/ei1b
  caledonia expert --expert nmctsg --vs greedy --sims 64 --players 4 --minutes 30 --workers 2 --out runs/d4
  caledonia expert --expert nmctsg --horizon 2 --dagger --vs greedy --sims 64 --minutes 60 --workers 2 --out runs/dg2
  caledonia expert --data runs/dg2/data.npz --from pretrained --anchor 0.5 --lr 3e-4 --epochs 5 --out runs/dg2b
  caledonia expert --from runs/dg2b/expert.zip --search-net pretrained --expert nmctsg --horizon 2 --dagger --vs greedy --sims 64 --minutes 60 --workers 2 --out runs/dg3
then: caledonia play --players ppo:runs/ei1/expert.zip,greedy --games 400
"""


def add_expert_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "expert", help="expert iteration: train the policy toward a search's choices",
        description="Play games with a search (--expert: puct, nmcts or nmctsg, SIMS "
                    "simulations or rollouts) on a checkpoint, in every seat or against --vs "
                    "(clans drafted), keep what the search preferred at each of its searched "
                    "decisions (puct's root visit counts, the flat searches' chosen action; "
                    "OUT/data.npz), then fine-tune the checkpoint's policy toward them, the "
                    "value head held to its old values (OUT/expert.zip, OUT/expert.json). "
                    "The result plays as ppo:PATH and puct:SIMS:PATH. docs/training.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXPERT_EXAMPLES)
    p.add_argument("--from", dest="source", default="pretrained",
                   help="checkpoint to search with and to fine-tune (default: the shipped "
                        "policy for --players), e.g. --from runs/x/best.zip")
    p.add_argument("--out", required=True, help="output folder, e.g. --out runs/ei1")
    p.add_argument("--players", type=int, default=2, choices=MULTIPLAYER_COUNTS,
                   help="players per game (default 2)")
    p.add_argument("--expert", default="puct", choices=expert.EXPERTS,
                   help="the search to distil (default puct; nmctsg is the strongest against "
                        "the bots, docs/training.md)")
    p.add_argument("--vs", default=None, metavar="AGENT",
                   help="the expert plays one seat (rotated) against this agent in the others, "
                        "e.g. --vs greedy (default: the expert in every seat)")
    p.add_argument("--sims", type=parse_int, default=32,
                   help="simulations (puct) or rollouts (nmcts, nmctsg) per decision "
                        "(default 32)")
    p.add_argument("--horizon", type=parse_int, default=0,
                   help="nmcts/nmctsg: rollouts stop after this many rounds and are valued "
                        "by the greedy evaluation, as in nmctsg:64h2 (default 0: to the end)")
    p.add_argument("--dagger", action="store_true",
                   help="the --from policy moves in the expert seats and the search only "
                        "labels the positions it reaches (DAgger)")
    p.add_argument("--search-net", default=None, metavar="PATH",
                   help="checkpoint the search runs on (default: --from), e.g. a fixed "
                        "expert while --from is the policy being improved; 'pretrained': the "
                        "shipped searches' network")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--games", type=parse_int, default=None,
                        help="games to play, e.g. --games 500")
    budget.add_argument("--minutes", type=float, default=None,
                        help="start games for this long (default 10)")
    p.add_argument("--data", default=None, nargs="+", metavar="NPZ",
                   help="reuse the data of earlier runs (data.npz; several are joined) "
                        "instead of playing")
    p.add_argument("--workers", type=parse_int, default=1, help="game processes (default 1)")
    p.add_argument("--noise", type=float, default=0.25,
                   help="Dirichlet noise share of puct's root prior (default 0.25)")
    p.add_argument("--epochs", type=parse_int, default=3, help="passes over the data (default 3)")
    p.add_argument("--lr", type=float, default=1e-4, help="Adam learning rate (default 1e-4)")
    p.add_argument("--tau", type=float, default=0.25,
                   help="target temperature: the policy learns N(a)^(1/tau), normalized "
                        "(default 0.25: sharper than the raw visits; 1: the visits)")
    p.add_argument("--margin-temp", type=float, default=0.0, metavar="VP",
                   help="nmcts/nmctsg data: learn the softmax of the candidates' mean "
                        "rollout margins at this temperature (VP) instead of the chosen "
                        "action (default 0: the choice)")
    p.add_argument("--anchor", type=float, default=0.0,
                   help="share of the target taken from the source policy's own "
                        "distribution, in [0, 1) (default 0: the search's preference only)")
    p.add_argument("--value-weight", type=float, default=1.0,
                   help="weight of the term holding the value head to its old values")
    p.add_argument("--seed", type=parse_int, default=0, help="self-play and training seed")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_expert)
    return p


def _options(args) -> dict:
    """The command's options as given (the report's ``args``), without the CLI's own
    objects (the command function, the first-run notice)."""
    return {k: v for k, v in vars(args).items() if k not in ("func", "compile_progress")}


def cmd_expert(args) -> int:
    try:
        tn.check_output_folder(args.out, "--out")
        os.makedirs(args.out, exist_ok=True)
        source = checkpoint_path(args.source, args.players)
        if args.data:
            data = expert.load_data(*args.data)
        else:
            minutes = args.minutes if args.games is None and args.minutes is not None else \
                (10.0 if args.games is None else None)
            data = expert.collect(source, args.players, args.sims, games=args.games,
                                  minutes=minutes, seed=args.seed, workers=args.workers,
                                  noise=args.noise, quiet=args.quiet, expert=args.expert,
                                  vs=args.vs, horizon=args.horizon, dagger=args.dagger,
                                  search_net=args.search_net and
                                  checkpoint_path(args.search_net, args.players, search=True))
            expert.save_data(data, os.path.join(args.out, "data.npz"))
        out = os.path.join(args.out, "expert.zip")
        report = expert.fit(source, data, out, epochs=args.epochs, lr=args.lr, tau=args.tau,
                            value_weight=args.value_weight, seed=args.seed, quiet=args.quiet,
                            anchor=args.anchor, margin_temp=args.margin_temp)
    except (ValueError, FileExistsError, CheckpointError) as e:
        print(f"caledonia expert: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    with open(os.path.join(args.out, "expert.json"), "w") as f:
        json.dump(dict(report, source=source, args=_options(args)), f, indent=1)
    won = data.get("won")
    if won is not None and len(won) and str(data.get("vs", "")):
        who = "the policy (labelled by the expert)" if bool(data.get("dagger", False)) \
            else "the expert"
        print(f"{who} won {won.mean():.1%} of its {len(won)} games against {data['vs']}")
    b, a = report["before"], report["after"]
    print(f"{report['positions']} searched positions ({report['held_out']} held out): "
          f"cross-entropy {b['cross_entropy']:.4f} -> {a['cross_entropy']:.4f}, argmax = most "
          f"visited {b['argmax_agreement']:.3f} -> {a['argmax_agreement']:.3f}, value drift "
          f"{a['value_drift']:.5f}")
    print(f"checkpoint written to {out}")
    return 0
