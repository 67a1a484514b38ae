"""What the training commands share: the user-error exception, integer options with
underscores, and the game options of the rules flags."""
from __future__ import annotations

import argparse

from caledonia_env import tournament as tn
from caledonia_env.config import GameConfig


class CommandError(Exception):
    """A user error: printed as 'caledonia COMMAND: error: ...' (exit code 2)."""


def parse_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r} (underscores are allowed, "
                                         f"e.g. 2_000_000)") from None


def game_options(args, num_players: int) -> dict:
    """GameConfig options (clans, variants, ruleset…) of the rules options, as a run saves
    them (``TrainConfig.game``); ValueError if invalid (checked by building the GameConfig
    with --map)."""
    kw = tn.rules_options(args, num_players)
    GameConfig(num_players=num_players, map=args.map, **kw)
    return kw
