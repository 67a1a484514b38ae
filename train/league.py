"""The training league: self-play games rated by Bradley-Terry, opponents drawn by PFSP.

Every finished self-play game is recorded with each seat's player (``learner`` for the
learning seat and the ``self`` opponents, a snapshot's label, a bot's name) and its rank.
:class:`League` fits the Bradley-Terry ratings of :mod:`.rating` to the last ``window``
games (snapshots and bots meet each other in 3- and 4-player games, so they are rated
against each other too) and draws the ``league`` opponents of the mix from the snapshot
pool by prioritized fictitious self-play (PFSP, Vinyals et al. 2019, *Grandmaster level in
StarCraft II using multi-agent reinforcement learning*, Nature 575): snapshot ``s`` is
drawn with probability proportional to ``(1 - p_s) ** power``, where ``p_s`` is the
learner's expected pairwise score against ``s`` from the fit (``power`` 2 is AlphaStar's
"hard" weighting: opponents the learner already beats are rarely drawn, unrated ones
count as ``p = 1/2``). The games are also appended to ``league.csv`` in the run folder
(the format of ``caledonia evaluate``'s league file), so
``caledonia evaluate --league --league-file runs/x/league.csv --games 0`` prints the table.
"""
from __future__ import annotations

import math
from collections import deque

import numpy as np

from caledonia_env.train import rating

LEARNER = "learner"


def ranks(scores) -> list[int]:
    """1 + the number of players with more VP (equal VP share a rank)."""
    return [1 + sum(1 for t in scores if t > s) for s in scores]


class League:
    """Recent training games, their ratings and the PFSP draw (see the module docstring).

    ``window``: games kept for the fit; ``refit_every``: games between fits; ``path``: a CSV
    the games are appended to (None: not written)."""

    def __init__(self, window: int = 2000, power: float = 2.0, refit_every: int = 100,
                 path: str | None = None):
        if window < 1 or refit_every < 1:
            raise ValueError("league window and refit interval must be >= 1")
        if not power >= 0:
            raise ValueError(f"PFSP power must be >= 0, got {power}")
        self.games: deque = deque(maxlen=int(window))
        self.power = float(power)
        self.refit_every = int(refit_every)
        self.path = path
        self._since_fit = 0
        self._table: dict[str, dict] = {}
        earlier = rating.read_league(path) if path else []      # a resumed run's games
        self.games.extend(earlier)
        self.recorded = len(earlier)
        if earlier:
            self.refit()

    # ------------------------------------------------------------ games
    def record(self, labels: list[str], scores, wins: list[float] | None = None) -> None:
        """One finished game: each seat's player label and final VP."""
        rk = ranks(list(scores))
        self.games.append(list(zip(labels, [float(r) for r in rk])))
        if self.path:
            rating.append_league(self.path, "train", [
                {"game": self.recorded, "agent": lab, "player": p, "rank": r,
                 "total": int(scores[p]), "win": wins[p] if wins is not None else float(r == 1)}
                for p, (lab, r) in enumerate(zip(labels, rk))], {})
        self.recorded += 1
        self._since_fit += 1
        if self._since_fit >= self.refit_every:
            self.refit()

    def refit(self) -> None:
        self._since_fit = 0
        rows = rating.ratings(list(self.games), anchor=None)
        self._table = {r["agent"]: r for r in rows}

    def table(self) -> list[dict]:
        """The current ratings (Elo scale, mean 0), best first."""
        return sorted(self._table.values(), key=lambda r: -r["elo"])

    # ------------------------------------------------------------ PFSP
    def expected_score(self, label: str) -> float:
        """The learner's expected pairwise score against ``label`` (1/2 when either is
        unrated)."""
        a, b = self._table.get(LEARNER), self._table.get(label)
        if a is None or b is None:
            return 0.5
        return 1.0 / (1.0 + 10.0 ** ((b["elo"] - a["elo"]) / 400.0))

    def weights(self, labels: list[str]) -> np.ndarray:
        """PFSP probabilities over ``labels``: ``(1 - p) ** power``, normalized (uniform if
        all are 0)."""
        w = np.array([(1.0 - self.expected_score(s)) ** self.power for s in labels])
        total = w.sum()
        if not (total > 0 and math.isfinite(total)):
            return np.full(len(labels), 1.0 / len(labels))
        return w / total

    def pick(self, labels: list[str], rng) -> int:
        """Index of the drawn opponent among ``labels`` (PFSP)."""
        return int(rng.choice(len(labels), p=self.weights(labels)))
