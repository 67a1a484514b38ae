"""``automa:LEVEL``: a marker for a seat the engine plays as the publisher's Automa (A-0).

The marker never chooses actions itself: a runner (tournament, env) turns the seats
holding markers into ``GameConfig(automa={seat: level})`` with :func:`automa_seats`.
"""
from __future__ import annotations

from caledonia_env.agents.base import Agent
from caledonia_env.agents.registry import parse_name

LEVELS = (1, 2, 3, 4, 5)


class AutomaMarker(Agent):
    """Seat marker for an Automa of difficulty ``level`` (A-1.1)."""

    def __init__(self, level: int = 5, seed: int = 0):
        if level not in LEVELS:
            raise ValueError(f"automa level must be one of {LEVELS}, got {level!r}")
        self.level = int(level)
        self.name = f"automa:{self.level}"
        super().__init__(seed)

    def act(self, game) -> int:
        raise RuntimeError(f"{self.name} is played by the engine: give its seat as "
                           f"GameConfig(automa={{seat: {self.level}}}) (see automa_seats)")


def make_automa(param, seed, **kw):
    try:
        level = int(param)
    except (TypeError, ValueError):
        raise ValueError(f"automa parameter must be a level 1-5 (automa:5), got {param!r}") from None
    return AutomaMarker(level, seed=seed)


def automa_seats(players) -> dict:
    """``{seat: level}`` for the players that are Automa markers or ``automa:LEVEL`` names."""
    out = {}
    for seat, p in enumerate(players):
        if isinstance(p, AutomaMarker):
            out[seat] = p.level
        elif isinstance(p, str) and p.strip().partition(":")[0] == "automa":
            kind, param = parse_name(p)
            out[seat] = make_automa(param, 0).level
    return out
