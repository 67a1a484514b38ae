"""``qpolicy``: a learned policy on top of the tuned greedy evaluation, in numba.

At a decision of player p every legal action a gets Q(a), the one-step value the greedy bot
maximises (:func:`agents.rollouts.after` with the tuned weights, its tie-breaking noise drawn
in the same order as :func:`agents.rollouts.greedy_action`). A small MLP reads the state's
evaluation terms (:func:`agents.afterstate_value.value_features`: every seat's evaluation,
glory, money, goods, ..., the round and the prices) and gives, for each action type t
(:func:`action_types`: pass, end turn, buy / sell by good, place by unit, shipping, ...), a
bias B[t] and a log-scale C[t] of Q, and a value (p's predicted final margin over the best
opponent, trained but not used in play)::

    logits(a) = beta * exp(C[t(a)]) * (Q(a) - max Q) / tau + B[t(a)]

The MLP's last layer starts at zero, so the untrained policy is the tuned greedy bot: its
argmax is ``greedy_action``'s choice, tie-breaking included. The head is applied at the
decisions the flat search searches (:data:`agents.mcts.SEARCHED_CONTEXTS`, where its labels
come from); elsewhere the policy plays the greedy move. The agent plays the argmax.

A policy file (``.npz``, :func:`save_qpolicy` / :func:`load_qpolicy`) holds ``w1 b1 w2 b2``
(ReLU hidden layer, input standardisation folded into ``w1 b1``), ``beta``, ``tau``, the greedy
weights (``weights``) and the provenance (``meta``, JSON). ``train/fit_qpolicy.py`` trains them
(``caledonia fit-qpolicy --players N``); ``pretrained/qpolicy_{N}p.npz`` ship (model cards
beside them); the agent ``qpolicy`` plays the one of the game's player count.
"""
from __future__ import annotations

import json
import os

import numpy as np

from caledonia_env.engine import actions as A
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.compile.scratch import scratch
from caledonia_env.engine.constants import CONTEXT_NAMES, MAX_NODES, N_GOODS, N_UNITS
from caledonia_env.engine.layout import S_CTX, S_PLAYER
from caledonia_env.engine.mask import count_legal, legal_mask
from caledonia_env.agents.afterstate_value import N_FEATURES, dense_relu, value_features
from caledonia_env.agents.base import Agent
from caledonia_env.agents.checkpoint import PRETRAINED_DIR
from caledonia_env.agents.greedy_value import MEMO_LEN, N_WEIGHTS, W_NOISE
from caledonia_env.agents.mcts import SEARCHED_CONTEXTS
from caledonia_env.agents.rollouts import after, seed_numba, start_lookahead

ARRAYS = ("w1", "b1", "w2", "b2")


def action_types() -> tuple[np.ndarray, tuple[str, ...]]:
    """(int64[N_ACTIONS] the type of each action id, the types' names): one type per block
    of :mod:`engine.actions`, buying and selling split by good, placing by unit."""
    starts = sorted((v, k[2:].lower()) for k, v in vars(A).items()
                    if k.startswith("A_") and isinstance(v, int))
    types = np.zeros(N_ACTIONS, np.int64)
    names: list[str] = []
    for i, (start, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else N_ACTIONS
        if name == "trade":
            per = (end - start) // (2 * N_GOODS)
            for j in range(2 * N_GOODS):
                types[start + j * per:start + (j + 1) * per] = len(names)
                names.append(f"{('buy', 'sell')[j // N_GOODS]} good {j % N_GOODS}")
        elif name == "place":
            for u in range(N_UNITS):
                types[start + u * MAX_NODES:start + (u + 1) * MAX_NODES] = len(names)
                names.append(f"place unit {u}")
        elif end > start:
            types[start:end] = len(names)
            names.append(name)
    return types, tuple(names)


ACTION_TYPES, TYPE_NAMES = action_types()
N_TYPES = len(TYPE_NAMES)
N_OUT = 2 * N_TYPES + 1             # B[t], C[t], value
OUT_VALUE = 2 * N_TYPES
#: 1 for the decision contexts the head applies to (those the flat search searches)
HEAD_CONTEXTS = np.array([name in SEARCHED_CONTEXTS for name in CONTEXT_NAMES], np.int8)


@njit(cache=True, inline="always")
def _head(x, w1, b1, w2, b2, out):
    """``out = ReLU(x @ w1 + b1) @ w2 + b2`` (loops: no BLAS in numba)."""
    h = dense_relu(x, w1, b1)
    for j in range(out.shape[0]):
        out[j] = b2[j]
    for i in range(h.shape[0]):
        hi = h[i]
        if hi > 0.0:
            for j in range(out.shape[0]):
                out[j] += hi * w2[i, j]


@njit(cache=True)
def qpolicy_call(s, T, w, mask, buf, q, x, head, logits, types, contexts, w1, b1, w2, b2,
                 beta, tau, use_head, automa):
    """One decision: the legal actions into ``mask``, Q into ``q``, the features into ``x``,
    the MLP's outputs into ``head``, the logits into ``logits`` (-inf if illegal); returns the
    argmax (the only legal action without computing anything when there is one; -1 if none).
    The head is skipped (greedy's move) when ``use_head`` is 0 or the context is not in
    ``contexts``."""
    p = s[S_PLAYER]
    legal_mask(s, T, mask)
    k, only = count_legal(mask)
    if k == 1:
        return only
    table = start_lookahead(s, T, p, w)
    memo = scratch(MEMO_LEN, np.int64)
    qmax = -1e18
    for a in range(N_ACTIONS):
        if mask[a]:
            v = after(s, T, p, w, a, table, buf, memo, automa) + w[W_NOISE] * np.random.random()
            q[a] = v
            if v > qmax:
                qmax = v
        else:
            q[a] = -np.inf
    on = use_head != 0 and contexts[s[S_CTX]] != 0
    if on:
        value_features(s, T, p, w, x)
        _head(x, w1, b1, w2, b2, head)
    nt = (head.shape[0] - 1) // 2
    best = -1
    best_l = -np.inf
    for a in range(N_ACTIONS):
        if mask[a]:
            z = (q[a] - qmax) / tau
            if on:
                t = types[a]
                lg = beta * np.exp(head[nt + t]) * z + head[t]
            else:
                lg = beta * z
            logits[a] = lg
            if lg > best_l:
                best_l = lg
                best = a
        else:
            logits[a] = -np.inf
    return best


class QPolicy:
    """A policy file's arrays, ``beta``, ``tau``, greedy weights, player count and meta."""

    def __init__(self, arrays: dict, beta: float, tau: float, weights, players: int = 2,
                 meta: dict | None = None):
        self.arrays = {k: np.ascontiguousarray(arrays[k], np.float64) for k in ARRAYS}
        if self.arrays["w1"].shape[0] != N_FEATURES or self.arrays["w2"].shape[1] != N_OUT:
            raise ValueError(f"policy shapes {self.arrays['w1'].shape} / "
                             f"{self.arrays['w2'].shape}: this version reads {N_FEATURES} "
                             f"features and gives {N_OUT} outputs: retrain it")
        self.beta = float(beta)
        self.tau = float(tau)
        if not self.tau > 0:
            raise ValueError(f"tau must be > 0, got {tau}")
        self.weights = np.ascontiguousarray(weights, np.float64)
        if self.weights.shape != (N_WEIGHTS,):
            raise ValueError(f"policy file: {self.weights.shape} greedy weights, need {N_WEIGHTS}")
        self.players = int(players)
        self.meta = meta or {}

    @classmethod
    def zero(cls, weights, hidden: int = 64, beta: float = 1.0, tau: float = 1.0, seed: int = 0,
             players: int = 2) -> "QPolicy":
        """An untrained policy: random first layer, zero last layer (it plays as greedy)."""
        rng = np.random.default_rng(seed)
        arrays = {"w1": rng.normal(0, 1 / np.sqrt(N_FEATURES), (N_FEATURES, hidden)),
                  "b1": np.zeros(hidden), "w2": np.zeros((hidden, N_OUT)), "b2": np.zeros(N_OUT)}
        return cls(arrays, beta, tau, weights, players, {"trained": False})

    def args(self) -> tuple:
        """``(w1, b1, w2, b2, beta, tau)`` as :func:`qpolicy_call` takes them."""
        return tuple(self.arrays[k] for k in ARRAYS) + (self.beta, self.tau)


class Decision:
    """Scratch buffers of :func:`qpolicy_call` and its results for one decision."""

    def __init__(self, policy: QPolicy):
        self.mask = np.zeros(N_ACTIONS, np.int8)
        self.q = np.zeros(N_ACTIONS)
        self.logits = np.zeros(N_ACTIONS)
        self.x = np.zeros(N_FEATURES)
        self.head = np.zeros(N_OUT)
        self.buf = None
        self.policy = policy

    def run(self, s, T, automa, use_head: bool = True) -> int:
        """:func:`qpolicy_call` on ``s``; the argmax (buffers hold the rest)."""
        if self.buf is None or self.buf.shape != s.shape:
            self.buf = np.empty_like(s)
        pol = self.policy
        self.head[:] = 0.0
        return int(qpolicy_call(s, T, pol.weights, self.mask, self.buf, self.q, self.x,
                                self.head, self.logits, ACTION_TYPES, HEAD_CONTEXTS, *pol.args(),
                                int(use_head), automa))


class QPolicyAgent(Agent):
    """Plays the argmax of a :class:`QPolicy` (``policy``: a file, a ``QPolicy``, or None for
    the shipped ``pretrained/qpolicy_{N}p.npz`` of the game's player count N)."""

    name = "qpolicy"

    def __init__(self, policy=None, seed: int = 0, name: str | None = None):
        self.shipped = policy is None
        self.spec = policy if isinstance(policy, str) else None
        self._decisions: dict[int, Decision] = {}
        if not self.shipped:
            pol = policy if isinstance(policy, QPolicy) else load_qpolicy(policy)
            self._decisions[pol.players] = Decision(pol)
        super().__init__(seed, name)

    @property
    def policy(self) -> QPolicy:
        """The policy given, or the shipped one loaded last (2p's if none was)."""
        if not self._decisions:
            self.decision(2)
        return next(reversed(self._decisions.values())).policy

    def decision(self, players: int) -> Decision:
        """The :class:`Decision` of a ``players``-player game (a shipped file is loaded on first
        use); ValueError if the policy given is of another player count."""
        dec = self._decisions.get(players)
        if dec is None and not 2 <= players <= 4:
            raise ValueError(f"qpolicy plays 2-4-player games, not {players}-player ones")
        if dec is None and self.shipped:
            dec = self._decisions[players] = Decision(load_qpolicy(players=players))
        if dec is None:
            have = next(iter(self._decisions.values())).policy.players
            where = f" {self.spec}" if self.spec else ""
            raise ValueError(f"the qpolicy{where} was trained for {have}-player games, not "
                             f"{players}-player ones (fit one with caledonia fit-qpolicy "
                             f"--players {players})")
        return dec

    def act(self, game) -> int:
        if game.is_terminal:
            raise ValueError(f"no legal action: the game is over ({game!r})")
        dec = self.decision(game.num_players)
        seed_numba(self._numba_seed())
        return dec.run(game.state, game.tables, game.static.automa_switch)


def qpolicy_path(players: int = 2) -> str:
    """The shipped policy file of a player count (``pretrained/qpolicy_2p.npz``)."""
    return os.path.join(PRETRAINED_DIR, f"qpolicy_{players}p.npz")


def save_qpolicy(path: str, policy: QPolicy, **meta) -> str:
    """Write ``policy`` (with ``meta`` added to its own) as a policy file; ``path``."""
    np.savez(path, **policy.arrays, beta=np.float64(policy.beta), tau=np.float64(policy.tau),
             weights=policy.weights, players=np.int64(policy.players),
             meta=np.array(json.dumps({**policy.meta, **meta})))
    return path


def load_qpolicy(spec=None, players: int = 2) -> QPolicy:
    """The policy of a file, or (None) the shipped one of ``players``."""
    path = qpolicy_path(players) if spec is None else str(spec)
    if not os.path.exists(path):
        if spec is None:
            raise ValueError(f"no shipped qpolicy for {players}-player games: {path} is missing "
                             f"(fit one with caledonia fit-qpolicy --players {players} --out "
                             f"{path} --records runs/qpolicy_{players}p, or play "
                             f"qpolicy:FILE)")
        raise ValueError(f"no qpolicy file at {path} (fit one with caledonia fit-qpolicy)")
    try:
        with np.load(path, allow_pickle=False) as f:
            return QPolicy({k: f[k] for k in ARRAYS}, float(f["beta"]), float(f["tau"]),
                           f["weights"], int(f["players"]), json.loads(str(f["meta"])))
    except (KeyError, ValueError, OSError) as e:
        raise ValueError(f"{path}: not a qpolicy file ({e})") from None
