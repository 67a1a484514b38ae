"""A learned afterstate value: a small MLP over every seat's evaluation terms, in numba.

The flat search with a horizon (``mcts:NhH``, :mod:`agents.rollouts`) stops its rollouts when
a round begins and values them by the hand-written evaluation's margin
(:func:`agents.rollouts.leaf_margin`). :func:`value_margin` values those same positions (the
start of a round, or the end of the game) with a network trained on game outcomes instead:
p's final VP minus the best opponent's (p's final VP in a solo game), the quantity every
search here maximises.

Inputs (:func:`value_features`), never the map's floats: for p first, then the opponents in
the order of their evaluation (best first), each seat's evaluation
(:func:`agents.greedy_value.evaluate`, with the weights the value was trained with), glory,
money, goods, units left on the board, shipping and technology levels, contracts held and
fulfilled, imports, merchants still on the track, whisky aging (R-8.6), turn-order position
and clan; then p's evaluated margin, the round and the six price markers (R-3.1). A seat
that does not play (fewer players) is zeros.

A value file (``.npz``, :func:`save_value` / :func:`load_value`) holds the network
(``w1 b1 w2 b2 w3 b3``, ReLU, input standardisation folded into the first layer), the greedy
weights its evaluation features were computed with (``weights``), its player count and its
provenance (``meta``, JSON: the command that trained it). ``train/fit_value.py`` trains them;
``pretrained/value_Np.npz`` are the shipped ones (model cards beside them).
"""
from __future__ import annotations

import json
import os

import numpy as np

from caledonia_env.engine.board import pofs
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.constants import MAX_BOXES, MAX_PLAYERS, N_CLANS, N_GOODS, N_IMPORTS, N_UNITS
from caledonia_env.engine.layout import (P_BOX, P_CELLAR, P_CLAN, P_GLORY, P_GOODS, P_IMPORTS, P_MONEY,
                                         P_N_FULFILLED, P_SHIP, P_TECH, P_TRACK, P_BOARD, S_NP,
                                         S_ORDER, S_PRICE_STEP, S_ROUND, game_over)
from caledonia_env.agents.checkpoint import PRETRAINED_DIR
from caledonia_env.agents.greedy_value import N_WEIGHTS, evaluate
from caledonia_env.agents.rollouts import (NO_HORIZON, final_margin, greedy_rollout_to, reached,
                                           rollout_value, start_rollout)

N_ROUND_SLOTS = 6                               # rounds 1..5, one-hot (a ruleset of <= 6)
SEAT_FEATURES = 18 + N_GOODS + N_CLANS + 1      # one seat's block (clan one-hot + no clan)
GLOBAL_FEATURES = 1 + N_ROUND_SLOTS + N_GOODS
N_FEATURES = MAX_PLAYERS * SEAT_FEATURES + GLOBAL_FEATURES
ARRAYS = ("w1", "b1", "w2", "b2", "w3", "b3")


@njit(cache=True)
def _seat_block(s, T, q, ev, out, o):
    """Seat q's features into ``out[o:o + SEAT_FEATURES]`` (``ev``: its evaluation)."""
    poff = pofs(q)
    out[o + 0] = ev / 100.0
    out[o + 1] = s[poff + P_GLORY] / 50.0
    out[o + 2] = s[poff + P_MONEY] / 50.0
    goods = 0
    for g in range(N_GOODS):
        out[o + 3 + g] = s[poff + P_GOODS + g] / 5.0
        goods += s[poff + P_GOODS + g]
    k = o + 3 + N_GOODS
    out[k + 0] = goods / 10.0
    board = 0
    for u in range(N_UNITS):
        board += s[poff + P_BOARD + u]
    out[k + 1] = board / 20.0
    out[k + 2] = s[poff + P_SHIP] / 4.0
    out[k + 3] = (s[poff + P_TECH] + s[poff + P_TECH + 1]) / 2.0
    out[k + 4] = s[poff + P_N_FULFILLED] / 8.0
    imports = 0
    for i in range(N_IMPORTS):
        imports += s[poff + P_IMPORTS + i]
    out[k + 5] = imports / 8.0
    out[k + 6] = s[poff + P_TRACK] / 10.0
    held = 0
    for b in range(MAX_BOXES):
        if s[poff + P_BOX + b] >= 0:
            held += 1
    out[k + 7] = held / 2.0
    out[k + 8] = s[poff + P_CELLAR] / 5.0
    out[k + 9] = s[poff + P_CELLAR + 1] / 5.0
    pos = 0
    for i in range(s[S_NP]):
        if s[S_ORDER + i] == q:
            pos = i
    out[k + 10] = pos / 3.0
    out[k + 11] = 1.0                           # the seat plays
    for j in range(12, 15):
        out[k + j] = 0.0
    clan = s[poff + P_CLAN]
    c0 = k + 15
    for c in range(N_CLANS + 1):
        out[c0 + c] = 0.0
    out[c0 + (clan if 0 <= clan < N_CLANS else N_CLANS)] = 1.0


@njit(cache=True)
def value_features(s, T, p, w, out):
    """p's inputs of the value network into ``out`` (float64[N_FEATURES]); see the module."""
    n = s[S_NP]
    out[:] = 0.0
    evs = np.empty(n)
    for q in range(n):
        evs[q] = evaluate(s, T, q, w)
    _seat_block(s, T, p, evs[p], out, 0)
    others = np.empty(max(n - 1, 0), np.int64)
    j = 0
    for q in range(n):
        if q != p:
            others[j] = q
            j += 1
    if n > 1:
        order = np.argsort(-evs[others], kind="mergesort")
        for i in range(n - 1):
            q = others[order[i]]
            _seat_block(s, T, q, evs[q], out, (i + 1) * SEAT_FEATURES)
    g = MAX_PLAYERS * SEAT_FEATURES
    best = -1e18
    for q in range(n):
        if q != p and evs[q] > best:
            best = evs[q]
    out[g] = (evs[p] - best) / 50.0 if n > 1 else evs[p] / 100.0
    r = s[S_ROUND]
    if 1 <= r <= N_ROUND_SLOTS:
        out[g + r] = 1.0
    for k in range(N_GOODS):
        out[g + 1 + N_ROUND_SLOTS + k] = s[S_PRICE_STEP + k] / 10.0


@njit(cache=True, inline="always")
def dense_relu(x, w, b):
    """ReLU(x @ w + b), as loops (no BLAS inside numba)."""
    h = b.copy()
    for i in range(x.shape[0]):
        xi = x[i]
        if xi != 0.0:
            for j in range(h.shape[0]):
                h[j] += xi * w[i, j]
    for j in range(h.shape[0]):
        if h[j] < 0.0:
            h[j] = 0.0
    return h


@njit(cache=True, inline="always")
def mlp(x, w1, b1, w2, b2, w3, b3):
    """The network's output for inputs ``x``: two ReLU layers, one linear output."""
    h1 = dense_relu(x, w1, b1)
    h2 = dense_relu(h1, w2, b2)
    v = b3[0]
    for j in range(h2.shape[0]):
        v += h2[j] * w3[j]
    return v


@njit(cache=True)
def value_margin(s, T, p, w, w1, b1, w2, b2, w3, b3):
    """p's predicted final margin in ``s`` (the exact one once the game is over); ``w``: the
    greedy weights of the features."""
    if game_over(s):
        return final_margin(s, T, p)
    x = np.empty(N_FEATURES)
    value_features(s, T, p, w, x)
    return mlp(x, w1, b1, w2, b2, w3, b3)


@njit(cache=True, nogil=True)
def value_rollout_margins(s, T, w, p, actions, seeds, horizon, buf, out, automa,
                          fw, w1, b1, w2, b2, w3, b3):
    """:func:`agents.rollouts.rollout_margins` (greedy rollouts of ``horizon`` rounds, seat
    weights ``w``) with each stopped rollout valued by :func:`value_margin` (feature weights
    ``fw``) instead of the hand-written evaluation's margin."""
    for i in range(actions.shape[0]):
        stop = start_rollout(buf, s, T, actions[i], seeds[i], horizon, automa)
        steps = greedy_rollout_to(buf, T, w, stop, 100000, automa)
        if steps < 0 or not reached(buf, stop):
            out[i] = -1e9
        else:
            out[i] = value_margin(buf, T, p, fw, w1, b1, w2, b2, w3, b3)


@njit(cache=True, nogil=True)
def recorded_rollout_margins(s, T, w, p, actions, seeds, horizon, buf, out, automa, fw,
                             feats, done, deep):
    """:func:`agents.rollouts.rollout_margins` (``out``: the same hand-written leaf margins),
    recording each rollout's leaf: p's :func:`value_features` there (feature weights ``fw``)
    into ``feats[i]``, whether the game is over there into ``done[i]``, and p's final margin
    once that rollout is played on to the end of the game into ``deep[i]`` (-1e9 if failed)."""
    for i in range(actions.shape[0]):
        stop = start_rollout(buf, s, T, actions[i], seeds[i], horizon, automa)
        steps = greedy_rollout_to(buf, T, w, stop, 100000, automa)
        out[i] = rollout_value(buf, T, p, w, steps, stop)
        value_features(buf, T, p, fw, feats[i])
        done[i] = game_over(buf)
        deep[i] = -1e9
        if out[i] > -1e9:
            steps = greedy_rollout_to(buf, T, w, NO_HORIZON, 100000, automa)
            if steps >= 0 and game_over(buf):
                deep[i] = final_margin(buf, T, p)


class ValueNet:
    """A value file's network: its arrays (``args()``), feature weights, player count, meta."""

    def __init__(self, arrays: dict, weights: np.ndarray, players: int, meta: dict):
        shapes = [np.asarray(arrays[k]).shape for k in ARRAYS]
        if shapes[0][0] != N_FEATURES:
            raise ValueError(f"value network reads {shapes[0][0]} inputs; this version's "
                             f"features are {N_FEATURES}: retrain it (train/fit_value.py)")
        self.arrays = {k: np.ascontiguousarray(arrays[k], np.float64) for k in ARRAYS}
        self.weights = np.ascontiguousarray(weights, np.float64)
        if self.weights.shape != (N_WEIGHTS,):
            raise ValueError(f"value file: {self.weights.shape} feature weights, need {N_WEIGHTS}")
        self.players = int(players)
        self.meta = meta

    def args(self) -> tuple:
        """``(fw, w1, b1, w2, b2, w3, b3)`` as :func:`value_rollout_margins` takes them."""
        return (self.weights,) + tuple(self.arrays[k] for k in ARRAYS)

    def margin(self, s, T, p) -> float:
        """:func:`value_margin` of ``s`` for p."""
        return float(value_margin(s, T, p, *self.args()))


def value_path(players: int) -> str:
    """The shipped value file of a player count (``pretrained/value_2p.npz`` ...)."""
    return os.path.join(PRETRAINED_DIR, f"value_{players}p.npz")


def save_value(path: str, arrays: dict, weights, players: int, **meta) -> str:
    """Write a value file (the network's arrays, feature weights, player count, meta)."""
    np.savez(path, **{k: np.asarray(arrays[k], np.float64) for k in ARRAYS},
             weights=np.asarray(weights, np.float64), players=np.int64(players),
             features=np.int64(N_FEATURES), meta=np.array(json.dumps(meta)))
    return path


def load_value(spec) -> ValueNet:
    """The value network of a file, or of the shipped file for a player count (an int)."""
    path = value_path(spec) if isinstance(spec, (int, np.integer)) else str(spec)
    if not os.path.exists(path):
        raise ValueError(f"no value network at {path}" + (
            f": none ships for {spec} players (train one with train/fit_value.py)"
            if isinstance(spec, (int, np.integer)) else ""))
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in ARRAYS}
            return ValueNet(arrays, f["weights"], int(f["players"]), json.loads(str(f["meta"])))
    except (KeyError, ValueError, OSError) as e:
        raise ValueError(f"{path}: not a value file ({e})") from None
