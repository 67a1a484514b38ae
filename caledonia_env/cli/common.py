"""What the commands share: the usage error (exit 2), SIGTERM as an exception, checks of
output paths, and the game options (--players, --seed, --map and the rules options) read
into a GameConfig."""
from __future__ import annotations

import os
import signal

from caledonia_env.config import GameConfig, clan_options
from caledonia_env.tournament import check_output_file, check_output_folder, rules_from_args


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


def rules(args, num_players: int, clans: bool = True) -> tuple[object, dict]:
    """(clans, further GameConfig options) from the rules options; UsageError if invalid."""
    try:
        return rules_from_args(args, num_players, clans)
    except ValueError as e:
        raise UsageError(str(e)) from None


def game_config(args, num_players: int) -> GameConfig:
    """GameConfig of demo / render from --seed, --map and the rules options."""
    clans, kw = rules(args, num_players)
    kw.update(clan_options(clans))
    try:
        return GameConfig(num_players=num_players, seed=args.seed, map=args.map, **kw)
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
