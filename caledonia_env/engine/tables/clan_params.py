"""The clan part of the static tables (R-1.7, R-8, R-9.4): how clans are assigned and one
parameter row per clan (row NO_CLAN holds the no-clan values).
"""
import numpy as np

from caledonia_env.data import names as R
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (BREWER, BUCHANAN, CAMPBELL, CLAN_NAMES, CUNNINGHAM, FERGUSSON, FISHERMAN,
                        LUMBERJACK, MACDONALD, MACKENZIE, MAX_PLAYERS, MAX_PROCESS, MINER, N_CLANS,
                        N_UNITS, NO_CLAN, PAY_EACH, PAY_ONCE_SOURCE, PAY_ONCE_TURN,
                        ROBERTSON, STEWART)


def clan_pool(rs, variants):
    """Bitmask of the clans that may be drawn (R-1.7): optional clans only on request."""
    pool = 0
    for c in range(N_CLANS):
        if not rs.clans.optional[c] or variants.kickstarter_clan:
            pool |= 1 << c
    return pool


def clan_tables(rs, n, variants, T, put):
    """Per-clan parameter rows (R-8); row NO_CLAN holds the no-clan values. Two rows follow
    a switch (``variants``, checked by ``build_tables``): Buchanan's contract cost
    (``buchanan``, R-8.1) and MacKenzie's cellar money (``cellar``, R-8.6)."""
    T[L.T_CLAN_MODE] = R.CLAN_MODES.index(variants.clan_mode)
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
    pay_once = np.full(rows, PAY_EACH, np.int32)
    fulfill = np.ones(rows, np.int32)
    build = np.zeros((rows, MAX_PROCESS), np.int32)
    milk = np.zeros(rows, np.int32)
    whisky = np.zeros(rows, np.int32)
    cellar = np.zeros((rows, 3), np.int32)
    cellar_in = np.zeros(rows, np.int32)
    delta = np.zeros(rows, np.int32)
    market = np.zeros(rows, np.int32)
    beer = np.zeros((3, rows), np.int32)
    border = np.zeros(rows, np.int32)
    cp = rs.clans.params

    b = cp["buchanan"]
    obtain[BUCHANAN] = b["contracts_per_action"]
    if b["pay_once_per_turn"]:
        pay_once[BUCHANAN] = PAY_ONCE_SOURCE if variants.buchanan == "same-source" else PAY_ONCE_TURN
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
    aged_once, aged_twice = k["cellar_money"][0], k["cellar_money"][-1]
    # [left space, right space, right space at the start of production]: only aged barrels
    # pay, a barrel leaving the right space at production has aged twice; the earlier
    # reading pays by space, £7 from the left at any time
    cellar[MACKENZIE] = ((0, aged_once, aged_twice) if variants.cellar == "aged"
                         else (aged_once, aged_twice, aged_twice))
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
