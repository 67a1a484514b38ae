"""The greedy policy, determinization and rollouts, compiled with numba.

``greedy_action`` is one-step lookahead: apply each legal action to a copy of the state (the
engine resolves what follows) and keep the best :func:`agents.greedy_value.evaluate` for the
deciding player, the map of each copy counted only where the action changed it
(:func:`agents.greedy_value.update_memo`). ``greedy_rollout`` plays a whole game with it; the
search bots use it as their rollout policy. ``determinize`` samples the hidden information
(R-1.4, A-2) and ``rollout_margins`` finishes many determinized copies of a position, giving
each one's final margin (``final_margin``).

A rollout with a horizon of H rounds (H >= 1; 0: no horizon) stops when the round H rounds
after its start begins (H = 1: at the end of the current round, after its production and
scoring, R-6) or when the game ends; it is then valued by :func:`leaf_margin`, the hand-written
evaluation's estimate of the final margin (exact once the game is over).

Each compiled function links and generates the code of the whole engine below it again
(issue #37), so the search's uses of the greedy policy are one compiled function,
:func:`greedy_call` (its ``op`` chooses the work), behind the Python functions
:func:`action_values`, :func:`greedy_rollout` and :func:`rollout_margins`; ``after`` and
the bodies they run are inlined into it. :func:`greedy_action` (the greedy bot's move)
stays a function of its own, which the rollouts call. The rollout loops here and in
:mod:`agents.netroll` share their end test (:func:`reached`) and the margins loops their start
(:func:`start_rollout`) and value (:func:`rollout_value`); only the choice of each move differs.
"""
import numpy as np

from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.board import pofs
from caledonia_env.engine.constants import MAX_CONTRACTS
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (P_AM_NPILE, P_AM_PILE, P_MONEY, P_SCORE, S_DECK,
                                         S_DECK_COUNT, S_DECK_HEAD, S_NP, S_PLAYER, S_ROUND,
                                         T_AM_LEVEL, T_MONEY_PER_VP, copy_state, game_over)
from caledonia_env.engine.mask import count_legal, legal_mask
from caledonia_env.engine.playout import rollout
from caledonia_env.engine.rng import seed_rng
from caledonia_env.engine.compile.scratch import scratch
from caledonia_env.engine.step import apply_action

from caledonia_env.agents.greedy_value import (MEMO_LEN, N_WEIGHTS, SCORE_TOTAL, W_NOISE,
                                               W_OPPONENT, evaluate, fill_rooms,
                                               lookahead_table, relative_known, update_memo)


@njit(cache=True, inline="always")
def after(s, T, p, w, a, table, buf, memo, automa):
    """p's value (:func:`agents.greedy_value.relative_known`) of the state one action ``a``
    after ``s`` (written into ``buf``), its map counted from ``s``'s
    :func:`agents.greedy_value.lookahead_table` (``memo``: scratch)."""
    copy_state(buf, s)
    apply_action(buf, T, a, automa)
    update_memo(s, table, buf, T, p, memo)
    return relative_known(buf, T, p, w, memo, table)


@njit(cache=True, inline="always")
def start_lookahead(s, T, p, w):
    """The :func:`agents.greedy_value.lookahead_table` of ``s`` for p, with every player's
    room when the weights value the opponents (``W_OPPONENT`` > 0)."""
    table = lookahead_table(s, T, p)
    if w[W_OPPONENT] != 0.0 and s[S_NP] > 1:
        fill_rooms(s, T, table)
    return table


@njit(cache=True, inline="always")
def seat_weights(w, p):
    """The weights seat p plays with: ``w`` itself (N_WEIGHTS entries, every seat alike), or
    row p of ``w`` holding one row of N_WEIGHTS per seat, flattened."""
    if w.shape[0] == N_WEIGHTS:
        return w[0:N_WEIGHTS]           # a slice either way: one type for greedy_action
    return w[p * N_WEIGHTS:(p + 1) * N_WEIGHTS]


@njit(cache=True)
def greedy_action(s, T, w, mask, buf, automa):
    """One-step lookahead: the legal action whose resulting state evaluates best for
    the deciding player (ties broken by numba's np.random stream); -1 if none."""
    p = s[S_PLAYER]
    legal_mask(s, T, mask)
    best = -1
    best_v = -1e18
    k, only = count_legal(mask)
    if k == 1:
        return only
    table = start_lookahead(s, T, p, w)
    memo = scratch(MEMO_LEN, np.int64)
    for a in range(N_ACTIONS):
        if mask[a]:
            v = after(s, T, p, w, a, table, buf, memo, automa) + w[W_NOISE] * np.random.random()
            if v > best_v:
                best_v = v
                best = a
    return best


@njit(cache=True)
def seed_numba(seed):
    """Seed numba's np.random stream (separate from NumPy's)."""
    np.random.seed(seed)


NO_HORIZON = 1 << 30            # a stop round no game reaches: rollouts to the end


@njit(cache=True)
def stop_round(s, horizon):
    """The round whose start ends a rollout from ``s`` with ``horizon`` rounds (0: none)."""
    return s[S_ROUND] + horizon if horizon > 0 else NO_HORIZON


@njit(cache=True, inline="always")
def reached(s, stop):
    """A rollout is at its end: the game is over or round ``stop`` has begun."""
    return game_over(s) or s[S_ROUND] >= stop


@njit(cache=True, inline="always")
def greedy_rollout_to(s, T, w, stop, max_steps, automa):
    """Play greedy actions for every player (seat p with :func:`seat_weights` of ``w``) until
    the game ends or round ``stop`` begins; returns steps taken (negative if a position had
    no legal action)."""
    mask = np.zeros(N_ACTIONS, np.int8)
    buf = np.empty_like(s)
    steps = 0
    while not reached(s, stop) and steps < max_steps:
        a = greedy_action(s, T, seat_weights(w, s[S_PLAYER]), mask, buf, automa)
        if a < 0:
            return -1 - steps
        apply_action(s, T, a, automa)
        steps += 1
    return steps


@njit(cache=True)
def _canonical_shuffle(s, start, count, circular):
    """Sort ``count`` entries from ``start`` (a circular buffer of MAX_CONTRACTS when
    ``circular``), then Fisher-Yates shuffle them with numba's np.random: the result depends
    on which entries are there, never on their order."""
    vals = np.empty(count, np.int64)
    for i in range(count):
        vals[i] = s[S_DECK + (start + i) % MAX_CONTRACTS] if circular else s[start + i]
    vals.sort()
    for i in range(count - 1, 0, -1):
        j = np.random.randint(i + 1)
        tmp = vals[i]
        vals[i] = vals[j]
        vals[j] = tmp
    for i in range(count):
        if circular:
            s[S_DECK + (start + i) % MAX_CONTRACTS] = vals[i]
        else:
            s[start + i] = vals[i]


@njit(cache=True)
def shuffle_pile(s, seed):
    """Determinize the hidden contract pile (R-1.4): a uniformly random order of the
    contracts in it, drawn with ``seed`` and independent of the true order."""
    np.random.seed(seed)
    _canonical_shuffle(s, s[S_DECK_HEAD], s[S_DECK_COUNT], True)


@njit(cache=True)
def determinize(s, T, seed):
    """Replace what no player can know by a sample drawn with ``seed``: the order of the
    contract pile (R-1.4), the order of every Automa's face-down action pile (A-2) and the
    state's random stream (``S_RNG``: the solo dice (R-9.2), the Automa's random picks and
    reshuffles, A-2.5). What is left is public: the sample depends on the pile contents,
    not on their true order or on the true stream."""
    shuffle_pile(s, seed)
    for p in range(s[S_NP]):
        if T[T_AM_LEVEL + p] > 0:
            poff = pofs(p)
            _canonical_shuffle(s, poff + P_AM_PILE, s[poff + P_AM_NPILE], False)
    seed_rng(s, np.random.randint(1, 2**31 - 2))


@njit(cache=True, inline="always")
def _action_values(s, T, w, mask, buf, out, automa):
    """:func:`action_values`, typed inside :func:`greedy_call`."""
    p = s[S_PLAYER]
    legal_mask(s, T, mask)
    table = start_lookahead(s, T, p, w)
    memo = scratch(MEMO_LEN, np.int64)
    for a in range(N_ACTIONS):
        if mask[a]:
            out[a] = after(s, T, p, w, a, table, buf, memo, automa)
        else:
            out[a] = -np.inf


@njit(cache=True)
def final_margin(s, T, p):
    """p's final VP minus the best opponent's (ties: leftover money, R-7 [interp]);
    p's final VP in a solo game."""
    per = T[T_MONEY_PER_VP]
    poff = pofs(p)
    mine = s[poff + P_SCORE + SCORE_TOTAL] + (s[poff + P_MONEY] % per) * 0.01
    if s[S_NP] == 1:
        return mine
    best = -1e18
    for q in range(s[S_NP]):
        if q != p:
            qo = pofs(q)
            v = s[qo + P_SCORE + SCORE_TOTAL] + (s[qo + P_MONEY] % per) * 0.01
            if v > best:
                best = v
    return mine - best


@njit(cache=True)
def leaf_margin(s, T, p, w):
    """p's margin where a rollout stopped: the final margin (:func:`final_margin`) once the
    game is over, else p's estimated final VP (:func:`agents.greedy_value.evaluate`) minus the
    best opponent's (p's alone in a solo game)."""
    if game_over(s):
        return final_margin(s, T, p)
    mine = evaluate(s, T, p, w)
    if s[S_NP] == 1:
        return mine
    best = -1e18
    for q in range(s[S_NP]):
        if q != p:
            v = evaluate(s, T, q, w)
            if v > best:
                best = v
    return mine - best


@njit(cache=True, inline="always")
def start_rollout(buf, s, T, action, seed, horizon, automa):
    """The start every margins loop shares: ``buf`` = ``s`` determinized with ``seed``
    (:func:`determinize`), then ``action`` applied; returns the rollout's stop round
    (:func:`stop_round` of ``horizon``)."""
    copy_state(buf, s)
    determinize(buf, T, seed)
    stop = stop_round(buf, horizon)
    apply_action(buf, T, action, automa)
    return stop


@njit(cache=True, inline="always")
def rollout_value(buf, T, p, w, steps, stop):
    """p's :func:`leaf_margin` (weights ``w``) where a rollout of ``steps`` moves toward
    round ``stop`` ended; -1e9 if it failed (no legal action) or fell short of its end."""
    if steps < 0 or not reached(buf, stop):
        return -1e9
    return leaf_margin(buf, T, p, w)


@njit(cache=True, inline="always")
def _rollout_margins(s, T, w, p, actions, seeds, horizon, buf, out, automa):
    """:func:`rollout_margins`, typed inside :func:`greedy_call`."""
    for i in range(actions.shape[0]):
        stop = start_rollout(buf, s, T, actions[i], seeds[i], horizon, automa)
        steps = greedy_rollout_to(buf, T, w, stop, 100000, automa)
        out[i] = rollout_value(buf, T, p, w, steps, stop)


@njit(cache=True)
def random_rollout_margins(s, T, w, p, actions, seeds, horizon, buf, out, automa):
    """As :func:`rollout_margins` but finishing every game with uniformly random legal
    actions (the engine's ``playout.rollout``); ``horizon`` must be 0 (to the end)."""
    for i in range(actions.shape[0]):
        start_rollout(buf, s, T, actions[i], seeds[i], 0, automa)
        steps = rollout(buf, T, seeds[i] + 1, 100000, automa)
        if steps < 0 or not game_over(buf):
            out[i] = -1e9
        else:
            out[i] = final_margin(buf, T, p)


OP_VALUES, OP_FINISH, OP_MARGINS = range(3)        # what greedy_call does


@njit(cache=True, nogil=True)
def greedy_call(op, s, T, w, p, mask, buf, out, actions, seeds, horizon, stop, max_steps,
                automa):
    """The search bots' work with the greedy policy (weights ``w``), by ``op``:
    ``OP_VALUES``: :func:`action_values`; ``OP_FINISH``: :func:`greedy_rollout` (round
    ``stop``, ``max_steps``), returning its steps; ``OP_MARGINS``: :func:`rollout_margins`
    (``horizon`` rounds). Each reads the arguments its Python function names; returns 0
    but for ``OP_FINISH``."""
    if op == OP_VALUES:
        _action_values(s, T, w, mask, buf, out, automa)
    elif op == OP_FINISH:
        return greedy_rollout_to(s, T, w, stop, max_steps, automa)
    elif op == OP_MARGINS:
        _rollout_margins(s, T, w, p, actions, seeds, horizon, buf, out, automa)
    return 0


_NO_MASK = np.zeros(0, np.int8)         # the arguments an op does not read, typed as those
_NO_VALUES = np.zeros(0, np.float64)    # it does (one compiled greedy_call; netroll's
                                        # policy_call too)
_NO_IDS = np.zeros(0, np.int64)


def action_values(s, T, w, mask, buf, out, automa) -> None:
    """One-step evaluation of every legal action for the deciding player into ``out``
    (-inf if illegal); the legal actions into ``mask``, ``buf`` a scratch state."""
    greedy_call(OP_VALUES, s, T, w, 0, mask, buf, out, _NO_IDS, _NO_IDS, 0, 0, 0, automa)


def greedy_rollout(s, T, w, max_steps, automa, stop=NO_HORIZON) -> int:
    """Play greedy actions for every player until the game ends (or round ``stop``
    begins, :func:`stop_round`) or ``max_steps`` moves; returns steps taken (negative if a
    position had no legal action). ``w``: one weight vector for every seat, or one per seat
    (``num_players * N_WEIGHTS`` entries, seat by seat, :func:`seat_weights`)."""
    if w.shape[0] != N_WEIGHTS and w.shape[0] != s[S_NP] * N_WEIGHTS:
        raise ValueError(f"greedy_rollout: {w.shape[0]} weights; need {N_WEIGHTS} or "
                         f"{int(s[S_NP])} x {N_WEIGHTS} (one vector per seat)")
    return int(greedy_call(OP_FINISH, s, T, w, 0, _NO_MASK, s[:0], _NO_VALUES, _NO_IDS,
                           _NO_IDS, 0, stop, max_steps, automa))


def rollout_margins(s, T, w, p, actions, seeds, horizon, buf, out, automa) -> None:
    """For each i: determinize the hidden information with seeds[i] (:func:`determinize`),
    apply actions[i], play greedy for everyone to the end (or ``horizon`` rounds, see the
    module's docstring), and store p's margin (:func:`leaf_margin`) in out[i]."""
    greedy_call(OP_MARGINS, s, T, w, p, _NO_MASK, buf, out, actions, seeds, horizon, 0, 0,
                automa)
