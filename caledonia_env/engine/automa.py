"""The publisher's Automa as a seat type (A-0 … A-8): deck, turn walk and actions.

An Automa seat is an ordinary player row (money, units, merchants, shipping, box,
ports used …) plus the deck fields P_AM_* (A-10). Every turn is resolved here in
numba and written to the event log (``amlog``, see ``log_event``). Numbers come from
the T_AM_* tables (``data/automa``) and the normal rule tables.
"""
import numpy as np

from .board import count_units, neighbor_goods, placeable, pofs, reach_mask, reach_of
from .clans import take_from_board
from .constants import (BAKERY, COW, DAIRY, DISTILLERY, EMPTY, FIELD, LUMBERJACK, MAX_NODES,
                        MAX_PLAYERS, MAX_SLOTS, MAX_START_PICKS, MINER, N_CORNERS, N_GOODS, OCC_STRIDE, SHEEP,
                        T_FOREST, T_MOUNTAIN)
from .contracts import advance_import, cval
from .economy import move_price
from .jit import njit
from .layout import (AM_CARD_W, AM_EV_W, AM_LOG_CAP, C_GAIN_HEX, C_GAIN_IMPORT, C_GAIN_MONEY,
                     C_GAIN_UPG, C_NEED, P_AM_ACTION, P_AM_DISCARD, P_AM_NPILE, P_AM_PILE,
                     P_AM_PREF, P_AM_REMOVED, P_AM_SUPPORT, P_BOARD, P_BOX, P_FULFILLED,
                     P_GOODS, P_IMPORTS, P_MARKET, P_MEAT, P_MERCH, P_MONEY, P_N_FULFILLED,
                     P_PASSED, P_PORTS_USED, P_SCORE, P_SHIP, P_TECH, P_TRACK,
                     S_AM_NLOG, S_IMPORT, S_N_PASSED, S_NEXT_ORDER, S_NP, S_OCC,
                     S_ORDER, S_PICK_CLANS, S_PICKS, S_PORTS, S_PRICE, S_ROUND, S_SLOTS,
                     SCORE_TOTAL, T_ACTIVE, T_AM_C_COST, T_AM_CARDS, T_AM_CHEAP_LAND,
                     T_AM_DIST_CENTRE, T_AM_DIST_PORT, T_AM_FEE, T_AM_GLORY, T_AM_HEX_MONEY,
                     T_AM_LEVEL, T_AM_MONEY, T_AM_MONEY_PER_VP, T_AM_N_CARDS, T_AM_NB_BY_PRICE,
                     T_AM_NB_MAX, T_AM_NB_MONEY, T_AM_PORT_MONEY, T_AM_PREP_MONEY,
                     T_AM_PROD_MONEY, T_AM_RARITY_ROUND, T_AM_SHIP, T_AM_START_EACH,
                     T_AM_START_ORDER, T_AM_TECH_MIN, T_AM_TRADE_MAX, T_AM_TRADE_MONEY,
                     T_AM_TWO_EXPORT, T_AM_TWO_SETTLE, T_AM_UPG_MONEY, T_EXPORT_MIN,
                     T_HIRE_COST, T_LAND_COST, T_MODULE, T_N_HEX, T_NEIGHBOR,
                     T_N_NODES, T_NEIGHBOR_BONUS, T_PASS_BONUS, T_PORT_NODE, T_PRICE_MIN, T_ROUNDS,
                     T_SHIP_COST, T_SHIP_MAX, T_SHIP_REQ, T_SOLO_AVG_MAX, T_SOLO_AVG_MIN,
                     T_STATIC_IMPORTS, T_TECH_COST, T_UNIT_TERRAIN)
from .options import unit_cost
from .ports import port_reachable, ports_open
from .rng import rand_int, shuffle
from .scoring import settlement_count, settlement_networks

# card columns (data.automa.CARD_*) and codes (data.automa.ACTIONS / CRITERIA order)
CARD_ROUND, CARD_REMOVE, CARD_N_ACTIONS, CARD_ACTIONS = 0, 1, 2, 3
CARD_CRITERIA, CARD_UPGRADE, CARD_STEPS, CARD_MODULES = 10, 14, 15, 16
ACT_SKIP, ACT_TECH, ACT_UPGRADE, ACT_TRADE, ACT_EXPAND, ACT_FULFILL, ACT_TAKE = range(7)
CRIT_PORT, CRIT_COSTS, CRIT_SETTLEMENTS, CRIT_NEIGHBORHOOD = range(4)
# preferred unit cycle; index 6 = worker
CYCLE = (SHEEP, COW, DAIRY, BAKERY, FIELD, DISTILLERY)
N_CYCLE = 7
# event kinds of the log (game.py turns them into text)
EV_SKIP, EV_TECH, EV_UPGRADE, EV_TRADE, EV_EXPAND, EV_FULFILL, EV_TAKE, EV_PASS, EV_WORKER, \
    EV_PORT = range(10)
LOWER, MEDIUM, UPPER = 0, 1, 2


@njit(cache=True, inline="always")
def is_automa(T, p):
    return T[T_AM_LEVEL + p] > 0


@njit(cache=True)
def any_automa(T):
    for p in range(MAX_PLAYERS):
        if T[T_AM_LEVEL + p] > 0:
            return True
    return False


@njit(cache=True, inline="always")
def card(T, c, col):
    return T[T_AM_CARDS + c * AM_CARD_W + col]


@njit(cache=True)
def log_event(s, p, kind, c, a1, a2, a3, amlog=None):
    """Count the event in ``s[S_AM_NLOG]`` and write (player | kind << 4 | (card + 1) << 9,
    a1, a2, a3) into the event log ``amlog`` (int32[AM_LOG_SIZE], a ring indexed by the
    count; empty or None: the event is only counted)."""
    n = s[S_AM_NLOG]
    if amlog is not None:
        if amlog.size:
            base = (n % AM_LOG_CAP) * AM_EV_W
            amlog[base] = p | (kind << 4) | ((c + 1) << 9)
            amlog[base + 1] = a1
            amlog[base + 2] = a2
            amlog[base + 3] = a3
    s[S_AM_NLOG] = n + 1


# ------------------------------------------------------------------ deck
@njit(cache=True)
def build_deck(s, T, po):
    """A-2.2: every card of this round or earlier, except removed ones, shuffled."""
    k = 0
    for c in range(T[T_AM_N_CARDS]):
        if card(T, c, CARD_ROUND) <= s[S_ROUND] and not (s[po + P_AM_REMOVED] >> c) & 1:
            s[po + P_AM_PILE + k] = c
            k += 1
    shuffle(s, s, po + P_AM_PILE, k)
    s[po + P_AM_NPILE] = k
    s[po + P_AM_DISCARD] = 0
    s[po + P_AM_ACTION] = -1
    s[po + P_AM_SUPPORT] = -1


@njit(cache=True)
def draw_card(s, T, po):
    """Top card; an empty pile is first refilled from the shuffled discard pile (A-2.5)."""
    if s[po + P_AM_NPILE] == 0:
        k = 0
        for c in range(T[T_AM_N_CARDS]):
            if (s[po + P_AM_DISCARD] >> c) & 1:
                s[po + P_AM_PILE + k] = c
                k += 1
        shuffle(s, s, po + P_AM_PILE, k)
        s[po + P_AM_NPILE] = k
        s[po + P_AM_DISCARD] = 0
        if k == 0:
            return -1
    s[po + P_AM_NPILE] -= 1
    return s[po + P_AM_PILE + s[po + P_AM_NPILE]]


@njit(cache=True)
def next_action_card(s, T, po):
    """A-2.3 / A-2.6: discard (or remove) the previous cards, draw the action card."""
    a = s[po + P_AM_ACTION]
    if a >= 0:
        if card(T, a, CARD_REMOVE):
            s[po + P_AM_REMOVED] |= 1 << a
        else:
            s[po + P_AM_DISCARD] |= 1 << a
    if s[po + P_AM_SUPPORT] >= 0:
        s[po + P_AM_DISCARD] |= 1 << s[po + P_AM_SUPPORT]
    s[po + P_AM_SUPPORT] = -1
    a = draw_card(s, T, po)
    s[po + P_AM_ACTION] = a
    return a


# ------------------------------------------------------------ helpers
@njit(cache=True)
def bracket(s, T, g):
    """A-5 [proposal]: lower / medium / upper against the medium band of the market data."""
    v = s[S_PRICE + g]
    if v < T[T_SOLO_AVG_MIN + g]:
        return LOWER
    if v > T[T_SOLO_AVG_MAX + g]:
        return UPPER
    return MEDIUM


@njit(cache=True)
def claim_ports(s, T, p, amlog=None):
    """A-6: every port tile now in reach is claimed for money instead of its effect."""
    po = pofs(p)
    if ports_open(s, p) == 0:
        return
    reach = reach_of(s, T, p)
    for c in range(N_CORNERS):
        if port_reachable(s, T, p, c, reach):
            s[po + P_PORTS_USED] |= 1 << c
            s[po + P_MONEY] += T[T_AM_PORT_MONEY]
            log_event(s, p, EV_PORT, -1, c, s[S_PORTS + c], 0, amlog)


@njit(cache=True)
def contract_money_cost(T, c):
    """A-4.6 C: money per good required (wool, bread, cheese, whisky, beef, mutton)."""
    total = 0
    for i in range(6):
        total += cval(T, c, C_NEED + i) * T[T_AM_C_COST + i]
    return total


@njit(cache=True)
def contract_money_bonus(T, c):
    """A-4.6 B / A-4.7: contract money + money per free hex + per upgrade bonus."""
    return (cval(T, c, C_GAIN_MONEY) + cval(T, c, C_GAIN_HEX) * T[T_AM_HEX_MONEY]
            + cval(T, c, C_GAIN_UPG) * T[T_AM_UPG_MONEY])


# ------------------------------------------------------------ actions
@njit(cache=True)
def am_tech(s, T, p, c, amlog=None):
    """A-4.2: a worker type with enough workers on the map and an unflipped tile."""
    po = pofs(p)
    if s[po + P_MONEY] < T[T_TECH_COST]:
        return False
    units = np.zeros(16, np.int32)
    count_units(s, T, p, units)
    elig = 0
    if units[LUMBERJACK] >= T[T_AM_TECH_MIN] and s[po + P_TECH] == 0:
        elig |= 1
    if units[MINER] >= T[T_AM_TECH_MIN] and s[po + P_TECH + 1] == 0:
        elig |= 2
    if elig == 0:
        return False
    t = 0 if elig == 1 else (1 if elig == 2 else rand_int(s, 2))
    s[po + P_MONEY] -= T[T_TECH_COST]
    s[po + P_TECH + t] = 1
    log_event(s, p, EV_TECH, c, t, 0, 0, amlog)
    return True


@njit(cache=True)
def am_upgrade(s, T, p, c, amlog=None):
    """A-4.3: the support card's upgrade type first, then the other; A-6 after shipping."""
    po = pofs(p)
    sup = s[po + P_AM_SUPPORT]
    first = card(T, sup, CARD_UPGRADE) if sup >= 0 else 0
    for k in range(2):
        kind = (first + k) % 2
        if kind == 0 and s[po + P_TRACK] > 0 and s[po + P_MONEY] >= T[T_HIRE_COST]:
            s[po + P_MONEY] -= T[T_HIRE_COST]
            s[po + P_TRACK] -= 1
            s[po + P_MERCH] += 1
            log_event(s, p, EV_UPGRADE, c, 0, 0, 0, amlog)
            return True
        if kind == 1 and s[po + P_SHIP] < T[T_SHIP_MAX] and s[po + P_MONEY] >= T[T_SHIP_COST]:
            s[po + P_MONEY] -= T[T_SHIP_COST]
            s[po + P_SHIP] += 1
            log_event(s, p, EV_UPGRADE, c, 1, 0, 0, amlog)
            claim_ports(s, T, p, amlog)
            return True
    return False


@njit(cache=True)
def am_trade(s, T, p, c, amlog=None):
    """A-4.4: a random good without an own merchant, 1-3 merchants, direction by bracket."""
    po = pofs(p)
    merch = s[po + P_MERCH]
    if merch <= 0:
        return False
    goods = np.empty(N_GOODS, np.int32)
    k = 0
    for g in range(N_GOODS):
        if s[po + P_MARKET + g] == 0 and s[po + P_MARKET + N_GOODS + g] == 0:
            goods[k] = g
            k += 1
    if k == 0:
        return False
    g = goods[rand_int(s, k)]
    n = 1 + rand_int(s, T[T_AM_TRADE_MAX])
    if n > merch:
        n = merch
    b = bracket(s, T, g)
    side = 1 if b == UPPER else (0 if b == LOWER else rand_int(s, 2))
    s[po + P_MERCH] -= n
    s[po + P_MARKET + side * N_GOODS + g] += n
    move_price(s, T, g, n if side == 0 else -n)
    s[po + P_MONEY] += n * T[T_AM_TRADE_MONEY]
    log_event(s, p, EV_TRADE, c, g, side, n, amlog)
    return True


@njit(cache=True)
def nb_plan(s, T, p, node, pick):
    """A-4.5.5: (good, quantity) of the neighborhood purchase on ``node``. Ties of the
    lowest marker are drawn at random with ``pick``; without it the largest quantity
    among them is returned (for the neighborhood criterion) and no random number is used."""
    po = pofs(p)
    merch = s[po + P_MERCH]
    if not T[T_NEIGHBOR_BONUS] or merch <= 0:
        return -1, 0
    mask = neighbor_goods(s, T, p, node)
    best = 1 << 30
    ties = np.empty(N_GOODS, np.int32)
    k = 0
    for g in range(N_GOODS):
        if not (mask >> g) & 1 or s[po + P_MARKET + N_GOODS + g] > 0 or bracket(s, T, g) == UPPER:
            continue
        key = s[S_PRICE + g] - (0 if T[T_AM_NB_BY_PRICE] else T[T_PRICE_MIN + g])
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
    po = pofs(p)
    for c in range(N_CORNERS):
        if s[S_PORTS + c] < 0 or (s[po + P_PORTS_USED] >> c) & 1:
            continue
        if not (mods >> c) & 1:
            continue
        if T[T_SHIP_REQ + node * MAX_NODES + T[T_PORT_NODE + c]] <= s[po + P_SHIP]:
            return 1
    return 0


@njit(cache=True)
def unit_ok(s, T, p, u, node):
    po = pofs(p)
    return (s[po + P_BOARD + u] > 0 and placeable(T, node, T[T_UNIT_TERRAIN + u])
            and s[po + P_MONEY] >= unit_cost(s, T, p, u, node, False))


@njit(cache=True)
def choose_unit(s, T, p, node, start):
    """A-4.5.4: the first type from cycle index ``start`` that fits, is on the board and is
    affordable; a worker is a lumberjack or miner (upgraded technology first, else random)."""
    po = pofs(p)
    for k in range(N_CYCLE):
        t = (start + k) % N_CYCLE
        if t < N_CYCLE - 1:
            if unit_ok(s, T, p, CYCLE[t], node):
                return CYCLE[t]
            continue
        lj = unit_ok(s, T, p, LUMBERJACK, node)
        mi = unit_ok(s, T, p, MINER, node)
        if lj and mi:
            if s[po + P_TECH] != s[po + P_TECH + 1]:
                return LUMBERJACK if s[po + P_TECH] else MINER
            return LUMBERJACK if rand_int(s, 2) == 0 else MINER
        if lj:
            return LUMBERJACK
        if mi:
            return MINER
    return -1


@njit(cache=True)
def am_expand(s, T, p, c, amlog=None):
    """A-4.5: candidates in the support card's modules, filtered by its criteria, then the
    unit from the preferred type, neighborhood purchase and ports."""
    po = pofs(p)
    sup = s[po + P_AM_SUPPORT]
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
    pref = (s[po + P_AM_PREF] + steps) % N_CYCLE
    u = choose_unit(s, T, p, node, pref)
    s[po + P_MONEY] -= unit_cost(s, T, p, u, node, False)
    take_from_board(s, T, po, u)
    s[S_OCC + node] = p * OCC_STRIDE + u
    s[po + P_AM_PREF] = pref
    g, q = nb_plan(s, T, p, node, True)
    if q > 0:
        s[po + P_MERCH] -= q
        s[po + P_MARKET + g] += q
        move_price(s, T, g, q)
        s[po + P_MONEY] += q * T[T_AM_NB_MONEY]
    log_event(s, p, EV_EXPAND, c, u, node, (g * 8 + q) if q > 0 else -1, amlog)
    claim_ports(s, T, p, amlog)
    return True


@njit(cache=True)
def am_fulfill(s, T, p, c, amlog=None):
    """A-4.7: pay C, gain money instead of bonuses, imports advance as usual."""
    po = pofs(p)
    k = s[po + P_BOX]
    if k < 0:
        return False
    cost = contract_money_cost(T, k)
    if s[po + P_MONEY] < cost:
        return False
    gain = contract_money_bonus(T, k)
    s[po + P_MONEY] += gain - cost
    s[po + P_BOX] = -1
    s[po + P_N_FULFILLED] += 1
    s[po + P_FULFILLED + k // 31] |= 1 << (k % 31)
    s[po + P_MEAT] += cval(T, k, C_NEED + 4) + cval(T, k, C_NEED + 5)
    for i in range(4):
        amount = cval(T, k, C_GAIN_IMPORT + i)
        s[po + P_IMPORTS + i] += amount
        if i < 3 and amount > 0 and T[T_STATIC_IMPORTS] == 0:
            advance_import(s, T, po, i, amount)
    log_event(s, p, EV_FULFILL, c, k, gain - cost, 0, amlog)
    return True


@njit(cache=True)
def rarity_key(s, T, p, k):
    """A-4.6 rounds 4-5: imports so far of the contract's rarest tracked good, counting
    contracts in other non-Automa players' boxes as fulfilled; none ranks last."""
    best = 1 << 30
    for i in range(3):
        if cval(T, k, C_GAIN_IMPORT + i) <= 0:
            continue
        cnt = s[S_IMPORT + i]
        for q in range(s[S_NP]):
            if q == p or is_automa(T, q):
                continue
            for b in range(2):
                other = s[pofs(q) + P_BOX + b]
                if other >= 0:
                    cnt += cval(T, other, C_GAIN_IMPORT + i)
        if cnt < best:
            best = cnt
    return best


@njit(cache=True)
def am_take(s, T, p, c, amlog=None):
    """A-4.6: the round's fee; rounds 1-3 cheapest (then richest), later rarest import
    (then dearest); in the last round only affordable ones, fulfilled at once."""
    po = pofs(p)
    if s[po + P_BOX] >= 0:
        return False
    r = s[S_ROUND]
    fee = T[T_AM_FEE + r - 1]
    money = s[po + P_MONEY] + fee
    if money < 0:
        return False
    last = r >= T[T_ROUNDS]
    slots = np.empty(MAX_SLOTS, np.int32)
    k1 = np.empty(MAX_SLOTS, np.int64)     # minimised
    k2 = np.empty(MAX_SLOTS, np.int64)     # maximised
    n = 0
    for i in range(MAX_SLOTS):
        k = s[S_SLOTS + i]
        if k < 0:
            continue
        cost = contract_money_cost(T, k)
        if last and cost > money:
            continue
        slots[n] = i
        if r < T[T_AM_RARITY_ROUND]:
            k1[n] = cost
            k2[n] = contract_money_bonus(T, k)
        else:
            k1[n] = rarity_key(s, T, p, k)
            k2[n] = cost
        n += 1
    if n == 0:
        return False
    b1 = k1[0]
    for i in range(n):
        b1 = min(b1, k1[i])
    b2 = -(1 << 40)
    for i in range(n):
        if k1[i] == b1:
            b2 = max(b2, k2[i])
    m = 0
    for i in range(n):
        if k1[i] == b1 and k2[i] == b2:
            slots[m] = slots[i]
            m += 1
    i = slots[rand_int(s, m)] if m > 1 else slots[0]
    k = s[S_SLOTS + i]
    s[S_SLOTS + i] = -1
    s[po + P_BOX] = k
    s[po + P_MONEY] += fee
    log_event(s, p, EV_TAKE, c, k, fee, int(last), amlog)
    if last:
        am_fulfill(s, T, p, c, amlog)
    return True


@njit(cache=True)
def am_pass(s, T, p, c, amlog=None):
    """A-3.2 / A-4.8: pass with the bonus of the passing position (tables)."""
    pos = s[S_N_PASSED]
    s[S_NEXT_ORDER + pos] = p
    s[pofs(p) + P_MONEY] += T[T_PASS_BONUS + pos]
    s[pofs(p) + P_PASSED] = 1
    s[S_N_PASSED] = pos + 1
    log_event(s, p, EV_PASS, c, T[T_PASS_BONUS + pos], pos, 0, amlog)


@njit(cache=True)
def try_action(s, T, p, act, c, amlog=None):
    if act == ACT_TECH:
        return am_tech(s, T, p, c, amlog)
    if act == ACT_UPGRADE:
        return am_upgrade(s, T, p, c, amlog)
    if act == ACT_TRADE:
        return am_trade(s, T, p, c, amlog)
    if act == ACT_EXPAND:
        return am_expand(s, T, p, c, amlog)
    if act == ACT_FULFILL:
        return am_fulfill(s, T, p, c, amlog)
    if act == ACT_TAKE:
        return am_take(s, T, p, c, amlog)
    return False


@njit(cache=True)
def automa_turn(s, T, p, amlog=None):
    """A-3: draw the action card, walk its entries (support card on the first Expand or
    Upgrade entry), perform the first possible one; pass after the last entry."""
    po = pofs(p)
    c = next_action_card(s, T, po)
    if c < 0:
        am_pass(s, T, p, c, amlog)
        return
    for i in range(card(T, c, CARD_N_ACTIONS)):
        act = card(T, c, CARD_ACTIONS + i)
        if (act == ACT_EXPAND or act == ACT_UPGRADE) and s[po + P_AM_SUPPORT] < 0:
            s[po + P_AM_SUPPORT] = draw_card(s, T, po)
        if act == ACT_SKIP:
            log_event(s, p, EV_SKIP, c, 0, 0, 0, amlog)
            return
        if try_action(s, T, p, act, c, amlog):
            return
    am_pass(s, T, p, c, amlog)


# ------------------------------------------------------------------ setup
@njit(cache=True)
def start_workers(s, T, p, amlog=None):
    """A-1.4: one worker per module in the data's module order, targets port / centre."""
    po = pofs(p)
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
            if not (placeable(T, v, T_FOREST) or placeable(T, v, T_MOUNTAIN)):
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
            s[po + P_MONEY] -= unit_cost(s, T, p, u, v, False)
            take_from_board(s, T, po, u)
            s[S_OCC + v] = p * OCC_STRIDE + u
            log_event(s, p, EV_WORKER, -1, u, v, 0, amlog)
            break
    claim_ports(s, T, p, amlog)


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
        po = pofs(p)
        s[po + P_MONEY] = T[T_AM_MONEY + T[T_AM_LEVEL + p]]
        s[po + P_SHIP] = T[T_AM_SHIP]
        s[po + P_AM_PREF] = rand_int(s, N_CYCLE - 1)
        s[po + P_AM_REMOVED] = 0
        build_deck(s, T, po)
        start_workers(s, T, p, amlog)


# ------------------------------------------------------------- round phases
@njit(cache=True)
def automa_prepare(s, T):
    """A-7.1: preparation money and a fresh deck (rounds 2-5)."""
    for p in range(s[S_NP]):
        if is_automa(T, p):
            po = pofs(p)
            s[po + P_MONEY] += T[T_AM_PREP_MONEY]
            build_deck(s, T, po)


@njit(cache=True)
def automa_production(s, T):
    """A-7.2: money per unit instead of goods (workers were paid as usual)."""
    units = np.zeros(16, np.int32)
    for p in range(s[S_NP]):
        if is_automa(T, p):
            po = pofs(p)
            count_units(s, T, p, units)
            for u in range(LUMBERJACK):
                s[po + P_MONEY] += units[u] * T[T_AM_PROD_MONEY + u]
            for g in range(N_GOODS):
                s[po + P_GOODS + g] = 0


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
            po = pofs(p)
            s[po + P_SCORE + 0] = T[T_AM_GLORY + T[T_AM_LEVEL + p]]
            s[po + P_SCORE + 1] = 0
            s[po + P_SCORE + 2] = s[po + P_MONEY] // T[T_AM_MONEY_PER_VP]
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
        po = pofs(p)
        tot = 0
        for i in range(SCORE_TOTAL):
            tot += s[po + P_SCORE + i]
        s[po + P_SCORE + SCORE_TOTAL] = tot
