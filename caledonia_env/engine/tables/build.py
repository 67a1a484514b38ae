"""Build the static int32 table of one (ruleset, map, player count, variants).

This is the only place that reads the :class:`~caledonia_env.data.Ruleset`
and the :class:`~caledonia_env.map.Board`; the jitted engine reads numbers
only from the table it builds. The map, clan and Automa parts are built in
:mod:`.map_graph`, :mod:`.clan_params` and :mod:`.automa_params`; the data the
engine can honour is checked first (:mod:`.limits`).
"""
from dataclasses import dataclass

import numpy as np

from caledonia_env.data import names as R
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (MAX_PLAYERS, N_PORT_TILES, N_SCORING_TILES, N_UNITS, TERRAIN_FOREST,
                        TERRAIN_MOUNTAIN, TERRAIN_PASTURE, UNIT_NAMES)
from caledonia_env.engine.tables.automa_params import automa_tables
from caledonia_env.engine.tables.clan_params import clan_tables
from caledonia_env.engine.tables.limits import BEHAVIOUR_LIMITS, CAPACITY_LIMITS, check_engine_support
from caledonia_env.engine.tables.map_graph import map_tables, map_variant_tables

# readings of the string switches (docs/interpretations.md): the engine's earlier reading first,
# then the default
SWAP_BONUS_READINGS = ("first-edition", "erratum")   # port swap: building bonus only / + neighborhood
SOLO_IMPORT_READINGS = ("fixed", "rarity")           # solo.import_vp each / 3-4-5 by own counts
BUCHANAN_READINGS = ("any-second", "same-source")    # which second contract of a turn is free
CELLAR_READINGS = ("left-pays", "aged")              # £7 from the left space / only aged barrels
IMPORT_RARITY_READINGS = ("capped", "goods")         # rank capped token positions / goods imported

_TERRAIN_BITS = {"pasture": TERRAIN_PASTURE, "forest": TERRAIN_FOREST, "mountain": TERRAIN_MOUNTAIN}


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
    price_shift_exact: bool = False  # P6 moves a price exactly its steps (else up to them)
    retrieve_buy_side: bool = True   # the upgrade bonus may take back a buy-side merchant
    export_min_contracts: object = None   # contracts needed to rank; None = ruleset data
    swap_bonuses: str = "erratum"    # port swap: the publisher's erratum (GameConfig's default too)
    solo_imports: str = "rarity"     # the FAQ's values by rarity (GameConfig's default too)
    buchanan: str = "same-source"    # the cost once for two contracts from one source
    cellar: str = "aged"             # only aged barrels pay
    import_rarity: str = "goods"     # rarity ranks the goods imported
    automa: tuple = ()               # difficulty 1-5 per seat, 0 = not an Automa
    automa_data: str = None          # directory with automa_cards.csv / automa.json; None = bundled


def _port_params(rs):
    """Two engine parameters per tile, in the order the effects read them."""
    idx = {n: j for j, n in enumerate(R.PORT_PARAMS)}
    pick = {"meat_reduction": ("animals",), "money": ("money",), "basic_exchange": ("gain",),
            "price_shift": ("steps",), "processed_exchange": ("gain",), "swap_units": ("units",),
            "upgrade_glory": ("glory", "upgrades"), "money_structure": ("money",),
            "copy_port": ("cost",)}
    out = np.zeros((N_PORT_TILES, 2), np.int32)
    for i, kind in enumerate(R.PORT_KINDS):
        for k, field in enumerate(pick[kind]):
            out[i, k] = rs.ports.params[i, idx[field]]
    return out


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

    _market_tables(rs, n, T)
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

    map_tables(board, T, put)
    clan_tables(rs, n, variants, T, put)
    _solo_tables(rs, n, variants, T, put)
    map_variant_tables(board, variants, T, put)
    automa_tables(board, variants, T, put)
    return T


def _reading(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def _interpretation_tables(variants, T):
    """Switchable interpretations (P6 price-shift steps, R-3.7.2 retrieve, R-7 export
    threshold and import rarity, the port swap's bonuses; the solo imports in
    :func:`_solo_tables`, Buchanan's contract cost and MacKenzie's cellar in
    :func:`~caledonia_env.engine.tables.clan_params.clan_tables`)."""
    T[L.T_PRICE_SHIFT_EXACT] = int(bool(variants.price_shift_exact))
    T[L.T_RETRIEVE_BUY] = int(bool(variants.retrieve_buy_side))
    swap = _reading("swap_bonuses", variants.swap_bonuses, SWAP_BONUS_READINGS)
    T[L.T_SWAP_NB_BONUS] = int(swap == "erratum")
    rarity = _reading("import_rarity", variants.import_rarity, IMPORT_RARITY_READINGS)
    T[L.T_IMPORT_RANK_GOODS] = int(rarity == "goods")
    _reading("buchanan", variants.buchanan, BUCHANAN_READINGS)      # tables: clan_params
    _reading("cellar", variants.cellar, CELLAR_READINGS)
    k = variants.export_min_contracts
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"export_min_contracts must be None (ruleset data) or an int >= 0, "
                             f"got {k!r}")
        T[L.T_EXPORT_MIN] = k


def _market_tables(rs, n, T):
    """R-1.3, R-3.1, R-9.2: each good's track of step prices, its start step on this player
    count's side and the solo 'average' bracket, as step numbers (engine.market). The
    cheapest step is numbered by its price, so on a track of £1 steps the state's step
    number is the price."""
    m = rs.market
    for g, track in enumerate(m.tracks):
        lo = int(track[0])
        start = int(m.start_step[n, g])
        T[L.T_STEP_LO + g] = lo
        T[L.T_STEP_HI + g] = lo + len(track) - 1
        T[L.T_STEP_START + g] = lo + start
        T[L.T_PRICE_START + g] = track[start]
        T[L.T_SOLO_AVG_LO + g] = lo + m.solo_average_steps[g, 0]
        T[L.T_SOLO_AVG_HI + g] = lo + m.solo_average_steps[g, 1]
        off = L.T_TRACK + g * L.MAX_MARKET_STEPS
        T[off:off + len(track)] = track


def _solo_tables(rs, n, variants, T, put):
    """R-9.2: neutral blockers, five contracts, market phase dice, solo scoring."""
    so = rs.solo
    T[L.T_SOLO] = int(variants.solo)
    T[L.T_SOLO_BLOCK_COST] = so.blocked_land_cost if variants.solo else -1
    T[L.T_SOLO_START_SLOTS] = so.start_contracts if variants.solo else T[L.T_N_SLOTS]
    rarity = _reading("solo_imports", variants.solo_imports, SOLO_IMPORT_READINGS) == "rarity"
    if variants.solo and not so.track_imports:
        T[L.T_STATIC_IMPORTS] = 1            # no token moves, no £1 marks
        if not variants.static_imports:
            T[L.T_STATIC_IMPORT_VP] = so.import_vp
            T[L.T_SOLO_IMPORT_RARITY] = int(rarity)    # FAQ: ranked by the player's own counts
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
    T[L.T_SOLO_N_EXPORT] = len(so.export_vp)
    put(L.T_SOLO_EXPORT, so.export_vp)
    T[L.T_SOLO_N_SETTLE] = len(so.settlement_vp)
    put(L.T_SOLO_SETTLE, so.settlement_vp)


__all__ = ["Variants", "build_tables", "reading", "check_engine_support", "CAPACITY_LIMITS",
           "BEHAVIOUR_LIMITS"]
