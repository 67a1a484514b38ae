"""Port bonus tiles P1-P9 (R-5): reach, applicability and effects."""

import numpy as np

from caledonia_env.engine.board import in_reach, neighbor_goods, node_words, pofs, table_word
from caledonia_env.engine.clans import board_avail, take_from_board
from caledonia_env.engine.constants import (FIELD, FISHERMAN, N_CORNERS, N_UNITS, NEUTRAL, OCC_STRIDE,
                        PORT_BASIC_EXCHANGE, PORT_COPY, PORT_MEAT_REDUCTION, PORT_MONEY,
                        PORT_MONEY_STRUCTURE, PORT_PRICE_SHIFT, PORT_PROCESSED_EXCHANGE,
                        PORT_SWAP_UNITS, PORT_UPGRADE_GLORY)
from caledonia_env.engine.economy import can_trade
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (MAX_LEVEL, P_BOARD, P_BOX, P_GLORY, P_GOODS, P_MONEY, P_PORTS_USED, P_SHIP,
                     RB_WORDS, S_BONUS_UPG, S_OCC, S_PORT_KIND, S_PORT_LEFT, S_PORT_STAGE, S_PORTS,
                     S_PRICE_SHIFT_GOOD, S_PRICE_STEP, S_STRUCT_PENDING, S_SWAP_IN, S_SWAP_NODE,
                     S_SWAP_OUT, T_N_NODES, T_PORT_NODE, T_PORT_PARAM, T_PORT_REACHERS, T_TERRAIN,
                     T_UNIT_TERRAIN)
from caledonia_env.engine.market import clamp_step
from caledonia_env.engine.layout import S_NB_PENDING, T_NEIGHBOR_BONUS, T_SWAP_NB_BONUS   # the swap's bonuses


@njit(cache=True, inline="always")
def port_param(T, tile, i):
    return T[T_PORT_PARAM + tile * 2 + i]


@njit(cache=True)
def ports_open(s, p):
    """Bitmask of the corners whose tile is in play and unused by p (R-5)."""
    used = s[pofs(p) + P_PORTS_USED]
    out = 0
    for c in range(N_CORNERS):
        if s[S_PORTS + c] >= 0 and not used & (1 << c):
            out |= 1 << c
    return out


@njit(cache=True, inline="always")
def _reaches(s, T, p, corner, reach):
    """p reaches the port at ``corner`` (R-5) or its fisherman sits on it (R-8.5);
    ``reach`` is p's ``board.reach_bits``."""
    node = T[T_PORT_NODE + corner]
    o = s[S_OCC + node]
    if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
        return True
    return in_reach(reach, node)


@njit(cache=True)
def port_reachable(s, T, p, corner, reach):
    """The tile at ``corner`` is in play, unused by p and within p's reach (R-5);
    ``reach`` is p's ``board.reach_bits``."""
    return (ports_open(s, p) & (1 << corner)) != 0 and _reaches(s, T, p, corner, reach)


@njit(cache=True, inline="always")
def reachable_ports(s, T, p, corners):
    """The corners of the bitmask ``corners`` whose port p reaches (R-5) or whose port node
    holds p's fisherman (R-8.5), as a bitmask: one branch-free pass over the map for p's own
    nodes, tested against ``T_PORT_REACHERS`` (no reach bitset is built)."""
    level = s[pofs(p) + P_SHIP]
    if level >= MAX_LEVEL:
        level = MAX_LEVEL - 1
    n = T[T_N_NODES]
    out = 0
    for w in range(RB_WORDS):
        own = node_words(s, n, p, w)[1]
        if own == 0:
            continue
        for c in range(N_CORNERS):
            if corners & (1 << c) and not out & (1 << c):
                node = T[T_PORT_NODE + c]
                reachers = table_word(T, T_PORT_REACHERS + (c * MAX_LEVEL + level)
                                      * (2 * RB_WORDS) + 2 * w)
                on_port = node >> 6 == w and ((own >> np.uint64(node & 63)) & np.uint64(1)) != 0
                if (own & reachers) != 0 or on_port:
                    out |= 1 << c
    return out


@njit(cache=True, inline="always")
def corner_of(s, tile):
    for c in range(N_CORNERS):
        if s[S_PORTS + c] == tile:
            return c
    return -1


# ------------------------------------------------------------------ P6 price
@njit(cache=True)
def price_move_ok(s, T, poff, g, delta):
    """After moving g's price marker by delta steps, a trade of g is possible (P6 [interp])."""
    if can_trade(s, T, poff, 1, g, 1):
        return True
    old = s[S_PRICE_STEP + g]
    s[S_PRICE_STEP + g] = clamp_step(T, g, old + delta)
    ok = can_trade(s, T, poff, 0, g, 1)
    s[S_PRICE_STEP + g] = old
    return ok


@njit(cache=True, inline="always")
def price_shift_any(s, T, poff, steps):
    for g in range(6):
        if price_move_ok(s, T, poff, g, steps) or price_move_ok(s, T, poff, g, -steps):
            return True
    return False


# ------------------------------------------------------------------- P7 swap
@njit(cache=True, inline="always")
def owns(s, p, node):
    """p has a unit on ``node`` (the first test of ``swap_ok``, hoisted out of unit loops)."""
    o = s[S_OCC + node]
    return o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p


@njit(cache=True)
def swap_ok(s, T, p, node, u):
    """One P7 exchange: unit type u from the board replaces p's unit on ``node``."""
    if node == s[S_SWAP_NODE]:
        return False
    o = s[S_OCC + node]
    if o < 0 or o == NEUTRAL or o // OCC_STRIDE != p:
        return False
    t = o % OCC_STRIDE
    if t == FIELD or u == FIELD or u == FISHERMAN or u == t:
        return False
    if s[S_SWAP_OUT] & (1 << u) or s[S_SWAP_IN] & (1 << t):
        return False
    if board_avail(s, T, pofs(p), u) <= 0:
        return False
    return (T[T_TERRAIN + node] & T[T_UNIT_TERRAIN + u]) != 0


@njit(cache=True)
def do_swap(s, T, p, node, u):
    poff = pofs(p)
    t = s[S_OCC + node] % OCC_STRIDE
    s[poff + P_BOARD + t] += 1
    take_from_board(s, T, poff, u)
    s[S_OCC + node] = p * OCC_STRIDE + u
    s[S_SWAP_OUT] |= 1 << t
    s[S_SWAP_IN] |= 1 << u
    s[S_SWAP_NODE] = node
    s[S_PORT_LEFT] -= 1


@njit(cache=True, inline="always")
def swap_neighborhood(s, T, p, node):
    """After one exchange: under the erratum reading (``T_SWAP_NB_BONUS``) the unit swapped
    in on ``node`` queues the neighborhood bonus as an expansion would (R-3.3.1); under the
    first-edition reading it gives none. The building bonus is checked by the caller."""
    if T[T_SWAP_NB_BONUS] and T[T_NEIGHBOR_BONUS]:
        s[S_NB_PENDING] = neighbor_goods(s, T, p, node)


@njit(cache=True, inline="always")
def _any_single(s, T, p):
    for node in range(T[T_N_NODES]):
        if not owns(s, p, node):
            continue
        for u in range(FISHERMAN):
            if swap_ok(s, T, p, node, u):
                return True
    return False


@njit(cache=True)
def swap_completes(s, T, p, node, u, left):
    """After exchanging (node, u), the last of ``left`` (<= 2) exchanges stays possible."""
    if left <= 1:
        return True
    poff = pofs(p)
    saved_occ = s[S_OCC + node]
    saved = (s[S_SWAP_OUT], s[S_SWAP_IN], s[S_SWAP_NODE], s[S_PORT_LEFT])
    board = np.empty(N_UNITS, np.int32)
    for i in range(N_UNITS):
        board[i] = s[poff + P_BOARD + i]
    do_swap(s, T, p, node, u)
    ok = _any_single(s, T, p)
    s[S_OCC + node] = saved_occ
    s[S_SWAP_OUT] = saved[0]
    s[S_SWAP_IN] = saved[1]
    s[S_SWAP_NODE] = saved[2]
    s[S_PORT_LEFT] = saved[3]
    for i in range(N_UNITS):
        s[poff + P_BOARD + i] = board[i]
    return ok


@njit(cache=True, inline="always")
def _any_swap(s, T, p, left):
    for node in range(T[T_N_NODES]):
        if not owns(s, p, node):
            continue
        for u in range(FISHERMAN):
            if swap_ok(s, T, p, node, u) and swap_completes(s, T, p, node, u, left):
                return True
    return False


@njit(cache=True, inline="always")
def swap_units_any(s, T, p, swaps):
    saved = (s[S_SWAP_OUT], s[S_SWAP_IN], s[S_SWAP_NODE])
    s[S_SWAP_OUT] = 0
    s[S_SWAP_IN] = 0
    s[S_SWAP_NODE] = -1
    ok = _any_swap(s, T, p, swaps)
    s[S_SWAP_OUT] = saved[0]
    s[S_SWAP_IN] = saved[1]
    s[S_SWAP_NODE] = saved[2]
    return ok


# ----------------------------------------------------------- applicability
@njit(cache=True)
def _simple_applicable(s, T, p, tile, before_main):
    poff = pofs(p)
    if tile == PORT_MEAT_REDUCTION:
        return False
    if tile == PORT_MONEY or tile == PORT_UPGRADE_GLORY or tile == PORT_MONEY_STRUCTURE:
        return True
    if tile == PORT_BASIC_EXCHANGE:
        return s[poff + P_GOODS] + s[poff + P_GOODS + 1] + s[poff + P_GOODS + 2] > 0
    if tile == PORT_PROCESSED_EXCHANGE:
        return s[poff + P_GOODS + 3] + s[poff + P_GOODS + 4] + s[poff + P_GOODS + 5] > 0
    if tile == PORT_PRICE_SHIFT:
        return (before_main and s[S_PRICE_SHIFT_GOOD] < 0
                and price_shift_any(s, T, poff, port_param(T, PORT_PRICE_SHIFT, 0)))
    if tile == PORT_SWAP_UNITS:
        return swap_units_any(s, T, p, port_param(T, PORT_SWAP_UNITS, 0))
    return False


@njit(cache=True)
def copy_ok(s, T, p, corner, before_main):
    """P9 may copy the tile at ``corner`` (paid already): another tile in play, usable now."""
    other = s[S_PORTS + corner]
    return other >= 0 and other != PORT_COPY and _simple_applicable(s, T, p, other, before_main)


@njit(cache=True)
def effect_applicable(s, T, p, tile, before_main):
    """Can p use ``tile``'s effect now? (P1 only while slaughtering; P6 before the main action)."""
    if tile != PORT_COPY:
        return _simple_applicable(s, T, p, tile, before_main)
    poff = pofs(p)
    cost = port_param(T, PORT_COPY, 0)
    if s[poff + P_MONEY] < cost:
        return False
    s[poff + P_MONEY] -= cost        # the copy is paid first
    ok = False
    for c in range(N_CORNERS):
        if copy_ok(s, T, p, c, before_main):
            ok = True
            break
    s[poff + P_MONEY] += cost
    return ok


@njit(cache=True)
def usable_ports(s, T, p, before_main, reach):
    """Bitmask of the corners whose PORT action is legal in the main / after-main contexts
    (R-5): in play, unused by p, reached, its effect applicable now (``reach``: p's
    ``board.reach_bits``)."""
    if s[S_PRICE_SHIFT_GOOD] >= 0:
        return 0       # after P6 the main action must be the trade [interp]
    open_ = ports_open(s, p)
    out = 0
    for c in range(N_CORNERS):
        if (open_ & (1 << c) and _reaches(s, T, p, c, reach)
                and effect_applicable(s, T, p, s[S_PORTS + c], before_main)):
            out |= 1 << c
    return out


@njit(cache=True)
def apply_effect(s, T, p, tile, n_boxes):
    """Start ``tile``'s effect for p; multi-step effects set S_PORT_KIND."""
    poff = pofs(p)
    if tile == PORT_MONEY:
        s[poff + P_MONEY] += port_param(T, PORT_MONEY, 0)
    elif tile == PORT_BASIC_EXCHANGE or tile == PORT_PROCESSED_EXCHANGE:
        s[S_PORT_KIND] = tile
        s[S_PORT_STAGE] = 0
        s[S_PORT_LEFT] = port_param(T, tile, 0)
    elif tile == PORT_PRICE_SHIFT:
        s[S_PORT_KIND] = PORT_PRICE_SHIFT
        s[S_PORT_LEFT] = 1
    elif tile == PORT_SWAP_UNITS:
        s[S_PORT_KIND] = PORT_SWAP_UNITS
        s[S_PORT_LEFT] = port_param(T, PORT_SWAP_UNITS, 0)
        s[S_SWAP_OUT] = 0
        s[S_SWAP_IN] = 0
        s[S_SWAP_NODE] = -1
    elif tile == PORT_UPGRADE_GLORY:
        s[poff + P_GLORY] += port_param(T, PORT_UPGRADE_GLORY, 0)
        s[S_BONUS_UPG] += port_param(T, PORT_UPGRADE_GLORY, 1)
    elif tile == PORT_MONEY_STRUCTURE:
        s[poff + P_MONEY] += port_param(T, PORT_MONEY_STRUCTURE, 0)
        for b in range(n_boxes):
            if s[poff + P_BOX + b] < 0:
                s[S_STRUCT_PENDING] = 1
                break
    elif tile == PORT_COPY:
        s[poff + P_MONEY] -= port_param(T, PORT_COPY, 0)
        s[S_PORT_KIND] = PORT_COPY
        s[S_PORT_LEFT] = 1


@njit(cache=True)
def use_port(s, T, p, corner, n_boxes):
    s[pofs(p) + P_PORTS_USED] |= 1 << corner
    apply_effect(s, T, p, s[S_PORTS + corner], n_boxes)

