"""Round scoring tiles (R-6.4) and final scoring (R-7)."""
import numpy as np

from caledonia_env.engine.board import pofs
from caledonia_env.engine.constants import (FISHERMAN, LUMBERJACK, MAX_NODES, MAX_PLAYERS, MINER, N_UNITS,
                        NEUTRAL, OCC_STRIDE)
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (P_BID, P_CELLAR, SCORE_TOTAL, T_SOLO, T_SOLO_EXPORT, T_SOLO_IMPORT_RARITY,
                     T_SOLO_N_EXPORT, T_SOLO_N_SETTLE, T_SOLO_SETTLE)
from caledonia_env.engine.compile.scratch import scratch
from caledonia_env.engine.solo import threshold_vp
from caledonia_env.engine.layout import (P_GLORY, P_GOODS, P_IMPORTS, P_MEAT, P_MONEY, P_N_FULFILLED, P_SCORE,
                     P_SHIP, P_TECH, P_TRACK, S_IMPORT, S_NP, S_OCC, T_BORDER,
                     T_EXPORT_MIN, T_EXPORT_VP, T_IMPORT_RANK_GOODS, T_IMPORT_RARITY, T_IMPORT_VP,
                     T_LAND_COST, T_MERCH_TRACK, T_MONEY_PER_VP, T_N_NODES, T_NEIGHBOR,
                     T_SETTLE_VP, T_SHIP_REQ, T_STATIC_IMPORT_VP, T_STATIC_IMPORTS,
                     T_TILE_GLORY, T_TILE_KIND, T_TILE_MIN_COST, T_TILE_PER,
                     T_TILE_UNIT_GLORY, T_VP_BASIC, T_VP_HOPS, T_VP_PROCESSED)


# scoring tile kinds, in the order of caledonia_env.data.SCORING_KINDS
K_BASIC, K_PROCESSED, K_UNITS, K_WORKERS, K_BORDER, K_IMPORTS, K_MEAT, K_UPGRADES, K_RICH = range(9)


@njit(cache=True)
def own_units(s, T, p, out):
    """p's units on the map, in node order, as ``node * OCC_STRIDE + unit type`` into
    ``out`` (MAX_NODES long); returns how many."""
    k = 0
    for m in range(T[T_N_NODES]):
        o = s[S_OCC + m]
        if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
            out[k] = m * OCC_STRIDE + o % OCC_STRIDE
            k += 1
    return k


@njit(cache=True)
def units_by_player(s, T, own, counts):
    """Every player's units in one pass over the map: row p of ``own`` (MAX_PLAYERS x
    MAX_NODES) lists p's units as :func:`own_units` does, ``counts[p]`` how many."""
    for p in range(MAX_PLAYERS):
        counts[p] = 0
    for m in range(T[T_N_NODES]):
        o = s[S_OCC + m]
        if o >= 0 and o != NEUTRAL:
            p = o // OCC_STRIDE
            own[p, counts[p]] = m * OCC_STRIDE + o % OCC_STRIDE
            counts[p] += 1


@njit(cache=True, inline="always")
def tile_count_of(s, T, p, tile, own, k):
    """What scoring tile ``tile`` counts for player p right now (R-6.4), given p's units
    (``own[:k]``, :func:`own_units`: the map tiles count them)."""
    poff = pofs(p)
    kind = T[T_TILE_KIND + tile]
    if kind == K_BASIC:
        return s[poff + P_GOODS] + s[poff + P_GOODS + 1] + s[poff + P_GOODS + 2]
    if kind == K_PROCESSED:      # MacKenzie's cellar whisky counts
        return (s[poff + P_GOODS + 3] + s[poff + P_GOODS + 4] + s[poff + P_GOODS + 5]
                + s[poff + P_CELLAR] + s[poff + P_CELLAR + 1])
    if kind == K_IMPORTS:
        return s[poff + P_IMPORTS] + s[poff + P_IMPORTS + 1] + s[poff + P_IMPORTS + 2]
    if kind == K_MEAT:
        return s[poff + P_MEAT]
    if kind == K_UPGRADES:
        return (s[poff + P_SHIP] + (T[T_MERCH_TRACK] - s[poff + P_TRACK])
                + s[poff + P_TECH] + s[poff + P_TECH + 1])
    count = 0
    for i in range(k):
        m = own[i] // OCC_STRIDE
        u = own[i] % OCC_STRIDE
        if kind == K_UNITS:
            count += T[T_TILE_UNIT_GLORY + tile * N_UNITS + u]
        elif kind == K_WORKERS:
            if u == LUMBERJACK or u == MINER or u == FISHERMAN:
                count += 1
        elif kind == K_BORDER:
            count += T[T_BORDER + m]
        elif kind == K_RICH:
            if T[T_LAND_COST + m] >= T[T_TILE_MIN_COST + tile]:
                count += 1
    return count


@njit(cache=True)
def tile_glory_of(s, T, p, tile, own, k):
    """Glory = glory * (count // per) for the scoring tile ``tile`` (R-6.4), given p's
    units (:func:`own_units`)."""
    return T[T_TILE_GLORY + tile] * (tile_count_of(s, T, p, tile, own, k)
                                     // T[T_TILE_PER + tile])


@njit(cache=True, inline="always")
def tile_glory(s, T, p, tile):
    """Glory = glory * (count // per) for the round's scoring tile (R-6.4)."""
    own = scratch(MAX_NODES, np.int64)
    return tile_glory_of(s, T, p, tile, own, own_units(s, T, p, own))


@njit(cache=True)
def split_places(values, n, place_vp, min_value, out):
    """Rank values (desc); tied players share the VP of the places they cover,
    rounded down (R-7). Players below ``min_value`` do not rank."""
    for i in range(n):
        out[i] = 0
    place = 0
    done = scratch(MAX_PLAYERS, np.bool_)
    done[:] = False
    while True:
        best = -1
        for i in range(n):
            if not done[i] and values[i] >= min_value and (best < 0 or values[i] > values[best]):
                best = i
        if best < 0:
            break
        v = values[best]
        cnt = 0
        total = 0
        for i in range(n):
            if not done[i] and values[i] == v:
                if place + cnt < MAX_PLAYERS:
                    total += place_vp[place + cnt]
                cnt += 1
        for i in range(n):
            if not done[i] and values[i] == v:
                out[i] = total // cnt
                done[i] = True
        place += cnt


@njit(cache=True)
def settlement_networks(s, T, p, comp, parent):
    """R-7 settlements of p and the networks they form: fills ``comp`` (node -> settlement
    index, -1 elsewhere; neighbour adjacency among p's units) and ``parent`` (union-find
    over settlements joined within p's shipping range); returns the settlement count."""
    n = T[T_N_NODES]
    comp[:] = -1
    nodes = scratch(MAX_NODES, np.int32)
    k = 0
    for m in range(n):
        o = s[S_OCC + m]
        if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
            nodes[k] = m
            k += 1
    stack = scratch(MAX_NODES, np.int32)
    n_comp = 0
    for i in range(k):
        start = nodes[i]
        if comp[start] >= 0:
            continue
        comp[start] = n_comp
        top = 1
        stack[0] = start
        while top > 0:
            top -= 1
            v = stack[top]
            for j in range(6):
                w = T[T_NEIGHBOR + v * 6 + j]
                if w < 0:
                    break
                o = s[S_OCC + w]
                if comp[w] < 0 and o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
                    comp[w] = n_comp
                    stack[top] = w
                    top += 1
        n_comp += 1
    for c in range(n_comp):
        parent[c] = c
    level = s[pofs(p) + P_SHIP]
    for i in range(k):
        for j in range(i + 1, k):
            a = comp[nodes[i]]
            b = comp[nodes[j]]
            if a == b or T[T_SHIP_REQ + nodes[i] * MAX_NODES + nodes[j]] > level:
                continue
            while parent[a] != a:
                a = parent[a]
            while parent[b] != b:
                b = parent[b]
            if a != b:
                parent[a] = b
    return n_comp


@njit(cache=True)
def settlement_count(s, T, p):
    """Most settlements of p mutually linked through shipping range (R-7)."""
    comp = scratch(MAX_NODES, np.int32)
    parent = scratch(MAX_NODES, np.int32)
    n_comp = settlement_networks(s, T, p, comp, parent)
    sizes = scratch(MAX_NODES, np.int32)
    sizes[:n_comp] = 0
    best = 0
    for c in range(n_comp):
        r = c
        while parent[r] != r:
            r = parent[r]
        sizes[r] += 1
        if sizes[r] > best:
            best = sizes[r]
    return best


@njit(cache=True)
def settlement_counts(s, T, out):
    """Every player's :func:`settlement_count` (R-7) into ``out``."""
    for p in range(s[S_NP]):
        out[p] = settlement_count(s, T, p)


@njit(cache=True)
def recount_settlements(s0, known, s, T, out):
    """``out[p] = settlement_count(s, T, p)`` for every player, given ``known``, the counts
    of the state ``s0``: a count depends only on which nodes hold the player's units and on
    the player's shipping level (R-7), so only players whose units or level differ from
    ``s0``'s are counted again (a one-step lookahead changes one player's map, if any).
    Returns whether any node or shipping level differs from ``s0``."""
    n = s[S_NP]
    changed = False
    dirty = scratch(MAX_PLAYERS, np.bool_)
    dirty[:] = False
    for p in range(n):
        dirty[p] = s[pofs(p) + P_SHIP] != s0[pofs(p) + P_SHIP]
        changed |= dirty[p]
    for m in range(T[T_N_NODES]):
        a = s0[S_OCC + m]
        b = s[S_OCC + m]
        if a != b:
            changed = True
            if a >= 0 and a // OCC_STRIDE < MAX_PLAYERS:
                dirty[a // OCC_STRIDE] = True
            if b >= 0 and b // OCC_STRIDE < MAX_PLAYERS:
                dirty[b // OCC_STRIDE] = True
    for p in range(n):
        out[p] = settlement_count(s, T, p) if dirty[p] else known[p]
    return changed


@njit(cache=True)
def import_values(s, T, out):
    """VP per cotton, tobacco, sugar cane by rarity (R-7) or static (R-9.3); in solo either
    ``solo.import_vp`` each or, with the rarity reading, ranked by the solo player's own
    counts on fulfilled contracts (R-9.2)."""
    if T[T_SOLO_IMPORT_RARITY]:
        rank_imports(T, s, pofs(0) + P_IMPORTS, out)
    elif T[T_STATIC_IMPORTS]:
        for i in range(3):
            out[i] = T[T_STATIC_IMPORT_VP]
    elif T[T_IMPORT_RANK_GOODS]:
        imported = scratch(3, np.int32)     # the goods on every player's fulfilled contracts
        for i in range(3):
            imported[i] = 0
            for p in range(s[S_NP]):
                imported[i] += s[pofs(p) + P_IMPORTS + i]
        rank_counts(T, imported, out)
    else:
        rank_imports(T, s, S_IMPORT, out)       # the token positions, capped at the track's end


@njit(cache=True)
def rank_imports(T, s, off, out):
    """:func:`rank_counts` of the three counts at ``s[off:off + 3]``."""
    rank_counts(T, s[off:off + 3], out)


@njit(cache=True)
def rank_counts(T, counts, out):
    """VP by commonness of the three ``counts`` (R-7): the largest count is worth
    ``T_IMPORT_VP[0]`` each, the next ``[1]``, the smallest ``[2]``; on a tie the good with
    the higher rarity index (``T_IMPORT_RARITY``, cotton rarest) counts as more common."""
    for i in range(3):
        more_common = 0
        for j in range(3):
            if j == i:
                continue
            pj = counts[j]
            pi = counts[i]
            if pj > pi or (pj == pi and T[T_IMPORT_RARITY + j] > T[T_IMPORT_RARITY + i]):
                more_common += 1
        out[i] = T[T_IMPORT_VP + more_common]


@njit(cache=True)
def final_scoring(s, T):
    """Fill every player's P_SCORE breakdown (R-7; solo thresholds R-9.2; auction bids R-9.4)."""
    n = s[S_NP]
    vals = np.zeros(MAX_PLAYERS, np.int64)
    place_vp = np.zeros(MAX_PLAYERS, np.int64)
    share = np.zeros(MAX_PLAYERS, np.int64)
    imp = np.zeros(3, np.int64)
    import_values(s, T, imp)
    for p in range(n):
        poff = pofs(p)
        basic = s[poff + P_GOODS] + s[poff + P_GOODS + 1] + s[poff + P_GOODS + 2]
        proc = s[poff + P_GOODS + 3] + s[poff + P_GOODS + 4] + s[poff + P_GOODS + 5]
        s[poff + P_SCORE + 0] = s[poff + P_GLORY]
        s[poff + P_SCORE + 1] = basic * T[T_VP_BASIC] + proc * T[T_VP_PROCESSED]
        s[poff + P_SCORE + 2] = s[poff + P_MONEY] // T[T_MONEY_PER_VP]
        s[poff + P_SCORE + 3] = s[poff + P_IMPORTS + 3] * T[T_VP_HOPS]
        s[poff + P_SCORE + 4] = (s[poff + P_IMPORTS] * imp[0] + s[poff + P_IMPORTS + 1] * imp[1]
                               + s[poff + P_IMPORTS + 2] * imp[2])
    if T[T_SOLO]:
        for p in range(n):
            poff = pofs(p)
            s[poff + P_SCORE + 5] = threshold_vp(T, T_SOLO_EXPORT, T[T_SOLO_N_EXPORT],
                                               s[poff + P_N_FULFILLED])
            s[poff + P_SCORE + 6] = threshold_vp(T, T_SOLO_SETTLE, T[T_SOLO_N_SETTLE],
                                               settlement_count(s, T, p))
    else:
        for i in range(MAX_PLAYERS):
            place_vp[i] = T[T_EXPORT_VP + i]
        for p in range(n):
            vals[p] = s[pofs(p) + P_N_FULFILLED]
        split_places(vals, n, place_vp, max(T[T_EXPORT_MIN], 0), share)
        for p in range(n):
            s[pofs(p) + P_SCORE + 5] = share[p]
        for i in range(MAX_PLAYERS):
            place_vp[i] = T[T_SETTLE_VP + i]
        for p in range(n):
            vals[p] = settlement_count(s, T, p)
        split_places(vals, n, place_vp, 1, share)
        for p in range(n):
            s[pofs(p) + P_SCORE + 6] = share[p]
    for p in range(n):
        poff = pofs(p)
        s[poff + P_SCORE + 7] = -s[poff + P_BID]
        tot = 0
        for i in range(SCORE_TOTAL):
            tot += s[poff + P_SCORE + i]
        s[poff + P_SCORE + SCORE_TOTAL] = tot
