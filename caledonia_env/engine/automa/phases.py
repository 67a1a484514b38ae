"""The Automa outside its turns: setup (A-1), the round phases (A-7), final scoring (A-8)."""
import numpy as np

from caledonia_env.engine.automa.deck import N_CYCLE, any_automa, build_deck, is_automa
from caledonia_env.engine.automa.expand import start_workers
from caledonia_env.engine.board import count_units, pofs
from caledonia_env.engine.constants import LUMBERJACK, MAX_PLAYERS, MAX_START_PICKS, N_GOODS
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (P_AM_PREF, P_AM_REMOVED, P_GOODS, P_MONEY, P_N_FULFILLED, P_SCORE, P_SHIP,
                     S_NP, S_ORDER, S_PICK_CLANS, S_PICKS, SCORE_TOTAL, T_AM_GLORY, T_AM_LEVEL,
                     T_AM_MONEY, T_AM_MONEY_PER_VP, T_AM_PREP_MONEY, T_AM_PROD_MONEY, T_AM_SHIP,
                     T_AM_TWO_EXPORT, T_AM_TWO_SETTLE, T_EXPORT_MIN)
from caledonia_env.engine.rng import rand_int
from caledonia_env.engine.scoring import settlement_count


@njit(cache=True)
def automa_setup(s, T, amlog=None):
    """A-1: Automa boards (money, shipping, preferred unit, deck), starting workers, and
    the round-1 order (humans first, A-1.5); only humans + 1 starting pairs (A-1.3)."""
    if not any_automa(T):
        return
    n = s[S_NP]
    order = np.empty(MAX_PLAYERS, np.int32)
    k = 0
    for pass_ in range(2):
        for i in range(n):
            q = s[S_ORDER + i]
            if is_automa(T, q) == (pass_ == 1):
                order[k] = q
                k += 1
    humans = 0
    for i in range(n):
        s[S_ORDER + i] = order[i]
        humans += 0 if is_automa(T, order[i]) else 1
    for i in range(humans + 1, MAX_START_PICKS):
        s[S_PICKS + i] = -1
        s[S_PICK_CLANS + i] = -1
    for i in range(n):
        p = order[i]
        if not is_automa(T, p):
            continue
        poff = pofs(p)
        s[poff + P_MONEY] = T[T_AM_MONEY + T[T_AM_LEVEL + p]]
        s[poff + P_SHIP] = T[T_AM_SHIP]
        s[poff + P_AM_PREF] = rand_int(s, N_CYCLE - 1)
        s[poff + P_AM_REMOVED] = 0
        build_deck(s, T, poff)
        start_workers(s, T, p, amlog)


# ------------------------------------------------------------- round phases
@njit(cache=True)
def automa_prepare(s, T):
    """A-7.1: preparation money and a fresh deck (rounds 2-5)."""
    for p in range(s[S_NP]):
        if is_automa(T, p):
            poff = pofs(p)
            s[poff + P_MONEY] += T[T_AM_PREP_MONEY]
            build_deck(s, T, poff)


@njit(cache=True)
def automa_production(s, T):
    """A-7.2: money per unit instead of goods (workers were paid as usual)."""
    units = np.zeros(16, np.int32)
    for p in range(s[S_NP]):
        if is_automa(T, p):
            poff = pofs(p)
            count_units(s, T, p, units)
            for u in range(LUMBERJACK):
                s[poff + P_MONEY] += units[u] * T[T_AM_PROD_MONEY + u]
            for g in range(N_GOODS):
                s[poff + P_GOODS + g] = 0


@njit(cache=True)
def two_seat(v, w, vmin, T, off):
    """A-8.3: most, tie, behind by at most behind_max, else 0."""
    if v < vmin:
        return 0
    if v > w:
        return T[off]
    if v == w:
        return T[off + 1]
    return T[off + 2] if w - v <= T[off + 3] else 0


@njit(cache=True)
def automa_final(s, T):
    """A-8: fixed glory, no goods, 1 VP per money unit of T_AM_MONEY_PER_VP; with exactly two
    seats the A-8.3 majorities for both seats."""
    if not any_automa(T):
        return
    n = s[S_NP]
    for p in range(n):
        if is_automa(T, p):
            poff = pofs(p)
            s[poff + P_SCORE + 0] = T[T_AM_GLORY + T[T_AM_LEVEL + p]]
            s[poff + P_SCORE + 1] = 0
            s[poff + P_SCORE + 2] = s[poff + P_MONEY] // T[T_AM_MONEY_PER_VP]
    if n == 2:
        e0 = s[pofs(0) + P_N_FULFILLED]
        e1 = s[pofs(1) + P_N_FULFILLED]
        st0 = settlement_count(s, T, 0)
        st1 = settlement_count(s, T, 1)
        emin = max(T[T_EXPORT_MIN], 0)
        s[pofs(0) + P_SCORE + 5] = two_seat(e0, e1, emin, T, T_AM_TWO_EXPORT)
        s[pofs(1) + P_SCORE + 5] = two_seat(e1, e0, emin, T, T_AM_TWO_EXPORT)
        s[pofs(0) + P_SCORE + 6] = two_seat(st0, st1, 1, T, T_AM_TWO_SETTLE)
        s[pofs(1) + P_SCORE + 6] = two_seat(st1, st0, 1, T, T_AM_TWO_SETTLE)
    for p in range(n):
        poff = pofs(p)
        tot = 0
        for i in range(SCORE_TOTAL):
            tot += s[poff + P_SCORE + i]
        s[poff + P_SCORE + SCORE_TOTAL] = tot
