"""Scenario tests for R-4 (shipping range) and R-5 (port bonus tiles P1-P9).

Every test names the rule id it checks. Positions are built with
``Game.from_scenario`` on the 2-player map A1,B1,C1,D1 unless stated; numbers
that are ruleset data are read from ``game.ruleset``. Hexes used below (2-player
board): A1-03 pasture next to port-A; A1-07 pasture, two lochs-steps from port-A
(A1-02); C1-31 pasture next to port-C; D1-11 pasture next to port-D; A1-07|A1-12
and A1-06|A1-12 share a river; A1-17 touches no loch.
"""
from collections import deque
from dataclasses import replace

import numpy as np
import pytest
from conftest import base_scenario, mask_names

from caledonia_env import Game
from caledonia_env.game import Static
from caledonia_env.data.names import PORT_PARAMS, PORTS, UNITS
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import TERRAIN_LOCH, TERRAIN_PASTURE, TERRAIN_PORT
from caledonia_env.engine.market import market_price

NO_PORTS = {"A": None, "B": None, "C": None, "D": None}


# ----------------------------------------------------------------- helpers
def pf(game, p, field, n=1):
    """Player p's state field (layout offset ``field``)."""
    off = L.S_PLAYERS + p * L.P_SIZE + field
    v = game.state[off:off + n]
    return int(v[0]) if n == 1 else [int(x) for x in v]


def goods(game, p):
    return dict(zip(("wool", "grain", "milk", "bread", "cheese", "whisky"), pf(game, p, L.P_GOODS, 6)))


def port_param(game, tile, name):
    return int(game.ruleset.ports.params[PORTS.index(tile), PORT_PARAMS.index(name)])


def unit_cost(game, unit):
    return int(game.ruleset.units.cost[UNITS.index(unit)])


def scenario(p0, p1=None, ports=None, n=2, **kw):
    d = base_scenario(n, **kw)
    d["ports"] = dict(NO_PORTS, **(ports or {}))
    d["players"][0] = p0
    if p1 is not None:
        d["players"][1] = p1
    return d


def game_of(p0, p1=None, ports=None, n=2, **kw):
    return Game.from_scenario(scenario(p0, p1, ports, n, **kw))


def step(game, name):
    game.step(game.parse_action(name))


def used_corners(game, p):
    bits = pf(game, p, L.P_PORTS_USED)
    return [c for i, c in enumerate("ABCD") if bits >> i & 1]


def expand_targets(game, unit="sheep"):
    pre = f"expand {unit} @ "
    return {n[len(pre):] for n in mask_names(game) if n.startswith(pre)}


def oracle_req(board, u):
    """Independent restatement of R-4: minimum shipping level from node u to every node.

    0 = neighbor (adjacent, no river); 1 = adjacent across a river; k + 1 = reached through
    k >= 1 loch hexes only (never over a land hex or through a port)."""
    adj = [[int(w) for w in board.adjacent[v] if w >= 0] for v in range(board.n_nodes)]
    nb = [{int(w) for w in board.neighbor[v] if w >= 0} for v in range(board.n_nodes)]
    out = {}
    for v in adj[u]:
        out[v] = 0 if v in nb[u] else 1
    dist = {}
    queue = deque()
    for lo in adj[u]:
        if board.terrain[lo] & TERRAIN_LOCH:
            dist[lo] = 1
            queue.append(lo)
    while queue:
        lo = queue.popleft()
        for v in adj[lo]:
            if v == u:
                continue
            out[v] = min(out.get(v, 10**6), dist[lo] + 1)
            if board.terrain[v] & TERRAIN_LOCH and v not in dist:
                dist[v] = dist[lo] + 1
                queue.append(v)
    return out


@pytest.fixture(scope="module")
def board2():
    return game_of({"money": 0}).board


def ship_max(game):
    return int(game.tables[L.T_SHIP_MAX])


# ====================================================================== R-4
def test_R_4_level_0_only_neighbors(board2):
    """R-4 level 0: no water crossing; only neighbors of a unit are offered."""
    u = board2.node("A1-07")
    g = game_of({"money": 100, "units": {"A1-07": "sheep"}})
    req = oracle_req(board2, u)
    want = {board2.labels[v] for v, r in req.items()
            if r == 0 and board2.terrain[v] & TERRAIN_PASTURE and board2.active[v]}
    assert expand_targets(g) == want
    assert "A1-12" not in want          # across the river
    assert "A1-08" not in expand_targets(g, "sheep")   # a loch is never a target


def test_R_4_river_needs_level_1():
    """R-4: level 1 may expand across a river to an adjacent hex; level 0 may not."""
    g0 = game_of({"money": 100, "units": {"A1-07": "sheep"}, "shipping": 0})
    g1 = game_of({"money": 100, "units": {"A1-07": "sheep"}, "shipping": 1})
    assert "A1-12" not in expand_targets(g0)
    assert "A1-12" in expand_targets(g1)


def test_R_4_rivers_stay_crossable_at_every_level():
    """R-4: rivers stay crossable at every level >= 1."""
    for level in range(1, ship_max(game_of({"money": 0})) + 1):
        g = game_of({"money": 100, "units": {"A1-07": "sheep"}, "shipping": level})
        assert "A1-12" in expand_targets(g), level


@pytest.mark.parametrize("src,dst,k", [("A1-03", "A1-07", 1), ("A1-03", "A1-12", 2),
                                       ("A1-25", "B1-11", 3)])
def test_R_4_k_loch_hexes_need_level_k_plus_1(board2, src, dst, k):
    """R-4: across k loch hexes needs shipping level k + 1 (level k is not enough)."""
    assert oracle_req(board2, board2.node(src))[board2.node(dst)] == k + 1
    low = game_of({"money": 100, "units": {src: "sheep"}, "shipping": k})
    high = game_of({"money": 100, "units": {src: "sheep"}, "shipping": k + 1})
    assert dst not in expand_targets(low)
    assert dst in expand_targets(high)


def test_R_4_never_over_land(board2):
    """R-4: a path never passes over a land hex, not even along a river: A1-17 touches no
    loch, so at the highest level it still reaches only adjacent hexes."""
    u = board2.node("A1-17")
    g = game_of({"money": 100, "units": {"A1-17": "sheep"},
                 "shipping": ship_max(game_of({"money": 0}))})
    adjacent = {board2.labels[int(w)] for w in board2.adjacent[u] if w >= 0}
    got = expand_targets(g)
    assert got and got <= adjacent
    # A1-22 lies beyond A1-16/A1-23, which the river A1-16|A1-17|A1-23 runs along
    assert "A1-22" not in got and "A1-25" not in got


@pytest.mark.parametrize("cfg,n", [("A1,B1,C1,D1", 2), ("A1,B1,C1,D1", 4), ("A2,B2,C2,D2", 3),
                                   ("A2,B1,C2,D1", 2)])
def test_R_4_mask_matches_independent_range_for_every_source_and_level(cfg, n):
    """R-4 exhaustively: for a lone sheep on every active pasture hex and every shipping level,
    the offered sheep expansions are exactly the empty active pastures within range."""
    g = game_of({"money": 200, "units": {}}, n=n, map=cfg)
    board2 = g.board
    poff = L.S_PLAYERS
    pastures = [v for v in range(board2.n_hex) if board2.active[v]
                and board2.terrain[v] & TERRAIN_PASTURE and not board2.terrain[v] & TERRAIN_LOCH]
    sheep_occ = 0 * 16 + UNITS.index("sheep")
    checked = 0
    for u in pastures:
        req = oracle_req(board2, u)
        g.state[L.S_OCC:L.S_OCC + board2.n_nodes] = -1
        g.state[L.S_OCC + u] = sheep_occ
        for level in range(ship_max(g) + 1):
            g.state[poff + L.P_SHIP] = level
            want = {board2.labels[v] for v in pastures if v != u and req.get(v, 99) <= level}
            assert expand_targets(g) == want, (board2.labels[u], level)
            checked += 1
    assert checked >= 7 * 50


def test_R_4_range_is_the_union_over_all_units(board2):
    """R-4 / R-3.3: reach is measured from every unit of the player."""
    a = game_of({"money": 100, "units": {"A1-03": "sheep"}})
    b = game_of({"money": 100, "units": {"C1-31": "sheep"}})
    both = game_of({"money": 100, "units": {"A1-03": "sheep", "C1-31": "sheep"}})
    assert expand_targets(both) == expand_targets(a) | expand_targets(b)


def test_R_4_ports_are_targets_of_shipping_range(board2):
    """R-4 / R-5: a port is reached like a hex: A1-07 needs level 2 (one loch) for port-A."""
    assert oracle_req(board2, board2.node("A1-07"))[board2.node("port-A")] == 2
    for level, offered in ((0, False), (1, False), (2, True), (3, True)):
        g = game_of({"money": 0, "units": {"A1-07": "sheep"}, "shipping": level},
                    ports={"A": "P5"})
        assert ("port A (P5)" in mask_names(g)) is offered, level


def test_R_4_port_reach_matches_independent_range(board2):
    """R-4: every port, every pasture source, every level: port usable iff within range."""
    g = game_of({"money": 0}, ports={c: "P5" for c in "ABCD"})
    poff = L.S_PLAYERS
    for u in range(board2.n_hex):
        if not (board2.active[u] and board2.terrain[u] & TERRAIN_PASTURE):
            continue
        req = oracle_req(board2, u)
        g.state[L.S_OCC:L.S_OCC + board2.n_nodes] = -1
        g.state[L.S_OCC + u] = UNITS.index("sheep")
        for level in (0, 1, 2, 4):
            g.state[poff + L.P_SHIP] = level
            names = mask_names(g)
            for c, node in zip("ABCD", board2.ports):
                assert (f"port {c} (P5)" in names) == (req.get(int(node), 99) <= level)


def test_R_4_ports_are_never_expansion_targets(board2):
    """R-4: ports are nodes of the range, not hexes to expand onto."""
    g = game_of({"money": 100, "units": {"A1-03": "sheep"}, "shipping": 3})
    targets = {board2.node(x) for x in expand_targets(g)}
    assert not any(board2.terrain[v] & (TERRAIN_PORT | TERRAIN_LOCH) for v in targets)


def test_R_4_free_hex_uses_the_same_range():
    """R-4 applies to the free hex of an export bonus too (R-3.7.2): no land cost, same reach."""
    d = scenario({"money": 100, "units": {"A1-07": "sheep"}, "shipping": 0})
    d["pending"] = {"free_hexes": 1, "main_done": 1}
    d["context"] = "export bonus"
    g = Game.from_scenario(d)
    assert g.context == "export bonus"
    assert "A1-12" not in expand_targets(g)
    d["players"][0]["shipping"] = 1
    g = Game.from_scenario(d)
    assert "A1-12" in expand_targets(g)
    step(g, "expand sheep @ A1-12")
    assert pf(g, 0, L.P_MONEY) == 100 - unit_cost(g, "sheep")


# ====================================================================== R-5
def test_R_5_port_next_to_a_unit_usable_at_any_level():
    """R-5: a port tile that is a neighbor of a unit may be used, whatever the shipping level."""
    g = game_of({"money": 0, "units": {"A1-03": "sheep"}}, ports={"A": "P5"})
    assert "port A (P5)" in mask_names(g)


def test_R_5_port_out_of_reach_not_offered():
    """R-5: a port neither next to nor within shipping range of any unit is not offered."""
    g = game_of({"money": 0, "units": {"C1-31": "sheep"}}, ports={"A": "P5"})
    assert not [n for n in mask_names(g) if n.startswith("port")]
    with pytest.raises(ValueError):
        step(g, "port A")


def test_R_5_once_per_player_per_game_other_players_still_may():
    """R-5: each player uses a tile once per game; the tile stays usable for the others."""
    g = game_of({"money": 0, "units": {"A1-03": "sheep"}},
                {"money": 0, "units": {"A1-07": "sheep"}, "shipping": 2}, ports={"A": "P5"})
    step(g, "port A")
    assert used_corners(g, 0) == ["A"]
    assert "port A (P5)" not in mask_names(g)       # not again this turn
    step(g, "hire merchant")
    # player 1's turn: the same tile is still available to them
    assert g.current_player == 1
    assert "port A (P5)" in mask_names(g)
    step(g, "port A")
    assert used_corners(g, 1) == ["A"]
    # a later game position where player 0 has used it: never offered again
    g2 = game_of({"money": 0, "units": {"A1-03": "sheep"}, "ports_used": ["A"]}, ports={"A": "P5"},
                 round=4)
    assert "port A (P5)" not in mask_names(g2)


def test_R_5_before_or_after_the_main_action():
    """R-5: a port may be used before the main action or after it (then 'end turn' closes)."""
    before = game_of({"money": 10, "units": {"A1-03": "sheep"}}, ports={"A": "P5"})
    assert before.context == "main action" and "port A (P5)" in mask_names(before)
    step(before, "port A")
    assert before.context == "main action" and before.current_player == 0   # main still due
    after = game_of({"money": 10, "units": {"A1-03": "sheep"}}, ports={"A": "P5"})
    step(after, "hire merchant")
    assert after.context == "after main action" and after.current_player == 0
    assert mask_names(after) == ["end turn", "port A (P5)"]
    step(after, "port A")
    assert pf(after, 0, L.P_MONEY) == 10 - after.ruleset.economy.hire_cost + port_param(after, "P5", "money")
    assert after.current_player == 1 and after.context == "main action"


def test_R_5_several_ports_in_one_turn():
    """R-5: several port tiles may be used in one turn, before and after the main action."""
    g = game_of({"money": 0, "units": {"A1-03": "sheep", "C1-31": "sheep", "D1-11": "sheep"}},
                ports={"A": "P5", "C": "P8", "D": "P4"})
    names = mask_names(g)
    assert {"port A (P5)", "port C (P8)", "port D (P4)"} <= set(names)
    step(g, "port A")
    step(g, "port C")          # P8 with an empty box: structure bonus first
    if g.context == "structure bonus":
        step(g, "decline structure bonus")
    assert g.context == "main action" and "port D (P4)" in mask_names(g)
    step(g, "pass")
    assert g.context == "after main action" and "port D (P4)" in mask_names(g)
    step(g, "port D")
    assert used_corners(g, 0) == ["A", "C", "D"]


def test_R_5_no_tile_no_port_action():
    """R-5: a corner without a tile offers nothing."""
    g = game_of({"money": 0, "units": {"A1-03": "sheep"}})
    assert not [n for n in mask_names(g) if n.startswith("port")]


# ------------------------------------------------------------------ P1
def test_R_5_P1_meat_contract_needs_one_fewer_animal():
    """P1: fulfilling contract 16 (1 wool + 1 beef) with no cow: P1 replaces the animal."""
    p0 = {"money": 0, "goods": {"wool": 1}, "units": {"A1-03": "sheep"}, "contracts": [16]}
    without = game_of(dict(p0))
    assert "fulfill contract box 0" not in mask_names(without)
    g = game_of(dict(p0), ports={"A": "P1"})
    assert "port A (P1)" not in mask_names(g)           # P1 only while fulfilling
    assert "fulfill contract box 0" in mask_names(g)
    step(g, "fulfill contract box 0")
    assert g.context == "slaughter"
    assert mask_names(g) == ["port A (P1)"]
    step(g, "port A")
    assert pf(g, 0, L.P_N_FULFILLED) == 1 and goods(g, 0)["wool"] == 0
    assert pf(g, 0, L.P_MEAT) == 1                      # the contract's meat still counts (T7)
    assert used_corners(g, 0) == ["A"]
    assert g.state[L.S_OCC + g.board.node("A1-03")] == UNITS.index("sheep")   # sheep untouched


def test_R_5_P1_optional_when_the_animals_exist():
    """P1: with the cow on the map the player may still use P1 and keep the cow."""
    p0 = {"money": 0, "goods": {"wool": 1}, "units": {"A1-03": "cow"}, "contracts": [16]}
    g = game_of(p0, ports={"A": "P1"})
    step(g, "fulfill contract box 0")
    assert mask_names(g) == ["port A (P1)", "select @ A1-03"]
    step(g, "port A")
    assert g.state[L.S_OCC + g.board.node("A1-03")] == UNITS.index("cow")
    g2 = game_of(p0, ports={"A": "P1"})
    step(g2, "fulfill contract box 0")
    step(g2, "select @ A1-03")                           # slaughter instead: P1 stays unused
    assert g2.state[L.S_OCC + g2.board.node("A1-03")] == -1
    assert used_corners(g2, 0) == []


def test_R_5_P1_spares_only_one_animal():
    """P1: contract 3 needs 2 beef; one cow + P1 suffices, no cow + P1 does not."""
    none = game_of({"money": 0, "units": {"A1-03": "sheep"}, "contracts": [3]}, ports={"A": "P1"})
    assert "fulfill contract box 0" not in mask_names(none)
    g = game_of({"money": 0, "units": {"A1-03": "cow"}, "contracts": [3]}, ports={"A": "P1"})
    step(g, "fulfill contract box 0")
    step(g, "port A")
    assert mask_names(g) == ["select @ A1-03"]
    step(g, "select @ A1-03")
    assert pf(g, 0, L.P_N_FULFILLED) == 1 and pf(g, 0, L.P_MEAT) == 2


# ------------------------------------------------------------------ P5
def test_R_5_P5_gain_money():
    """P5: gain £10 (ports.P5.money)."""
    g = game_of({"money": 3, "units": {"A1-03": "sheep"}}, ports={"A": "P5"})
    step(g, "port A")
    assert pf(g, 0, L.P_MONEY) == 3 + port_param(g, "P5", "money")


# ------------------------------------------------------------------ P2
def test_R_5_P2_discard_one_basic_gain_three_any_types():
    """P2: discard one basic good (only held ones offered), gain three basic goods of any
    types, the discarded type included."""
    g = game_of({"money": 0, "goods": {"wool": 1, "bread": 2}, "units": {"A1-03": "sheep"}},
                ports={"A": "P2"})
    step(g, "port A")
    assert g.context == "port discard"
    assert mask_names(g) == ["pick wool"]
    step(g, "pick wool")
    assert g.context == "port gain"
    assert mask_names(g) == ["pick grain", "pick milk", "pick wool"]
    for name in ("pick wool", "pick wool", "pick milk"):
        step(g, name)
    assert goods(g, 0) == {"wool": 2, "grain": 0, "milk": 1, "bread": 2, "cheese": 0, "whisky": 0}
    assert port_param(g, "P2", "gain") == 3
    assert g.context == "main action"


def test_R_5_P2_needs_a_basic_good():
    """P2: nothing to discard (processed goods only) -> not offered."""
    g = game_of({"money": 0, "goods": {"bread": 2}, "units": {"A1-03": "sheep"}}, ports={"A": "P2"})
    assert "port A (P2)" not in mask_names(g)


# ------------------------------------------------------------------ P6
def test_R_5_P6_moves_price_then_trade_that_good():
    """P6 [interp]: before the main action move one good's price up to 3 steps either way;
    the main action must then trade that good."""
    g = game_of({"money": 30, "merchants": 2, "units": {"A1-03": "sheep"}},
                ports={"A": "P6"}, market={"whisky": 10})
    step(g, "port A")
    assert g.context == "port price"
    names = mask_names(g)
    steps = port_param(g, "P6", "steps")
    for d in range(1, steps + 1):
        assert f"price whisky -{d}" in names and f"price whisky +{d}" in names
    step(g, "price whisky -3")            # £10 is whisky's step 2: clamped at step 0, £8
    assert market_price(g.state, g.tables, 5) == int(g.ruleset.market.tracks[5][0]) == 8
    assert g.context == "main action"
    assert mask_names(g) == ["trade buy 1 whisky", "trade buy 2 whisky"]   # no pass, no other
    step(g, "trade buy 2 whisky")
    assert pf(g, 0, L.P_MONEY) == 30 - 16 and goods(g, 0)["whisky"] == 2
    assert market_price(g.state, g.tables, 5) == int(g.ruleset.market.tracks[5][2]) == 10


def test_R_5_P6_only_moves_that_allow_the_trade():
    """P6 [interp]: with £9 and no goods, only moves after which a buy is affordable."""
    g = game_of({"money": 9, "merchants": 1, "units": {"A1-03": "sheep"}}, ports={"A": "P6"},
                market={"whisky": 10, "cheese": 9})
    step(g, "port A")
    names = mask_names(g)
    assert [n for n in names if "whisky" in n] == ["price whisky -1", "price whisky -2",
                                                   "price whisky -3"]
    assert "price cheese +1" not in names and "price cheese -1" in names


def test_R_5_P6_only_before_the_main_action():
    """P6 [interp]: not offered after the main action, nor when no trade could follow."""
    g = game_of({"money": 10, "merchants": 2, "units": {"A1-03": "sheep", "C1-31": "sheep"}},
                ports={"A": "P6", "C": "P5"})
    assert {"port A (P6)", "port C (P5)"} <= set(mask_names(g))
    step(g, "hire merchant")
    assert g.context == "after main action"
    assert mask_names(g) == ["end turn", "port C (P5)"]
    broke = game_of({"money": 0, "merchants": 2, "units": {"A1-03": "sheep"}}, ports={"A": "P6"})
    assert "port A (P6)" not in mask_names(broke)          # no money, no goods: no trade
    nomerch = game_of({"money": 50, "merchants": 0, "units": {"A1-03": "sheep"}},
                      ports={"A": "P6"})
    assert "port A (P6)" not in mask_names(nomerch)


def test_R_5_P6_sell_after_moving_up():
    """P6: raising a price before selling that good."""
    g = game_of({"money": 0, "merchants": 2, "goods": {"cheese": 2}, "units": {"A1-03": "sheep"}},
                ports={"A": "P6"}, market={"cheese": 9})
    step(g, "port A")
    step(g, "price cheese +3")
    assert "trade sell 2 cheese" in mask_names(g)
    assert not [n for n in mask_names(g) if "cheese" not in n]
    step(g, "trade sell 2 cheese")
    assert pf(g, 0, L.P_MONEY) == 24


# ------------------------------------------------------------------ P3
def test_R_5_P3_discard_one_processed_gain_two():
    """P3: discard one processed good; gain two processed goods of any types (two, not three)."""
    g = game_of({"money": 0, "goods": {"whisky": 1, "wool": 3}, "units": {"A1-03": "sheep"}},
                ports={"A": "P3"})
    step(g, "port A")
    assert mask_names(g) == ["pick whisky"]
    step(g, "pick whisky")
    assert mask_names(g) == ["pick bread", "pick cheese", "pick whisky"]
    step(g, "pick cheese")
    step(g, "pick whisky")
    assert port_param(g, "P3", "gain") == 2
    assert goods(g, 0) == {"wool": 3, "grain": 0, "milk": 0, "bread": 0, "cheese": 1, "whisky": 1}
    assert g.context == "main action"


def test_R_5_P3_needs_a_processed_good():
    g = game_of({"money": 0, "goods": {"wool": 3}, "units": {"A1-03": "sheep"}}, ports={"A": "P3"})
    assert "port A (P3)" not in mask_names(g)


# ------------------------------------------------------------------ P7
SWAP_UNITS = {"A1-03": "sheep", "A1-09": "cow", "A1-14": "field"}


def test_R_5_P7_two_swaps():
    """P7: exchange two units with board units, free; incoming types differ from outgoing
    types (both ways), fields never swap, terrain must fit; exactly two exchanges."""
    g = game_of({"money": 7, "units": dict(SWAP_UNITS)}, ports={"A": "P7"})
    assert port_param(g, "P7", "units") == 2
    step(g, "port A")
    assert g.context == "port swap"
    first = mask_names(g)
    # sheep->cow at A1-03 would leave only the (now incoming-type) cow to swap out: excluded
    assert first == sorted(f"expand {u} @ {h}" for h in ("A1-03", "A1-09")
                           for u in ("bakery", "cheese_dairy", "distillery"))
    step(g, "expand distillery @ A1-03")
    assert g.context == "port swap"
    assert mask_names(g) == ["expand bakery @ A1-09", "expand cheese_dairy @ A1-09",
                             "expand distillery @ A1-09"]
    step(g, "expand cheese_dairy @ A1-09")
    b = g.board
    occ = {h: int(g.state[L.S_OCC + b.node(h)]) for h in SWAP_UNITS}
    assert occ == {"A1-03": UNITS.index("distillery"), "A1-09": UNITS.index("cheese_dairy"),
                   "A1-14": UNITS.index("field")}
    board_units = dict(zip(UNITS, pf(g, 0, L.P_BOARD, 8)))
    assert board_units["sheep"] == 4 and board_units["cow"] == 4
    assert board_units["distillery"] == 3 and board_units["cheese_dairy"] == 3
    assert pf(g, 0, L.P_MONEY) == 7                       # free
    assert g.context == "main action" and used_corners(g, 0) == ["A"]


def test_R_5_P7_needs_two_possible_swaps():
    """P7 [interp]: exactly two exchanges; with one non-field unit the tile is not offered."""
    g = game_of({"money": 0, "units": {"A1-03": "sheep", "A1-09": "field"}}, ports={"A": "P7"})
    assert "port A (P7)" not in mask_names(g)


def test_R_5_P7_terrain_must_fit():
    """P7: a lumberjack on a pasture+forest hex may become a sheep; a sheep on a pasture-only
    hex never becomes a worker."""
    g = game_of({"money": 0, "units": {"A1-03": "sheep", "A1-10": "lumberjack"},
                 "shipping": 0}, ports={"A": "P7"})
    step(g, "port A")
    names = mask_names(g)
    assert not any(n.startswith(("expand lumberjack @ A1-03", "expand miner @ A1-03"))
                   for n in names)
    assert "expand cow @ A1-10" in names
    assert not any(n.startswith("expand field") for n in names)


def test_R_5_P7_structure_bonus_may_trigger_neighborhood_may_not():
    """P7, the first edition's text (``interp_swap_bonuses="first-edition"``; the erratum,
    the default, is tests/rules/test_interp_readings.py): swapping in the fourth distillery
    with an empty box gives the structure bonus; an opponent's neighboring unit gives no
    neighborhood purchase."""
    units = {"A1-03": "sheep", "A1-09": "cow", "A1-14": "distillery", "A1-19": "distillery",
             "A1-25": "distillery"}
    g = game_of({"money": 20, "merchants": 3, "units": units},
                {"money": 0, "units": {"B1-04": "cheese_dairy"}},      # neighbor of A1-09
                ports={"A": "P7"}, pile=[1, 2, 3, 4, 5], round=3)
    g.static = Static(g.ruleset, g.board, g.num_players,
                      replace(g.static.variants, swap_bonuses="first-edition"))
    step(g, "port A")
    step(g, "expand distillery @ A1-03")
    assert g.context == "port swap"
    step(g, "expand bakery @ A1-09")
    assert g.context == "structure bonus"
    step(g, "draw structure contracts")
    drawn = g.ruleset.export_board.structure_draw
    assert sorted(mask_names(g)) == sorted([f"keep drawn contract {i}" for i in range(drawn)]
                                           + ["keep no contract"])
    step(g, "keep drawn contract 0")
    cost = int(g.ruleset.export_board.contract_cost[2])
    assert pf(g, 0, L.P_MONEY) == 20 - cost
    assert pf(g, 0, L.P_BOX) == 0                        # contract id 1 (index 0) kept
    assert g.context == "main action"                     # no neighborhood purchase


# ------------------------------------------------------------------ P4
@pytest.mark.parametrize("choice", ["shipping upgrade", "technology upgrade lumberjack",
                                    "technology upgrade miner", "hire merchant",
                                    "retrieve merchant buy wool", "decline upgrade"])
def test_R_5_P4_upgrade_choice_and_glory(choice):
    """P4: 3 glory and one upgrade bonus (R-3.7.2): free shipping, technology for £5, free
    merchant, or take back an own merchant from the market; [interp] may be declined."""
    p0 = {"money": 20, "merchants": 1, "market": {"buy": {"wool": 1}}, "glory": 2,
          "units": {"A1-03": "sheep"}}
    g = game_of(p0, ports={"A": "P4"})
    step(g, "port A")
    assert pf(g, 0, L.P_GLORY) == 2 + port_param(g, "P4", "glory")
    assert g.context == "export bonus"
    assert mask_names(g) == sorted(["decline upgrade", "hire merchant", "retrieve merchant buy wool",
                                    "shipping upgrade", "technology upgrade lumberjack",
                                    "technology upgrade miner"])
    step(g, choice)
    eco = g.ruleset.economy
    money, merch = pf(g, 0, L.P_MONEY), pf(g, 0, L.P_MERCH)
    if choice == "shipping upgrade":
        assert pf(g, 0, L.P_SHIP) == 1 and money == 20 - eco.shipping_bonus_cost
    elif choice.startswith("technology"):
        t = 0 if choice.endswith("lumberjack") else 1
        assert pf(g, 0, L.P_TECH + t) == 1 and money == 20 - eco.technology_bonus_cost
    elif choice == "hire merchant":
        assert merch == 2 and pf(g, 0, L.P_TRACK) == 4 and money == 20 - eco.hire_bonus_cost
    elif choice.startswith("retrieve"):
        assert merch == 2 and pf(g, 0, L.P_MARKET) == 0 and money == 20
    else:
        assert money == 20 and merch == 1 and pf(g, 0, L.P_SHIP) == 0
    assert g.context == "main action"


def test_R_5_P4_technology_needs_the_bonus_price():
    """P4: the technology option needs £5 (bonus price); without it only the others remain."""
    g = game_of({"money": 4, "units": {"A1-03": "sheep"}, "merchants_on_track": 0},
                ports={"A": "P4"})
    step(g, "port A")
    assert mask_names(g) == ["decline upgrade", "shipping upgrade"]


# ------------------------------------------------------------------ P8
def test_R_5_P8_money_and_structure_bonus_with_empty_box():
    """P8: gain £5; with an empty box draw 3 contracts, keep 0-1 paying the round's cost."""
    g = game_of({"money": 10, "units": {"A1-03": "sheep"}}, ports={"A": "P8"},
                pile=[7, 8, 9, 10], round=4)
    step(g, "port A")
    assert pf(g, 0, L.P_MONEY) == 10 + port_param(g, "P8", "money")
    assert g.context == "structure bonus"
    assert mask_names(g) == ["decline structure bonus", "draw structure contracts"]
    step(g, "draw structure contracts")
    assert mask_names(g) == ["keep drawn contract 0", "keep drawn contract 1",
                             "keep drawn contract 2", "keep no contract"]
    step(g, "keep drawn contract 1")
    cost = int(g.ruleset.export_board.contract_cost[3])
    assert pf(g, 0, L.P_MONEY) == 10 + port_param(g, "P8", "money") - cost
    ids = [int(x) for x in g.ruleset.contracts.ids]
    assert ids[pf(g, 0, L.P_BOX)] == 8
    # the two not kept go under the pile: the pile is now 10, 7, 9
    pile = [ids[int(g.state[L.S_DECK + (int(g.state[L.S_DECK_HEAD]) + i) % 64])]
            for i in range(int(g.state[L.S_DECK_COUNT]))]
    assert pile == [10, 7, 9]


def test_R_5_P8_full_box_only_money():
    """P8: with a contract in the box only the £5."""
    g = game_of({"money": 10, "units": {"A1-03": "sheep"}, "contracts": [5]}, ports={"A": "P8"})
    step(g, "port A")
    assert pf(g, 0, L.P_MONEY) == 10 + port_param(g, "P8", "money")
    assert g.context == "main action"


def test_R_5_P8_keep_none():
    g = game_of({"money": 10, "units": {"A1-03": "sheep"}}, ports={"A": "P8"}, pile=[7, 8, 9])
    step(g, "port A")
    step(g, "draw structure contracts")
    step(g, "keep no contract")
    assert pf(g, 0, L.P_BOX) == -1 and int(g.state[L.S_DECK_COUNT]) == 3


# ------------------------------------------------------------------ P9
def test_R_5_P9_pays_and_copies_another_tile():
    """P9 (Kickstarter): pay £3 and use the effect of another tile in play (not its reach);
    P9 is marked used, the copied tile is not."""
    g = game_of({"money": 5, "goods": {"wool": 1}, "units": {"A1-03": "sheep"}},
                ports={"A": "P9", "B": "P5", "C": "P2", "D": "P3"}, kickstarter_tiles=True)
    assert [n for n in mask_names(g) if n.startswith("port")] == ["port A (P9)"]
    step(g, "port A")
    assert g.context == "port copy"
    # P2 applicable (a wool to discard), P3 not (no processed good), never P9 itself
    assert mask_names(g) == ["port B (P5)", "port C (P2)"]
    step(g, "port B")
    cost = port_param(g, "P9", "cost")
    assert pf(g, 0, L.P_MONEY) == 5 - cost + port_param(g, "P5", "money")
    assert used_corners(g, 0) == ["A"]
    assert g.context == "main action"


def test_R_5_P9_needs_its_cost():
    g = game_of({"money": 2, "units": {"A1-03": "sheep"}},
                ports={"A": "P9", "B": "P5"}, kickstarter_tiles=True)
    assert "port A (P9)" not in mask_names(g)


def test_R_5_P9_copies_P1_while_slaughtering():
    """P9 copying P1: one fewer animal for a meat contract, paying £3."""
    p0 = {"money": 5, "goods": {"wool": 1}, "units": {"A1-03": "sheep"}, "contracts": [16]}
    g = game_of(p0, ports={"A": "P9", "C": "P1"}, kickstarter_tiles=True)
    assert "fulfill contract box 0" in mask_names(g)
    step(g, "fulfill contract box 0")
    assert mask_names(g) == ["port A (P9)"]
    step(g, "port A")
    assert pf(g, 0, L.P_MONEY) == 5 - port_param(g, "P9", "cost")
    assert pf(g, 0, L.P_N_FULFILLED) == 1 and used_corners(g, 0) == ["A"]


def test_R_5_P9_copies_P7_and_P8():
    """P9: multi-step effects (P7 swaps, P8 structure bonus) run as for the copied tile."""
    g = game_of({"money": 5, "units": dict(SWAP_UNITS)},
                ports={"A": "P9", "B": "P7", "C": "P8"}, kickstarter_tiles=True, pile=[1, 2, 3])
    step(g, "port A")
    assert mask_names(g) == ["port B (P7)", "port C (P8)"]
    step(g, "port B")
    assert g.context == "port swap"
    step(g, "expand bakery @ A1-03")
    step(g, "expand distillery @ A1-09")
    assert g.context == "main action" and used_corners(g, 0) == ["A"]
    g = game_of({"money": 5, "units": dict(SWAP_UNITS)},
                ports={"A": "P9", "B": "P7", "C": "P8"}, kickstarter_tiles=True, pile=[1, 2, 3])
    step(g, "port A")
    step(g, "port C")
    assert g.context == "structure bonus"
    assert pf(g, 0, L.P_MONEY) == 5 - port_param(g, "P9", "cost") + port_param(g, "P8", "money")


@pytest.mark.parametrize("kick", [False, True])
def test_R_5_P9_only_with_kickstarter_tiles(kick):
    """P9 is an optional tile: drawn for a corner only when kickstarter_tiles is on (R-1.2)."""
    seen = set()
    for seed in range(60):
        g = Game(num_players=2, seed=seed, kickstarter_tiles=kick)
        tiles = [int(t) for t in g.state[L.S_PORTS:L.S_PORTS + 4]]
        assert len(set(tiles)) == 4 and min(tiles) >= 0
        seen.update(tiles)
    assert (PORTS.index("P9") in seen) is kick
    assert seen >= set(range(8))


def test_R_5_ports_disabled_variant():
    """R-5 / R-9.3: with ports off no tile is drawn."""
    g = Game(num_players=2, seed=3, ports=False)
    assert np.all(g.state[L.S_PORTS:L.S_PORTS + 4] == -1)


def test_R_5_P9_copies_P6_only_before_the_main_action():
    """P9 copying P6 follows P6 [interp]: before the main action only, then trade that good."""
    p0 = {"money": 20, "merchants": 2, "units": {"A1-03": "sheep", "C1-31": "sheep"}}
    g = game_of(dict(p0), ports={"A": "P9", "B": "P6", "C": "P5"}, kickstarter_tiles=True,
                market={"wool": 4})
    step(g, "port A")
    assert mask_names(g) == ["port B (P6)", "port C (P5)"]
    step(g, "port B")
    assert g.context == "port price"
    step(g, "price wool -2")
    assert all("wool" in n for n in mask_names(g)) and "trade buy 1 wool" in mask_names(g)
    assert used_corners(g, 0) == ["A"]
    after = game_of(dict(p0), ports={"A": "P9", "B": "P6", "D": "P5"}, kickstarter_tiles=True)
    step(after, "hire merchant")
    assert after.context == "after main action"
    step(after, "port A")
    assert mask_names(after) == ["port D (P5)"]          # no P6 after the main action


def test_R_5_P9_copies_P4():
    g = game_of({"money": 3, "units": {"A1-03": "sheep"}, "glory": 1},
                ports={"A": "P9", "D": "P4"}, kickstarter_tiles=True)
    step(g, "port A")
    step(g, "port D")
    assert pf(g, 0, L.P_GLORY) == 1 + port_param(g, "P4", "glory")
    assert g.context == "export bonus" and pf(g, 0, L.P_MONEY) == 3 - port_param(g, "P9", "cost")


def test_R_5_ports_after_pass_then_round_ends():
    """R-5 (engine choice): Pass is the turn's main action; ports may follow it."""
    d = scenario({"money": 0, "units": {"A1-03": "sheep"}}, ports={"A": "P5"},
                 next_turn_order=[1], scoring_tiles=[None] * 5)
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)
    step(g, "pass")
    assert g.context == "after main action"
    step(g, "port A")
    bonus = int(g.ruleset.export_board.pass_bonus[2][1])
    assert pf(g, 0, L.P_MONEY) == bonus + port_param(g, "P5", "money")
    assert g.round == 3


def test_R_5_P7_two_incoming_units_may_share_a_type():
    """P7 (documented reading): only incoming vs outgoing types must differ, so two
    distilleries may come in for a sheep and a cow."""
    g = game_of({"money": 0, "units": dict(SWAP_UNITS)}, ports={"A": "P7"})
    step(g, "port A")
    step(g, "expand distillery @ A1-03")
    assert "expand distillery @ A1-09" in mask_names(g)
    step(g, "expand distillery @ A1-09")
    assert dict(zip(UNITS, pf(g, 0, L.P_BOARD, 8)))["distillery"] == 2
