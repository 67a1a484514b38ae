"""The legal-action mask for the pending decision (exact for every context)."""
from numba import njit

from .actions import (A_DECLINE_HEX, A_DECLINE_UPGRADE, A_END_TURN, A_FULFILL, A_HIRE,
                      A_KEEP, A_KEEP_NONE, A_NB_BUY, A_NB_DONE, A_OBTAIN, A_PASS,
                      A_PICK_GOOD, A_PLACE, A_PORT, A_PRICE, A_PROCESS, A_RETRIEVE, A_SELECT,
                      A_SHIP, A_START_PICK, A_TECH, A_TRADE, PRICE_DELTAS)
from .board import placeable, pofs
from .constants import (COW, CTX_AFTER_MAIN, CTX_BONUS, CTX_MAIN, CTX_NEIGHBOR,
                        CTX_PORT_COPY, CTX_PORT_DISCARD, CTX_PORT_GAIN, CTX_PORT_PRICE,
                        CTX_PORT_SWAP, CTX_PROCESS, CTX_SLAUGHTER, CTX_START_PICK,
                        CTX_START_WORKER, CTX_STRUCTURE, EMPTY, FISHERMAN, LUMBERJACK,
                        MAX_DRAW, MAX_MERCHANTS, MAX_NB_BUY, MAX_NODES, MAX_PROCESS,
                        MAX_SLOTS, MAX_START_PICKS, MINER, N_CORNERS, N_GOODS, NEUTRAL, OCC_STRIDE, P3, P4, SHEEP)
from .contracts import can_afford_contract, goods_ok, meat_deficit
from .economy import can_hire, can_nb_buy, can_ship, can_tech, can_trade
from .layout import (P_BOARD, P_BOX, P_GOODS, P_MARKET, P_MONEY, S_BONUS_HEX, S_BONUS_UPG, S_CTX,
                     S_DRAWN, S_MAIN_DONE, S_MEAT_PORTS, S_MEAT_REM, S_NB_PENDING, S_OCC,
                     S_P4_GOOD, S_PICKS, S_PLAYER, S_PROC_KIND, S_PORT_KIND, S_PORT_LEFT, S_SLOTS, T_LAND_COST, T_N_NODES, T_UNIT_COST,
                     T_UNIT_TERRAIN)
from .options import (can_obtain, place_scan, free_box_count, meat_ports, n_boxes, nb_limit,
                      process_max)
from .ports import copy_ok, port_param, port_usable, price_move_ok, swap_completes, swap_ok

N_DELTAS = len(PRICE_DELTAS)


@njit(cache=True)
def _trades(s, T, po, mask, only_good):
    for side in range(2):
        for g in range(N_GOODS):
            if only_good >= 0 and g != only_good:
                continue
            for k in range(1, MAX_MERCHANTS + 1):
                if not can_trade(s, T, po, side, g, k):
                    break
                mask[A_TRADE + (side * N_GOODS + g) * MAX_MERCHANTS + k - 1] = 1


@njit(cache=True)
def _places(s, T, p, mask, free_land):
    place_scan(s, T, p, free_land, mask, False)


@njit(cache=True)
def _fulfill_ok(s, T, p, box):
    po = pofs(p)
    c = s[po + P_BOX + box]
    if c < 0 or not goods_ok(s, T, po, c):
        return False
    cows = 0
    sheep = 0
    for m in range(T[T_N_NODES]):
        o = s[S_OCC + m]
        if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
            if o % OCC_STRIDE == COW:
                cows += 1
            elif o % OCC_STRIDE == SHEEP:
                sheep += 1
    d = meat_deficit(T, c, cows, sheep)
    if d == 0:
        return True
    ports = meat_ports(s, T, p)
    n_ports = 0
    for cc in range(N_CORNERS):
        if ports & (1 << cc):
            n_ports += 1
    return d <= n_ports


@njit(cache=True)
def legal_mask(s, T, mask):
    """Write the legal actions of the pending decision into ``mask`` (int8[N_ACTIONS])."""
    mask[:] = 0
    ctx = s[S_CTX]
    p = s[S_PLAYER]
    if p < 0:
        return
    po = pofs(p)
    if ctx == CTX_MAIN:
        if s[S_P4_GOOD] >= 0:
            _trades(s, T, po, mask, s[S_P4_GOOD])
            return
        mask[A_PASS] = 1
        _trades(s, T, po, mask, -1)
        if can_obtain(s, T, p):
            for i in range(MAX_SLOTS):
                if s[S_SLOTS + i] >= 0:
                    mask[A_OBTAIN + i] = 1
        _places(s, T, p, mask, False)
        if can_ship(s, T, po, False):
            mask[A_SHIP] = 1
        for t in range(2):
            if can_tech(s, T, po, t, False):
                mask[A_TECH + t] = 1
        if can_hire(s, T, po, False):
            mask[A_HIRE] = 1
        for b in range(n_boxes(s, T, p)):
            if _fulfill_ok(s, T, p, b):
                mask[A_FULFILL + b] = 1
        for c in range(N_CORNERS):
            if port_usable(s, T, p, c, True):
                mask[A_PORT + c] = 1
    elif ctx == CTX_AFTER_MAIN:
        mask[A_END_TURN] = 1
        for c in range(N_CORNERS):
            if port_usable(s, T, p, c, False):
                mask[A_PORT + c] = 1
    elif ctx == CTX_NEIGHBOR:
        mask[A_NB_DONE] = 1
        pend = s[S_NB_PENDING]
        for g in range(N_GOODS):
            if pend & (1 << g):
                for k in range(1, nb_limit(s, T, p, g) + 1):
                    if not can_nb_buy(s, T, po, g, k):
                        break
                    mask[A_NB_BUY + g * MAX_NB_BUY + k - 1] = 1
    elif ctx == CTX_STRUCTURE:
        mask[A_KEEP_NONE] = 1
        if free_box_count(s, T, p) > 0 and can_afford_contract(s, T, po):
            for i in range(MAX_DRAW):
                if s[S_DRAWN + i] >= 0:
                    mask[A_KEEP + i] = 1
    elif ctx == CTX_SLAUGHTER:
        for m in range(T[T_N_NODES]):
            o = s[S_OCC + m]
            if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
                u = o % OCC_STRIDE
                if (u == COW and s[S_MEAT_REM] > 0) or (u == SHEEP and s[S_MEAT_REM + 1] > 0):
                    mask[A_SELECT + m] = 1
        ports = s[S_MEAT_PORTS]
        for c in range(N_CORNERS):
            if ports & (1 << c):
                mask[A_PORT + c] = 1
    elif ctx == CTX_BONUS:
        if s[S_BONUS_HEX] > 0:
            mask[A_DECLINE_HEX] = 1
            _places(s, T, p, mask, True)
        if s[S_BONUS_UPG] > 0:
            mask[A_DECLINE_UPGRADE] = 1
            if can_ship(s, T, po, True):
                mask[A_SHIP] = 1
            for t in range(2):
                if can_tech(s, T, po, t, True):
                    mask[A_TECH + t] = 1
            if can_hire(s, T, po, True):
                mask[A_HIRE] = 1
            for i in range(2 * N_GOODS):
                if s[po + P_MARKET + i] > 0:
                    mask[A_RETRIEVE + i] = 1
    elif ctx == CTX_PORT_DISCARD or ctx == CTX_PORT_GAIN:
        first = 0 if s[S_PORT_KIND] == P3 else 3
        for g in range(first, first + 3):
            if ctx == CTX_PORT_GAIN or s[po + P_GOODS + g] > 0:
                mask[A_PICK_GOOD + g] = 1
    elif ctx == CTX_PORT_PRICE:
        steps = port_param(T, P4, 0)
        for g in range(N_GOODS):
            for i in range(N_DELTAS):
                d = PRICE_DELTAS[i]
                if (d <= steps and d >= -steps) and price_move_ok(s, T, po, g, d):
                    mask[A_PRICE + g * N_DELTAS + i] = 1
    elif ctx == CTX_PORT_SWAP:
        left = s[S_PORT_LEFT]
        for node in range(T[T_N_NODES]):
            for u in range(FISHERMAN):
                if swap_ok(s, T, p, node, u) and swap_completes(s, T, p, node, u, left):
                    mask[A_PLACE + u * MAX_NODES + node] = 1
    elif ctx == CTX_PORT_COPY:
        for c in range(N_CORNERS):
            if copy_ok(s, T, p, c, s[S_MAIN_DONE] == 0):
                mask[A_PORT + c] = 1
    elif ctx == CTX_PROCESS:
        kind = s[S_PROC_KIND]
        for k in range(process_max(s, T, p, kind) + 1):
            mask[A_PROCESS + kind * (MAX_PROCESS + 1) + k] = 1
    elif ctx == CTX_START_PICK:
        for i in range(MAX_START_PICKS):
            if s[S_PICKS + i] >= 0:
                mask[A_START_PICK + i] = 1
    elif ctx == CTX_START_WORKER:
        for node in range(T[T_N_NODES]):
            if s[S_OCC + node] != EMPTY:
                continue
            for u in (LUMBERJACK, MINER):
                if (s[po + P_BOARD + u] > 0 and placeable(T, node, T[T_UNIT_TERRAIN + u])
                        and s[po + P_MONEY] >= T[T_UNIT_COST + u] + T[T_LAND_COST + node]):
                    mask[A_PLACE + u * MAX_NODES + node] = 1
