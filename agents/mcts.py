"""``mcts``: Monte-Carlo search with greedy rollouts and a determinized contract pile.

At each decision with a real choice, the legal actions are ranked by the
greedy one-step evaluation and the best ``candidates`` (plus ``pass`` when
legal) are kept. The rollout budget is spent by successive halving: every
surviving candidate is played out on the same determinizations (common
random numbers: the hidden contract pile is reshuffled with the same seeds
for every candidate), each game is finished with greedy play for all
players (numba, :func:`agents.evaluation.rollout_margins`), and the half
with the lower mean final margin (own VP minus the best opponent's) is
dropped, until one candidate is left. The search is one level deep (a flat
Monte-Carlo tree): it improves on the rollout policy rather than building a
deep tree. ``rollout="random"`` plays the rollouts with random legal moves
instead (it won 5 of 16 games against greedy rollouts at a similar time per
game, docs/agents.md).
"""
from __future__ import annotations

import math
import time

import numpy as np

from caledonia_env.engine.actions import A_PASS, N_ACTIONS

from .base import Agent
from .evaluation import (
    DEFAULT_WEIGHTS,
    action_values,
    greedy_action,
    random_rollout_margins,
    rollout_margins,
    seed_numba,
)

ROLLOUT_POLICIES = {"greedy": rollout_margins, "random": random_rollout_margins}

# decisions searched by default; the others (purchases, processing, port picks,
# slaughter...) are taken greedily
SEARCHED_CONTEXTS = ("main action", "after main action", "starting pick", "starting worker",
                     "structure bonus", "export bonus")


class MCTSAgent(Agent):
    """Flat Monte-Carlo search over the greedy bot's best candidates.

    ``rollouts``: rollouts per decision (deterministic given the seed);
    ``seconds``: a time budget per decision instead (not reproducible);
    ``candidates``: how many of the greedy ranking's best actions are searched;
    ``rollout``: the playout policy, ``"greedy"`` (default) or ``"random"``.
    """

    name = "mcts"

    def __init__(self, seed: int = 0, name: str | None = None, rollouts: int = 64,
                 seconds: float | None = None, candidates: int = 6, weights=None,
                 contexts=SEARCHED_CONTEXTS, rollout: str = "greedy"):
        if rollouts < 1:
            raise ValueError(f"rollouts must be >= 1, got {rollouts}")
        if seconds is not None and not seconds > 0:
            raise ValueError(f"seconds must be > 0, got {seconds}")
        if candidates < 2:
            raise ValueError(f"candidates must be >= 2, got {candidates}")
        if rollout not in ROLLOUT_POLICIES:
            raise ValueError(f"rollout must be one of {sorted(ROLLOUT_POLICIES)}, got {rollout!r}")
        self.rollout = rollout
        self._rollouts = ROLLOUT_POLICIES[rollout]
        self.rollouts = int(rollouts)
        self.seconds = seconds
        self.candidates = int(candidates)
        self.weights = (DEFAULT_WEIGHTS if weights is None else np.asarray(weights, np.float64)).copy()
        self.contexts = frozenset(contexts)
        self._mask = np.zeros(N_ACTIONS, np.int8)
        self._values = np.zeros(N_ACTIONS, np.float64)
        self._buf = None
        self.last_stats: dict = {}
        super().__init__(seed, name)

    # ------------------------------------------------------------------
    def act(self, game) -> int:
        if game.is_terminal:
            raise ValueError(f"no legal action: the game is over ({game!r})")
        s, T = game.state, game.tables
        if self._buf is None or self._buf.shape != s.shape:
            self._buf = np.empty_like(s)
        seed_numba(self._numba_seed())
        self._prepare(game)
        if game.context not in self.contexts:
            return self._unsearched(s, T)
        legal, scores = self._ranking(s, T)
        if len(legal) == 1:
            return int(legal[0])
        order = legal[np.argsort(-scores, kind="stable")]
        cands = list(order[:self.candidates])
        if self._mask[A_PASS] and A_PASS not in cands:
            cands.append(A_PASS)
        return self._halving(game, np.array(cands, np.int64))

    # the parts a search with another rollout policy replaces (agents.nmcts)
    def _prepare(self, game) -> None:
        """Called once per decision before anything else."""

    def _unsearched(self, s, T) -> int:
        """The action of a decision that is not searched: the greedy bot's."""
        return int(greedy_action(s, T, self.weights, self._mask, self._buf))

    def _ranking(self, s, T):
        """(legal actions, their scores): the candidates are the best ``candidates``."""
        action_values(s, T, self.weights, self._mask, self._buf, self._values)
        legal = np.flatnonzero(self._mask)
        return legal, self._values[legal]

    def _playouts(self, s, T, p, actions, seeds, out) -> None:
        """out[i]: p's final margin after ``actions[i]`` on determinization ``seeds[i]``."""
        self._rollouts(s, T, self.weights, p, actions, seeds, self._buf, out)

    def _halving(self, game, cands: np.ndarray) -> int:
        """Successive halving with common random numbers over the candidates."""
        s, T = game.state, game.tables
        p = game.current_player
        n_rounds = max(1, math.ceil(math.log2(len(cands))))
        base_seed = self._numba_seed()
        sums = np.zeros(len(cands))
        counts = np.zeros(len(cands), np.int64)
        alive = np.arange(len(cands))
        used = 0
        t0 = time.perf_counter()
        for r in range(n_rounds):
            if self.seconds is not None:
                elapsed = time.perf_counter() - t0
                per_rollout = elapsed / used if used else None
                left = self.seconds - elapsed
                if per_rollout is None:
                    per = 1
                else:
                    share = left / (n_rounds - r)
                    per = max(1, int(share / per_rollout / len(alive)))
            else:
                share = (self.rollouts - used) // (n_rounds - r)
                per = max(1, share // len(alive))
            start = counts[alive[0]]
            seeds = (base_seed + np.arange(start, start + per)) % (2**31 - 1)
            acts = np.repeat(cands[alive], per)
            sd = np.tile(seeds, len(alive))
            out = np.empty(len(acts))
            self._playouts(s, T, p, acts, sd.astype(np.int64), out)
            for i, c in enumerate(alive):
                sums[c] += out[i * per:(i + 1) * per].sum()
                counts[c] += per
            used += len(acts)
            means = sums[alive] / counts[alive]
            keep = max(1, math.ceil(len(alive) / 2))
            alive = alive[np.argsort(-means, kind="stable")[:keep]]
            if len(alive) == 1:
                break
        best = int(alive[0])
        self.last_stats = {"rollouts": used, "candidates": len(cands),
                           "mean_margin": float(sums[best] / counts[best]),
                           "seconds": time.perf_counter() - t0}
        return int(cands[best])
