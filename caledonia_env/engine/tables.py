"""Build the static int32 table of one (ruleset, map, player count, variants).

This is the only place that reads the :class:`~caledonia_env.data.Ruleset`
and the :class:`~caledonia_env.map.Board`; the jitted engine reads numbers
only from the table it builds.
"""
from dataclasses import dataclass

import numpy as np

from ..data import ruleset as R
from . import layout as L
from .constants import (MAX_CONTRACTS, MAX_NODES, MAX_PLAYERS, N_UNITS,
                        N_PORT_TILES, N_SCORING_TILES, UNIT_NAMES, UNREACHABLE,
                        T_FOREST, T_MOUNTAIN, T_PASTURE)

_TERRAIN_BITS = {"pasture": T_PASTURE, "forest": T_FOREST, "mountain": T_MOUNTAIN}


@dataclass(frozen=True)
class Variants:
    """Rule switches that change the static tables (R-9)."""
    ports: bool = True
    scoring_tiles: bool = True
    static_imports: bool = False
    kickstarter_tiles: bool = False


def _check_engine_support(rs):
    """The engine's effects follow the printed tiles; refuse data it cannot honour."""
    for i, name in enumerate(R.PORTS):
        if rs.ports.kind[i] != i:
            raise ValueError(f"ports.json: port {name} has kind {R.PORT_KINDS[rs.ports.kind[i]]!r}; "
                             f"the engine implements port {name} as {R.PORT_KINDS[i]!r} only")
    params = {n: j for j, n in enumerate(R.PORT_PARAMS)}
    for tile, field in (("P1", "animals"), ("P3", "discard"), ("P5", "discard")):
        v = rs.ports.params[R.PORTS.index(tile), params[field]]
        if v != 1:
            raise ValueError(f"ports.json: {tile}.{field} = {v}; the engine supports 1")
    units = rs.ports.params[R.PORTS.index("P6"), params["units"]]
    if units not in (1, 2):
        raise ValueError(f"ports.json: P6.units = {units}; the engine supports 1 or 2")
    for i, name in enumerate(R.SCORING_TILES):
        if rs.scoring_tiles.per[i] <= 0:
            raise ValueError(f"scoring_tiles.json: {name}.per must be positive")
    if len(rs.contracts.ids) > 62:
        raise ValueError("contracts.csv: the engine holds at most 62 contracts")
    if rs.setup.rounds > 5:
        raise ValueError("setup.json: the engine supports at most 5 rounds")


def _port_params(rs):
    """Two engine parameters per tile, in the order the effects read them."""
    idx = {n: j for j, n in enumerate(R.PORT_PARAMS)}
    pick = {"P1": ("animals",), "P2": ("money",), "P3": ("gain",), "P4": ("steps",),
            "P5": ("gain",), "P6": ("units",), "P7": ("glory", "upgrades"),
            "P8": ("money",), "P9": ("cost",)}
    out = np.zeros((N_PORT_TILES, 2), np.int32)
    for i, tile in enumerate(R.PORTS):
        for k, field in enumerate(pick[tile]):
            out[i, k] = rs.ports.params[i, idx[field]]
    return out


def reach_lists(ship_req):
    """Per node: targets sorted by required shipping level, and counts per level."""
    n = ship_req.shape[0]
    lists = np.full((MAX_NODES, MAX_NODES), -1, np.int32)
    counts = np.zeros((MAX_NODES, L.MAX_LEVEL), np.int32)
    for u in range(n):
        req = ship_req[u].astype(np.int64)
        order = [v for v in np.argsort(req, kind="stable") if req[v] < UNREACHABLE]
        lists[u, :len(order)] = order
        for level in range(L.MAX_LEVEL):
            counts[u, level] = int(np.sum(req[order] <= level)) if order else 0
    return lists, counts


def build_tables(rs, board, num_players, variants=Variants()):
    """Return the int32 static table (layout.T_*) for this game setup."""
    _check_engine_support(rs)
    n = num_players
    T = np.zeros(L.TABLE_SIZE, np.int32)

    def put(off, values):
        values = np.asarray(values, np.int32).ravel()
        T[off:off + len(values)] = values

    T[L.T_NP] = n
    T[L.T_N_HEX] = board.n_hex
    T[L.T_N_NODES] = board.n_nodes
    T[L.T_ROUNDS] = rs.setup.rounds
    T[L.T_NEIGHBOR_BONUS] = int(rs.economy.neighborhood_limit[n] > 0)
    T[L.T_STATIC_IMPORTS] = int(variants.static_imports)
    T[L.T_SCORING_TILES_ON] = int(variants.scoring_tiles)
    T[L.T_PORTS_ON] = int(variants.ports)
    T[L.T_N_SLOTS] = rs.export_board.slots[n]
    put(L.T_NB_DISC, rs.economy.neighborhood_discount)
    T[L.T_NB_LIMIT] = rs.economy.neighborhood_limit[n]
    start = dict(zip(R.CLAN_START_FIELDS, rs.setup.player_start))
    T[L.T_MERCH_SUPPLY] = start["merchants_in_supply"]
    T[L.T_MERCH_TRACK] = rs.economy.merchants_total - start["merchants_in_supply"]
    T[L.T_HIRE_COST] = rs.economy.hire_cost
    T[L.T_HIRE_BONUS_COST] = rs.economy.hire_bonus_cost
    T[L.T_SHIP_MAX] = min(rs.economy.shipping_max_level, L.MAX_LEVEL - 1)
    T[L.T_SHIP_COST] = rs.economy.shipping_cost
    T[L.T_SHIP_BONUS_COST] = rs.economy.shipping_bonus_cost
    T[L.T_TECH_COST] = rs.economy.technology_cost
    T[L.T_TECH_BONUS_COST] = rs.economy.technology_bonus_cost

    u8 = len(R.UNITS)
    assert tuple(R.UNITS) == UNIT_NAMES[:u8]
    put(L.T_UNIT_COUNT, rs.units.count)
    put(L.T_UNIT_COST, rs.units.cost)
    terrain = np.zeros(N_UNITS, np.int32)
    for u in range(u8):
        for j, name in enumerate(R.TERRAINS):
            if rs.units.terrain[u, j]:
                terrain[u] |= _TERRAIN_BITS[name]
    put(L.T_UNIT_TERRAIN, terrain)
    good = np.full(N_UNITS, -1, np.int32)
    good[:u8] = rs.units.good
    put(L.T_UNIT_GOOD, good)
    put(L.T_UNIT_YIELD, rs.units.output)
    lj, mi = R.UNITS.index("lumberjack"), R.UNITS.index("miner")
    put(L.T_WORKER_INCOME, [rs.units.income_base[lj], rs.units.income_upgraded[lj],
                            rs.units.income_base[mi], rs.units.income_upgraded[mi]])

    put(L.T_PRICE_MIN, rs.market.min)
    put(L.T_PRICE_MAX, rs.market.max)
    put(L.T_PRICE_START, rs.market.start[n])
    put(L.T_CONTRACT_COST, rs.export_board.contract_cost)
    put(L.T_PASS_BONUS, rs.export_board.pass_bonus[n])
    marked = np.zeros(L.MAX_TRACK, np.int32)
    length = min(rs.export_board.import_track_length, L.MAX_TRACK - 1)
    marked[:length + 1] = rs.export_board.import_marked[:length + 1]
    put(L.T_IMPORT_MARKED, marked)
    T[L.T_IMPORT_MARK_PAY] = rs.export_board.import_money_per_mark
    T[L.T_IMPORT_TRACK_LEN] = length
    T[L.T_STRUCT_BUILDINGS] = rs.export_board.structure_buildings
    T[L.T_STRUCT_DRAW] = rs.export_board.structure_draw
    T[L.T_STRUCT_KEEP] = rs.export_board.structure_keep

    nc = len(rs.contracts.ids)
    assert nc <= MAX_CONTRACTS
    T[L.T_N_CONTRACTS] = nc
    put(L.T_CONTRACTS, rs.contracts.table)

    nt = len(rs.starting_tiles.money)
    T[L.T_N_START_TILES] = nt
    put(L.T_START_MONEY, rs.starting_tiles.money)
    put(L.T_START_GOODS, rs.starting_tiles.goods)
    put(L.T_SEAT_MONEY, rs.setup.no_clans_seat_money[:MAX_PLAYERS])

    st = rs.scoring_tiles
    pool = [int(variants.kickstarter_tiles or not st.optional[i]) for i in range(N_SCORING_TILES)]
    put(L.T_TILE_POOL, pool)
    put(L.T_TILE_KIND, st.kind)
    put(L.T_TILE_GLORY, st.glory)
    put(L.T_TILE_PER, st.per)
    put(L.T_TILE_MIN_COST, st.min_land_cost)
    unit_glory = np.zeros((N_SCORING_TILES, N_UNITS), np.int32)
    unit_glory[:, :u8] = st.unit_glory
    put(L.T_TILE_UNIT_GLORY, unit_glory)
    put(L.T_PORT_POOL, [int(variants.kickstarter_tiles or not rs.ports.optional[i])
                        for i in range(N_PORT_TILES)])
    put(L.T_PORT_PARAM, _port_params(rs))

    fs = rs.final_scoring
    T[L.T_VP_BASIC] = fs.vp_per_basic_good
    T[L.T_VP_PROCESSED] = fs.vp_per_processed_good
    T[L.T_MONEY_PER_VP] = fs.money_per_vp
    T[L.T_VP_HOPS] = fs.vp_per_hops
    put(L.T_IMPORT_VP, fs.import_vp_by_rank)
    rarity = np.zeros(3, np.int32)
    for rank, good_index in enumerate(fs.import_rarity_order):
        rarity[good_index] = rank
    put(L.T_IMPORT_RARITY, rarity)
    T[L.T_STATIC_IMPORT_VP] = fs.static_import_vp
    put(L.T_EXPORT_VP, fs.export_majority_vp[n])
    put(L.T_SETTLE_VP, fs.settlement_vp[n])
    T[L.T_EXPORT_MIN] = fs.export_majority_min_contracts

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
    return T
