"""League ratings: a Bradley-Terry (Elo-scale) fit over every recorded game.

Every game is split into pairwise results between its players (1 if a player
finished ahead of the other, 1/2 for a tie on rank, 0 behind; two players of
the same agent are not compared). The ratings maximize

    sum over pairs  s_ab log sigma(t_a - t_b) + (1 - s_ab) log sigma(t_b - t_a)  -  sum_a t_a^2 / (2 prior^2)

(a weak Gaussian prior keeps an unbeaten agent finite), found by Newton's method,
and are reported on the Elo scale (400 / ln 10 per unit: +400 Elo = 10:1 odds),
anchored at ``random`` = 0 when it took part (else the mean is 0). The 95%
interval comes from the inverse Hessian (the curvature at the optimum).

League file: a CSV with one row per player per game (``LEAGUE_FIELDS``), appended
by ``caledonia evaluate``.
"""
from __future__ import annotations

import csv
import math
import os

import numpy as np

ELO = 400.0 / math.log(10.0)
LEAGUE_FIELDS = ("match", "game", "agent", "version", "player", "rank", "total", "win")


def pairwise(games: list[list[tuple[str, float]]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(names, score, count): score[i, j] = points of i against j (1 ahead, 1/2 tie),
    count[i, j] = comparisons. ``games``: per game, a list of (agent, rank) pairs."""
    names = sorted({a for g in games for a, _ in g})
    idx = {n: i for i, n in enumerate(names)}
    k = len(names)
    score = np.zeros((k, k))
    count = np.zeros((k, k))
    for g in games:
        for a, ra in g:
            for b, rb in g:
                i, j = idx[a], idx[b]
                if i == j:
                    continue
                count[i, j] += 1
                score[i, j] += 1.0 if ra < rb else (0.5 if ra == rb else 0.0)
    return names, score, count


def fit(score: np.ndarray, count: np.ndarray, prior: float = 4.0, iters: int = 100,
        tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry MAP ratings (natural units) and their covariance."""
    k = score.shape[0]
    theta = np.zeros(k)
    hess = -np.eye(k) / prior ** 2
    for _ in range(iters):
        d = theta[:, None] - theta[None, :]
        p = 1.0 / (1.0 + np.exp(-d))
        grad = (score - count * p).sum(axis=1) - theta / prior ** 2
        w = count * p * (1 - p)
        hess = w - np.diag(w.sum(axis=1)) - np.eye(k) / prior ** 2
        step = np.linalg.solve(hess, grad)
        theta = theta - step
        if np.max(np.abs(step)) < tol:
            break
    return theta, np.linalg.inv(-hess)


def ratings(games: list[list[tuple[str, float]]], anchor: str | None = "random",
            prior: float = 4.0) -> list[dict]:
    """One dict per agent, best first: name, elo, ci (95% half-width), games, score (share
    of pairwise points), opponents met."""
    names, score, count = pairwise(games)
    if not names:
        return []
    theta, cov = fit(score, count, prior)
    k = len(names)
    if anchor in names:
        a = names.index(anchor)
        rel = theta - theta[a]
        var = np.array([cov[i, i] + cov[a, a] - 2 * cov[i, a] for i in range(k)])
    else:
        m = np.full(k, 1.0 / k)
        rel = theta - theta.mean()
        var = np.array([cov[i, i] - 2 * cov[i] @ m + m @ cov @ m for i in range(k)])
    n_games = {n: 0 for n in names}
    for g in games:
        for n in {a for a, _ in g}:
            n_games[n] += 1
    out = []
    for i, n in enumerate(names):
        c = count[i].sum()
        out.append({"agent": n, "elo": float(ELO * rel[i]),
                     "ci": float(1.96 * ELO * math.sqrt(max(var[i], 0.0))),
                     "games": n_games[n], "score": float(score[i].sum() / c) if c else float("nan"),
                     "opponents": int((count[i] > 0).sum())})
    out.sort(key=lambda r: -r["elo"])
    return out


def format_ratings(rows: list[dict], anchor: str | None = "random") -> str:
    w = max([len("agent")] + [len(r["agent"]) for r in rows]) + 2
    head = f"{'#':>3}  {'agent':<{w}}{'Elo':>8}{'95% CI':>10}{'games':>8}{'score %':>9}{'opp.':>6}"
    lines = [head, "-" * len(head)]
    for i, r in enumerate(rows, 1):
        lines.append(f"{i:>3}  {r['agent']:<{w}}{r['elo']:>8.0f}{'±' + format(r['ci'], '.0f'):>10}"
                     f"{r['games']:>8}{100 * r['score']:>8.1f}%{r['opponents']:>6}")
    base = f"{anchor} = 0" if anchor and any(r["agent"] == anchor for r in rows) else "mean = 0"
    lines.append(f"Bradley-Terry fit on pairwise results, Elo scale ({base}); score = share of "
                 f"pairwise points (ties 1/2)")
    return "\n".join(lines)


def league_key(agent: str, version: str) -> str:
    return f"{agent}@{version}" if version else agent


def read_league(path: str) -> list[list[tuple[str, float]]]:
    """Games of a league file as lists of (agent key, rank)."""
    if not os.path.exists(path):
        return []
    games: dict = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            games.setdefault((r["match"], r["game"]), []).append(
                (league_key(r["agent"], r.get("version", "")), float(r["rank"])))
    return list(games.values())


def append_league(path: str, match: str, rows: list[dict], versions: dict) -> None:
    """Append tournament rows (one per player per game) to the league file."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(LEAGUE_FIELDS))
        if new:
            w.writeheader()
        for r in rows:
            w.writerow({"match": match, "game": r["game"], "agent": r["agent"],
                        "version": versions.get(r["agent"], ""), "player": r["player"],
                        "rank": r["rank"], "total": r["total"], "win": r["win"]})
