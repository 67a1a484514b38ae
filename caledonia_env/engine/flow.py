"""Turn and round flow: what the next decision is (R-1.7, R-1.8, R-2, R-3.8, R-6).

``resolve`` looks at the pending work of the turn in a fixed priority order
and sets S_CTX / S_PLAYER; when nothing is pending, the turn, phase or round
moves on. Pending work that offers no legal option is dropped here.
"""
import numpy as np
from numba import njit

from .board import count_units, pofs
from .constants import (COW, CTX_AFTER_MAIN, CTX_BONUS, CTX_GAME_OVER, CTX_MAIN,
                        CTX_NEIGHBOR, CTX_PORT_COPY, CTX_PORT_DISCARD, CTX_PORT_GAIN,
                        CTX_PORT_PRICE, CTX_PORT_SWAP, CTX_PROCESS, CTX_SLAUGHTER,
                        CTX_START_PICK, CTX_START_WORKER, CTX_STRUCTURE, FIELD,
                        LUMBERJACK, MAX_DRAW, MINER, N_UNITS, P3, P4, P5, P6, P9,
                        PH_ACTIONS, PH_OVER, PH_PRODUCTION, PH_SETUP_PICK,
                        PH_SETUP_WORKERS, SHEEP)
from .contracts import draw, refill_slots
from .layout import (P_GLORY, P_GOODS, P_MARKET, P_MERCH, P_MONEY, P_PASSED, P_TECH,
                     S_BONUS_HEX, S_BONUS_UPG, S_CTX, S_DONE, S_DRAWN, S_KEEP_LEFT,
                     S_MAIN_DONE, S_MEAT_REM, S_N_DRAWN, S_N_PASSED, S_NB_PENDING,
                     S_NEXT_ORDER, S_NP, S_ORDER, S_P4_GOOD, S_PHASE, S_PLAYER,
                     S_PORT_KIND, S_PORT_LEFT, S_PORT_STAGE, S_PROC_KIND, S_PROC_SEAT,
                     S_ROUND, S_SETUP_PTR, S_STRUCT_PENDING, S_TILES, S_TURN_POS,
                     T_ROUNDS, T_SCORING_TILES_ON, T_STRUCT_DRAW, T_STRUCT_KEEP,
                     T_UNIT_GOOD, T_UNIT_YIELD, T_WORKER_INCOME)
from .options import (any_after_main_port, any_free_hex, any_nb_buy, any_upgrade_bonus,
                      free_box_count, process_max)
from .scoring import final_scoring, tile_glory


# ------------------------------------------------------------------ setup
@njit(cache=True)
def setup_next(s, T):
    """Advance through starting picks (R-1.7/R-1.9) and starting workers (R-1.8)."""
    n = s[S_NP]
    if s[S_PHASE] == PH_SETUP_PICK:
        if s[S_SETUP_PTR] < n:
            s[S_CTX] = CTX_START_PICK
            s[S_PLAYER] = s[S_ORDER + n - 1 - s[S_SETUP_PTR]]   # reverse turn order
            return
        s[S_PHASE] = PH_SETUP_WORKERS
        s[S_SETUP_PTR] = 0
    ptr = s[S_SETUP_PTR]
    if ptr < 2 * n:
        seat = ptr if ptr < n else 2 * n - 1 - ptr             # in order, then reverse
        s[S_CTX] = CTX_START_WORKER
        s[S_PLAYER] = s[S_ORDER + seat]
        return
    start_round(s, T, True)


@njit(cache=True)
def start_round(s, T, first):
    """R-2.1 preparation (skipped in round 1), then the first turn of the round."""
    n = s[S_NP]
    if not first:
        s[S_ROUND] += 1
        refill_slots(s, T)
        for p in range(n):
            po = pofs(p)
            for i in range(12):
                s[po + P_MERCH] += s[po + P_MARKET + i]
                s[po + P_MARKET + i] = 0
        for i in range(n):
            s[S_ORDER + i] = s[S_NEXT_ORDER + i]
    for p in range(n):
        s[pofs(p) + P_PASSED] = 0
        s[S_NEXT_ORDER + p] = -1
    s[S_N_PASSED] = 0
    s[S_PHASE] = PH_ACTIONS
    s[S_TURN_POS] = 0
    s[S_MAIN_DONE] = 0
    s[S_P4_GOOD] = -1
    s[S_PLAYER] = s[S_ORDER]
    s[S_CTX] = CTX_MAIN


# ------------------------------------------------------------------ turns
@njit(cache=True)
def end_turn(s, T):
    """Next player in turn order who has not passed; production when all passed (R-2.2)."""
    n = s[S_NP]
    s[S_MAIN_DONE] = 0
    s[S_P4_GOOD] = -1
    if s[S_N_PASSED] >= n:
        start_production(s, T)
        return
    pos = s[S_TURN_POS]
    for k in range(1, n + 1):
        q = (pos + k) % n
        p = s[S_ORDER + q]
        if s[pofs(p) + P_PASSED] == 0:
            s[S_TURN_POS] = q
            s[S_PLAYER] = p
            s[S_CTX] = CTX_MAIN
            return


# ------------------------------------------------------------- production
@njit(cache=True)
def start_production(s, T):
    """R-6.1 income and R-6.2 basic goods for everyone, then processing choices."""
    n = s[S_NP]
    units = np.zeros(N_UNITS, np.int32)
    for p in range(n):
        po = pofs(p)
        count_units(s, T, p, units)
        s[po + P_MONEY] += units[LUMBERJACK] * T[T_WORKER_INCOME + s[po + P_TECH]]
        s[po + P_MONEY] += units[MINER] * T[T_WORKER_INCOME + 2 + s[po + P_TECH + 1]]
        for u in (SHEEP, COW, FIELD):
            g = T[T_UNIT_GOOD + u]
            s[po + P_GOODS + g] += units[u] * T[T_UNIT_YIELD + u]
    s[S_PHASE] = PH_PRODUCTION
    s[S_PROC_SEAT] = 0
    s[S_PROC_KIND] = 0
    production_next(s, T)


@njit(cache=True)
def production_next(s, T):
    """Next processing choice (R-6.3) in next round's turn order; then scoring (R-6.4)."""
    n = s[S_NP]
    while s[S_PROC_SEAT] < n:
        p = s[S_NEXT_ORDER + s[S_PROC_SEAT]]
        while s[S_PROC_KIND] < 3:
            if process_max(s, T, p, s[S_PROC_KIND]) > 0:
                s[S_PLAYER] = p
                s[S_CTX] = CTX_PROCESS
                return
            s[S_PROC_KIND] += 1
        s[S_PROC_SEAT] += 1
        s[S_PROC_KIND] = 0
    end_round(s, T)


@njit(cache=True)
def end_round(s, T):
    """R-6.4 round scoring; after the last round, final scoring (R-7)."""
    n = s[S_NP]
    tile = s[S_TILES + s[S_ROUND] - 1]
    if T[T_SCORING_TILES_ON] and tile >= 0:
        for p in range(n):
            s[pofs(p) + P_GLORY] += tile_glory(s, T, p, tile)
    if s[S_ROUND] >= T[T_ROUNDS]:
        final_scoring(s, T)
        s[S_PHASE] = PH_OVER
        s[S_CTX] = CTX_GAME_OVER
        s[S_DONE] = 1
        s[S_PLAYER] = -1
        return
    start_round(s, T, False)


# ---------------------------------------------------------------- resolve
@njit(cache=True)
def structure_draw(s, T, p):
    """Draw the structure bonus contracts (R-3.3.2); False if there is nothing to pick."""
    if free_box_count(s, T, p) == 0:
        return False
    for i in range(MAX_DRAW):
        s[S_DRAWN + i] = -1
    k = 0
    while k < T[T_STRUCT_DRAW]:
        c = draw(s)
        if c < 0:
            break
        s[S_DRAWN + k] = c
        k += 1
    s[S_N_DRAWN] = k
    s[S_KEEP_LEFT] = T[T_STRUCT_KEEP]
    return k > 0


@njit(cache=True)
def resolve(s, T):
    """Set S_CTX / S_PLAYER for the next decision."""
    ph = s[S_PHASE]
    if ph == PH_SETUP_PICK or ph == PH_SETUP_WORKERS:
        setup_next(s, T)
        return
    if ph == PH_PRODUCTION:
        production_next(s, T)
        return
    if ph == PH_OVER:
        s[S_CTX] = CTX_GAME_OVER
        return
    p = s[S_PLAYER]
    # 1. neighborhood purchases right after an expansion
    if s[S_NB_PENDING] != 0:
        if any_nb_buy(s, T, p):
            s[S_CTX] = CTX_NEIGHBOR
            return
        s[S_NB_PENDING] = 0
    # 2. a port effect in progress
    kind = s[S_PORT_KIND]
    if kind >= 0:
        if s[S_PORT_LEFT] > 0:
            if kind == P3 or kind == P5:
                s[S_CTX] = CTX_PORT_DISCARD if s[S_PORT_STAGE] == 0 else CTX_PORT_GAIN
            elif kind == P4:
                s[S_CTX] = CTX_PORT_PRICE
            elif kind == P6:
                s[S_CTX] = CTX_PORT_SWAP
            elif kind == P9:
                s[S_CTX] = CTX_PORT_COPY
            return
        s[S_PORT_KIND] = -1
    # 3. structure bonus (R-3.3.2, P8)
    if s[S_STRUCT_PENDING]:
        s[S_STRUCT_PENDING] = 0
        if structure_draw(s, T, p):
            s[S_CTX] = CTX_STRUCTURE
            return
    # 4. animals to slaughter for a fulfilled contract
    if s[S_MEAT_REM] + s[S_MEAT_REM + 1] > 0:
        s[S_CTX] = CTX_SLAUGHTER
        return
    # 5. export bonuses / P7 upgrade; impossible ones lapse
    if s[S_BONUS_HEX] > 0 and not any_free_hex(s, T, p):
        s[S_BONUS_HEX] = 0
    if s[S_BONUS_UPG] > 0 and not any_upgrade_bonus(s, T, p):
        s[S_BONUS_UPG] = 0
    if s[S_BONUS_HEX] > 0 or s[S_BONUS_UPG] > 0:
        s[S_CTX] = CTX_BONUS
        return
    # 6. the turn itself: main action, then ports after it
    if s[S_MAIN_DONE] == 0:
        s[S_CTX] = CTX_MAIN
        return
    if any_after_main_port(s, T, p):
        s[S_CTX] = CTX_AFTER_MAIN
        return
    end_turn(s, T)
