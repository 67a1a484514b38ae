"""``mcts``: a flat Monte-Carlo search (no tree) over a few candidate actions.

``mcts`` is not a tree search: it is one level deep (a "rollout algorithm"), improving on its
rollout policy rather than growing a tree (:mod:`agents.puct` is the tree search). At each
decision with a real choice, the legal actions are ranked by the evaluator's prior (the
greedy one-step evaluation for ``mcts``, :class:`agents.search_values.GreedyRollouts`) and the
best ``candidates`` (plus ``pass`` when legal) are kept. The rollout budget is spent by
successive halving: every surviving candidate is played out on the same determinizations
(common random numbers: the hidden contract pile is reshuffled with the same seeds for every
candidate), each game is finished by the evaluator's rollout policy (greedy play for all
players in numba, :func:`agents.rollouts.rollout_margins`), and the half with the lower mean
final margin (own VP minus the best opponent's) is dropped, until one candidate is left.
``rollout="random"`` plays the rollouts with random legal moves instead (it won 5 of 16 games
against greedy rollouts at a similar time per game, docs/agents.md). ``nmcts`` is the same
search with a policy network's evaluator (:class:`agents.search_values.PolicyRollouts`).
"""
from __future__ import annotations

import math
import time

import numpy as np

from caledonia_env.engine.actions import A_PASS
from caledonia_env.agents.base import Agent
from caledonia_env.agents.rollouts import seed_numba
from caledonia_env.agents.search_values import GreedyRollouts, RolloutEvaluator

# decisions searched by default; the others (purchases, processing, port picks,
# slaughter...) are the evaluator's own moves (the greedy bot's for mcts)
SEARCHED_CONTEXTS = ("main action", "after main action", "starting pick", "starting worker",
                     "structure bonus", "export bonus")


class MCTSAgent(Agent):
    """Flat Monte-Carlo search (no tree) over the evaluator's best candidates.

    ``rollouts``: rollouts per decision (deterministic given the seed);
    ``seconds``: a time budget per decision instead (not reproducible);
    ``candidates``: how many of the evaluator's best-ranked actions are searched;
    ``evaluator``: a :class:`agents.search_values.RolloutEvaluator` (ranking, rollouts and the
    moves of decisions not searched), by default ``GreedyRollouts(weights, rollout)``:
    ``rollout`` is the playout policy, ``"greedy"`` (default) or ``"random"``;
    ``horizon``: rounds a rollout plays before the greedy evaluation values it (0: to the
    end of the game, :mod:`agents.rollouts`).
    ``last_stats``: the last decision's rollouts, candidates, ``choice`` and its mean
    margin, and ``margins`` (each candidate's mean margin over the rollouts it got before
    it was dropped); empty when that decision was not searched.
    """

    name = "mcts"

    def __init__(self, seed: int = 0, name: str | None = None, rollouts: int = 64,
                 seconds: float | None = None, candidates: int = 6, weights=None,
                 contexts=SEARCHED_CONTEXTS, rollout: str = "greedy",
                 evaluator: RolloutEvaluator | None = None, horizon: int = 0):
        if rollouts < 1:
            raise ValueError(f"rollouts must be >= 1, got {rollouts}")
        if seconds is not None and not seconds > 0:
            raise ValueError(f"seconds must be > 0, got {seconds}")
        if candidates < 2:
            raise ValueError(f"candidates must be >= 2, got {candidates}")
        if evaluator is None:
            evaluator = GreedyRollouts(weights, rollout, horizon)
        elif horizon:
            raise ValueError("horizon is the evaluator's: pass it to the evaluator")
        elif not isinstance(evaluator, RolloutEvaluator):
            raise TypeError(f"the flat search needs a RolloutEvaluator, got {evaluator!r}")
        self.evaluator = evaluator
        self.rollouts = int(rollouts)
        self.seconds = seconds
        self.candidates = int(candidates)
        self.contexts = frozenset(contexts)
        self.last_stats: dict = {}
        super().__init__(seed, name)

    # ------------------------------------------------------------------
    def act(self, game) -> int:
        if game.is_terminal:
            raise ValueError(f"no legal action: the game is over ({game!r})")
        self.last_stats = {}
        s, T = game.state, game.tables
        ev = self.evaluator
        seed_numba(self._numba_seed())
        ev.prepare(game)
        if game.context not in self.contexts:
            return ev.action(s, T)
        legal, scores = ev.prior(s, T)
        if len(legal) == 1:
            return int(legal[0])
        order = legal[np.argsort(-scores, kind="stable")]
        cands = list(order[:self.candidates])
        if A_PASS in legal and A_PASS not in cands:
            cands.append(A_PASS)
        return self._halving(game, np.array(cands, np.int64))

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
            self.evaluator.playouts(s, T, p, acts, sd.astype(np.int64), out)
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
                           "choice": int(cands[best]),
                           "mean_margin": float(sums[best] / counts[best]),
                           "margins": {int(c): float(m) for c, m in zip(cands, sums / counts)},
                           "seconds": time.perf_counter() - t0}
        return int(cands[best])
