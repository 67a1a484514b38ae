"""The Automa part of the static tables (A-0 … A-8): seats, cards and money rules from
``data/automa``, and the hex distances its starting workers use (A-1.4).
"""
import numpy as np

from caledonia_env.data.automa import CONTRACT_GOODS, PRODUCERS, load_automa
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import MAX_NODES, MAX_PLAYERS, N_UNITS, TERRAIN_LOCH, UNIT_NAMES, UNREACHABLE


def _steps_from(board, sources):
    """Hex steps (adjacency, rivers ignored) from the nearest of ``sources`` to every node."""
    dist = np.full(MAX_NODES, UNREACHABLE, np.int32)
    frontier = list(sources)
    for v in frontier:
        dist[v] = 0
    while frontier:
        nxt = []
        for v in frontier:
            for w in board.adjacent[v]:
                if w >= 0 and dist[w] == UNREACHABLE:
                    dist[w] = dist[v] + 1
                    nxt.append(int(w))
        frontier = nxt
    return dist


def _central_loch(board):
    """A-1.4 [proposal]: the loch hexes connected to the loch hex nearest the map centre
    (no loch: the hex nearest the centre)."""
    xy = board.xy[:board.n_hex]
    order = np.argsort(np.linalg.norm(xy - xy.mean(axis=0), axis=1), kind="stable")
    lochs = [int(v) for v in order if board.terrain[v] & TERRAIN_LOCH]
    if not lochs:
        return [int(order[0])]
    seen, stack = {lochs[0]}, [lochs[0]]
    while stack:
        v = stack.pop()
        for w in board.adjacent[v]:
            if 0 <= w < board.n_hex and board.terrain[w] & TERRAIN_LOCH and int(w) not in seen:
                seen.add(int(w))
                stack.append(int(w))
    return sorted(seen)


def automa_tables(board, variants, T, put):
    """A-0 … A-8: Automa seats, cards and money rules from ``data/automa``."""
    if not variants.automa:
        return
    ad = load_automa(variants.automa_data)
    p = ad.params
    levels = list(variants.automa) + [0] * (MAX_PLAYERS - len(variants.automa))
    put(L.T_AM_LEVEL, levels)
    put(L.T_AM_MONEY, [0] + [x["money"] for x in p["levels"]])
    put(L.T_AM_GLORY, [0] + [x["glory"] for x in p["levels"]])
    T[L.T_AM_N_CARDS] = len(ad.cards)
    assert ad.cards.shape[1] == L.AM_CARD_W
    put(L.T_AM_CARDS, ad.cards)
    T[L.T_AM_SHIP] = min(p["start_shipping"], T[L.T_SHIP_MAX])
    put(L.T_AM_START_ORDER, ["ABCD".index(m) for m in p["start_module_order"]])
    T[L.T_AM_START_EACH] = p["start_targets_each"]
    T[L.T_AM_CHEAP_LAND] = p["start_cheap_land_max"]
    dport = np.full(MAX_NODES, UNREACHABLE, np.int32)
    for m in range(4):
        d = _steps_from(board, [board.n_hex + m])
        sel = np.flatnonzero(board.module[:board.n_hex] == m)
        dport[sel] = d[sel]
    put(L.T_AM_DIST_PORT, dport)
    put(L.T_AM_DIST_CENTRE, _steps_from(board, _central_loch(board)))
    T[L.T_AM_TECH_MIN] = p["tech_min_workers"]
    T[L.T_AM_TRADE_MAX] = p["trade_max_merchants"]
    T[L.T_AM_TRADE_MONEY] = p["trade_money_per_merchant"]
    T[L.T_AM_NB_MONEY] = p["neighborhood_money_per_merchant"]
    nb = p["neighborhood_max"]
    put(L.T_AM_NB_MAX, [nb["lower"], nb["medium"], nb["upper"]])
    T[L.T_AM_NB_BY_PRICE] = int(p["neighborhood_marker"] == "price")
    T[L.T_AM_PORT_IN_MODULES] = int(bool(p["port_criterion_card_modules"]))
    put(L.T_AM_FEE, p["take_contract_money_by_round"])
    T[L.T_AM_RARITY_ROUND] = p["rarity_from_round"]
    put(L.T_AM_C_COST, [p["contract_cost_per_good"][g] for g in CONTRACT_GOODS])
    T[L.T_AM_HEX_MONEY] = p["free_hex_money"]
    T[L.T_AM_UPG_MONEY] = p["upgrade_bonus_money"]
    T[L.T_AM_PORT_MONEY] = p["port_money"]
    T[L.T_AM_PREP_MONEY] = p["preparation_money"]
    prod = np.zeros(N_UNITS, np.int32)
    for name in PRODUCERS:
        prod[UNIT_NAMES.index(name)] = p["production_money"][name]
    put(L.T_AM_PROD_MONEY, prod)
    T[L.T_AM_MONEY_PER_VP] = p["money_per_vp"]
    for off, key in ((L.T_AM_TWO_EXPORT, "two_seat_exports"), (L.T_AM_TWO_SETTLE, "two_seat_settlements")):
        d = p[key]
        put(off, [d["most"], d["tie"], d["behind"], d["behind_max"]])
