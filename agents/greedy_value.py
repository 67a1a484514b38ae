"""Hand-written position evaluation, compiled with numba.

``evaluate(s, T, p, w)`` estimates player p's final VP from any state (any
decision context, including half-finished turns): VP already certain (glory,
imports, hops), the majorities as they stand (R-7), goods and money valued
between their end value and their market value, the future yield of deployed
units over the production phases still to come (R-6.1 - R-6.3), the round's
scoring tile (R-6.4), the export contract in the box (R-3.7) and pending
export bonuses (R-3.7.2). Once the game is over it is the exact final score.

A one-step lookahead evaluates many states that differ from one state by one action:
``lookahead_table`` of that state and ``update_memo`` for each of them give
``evaluate_known`` what it reads of the map (``map_memo``) without counting again what the
action left unchanged. The greedy policy
built on it, and the rollouts, are in :mod:`agents.rollouts`.
"""
import numpy as np

from caledonia_env.engine.board import ctz, pofs, reach_bits
from caledonia_env.engine.clans import crow
from caledonia_env.engine.constants import (
    BAKERY,
    BREAD,
    CHEESE,
    COW,
    DAIRY,
    DISTILLERY,
    EMPTY,
    FIELD,
    FISHERMAN,
    GRAIN,
    LUMBERJACK,
    MAX_BOXES,
    MAX_NODES,
    MAX_PLAYERS,
    MILK,
    MINER,
    N_GOODS,
    N_UNITS,
    OCC_STRIDE,
    PH_ACTIONS,
    PH_PRODUCTION,
    SHEEP,
    TERRAIN_LOCH,
    TERRAIN_PORT,
    WHISKY,
    WOOL,
)
from caledonia_env.engine.contracts import cval, need_good
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (
    RB_LEN,
    RB_WORDS,
    C_GAIN_HEX,
    C_GAIN_IMPORT,
    C_GAIN_MONEY,
    C_GAIN_UPG,
    C_NEED,
    P_BID,
    P_BOX,
    P_CELLAR,
    P_GLORY,
    P_GOODS,
    P_IMPORTS,
    P_MONEY,
    P_N_FULFILLED,
    P_PASSED,
    P_SCORE,
    P_SHIP,
    P_TECH,
    P_TRACK,
    S_AUC_HIGH,
    S_AUC_LEADER,
    S_AUC_STAGE,
    S_BONUS_HEX,
    S_BONUS_UPG,
    game_over,
    S_NP,
    S_OCC,
    S_PHASE,
    S_PLAYER,
    S_ROUND,
    S_TILES,
    SCORE_FIELDS,
    T_ACTIVE,
    T_CLAN_CELLAR_MONEY,
    T_CLAN_INCOME,
    T_CLAN_MILK_MONEY,
    T_CLAN_WHISKY_MONEY,
    T_EXPORT_MIN,
    T_EXPORT_VP,
    T_MERCH_TRACK,
    T_MONEY_PER_VP,
    T_N_NODES,
    T_PRICE_START,
    T_ROUNDS,
    T_SCORING_TILES_ON,
    T_SETTLE_VP,
    T_TERRAIN,
    T_TILE_KIND,
    T_UNIT_YIELD,
    T_VP_BASIC,
    T_VP_HOPS,
    T_VP_PROCESSED,
)
from caledonia_env.engine.market import market_price
from caledonia_env.engine.compile.scratch import scratch
from caledonia_env.engine.scoring import (
    K_BASIC,
    K_PROCESSED,
    import_values,
    own_units,
    recount_settlements,
    settlement_count,
    settlement_counts,
    split_places,
    tile_glory_of,
)

SCORE_TOTAL = len(SCORE_FIELDS) - 1     # the total is the last score field

# ------------------------------------------------------------------ weights
# Index of each weight in the float64 weight vector (see DEFAULT_WEIGHTS).
W_MONEY_SLOPE = 0     # VP per £ added per production phase still to come
W_SELL = 1            # share of the market price a good is worth while trading goes on
W_CONTRACT_SHARE = 2  # share of a held contract's net value counted before it is fulfilled
W_HEX_BONUS = 3       # VP of a pending free hex
W_UPG_BONUS = 4       # VP of a pending upgrade bonus
W_EXPORT_EACH = 5     # VP per fulfilled contract beyond the majority as it stands
W_MAJORITY = 6        # weight of the majorities before the last round
W_FUTURE_TILE = 7     # weight of later rounds' scoring tiles (units/workers/upgrades...)
W_MOBILITY = 8        # VP per reachable empty land hex, per production to come
W_SHIP = 9            # VP per shipping level, per production to come
W_MERCH = 10          # VP per hired merchant, per production to come
W_NOISE = 11          # tie-breaking noise (VP)
W_BUY_PREMIUM = 12    # missing contract goods cost this many times their market price
W_MISSING_ANIMAL = 13  # VP cost of an animal a meat contract needs and the player lacks
W_PASSED = 14         # VP lost by having passed while the round's actions go on
W_CONTRACT_READY = 15  # share of a held contract's net value once its goods are all there
W_OPPONENT = 16       # lambda: a move is valued by own value - lambda x the best opponent's
W_MONEY_CURVE = 17    # VP per £ added per (production phase still to come) squared
N_WEIGHTS = 18

DEFAULT_WEIGHTS = np.array([
    0.048,  # money slope: £1 is worth 0.1 VP at the end, 0.34 VP before round 1's production
    0.9,    # sell share
    0.5,    # share of a held contract's value (nothing ready)
    2.5,    # free hex
    1.5,    # upgrade bonus
    1.0,    # per fulfilled contract
    0.6,    # majorities before the end
    0.5,    # later scoring tiles
    0.05,   # mobility
    0.15,   # shipping
    0.2,    # merchants
    1e-6,   # noise
    3.0,    # buy premium
    3.0,    # missing animal
    1.6,    # passed
    0.9,    # contract ready
    0.0,    # opponent term: off (the move that is best for oneself)
    0.0,    # money curve: off (money's value linear in the productions to come)
], np.float64)


@njit(cache=True)
def productions_left(s, T):
    """Production phases (R-6) still to come from this state."""
    if game_over(s):
        return 0
    left = T[T_ROUNDS] - s[S_ROUND]
    if s[S_PHASE] < PH_PRODUCTION:
        left += 1
    return left


@njit(cache=True)
def money_value(T, pl, w):
    """VP per £ with ``pl`` production phases to come: linear (``W_MONEY_SLOPE``) plus a
    quadratic term (``W_MONEY_CURVE``), so that a tuned set can value early money more."""
    return 1.0 / T[T_MONEY_PER_VP] + w[W_MONEY_SLOPE] * pl + w[W_MONEY_CURVE] * pl * pl


@njit(cache=True)
def good_values(s, T, pl, w, out):
    """Value of one unit of each good: its end VP (R-7) or what it sells for at the
    market's starting price (a reference price, so that moving a price never changes
    the value of one's own stock)."""
    mv = money_value(T, pl, w)
    for g in range(N_GOODS):
        end = T[T_VP_BASIC] if g < 3 else T[T_VP_PROCESSED]
        market = T[T_PRICE_START + g] * mv * w[W_SELL] if pl > 0 else 0.0
        out[g] = end if end > market else market


@njit(cache=True)
def contract_value(s, T, p, c, gv, unit_val, pl, imp, w):
    """Expected net VP of holding contract c in an export box (R-3.7): its rewards
    minus the goods it will consume (held goods at their value, missing goods at
    today's market price), discounted until it is fulfilled."""
    poff = pofs(p)
    mv = money_value(T, pl, w)
    reward = cval(T, c, C_GAIN_MONEY) * mv
    for i in range(3):
        reward += cval(T, c, C_GAIN_IMPORT + i) * imp[i]
    reward += cval(T, c, C_GAIN_IMPORT + 3) * T[T_VP_HOPS]
    reward += cval(T, c, C_GAIN_HEX) * w[W_HEX_BONUS] + cval(T, c, C_GAIN_UPG) * w[W_UPG_BONUS]
    reward += w[W_EXPORT_EACH]
    cost = 0.0
    needed = 0
    ready = 0
    for g in range(N_GOODS):
        need = need_good(T, c, g)
        if need > 0:
            have = s[poff + P_GOODS + g]
            use = need if have >= need else have
            cost += use * gv[g] + (need - use) * market_price(s, T, g) * mv * w[W_BUY_PREMIUM]
            needed += need
            ready += use
    beef = cval(T, c, C_NEED + 4)
    mutton = cval(T, c, C_NEED + 5)
    cows = unit_val[N_UNITS + COW]
    sheep = unit_val[N_UNITS + SHEEP]
    cost += min(beef, cows) * unit_val[COW] + min(mutton, sheep) * unit_val[SHEEP]
    needed += beef + mutton
    ready += min(beef, cows) + min(mutton, sheep)
    if beef > cows:
        cost += (beef - cows) * w[W_MISSING_ANIMAL]
    if mutton > sheep:
        cost += (mutton - sheep) * w[W_MISSING_ANIMAL]
    net = reward - cost
    if net <= 0.0:
        return 0.0
    # the share grows from W_CONTRACT_SHARE (nothing ready) to W_CONTRACT_READY (all ready)
    frac = ready / needed if needed > 0 else 1.0
    return net * (w[W_CONTRACT_SHARE] + (w[W_CONTRACT_READY] - w[W_CONTRACT_SHARE]) * frac)


UNIT_VALS = 2 * N_UNITS     # evaluate_known's animal values, then the animals on the map
MEMO_ROOM = MAX_PLAYERS     # a map memo: the settlement counts, then the deciding player's room
MEMO_LEN = MAX_PLAYERS + 1
PLACED = MAX_PLAYERS + 1    # a lookahead table's row: 1 + the player whose placement it holds
BASE = MAX_NODES            # a lookahead table's row of the state the actions start from
ROOMS = MAX_NODES + 1       # ... and of every player's room there (:func:`fill_rooms`)

@njit(cache=True)
def expansion_room(s, T, p):
    """Reachable empty land hexes of p (R-4): the room p has to expand (bitsets of
    :func:`board.reach_bits`, visiting only the reached empty nodes)."""
    rb = scratch(RB_LEN, np.uint64)
    reach_bits(s, T, p, rb)
    room = 0
    for w in range(RB_WORDS):
        cand = rb[w] & rb[RB_WORDS + w]
        while cand:
            m = w * 64 + ctz(cand)
            cand &= cand - np.uint64(1)
            if T[T_ACTIVE + m] and not (T[T_TERRAIN + m] & (TERRAIN_LOCH | TERRAIN_PORT)):
                room += 1
    return room


@njit(cache=True)
def map_memo(s, T, p, out):
    """What :func:`evaluate` reads of the map, int64[MEMO_LEN]: every player's
    settlement count (R-7), then p's :func:`expansion_room` at ``MEMO_ROOM``."""
    settlement_counts(s, T, out)
    out[MEMO_ROOM] = expansion_room(s, T, p)


@njit(cache=True)
def lookahead_table(s, T, p):
    """The memos a one-step lookahead from ``s`` reuses, int64[MAX_NODES + 1, MEMO_LEN + 1]:
    row ``BASE`` is :func:`map_memo` of ``s``; row v will hold the memo after a unit is put on
    the empty node v (column ``PLACED``: 1 + its owner, 0 while empty), the same for every
    unit type (about three legal actions in four are such placements, three or four of them
    on each node)."""
    table = np.zeros((MAX_NODES + 2, MEMO_LEN + 1), np.int64)
    map_memo(s, T, p, table[BASE])
    return table


@njit(cache=True)
def fill_rooms(s, T, table):
    """Row ``ROOMS`` of a :func:`lookahead_table`: every player's :func:`expansion_room` in
    ``s``, the room :func:`relative_known` gives the opponents after any one action (their
    room as it changes with one's own placement is not counted again)."""
    for q in range(s[S_NP]):
        table[ROOMS, q] = expansion_room(s, T, q)


@njit(cache=True)
def update_memo(s0, table, s, T, p, out):
    """``map_memo(s, T, p, out)`` for a state ``s`` one action after ``s0``, whose
    :func:`lookahead_table` is ``table``: unchanged parts of the map are not counted again
    (R-7 settlements of the players whose units and shipping level are unchanged; p's room
    when no node and no level changed), and a placement on an empty node is counted once
    per node and owner."""
    known = table[BASE]
    n = s[S_NP]
    ships = True
    for q in range(n):
        ships &= s[pofs(q) + P_SHIP] == s0[pofs(q) + P_SHIP]
    changed = 0
    v = -1
    for m in range(T[T_N_NODES]):
        if s[S_OCC + m] != s0[S_OCC + m]:
            changed += 1
            v = m
    if ships and changed == 0:
        for i in range(MEMO_LEN):
            out[i] = known[i]
        return
    o = s[S_OCC + v] if v >= 0 else -1
    if ships and changed == 1 and s0[S_OCC + v] == EMPTY and 0 <= o < MAX_PLAYERS * OCC_STRIDE:
        q = o // OCC_STRIDE
        row = table[v]
        if row[PLACED] != q + 1:
            for i in range(MEMO_LEN):
                row[i] = known[i]
            row[q] = settlement_count(s, T, q)
            row[MEMO_ROOM] = expansion_room(s, T, p)
            row[PLACED] = q + 1
        for i in range(MEMO_LEN):
            out[i] = row[i]
        return
    recount_settlements(s0, known, s, T, out)
    out[MEMO_ROOM] = expansion_room(s, T, p)


@njit(cache=True)
def evaluate(s, T, p, w):
    """Estimated final VP of player p (exact once the game is over)."""
    memo = scratch(MEMO_LEN, np.int64)
    if not game_over(s):
        map_memo(s, T, p, memo)
    return evaluate_known(s, T, p, w, memo)


@njit(cache=True)
def relative_known(s, T, p, w, memo, table):
    """What the greedy bot maximises: :func:`evaluate_known` of p minus ``W_OPPONENT`` times
    the best opponent's (each valued with the same weights, its room from row ``ROOMS`` of
    ``table``, filled by :func:`fill_rooms`); p's own value when the weight is 0 or alone."""
    v = evaluate_known(s, T, p, w, memo)
    lam = w[W_OPPONENT]
    if lam == 0.0 or s[S_NP] == 1:
        return v
    other = scratch(MEMO_LEN, np.int64)
    for i in range(MEMO_LEN):
        other[i] = memo[i]
    best = -1e18
    for q in range(s[S_NP]):
        if q != p:
            other[MEMO_ROOM] = table[ROOMS, q]
            e = evaluate_known(s, T, q, w, other)
            if e > best:
                best = e
    return v - lam * best


@njit(cache=True)
def evaluate_known(s, T, p, w, memo):
    """:func:`evaluate` given the :func:`map_memo` of ``s`` (unread once the game is over)."""
    poff = pofs(p)
    n = s[S_NP]
    if game_over(s):
        return s[poff + P_SCORE + SCORE_TOTAL] + (s[poff + P_MONEY] % T[T_MONEY_PER_VP]) * 0.01
    pl = productions_left(s, T)
    mv = money_value(T, pl, w)
    gv = scratch(N_GOODS, np.float64)
    good_values(s, T, pl, w, gv)
    row = crow(s, poff)                       # the player's clan row
    butter = T[T_CLAN_MILK_MONEY + row] * mv        # Cunningham: milk for money
    if pl > 0 and butter > gv[MILK]:
        gv[MILK] = butter
    imp = scratch(3, np.int64)
    import_values(s, T, imp)

    # certain VP: glory, hops, tracked imports (at today's rarity)
    v = float(s[poff + P_GLORY])
    v += s[poff + P_IMPORTS + 3] * T[T_VP_HOPS]
    for i in range(3):
        v += s[poff + P_IMPORTS + i] * imp[i]
    # stock; a player who passed can spend money only next round
    if s[S_PHASE] == PH_ACTIONS and s[poff + P_PASSED]:
        v -= w[W_PASSED]
        v += s[poff + P_MONEY] * money_value(T, pl - 1, w)
    else:
        v += s[poff + P_MONEY] * mv
    for g in range(N_GOODS):
        v += s[poff + P_GOODS + g] * gv[g]

    # units: future production (R-6.1 - R-6.3)
    own = scratch(MAX_NODES, np.int64)     # one pass over the map: p's units, by type
    k = own_units(s, T, p, own)
    units = scratch(N_UNITS, np.int32)
    units[:] = 0
    for i in range(k):
        units[own[i] % OCC_STRIDE] += 1
    future_mv = 0.0
    for j in range(pl):
        future_mv += money_value(T, j, w)
    inc = T_CLAN_INCOME + row * 5           # clan income rates
    v += units[LUMBERJACK] * T[inc + s[poff + P_TECH]] * future_mv
    v += units[MINER] * T[inc + 2 + s[poff + P_TECH + 1]] * future_mv
    v += units[FISHERMAN] * T[inc + 4] * future_mv
    wool = units[SHEEP] * T[T_UNIT_YIELD + SHEEP] * pl
    milk = units[COW] * T[T_UNIT_YIELD + COW] * pl
    grain = units[FIELD] * T[T_UNIT_YIELD + FIELD] * pl
    v += wool * gv[WOOL] + milk * gv[MILK] + grain * gv[GRAIN]
    milk += s[poff + P_GOODS + MILK]
    grain += s[poff + P_GOODS + GRAIN]
    conv = min(units[DAIRY] * T[T_UNIT_YIELD + DAIRY] * pl, milk)
    if gv[CHEESE] > gv[MILK]:
        v += conv * (gv[CHEESE] - gv[MILK])
    conv = min(units[DISTILLERY] * T[T_UNIT_YIELD + DISTILLERY] * pl, grain)
    if gv[WHISKY] > gv[GRAIN]:
        v += conv * (gv[WHISKY] - gv[GRAIN])
    if pl > 0:                              # MacKenzie: £ per whisky produced
        v += conv * T[T_CLAN_WHISKY_MONEY + row] * future_mv / pl
    grain -= conv
    conv = min(units[BAKERY] * T[T_UNIT_YIELD + BAKERY] * pl, grain)
    if gv[BREAD] > gv[GRAIN]:
        v += conv * (gv[BREAD] - gv[GRAIN])

    # value of an animal on the map (what slaughtering it costs) and counts, for contracts
    unit_val = scratch(UNIT_VALS, np.float64)
    unit_val[:] = 0.0
    unit_val[SHEEP] = T[T_UNIT_YIELD + SHEEP] * gv[WOOL] * pl
    unit_val[COW] = T[T_UNIT_YIELD + COW] * gv[MILK] * pl
    unit_val[N_UNITS + SHEEP] = units[SHEEP]
    unit_val[N_UNITS + COW] = units[COW]
    for b in range(MAX_BOXES):
        c = s[poff + P_BOX + b]
        if c >= 0:
            v += contract_value(s, T, p, c, gv, unit_val, pl, imp, w)

    # cellar barrels: whisky plus the money they will leave with: aged at a production
    # while play is left, else taken out from their space at the end
    cellar = T_CLAN_CELLAR_MONEY + row * 3
    v += s[poff + P_CELLAR + 1] * (gv[WHISKY] + T[cellar + (2 if pl > 0 else 1)] * mv)
    v += s[poff + P_CELLAR] * (gv[WHISKY] + T[cellar + (2 if pl > 0 else 0)] * mv)
    # clan auction: VP paid, and the bid this player leads with
    v -= s[poff + P_BID]
    if s[S_AUC_STAGE] == 0 and s[S_AUC_LEADER] == p and s[S_AUC_HIGH] > 0:
        v -= s[S_AUC_HIGH]

    # pending export bonuses of the deciding player
    if s[S_PLAYER] == p:
        v += s[S_BONUS_HEX] * w[W_HEX_BONUS] + s[S_BONUS_UPG] * w[W_UPG_BONUS]

    # upgrades: shipping, hired merchants (their use is in future turns)
    ship = s[poff + P_SHIP]
    v += w[W_SHIP] * pl * (ship if ship < 3 else 3)
    v += w[W_MERCH] * pl * (T[T_MERCH_TRACK] - s[poff + P_TRACK])
    v += w[W_EXPORT_EACH] * s[poff + P_N_FULFILLED]

    # room to expand: reachable empty land hexes
    if pl > 0 and w[W_MOBILITY] != 0.0:
        v += w[W_MOBILITY] * pl * memo[MEMO_ROOM]

    # scoring tiles (R-6.4): this round's at full weight, later rounds' lasting counts
    if T[T_SCORING_TILES_ON]:
        r = s[S_ROUND]
        if s[S_PHASE] <= PH_PRODUCTION:
            tile = s[S_TILES + r - 1]
            if tile >= 0:
                v += tile_glory_of(s, T, p, tile, own, k)
        for rr in range(r, T[T_ROUNDS]):
            tile = s[S_TILES + rr]
            if tile >= 0:
                kind = T[T_TILE_KIND + tile]
                if kind != K_BASIC and kind != K_PROCESSED:
                    v += w[W_FUTURE_TILE] * tile_glory_of(s, T, p, tile, own, k)

    # majorities as they stand, discounted before the last round
    vals = scratch(MAX_PLAYERS, np.int64)
    vals[:] = 0
    place_vp = scratch(MAX_PLAYERS, np.int64)
    share = scratch(MAX_PLAYERS, np.int64)
    mw = 1.0 if pl <= 1 else w[W_MAJORITY]
    for i in range(MAX_PLAYERS):
        place_vp[i] = T[T_EXPORT_VP + i]
    for q in range(n):
        vals[q] = s[pofs(q) + P_N_FULFILLED]
    split_places(vals, n, place_vp, max(T[T_EXPORT_MIN], 0), share)
    v += mw * share[p]
    for i in range(MAX_PLAYERS):
        place_vp[i] = T[T_SETTLE_VP + i]
    for q in range(n):
        vals[q] = memo[q]
    split_places(vals, n, place_vp, 1, share)
    v += mw * share[p]
    return v
