"""The last rule edges and the switchable interpretations (docs/interpretations.md).

Rule ids: R-3.3.2 / P8 optional structure draw, R-3.3.1 neighborhood limit per good per
turn, R-8.5 MacDonald rowing onto port tiles, R-8.6 MacKenzie barrels inside any decision;
switches: P6 exact steps, R-3.7.2 retrieving a buy-side merchant, R-7 export threshold.
"""
from dataclasses import replace

import pytest
from conftest import Hexes, base_scenario, mask_names

from caledonia_env import Game
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (FISHERMAN, OCC_STRIDE, PORT_PRICE_SHIFT, TERRAIN_LOCH,
                                            TERRAIN_PASTURE)
from caledonia_env.engine.ports import port_param
from caledonia_env.game import Static

RS = Game.from_scenario(base_scenario()).ruleset
SHEEP_COST = int(RS.units.cost[0])


def step(g, name):
    g.step(g.parse_action(name))


def pv(g, p, field, n=1):
    off = L.S_PLAYERS + p * L.P_SIZE + field
    v = g.state[off:off + n]
    return int(v[0]) if n == 1 else [int(x) for x in v]


def pile(g):
    head, count = int(g.state[L.S_DECK_HEAD]), int(g.state[L.S_DECK_COUNT])
    return [int(g.state[L.S_DECK + (head + i) % 64]) for i in range(count)]


def others_passed(n=2, **kw):
    d = base_scenario(n, next_turn_order=list(range(1, n)), scoring_tiles=[None] * 5, **kw)
    for p in range(1, n):
        d["players"][p] = {"money": 0, "passed": True}
    return d


def with_variants(g, **switches):
    """The same position under other interpretation switches (engine Variants)."""
    g.static = Static(g.ruleset, g.board, g.num_players, replace(g.static.variants, **switches))
    return g


@pytest.fixture(scope="module")
def hx():
    return Hexes(Game.from_scenario(base_scenario()).board)


def pasture_chain(hx, k):
    """k pasture hexes, each a neighbor of the previous one."""
    pastures = set(hx.land(TERRAIN_PASTURE))
    for start in sorted(pastures):
        chain = [start]
        while len(chain) < k:
            nxt = [w for w in hx.neighbors(chain[-1]) if w in pastures and w not in chain]
            if not nxt:
                break
            chain.append(nxt[0])
        if len(chain) == k:
            return chain
    raise AssertionError("no pasture chain")


# ------------------------------------------------------- R-3.3.2 / P8 optional draw
def test_R_3_3_2_structure_bonus_may_be_declined_pile_untouched(hx):
    """R-3.3.2: "vous *pouvez* prendre trois contrats": declining draws nothing."""
    chain = pasture_chain(hx, 4)
    d = others_passed(round=3, pile=[30, 31, 32, 33], slots=[None] * 6)
    d["players"][0] = {"money": 100, "units": {hx.label(v): "distillery" for v in chain[:3]}}
    g = Game.from_scenario(d)
    before = pile(g)
    step(g, f"expand distillery @ {hx.label(chain[3])}")
    assert g.context == "structure bonus"
    assert mask_names(g) == ["decline structure bonus", "draw structure contracts"]
    money = pv(g, 0, L.P_MONEY)
    step(g, "decline structure bonus")
    assert pile(g) == before and pv(g, 0, L.P_MONEY) == money and pv(g, 0, L.P_BOX) == -1
    assert g.context == "main action"


def test_R_5_P8_structure_bonus_may_be_declined_money_kept():
    """P8: the £ is gained; the structure bonus part is optional (pile untouched)."""
    d = others_passed(ports={"A": "P8", "B": None, "C": None, "D": None}, pile=[7, 8, 9])
    d["players"][0] = {"money": 10, "units": {"A1-03": "sheep"}}
    g = Game.from_scenario(d)
    before = pile(g)
    step(g, "port A")
    assert g.context == "structure bonus"
    step(g, "decline structure bonus")
    assert pile(g) == before and pv(g, 0, L.P_MONEY) == 10 + int(RS.ports.params[7][1])
    assert g.context == "main action"


def test_R_3_3_2_no_offer_with_an_empty_pile(hx):
    """R-3.3.2: with nothing to draw there is no decision."""
    chain = pasture_chain(hx, 4)
    d = others_passed(round=3, pile=[], slots=[None] * 6)
    d["players"][0] = {"money": 100, "units": {hx.label(v): "distillery" for v in chain[:3]}}
    g = Game.from_scenario(d)
    step(g, f"expand distillery @ {hx.label(chain[3])}")
    assert g.context == "main action"


# ------------------------------------------------------- limit per turn
def test_R_3_3_1_neighborhood_limit_is_per_good_per_turn_across_expansions(hx):
    """R-3.3.1: "pas plus de trois éléments du même type de marchandises par tour": two free
    hexes next to the same opponent sheep in one turn still buy at most the limit of wool."""
    v, w, x = hx.pasture_triangle()
    own = next(y for y in hx.neighbors(v) if y not in (w, x) and y in hx.land(TERRAIN_PASTURE))
    d = others_passed(market={"wool": 3}, pending={"free_hexes": 2, "main_done": 1},
                       context="export bonus")
    d["players"][0] = {"money": 100, "merchants": 7, "units": {hx.label(own): "field"}}
    d["players"][1]["units"] = {hx.label(x): "sheep"}
    g = Game.from_scenario(d)
    limit = int(RS.economy.neighborhood_limit[2])
    assert g.context == "export bonus"
    step(g, f"expand sheep @ {hx.label(v)}")
    assert g.context == "neighborhood purchase"
    step(g, f"neighborhood buy {limit - 1} wool")
    assert g.context == "export bonus"
    assert [int(x) for x in g.state[L.S_NB_BOUGHT:L.S_NB_BOUGHT + 6]] == [limit - 1, 0, 0, 0, 0, 0]
    step(g, f"expand sheep @ {hx.label(w)}")
    assert g.context == "neighborhood purchase"
    assert [n for n in mask_names(g) if "wool" in n] == ["neighborhood buy 1 wool"]
    step(g, "neighborhood buy 1 wool")
    assert pv(g, 0, L.P_GOODS) == limit


def test_R_3_3_1_limit_resets_next_turn(hx):
    """R-3.3.1: the per-turn count starts again in the next turn."""
    v, w, x = hx.pasture_triangle()
    own = next(y for y in hx.neighbors(v) if y not in (w, x) and y in hx.land(TERRAIN_PASTURE))
    d = others_passed(market={"wool": 3})
    d["players"][0] = {"money": 100, "merchants": 7, "units": {hx.label(own): "field"}}
    d["players"][1]["units"] = {hx.label(x): "sheep"}
    g = Game.from_scenario(d)
    step(g, f"expand sheep @ {hx.label(v)}")
    step(g, "neighborhood buy 2 wool")
    if g.context == "after main action":
        step(g, "end turn")
    assert g.context == "main action" and int(g.state[L.S_NB_BOUGHT]) == 0


# ------------------------------------------------------- rowing onto a port
def _loch_next_to_port(board):
    port = board.node("port-A")
    for v in board.adjacent[port]:
        if v >= 0 and board.terrain[v] & TERRAIN_LOCH:
            return int(v), port
    raise AssertionError("no loch next to port A")


def test_R_8_5_fisherman_may_row_onto_a_port_tile():
    """R-8.5: fishermen are "placés ou déplacés" onto empty lochs and port tiles."""
    g0 = Game.from_scenario(base_scenario())
    loch, port = _loch_next_to_port(g0.board)
    d = others_passed(ports={"A": "P5", "B": None, "C": None, "D": None})
    d["players"][0] = {"money": 0, "clan": "macdonald",
                       "units": {g0.board.labels[loch]: "fisherman"}}
    g = Game.from_scenario(d)
    step(g, f"row fisherman @ {g0.board.labels[loch]}")
    assert "select @ port-A" in mask_names(g)
    step(g, "select @ port-A")
    assert int(g.state[L.S_OCC + port]) == 0 * OCC_STRIDE + FISHERMAN
    assert int(g.state[L.S_OCC + loch]) == -1
    # no tile at that corner: no port to row onto
    d["ports"]["A"] = None
    g = Game.from_scenario(d)
    row = f"row fisherman @ {g0.board.labels[loch]}"
    if row in mask_names(g):                 # another loch next to it: rowing, not to port A
        step(g, row)
        assert "select @ port-A" not in mask_names(g)
    assert int(g.state[L.S_OCC + port]) == -1


# ------------------------------------------------------- cellar in any decision
def test_R_8_6_barrel_out_inside_a_neighborhood_purchase(hx):
    """R-8.6: "à tout moment": a MacKenzie barrel leaves the cellar to pay a purchase."""
    v, w, x = hx.pasture_triangle()
    own = next(y for y in hx.neighbors(v) if y not in (w, x) and y in hx.land(TERRAIN_PASTURE))
    d = others_passed()
    cost = SHEEP_COST + int(hx.b.land_cost[v])
    d["players"][0] = {"money": cost, "merchants": 3, "clan": "mackenzie", "cellar": [0, 1],
                       "units": {hx.label(own): "field"}}
    d["players"][1]["units"] = {hx.label(x): "sheep"}
    g = Game.from_scenario(d)
    step(g, f"expand sheep @ {hx.label(v)}")
    assert g.context == "neighborhood purchase"
    names = mask_names(g)
    assert "cellar out right" in names and not any(n.startswith("neighborhood buy") for n in names)
    step(g, "cellar out right")
    assert g.context == "neighborhood purchase"
    # the right space holds a barrel aged once: it pays the first printed amount (the
    # default reading of, interp_cellar="aged")
    assert pv(g, 0, L.P_MONEY) == int(RS.clans.params["mackenzie"]["cellar_money"][0])
    assert "neighborhood buy 1 wool" in mask_names(g)


def test_R_8_6_no_barrel_out_for_others_or_empty_cellar():
    """R-8.6: only the MacKenzie player with a barrel gets the cellar-out actions."""
    d = others_passed(pending={"upgrades": 1, "main_done": 1},
                       context="export bonus")
    d["players"][0] = {"money": 0, "clan": "mackenzie", "cellar": [1, 0]}
    g = Game.from_scenario(d)
    assert g.context == "export bonus" and "cellar out left" in mask_names(g)
    d["players"][0]["cellar"] = [0, 0]
    assert not any(n.startswith("cellar") for n in mask_names(Game.from_scenario(d)))


# ------------------------------------------------------- switch: P6 steps
@pytest.mark.parametrize("exact", [False, True])
def test_P6_exact_steps_switch(exact):
    """P6 [interp]: "up to" three steps (default) or exactly three (switch price_shift_exact)."""
    d = others_passed(ports={"A": "P6", "B": None, "C": None, "D": None})
    d["players"][0] = {"money": 100, "units": {"A1-03": "sheep"}}
    g = with_variants(Game.from_scenario(d), price_shift_exact=exact)
    step(g, "port A")
    assert g.context == "port price"
    sizes = {abs(int(n.split()[-1])) for n in mask_names(g)}
    steps = port_param(g.tables, PORT_PRICE_SHIFT, 0)
    assert steps == 3
    assert sizes == ({steps} if exact else set(range(1, steps + 1)))


# ------------------------------------------------------- switch: retrieve buy side
@pytest.mark.parametrize("buy_side", [True, False])
def test_R_3_7_2_retrieve_buy_side_switch(buy_side):
    """R-3.7.2 [interp]: the upgrade bonus may take back a merchant from a buy space
    (default) or only from a sell space (switch retrieve_buy_side=False)."""
    d = others_passed(pending={"upgrades": 1, "main_done": 1},
                       context="export bonus")
    d["players"][0] = {"money": 0, "merchants": 0,
                       "market": {"buy": {"wool": 1}, "sell": {"milk": 1}}}
    g = with_variants(Game.from_scenario(d), retrieve_buy_side=buy_side)
    names = [n for n in mask_names(g) if n.startswith("retrieve")]
    expected = {"retrieve merchant sell milk"} | ({"retrieve merchant buy wool"} if buy_side else set())
    assert set(names) == expected


# ------------------------------------------------------- switch: export threshold
@pytest.mark.parametrize("minimum", [None, 0])
def test_R_7_export_majority_threshold_switch(minimum):
    """R-7 [interp]: with the ruleset's threshold (1) nobody without a fulfilled contract
    ranks; with export_min_contracts=0 the two tied players split first and second."""
    d = base_scenario(2)
    d["players"] = [{"money": 0}, {"money": 0}]
    g = Game.from_scenario(d)
    variants = replace(g.static.variants, export_min_contracts=minimum)
    d.update(round=5, scoring_tiles=[None] * 5, turn_order=[0, 1], current_player=0,
             next_turn_order=[1])
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)
    g.static = Static(g.ruleset, g.board, 2, variants)
    step(g, "pass")
    assert g.is_terminal
    vp = [int(x) for x in RS.final_scoring.export_majority_vp[2][:2]]
    want = 0 if minimum is None else sum(vp) // 2
    assert [b["exports"] for b in g.score_breakdown()] == [want, want]


def test_export_min_contracts_validated():
    g = Game.from_scenario(base_scenario())
    with pytest.raises(ValueError, match="export_min_contracts"):
        with_variants(g, export_min_contracts=-1)
