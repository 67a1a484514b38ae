"""A regression fit of the greedy evaluation's weights to game outcomes (Texel-style).

:func:`log_positions` plays greedy games from :func:`train.tune_weights.game_starts` one move
at a time (the same moves as :func:`train.tune_weights.play`: the bots' stream seeded once per
game) and keeps every ``every``-th decision's state, each paired with every seat and that
seat's final VP (:func:`final_vp`: what :func:`agents.greedy_value.evaluate` returns once the
game is over). :func:`fit` then moves the free weights (all but the tie-breaking noise
``W_NOISE`` and the opponent term ``W_OPPONENT``, which :func:`evaluate` never reads) to
minimise the mean squared error of :func:`evaluate` against those outcomes, every weight kept
>= 0: a damped Gauss-Newton (Levenberg-Marquardt) search with forward-difference derivatives
and the bound held by an active set. :func:`fit_report` gives the R² and RMSE of weight sets
by third of the game (:func:`third_of`).

The fit makes the evaluation a better predictor of the final score; that need not make the
greedy bot that maximises it play better: a check or a start for the tuning
(:mod:`train.tune_weights`), not a replacement for it.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from caledonia_env.agents.greedy_value import (N_WEIGHTS, SCORE_TOTAL, W_NOISE, W_OPPONENT,
                                               evaluate)
from caledonia_env.agents.rollouts import greedy_action, seed_numba
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.board import pofs
from caledonia_env.engine.layout import (P_MONEY, P_SCORE, S_NP, S_PLAYER, S_ROUND, T_AM_LEVEL,
                                         T_MONEY_PER_VP, T_ROUNDS, game_over)
from caledonia_env.engine.step import apply_action
from caledonia_env.train.tune_weights import MAX_STEPS, game_starts

#: the weights a fit never moves: tie-breaking noise, and the opponent term (move choice only)
FIXED = (W_NOISE, W_OPPONENT)
FREE = tuple(i for i in range(N_WEIGHTS) if i not in FIXED)
N_THIRDS = 3


def third_of(round_, rounds: int) -> np.ndarray:
    """The third of a game of ``rounds`` rounds that round ``round_`` (1-based) falls in:
    ``(round - 1) * 3 // rounds``, so 5 rounds split as 1-2, 3-4 and 5 (the last round alone:
    its majorities and tiles are scored at its end, so the estimate changes most there)."""
    r = np.clip(np.asarray(round_, np.int64), 1, rounds)
    return (r - 1) * N_THIRDS // rounds


def third_labels(rounds: int) -> list[str]:
    """The rounds of each third (:func:`third_of`) as text: ``rounds 1-2`` ..."""
    labels = []
    for t in range(N_THIRDS):
        rs = [r for r in range(1, rounds + 1) if third_of(r, rounds) == t]
        labels.append("no round" if not rs else f"round {rs[0]}" if len(rs) == 1
                      else f"rounds {rs[0]}-{rs[-1]}")
    return labels


def final_vp(s, T, p) -> float:
    """Seat p's final VP in a finished game, as :func:`evaluate` has it at the game's end:
    the score total plus the leftover money's tie-break share (R-7 [interp])."""
    poff = pofs(p)
    money = int(s[poff + P_MONEY]) % int(T[T_MONEY_PER_VP])
    return float(s[poff + P_SCORE + SCORE_TOTAL]) + money * 0.01


@dataclasses.dataclass
class Positions:
    """Logged positions: ``states[k]`` was reached in game ``state_game[k]`` (whose tables
    are ``tables[game]``, in round ``state_round[k]``); sample i is state ``pos[i]`` seen by
    seat ``seat[i]``, whose final VP was ``target[i]``, in third ``third[i]``."""
    states: np.ndarray
    state_game: np.ndarray
    state_round: np.ndarray
    tables: np.ndarray
    finals: np.ndarray          # [game, seat] final VP
    pos: np.ndarray
    seat: np.ndarray
    target: np.ndarray
    third: np.ndarray
    rounds: int

    def __len__(self) -> int:
        return int(self.pos.shape[0])

    @property
    def game(self) -> np.ndarray:
        """The game of each sample."""
        return self.state_game[self.pos]

    def games(self, which) -> "Positions":
        """The samples of the games ``which`` (indices into ``tables``), renumbered."""
        which = np.asarray(which, np.int64)
        keep_state = np.isin(self.state_game, which)
        new_state = np.cumsum(keep_state) - 1
        new_game = np.full(self.tables.shape[0], -1, np.int64)
        new_game[which] = np.arange(which.shape[0])
        keep = keep_state[self.pos]
        return Positions(self.states[keep_state], new_game[self.state_game[keep_state]],
                         self.state_round[keep_state], self.tables[which], self.finals[which],
                         new_state[self.pos[keep]], self.seat[keep], self.target[keep],
                         self.third[keep], self.rounds)


def seat_vectors(weights, players: int) -> np.ndarray:
    """``weights`` (one vector for every seat, or one per seat) as [players, N_WEIGHTS]."""
    w = np.asarray(weights, np.float64)
    if w.shape == (N_WEIGHTS,):
        w = np.repeat(w[None], players, 0)
    if w.shape != (players, N_WEIGHTS):
        raise ValueError(f"weights must be {N_WEIGHTS} entries or one vector per seat "
                         f"({players} x {N_WEIGHTS}), got shape {w.shape}")
    return np.ascontiguousarray(w)


def log_positions(weights, players: int, games: int, seed: int, every: int = 2,
                  per_game: int = 200, ruleset: str | None = None, progress=None) -> Positions:
    """Play ``games`` greedy games of :func:`game_starts` ``(seed, games, players)`` with
    ``weights`` (:func:`seat_vectors`) and log every ``every``-th decision's state (evenly
    thinned to at most ``per_game`` a game) with every player seat (an Automa's seat is not
    one); ``progress(game, states_so_far)`` after each game."""
    if every < 1 or per_game < 1:
        raise ValueError(f"need every >= 1 and per_game >= 1, got {every} and {per_game}")
    starts = game_starts(seed, games, players, ruleset)
    seats_w = seat_vectors(weights, players)
    mask = np.zeros(N_ACTIONS, np.int8)
    states, state_game, tables, finals = [], [], [], []
    samples = []                                       # (state index, seat)
    for g, (s0, T, switch, agent_seed) in enumerate(starts):
        s = s0.copy()
        buf = np.empty_like(s)
        seed_numba(agent_seed)
        seen = []
        steps = 0
        while not game_over(s):
            if steps >= MAX_STEPS:
                raise RuntimeError(f"game {g} did not end in {MAX_STEPS} moves")
            if steps % every == 0:
                seen.append(s.copy())
            a = greedy_action(s, T, seats_w[s[S_PLAYER]], mask, buf, switch)
            if a < 0:
                raise RuntimeError(f"game {g}: a position without a legal action")
            apply_action(s, T, a, switch)
            steps += 1
        if len(seen) > per_game:
            seen = [seen[i] for i in np.linspace(0, len(seen) - 1, per_game).round().astype(int)]
        humans = [p for p in range(int(s[S_NP])) if T[T_AM_LEVEL + p] == 0]
        row = np.full(players, np.nan)
        for p in humans:
            row[p] = final_vp(s, T, p)
        for st in seen:
            samples += [(len(states), p) for p in humans]
            states.append(st)
            state_game.append(g)
        tables.append(T)
        finals.append(row)
        if progress is not None:
            progress(g, len(states))
    states_a = np.stack(states) if states else np.zeros((0, starts[0][0].shape[0]), np.int32)
    state_game_a = np.array(state_game, np.int64)
    pos = np.array([k for k, _ in samples], np.int64)
    seat = np.array([p for _, p in samples], np.int64)
    finals_a = np.array(finals)
    rounds = int(tables[0][T_ROUNDS])
    state_round = states_a[:, S_ROUND].astype(np.int64)
    return Positions(states_a, state_game_a, state_round, np.stack(tables), finals_a, pos, seat,
                     finals_a[state_game_a[pos], seat] if len(pos) else np.zeros(0),
                     third_of(state_round[pos], rounds), rounds)


def _views(ds: Positions) -> list:
    """(state, tables, seat) of every sample, as the arguments :func:`evaluate` takes."""
    tables = [ds.tables[g] for g in range(ds.tables.shape[0])]
    states = [ds.states[k] for k in range(ds.states.shape[0])]
    return [(states[k], tables[ds.state_game[k]], int(p)) for k, p in zip(ds.pos, ds.seat)]


def predictions(ds: Positions, w) -> np.ndarray:
    """:func:`evaluate` with weights ``w`` of every sample of ``ds`` (its seat's estimate)."""
    w = np.ascontiguousarray(w, np.float64)
    if w.shape != (N_WEIGHTS,):
        raise ValueError(f"weights must have {N_WEIGHTS} entries, got shape {w.shape}")
    return np.array([evaluate(s, T, p, w) for s, T, p in _views(ds)], np.float64)


def mse(ds: Positions, w) -> float:
    """Mean squared error of :func:`predictions` against the final VP."""
    return float(np.mean((predictions(ds, w) - ds.target) ** 2))


@dataclasses.dataclass
class FitResult:
    """What :func:`fit` found: the weights, the MSE before and after, iterations, seconds."""
    weights: np.ndarray
    mse_init: float
    mse: float
    iterations: int
    seconds: float


def fit(ds: Positions, init, max_iter: int = 40, tol: float = 1e-6, progress=None
        ) -> FitResult:
    """The weights from ``init`` minimising :func:`mse` on ``ds`` over :data:`FREE`, each
    kept >= 0 (the module's docstring); stops after ``max_iter`` Jacobians or when a step
    gains less than ``tol`` of the MSE. ``progress(iteration, mse)`` after each step."""
    if len(ds) == 0:
        raise ValueError("no logged positions to fit")
    t0 = time.perf_counter()
    views = _views(ds)
    y = ds.target

    def pred(w):
        return np.array([evaluate(s, T, p, w) for s, T, p in views], np.float64)

    w = np.array(init, np.float64)
    if w.shape != (N_WEIGHTS,) or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError(f"init must be {N_WEIGHTS} finite weights >= 0")
    free = np.array(FREE)
    r = pred(w) - y
    err0 = err = float(np.mean(r * r))
    lam = 1e-3
    it = 0
    for it in range(1, max_iter + 1):
        J = np.empty((len(y), len(free)))
        for j, i in enumerate(free):
            h = 1e-4 + 1e-3 * w[i]
            wh = w.copy()
            wh[i] += h
            J[:, j] = (pred(wh) - y - r) / h
        A = J.T @ J / len(y)
        g = J.T @ r / len(y)
        improved = False
        while lam < 1e8:
            # the weights at their bound that the step would push below it stay there
            act = np.ones(len(free), bool)
            for _ in range(len(free)):
                d = np.zeros(len(free))
                Aa = A[np.ix_(act, act)]
                d[act] = np.linalg.solve(Aa + lam * (np.diag(np.diag(Aa)) + 1e-9 * np.eye(
                    act.sum()) * max(np.trace(Aa), 1.0)), -g[act])
                stuck = act & (w[free] + d <= 0.0) & (w[free] <= 0.0)
                if not stuck.any():
                    break
                act &= ~stuck
            trial = w.copy()
            trial[free] = np.maximum(w[free] + d, 0.0)
            rt = pred(trial) - y
            et = float(np.mean(rt * rt))
            if et < err:
                gain = (err - et) / max(err, 1e-12)
                w, r, err = trial, rt, et
                lam = max(lam / 3.0, 1e-9)
                improved = True
                break
            lam *= 4.0
        if progress is not None:
            progress(it, err)
        if not improved or gain < tol:
            break
    return FitResult(w, err0, err, it, time.perf_counter() - t0)


def _scores(pred, y) -> tuple:
    """(R², RMSE, bias, correlation) of ``pred`` against ``y``; None where undefined."""
    if len(y) == 0:
        return None, None, None, None
    e = pred - y
    sst = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum(e * e)) / sst if sst > 0 else None
    spread = float(np.std(pred)) * float(np.std(y))
    corr = float(np.mean((pred - pred.mean()) * (y - y.mean()))) / spread if spread > 0 else None
    return r2, float(np.sqrt(np.mean(e * e))), float(e.mean()), corr


def fit_report(ds: Positions, weight_sets: dict) -> list[dict]:
    """Per weight set (``{name: w}``) and per third of the game (:func:`third_labels`), then
    over all samples: ``{"set", "third", "n", "r2", "rmse", "bias", "corr"}`` of
    :func:`predictions` against the final VP (bias: the mean of prediction minus outcome;
    corr: their correlation, blind to an offset or scale, which a greedy move choice
    ignores where it is the same for every candidate move)."""
    labels = third_labels(ds.rounds)
    rows = []
    for name, w in weight_sets.items():
        pred = predictions(ds, w)
        for t, label in enumerate(labels + ["all"]):
            sel = ds.third == t if t < N_THIRDS else np.ones(len(ds), bool)
            r2, rmse, bias, corr = _scores(pred[sel], ds.target[sel])
            rows.append({"set": name, "third": label, "n": int(sel.sum()), "r2": r2,
                         "rmse": rmse, "bias": bias, "corr": corr})
    return rows


__all__ = ["FIXED", "FREE", "FitResult", "Positions", "final_vp", "fit", "fit_report",
           "log_positions", "mse", "predictions", "seat_vectors", "third_labels", "third_of"]
