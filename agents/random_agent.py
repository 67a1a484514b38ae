"""``random``: a uniformly random legal action.

The policy is the env layer's :class:`caledonia_env.envs.opponents.RandomOpponent` (the envs'
built-in opponent ``"random"``, below the agents layer); this class adds only the agents'
interface (:class:`Agent`: a registry name, ``_numba_seed``)."""
from __future__ import annotations

from caledonia_env.envs import opponents
from caledonia_env.agents.base import Agent


class RandomAgent(opponents.RandomOpponent, Agent):
    """Uniform over the legal actions of the pending decision."""

    def __init__(self, seed: int = 0, name: str | None = None):
        if name is not None:
            self.name = name
        super().__init__(seed)
