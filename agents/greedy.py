"""``greedy``: one-step lookahead with the hand-written evaluation of :mod:`agents.greedy_value`."""
from __future__ import annotations

import numpy as np

from caledonia_env.engine.actions import N_ACTIONS

from caledonia_env.agents.base import Agent
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS, N_WEIGHTS
from caledonia_env.agents.rollouts import greedy_action, seed_numba


def greedy_weights(weights=None) -> np.ndarray:
    """A float64 copy of ``weights`` (``DEFAULT_WEIGHTS`` for None), checked for its length."""
    w = DEFAULT_WEIGHTS if weights is None else np.asarray(weights, np.float64)
    if w.shape != (N_WEIGHTS,):
        raise ValueError(f"weights must have {N_WEIGHTS} entries, got shape {w.shape}")
    return w.copy()


class GreedyAgent(Agent):
    """Tries every legal action on a copy of the state and keeps the one whose
    resulting position evaluates best for the deciding player.

    Every decision of a turn (main action, neighborhood purchases, export
    bonuses, processing, end turn...) is taken the same way: the engine
    resolves each candidate to the next decision and the evaluation scores
    that position, so half-finished turns (a pending free hex, a contract in
    the box) are valued too. ``weights`` overrides ``DEFAULT_WEIGHTS``.
    """

    name = "greedy"

    def __init__(self, seed: int = 0, name: str | None = None, weights=None):
        self.weights = greedy_weights(weights)
        self._mask = np.zeros(N_ACTIONS, np.int8)
        self._buf = None
        super().__init__(seed, name)

    def act(self, game) -> int:
        if game.is_terminal:
            raise ValueError(f"no legal action: the game is over ({game!r})")
        if self._buf is None or self._buf.shape != game.state.shape:
            self._buf = np.empty_like(game.state)
        seed_numba(self._numba_seed())
        return int(greedy_action(game.state, game.tables, self.weights, self._mask, self._buf,
                                 game.static.automa_switch))
