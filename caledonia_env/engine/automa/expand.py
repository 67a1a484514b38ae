"""Where the Automa places units: Expand (A-4.5) and its starting workers (A-1.4), with
the market bracket (A-5) and the port claims (A-6) they use.
"""
import numpy as np

from caledonia_env.engine.automa.deck import (CARD_CRITERIA, CARD_MODULES, CARD_STEPS, CRIT_COSTS, CRIT_PORT,
                          CRIT_SETTLEMENTS, CYCLE, N_CYCLE, card)
from caledonia_env.engine.automa.events import EV_EXPAND, EV_PORT, EV_WORKER, log_event
from caledonia_env.engine.board import neighbor_goods, placeable, pofs, reach_mask, reach_of
from caledonia_env.engine.clans import take_from_board
from caledonia_env.engine.constants import (EMPTY, LUMBERJACK, MAX_NODES, MINER, N_CORNERS, N_GOODS, OCC_STRIDE,
                        TERRAIN_FOREST, TERRAIN_MOUNTAIN)
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (P_AM_PREF, P_AM_SUPPORT, P_BOARD, P_MARKET, P_MERCH, P_MONEY, P_PORTS_USED,
                     P_SHIP, P_TECH, S_OCC, S_PORTS, S_PRICE_STEP, S_ROUND, T_ACTIVE, T_AM_CHEAP_LAND,
                     T_AM_DIST_CENTRE, T_AM_DIST_PORT, T_AM_NB_BY_PRICE, T_AM_NB_MAX, T_AM_NB_MONEY,
                     T_AM_PORT_MONEY, T_AM_SHIP, T_AM_START_EACH, T_AM_START_ORDER, T_LAND_COST,
                     T_MODULE, T_N_HEX, T_N_NODES, T_NEIGHBOR, T_NEIGHBOR_BONUS, T_PORT_NODE,
                     T_ROUNDS, T_SHIP_REQ, T_SOLO_AVG_HI, T_SOLO_AVG_LO, T_STEP_LO,
                     T_UNIT_TERRAIN)
from caledonia_env.engine.market import market_price, move_price
from caledonia_env.engine.legality import unit_cost
from caledonia_env.engine.ports import port_reachable, ports_open
from caledonia_env.engine.rng import rand_int
from caledonia_env.engine.scoring import settlement_networks

LOWER, MEDIUM, UPPER = 0, 1, 2     # A-5 price brackets


# ----------------------------------------------------- market and ports
@njit(cache=True)
def bracket(s, T, g):
    """A-5 [proposal]: lower / medium / upper against the medium band of the market data (in steps)."""
    v = s[S_PRICE_STEP + g]
    if v < T[T_SOLO_AVG_LO + g]:
        return LOWER
    if v > T[T_SOLO_AVG_HI + g]:
        return UPPER
    return MEDIUM


@njit(cache=True)
def claim_ports(s, T, p, amlog):
    """A-6: every port tile now in reach is claimed for money instead of its effect."""
    poff = pofs(p)
    if ports_open(s, p) == 0:
        return
    reach = reach_of(s, T, p)
    for c in range(N_CORNERS):
        if port_reachable(s, T, p, c, reach):
            s[poff + P_PORTS_USED] |= 1 << c
            s[poff + P_MONEY] += T[T_AM_PORT_MONEY]
            log_event(s, p, EV_PORT, -1, c, s[S_PORTS + c], 0, amlog)


# ------------------------------------------------------------------ expand
@njit(cache=True)
def nb_plan(s, T, p, node, pick):
    """A-4.5.5: (good, quantity) of the neighborhood purchase on ``node``. Ties of the
    lowest marker are drawn at random with ``pick``; without it the largest quantity
    among them is returned (for the neighborhood criterion) and no random number is used."""
    poff = pofs(p)
    merch = s[poff + P_MERCH]
    if not T[T_NEIGHBOR_BONUS] or merch <= 0:
        return -1, 0
    mask = neighbor_goods(s, T, p, node)
    best = 1 << 30
    ties = np.empty(N_GOODS, np.int32)
    k = 0
    for g in range(N_GOODS):
        if not (mask >> g) & 1 or s[poff + P_MARKET + N_GOODS + g] > 0 or bracket(s, T, g) == UPPER:
            continue
        if T[T_AM_NB_BY_PRICE]:
            key = market_price(s, T, g)
        else:                                   # the marker's steps above the track's bottom
            key = s[S_PRICE_STEP + g] - T[T_STEP_LO + g]
        if key < best:
            best = key
            k = 0
        if key == best:
            ties[k] = g
            k += 1
    if k == 0:
        return -1, 0
    if pick:
        g = ties[rand_int(s, k)] if k > 1 else ties[0]
        q = T[T_AM_NB_MAX + bracket(s, T, g)]
        return g, min(q, merch)
    q = 0
    g = -1
    for i in range(k):
        qi = min(T[T_AM_NB_MAX + bracket(s, T, ties[i])], merch)
        if qi > q:
            q = qi
            g = ties[i]
    return g, q


@njit(cache=True)
def network_table(s, T, p, comp, root, size):
    """R-7 settlements of p and their networks, for the settlement criterion: ``comp``
    (node -> settlement, -1 elsewhere), ``root`` (settlement -> network id) and ``size``
    (network id -> settlements in it); returns the number of networks."""
    parent = np.empty(MAX_NODES, np.int32)
    n_comp = settlement_networks(s, T, p, comp, parent)
    for c in range(n_comp):
        size[c] = 0
    roots = 0
    for c in range(n_comp):
        r = c
        while parent[r] != r:
            r = parent[r]
        root[c] = r
        if size[r] == 0:
            roots += 1
        size[r] += 1
    return roots


@njit(cache=True)
def settlement_key(s, T, p, node, comp, root, size, roots, seen):
    """A-4.5.3 settlements [proposal]: tier (2 joins networks, 1 new settlement, 0 else)
    and the number of settlements in the network holding the new unit, as
    tier * 1000 + size. The networks before placing come from :func:`network_table`:
    the unit merges the settlements next to it and links every network in shipping
    range of ``node`` (``seen``: int32[MAX_NODES] scratch, zeroed on return)."""
    level = s[pofs(p) + P_SHIP]
    n_adj = 0      # settlements merged into the new unit's settlement
    n_nets = 0     # networks joined by it
    total = 0      # settlements in those networks
    for j in range(6):
        w = T[T_NEIGHBOR + node * 6 + j]
        if w < 0:
            break
        c = comp[w]
        if c >= 0 and seen[c] & 1 == 0:
            seen[c] |= 1
            n_adj += 1
    for m in range(T[T_N_NODES]):
        c = comp[m]
        if c < 0 or m == node:
            continue
        lo = min(m, node)
        hi = max(m, node)
        if seen[c] & 1 == 0 and T[T_SHIP_REQ + lo * MAX_NODES + hi] > level:
            continue
        r = root[c]
        if seen[r] & 2 == 0:
            seen[r] |= 2
            n_nets += 1
            total += size[r]
    for m in range(T[T_N_NODES]):
        c = comp[m]
        if c >= 0:
            seen[c] = 0
    after = roots - n_nets + 1
    tier = 2 if after < roots else (1 if n_adj == 0 else 0)
    return tier * 1000 + total - n_adj + 1


@njit(cache=True)
def port_key(s, T, p, node, mods):
    """A-4.5.3 port: 1 if a port not yet claimed comes into reach from ``node`` (only
    ports of the card's modules when T_AM_PORT_IN_MODULES [interp])."""
    poff = pofs(p)
    for c in range(N_CORNERS):
        if s[S_PORTS + c] < 0 or (s[poff + P_PORTS_USED] >> c) & 1:
            continue
        if not (mods >> c) & 1:
            continue
        if T[T_SHIP_REQ + node * MAX_NODES + T[T_PORT_NODE + c]] <= s[poff + P_SHIP]:
            return 1
    return 0


@njit(cache=True)
def unit_ok(s, T, p, u, node):
    poff = pofs(p)
    return (s[poff + P_BOARD + u] > 0 and placeable(T, node, T[T_UNIT_TERRAIN + u])
            and s[poff + P_MONEY] >= unit_cost(s, T, p, u, node, False))


@njit(cache=True)
def choose_unit(s, T, p, node, start):
    """A-4.5.4: the first type from cycle index ``start`` that fits, is on the board and is
    affordable; a worker is a lumberjack or miner (upgraded technology first, else random)."""
    poff = pofs(p)
    for k in range(N_CYCLE):
        t = (start + k) % N_CYCLE
        if t < N_CYCLE - 1:
            if unit_ok(s, T, p, CYCLE[t], node):
                return CYCLE[t]
            continue
        lj = unit_ok(s, T, p, LUMBERJACK, node)
        mi = unit_ok(s, T, p, MINER, node)
        if lj and mi:
            if s[poff + P_TECH] != s[poff + P_TECH + 1]:
                return LUMBERJACK if s[poff + P_TECH] else MINER
            return LUMBERJACK if rand_int(s, 2) == 0 else MINER
        if lj:
            return LUMBERJACK
        if mi:
            return MINER
    return -1


@njit(cache=True)
def am_expand(s, T, p, c, amlog):
    """A-4.5: candidates in the support card's modules, filtered by its criteria, then the
    unit from the preferred type, neighborhood purchase and ports."""
    poff = pofs(p)
    sup = s[poff + P_AM_SUPPORT]
    last = s[S_ROUND] >= T[T_ROUNDS]
    mods = 15 if (last or sup < 0) else card(T, sup, CARD_MODULES)
    reach = np.zeros(MAX_NODES, np.int32)
    reach_mask(s, T, p, reach)
    cand = np.empty(MAX_NODES, np.int32)
    k = 0
    for v in range(T[T_N_HEX]):
        if s[S_OCC + v] != EMPTY or reach[v] == 0 or not (mods >> T[T_MODULE + v]) & 1:
            continue
        for u in range(MINER + 1):
            if unit_ok(s, T, p, u, v):
                cand[k] = v
                k += 1
                break
    if k == 0:
        return False
    order = np.empty(4, np.int32)
    j = 0
    if last:
        order[0] = CRIT_SETTLEMENTS
        j = 1
    for i in range(4):
        crit = card(T, sup, CARD_CRITERIA + i) if sup >= 0 else i
        if not (last and crit == CRIT_SETTLEMENTS):
            order[j] = crit
            j += 1
    score = np.empty(MAX_NODES, np.int64)
    comp = np.empty(MAX_NODES, np.int32)
    root = np.empty(MAX_NODES, np.int32)
    size = np.empty(MAX_NODES, np.int32)
    seen = np.zeros(MAX_NODES, np.int32)
    roots = -1
    for i in range(4):
        crit = order[i]
        best = -(1 << 40)
        for x in range(k):
            v = cand[x]
            if crit == CRIT_PORT:
                score[x] = port_key(s, T, p, v, mods)
            elif crit == CRIT_COSTS:
                score[x] = -T[T_LAND_COST + v]
            elif crit == CRIT_SETTLEMENTS:
                if roots < 0:
                    roots = network_table(s, T, p, comp, root, size)
                score[x] = settlement_key(s, T, p, v, comp, root, size, roots, seen)
            else:
                score[x] = nb_plan(s, T, p, v, False)[1]
            if score[x] > best:
                best = score[x]
        m = 0
        for x in range(k):
            if score[x] == best:
                cand[m] = cand[x]
                m += 1
        k = m
    node = cand[rand_int(s, k)] if k > 1 else cand[0]
    steps = card(T, sup, CARD_STEPS) if sup >= 0 else N_CYCLE
    pref = (s[poff + P_AM_PREF] + steps) % N_CYCLE
    u = choose_unit(s, T, p, node, pref)
    s[poff + P_MONEY] -= unit_cost(s, T, p, u, node, False)
    take_from_board(s, T, poff, u)
    s[S_OCC + node] = p * OCC_STRIDE + u
    s[poff + P_AM_PREF] = pref
    g, q = nb_plan(s, T, p, node, True)
    if q > 0:
        s[poff + P_MERCH] -= q
        s[poff + P_MARKET + g] += q
        move_price(s, T, g, q)
        s[poff + P_MONEY] += q * T[T_AM_NB_MONEY]
    log_event(s, p, EV_EXPAND, c, u, node, (g * 8 + q) if q > 0 else -1, amlog)
    claim_ports(s, T, p, amlog)
    return True


# ------------------------------------------------------ starting workers
@njit(cache=True)
def start_workers(s, T, p, amlog=None):
    """A-1.4: one worker per module in the data's module order, targets port / centre."""
    poff = pofs(p)
    n_port = 0
    n_centre = 0
    each = T[T_AM_START_EACH]
    keys = np.empty(MAX_NODES, np.int64)
    cand = np.empty(MAX_NODES, np.int32)
    for i in range(4):
        m = T[T_AM_START_ORDER + i]
        if n_port >= each:
            port = False
        elif n_centre >= each:
            port = True
        else:
            port = rand_int(s, 2) == 0
        if port:
            n_port += 1
        else:
            n_centre += 1
        pnode = T[T_PORT_NODE + m]
        k = 0
        for v in range(T[T_N_HEX]):
            if T[T_MODULE + v] != m or s[S_OCC + v] != EMPTY or T[T_ACTIVE + v] == 0:
                continue
            if not (placeable(T, v, TERRAIN_FOREST) or placeable(T, v, TERRAIN_MOUNTAIN)):
                continue
            land = T[T_LAND_COST + v]
            dist = T[T_AM_DIST_PORT + v] if port else T[T_AM_DIST_CENTRE + v]
            cheap = 0 if land <= T[T_AM_CHEAP_LAND] else 1
            near = 0
            if port and T[T_SHIP_REQ + v * MAX_NODES + pnode] > T[T_AM_SHIP]:
                near = 1
            key = ((dist * 2 + cheap) * 2 + near) * 16 + min(land, 15)
            keys[k] = key * (1 << 20) + rand_int(s, 1 << 20)
            cand[k] = v
            k += 1
        for _ in range(k):          # cheapest key first; the next one when unaffordable
            b = -1
            for x in range(k):
                if cand[x] >= 0 and (b < 0 or keys[x] < keys[b]):
                    b = x
            v = cand[b]
            cand[b] = -1
            lj = unit_ok(s, T, p, LUMBERJACK, v)
            mi = unit_ok(s, T, p, MINER, v)
            if not (lj or mi):
                continue
            u = LUMBERJACK if lj else MINER
            if lj and mi and rand_int(s, 2) == 1:
                u = MINER
            s[poff + P_MONEY] -= unit_cost(s, T, p, u, v, False)
            take_from_board(s, T, poff, u)
            s[S_OCC + v] = p * OCC_STRIDE + u
            log_event(s, p, EV_WORKER, -1, u, v, 0, amlog)
            break
    claim_ports(s, T, p, amlog)
