"""The ``caledonia`` command (also ``python -m caledonia_env``).

Subcommands: ``play`` (tournaments between bots), ``balance`` (clan against
clan), ``replay`` (step through a recorded game), ``render`` (draw a
position), ``demo`` (one random game), and ``train``, ``expert``, ``evaluate``,
``plot``, ``serve`` from ``caledonia_env.train.cli`` and ``caledonia_env.web.cli``.
Bad input (unknown agent, map, player count, rules, unwritable output path)
prints one line naming what is allowed and exits with code 2 before any game is
played; output files are written atomically (temporary file, then rename), and
SIGTERM or Ctrl-C leaves no temporary file behind. Every play / balance --out is
streamed (and play's --record-dir, record by record): the games finished before an
interruption are kept, and the message gives the --resume command that finishes them;
--out is locked for the run (a second run on it fails at once) and checked to hold every
game (and --record-dir every record) at the end (exit 1 naming the missing ones;
docs/cli.md).

On a terminal, a first run (no compiled engine in numba's cache) says at once that it
compiles the engine and shows its progress (``engine.compile.first_run``).

Modules: ``parser`` (options, help, examples), ``games`` (play, balance), ``pictures``
(demo, replay, render), ``common`` (usage errors, output checks, game options).
"""
from __future__ import annotations

import os
import shlex
import signal
import sys

from caledonia_env import scale
from caledonia_env.engine.compile.first_run import CompileProgress
from caledonia_env.cli.common import (Terminated, UsageError, check_seed_option, terminated,
                                      watch_sigterm)
from caledonia_env.cli.parser import build_parser

__all__ = ["Terminated", "UsageError", "build_parser", "interrupt_note", "main"]


def resume_command(argv) -> str:
    """The command line that finishes an interrupted study: ``argv`` with --resume."""
    argv = list(argv)
    return shlex.join(["caledonia"] + argv + ([] if "--resume" in argv else ["--resume"]))


def interrupt_note(e: BaseException, argv=None) -> str:
    """What an interruption left behind, truthfully: the complete games kept in a streamed
    --out (``scale.interrupt_note``) and the exact command line (``argv`` with --resume)
    that finishes them, or that no output file was written (every other output is written
    whole at the end)."""
    return (scale.interrupt_note(e, None if argv is None else resume_command(argv))
            or "no output file was written (outputs are written whole, at the end)")


def main(argv=None) -> int:
    """Run one ``caledonia`` command; its exit code (1: a study file that lost games,
    2: bad input, 130: Ctrl-C, 143: SIGTERM)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:          # --help (0) or a usage error (2, message already printed)
        return int(e.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    old = watch_sigterm()
    try:
        with CompileProgress(sys.stderr) as progress:   # a first run says so, on a terminal
            args.compile_progress = progress
            args.argv = argv                    # the exact command line, for reports
            check_seed_option(args)
            return args.func(args)
    except UsageError as e:
        print(f"caledonia {args.command}: error: {e}", file=sys.stderr)
        return 2
    except scale.IncompleteStudy as e:  # the file lost games during the run
        print(f"caledonia {args.command}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        term = terminated(e)
        print(f"\ncaledonia {args.command}: {'terminated' if term else 'interrupted'}; "
              f"{interrupt_note(e, argv)}", file=sys.stderr)
        return 143 if term else 130
    except BrokenPipeError:          # e.g. 'caledonia replay g.json --all | head'
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
