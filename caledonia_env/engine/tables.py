"""Build the static int32 table of one (ruleset, map, player count, variants).

This is the only place that reads the :class:`~caledonia_env.data.Ruleset`
and the :class:`~caledonia_env.map.Board`; the jitted engine reads numbers
only from the table it builds.
"""
from dataclasses import dataclass

import numpy as np

from ..data import names as R
from . import layout as L
from .actions import PRICE_DELTAS
from .constants import (BUCHANAN, CAMPBELL, CLAN_NAMES, CUNNINGHAM, FERGUSSON, MACDONALD,
                        MACKENZIE, MAX_BID, MAX_BOXES, MAX_BREW, MAX_CONTRACTS, MAX_COVER,
                        MAX_DRAW, MAX_MERCHANTS, MAX_NB_BUY, MAX_NODES, MAX_PLAYERS,
                        MAX_PROCESS, MAX_SLOTS, MAX_START_PICKS, N_ROUNDS_MAX, MINER, N_CLANS, N_CORNERS,
                        N_UNITS, N_PORT_TILES, N_SCORING_TILES, NO_CLAN, ROBERTSON, STEWART,
                        BREWER, FISHERMAN, LUMBERJACK, UNIT_NAMES, UNREACHABLE,
                        T_FOREST, T_LOCH, T_MOUNTAIN, T_PASTURE, T_PORT)

_TERRAIN_BITS = {"pasture": T_PASTURE, "forest": T_FOREST, "mountain": T_MOUNTAIN}


@dataclass(frozen=True)
class Variants:
    """Rule switches that change the static tables (R-1.7, R-9)."""
    ports: bool = True
    scoring_tiles: bool = True
    static_imports: bool = False
    kickstarter_tiles: bool = False
    clan_mode: str = "none"          # none / draft / auction / fixed
    fixed_clans: tuple = ()          # fixed: clan name (or None) per player
    kickstarter_clan: bool = False   # the brewer joins the drawn clans
    solo: bool = False
    smaller_map: bool = False
    covered_hexes: tuple = ()        # given covered hexes (labels); () = drawn
    # switchable interpretations (docs/interpretations.md); defaults = the engine's reading
    p4_exact: bool = False           # P4 moves a price exactly its steps (else up to them)
    retrieve_buy_side: bool = True   # the upgrade bonus may take back a buy-side merchant
    export_min_contracts: object = None   # contracts needed to rank; None = ruleset data
    automa: tuple = ()               # difficulty 1-5 per seat, 0 = not an Automa
    automa_data: str = None          # directory with automa_cards.csv / automa.json; None = bundled


# Engine capacities (array sizes and action-id ranges) the ruleset data must fit:
# (table, JSON path, lowest, highest, why, check the length instead of the value).
CAPACITY_LIMITS = (
    ("setup", "rounds", 1, N_ROUNDS_MAX, f"round tables hold N_ROUNDS_MAX = {N_ROUNDS_MAX}", False),
    ("setup", "max_players", 1, MAX_PLAYERS, f"MAX_PLAYERS = {MAX_PLAYERS} seats", False),
    ("setup", "auction_max_bid", 0, MAX_BID, f"bid action ids reach MAX_BID = {MAX_BID}", False),
    ("setup", "player_start.export_boxes", 0, MAX_BOXES, f"MAX_BOXES = {MAX_BOXES}", False),
    ("clans", "*.export_boxes", 0, MAX_BOXES, f"MAX_BOXES = {MAX_BOXES}", False),
    *((("units", f"{b}.count", 0, MAX_PROCESS,
        f"production ids process up to MAX_PROCESS = {MAX_PROCESS} buildings of a type", False)
       for b in R.BUILDINGS)),
    ("economy", "merchants.total", 0, MAX_MERCHANTS,
     f"trade action ids encode up to MAX_MERCHANTS = {MAX_MERCHANTS} merchants", False),
    ("economy", "shipping.max_level", 1, L.MAX_LEVEL - 1,
     f"reach tables hold levels below MAX_LEVEL = {L.MAX_LEVEL}", False),
    ("economy", "neighborhood.limit_by_players.*", 0, MAX_NB_BUY,
     f"purchase action ids encode up to MAX_NB_BUY = {MAX_NB_BUY} goods", False),
    ("export_board", "slots_by_players.*", 1, MAX_SLOTS, f"MAX_SLOTS = {MAX_SLOTS} slots", False),
    ("export_board", "structure_bonus.draw", 0, MAX_DRAW,
     f"keep action ids cover MAX_DRAW = {MAX_DRAW} drawn contracts", False),
    ("export_board", "structure_bonus.keep", 0, MAX_BOXES, f"MAX_BOXES = {MAX_BOXES}", False),
    ("export_board", "import_track.length", 1, L.MAX_TRACK - 1,
     f"the track table holds MAX_TRACK = {L.MAX_TRACK} spaces", False),
    ("ports", "P4.steps", 1, max(PRICE_DELTAS),
     f"price action ids encode steps {PRICE_DELTAS}", False),
    ("clans", "buchanan.structure_draw", 0, MAX_DRAW,
     f"keep action ids cover MAX_DRAW = {MAX_DRAW} drawn contracts", False),
    ("clans", "buchanan.structure_keep", 0, MAX_BOXES, f"MAX_BOXES = {MAX_BOXES}", False),
    ("clans", "brewer.beer_max_per_contract", 0, MAX_BREW,
     f"brew action ids reach MAX_BREW = {MAX_BREW}", False),
    ("clans", "campbell.building_discount", 1, MAX_PROCESS,
     f"one discount per building, MAX_PROCESS = {MAX_PROCESS}", True),
    ("solo", "goods_die", 1, L.MAX_DIE, f"dice have at most MAX_DIE = {L.MAX_DIE} faces", True),
    ("solo", "price_die", 1, L.MAX_DIE, f"dice have at most MAX_DIE = {L.MAX_DIE} faces", True),
    ("solo", "export_vp", 0, L.MAX_THRESH, f"MAX_THRESH = {L.MAX_THRESH} thresholds", True),
    ("solo", "settlement_vp", 0, L.MAX_THRESH, f"MAX_THRESH = {L.MAX_THRESH} thresholds", True),
    ("contracts", "", 1, MAX_CONTRACTS, f"the deck holds MAX_CONTRACTS = {MAX_CONTRACTS}", True),
)

# Effects the engine implements one way only (the printed tiles, R-5 and R-8).
BEHAVIOUR_LIMITS = (
    ("ports", "P1.animals", 1, 1, "P1 spares exactly one animal", False),
    ("ports", "P3.discard", 1, 1, "P3 discards exactly one good", False),
    ("ports", "P5.discard", 1, 1, "P5 discards exactly one good", False),
    ("ports", "P6.units", 1, 2, "P6 swaps one or two units", False),
    ("clans", "buchanan.contracts_per_action", 1, 2, "one second-contract decision (R-8.1)",
     False),
    ("clans", "buchanan.fulfill_per_action", 1, 2, "one second fulfilment (R-8.1)", False),
    ("clans", "mackenzie.cellar_money", 2, 2, "two aging spaces (R-8.6)", True),
    ("clans", "mackenzie.cellar_in_per_production", 0, 1, "one barrel per production (R-8.6)",
     False),
    ("setup", "extra_clans_drawn", 1, MAX_START_PICKS - MAX_PLAYERS,
     "a draft offers players + 1 starting picks (R-1.7)", False),
    ("setup", "player_start.workers_to_place", 0, 8, "eight placement passes (R-1.8)", False),
    ("clans", "*.workers_to_place", 0, 8, "eight placement passes (R-1.8)", False),
)


def check_engine_support(rs):
    """Refuse ruleset data the engine cannot honour: a :class:`RulesetError` names
    the file, table, field and the allowed range."""
    for limit in CAPACITY_LIMITS + BEHAVIOUR_LIMITS:
        rs.require(*limit[:5], length=limit[5])
    for i, name in enumerate(R.PORTS):
        if rs.ports.kind[i] != i:
            raise rs.error("ports", f"{name}.kind", f"{R.PORT_KINDS[rs.ports.kind[i]]!r}; the "
                           f"engine implements port {name} as {R.PORT_KINDS[i]!r} only")
    for name in R.BUILDINGS:
        u = R.UNITS.index(name)
        if rs.units.count[u] * rs.units.output[u] > MAX_PROCESS:
            raise rs.error("units", f"{name}.output", f"count x output = {rs.units.count[u]} x "
                           f"{rs.units.output[u]}; production ids process at most MAX_PROCESS = "
                           f"{MAX_PROCESS} per building type (R-6.3)")
    if not rs.clans.params["fergusson"]["last_worker_after_all"]:
        raise rs.error("clans", "fergusson.last_worker_after_all", "false; the engine places "
                       "workers beyond the second after everyone's second (true only)")


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
    water = (terr & (T_LOCH | T_PORT)) != 0
    active = T[L.T_ACTIVE:L.T_ACTIVE + nn] != 0
    for u in range(N_UNITS):
        if u == FISHERMAN:
            bits[u, :nn] = water
        else:
            bits[u, :nn] = ~water & active & ((terr & T[L.T_UNIT_TERRAIN + u]) != 0)
    return np.packbits(bits, axis=-1, bitorder="little").view("<u4").view("<i4")


def build_tables(rs, board, num_players, variants=Variants()):
    """Return the int32 static table (layout.T_*) for this game setup."""
    check_engine_support(rs)
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
    T[L.T_SHIP_MAX] = rs.economy.shipping_max_level
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
    length = rs.export_board.import_track_length
    marked[:length + 1] = rs.export_board.import_marked[:length + 1]
    put(L.T_IMPORT_MARKED, marked)
    T[L.T_IMPORT_MARK_PAY] = rs.export_board.import_money_per_mark
    T[L.T_IMPORT_TRACK_LEN] = length
    T[L.T_STRUCT_BUILDINGS] = rs.export_board.structure_buildings
    T[L.T_STRUCT_DRAW] = rs.export_board.structure_draw
    T[L.T_STRUCT_KEEP] = rs.export_board.structure_keep

    nc = len(rs.contracts.ids)
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
    _interpretation_tables(variants, T)

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
    _clan_tables(rs, n, variants, T, put)
    _solo_tables(rs, n, variants, T, put)
    _map_variant_tables(board, variants, T, put)
    automa_tables(board, variants, T, put)
    return T


def _interpretation_tables(variants, T):
    """Switchable interpretations (P4 steps, R-3.7.2 retrieve, R-7 export threshold)."""
    T[L.T_P4_EXACT] = int(bool(variants.p4_exact))
    T[L.T_RETRIEVE_BUY] = int(bool(variants.retrieve_buy_side))
    k = variants.export_min_contracts
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"export_min_contracts must be None (ruleset data) or an int >= 0, "
                             f"got {k!r}")
        T[L.T_EXPORT_MIN] = k


def clan_pool(rs, variants):
    """Bitmask of the clans that may be drawn (R-1.7): optional clans only on request."""
    pool = 0
    for c in range(N_CLANS):
        if not rs.clans.optional[c] or variants.kickstarter_clan:
            pool |= 1 << c
    return pool


def _clan_tables(rs, n, variants, T, put):
    """Per-clan parameter rows (R-8); row NO_CLAN holds the no-clan values."""
    modes = ("none", "draft", "auction", "fixed")
    T[L.T_CLAN_MODE] = modes.index(variants.clan_mode)
    pool = clan_pool(rs, variants)
    T[L.T_CLAN_POOL] = pool
    need = n + rs.setup.extra_clans_drawn if variants.clan_mode == "draft" else n
    if variants.clan_mode in ("draft", "auction") and bin(pool).count("1") < need:
        raise ValueError(f"{need} clans must be drawn but the pool holds {bin(pool).count('1')}")
    fixed = np.full(MAX_PLAYERS, -1, np.int32)
    for p, name in enumerate(variants.fixed_clans):
        fixed[p] = -1 if name is None else CLAN_NAMES.index(name)
    put(L.T_FIXED_CLAN, fixed)
    T[L.T_AUCTION_MAX] = rs.setup.auction_max_bid
    if variants.clan_mode == "none":
        put(L.T_SEAT_MONEY, rs.setup.no_clans_seat_money[:MAX_PLAYERS])
    else:
        put(L.T_SEAT_MONEY, np.zeros(MAX_PLAYERS, np.int32))

    fields = list(R.CLAN_START_FIELDS)
    ship_col = fields.index("shipping_level_1_2" if n <= 2 else "shipping_level_3_4")
    rows = L.N_CROWS
    start = np.zeros((rows, len(fields)), np.int32)
    start[:N_CLANS] = rs.clans.start
    start[NO_CLAN] = rs.setup.player_start
    total = rs.economy.merchants_total
    sb = rs.export_board
    sup = start[:, fields.index("merchants_in_supply")]
    put(L.T_CLAN_MERCH_SUPPLY, sup)
    put(L.T_CLAN_MERCH_TRACK, total - sup)
    put(L.T_CLAN_SHIP, start[:, ship_col])
    put(L.T_CLAN_WORKERS, start[:, fields.index("workers_to_place")])
    put(L.T_CLAN_BOXES, start[:, fields.index("export_boxes")])

    u8 = len(R.UNITS)
    cost = np.zeros((rows, N_UNITS), np.int32)
    cost[:, :u8] = rs.units.cost
    lj, mi = R.UNITS.index("lumberjack"), R.UNITS.index("miner")
    income = np.tile(np.array([rs.units.income_base[lj], rs.units.income_upgraded[lj],
                               rs.units.income_base[mi], rs.units.income_upgraded[mi], 0],
                              np.int32), (rows, 1))
    tech_ok = np.ones(rows, np.int32)
    any_worker = np.zeros(rows, np.int32)
    fish_land = np.zeros(rows, np.int32)
    n_rows = np.zeros(rows, np.int32)
    draw = np.full(rows, sb.structure_draw, np.int32)
    keep = np.full(rows, sb.structure_keep, np.int32)
    obtain = np.ones(rows, np.int32)
    pay_once = np.zeros(rows, np.int32)
    fulfill = np.ones(rows, np.int32)
    build = np.zeros((rows, MAX_PROCESS), np.int32)
    milk = np.zeros(rows, np.int32)
    whisky = np.zeros(rows, np.int32)
    cellar = np.zeros((rows, 2), np.int32)
    cellar_in = np.zeros(rows, np.int32)
    delta = np.zeros(rows, np.int32)
    market = np.zeros(rows, np.int32)
    beer = np.zeros((3, rows), np.int32)
    border = np.zeros(rows, np.int32)
    cp = rs.clans.params

    b = cp["buchanan"]
    obtain[BUCHANAN] = b["contracts_per_action"]
    pay_once[BUCHANAN] = int(b["pay_once_per_turn"])
    draw[BUCHANAN] = b["structure_draw"]
    keep[BUCHANAN] = b["structure_keep"]
    fulfill[BUCHANAN] = b["fulfill_per_action"]
    disc = cp["campbell"]["building_discount"]
    build[CAMPBELL, :len(disc)] = disc
    milk[CUNNINGHAM] = cp["cunningham"]["milk_money"]
    border[FERGUSSON] = int(cp["fergusson"]["workers_on_border"])
    m = cp["macdonald"]
    for u in (LUMBERJACK, MINER, FISHERMAN):
        cost[MACDONALD, u] = m["worker_cost"]
    income[MACDONALD, :] = m["worker_income"]
    tech_ok[MACDONALD] = int(m["technology_allowed"])
    any_worker[MACDONALD] = 1
    fish_land[MACDONALD] = m["fisherman_land_cost"]
    n_rows[MACDONALD] = m["rows_per_turn"]
    k = cp["mackenzie"]
    whisky[MACKENZIE] = k["whisky_money"]
    cellar[MACKENZIE] = k["cellar_money"]
    cellar_in[MACKENZIE] = k["cellar_in_per_production"]
    r = cp["robertson"]
    delta[ROBERTSON] = r["delta_discount_1_2"] if n <= 2 else r["delta_discount_3_4"]
    market[STEWART] = cp["stewart"]["market_money"]
    w = cp["brewer"]
    beer[:, BREWER] = (w["beer_money"], w["beer_grain"], w["beer_max_per_contract"])

    put(L.T_CLAN_BORDER_START, border)
    put(L.T_CLAN_UNIT_COST, cost)
    put(L.T_CLAN_BUILD_DISC, build)
    put(L.T_CLAN_DELTA_DISC, delta)
    put(L.T_CLAN_INCOME, income)
    put(L.T_CLAN_TECH_OK, tech_ok)
    put(L.T_CLAN_ANY_WORKER, any_worker)
    put(L.T_CLAN_FISH_LAND, fish_land)
    put(L.T_CLAN_ROWS, n_rows)
    put(L.T_CLAN_STRUCT_DRAW, draw)
    put(L.T_CLAN_STRUCT_KEEP, keep)
    put(L.T_CLAN_OBTAIN_MAX, obtain)
    put(L.T_CLAN_PAY_ONCE, pay_once)
    put(L.T_CLAN_FULFILL_MAX, fulfill)
    put(L.T_CLAN_MILK_MONEY, milk)
    put(L.T_CLAN_WHISKY_MONEY, whisky)
    put(L.T_CLAN_CELLAR_MONEY, cellar)
    put(L.T_CLAN_CELLAR_IN, cellar_in)
    put(L.T_CLAN_MARKET_MONEY, market)
    put(L.T_CLAN_BEER_MONEY, beer[0])
    put(L.T_CLAN_BEER_GRAIN, beer[1])
    put(L.T_CLAN_BEER_MAX, beer[2])


def _solo_tables(rs, n, variants, T, put):
    """R-9.2: neutral blockers, five contracts, market phase dice, solo scoring."""
    so = rs.solo
    T[L.T_SOLO] = int(variants.solo)
    T[L.T_SOLO_BLOCK_COST] = so.blocked_land_cost if variants.solo else -1
    T[L.T_SOLO_START_SLOTS] = so.start_contracts if variants.solo else T[L.T_N_SLOTS]
    if variants.solo and not so.track_imports:
        T[L.T_STATIC_IMPORTS] = 1
        if not variants.static_imports:
            T[L.T_STATIC_IMPORT_VP] = so.import_vp
    rounds = 0
    if variants.solo:
        for r in so.market_phase_rounds:
            rounds |= 1 << r
    T[L.T_SOLO_MARKET_ROUNDS] = rounds
    T[L.T_SOLO_N_CHANGE] = so.goods_changed_per_round
    T[L.T_SOLO_GOODS_FACES] = len(so.goods_die)
    put(L.T_SOLO_GOODS_DIE, so.goods_die)
    T[L.T_SOLO_PRICE_FACES] = len(so.price_die)
    put(L.T_SOLO_PRICE_DIE, so.price_die)
    put(L.T_SOLO_REMOVE, so.removal_slot)
    put(L.T_SOLO_AVG_MIN, rs.market.solo_avg_min)
    put(L.T_SOLO_AVG_MAX, rs.market.solo_avg_max)
    T[L.T_SOLO_N_EXPORT] = len(so.export_vp)
    put(L.T_SOLO_EXPORT, so.export_vp)
    T[L.T_SOLO_N_SETTLE] = len(so.settlement_vp)
    put(L.T_SOLO_SETTLE, so.settlement_vp)


def _map_variant_tables(board, variants, T, put):
    """R-9.3 smaller map: four land hexes covered, drawn one per module or given."""
    T[L.T_SMALL_MAP] = int(variants.smaller_map and not variants.covered_hexes)
    cover = np.full(MAX_COVER, -1, np.int32)
    for i, label in enumerate(variants.covered_hexes):
        try:
            v = board.node(label)
        except ValueError:
            raise ValueError(f"covered hex {label!r} is not on map {','.join(board.config)}") from None
        if board.terrain[v] & (T_LOCH | T_PORT) or not board.active[v]:
            raise ValueError(f"covered hex {label} must be an active land hex (R-9.3)")
        cover[i] = v
    T[L.T_N_COVER] = len(variants.covered_hexes)
    put(L.T_COVER, cover)


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
    lochs = [int(v) for v in order if board.terrain[v] & T_LOCH]
    if not lochs:
        return [int(order[0])]
    seen, stack = {lochs[0]}, [lochs[0]]
    while stack:
        v = stack.pop()
        for w in board.adjacent[v]:
            if w >= 0 and w < board.n_hex and board.terrain[w] & T_LOCH and int(w) not in seen:
                seen.add(int(w))
                stack.append(int(w))
    return sorted(seen)


def automa_tables(board, variants, T, put):
    """A-0 … A-8: Automa seats, cards and money rules from ``data/automa``."""
    if not variants.automa:
        return
    from ..data.automa import CONTRACT_GOODS, PRODUCERS, load_automa
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
