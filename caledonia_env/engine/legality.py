"""Legality checks shared by the mask and the flow (one definition per rule)."""
import numpy as np

from caledonia_env.engine.board import ctz, pofs, reach_of, table_word
from caledonia_env.engine.actions import A_PLACE
from caledonia_env.engine.clans import (base_cost, board_avail, cellar_pay, crow, fisher_spot, land_part,
                                       total_cost)
from caledonia_env.engine.constants import (DAIRY, EMPTY, FISHERMAN, LUMBERJACK, MAX_NODES, MINER, N_CORNERS, N_GOODS,
                        N_UNITS, PORT_COPY, PORT_MEAT_REDUCTION, PROCESS_IN, TERRAIN_LOCH,
                        TERRAIN_PORT)
from caledonia_env.engine.contracts import can_afford_contract
from caledonia_env.engine.economy import can_hire, can_nb_buy, can_ship, can_tech
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (P_BOARD, P_BOX, P_CELLAR, P_GOODS, P_MARKET, P_MONEY, RB_WORDS, S_NB_BOUGHT,
                     S_NB_PENDING, S_OCC, S_PORTS, S_PRICE_SHIFT_GOOD, T_ACTIVE, T_BORDER,
                     T_CLAN_BORDER_START, T_CLAN_BOXES, T_CLAN_DELTA_DISC,
                     T_DELTA, T_DELTA_BITS, T_LAND_COST, T_LAND_LE, T_LAND_MAX, T_N_NODES,
                     T_NB_LIMIT, T_RETRIEVE_BUY, T_TERRAIN, T_UNIT_COUNT, T_UNIT_NODES,
                     T_UNIT_TERRAIN, T_UNIT_YIELD)
from caledonia_env.engine.ports import (corner_of, effect_applicable, port_param, port_reachable, ports_open,
                    reachable_ports)


@njit(cache=True)
def n_boxes(s, T, p):
    """Export boxes of player p (R-3.2; two for Buchanan, R-8.1)."""
    return T[T_CLAN_BOXES + crow(s, pofs(p))]


@njit(cache=True)
def free_box_count(s, T, p):
    poff = pofs(p)
    k = 0
    for b in range(n_boxes(s, T, p)):
        if s[poff + P_BOX + b] < 0:
            k += 1
    return k


@njit(cache=True)
def unit_cost(s, T, p, u, node, free_land):
    """Unit cost plus land cost (no land cost for a free hex, R-3.7.2), with the clan's
    prices and discounts (R-8.2, R-8.5, R-8.7); never below £0."""
    poff = pofs(p)
    return total_cost(base_cost(s, T, poff, u), land_part(s, T, poff, u, node, free_land))


@njit(cache=True, inline="always")
def _land_le(T, w, c, free_land):
    """Word w of the bitset of the nodes whose land cost is <= c (every node with
    ``free_land``, where the land costs £0)."""
    if c < 0:
        return np.uint64(0)
    if free_land:
        return ~np.uint64(0)
    return table_word(T, T_LAND_LE + min(c, T[T_LAND_MAX]) * (2 * RB_WORDS) + 2 * w)


@njit(cache=True, inline="always")
def _afford(T, w, lim, ddisc, free_land):
    """Word w of the nodes whose land cost, less ``ddisc`` on delta hexes (R-8.7), is <= lim."""
    delta = table_word(T, T_DELTA_BITS + 2 * w)
    return ((~delta & _land_le(T, w, lim, free_land))
            | (delta & _land_le(T, w, lim + ddisc, free_land)))


@njit(cache=True)
def place_scan(s, T, p, free_land, mask, first_only, reach):
    """Mark every legal expansion (R-3.3) in ``mask`` at A_PLACE + unit*MAX_NODES + node.

    The per-node test as bitsets (tests/engine/test_speed_paths.py holds the per-node
    reference it is checked against): per unit on the board, the nodes of reach & empty & the
    unit's terrain (``T_UNIT_NODES``; ``reach``: p's ``board.reach_of``) & the nodes whose
    land cost the money left after the unit's own cost pays (``T_LAND_LE``; this is the
    mask's hot spot, so every test but the fisherman's is one AND of bitsets). Returns the
    number of legal placements; with ``first_only`` it stops at the first one and leaves
    ``mask`` untouched.
    """
    poff = pofs(p)
    money = s[poff + P_MONEY]
    if money < 0:
        return 0                     # every cost is at least £0
    row = crow(s, poff)
    ddisc = T[T_CLAN_DELTA_DISC + row]
    found = 0
    for u in range(N_UNITS):
        if board_avail(s, T, poff, u) <= 0:
            continue
        base = base_cost(s, T, poff, u)
        lim = money - base           # money >= max(base + land, 0) <=> land <= lim
        tab = T_UNIT_NODES + u * (2 * RB_WORDS)
        for w in range(RB_WORDS):
            x = reach[w] & reach[RB_WORDS + w] & table_word(T, tab + 2 * w)
            if u != FISHERMAN:
                x &= _afford(T, w, lim, ddisc, free_land)
                if x and first_only:
                    return found + 1
            while x:
                node = w * 64 + ctz(x)
                x &= x - np.uint64(1)
                # a fisherman on a loch or a port tile
                if u == FISHERMAN and (not fisher_spot(s, T, p, node, -1) or money < total_cost(
                        base, land_part(s, T, poff, FISHERMAN, node, free_land))):
                    continue
                found += 1
                if first_only:
                    return found
                mask[A_PLACE + u * MAX_NODES + node] = 1
    return found


@njit(cache=True)
def start_worker_scan(s, T, p, mask, first_only):
    """Legal starting workers (R-1.8): an empty hex of the worker's terrain, paid in full
    (Robertson's delta discount applies, R-8.7); only border hexes for Fergusson (R-8.4);
    MacDonald may start with fishermen (R-8.5). Returns the count (stops at one with
    ``first_only``). The per-unit parts (board supply, unit cost) are hoisted out of the
    node loop, as in ``place_scan``."""
    poff = pofs(p)
    row = crow(s, poff)
    border_only = T[T_CLAN_BORDER_START + row]
    money = s[poff + P_MONEY]
    has_lj = board_avail(s, T, poff, LUMBERJACK) > 0
    has_mi = board_avail(s, T, poff, MINER) > 0
    has_fi = board_avail(s, T, poff, FISHERMAN) > 0
    if not (has_lj or has_mi or has_fi):
        return 0
    base_lj = base_cost(s, T, poff, LUMBERJACK)
    base_mi = base_cost(s, T, poff, MINER)
    base_fi = base_cost(s, T, poff, FISHERMAN)
    ter_lj = T[T_UNIT_TERRAIN + LUMBERJACK]
    ter_mi = T[T_UNIT_TERRAIN + MINER]
    ddisc = T[T_CLAN_DELTA_DISC + row]
    found = 0
    for node in range(T[T_N_NODES]):
        if s[S_OCC + node] != EMPTY or (border_only and T[T_BORDER + node] == 0):
            continue
        terr = T[T_TERRAIN + node]
        if terr & (TERRAIN_LOCH | TERRAIN_PORT):
            if has_fi and fisher_spot(s, T, p, node, -1) and money >= \
                    total_cost(base_fi, land_part(s, T, poff, FISHERMAN, node, False)):
                found += 1
                if first_only:
                    return found
                mask[A_PLACE + FISHERMAN * MAX_NODES + node] = 1
            continue
        if T[T_ACTIVE + node] == 0:
            continue
        land = T[T_LAND_COST + node]
        if T[T_DELTA + node]:
            land -= ddisc
        if has_lj and terr & ter_lj and money >= total_cost(base_lj, land):
            found += 1
            if first_only:
                return found
            mask[A_PLACE + LUMBERJACK * MAX_NODES + node] = 1
        if has_mi and terr & ter_mi and money >= total_cost(base_mi, land):
            found += 1
            if first_only:
                return found
            mask[A_PLACE + MINER * MAX_NODES + node] = 1
    return found


@njit(cache=True, inline="always")
def any_start_worker(s, T, p):
    return start_worker_scan(s, T, p, np.zeros(1, np.int8), True) > 0


@njit(cache=True, inline="always")
def any_place(s, T, p, free_land):
    return place_scan(s, T, p, free_land, np.zeros(1, np.int8), True, reach_of(s, T, p)) > 0


@njit(cache=True)
def cellar_money(s, T, poff):
    """Money the player's cellar barrels would pay if taken out now (R-8.6)."""
    return (s[poff + P_CELLAR] * cellar_pay(s, T, poff, 0)
            + s[poff + P_CELLAR + 1] * cellar_pay(s, T, poff, 1))


@njit(cache=True, inline="always")
def any_free_hex(s, T, p):
    """A free hex can be placed, counting money a cellar barrel can still pay (R-8.6)."""
    poff = pofs(p)
    extra = cellar_money(s, T, poff)
    s[poff + P_MONEY] += extra
    ok = any_place(s, T, p, True)
    s[poff + P_MONEY] -= extra
    return ok


@njit(cache=True)
def retrieve_ok(s, T, poff, i):
    """Upgrade bonus: take back an own merchant from market space i (buy 0..5, sell 6..11);
    buy-side spaces only with the retrieve-buy-side interpretation (R-3.7.2 [interp])."""
    return s[poff + P_MARKET + i] > 0 and (i >= N_GOODS or T[T_RETRIEVE_BUY] != 0)


@njit(cache=True, inline="always")
def any_retrieve(s, T, p):
    poff = pofs(p)
    for i in range(2 * N_GOODS):
        if retrieve_ok(s, T, poff, i):
            return True
    return False


@njit(cache=True, inline="always")
def any_upgrade_bonus(s, T, p):
    """Some upgrade bonus choice is possible (R-3.7.2), cellar money counted (R-8.6)."""
    poff = pofs(p)
    extra = cellar_money(s, T, poff)
    s[poff + P_MONEY] += extra
    ok = (can_ship(s, T, poff, True) or can_tech(s, T, poff, 0, True)
          or can_tech(s, T, poff, 1, True) or can_hire(s, T, poff, True)
          or any_retrieve(s, T, p))
    s[poff + P_MONEY] -= extra
    return ok


@njit(cache=True)
def nb_limit(s, T, p, g):
    """Units of good g still purchasable by neighborhood this turn (R-3.3.1: the limit is
    per good type per turn, across all of the turn's expansions)."""
    left = T[T_NB_LIMIT] - s[S_NB_BOUGHT + g]
    return left if left > 0 else 0


@njit(cache=True, inline="always")
def any_nb_buy(s, T, p):
    """A pending neighborhood purchase is possible, cellar money counted (R-8.6)."""
    poff = pofs(p)
    pend = s[S_NB_PENDING]
    extra = cellar_money(s, T, poff)
    s[poff + P_MONEY] += extra
    ok = False
    for g in range(N_GOODS):
        if pend & (1 << g) and nb_limit(s, T, p, g) > 0 and can_nb_buy(s, T, poff, g, 1):
            ok = True
            break
    s[poff + P_MONEY] -= extra
    return ok


@njit(cache=True, inline="always")
def any_after_main_port(s, T, p):
    """Something to do after the main action: a port (R-5) or a cellar barrel (R-8.6)."""
    poff = pofs(p)
    if s[poff + P_CELLAR] + s[poff + P_CELLAR + 1] > 0:
        return True
    if s[S_PRICE_SHIFT_GOOD] >= 0:
        return False                 # after P6 the main action must be the trade [interp]
    open_ = ports_open(s, p)
    if open_ == 0:
        return False
    usable = reachable_ports(s, T, p, open_)   # = usable_ports without building the reach
    for c in range(N_CORNERS):
        if usable & (1 << c) and effect_applicable(s, T, p, s[S_PORTS + c], False):
            return True
    return False


@njit(cache=True)
def meat_ports(s, T, p, reach):
    """Corners whose tile can spare one slaughtered animal now: P1, or P9 copying P1 (R-5).
    ``reach`` is p's ``board.reach_bits``, or empty to compute it here if needed."""
    if corner_of(s, PORT_MEAT_REDUCTION) < 0 or ports_open(s, p) == 0:
        return 0
    if reach.size == 0:
        reach = reach_of(s, T, p)
    out = 0
    for c in range(N_CORNERS):
        tile = s[S_PORTS + c]
        if tile == PORT_MEAT_REDUCTION and port_reachable(s, T, p, c, reach):
            out |= 1 << c
        elif (tile == PORT_COPY and port_reachable(s, T, p, c, reach)
              and s[pofs(p) + P_MONEY] >= port_param(T, PORT_COPY, 0)):
            out |= 1 << c
    return out


@njit(cache=True)
def can_obtain(s, T, p):
    return free_box_count(s, T, p) > 0 and can_afford_contract(s, T, pofs(p))


@njit(cache=True, inline="always")
def can_obtain_with_cellar(s, T, p):
    """``can_obtain`` counting the money cellar barrels can still pay (R-8.6)."""
    poff = pofs(p)
    extra = cellar_money(s, T, poff)
    s[poff + P_MONEY] += extra
    ok = can_obtain(s, T, p)
    s[poff + P_MONEY] -= extra
    return ok


@njit(cache=True)
def process_max(s, T, p, kind):
    """Most units building kind (0 dairy, 1 bakery, 2 distillery) can process (R-6.3)."""
    poff = pofs(p)
    u = DAIRY + kind
    deployed = T[T_UNIT_COUNT + u] - s[poff + P_BOARD + u]
    if deployed <= 0:
        return 0
    have = s[poff + P_GOODS + PROCESS_IN[kind]]
    most = deployed * T[T_UNIT_YIELD + u]      # conversions per building (units data)
    return most if most < have else have
