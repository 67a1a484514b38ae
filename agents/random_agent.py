"""``random``: a uniformly random legal action."""
from __future__ import annotations

from .base import Agent


class RandomAgent(Agent):
    """Uniform over the legal actions of the pending decision."""

    name = "random"

    def act(self, game) -> int:
        legal = game.legal_actions()
        if len(legal) == 0:
            raise ValueError(f"no legal action: the game is over ({game!r})")
        return int(legal[self.rng.integers(len(legal))])
