"""The map part of the static tables (R-1.1, R-4, R-9.3): terrain, neighbours, shipping
reach as lists and node bitsets, port reach, land-cost bitsets and covered hexes.
"""
import numpy as np

from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (FISHERMAN, MAX_COVER, MAX_NODES, N_CORNERS, N_UNITS, TERRAIN_LOCH,
                        TERRAIN_PORT, UNREACHABLE)


def reach_lists(ship_req):
    """Per node: targets sorted by required shipping level, and counts per level."""
    n = ship_req.shape[0]
    req = np.asarray(ship_req, np.int64)
    order = np.argsort(req, axis=1, kind="stable")
    reachable = np.take_along_axis(req, order, axis=1) < UNREACHABLE
    lists = np.full((MAX_NODES, MAX_NODES), -1, np.int32)
    lists[:n, :n] = np.where(reachable, order, -1)
    counts = np.zeros((MAX_NODES, L.MAX_LEVEL), np.int32)
    counts[:n] = (req[:, :, None] <= np.arange(L.MAX_LEVEL)).sum(axis=1)
    return lists, counts


def reach_bitsets(ship_req):
    """Per node and level: the ``reach_lists`` targets as a node bitset, stored as int32
    halves (word w of node m, level l: entries 2w, 2w + 1 of row (m, l))."""
    n = ship_req.shape[0]
    req = np.asarray(ship_req, np.int64)
    bits = np.zeros((MAX_NODES, L.MAX_LEVEL, L.RB_WORDS * 64), bool)
    bits[:n, :, :n] = req[:, None, :] <= np.arange(L.MAX_LEVEL)[None, :, None]
    packed = np.packbits(bits, axis=-1, bitorder="little")      # node v = bit v % 8 of byte v // 8
    return packed.view("<u4").view("<i4")


def node_bitset(flags):
    """The nodes where ``flags`` (bool per node) is set, as one bitset in the
    ``reach_bitsets`` word format."""
    bits = np.zeros(L.RB_WORDS * 64, bool)
    bits[:len(flags)] = flags
    return np.packbits(bits, bitorder="little").view("<u4").view("<i4")


def port_reacher_bitsets(ship_req, n_hex):
    """Per corner c and level l: the nodes m with ship_req[m, port node of c] <= l, i.e. the
    nodes whose unit has the port in reach (R-5), in the ``reach_bitsets`` word format."""
    req = np.asarray(ship_req, np.int64)
    return np.concatenate([node_bitset(req[:, n_hex + c] <= lev)
                           for c in range(N_CORNERS) for lev in range(L.MAX_LEVEL)])


def land_cost_bitsets(cost):
    """Per land cost c = 0..MAX_LAND_COST: the nodes whose land cost is <= c (the
    expansion scan's affordability test, R-3.3), in the ``reach_bitsets`` word format."""
    cost = np.asarray(cost, np.int64)
    return np.concatenate([node_bitset(cost <= c) for c in range(L.MAX_LAND_COST + 1)])


def unit_node_bitsets(T, nn):
    """Per unit: the nodes ``board.placeable`` allows for its terrain (the fisherman: every
    loch and port node), as bitsets in the ``reach_bitsets`` word format."""
    bits = np.zeros((N_UNITS, L.RB_WORDS * 64), bool)
    terr = T[L.T_TERRAIN:L.T_TERRAIN + nn]
    water = (terr & (TERRAIN_LOCH | TERRAIN_PORT)) != 0
    active = T[L.T_ACTIVE:L.T_ACTIVE + nn] != 0
    for u in range(N_UNITS):
        if u == FISHERMAN:
            bits[u, :nn] = water
        else:
            bits[u, :nn] = ~water & active & ((terr & T[L.T_UNIT_TERRAIN + u]) != 0)
    return np.packbits(bits, axis=-1, bitorder="little").view("<u4").view("<i4")


def map_tables(board, T, put):
    """The board's nodes (R-1.1): terrain, costs, neighbours, shipping reach (R-4) and the
    bitsets the legal-mask scans read; ``unit_node_bitsets`` needs T_UNIT_TERRAIN set."""
    nn = board.n_nodes
    assert nn <= MAX_NODES
    put(L.T_TERRAIN, board.terrain)
    put(L.T_LAND_COST, board.land_cost)
    put(L.T_ACTIVE, board.active)
    put(L.T_BORDER, board.border)
    put(L.T_DELTA, board.delta)
    nb = np.full((MAX_NODES, 6), -1, np.int32)
    nb[:nn] = board.neighbor
    put(L.T_NEIGHBOR, nb)
    put(L.T_PORT_NODE, np.arange(board.n_hex, board.n_hex + 4))
    req = np.full((MAX_NODES, MAX_NODES), UNREACHABLE, np.int32)
    req[:nn, :nn] = board.ship_req
    put(L.T_SHIP_REQ, req)
    lists, counts = reach_lists(board.ship_req)
    put(L.T_REACH_LIST, lists)
    put(L.T_REACH_CNT, counts)
    put(L.T_REACH_BITS, reach_bitsets(board.ship_req))
    put(L.T_UNIT_NODES, unit_node_bitsets(T, nn))
    land_max = int(board.land_cost[:nn].max(initial=0))
    if land_max > L.MAX_LAND_COST:
        raise ValueError(f"a hex of this map costs £{land_max} of land; the engine handles "
                         f"land costs up to £{L.MAX_LAND_COST}")
    T[L.T_LAND_MAX] = land_max
    put(L.T_LAND_LE, land_cost_bitsets(board.land_cost[:nn]))
    put(L.T_DELTA_BITS, node_bitset(np.asarray(board.delta[:nn]) != 0))
    put(L.T_PORT_REACHERS, port_reacher_bitsets(board.ship_req, board.n_hex))
    adj = np.full((MAX_NODES, 6), -1, np.int32)
    adj[:nn] = board.adjacent
    put(L.T_ADJ, adj)
    module = np.zeros(MAX_NODES, np.int32)
    module[:nn] = board.module
    put(L.T_MODULE, module)


def map_variant_tables(board, variants, T, put):
    """R-9.3 smaller map: four land hexes covered, drawn one per module or given."""
    T[L.T_SMALL_MAP] = int(variants.smaller_map and not variants.covered_hexes)
    cover = np.full(MAX_COVER, -1, np.int32)
    for i, label in enumerate(variants.covered_hexes):
        try:
            v = board.node(label)
        except ValueError:
            raise ValueError(f"covered hex {label!r} is not on map {','.join(board.config)}") from None
        if board.terrain[v] & (TERRAIN_LOCH | TERRAIN_PORT) or not board.active[v]:
            raise ValueError(f"covered hex {label} must be an active land hex (R-9.3)")
        cover[i] = v
    T[L.T_N_COVER] = len(variants.covered_hexes)
    put(L.T_COVER, cover)
