"""Scenario tests for docs/rules.md R-3, the eight main actions.

Rule ids covered: R-3.1 trade, R-3.2 obtain a contract, R-3.3 expand, R-3.3.1 neighborhood
bonus, R-3.3.2 structure bonus, R-3.4 shipping, R-3.5 technology, R-3.6 hire, R-3.7
fulfill (slaughter), R-3.7.1 import track, R-3.7.2 export bonuses, R-3.8 pass.
Every test checks the legal mask (``mask_names``) and/or the state after stepping; numbers
that are ruleset data come from ``game.ruleset``.
"""
from collections import deque

import pytest
from conftest import base_scenario, mask_names
from market_tracks import price_after

from caledonia_env import Game
from caledonia_env.data.names import CONTRACT_COLUMNS
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (TERRAIN_FOREST, TERRAIN_LOCH, TERRAIN_MOUNTAIN,
                                            TERRAIN_PASTURE, TERRAIN_PORT)
from caledonia_env.engine.market import market_price

GOODS = ("wool", "grain", "milk", "bread", "cheese", "whisky")
UNITS = ("sheep", "cow", "field", "cheese_dairy", "bakery", "distillery", "lumberjack", "miner")
U = {u: i for i, u in enumerate(UNITS)}
G = {g: i for i, g in enumerate(GOODS)}
UNIT_TERRAIN = {u: (TERRAIN_FOREST if u == "lumberjack" else TERRAIN_MOUNTAIN if u == "miner" else TERRAIN_PASTURE)
                for u in UNITS}
RS = Game.from_scenario(base_scenario()).ruleset


# ------------------------------------------------------------------ helpers
def mk(d):
    return Game.from_scenario(d)


def pl(g, p=0):
    return g.to_scenario()["players"][p]


def do(g, name):
    g.step(g.parse_action(name))


def price(g, good):
    return int(market_price(g.state, g.tables, G[good]))


def marker(g, good):
    """Good's marker as a step of its track (0 = the cheapest)."""
    return int(g.state[L.S_PRICE_STEP + G[good]] - g.tables[L.T_STEP_LO + G[good]])


def board_left(g, p, unit):
    return int(RS.units.count[U[unit]]) - sum(1 for u in pl(g, p)["units"].values() if u == unit)


def cost(g, unit, label, land=True):
    return int(RS.units.cost[U[unit]]) + (int(g.board.land_cost[g.board.node(label)]) if land else 0)


def contract(cid):
    """Columns of contract ``cid`` as a dict (need_*, gain_*)."""
    row = RS.contracts.table[[int(x) for x in RS.contracts.ids].index(cid)]
    return dict(zip(CONTRACT_COLUMNS, (int(x) for x in row)))


def expansions(g):
    """(unit, label) of every expansion in the mask."""
    out = set()
    for n in mask_names(g):
        if n.startswith("expand "):
            _, unit, _, label = n.split()
            out.add((unit, label))
    return out


def opponents_passed(n=2, **kw):
    """Scenario where player 0 is to move and every other player has passed."""
    d = base_scenario(n, next_turn_order=list(range(1, n)), scoring_tiles=[None] * 5, **kw)
    for p in range(1, n):
        d["players"][p] = {"money": 0, "passed": True}
    return d


def is_land(b, v):
    return bool(b.active[v]) and not b.terrain[v] & (TERRAIN_LOCH | TERRAIN_PORT)


def pasture_chain(b, k):
    """k active pasture hexes, each a neighbor of an earlier one (BFS over neighbors)."""
    for start in range(b.n_hex):
        if not (is_land(b, start) and b.terrain[start] & TERRAIN_PASTURE):
            continue
        seen, queue, out = {start}, deque([start]), []
        while queue and len(out) < k:
            v = queue.popleft()
            out.append(v)
            for w in b.neighbor[v]:
                w = int(w)
                if w >= 0 and w not in seen and is_land(b, w) and b.terrain[w] & TERRAIN_PASTURE:
                    seen.add(w)
                    queue.append(w)
        if len(out) == k:
            return out
    raise AssertionError("no pasture chain")


def river_crossing(b):
    """(v, w): active pasture hexes adjacent across a river, and x a pasture neighbor of w
    that is not adjacent to v."""
    for a, c in b.river_pairs:
        for v, w in ((int(a), int(c)), (int(c), int(a))):
            if not (is_land(b, v) and is_land(b, w) and b.terrain[v] & b.terrain[w] & TERRAIN_PASTURE):
                continue
            for x in b.neighbor[w]:
                x = int(x)
                if x >= 0 and x != v and is_land(b, x) and b.terrain[x] & TERRAIN_PASTURE \
                        and x not in {int(y) for y in b.adjacent[v]}:
                    return v, w, x
    raise AssertionError("no river between pastures")


@pytest.fixture(scope="module")
def board():
    return Game.from_scenario(base_scenario()).board


def lab(b, v):
    return b.labels[v]


# ================================================================== R-3.1 trade
def test_R_3_1_buy_k_pays_k_times_price_and_raises_price_k():
    """R-3.1: buy k: pay k × current price, gain k, merchants to the buy space, price +k."""
    d = base_scenario()
    d["players"][0] = {"money": 50, "merchants": 3}
    g = mk(d)
    p0, k0 = price(g, "grain"), marker(g, "grain")
    do(g, "trade buy 3 grain")
    pd = pl(g)
    assert pd["money"] == 50 - 3 * p0
    assert pd["goods"]["grain"] == 3
    assert pd["merchants"] == 0 and pd["market"]["buy"] == {"grain": 3}
    assert marker(g, "grain") == k0 + 3 and price(g, "grain") == price_after(G["grain"], k0, 3)


def test_R_3_1_sell_k_gains_k_times_price_and_lowers_price_k():
    """R-3.1: sell k: gain k × current price, lose k goods, price −k."""
    d = base_scenario(market={"cheese": 12})
    d["players"][0] = {"money": 0, "merchants": 2, "goods": {"cheese": 3}}
    g = mk(d)
    do(g, "trade sell 2 cheese")
    pd = pl(g)
    assert pd["money"] == 24 and pd["goods"]["cheese"] == 1
    assert pd["market"]["sell"] == {"cheese": 2} and pd["merchants"] == 0
    assert price(g, "cheese") == 10


def test_R_3_1_mask_k_limited_by_merchants_money_and_goods():
    """R-3.1: k ≤ merchants in supply; buying needs k × price money; selling needs k goods."""
    d = base_scenario(market={"wool": 5, "bread": 8})
    d["players"][0] = {"money": 2 * 8 + 7, "merchants": 3, "goods": {"wool": 5, "milk": 1}}
    g = mk(d)
    names = set(mask_names(g))
    trades = {n for n in names if n.startswith("trade")}
    assert {"trade buy 1 wool", "trade buy 2 wool", "trade buy 3 wool"} <= trades
    assert "trade buy 4 wool" not in trades                     # only 3 merchants
    assert {"trade buy 1 bread", "trade buy 2 bread"} <= trades
    assert "trade buy 3 bread" not in trades                    # 24 > 23
    assert {"trade sell 1 wool", "trade sell 2 wool", "trade sell 3 wool"} <= trades
    assert "trade sell 4 wool" not in trades                    # merchants, not goods, limit
    assert "trade sell 1 milk" in trades and "trade sell 2 milk" not in trades
    assert not any(n.startswith("trade sell") and n.endswith(g) for n in trades
                   for g in ("grain", "bread", "cheese", "whisky"))
    d["players"][0]["merchants"] = 0
    assert not any(n.startswith("trade") for n in mask_names(mk(d)))


def test_R_3_1_buy_sell_exclusion_same_good_same_round():
    """R-3.1: never merchants on both the buy and the sell space of one good in a round;
    the other side of other goods, and the same side, stay open."""
    d = base_scenario()
    d["players"][0] = {"money": 100, "merchants": 3, "goods": {"wool": 3, "whisky": 2},
                       "market": {"buy": {"wool": 1}, "sell": {"whisky": 1}}}
    g = mk(d)
    names = set(mask_names(g))
    assert "trade buy 1 wool" in names and "trade sell 1 wool" not in names
    assert "trade sell 1 whisky" in names and "trade buy 1 whisky" not in names
    assert "trade buy 1 grain" in names
    # after stepping: having sold grain this round, buying grain is closed
    d = opponents_passed()
    d["players"][0] = {"money": 100, "merchants": 3, "goods": {"grain": 2}}
    g = mk(d)
    do(g, "trade sell 1 grain")
    assert g.current_player == 0 and g.context == "main action"
    names = set(mask_names(g))
    assert "trade buy 1 grain" not in names and "trade sell 1 grain" in names


def test_R_3_1_price_clamped_to_track():
    """R-3.1: the price moves k steps but stays on the track; the trade pays the price
    before the move."""
    hi, lo = int(RS.market.max[G["whisky"]]), int(RS.market.min[G["wool"]])
    d = base_scenario(market={"whisky": hi - 1, "wool": lo + 1})
    d["players"][0] = {"money": 100, "merchants": 6, "goods": {"wool": 3}}
    g = mk(d)
    do(g, "trade buy 3 whisky")
    assert pl(g)["money"] == 100 - 3 * (hi - 1) and price(g, "whisky") == hi
    d["players"][0] = {"money": 0, "merchants": 6, "goods": {"wool": 3}}
    g = mk(d)
    do(g, "trade sell 3 wool")
    assert pl(g)["money"] == 3 * (lo + 1) and price(g, "wool") == lo
    # at the top of the track a purchase is still possible; the price stays put
    d = base_scenario(market={"whisky": hi})
    d["players"][0] = {"money": hi, "merchants": 1}
    g = mk(d)
    do(g, "trade buy 1 whisky")
    assert pl(g)["money"] == 0 and price(g, "whisky") == hi


def test_R_3_1_merchants_stay_until_preparation():
    """R-3.1 / R-2.1: merchants stay on the market through later turns of the round and
    return to the supply at the next preparation."""
    d = opponents_passed()
    d["players"][0] = {"money": 50, "merchants": 2, "merchants_on_track": 5}
    g = mk(d)
    do(g, "trade buy 2 wool")
    do(g, "hire merchant")
    pd = pl(g)
    assert pd["merchants"] == 1 and pd["market"]["buy"] == {"wool": 2}
    do(g, "pass")
    pd = pl(g)
    assert g.round == 3 and pd["merchants"] == 3 and pd["market"]["buy"] == {}


def test_R_3_1_one_good_per_trade_action():
    """R-3.1: one good per Trade action: after trading, no further trade this turn."""
    d = base_scenario(ports={"A": "P5", "B": None, "C": None, "D": None})
    b = mk(d).board
    near = next(int(w) for w in b.adjacent[b.ports[0]] if w >= 0 and is_land(b, w))
    d["players"][0] = {"money": 50, "merchants": 4, "units": {lab(b, near): "lumberjack"
                       if b.terrain[near] & TERRAIN_FOREST else "miner" if b.terrain[near] & TERRAIN_MOUNTAIN
                       else "sheep"}}
    g = mk(d)
    do(g, "trade buy 1 wool")
    assert g.context == "after main action"
    assert not any(n.startswith("trade") for n in mask_names(g))


# ================================================================== R-3.2 obtain a contract
def test_R_3_2_round_1_gains_money_instead_of_paying():
    """R-3.2: in round 1 obtaining a contract gains £5; the contract goes to the box and
    its slot stays empty; the pile is untouched."""
    d = base_scenario(round=1, slots=[1, 2, 3, 4, 5, 6], pile=[7, 8])
    d["players"][0] = {"money": 0}
    g = mk(d)
    assert int(RS.export_board.contract_cost[0]) == -5          # rulebook: gain £5
    assert {f"obtain contract slot {i}" for i in range(6)} <= set(mask_names(g))
    do(g, "obtain contract slot 2")
    sc = g.to_scenario()
    assert sc["players"][0]["money"] == 5
    assert sc["players"][0]["contracts"][0] == 3
    assert sc["slots"] == [1, 2, None, 4, 5, 6] and sc["pile"] == [7, 8]


@pytest.mark.parametrize("rnd", [2, 3, 4, 5])
def test_R_3_2_later_rounds_pay_the_round_cost(rnd):
    """R-3.2: from round 2 the round's contract cost is paid; unaffordable -> not offered."""
    c = int(RS.export_board.contract_cost[rnd - 1])
    d = base_scenario(round=rnd, slots=[9, None, None, None, None, None], pile=[])
    d["players"][0] = {"money": c}
    g = mk(d)
    assert "obtain contract slot 0" in mask_names(g)
    do(g, "obtain contract slot 0")
    assert pl(g)["money"] == 0 and pl(g)["contracts"][0] == 9
    if c > 0:
        d["players"][0] = {"money": c - 1}
        assert "obtain contract slot 0" not in mask_names(mk(d))
    if rnd == 5:
        assert c == 15                                           # rulebook (Buchanan example)


def test_R_3_2_one_unfulfilled_contract_no_discard():
    """R-3.2: with an unfulfilled contract in the box no contract can be obtained, and
    there is no way to discard it."""
    d = base_scenario(slots=[1, 2, 3, 4, 5, 6])
    d["players"][0] = {"money": 50, "contracts": [12]}
    names = mask_names(mk(d))
    assert not any(n.startswith("obtain") for n in names)
    assert not any("discard" in n for n in names)
    assert "fulfill contract box 0" not in names                 # no whisky


def test_R_3_2_empty_slot_stays_empty_until_preparation():
    """R-3.2 / R-2.1: the taken slot is not offered again this round; it is refilled from
    the pile at the next preparation; slots that are empty are never offered."""
    d = base_scenario(3, slots=[1, 2, None, 4, 5, None], pile=[20, 21],
                      scoring_tiles=[None] * 5, turn_order=[0, 1, 2], next_turn_order=[2])
    d["players"][0] = {"money": 20}
    d["players"][1] = {"money": 20}
    d["players"][2] = {"money": 0, "passed": True}
    g = mk(d)
    assert {n for n in mask_names(g) if n.startswith("obtain")} == \
        {f"obtain contract slot {i}" for i in (0, 1, 3, 4)}
    do(g, "obtain contract slot 1")
    assert g.current_player == 1
    assert {n for n in mask_names(g) if n.startswith("obtain")} == \
        {f"obtain contract slot {i}" for i in (0, 3, 4)}
    do(g, "pass")
    do(g, "pass")
    sc = g.to_scenario()
    assert g.round == 3 and sc["slots"][:5] == [1, 20, 21, 4, 5] and sc["pile"] == []


# ================================================================== R-3.3 expand
def test_R_3_3_expand_pays_unit_plus_land_and_takes_board_unit(board):
    """R-3.3: expand onto an empty neighbor: pay unit cost + land cost; the unit leaves the
    player board."""
    v, w = pasture_chain(board, 2)
    d = base_scenario()
    d["players"][0] = {"money": 40, "units": {lab(board, v): "sheep"}}
    g = mk(d)
    do(g, f"expand cow @ {lab(board, w)}")
    pd = pl(g)
    assert pd["money"] == 40 - cost(g, "cow", lab(board, w))
    assert pd["units"][lab(board, w)] == "cow"
    assert board_left(g, 0, "cow") == int(RS.units.count[U["cow"]]) - 1


def test_R_3_3_level_0_offers_exactly_the_empty_neighbors(board):
    """R-3.3: without shipping, a hex is reachable iff it is a neighbor (adjacent, no river)
    of one of the player's units; occupied, inactive, loch and port hexes never."""
    chain = pasture_chain(board, 3)
    d = base_scenario()
    opp = next(int(w) for u in (chain[0], chain[2]) for w in board.neighbor[u]
               if w >= 0 and int(w) not in chain and is_land(board, int(w)))
    d["players"][0] = {"money": 1000, "units": {lab(board, chain[0]): "sheep",
                                                lab(board, chain[2]): "field"}}
    d["players"][1] = {"money": 0, "units": {lab(board, opp): "miner" if board.terrain[opp] & TERRAIN_MOUNTAIN
                                             else "lumberjack" if board.terrain[opp] & TERRAIN_FOREST
                                             else "cow"}}
    g = mk(d)
    occupied = {chain[0], chain[2], opp}
    expect = set()
    for u in (chain[0], chain[2]):
        for w in board.neighbor[u]:
            w = int(w)
            if w >= 0 and w not in occupied and is_land(board, w):
                expect.add(lab(board, w))
    got = {label for _, label in expansions(g)}
    assert got == expect and lab(board, opp) not in got


def test_R_3_3_river_needs_shipping_level_1(board):
    """R-3.3 / R-4: a hex across a river is not a neighbor: reachable only with shipping."""
    v, w, _ = river_crossing(board)
    d = base_scenario()
    d["players"][0] = {"money": 100, "units": {lab(board, v): "sheep"}}
    g = mk(d)
    assert ("sheep", lab(board, w)) not in expansions(g)
    d["players"][0]["shipping"] = 1
    assert ("sheep", lab(board, w)) in expansions(mk(d))


SPREAD = ("field", "cheese_dairy", "bakery", "distillery")   # 2 of each: none runs out


def spread_units(board, k=8):
    """k pasture hexes spread over the map (every few land hexes)."""
    past = [v for v in range(board.n_hex) if is_land(board, v) and board.terrain[v] & TERRAIN_PASTURE]
    return past[::max(1, len(past) // k)][:k]


def reach_of(board, own, level):
    return [v for v in range(board.n_hex) if is_land(board, v) and v not in own
            and min(board.ship_req[u, v] for u in own) <= level]


def test_R_3_3_terrain_limits_over_the_whole_reach(board):
    """R-3.3: pasture takes the six pasture units, forest lumberjacks, mountain miners; a
    mixed hex any unit fitting one of its terrains; checked on every reachable hex."""
    level = int(RS.economy.shipping_max_level)
    own = spread_units(board)
    d = base_scenario()
    d["players"][0] = {"money": 10000, "shipping": level,
                       "units": {lab(board, v): SPREAD[i % 4] for i, v in enumerate(own)}}
    g = mk(d)
    got = expansions(g)
    expect = {(u, lab(board, v)) for v in reach_of(board, own, level) for u in UNITS
              if board.terrain[v] & UNIT_TERRAIN[u]}
    assert got == expect
    kinds = {int(board.terrain[board.node(h)]) for _, h in got}
    assert {TERRAIN_PASTURE, TERRAIN_FOREST, TERRAIN_MOUNTAIN} <= kinds
    assert any(k.bit_count() >= 2 for k in kinds)           # a mixed hex is reached


def test_R_3_3_no_lumberjacks_left_no_forest_only_hex(board):
    """R-3.3 (rulebook): with every lumberjack deployed a forest-only hex takes nothing;
    mixed hexes still take the other units that fit."""
    level = int(RS.economy.shipping_max_level)
    forests = [v for v in range(board.n_hex) if is_land(board, v) and board.terrain[v] & TERRAIN_FOREST]
    own = forests[:4] + spread_units(board)
    d = base_scenario()
    d["players"][0] = {"money": 10000, "shipping": level,
                       "units": {lab(board, v): ("lumberjack" if i < 4 else SPREAD[i % 4])
                                 for i, v in enumerate(own)}}
    g = mk(d)
    got = expansions(g)
    reach = reach_of(board, own, level)
    expect = {(u, lab(board, v)) for v in reach for u in UNITS
              if u != "lumberjack" and board.terrain[v] & UNIT_TERRAIN[u]}
    assert got == expect
    assert any(board.terrain[v] == TERRAIN_FOREST for v in reach)      # such hexes were in reach
    assert not any(board.terrain[board.node(h)] == TERRAIN_FOREST for _, h in got)
    assert any(board.terrain[v] & TERRAIN_FOREST and board.terrain[v] != TERRAIN_FOREST for v in reach)


def test_R_3_3_must_afford_and_have_the_unit(board):
    """R-3.3: unit cost + land cost must be affordable; no unit left on the board -> none."""
    v, w = pasture_chain(board, 2)
    d = base_scenario()
    g0 = mk(d)
    need = cost(g0, "sheep", lab(board, w))
    d["players"][0] = {"money": need, "units": {lab(board, v): "cow"}}
    got = expansions(mk(d))
    assert ("sheep", lab(board, w)) in got
    assert ("distillery", lab(board, w)) not in got             # dearer unit
    d["players"][0]["money"] = need - 1
    assert ("sheep", lab(board, w)) not in expansions(mk(d))
    # all four sheep deployed: no sheep expansion anywhere
    chain = pasture_chain(board, 6)
    d["players"][0] = {"money": 1000, "units": {lab(board, x): "sheep" for x in chain[:4]}}
    got = expansions(mk(d))
    assert got and not any(u == "sheep" for u, _ in got)


# ================================================================== R-3.3.1 neighborhood bonus
def nb_setup(board, n=2, opp_units=("distillery",), money=100, merchants=5, **kw):
    """P0 sheep at x0; P1 units around target t (neighbors of t, not of x0's other side).
    Returns (scenario, target label)."""
    for t in range(board.n_hex):
        if not (is_land(board, t) and board.terrain[t] & TERRAIN_PASTURE):
            continue
        nbs = [int(w) for w in board.neighbor[t] if w >= 0 and is_land(board, int(w))
               and board.terrain[int(w)] & TERRAIN_PASTURE]
        if len(nbs) >= len(opp_units) + 1:
            src, rest = nbs[0], nbs[1:1 + len(opp_units)]
            d = base_scenario(n, **kw)
            d["players"][0] = {"money": money, "merchants": merchants,
                               "merchants_on_track": 7 - merchants,
                               "units": {lab(board, src): "sheep"}}
            d["players"][1] = {"money": 0, "units": {lab(board, w): u for w, u in zip(rest, opp_units)}}
            return d, lab(board, t)
    raise AssertionError("no hex with enough pasture neighbors")


def nb_offers(g):
    """{good: max k offered} in the neighborhood purchase context."""
    out = {}
    for n in mask_names(g):
        if n.startswith("neighborhood buy"):
            _, _, k, good = n.split()
            out[good] = max(out.get(good, 0), int(k))
    return out


def test_R_3_3_1_buy_goods_of_neighboring_opponent_units(board):
    """R-3.3.1: after expanding, for each neighboring opponent unit its good may be bought:
    up to the limit (4 with 2 players), price − £3 (processed) / − £2 (basic) each, one
    merchant per unit on the buy space, price +k; then the next good."""
    d, t = nb_setup(board, opp_units=("distillery", "cow"), market={"whisky": 10, "milk": 5})
    g = mk(d)
    money0 = 100 - cost(g, "sheep", t)
    do(g, f"expand sheep @ {t}")
    assert g.context == "neighborhood purchase" and g.current_player == 0
    limit = int(RS.economy.neighborhood_limit[2])
    assert limit == 4
    assert nb_offers(g) == {"whisky": limit, "milk": limit}
    assert "neighborhood done" in mask_names(g)
    disc_w, disc_m = int(RS.economy.neighborhood_discount[G["whisky"]]), \
        int(RS.economy.neighborhood_discount[G["milk"]])
    assert (disc_w, disc_m) == (3, 2)
    do(g, "neighborhood buy 2 whisky")
    pd = pl(g)
    assert pd["money"] == money0 - 2 * (10 - disc_w)
    assert pd["goods"]["whisky"] == 2 and pd["market"]["buy"] == {"whisky": 2}
    assert pd["merchants"] == 3 and price(g, "whisky") == 12
    assert g.context == "neighborhood purchase" and nb_offers(g) == {"milk": 3}   # 3 merchants
    do(g, "neighborhood buy 1 milk")
    pd = pl(g)
    assert pd["money"] == money0 - 2 * (10 - disc_w) - (5 - disc_m)
    # milk £5 is the first of two £5 steps: one unit bought leaves the price at £5
    assert price(g, "milk") == price_after(G["milk"], RS.market.step_of(G["milk"], 5), 1) == 5
    assert pd["market"]["buy"] == {"whisky": 2, "milk": 1}
    assert g.context != "neighborhood purchase"


def test_R_3_3_1_three_players_limit_3(board):
    """R-3.3.1: at most 3 of one good with 3–4 players."""
    d, t = nb_setup(board, n=3, opp_units=("bakery",))
    d["players"][0]["merchants"], d["players"][0]["merchants_on_track"] = 7, 0
    g = mk(d)
    do(g, f"expand sheep @ {t}")
    assert nb_offers(g) == {"bread": int(RS.economy.neighborhood_limit[3])} == {"bread": 3}


def test_R_3_3_1_limit_per_good_type_two_distilleries(board):
    """R-3.3.1 [interp]: two neighboring opponent distilleries still allow at most the
    limit of whisky, offered once."""
    d, t = nb_setup(board, opp_units=("distillery", "distillery"), merchants=7)
    g = mk(d)
    do(g, f"expand sheep @ {t}")
    assert nb_offers(g) == {"whisky": int(RS.economy.neighborhood_limit[2])}
    do(g, "neighborhood buy 1 whisky")
    assert g.context != "neighborhood purchase"
    assert pl(g)["goods"]["whisky"] == 1


def test_R_3_3_1_workers_and_own_units_give_no_bonus(board):
    """R-3.3.1: workers produce no good (no bonus); own units give no bonus."""
    d, t = nb_setup(board, opp_units=("field",))
    # the neighboring field is the player's own
    own = next(iter(d["players"][1]["units"]))
    d["players"][0]["units"][own] = "field"
    d["players"][1]["units"] = {}
    g = mk(d)
    do(g, f"expand sheep @ {t}")
    assert g.context != "neighborhood purchase"
    # opponent workers next to the target
    for v in range(board.n_hex):
        if not (is_land(board, v) and board.terrain[v] & TERRAIN_PASTURE):
            continue
        workers = [int(w) for w in board.neighbor[v] if w >= 0 and is_land(board, int(w))
                   and board.terrain[int(w)] & (TERRAIN_FOREST | TERRAIN_MOUNTAIN)
                   and not board.terrain[int(w)] & TERRAIN_PASTURE]
        src = [int(w) for w in board.neighbor[v] if w >= 0 and is_land(board, int(w))
               and board.terrain[int(w)] & TERRAIN_PASTURE]
        if workers and src:
            w = workers[0]
            d = base_scenario()
            d["players"][0] = {"money": 100, "merchants": 5, "units": {lab(board, src[0]): "sheep"}}
            unit = "lumberjack" if board.terrain[w] & TERRAIN_FOREST else "miner"
            d["players"][1] = {"money": 0, "units": {lab(board, w): unit}}
            g = mk(d)
            do(g, f"expand sheep @ {lab(board, v)}")
            assert g.context != "neighborhood purchase"
            return
    raise AssertionError("no pasture next to a worker-only hex")


def test_R_3_3_1_expanding_a_worker_also_gets_the_bonus(board):
    """R-3.3.1: the bonus depends on the neighbors of the hex, not on the unit placed: a
    lumberjack placed next to an opponent sheep may buy wool."""
    for t in range(board.n_hex):
        if not (is_land(board, t) and board.terrain[t] == TERRAIN_FOREST):
            continue
        past = [int(w) for w in board.neighbor[t] if w >= 0 and is_land(board, int(w))
                and board.terrain[int(w)] & TERRAIN_PASTURE]
        if len(past) >= 2:
            d = base_scenario(market={"wool": 5})
            d["players"][0] = {"money": 100, "merchants": 3, "units": {lab(board, past[0]): "cow"}}
            d["players"][1] = {"money": 0, "units": {lab(board, past[1]): "sheep"}}
            g = mk(d)
            do(g, f"expand lumberjack @ {lab(board, t)}")
            assert g.context == "neighborhood purchase" and nb_offers(g) == {"wool": 3}
            do(g, "neighborhood buy 3 wool")
            disc = int(RS.economy.neighborhood_discount[G["wool"]])
            assert pl(g)["money"] == 100 - cost(g, "lumberjack", lab(board, t)) - 3 * (5 - disc)
            assert price(g, "wool") == price_after(G["wool"], RS.market.step_of(G["wool"], 5), 3)
            return
    raise AssertionError("no forest hex between two pastures")


def test_R_3_3_1_river_blocks_the_bonus(board):
    """R-3.3.1: an opponent unit adjacent across a river is not a neighbor: no bonus."""
    v, w, x = river_crossing(board)      # w: target, v: opponent across the river, x: P0
    d = base_scenario()
    d["players"][0] = {"money": 100, "merchants": 5, "units": {lab(board, x): "sheep"}}
    d["players"][1] = {"money": 0, "units": {lab(board, v): "distillery"}}
    g = mk(d)
    do(g, f"expand sheep @ {lab(board, w)}")
    assert g.context != "neighborhood purchase"
    assert pl(g)["goods"]["whisky"] == 0


def test_R_3_3_1_needs_merchants_money_and_respects_exclusion(board):
    """R-3.3.1: one merchant per unit bought (k ≤ supply), enough money, and the R-3.1
    buy/sell exclusion; with nothing affordable the bonus is skipped."""
    d, t = nb_setup(board, opp_units=("cheese_dairy", "field"), merchants=2, market={"cheese": 9})
    g = mk(d)
    do(g, f"expand sheep @ {t}")
    assert nb_offers(g) == {"cheese": 2, "grain": 2}
    # sold grain this round: grain is closed
    d["players"][0]["market"] = {"sell": {"grain": 1}}
    d["players"][0]["merchants_on_track"] = 4
    g = mk(d)
    do(g, f"expand sheep @ {t}")
    assert nb_offers(g) == {"cheese": 2}
    # money for exactly one cheese after paying the expansion
    disc = int(RS.economy.neighborhood_discount[G["cheese"]])
    d, t = nb_setup(board, opp_units=("cheese_dairy",), market={"cheese": 9})
    d["players"][0]["money"] = cost(mk(d), "sheep", t) + (9 - disc)
    g = mk(d)
    do(g, f"expand sheep @ {t}")
    assert nb_offers(g) == {"cheese": 1}
    # no merchants: no purchase decision at all
    d, t = nb_setup(board, opp_units=("cheese_dairy",), merchants=0)
    g = mk(d)
    do(g, f"expand sheep @ {t}")
    assert g.context != "neighborhood purchase"


def test_R_3_3_1_only_immediately_after_the_expansion(board):
    """R-3.3.1: declining ends the bonus; it is not offered in a later turn."""
    d, t = nb_setup(board, opp_units=("bakery",), next_turn_order=[1])
    d["players"][1]["passed"] = True
    g = mk(d)
    do(g, f"expand sheep @ {t}")
    do(g, "neighborhood done")
    assert g.current_player == 0 and g.context == "main action"
    assert not any(n.startswith("neighborhood") for n in mask_names(g))
    assert pl(g)["goods"]["bread"] == 0 and pl(g)["merchants"] == 5


def test_R_3_3_1_purchase_merchants_close_the_sell_space(board):
    """R-3.3.1 / R-3.1: merchants of a neighborhood purchase sit on the buy space, so the
    player may not sell that good later in the round."""
    d, t = nb_setup(board, opp_units=("bakery",), next_turn_order=[1])
    d["players"][1]["passed"] = True
    d["players"][0]["goods"] = {"bread": 2, "wool": 1}
    g = mk(d)
    assert "trade sell 1 bread" in mask_names(g)
    do(g, f"expand sheep @ {t}")
    do(g, "neighborhood buy 1 bread")
    assert pl(g)["market"]["buy"] == {"bread": 1}
    assert g.current_player == 0 and g.context == "main action"
    names = set(mask_names(g))
    assert "trade sell 1 bread" not in names and "trade sell 1 wool" in names
    assert "trade buy 1 bread" in names


# ================================================================== R-3.3.2 structure bonus
def structure_setup(board, rnd=3, money=100, contracts=(), building="distillery", n_built=3,
                    pile=(30, 31, 32, 33, 34)):
    chain = pasture_chain(board, n_built + 1)
    d = opponents_passed(round=rnd, pile=list(pile), slots=[None] * 6)
    d["players"][0] = {"money": money, "contracts": list(contracts),
                       "units": {lab(board, v): building for v in chain[:n_built]}}
    return d, lab(board, chain[n_built])


def test_R_3_3_2_fourth_building_draw_three_keep_one(board):
    """R-3.3.2: the fourth distillery with an empty box draws 3 contracts; keeping one pays
    the round's contract cost; the others go under the pile; part of the Expand action."""
    d, t = structure_setup(board)
    g = mk(d)
    m0 = 100 - cost(g, "distillery", t)
    do(g, f"expand distillery @ {t}")
    assert g.context == "structure bonus" and g.current_player == 0
    assert set(mask_names(g)) == {"draw structure contracts", "decline structure bonus"}
    assert g.to_scenario()["pile"] == [30, 31, 32, 33, 34]      # optional: nothing drawn yet
    do(g, "draw structure contracts")
    draw = int(RS.export_board.structure_draw)
    assert draw == 3 and int(RS.export_board.structure_buildings) == 4
    assert set(mask_names(g)) == {f"keep drawn contract {i}" for i in range(draw)} | {"keep no contract"}
    assert g.to_scenario()["pile"] == [33, 34]
    do(g, "keep drawn contract 1")
    sc = g.to_scenario()
    assert sc["players"][0]["contracts"][0] == 31
    assert sc["players"][0]["money"] == m0 - int(RS.export_board.contract_cost[2])
    assert sc["pile"] == [33, 34, 30, 32]
    assert g.context == "main action" and g.current_player == 0     # the next turn


def test_R_3_3_2_keep_none_all_under_the_pile(board):
    """R-3.3.2: keeping none puts all three under the pile; money unchanged."""
    d, t = structure_setup(board)
    g = mk(d)
    do(g, f"expand distillery @ {t}")
    do(g, "draw structure contracts")
    m = pl(g)["money"]
    do(g, "keep no contract")
    assert g.to_scenario()["pile"] == [33, 34, 30, 31, 32]
    assert pl(g)["money"] == m and pl(g)["contracts"][0] is None


def test_R_3_3_2_round_1_keeping_gains_5(board):
    """R-3.3.2 / R-3.2: in round 1 the kept contract gains £5 like Obtain."""
    d, t = structure_setup(board, rnd=1)
    g = mk(d)
    do(g, f"expand distillery @ {t}")
    do(g, "draw structure contracts")
    m = pl(g)["money"]
    do(g, "keep drawn contract 0")
    assert pl(g)["money"] == m - int(RS.export_board.contract_cost[0]) == m + 5


def test_R_3_3_2_no_bonus_with_full_box_or_third_building(board):
    """R-3.3.2: no draw when the export box holds a contract, on a third building, or when
    the four buildings are of different types."""
    d, t = structure_setup(board, contracts=[12])
    g = mk(d)
    do(g, f"expand distillery @ {t}")
    assert g.context == "main action" and g.to_scenario()["pile"] == [30, 31, 32, 33, 34]
    d, t = structure_setup(board, n_built=2)
    g = mk(d)
    do(g, f"expand distillery @ {t}")
    assert g.context == "main action"
    d, t = structure_setup(board, building="bakery")
    g = mk(d)
    do(g, f"expand distillery @ {t}")                             # 3 bakeries + 1 distillery
    assert g.context == "main action"
    d, t = structure_setup(board, building="cheese_dairy")
    g = mk(d)
    do(g, f"expand cheese_dairy @ {t}")
    assert g.context == "structure bonus"


def test_R_3_3_2_cannot_afford_keep_only_none(board):
    """R-3.3.2: keeping pays the round's cost: if unaffordable only 'keep no contract'."""
    d, t = structure_setup(board, rnd=4)
    g = mk(d)
    c = int(RS.export_board.contract_cost[3])
    d["players"][0]["money"] = cost(g, "distillery", t) + c - 1
    g = mk(d)
    do(g, f"expand distillery @ {t}")
    assert g.context == "structure bonus"
    do(g, "draw structure contracts")
    assert mask_names(g) == ["keep no contract"]


def test_R_3_3_2_short_pile_draws_what_is_left(board):
    """R-3.3.2 (engine choice): with fewer than 3 contracts left all are drawn; with none
    there is no decision."""
    d, t = structure_setup(board, pile=(40, 41))
    g = mk(d)
    do(g, f"expand distillery @ {t}")
    do(g, "draw structure contracts")
    assert {n for n in mask_names(g) if n.startswith("keep drawn")} == \
        {"keep drawn contract 0", "keep drawn contract 1"}
    d, t = structure_setup(board, pile=())
    g = mk(d)
    do(g, f"expand distillery @ {t}")
    assert g.context == "main action"


def test_R_3_3_2_after_the_neighborhood_bonus(board):
    """R-3.3.2 / R-3.3.1 (engine order): neighborhood purchases come first, then the draw."""
    chain = pasture_chain(board, 5)
    d = opponents_passed(round=3, pile=[30, 31, 32], slots=[None] * 6)
    d["players"][0] = {"money": 100, "merchants": 2,
                       "units": {lab(board, v): "distillery" for v in chain[:3]}}
    # an opponent cow next to the fourth hex (and not on the chain)
    t = chain[3]
    opp = next(int(w) for w in board.neighbor[t] if w >= 0 and int(w) not in chain[:4]
           and is_land(board, int(w)) and board.terrain[int(w)] & TERRAIN_PASTURE)
    d["players"][1]["units"] = {lab(board, opp): "cow"}
    g = mk(d)
    do(g, f"expand distillery @ {lab(board, t)}")
    assert g.context == "neighborhood purchase"
    do(g, "neighborhood buy 1 milk")
    assert g.context == "structure bonus"


# ================================================================== R-3.4 shipping
def test_R_3_4_shipping_upgrade_costs_4_up_to_max():
    """R-3.4: pay £4, shipping level +1; not offered at the track's maximum or when poor."""
    c, top = int(RS.economy.shipping_cost), int(RS.economy.shipping_max_level)
    assert c == 4
    d = base_scenario()
    d["players"][0] = {"money": c, "shipping": 2}
    g = mk(d)
    assert "shipping upgrade" in mask_names(g)
    do(g, "shipping upgrade")
    assert pl(g)["money"] == 0 and pl(g)["shipping"] == 3
    d["players"][0] = {"money": c - 1}
    assert "shipping upgrade" not in mask_names(mk(d))
    d["players"][0] = {"money": 100, "shipping": top}
    assert "shipping upgrade" not in mask_names(mk(d))
    d["players"][0] = {"money": 100, "shipping": top - 1}
    assert "shipping upgrade" in mask_names(mk(d))


def test_R_3_4_shipping_extends_the_expansion_range(board):
    """R-3.4: the new level is used at once: a river hex becomes reachable next turn."""
    v, w, _ = river_crossing(board)
    d = opponents_passed()
    d["players"][0] = {"money": 100, "units": {lab(board, v): "sheep"}}
    g = mk(d)
    assert ("cow", lab(board, w)) not in expansions(g)
    do(g, "shipping upgrade")
    assert ("cow", lab(board, w)) in expansions(g)


# ================================================================== R-3.5 technology
def test_R_3_5_technology_upgrade_once_each_for_10():
    """R-3.5: pay £10 to flip the lumberjack or the miner tile, once each."""
    c = int(RS.economy.technology_cost)
    assert c == 10
    d = opponents_passed()
    d["players"][0] = {"money": 2 * c}
    g = mk(d)
    names = set(mask_names(g))
    assert {"technology upgrade lumberjack", "technology upgrade miner"} <= names
    do(g, "technology upgrade lumberjack")
    assert pl(g)["money"] == c and pl(g)["technology"] == {"lumberjack": True, "miner": False}
    names = set(mask_names(g))
    assert "technology upgrade lumberjack" not in names and "technology upgrade miner" in names
    do(g, "technology upgrade miner")
    assert pl(g)["technology"] == {"lumberjack": True, "miner": True}
    assert not any(n.startswith("technology") for n in mask_names(g))
    d["players"][0] = {"money": c - 1}
    assert not any(n.startswith("technology") for n in mask_names(mk(d)))


@pytest.mark.parametrize("tech", [False, True])
def test_R_3_5_upgraded_workers_earn_more(board, tech):
    """R-3.5 / R-6.1: lumberjacks earn £4 (£6 upgraded), miners £6 (£8 upgraded)."""
    forest = [v for v in range(board.n_hex) if is_land(board, v) and board.terrain[v] == TERRAIN_FOREST]
    mountain = [v for v in range(board.n_hex) if is_land(board, v) and board.terrain[v] == TERRAIN_MOUNTAIN]
    d = opponents_passed()
    d["players"][0] = {"money": 0, "technology": {"lumberjack": tech, "miner": tech},
                       "units": {lab(board, forest[0]): "lumberjack", lab(board, forest[1]): "lumberjack",
                                 lab(board, mountain[0]): "miner"}}
    g = mk(d)
    do(g, "pass")
    inc = RS.units.income_upgraded if tech else RS.units.income_base
    lj, mi = int(inc[U["lumberjack"]]), int(inc[U["miner"]])
    assert (lj, mi) == ((6, 8) if tech else (4, 6))
    bonus = int(RS.export_board.pass_bonus[2][1])
    assert pl(g)["money"] == bonus + 2 * lj + mi


# ================================================================== R-3.6 hire
def test_R_3_6_hire_merchant_for_4_until_track_empty():
    """R-3.6: pay £4, a merchant moves from the track to the supply; not when the track is
    empty or money is short."""
    c = int(RS.economy.hire_cost)
    assert c == 4
    d = base_scenario()
    d["players"][0] = {"money": c, "merchants": 2, "merchants_on_track": 1}
    g = mk(d)
    assert "hire merchant" in mask_names(g)
    do(g, "hire merchant")
    pd = pl(g)
    assert pd["money"] == 0 and pd["merchants"] == 3 and pd["merchants_on_track"] == 0
    d["players"][0] = {"money": 100, "merchants": 7, "merchants_on_track": 0}
    assert "hire merchant" not in mask_names(mk(d))
    d["players"][0] = {"money": c - 1}
    assert "hire merchant" not in mask_names(mk(d))


# ================================================================== R-3.7 fulfill
def test_R_3_7_fulfill_pays_goods_gains_rewards_box_empties():
    """R-3.7: pay the contract's goods, gain its money and imports; the contract counts as
    fulfilled and the box is empty (a new contract can be obtained next turn)."""
    c = contract(11)                         # 2 whisky -> 2 tobacco, 1 hops, £10
    assert (c["need_whisky"], c["gain_tobacco"], c["gain_hops"], c["gain_money"]) == (2, 2, 1, 10)
    d = opponents_passed(slots=[1, None, None, None, None, None])
    d["players"][0] = {"money": 0, "goods": {"whisky": 3, "wool": 1}, "contracts": [11]}
    g = mk(d)
    assert "obtain contract slot 0" not in mask_names(g)
    do(g, "fulfill contract box 0")
    pd = pl(g)
    assert pd["goods"]["whisky"] == 1 and pd["goods"]["wool"] == 1
    assert pd["money"] == c["gain_money"]        # tobacco track 0 -> 2 passes no mark
    assert pd["contracts"][0] is None and pd["fulfilled"] == [11]
    assert g.to_scenario()["import_track"]["tobacco"] == 2
    assert "obtain contract slot 0" in mask_names(g)
    d["players"][0]["goods"] = {"whisky": 1}
    assert "fulfill contract box 0" not in mask_names(mk(d))


def test_R_3_7_meat_by_slaughtering_chosen_animals(board):
    """R-3.7: beef is paid by slaughtering own cows on the map, chosen by the player; each
    returns to the player board and its hex becomes empty (others may expand there)."""
    c = contract(3)                          # 2 beef -> 2 sugar cane, 1 hops, £10
    assert (c["need_beef"], c["need_mutton"]) == (2, 0)
    chain = pasture_chain(board, 6)
    cows = [lab(board, v) for v in chain[:3]]
    d = opponents_passed()
    money = int(RS.units.cost[U["cow"]])     # enough for a cow after the contract's £10
    d["players"][0] = {"money": money, "contracts": [3],
                       "units": {cows[0]: "cow", cows[1]: "cow", cows[2]: "cow", lab(board, chain[3]): "sheep"}}
    g = mk(d)
    do(g, "fulfill contract box 0")
    assert g.context == "slaughter"
    assert set(mask_names(g)) == {f"select @ {h}" for h in cows}
    do(g, f"select @ {cows[2]}")
    assert set(mask_names(g)) == {f"select @ {h}" for h in cows[:2]}
    do(g, f"select @ {cows[0]}")
    pd = pl(g)
    assert set(pd["units"]) == {cows[1], lab(board, chain[3])}
    assert board_left(g, 0, "cow") == int(RS.units.count[U["cow"]]) - 1
    assert pd["fulfilled"] == [3] and pd["money"] == money + c["gain_money"]
    # the freed hex is empty again: the player may expand there
    assert ("cow", cows[0]) in expansions(g)
    # one cow is not enough for two beef (no port): not offered
    d["players"][0]["units"] = {cows[0]: "cow", lab(board, chain[3]): "sheep"}
    assert "fulfill contract box 0" not in mask_names(mk(d))


def test_R_3_7_mutton_from_sheep_only(board):
    """R-3.7: mutton is paid with sheep (cows are not offered)."""
    c = contract(33)                         # 3 bread, 1 mutton -> 4 sugar cane, 2 hops
    assert (c["need_bread"], c["need_mutton"], c["need_beef"]) == (3, 1, 0)
    chain = pasture_chain(board, 3)
    d = opponents_passed()
    d["players"][0] = {"money": 0, "goods": {"bread": 3}, "contracts": [33],
                       "units": {lab(board, chain[0]): "sheep", lab(board, chain[1]): "cow"}}
    g = mk(d)
    do(g, "fulfill contract box 0")
    assert mask_names(g) == [f"select @ {lab(board, chain[0])}"]
    do(g, f"select @ {lab(board, chain[0])}")
    pd = pl(g)
    assert pd["units"] == {lab(board, chain[1]): "cow"} and pd["goods"]["bread"] == 0
    d["players"][0]["units"] = {lab(board, chain[1]): "cow"}
    assert "fulfill contract box 0" not in mask_names(mk(d))


def test_R_3_7_beef_and_mutton_together(board):
    """R-3.7: a contract needing beef and mutton slaughters one cow and one sheep; after the
    cow only sheep are offered."""
    c = contract(46)                         # 2 wool, 1 beef, 1 mutton
    assert (c["need_wool"], c["need_beef"], c["need_mutton"]) == (2, 1, 1)
    chain = [lab(board, v) for v in pasture_chain(board, 4)]
    d = opponents_passed()
    d["players"][0] = {"money": 0, "goods": {"wool": 2}, "contracts": [46],
                       "units": {chain[0]: "cow", chain[1]: "cow", chain[2]: "sheep",
                                 chain[3]: "field"}}
    g = mk(d)
    do(g, "fulfill contract box 0")
    assert set(mask_names(g)) == {f"select @ {h}" for h in chain[:3]}
    do(g, f"select @ {chain[1]}")
    assert mask_names(g) == [f"select @ {chain[2]}"]
    do(g, f"select @ {chain[2]}")
    pd = pl(g)
    assert pd["units"] == {chain[0]: "cow", chain[3]: "field"} and pd["goods"]["wool"] == 0
    assert g.context in ("export bonus", "main action")
    d["players"][0]["units"] = {chain[0]: "cow", chain[1]: "cow"}     # no sheep
    assert "fulfill contract box 0" not in mask_names(mk(d))


# ================================================================== R-3.7.1 import track
def marks_paid(old, new):
    top = int(RS.export_board.import_track_length)
    new = min(new, top)
    return sum(int(RS.export_board.import_marked[p]) for p in range(old + 1, new + 1)) \
        * int(RS.export_board.import_money_per_mark)


@pytest.mark.parametrize("start", [0, 1, 2, 3, 5])
def test_R_3_7_1_import_token_pays_per_marked_space(start):
    """R-3.7.1: cotton gained moves the cotton token that many steps; each marked space
    reached or passed pays £1 (default marks at 3, 6, 9, …)."""
    c = contract(28)                         # 2 bread, 1 whisky -> 3 cotton, 2 hops
    assert (c["gain_cotton"], c["gain_hops"], c["gain_money"]) == (3, 2, 0)
    d = opponents_passed(import_track={"cotton": start, "tobacco": 4, "sugar_cane": 5})
    d["players"][0] = {"money": 0, "goods": {"bread": 2, "whisky": 1}, "contracts": [28]}
    g = mk(d)
    do(g, "fulfill contract box 0")
    sc = g.to_scenario()
    assert sc["import_track"] == {"cotton": start + 3, "tobacco": 4, "sugar_cane": 5}
    assert sc["players"][0]["money"] == marks_paid(start, start + 3)


def test_R_3_7_1_hops_not_tracked_and_track_end():
    """R-3.7.1: hops are not tracked; (engine choice) a token stops at the last space."""
    top = int(RS.export_board.import_track_length)
    d = opponents_passed(import_track={"cotton": top - 1, "tobacco": 0, "sugar_cane": 0})
    d["players"][0] = {"money": 0, "goods": {"bread": 2, "whisky": 1}, "contracts": [28]}
    g = mk(d)
    do(g, "fulfill contract box 0")
    sc = g.to_scenario()
    assert sc["import_track"] == {"cotton": top, "tobacco": 0, "sugar_cane": 0}
    assert sc["players"][0]["money"] == marks_paid(top - 1, top)


def test_R_3_7_1_static_imports_variant_no_track():
    """R-3.7.1 / R-9.3: with static import goods the tokens do not move and pay nothing."""
    d = opponents_passed(variant_static_imports=True)
    d["players"][0] = {"money": 0, "goods": {"bread": 2, "whisky": 1}, "contracts": [28]}
    g = mk(d)
    do(g, "fulfill contract box 0")
    sc = g.to_scenario()
    assert sc["import_track"] == {"cotton": 0, "tobacco": 0, "sugar_cane": 0}
    assert sc["players"][0]["money"] == 0 and sc["players"][0]["fulfilled"] == [28]


# ================================================================== R-3.7.2 export bonuses
def test_R_3_7_2_free_hex_pays_unit_cost_only(board):
    """R-3.7.2: a free hex is an immediate Expand paying the unit cost but no land cost;
    it may be declined [interp]."""
    c = contract(7)                          # 2 bread -> 2 cotton, £10, free hex
    assert (c["need_bread"], c["gain_money"], c["gain_free_hex"]) == (2, 10, 1)
    v, w = pasture_chain(board, 2)
    d = opponents_passed()
    d["players"][0] = {"money": 0, "goods": {"bread": 2}, "contracts": [7],
                       "units": {lab(board, v): "sheep"}}
    g = mk(d)
    do(g, "fulfill contract box 0")
    assert g.context == "export bonus"
    m = pl(g)["money"]
    assert m == c["gain_money"] + marks_paid(0, 2)
    names = set(mask_names(g))
    assert "decline free hex" in names
    assert {h for _, h in expansions(g)} <= {lab(board, x) for x in board.neighbor[v] if x >= 0}
    assert ("cow", lab(board, w)) in expansions(g)
    do(g, f"expand cow @ {lab(board, w)}")
    pd = pl(g)
    assert pd["money"] == m - int(RS.units.cost[U["cow"]])
    assert pd["units"][lab(board, w)] == "cow"
    assert g.context == "main action" and g.current_player == 0
    # declining
    g = mk(d)
    do(g, "fulfill contract box 0")
    do(g, "decline free hex")
    assert g.context == "main action" and len(pl(g)["units"]) == 1


def test_R_3_7_2_free_hex_affordable_without_land_cost(board):
    """R-3.7.2: on a free hex a unit is offered iff its unit cost alone is affordable, so a
    unit dearer than the money with the land cost is still placeable."""
    c = contract(7)
    v = pasture_chain(board, 1)[0]
    w = max((int(x) for x in board.neighbor[v] if x >= 0 and is_land(board, int(x))
             and board.terrain[int(x)] & TERRAIN_PASTURE), key=lambda x: board.land_cost[x])
    d = opponents_passed()
    d["players"][0] = {"money": 0, "goods": {"bread": 2}, "contracts": [7],
                       "units": {lab(board, v): "sheep"}}
    g = mk(d)
    do(g, "fulfill contract box 0")
    m = pl(g)["money"]
    assert g.context == "export bonus" and m == c["gain_money"] + marks_paid(0, c["gain_cotton"])
    for u in UNITS[:6]:
        assert ((u, lab(board, w)) in expansions(g)) == (int(RS.units.cost[U[u]]) <= m), u
    dear = [u for u in UNITS[:6] if int(RS.units.cost[U[u]]) <= m < cost(g, u, lab(board, w))]
    assert dear, "some unit is affordable only without the land cost"
    do(g, f"expand {dear[0]} @ {lab(board, w)}")
    assert pl(g)["money"] == m - int(RS.units.cost[U[dear[0]]])


def test_R_3_7_2_free_hex_triggers_neighborhood_bonus(board):
    """R-3.7.2: all Expand rules and bonuses apply to the free hex (neighborhood bonus)."""
    d, t = nb_setup(board, opp_units=("distillery",), next_turn_order=[1],
                    scoring_tiles=[None] * 5)
    d["players"][1]["passed"] = True
    d["players"][0].update(goods={"bread": 2}, contracts=[7], money=20)
    g = mk(d)
    do(g, "fulfill contract box 0")
    do(g, f"expand sheep @ {t}")
    assert g.context == "neighborhood purchase" and "whisky" in nb_offers(g)


def test_R_3_7_2_free_hex_triggers_structure_bonus(board):
    """R-3.7.2 / R-3.3.2: a fourth building placed as a free hex draws contracts (the box
    has just been emptied by the fulfilment)."""
    chain = pasture_chain(board, 4)
    d = opponents_passed(round=3, pile=[30, 31, 32], slots=[None] * 6)
    d["players"][0] = {"money": 20, "goods": {"bread": 2}, "contracts": [7],
                       "units": {lab(board, v): "bakery" for v in chain[:3]}}
    g = mk(d)
    do(g, "fulfill contract box 0")
    do(g, f"expand bakery @ {lab(board, chain[3])}")
    assert g.context == "structure bonus"


UPGRADE = 6          # contract 6: 3 wool -> 1 sugar cane, 1 hops, 1 upgrade bonus


def upgrade_game(money=0, **p0):
    assert contract(UPGRADE)["gain_upgrade"] == 1 and contract(UPGRADE)["need_wool"] == 3
    d = opponents_passed()
    d["players"][0] = {"money": money, "goods": {"wool": 3}, "contracts": [UPGRADE], **p0}
    g = mk(d)
    do(g, "fulfill contract box 0")
    return g


def test_R_3_7_2_upgrade_bonus_options():
    """R-3.7.2: one upgrade bonus: technology for £5, shipping free, hire free, or take back
    an own merchant from the market; declinable [interp]."""
    g = upgrade_game(money=5, market={"buy": {"grain": 1}}, merchants=1)
    assert g.context == "export bonus"
    assert set(mask_names(g)) == {"shipping upgrade", "technology upgrade lumberjack",
                                  "technology upgrade miner", "hire merchant",
                                  "retrieve merchant buy grain", "decline upgrade"}
    tb = int(RS.economy.technology_bonus_cost)
    assert tb == 5 and RS.economy.shipping_bonus_cost == 0 and RS.economy.hire_bonus_cost == 0
    for name, check in (
            ("shipping upgrade", lambda pd: pd["shipping"] == 1 and pd["money"] == 5),
            ("technology upgrade miner", lambda pd: pd["technology"]["miner"] and pd["money"] == 5 - tb),
            ("hire merchant", lambda pd: pd["merchants"] == 2 and pd["merchants_on_track"] == 4
             and pd["money"] == 5),
            ("retrieve merchant buy grain", lambda pd: pd["merchants"] == 2
             and pd["market"]["buy"] == {} and pd["merchants_on_track"] == 5),
            ("decline upgrade", lambda pd: pd["shipping"] == 0 and pd["merchants"] == 1)):
        g = upgrade_game(money=5, market={"buy": {"grain": 1}}, merchants=1)
        do(g, name)
        assert check(pl(g)), name
        assert g.context == "main action"


def test_R_3_7_2_upgrade_bonus_limits():
    """R-3.7.2: the £5 technology needs £5; hire needs a merchant on the track (else only
    the take-back); with no possible upgrade the bonus lapses."""
    g = upgrade_game(money=4)
    names = set(mask_names(g))
    assert not any(n.startswith("technology") for n in names)
    assert {"shipping upgrade", "hire merchant"} <= names
    g = upgrade_game(money=10, merchants=5, merchants_on_track=0, market={"sell": {"wool": 2}})
    names = set(mask_names(g))
    assert "hire merchant" not in names and "retrieve merchant sell wool" in names
    top = int(RS.economy.shipping_max_level)
    g = upgrade_game(money=10, merchants=7, merchants_on_track=0, shipping=top,
                     technology={"lumberjack": True, "miner": True})
    assert g.context == "main action" and pl(g)["fulfilled"] == [UPGRADE]


def test_R_3_7_2_several_upgrade_bonuses_repeat_or_differ():
    """R-3.7.2: several upgrade bonuses may be the same or different upgrades."""
    c = contract(10)                         # 4 cheese -> 4 cotton, £10, 2 upgrades
    assert (c["need_cheese"], c["gain_upgrade"], c["gain_money"]) == (4, 2, 10)
    d = opponents_passed()
    d["players"][0] = {"money": 0, "goods": {"cheese": 4}, "contracts": [10]}
    g = mk(d)
    do(g, "fulfill contract box 0")
    do(g, "shipping upgrade")
    assert g.context == "export bonus"
    do(g, "shipping upgrade")
    assert pl(g)["shipping"] == 2 and g.context == "main action"
    g = mk(d)
    do(g, "fulfill contract box 0")
    do(g, "technology upgrade lumberjack")
    do(g, "hire merchant")
    pd = pl(g)
    assert pd["technology"]["lumberjack"] and pd["merchants"] == 3
    assert pd["money"] == c["gain_money"] + marks_paid(0, 4) - int(RS.economy.technology_bonus_cost)


def test_R_3_7_2_free_hex_and_upgrade_in_any_order(board):
    """R-3.7.2: a free hex and an upgrade bonus are resolved in the order the player
    chooses: taking the free shipping first widens the free hex's reach."""
    v, w, _ = river_crossing(board)
    d = opponents_passed(context="export bonus",
                         pending={"free_hexes": 1, "upgrades": 1, "main_done": 1})
    d["players"][0] = {"money": 50, "units": {lab(board, v): "sheep"}}
    g = mk(d)
    names = set(mask_names(g))
    assert {"shipping upgrade", "decline free hex", "decline upgrade"} <= names
    assert ("cow", lab(board, w)) not in expansions(g)
    do(g, "shipping upgrade")
    assert g.context == "export bonus"
    assert ("cow", lab(board, w)) in expansions(g)
    do(g, f"expand cow @ {lab(board, w)}")
    pd = pl(g)
    assert pd["units"][lab(board, w)] == "cow" and pd["shipping"] == 1
    assert pd["money"] == 50 - int(RS.units.cost[U["cow"]])
    # the other order: the free hex first, then the upgrade
    g = mk(d)
    unit, label = min(expansions(g))
    do(g, f"expand {unit} @ {label}")
    assert pl(g)["units"][label] == unit
    assert g.context == "export bonus"
    assert not any(n.startswith("expand") for n in mask_names(g))
    do(g, "hire merchant")
    assert g.context == "main action"


# ================================================================== R-3.8 pass
def test_R_3_8_pass_order_bonus_and_next_turn_order():
    """R-3.8: a passing player takes the leftmost free position of next round's order and
    its pass bonus; the passing order is next round's turn order."""
    d = base_scenario(3, turn_order=[0, 1, 2], scoring_tiles=[None] * 5)
    for p in range(3):
        d["players"][p] = {"money": 10}
    g = mk(d)
    bonus = [int(x) for x in RS.export_board.pass_bonus[3]]
    assert bonus[0] == 16                                   # rulebook
    do(g, "hire merchant")        # P0
    do(g, "pass")                 # P1 first to pass
    assert g.to_scenario()["next_turn_order"] == [1] and pl(g, 1)["money"] == 10 + bonus[0]
    assert pl(g, 1)["passed"]
    do(g, "pass")                 # P2
    assert g.current_player == 0
    do(g, "pass")                 # P0 last
    sc = g.to_scenario()
    assert g.round == 3 and sc["turn_order"] == [1, 2, 0] and g.current_player == 1
    assert [pd["money"] for pd in sc["players"]] == [10 - 4 + bonus[2], 10 + bonus[0], 10 + bonus[1]]


@pytest.mark.parametrize("n", [2, 4])
def test_R_3_8_pass_bonus_by_position(n):
    """R-3.8: the i-th player to pass gets the i-th pass bonus of the n-player board."""
    d = base_scenario(n, turn_order=list(range(n))[::-1], current_player=n - 1,
                      scoring_tiles=[None] * 5)
    g = mk(d)
    for _ in range(n):
        do(g, "pass")
    bonus = [int(x) for x in RS.export_board.pass_bonus[n]]
    sc = g.to_scenario()
    assert sc["turn_order"] == list(range(n))[::-1]
    assert [pd["money"] for pd in sc["players"]] == [bonus[n - 1 - p] for p in range(n)]


def test_R_3_8_pass_always_legal_and_forced_when_nothing_else():
    """R-3.8: Pass is always offered; a player who can do nothing else must pass."""
    d = base_scenario()
    d["players"][0] = {"money": 0, "merchants": 0, "contracts": [12]}
    g = mk(d)
    assert mask_names(g) == ["pass"]
    d["players"][0] = {"money": 100, "merchants": 3}
    assert "pass" in mask_names(mk(d))


# ================================================================== R-3 mask cross-check
def reference_main_actions(g):
    """Main actions R-3 allows in the current position (ports off, no clans)."""
    sc = g.to_scenario()
    b = g.board
    p = g.current_player
    pd = sc["players"][p]
    money, level = pd["money"], pd["shipping"]
    out = {"pass"}
    for side in ("buy", "sell"):
        other = "sell" if side == "buy" else "buy"
        for good in GOODS:
            if pd["market"][other].get(good, 0):
                continue
            for k in range(1, 9):
                ok = pd["merchants"] >= k and (
                    money >= k * price(g, good) if side == "buy" else pd["goods"][good] >= k)
                if ok:
                    out.add(f"trade {side} {k} {good}")
    box_free = pd["contracts"][0] is None
    if box_free and money >= int(RS.export_board.contract_cost[sc["round"] - 1]):
        out |= {f"obtain contract slot {i}" for i, c in enumerate(sc["slots"]) if c is not None}
    occupied = {h for q in sc["players"] for h in q["units"]}
    own = [b.node(h) for h in pd["units"]]
    left = {u: int(RS.units.count[U[u]]) - list(pd["units"].values()).count(u) for u in UNITS}
    for v in range(b.n_hex):
        h = b.labels[v]
        if h in occupied or not is_land(b, v) or not own:
            continue
        if min(int(b.ship_req[o, v]) for o in own) > level:
            continue
        for u in UNITS:
            if left[u] > 0 and b.terrain[v] & UNIT_TERRAIN[u] and money >= cost(g, u, h):
                out.add(f"expand {u} @ {h}")
    if level < int(RS.economy.shipping_max_level) and money >= int(RS.economy.shipping_cost):
        out.add("shipping upgrade")
    for t in ("lumberjack", "miner"):
        if not pd["technology"][t] and money >= int(RS.economy.technology_cost):
            out.add(f"technology upgrade {t}")
    if pd["merchants_on_track"] > 0 and money >= int(RS.economy.hire_cost):
        out.add("hire merchant")
    if not box_free:
        c = contract(pd["contracts"][0])
        animals = list(pd["units"].values())
        if all(pd["goods"][k] >= c[f"need_{k}"] for k in ("wool", "bread", "cheese", "whisky")) \
                and animals.count("cow") >= c["need_beef"] and animals.count("sheep") >= c["need_mutton"]:
            out.add("fulfill contract box 0")
    return out


@pytest.mark.parametrize("n, seed", [(2, 1), (3, 2), (4, 3)])
def test_R_3_main_action_mask_matches_rules_reference(n, seed):
    """R-3 / R-2.2: along random games (no ports, no clans) the engine's main-action mask
    equals a direct reading of R-3.1–R-3.8 at every main-action decision."""
    import numpy as np

    from caledonia_env import GameConfig
    g = Game(GameConfig(num_players=n, seed=seed, ports=False, clans=None))
    rng = np.random.default_rng(seed)
    checked = 0
    while not g.is_terminal:
        if g.context == "main action":
            assert set(mask_names(g)) == reference_main_actions(g), (g.round, g.current_player)
            checked += 1
        acts = g.legal_actions()
        names = [g.describe_action(a) for a in acts]
        # favour progress-making actions over passing so games get rich positions
        weights = np.array([0.2 if nm == "pass" else 1.0 for nm in names])
        g.step(acts[rng.choice(len(acts), p=weights / weights.sum())])
    assert checked > 50
