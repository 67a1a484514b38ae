"""Commands ``train``, ``expert``, ``evaluate``, ``tune-weights``, ``fit-value``, ``fit-qpolicy``, ``ladder`` and ``plot`` of
the ``caledonia`` CLI, added to its parser by :func:`add_train_parser` (:mod:`.train`),
:func:`add_expert_parser` (:mod:`.expert`), :func:`add_evaluate_parser` (:mod:`.evaluate`),
:func:`add_tune_parser` (:mod:`.tune`), :func:`add_fit_value_parser` (:mod:`.fit_value`),
:func:`add_fit_qpolicy_parser` (:mod:`.fit_qpolicy`),
:func:`add_ladder_parser` (:mod:`.ladder`) and
:func:`add_plot_parser` (here); what they share
(the user error, integer options, the game options) is :mod:`.common`.

Every command function returns an exit code and prints a one-line error (code 2) for
bad options, missing, unsafe or mismatched checkpoints, instead of a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys

from caledonia_env import tournament as tn
from caledonia_env.train.cli.common import CommandError  # noqa: F401  (re-exports)
from caledonia_env.train.cli.evaluate import add_evaluate_parser, cmd_evaluate  # noqa: F401
from caledonia_env.train.cli.fit_value import add_fit_value_parser, cmd_fit_value  # noqa: F401
from caledonia_env.train.cli.fit_qpolicy import add_fit_qpolicy_parser, cmd_fit_qpolicy  # noqa: F401
from caledonia_env.train.cli.expert import add_expert_parser, cmd_expert  # noqa: F401
from caledonia_env.train.cli.ladder import add_ladder_parser, cmd_ladder  # noqa: F401
from caledonia_env.train.cli.train import add_train_parser, cmd_train  # noqa: F401
from caledonia_env.train.cli.tune import add_tune_parser, cmd_tune  # noqa: F401
from caledonia_env.train.plot import plot_run

PLOT_EXAMPLES = """\
examples:
  caledonia plot runs/x                          # writes runs/x/curve.png
  caledonia plot runs/x -o docs/img/curve.png --title "2-player PPO"
"""


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
    try:
        out = args.output or os.path.join(args.run, "curve.png")
        if not os.path.isdir(args.run):
            raise ValueError(f"{args.run}: no such run folder")
        tn.check_output_file(out, "-o")
        path = plot_run(args.run, out, args.title)
    except ValueError as e:
        print(f"caledonia plot: error: {e}", file=sys.stderr)
        return 2
    print(f"learning curve written to {path}")
    return 0
