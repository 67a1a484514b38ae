"""The agent interface: an agent looks at a :class:`caledonia_env.Game` and returns a legal action id."""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Agent(ABC):
    """Base class of every bot.

    ``act(game)`` returns a legal action id for ``game.current_player`` and
    never changes ``game``. ``reset(seed)`` restarts the agent's random
    stream: the same seed and the same positions give the same actions.
    ``name`` is the registry name the agent was made from (e.g. ``mcts:200``).
    """

    name: str = "agent"

    def __init__(self, seed: int = 0, name: str | None = None):
        if name is not None:
            self.name = name
        self.reset(seed)

    def reset(self, seed: int) -> None:
        """Restart the random stream from ``seed`` (call between games for reproducibility)."""
        self.seed = int(seed)
        self.rng = np.random.default_rng(self.seed)

    @abstractmethod
    def act(self, game) -> int:
        """A legal action id for ``game.current_player`` (``game`` is left unchanged)."""

    def _numba_seed(self) -> int:
        """A fresh seed for numba's random stream, drawn from this agent's generator."""
        return int(self.rng.integers(0, 2**31 - 1))

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r}, seed={self.seed})"
