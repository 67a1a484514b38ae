"""What the commands share: the usage error (exit 2), SIGTERM as an exception, checks of
output paths, and the game options (--players, --seed, --map and the rules options) read
into a GameConfig."""
from __future__ import annotations

import contextlib
import os
import signal

from caledonia_env.config import GameConfig, check_seed
from caledonia_env.tournament import (check_output_file, check_output_folder, config_from_args,
                                      lock_output)


class UsageError(Exception):
    """Bad command-line input: printed as 'caledonia CMD: message', exit code 2."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main process so that every ``finally`` cleans up."""


_MAIN_PID = os.getpid()
_SIGTERMS: list = []


def on_sigterm(signum, frame):
    """The SIGTERM handler of the command: :class:`Terminated` in the main process."""
    if os.getpid() != _MAIN_PID:      # a forked worker: leave at once, the parent cleans up
        os._exit(128 + signum)
    _SIGTERMS.append(signum)
    raise Terminated()


def watch_sigterm():
    """Install :func:`on_sigterm` (main thread only); the handler it replaces, or None."""
    _SIGTERMS.clear()
    try:
        return signal.signal(signal.SIGTERM, on_sigterm)
    except ValueError:               # not the main thread: leave SIGTERM alone
        return None


def terminated(e: KeyboardInterrupt) -> bool:
    """Whether an interruption came from SIGTERM: a :class:`Terminated`, or a plain
    KeyboardInterrupt after one (Ray's wait turns the handler's exception into that)."""
    return isinstance(e, Terminated) or bool(_SIGTERMS)


def check_output_path(path: str, what: str, folder: bool = False) -> None:
    """Fail early (before a long run) if ``path`` cannot be written: an output file needs
    an existing folder and must not be a link, a device or write-protected
    (``tournament.check_output_file``); an output ``folder`` is created, so its parent must
    exist."""
    try:
        (check_output_folder if folder else check_output_file)(path, what)
    except ValueError as e:
        raise UsageError(str(e)) from None


@contextlib.contextmanager
def locked_output(path: str | None, what: str = "--out", folder: bool = False):
    """Hold the lock of output file ``path`` (``tournament.lock_output``; an output folder
    with ``folder``) for the block, so that a second run on the same file or folder fails at
    once (UsageError naming the first run's process); nothing for ``path`` None or empty."""
    with contextlib.ExitStack() as stack:
        if path:
            try:
                stack.enter_context(lock_output(path, what, folder))
            except ValueError as e:
                raise UsageError(str(e)) from None
        yield


def game_config(args, num_players: int, clans: bool = True, **fixed) -> GameConfig:
    """The GameConfig of --map and the rules options (``tournament.config_from_args``) with
    ``fixed`` fields; UsageError if invalid. demo / render give ``seed=args.seed``; play and
    balance use it as their tournament's template (its seed replaced per game)."""
    try:
        return config_from_args(args, num_players, clans, **fixed)
    except ValueError as e:
        raise UsageError(str(e)) from None


def check_seed_option(args) -> None:
    """Every command's --seed is an int >= 0 (numpy's generators take no negative seed):
    UsageError naming it, before anything runs."""
    if getattr(args, "seed", None) is not None:
        try:
            check_seed(args.seed, "--seed")
        except ValueError as e:
            raise UsageError(str(e)) from None


def num_players(args) -> int:
    """--players of demo / render: 1 with --solo, else the given count (default 4)."""
    if args.solo:
        if args.players not in (None, 1):
            raise UsageError(f"--solo is the one-player game (R-9.2); drop --players "
                             f"{args.players}")
        return 1
    return 4 if args.players is None else args.players
