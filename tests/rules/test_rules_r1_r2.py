"""Scenario tests for docs/rules.md R-1 (setup, no-clan game) and R-2 (round structure).

Rule ids covered: R-1.1 … R-1.9 (R-1.7 only the starting-tile part of the no-clan game;
the clan draft and R-1.10 auction belong to the clans issue), R-2, R-2.1, R-2.2.
Numbers that are ruleset data are read from ``game.ruleset``.
"""
import pytest
from conftest import base_scenario, mask_names

from caledonia_env import Game, GameConfig
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (TERRAIN_FOREST, TERRAIN_LOCH, TERRAIN_MOUNTAIN,
                                            TERRAIN_PASTURE, TERRAIN_PORT)
from caledonia_env.engine.market import market_price

MODULES = "ABCD"
UNIT_INDEX = {"sheep": 0, "cow": 1, "field": 2, "cheese_dairy": 3, "bakery": 4,
              "distillery": 5, "lumberjack": 6, "miner": 7}
PLACE_TERRAIN = {"lumberjack": TERRAIN_FOREST, "miner": TERRAIN_MOUNTAIN}


def players(g):
    return g.to_scenario()["players"]


def do(g, name):
    g.step(g.parse_action(name))


def finish_picks(g):
    """Take the first offered starting tile until the worker placement begins."""
    while g.context == "starting pick":
        g.step(g.legal_actions()[0])


def finish_setup(g):
    finish_picks(g)
    while g.context == "starting worker":
        g.step(g.legal_actions()[0])


def parse_place(name):
    """'expand miner @ C1-07' -> ('miner', 'C1-07')."""
    _, unit, _, label = name.split()
    return unit, label


# ------------------------------------------------------------------ map
def test_R_1_1_one_random_side_per_module_in_order():
    """R-1.1: one random side (1 or 2) of each module A–D, in order; several of the 16
    configurations occur over seeds; an explicit map is honoured."""
    seen = set()
    for seed in range(40):
        m = Game(GameConfig(num_players=4, seed=seed)).map
        assert len(m) == 4
        for side, module in zip(m, MODULES):
            assert side in (f"{module}1", f"{module}2")
        seen.add(tuple(m))
    assert len(seen) >= 8
    g = Game(GameConfig(num_players=4, seed=3, map="A2,B1,C2,D1"))
    assert tuple(g.map) == ("A2", "B1", "C2", "D1")
    assert g.board.config == ("A2", "B1", "C2", "D1")


def test_R_1_1_two_players_misted_hexes_inactive_lochs_active():
    """R-1.1: with 2 players misted land hexes are off the map (never expanded onto);
    lochs stay active; with 3–4 players every hex is active."""
    g2 = Game.from_scenario(base_scenario(2))
    g4 = Game.from_scenario(base_scenario(4))
    b2, b4 = g2.board, g4.board
    land = TERRAIN_PASTURE | TERRAIN_FOREST | TERRAIN_MOUNTAIN
    inactive = [v for v in range(b2.n_hex) if not b2.active[v]]
    assert inactive, "the 2-player map has misted hexes"
    assert all(b2.terrain[v] & land and not b2.terrain[v] & TERRAIN_LOCH for v in inactive)
    assert all(b2.active[v] for v in range(b2.n_nodes) if b2.terrain[v] & (TERRAIN_LOCH | TERRAIN_PORT))
    assert all(b4.active[v] for v in range(b4.n_nodes))
    # a misted pasture hex next to an active pasture hex: offered only in the 4-player game
    target = source = None
    for v in inactive:
        if b2.terrain[v] & TERRAIN_PASTURE:
            for w in b2.neighbor[v]:
                if w >= 0 and b2.active[w] and b2.terrain[w] & TERRAIN_PASTURE \
                        and not b2.terrain[w] & (TERRAIN_LOCH | TERRAIN_PORT):
                    target, source = v, int(w)
                    break
        if target is not None:
            break
    assert target is not None
    lab_t, lab_s = b2.labels[target], b2.labels[source]
    for n, expect in ((2, False), (4, True)):
        d = base_scenario(n)
        d["players"][0] = {"money": 100, "units": {lab_s: "sheep"}}
        g = Game.from_scenario(d)
        assert (f"expand cow @ {lab_t}" in mask_names(g)) is expect


def test_R_1_1_two_players_starting_workers_avoid_misted_hexes():
    """R-1.1 / R-1.8: starting workers are never offered a misted hex with 2 players."""
    g = Game(GameConfig(num_players=2, seed=4))
    finish_picks(g)
    assert g.context == "starting worker"
    b = g.board
    offered = {parse_place(n)[1] for n in mask_names(g)}
    assert offered
    assert all(b.active[b.node(lab)] for lab in offered)


# ------------------------------------------------------------------ ports
def test_R_1_2_four_distinct_port_tiles_from_the_pool():
    """R-1.2: 4 different port tiles from the pool (the optional Kickstarter tile only when
    enabled), one per corner, drawn at random; none with ports switched off."""
    optional = {f"P{i + 1}" for i, o in enumerate(Game(GameConfig()).ruleset.ports.optional) if o}
    assert optional == {"P9"}
    draws = set()
    for seed in range(30):
        ports = Game(GameConfig(num_players=3, seed=seed)).to_scenario()["ports"]
        tiles = [ports[c] for c in MODULES]
        assert None not in tiles and len(set(tiles)) == 4
        assert not set(tiles) & optional
        draws.add(tuple(tiles))
    assert len(draws) >= 20
    with_ks = set()
    for seed in range(30):
        ports = Game(GameConfig(num_players=3, seed=seed, kickstarter_tiles=True)).to_scenario()["ports"]
        with_ks |= set(ports.values())
    assert "P9" in with_ks
    off = Game(GameConfig(num_players=3, seed=0, ports=False)).to_scenario()["ports"]
    assert set(off.values()) == {None}


def test_R_1_2_port_position_depends_on_player_count():
    """R-1.2: each corner's port sits at the 1–2-player or the 3–4-player position; with
    2 players it touches at least one active hex."""
    b2 = Game.from_scenario(base_scenario(2)).board
    b3 = Game.from_scenario(base_scenario(3)).board
    b4 = Game.from_scenario(base_scenario(4)).board
    for c in range(4):
        touch = [{b.labels[w] for w in b.adjacent[b.ports[c]] if w >= 0} for b in (b2, b3, b4)]
        assert touch[1] == touch[2]
        assert touch[0] != touch[1]
        assert any(b2.active[b2.node(lab)] for lab in touch[0])


# ------------------------------------------------------------------ market
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_R_1_3_market_starts_at_the_sourced_start_steps(n):
    """R-1.3: every marker starts on the circled step of the market side for n players: the
    printed tracks' step 3 (source PHP): wool £4, grain £5, milk £5 (the publisher's digital
    Automa's milk start too), bread £10, cheese £10, whisky £11."""
    g = Game(GameConfig(num_players=n, solo=n == 1, seed=n))
    m = g.ruleset.market
    assert m.start_steps(n).tolist() == [3] * 6
    assert m.start_prices(n).tolist() == [4, 5, 5, 10, 10, 11]
    s, T = g.state, g.tables
    assert [int(market_price(s, T, i)) for i in range(6)] == [4, 5, 5, 10, 10, 11]
    assert [int(s[L.S_PRICE_STEP + i] - T[L.T_STEP_LO + i]) for i in range(6)] == [3] * 6


# ------------------------------------------------------------------ R-1.4 export board
@pytest.mark.parametrize("n", [2, 3, 4])
def test_R_1_4_contract_slots_and_shuffled_pile(n):
    """R-1.4: every active slot shows one face-up contract (3 players leave one empty), the
    rest forms the face-down pile; all contracts used once; the order is random."""
    rs = Game(GameConfig(num_players=n)).ruleset
    ids = sorted(int(x) for x in rs.contracts.ids)
    n_slots = int(rs.export_board.slots[n])
    if n == 3:
        assert n_slots == int(rs.export_board.slots[4]) - 1
    orders = set()
    for seed in range(6):
        sc = Game(GameConfig(num_players=n, seed=seed)).to_scenario()
        slots = sc["slots"]
        assert all(c is not None for c in slots[:n_slots])
        assert all(c is None for c in slots[n_slots:])
        face_up = slots[:n_slots]
        assert sorted(face_up + sc["pile"]) == ids
        orders.add(tuple(face_up + sc["pile"]))
    assert len(orders) == 6


def test_R_1_4_five_scoring_tiles_random_order():
    """R-1.4: five different scoring tiles of the pool, one per round, in random order;
    none when the variant switches them off."""
    rs = Game(GameConfig()).ruleset
    optional = {f"T{i + 1}" for i, o in enumerate(rs.scoring_tiles.optional) if o}
    seen = set()
    for seed in range(20):
        tiles = Game(GameConfig(num_players=4, seed=seed)).to_scenario()["scoring_tiles"]
        assert len(tiles) == rs.setup.rounds == 5
        assert None not in tiles and len(set(tiles)) == 5
        assert not set(tiles) & optional
        seen.add(tuple(tiles))
    assert len(seen) >= 15
    off = Game(GameConfig(num_players=4, seed=0, scoring_tiles=False)).to_scenario()
    assert off["scoring_tiles"] == [None] * 5


# ------------------------------------------------------------------ player material
@pytest.mark.parametrize("n", [2, 4])
def test_R_1_5_starting_player_material(n):
    """R-1.5: 4 of each unit (and 4 + 4 workers) on the board, 2 merchants in supply and 5
    on the track, shipping 0, technology not upgraded, one empty export box, no goods."""
    g = Game(GameConfig(num_players=n, seed=1))
    rs = g.ruleset
    assert [int(x) for x in rs.units.count] == [4] * 8
    assert rs.economy.merchants_total == 7
    for pd in players(g):
        assert pd["units"] == {}
        assert pd["merchants"] == 2 and pd["merchants_on_track"] == 5
        assert pd["shipping"] == 0
        assert pd["technology"] == {"lumberjack": False, "miner": False}
        assert pd["contracts"] == [None, None]
        assert pd["fulfilled"] == [] and pd["ports_used"] == []
        assert set(pd["goods"].values()) == {0} and pd["money"] == 0
    # every unit type can be placed 4 times: the board holds count[u] of each
    import caledonia_env.engine.layout as L
    for p in range(n):
        poff = L.S_PLAYERS + p * L.P_SIZE
        assert list(g.state[poff + L.P_BOARD:poff + L.P_BOARD + 8]) == [int(x) for x in rs.units.count]


# ------------------------------------------------------------------ first player
def test_R_1_6_random_first_player_then_clockwise():
    """R-1.6: a random first player, then clockwise; ``first_player`` fixes it."""
    firsts = set()
    for seed in range(30):
        order = Game(GameConfig(num_players=4, seed=seed)).to_scenario()["turn_order"]
        assert order == [(order[0] + i) % 4 for i in range(4)]
        firsts.add(order[0])
    assert firsts == {0, 1, 2, 3}
    g = Game(GameConfig(num_players=3, seed=0, first_player=2))
    assert g.to_scenario()["turn_order"] == [2, 0, 1]


# ------------------------------------------------------------------ starting tiles (no clans)
@pytest.mark.parametrize("n", [2, 3, 4])
def test_R_1_7_starting_tiles_chosen_in_reverse_turn_order(n):
    """R-1.7 (no-clan part): players + 1 starting tiles are offered; players choose in
    reverse turn order, so the first player chooses last, from two."""
    g = Game(GameConfig(num_players=n, seed=11, first_player=1))
    order = g.to_scenario()["turn_order"]
    assert g.context == "starting pick"
    assert len(g.legal_actions()) == n + 1
    pickers = []
    while g.context == "starting pick":
        pickers.append(g.current_player)
        offered = len(g.legal_actions())
        assert offered == n + 1 - len(pickers) + 1
        g.step(g.legal_actions()[-1])
    assert pickers == order[::-1]
    assert offered == 2                                  # the first player's choice
    tiles = [pd["start_tile"] for pd in players(g)]
    assert None not in tiles and len(set(tiles)) == n


@pytest.mark.parametrize("n", [2, 3, 4])
def test_R_1_9_no_clans_tile_goods_money_plus_seat_money(n):
    """R-1.9: without clans each player gains their starting tile's money and goods plus
    the seat money (first £0, second £2, third £4, fourth £6)."""
    g = Game(GameConfig(num_players=n, seed=7 + n, clans=None))
    rs = g.ruleset
    seat_money = [int(x) for x in rs.setup.no_clans_seat_money]
    assert seat_money == [0, 2, 4, 6]                  # rulebook
    order = g.to_scenario()["turn_order"]
    finish_picks(g)
    goods_names = ("wool", "grain", "milk", "bread", "cheese", "whisky")
    for p, pd in enumerate(players(g)):
        tile = int(pd["start_tile"][1:]) - 1
        seat = order.index(p)
        assert pd["money"] == int(rs.starting_tiles.money[tile]) + seat_money[seat]
        assert [pd["goods"][k] for k in goods_names] == [int(x) for x in rs.starting_tiles.goods[tile]]


# ------------------------------------------------------------------ starting workers
def expected_worker_hexes(g, money):
    """Every empty active hex where a lumberjack (forest) or miner (mountain) fits and is
    affordable: (unit, label) pairs."""
    b, rs = g.board, g.ruleset
    occupied = set()
    for pd in players(g):
        occupied |= set(pd["units"])
    out = set()
    for v in range(b.n_hex):
        if not b.active[v] or b.terrain[v] & (TERRAIN_LOCH | TERRAIN_PORT) or b.labels[v] in occupied:
            continue
        for unit, bit in PLACE_TERRAIN.items():
            cost = int(rs.units.cost[UNIT_INDEX[unit]]) + int(b.land_cost[v])
            if b.terrain[v] & bit and money >= cost:
                out.add((unit, b.labels[v]))
    return out


def test_R_1_8_starting_workers_in_order_then_reverse_paid_one_per_hex():
    """R-1.8: in turn order one worker each, then in reverse turn order a second; lumberjack
    on forest, miner on mountain, any empty hex (the second need not be adjacent to the
    first); each pays worker cost + land cost; a hex holds one unit."""
    g = Game(GameConfig(num_players=3, seed=21, first_player=1))
    order = g.to_scenario()["turn_order"]
    finish_picks(g)
    b, rs = g.board, g.ruleset
    placers, firsts = [], {}
    while g.context == "starting worker":
        p = g.current_player
        placers.append(p)
        before = players(g)[p]
        offered = {parse_place(n) for n in mask_names(g)}
        assert offered == expected_worker_hexes(g, before["money"])
        # take the most expensive offer to make the payment visible
        unit, label = max(offered, key=lambda ul: (b.land_cost[b.node(ul[1])], ul))
        if p in firsts:       # second worker: non-adjacent hexes are offered too
            far = [lab for _, lab in offered
                   if b.node(lab) not in {int(w) for w in b.adjacent[b.node(firsts[p])]}]
            assert far
        do(g, f"expand {unit} @ {label}")
        after = players(g)[p]
        cost = int(rs.units.cost[UNIT_INDEX[unit]]) + int(b.land_cost[b.node(label)])
        assert after["money"] == before["money"] - cost
        assert after["units"][label] == unit
        firsts.setdefault(p, label)
    assert placers == order + order[::-1]
    units = [lab for pd in players(g) for lab in pd["units"]]
    assert len(units) == len(set(units)) == 6
    assert g.context == "main action" and g.current_player == order[0] and g.round == 1


def test_R_1_8_starting_worker_must_be_affordable():
    """R-1.8: a starting worker is offered only where its cost plus land cost is affordable."""
    d = base_scenario(2, round=1, phase="setup_workers", context="starting worker")
    g0 = Game(GameConfig(num_players=2, map=d["map"]))   # £0 has no worker: not a position
    rs = g0.ruleset
    b = g0.board
    cheapest = min(int(b.land_cost[v]) for v in range(b.n_hex)
                   if b.active[v] and b.terrain[v] & TERRAIN_FOREST)
    money = int(rs.units.cost[UNIT_INDEX["lumberjack"]]) + cheapest
    assert money < int(rs.units.cost[UNIT_INDEX["miner"]]) + 1
    d["players"][0] = {"money": money}
    g = Game.from_scenario(d)
    offered = {parse_place(n) for n in mask_names(g)}
    assert offered == expected_worker_hexes(g, money)
    assert offered and all(u == "lumberjack" and b.land_cost[b.node(lab)] == cheapest
                           for u, lab in offered)


# ------------------------------------------------------------------ R-2 round structure
def drive(g, on_main="pass"):
    """Play one decision: pass / end turn / process nothing; setup takes the first option."""
    ctx = g.context
    if ctx == "main action":
        do(g, on_main)
    elif ctx == "after main action":
        do(g, "end turn")
    elif ctx == "production":
        acts = g.legal_actions()
        g.step(acts[0])
    else:
        g.step(g.legal_actions()[0])


def test_R_2_five_rounds_then_final_scoring():
    """R-2: five rounds (actions, production with worker income, scoring), then the game
    is over (R-7); round 1 is followed by rounds 2..5 in turn."""
    g = Game(GameConfig(num_players=2, seed=2, scoring_tiles=False))
    finish_setup(g)
    rs = g.ruleset
    bonus = [int(x) for x in rs.export_board.pass_bonus[2]]
    rounds_seen = []
    while not g.is_terminal:
        assert g.context == "main action"
        r = g.round
        rounds_seen.append(r)
        start = players(g)
        income = []
        for pd in start:
            inc = 0
            for unit in pd["units"].values():
                k = UNIT_INDEX[unit]
                inc += int(rs.units.income_base[k])
            income.append(inc)
        passers = []
        while g.round == r and not g.is_terminal:
            if g.context == "main action":
                passers.append(g.current_player)
            drive(g)
        if g.is_terminal:
            break
        end = players(g)
        for p in range(2):
            assert end[p]["money"] == start[p]["money"] + bonus[passers.index(p)] + income[p]
    assert rounds_seen == [1, 2, 3, 4, 5]
    assert g.round == rs.setup.rounds == 5
    assert g.legal_actions().size == 0


def test_R_2_scoring_after_production(hexes):
    """R-2: phase 3 (production) precedes phase 4 (scoring): the round's basic-goods tile
    counts the wool just produced."""
    d = base_scenario(2, round=2, scoring_tiles=[None, "T1", None, None, None],
                      next_turn_order=[1], turn_order=[0, 1])
    d["players"][0] = {"money": 0, "units": {hexes.label(hexes.land(TERRAIN_PASTURE)[0]): "sheep"}}
    d["players"][1] = {"money": 0, "passed": True}
    g = Game.from_scenario(d)
    rs = g.ruleset
    do(g, "pass")
    t1 = 0
    assert rs.scoring_tiles.kind[t1] == 0 and rs.scoring_tiles.per[t1] == 1   # basic goods
    pd = players(g)[0]
    assert pd["goods"]["wool"] == int(rs.units.output[0]) == 1
    assert pd["glory"] == int(rs.scoring_tiles.glory[t1]) * 1
    assert g.round == 3


def test_R_2_1_preparation_refills_returns_merchants_new_order():
    """R-2.1: after round 2, preparation of round 3 refills the empty slots from the top of
    the pile, returns every merchant on the market to its owner's supply, and the passing
    order becomes the turn order; the previous scoring tile no longer scores."""
    d = base_scenario(3, round=2, turn_order=[0, 1, 2], next_turn_order=[2, 1],
                      slots=[1, None, 3, None, 5, None], pile=[10, 11, 12, 13],
                      scoring_tiles=["T1", None, "T1", None, None])
    d["players"][0] = {"money": 10, "merchants": 1, "goods": {"wool": 3},
                       "market": {"buy": {"wool": 2}, "sell": {"whisky": 1}}}
    d["players"][1] = {"money": 0, "merchants": 0, "market": {"sell": {"grain": 2}}, "passed": True}
    d["players"][2] = {"money": 0, "passed": True}
    g = Game.from_scenario(d)
    rs = g.ruleset
    do(g, "pass")
    assert g.round == 3 and g.context == "main action"
    sc = g.to_scenario()
    n_slots = int(rs.export_board.slots[3])
    pile = [10, 11, 12, 13]
    expect = [c if c is not None else pile.pop(0)
              for c in [1, None, 3, None, 5, None][:n_slots]] + [None] * (6 - n_slots)
    assert sc["slots"] == expect and expect[1] == 10 and expect[3] == 11
    assert sc["pile"] == pile
    p0, p1 = sc["players"][0], sc["players"][1]
    assert p0["merchants"] == 4 and p0["market"] == {"buy": {}, "sell": {}}
    assert p1["merchants"] == 2 and p1["market"] == {"buy": {}, "sell": {}}
    assert sc["turn_order"] == [2, 1, 0] and g.current_player == 2
    assert p0["glory"] == 0          # round 2 had no tile; round 1's T1 does not score again
    assert not any(pd["passed"] for pd in sc["players"])


def test_R_2_1_preparation_skipped_in_round_1():
    """R-2.1: no preparation before round 1: the face-up contracts are the setup's."""
    g = Game(GameConfig(num_players=2, seed=8))
    slots = g.to_scenario()["slots"]
    pile = g.to_scenario()["pile"]
    finish_setup(g)
    assert g.round == 1
    sc = g.to_scenario()
    assert sc["slots"] == slots and sc["pile"] == pile


def test_R_2_2_turn_order_skips_passed_players():
    """R-2.2: turns go round in turn order; players who passed are skipped."""
    d = base_scenario(3, turn_order=[2, 0, 1], current_player=2, next_turn_order=[1])
    for p in range(3):
        d["players"][p] = {"money": 50}
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)
    seq = []
    for _ in range(4):
        seq.append(g.current_player)
        do(g, "hire merchant")
    assert seq == [2, 0, 2, 0]
    assert "hire merchant" in mask_names(g)


def test_R_2_2_actions_repeatable_pass_ends_participation():
    """R-2.2: exactly one main action per turn; every action but Pass may be repeated in
    later turns; after passing the player gets no more turns this round."""
    d = base_scenario(2, scoring_tiles=[None] * 5, next_turn_order=[1])
    d["players"][0] = {"money": 100, "goods": {"wool": 4}, "merchants": 2}   # + 5 on the track
    d["players"][1] = {"money": 0, "passed": True}
    g = Game.from_scenario(d)
    for name in ("hire merchant", "hire merchant", "shipping upgrade", "shipping upgrade",
                 "trade sell 1 wool", "trade sell 1 wool"):
        assert g.current_player == 0 and g.context == "main action"
        do(g, name)
        # one main action per turn: nothing but the next turn's main action follows
        assert g.context == "main action" and g.current_player == 0
    pd = players(g)[0]
    assert pd["shipping"] == 2 and pd["merchants_on_track"] == 3
    assert pd["market"]["sell"] == {"wool": 2}
    do(g, "pass")
    assert g.round == 3             # both passed: the round is over


def test_R_2_2_one_main_action_then_only_ports_or_end_turn():
    """R-2.2 / R-5: after the main action only free port actions or 'end turn' remain."""
    d = base_scenario(2, ports={"A": "P5", "B": None, "C": None, "D": None})
    g0 = Game.from_scenario(d)
    b = g0.board
    port_hex = next(b.labels[w] for w in b.adjacent[b.ports[0]]
                if w >= 0 and b.terrain[w] & TERRAIN_PASTURE and b.active[w])
    d["players"][0] = {"money": 50, "units": {port_hex: "sheep"}}
    d["players"][1] = {"money": 50}
    g = Game.from_scenario(d)
    do(g, "hire merchant")
    assert g.context == "after main action" and g.current_player == 0
    assert mask_names(g) == ["end turn", "port A (P5)"]
    do(g, "end turn")
    assert g.current_player == 1 and g.context == "main action"
