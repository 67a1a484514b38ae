"""Three readings that follow the clan pages and final scoring of the rulebook text, each the
default with the engine's earlier reading as a switch (docs/interpretations.md): R-8.1
Buchanan pays the round's cost once only for two contracts from the same source in one turn,
R-8.6 MacKenzie's cellar pays only for aged barrels, R-7 import rarity ranks the goods
imported rather than token positions capped at the track's end."""
from dataclasses import replace

import numpy as np
import pytest
from conftest import base_scenario, mask_names

from caledonia_env import Game, GameConfig
from caledonia_env.config import ConfigError, READINGS_2026_11_26, RULES_2026_11, RULES_2026_11_26
from caledonia_env.engine import layout as L
from caledonia_env.engine.scoring import import_values
from caledonia_env.engine.tables.build import (BUCHANAN_READINGS, CELLAR_READINGS,
                                               IMPORT_RARITY_READINGS, Variants)
from caledonia_env.game import Static

RS = Game(GameConfig(num_players=2)).ruleset
COST = [int(x) for x in RS.export_board.contract_cost]        # by round; round 1 negative: a gain
CELLAR = [int(x) for x in RS.clans.params["mackenzie"]["cellar_money"]]     # aged once, twice
P8_MONEY = int(RS.ports.params[7][1])
# 2-player map A1,B1,C1,D1 (conftest.MAP): A1-03 is a pasture next to port A
NEXT_TO_PORT_A = "A1-03"


def step(g, name):
    g.step(g.parse_action(name))


def pv(g, field, n=1, p=0):
    off = L.S_PLAYERS + p * L.P_SIZE + field
    v = g.state[off:off + n]
    return int(v[0]) if n == 1 else [int(x) for x in v]


def scenario_game(d, **variants):
    """The scenario's game with the engine tables of ``variants`` (scenarios hold no
    readings)."""
    g = Game.from_scenario(d)
    g.static = Static(g.ruleset, g.board, g.num_players, replace(g.static.variants, **variants))
    return g


def alone(n=2, **kw):
    """Player 0 acts; every other player has passed."""
    d = base_scenario(n, **kw)
    d["next_turn_order"] = list(range(1, n))
    for p in range(1, n):
        d["players"][p]["passed"] = True
    return d


def test_readings_default_to_the_text_and_the_old_ones_are_kept():
    assert BUCHANAN_READINGS == ("any-second", "same-source")
    assert CELLAR_READINGS == ("left-pays", "aged")
    assert IMPORT_RARITY_READINGS == ("capped", "goods")
    cfg = GameConfig()
    assert (cfg.interp_buchanan, cfg.interp_cellar, cfg.interp_import_rarity) == \
        ("same-source", "aged", "goods")
    assert (Variants().buchanan, Variants().cellar, Variants().import_rarity) == \
        ("same-source", "aged", "goods")
    assert READINGS_2026_11_26 == {"interp_buchanan": "any-second", "interp_cellar": "left-pays",
                                   "interp_import_rarity": "capped"}
    for old in (RULES_2026_11, RULES_2026_11_26):
        assert READINGS_2026_11_26.items() <= old.items()
    assert RULES_2026_11_26["ruleset"] == "market-estimate-2026-11"


@pytest.mark.parametrize("field", ["interp_buchanan", "interp_cellar", "interp_import_rarity"])
def test_readings_are_checked(field):
    with pytest.raises(ConfigError, match=rf"GameConfig.{field} must be one of"):
        GameConfig(**{field: "both"})
    assert getattr(GameConfig(**{field: " " + getattr(GameConfig(), field).upper()}), field) \
        == getattr(GameConfig(), field)
    g = Game(GameConfig(num_players=2))
    switch = field.removeprefix("interp_")
    with pytest.raises(ValueError, match=f"{switch} must be one of"):
        Static(g.ruleset, g.board, 2, replace(g.static.variants, **{switch: "both"})).tables


# ------------------------------------------------------------ Buchanan
def _buchanan_p8(rnd, reading, money=40):
    """Buchanan next to port 8 (£5 and a structure bonus), six contracts face up."""
    d = alone(round=rnd, slots=[1, 2, 3, 4, 5, 6],
              ports={"A": "P8", "B": None, "C": None, "D": None})
    d["players"][0] = {"money": money, "clan": "buchanan", "units": {NEXT_TO_PORT_A: "sheep"}}
    return scenario_game(d, buchanan=reading)


@pytest.mark.parametrize("reading", BUCHANAN_READINGS)
@pytest.mark.parametrize("rnd", [1, 5])
def test_R_8_1_two_contracts_from_the_obtain_action_cost_once(rnd, reading):
    g = _buchanan_p8(rnd, reading)
    step(g, "obtain contract slot 0")
    step(g, "obtain contract slot 1")
    assert pv(g, L.P_MONEY) == 40 - COST[rnd - 1]


@pytest.mark.parametrize("reading", BUCHANAN_READINGS)
@pytest.mark.parametrize("rnd", [1, 5])
def test_R_8_1_two_contracts_from_one_structure_bonus_cost_once(rnd, reading):
    g = _buchanan_p8(rnd, reading)
    step(g, "port A")
    step(g, "draw structure contracts")
    step(g, "keep drawn contract 0")
    step(g, "keep drawn contract 1")
    assert pv(g, L.P_MONEY) == 40 + P8_MONEY - COST[rnd - 1]


@pytest.mark.parametrize("port_first", [True, False])
@pytest.mark.parametrize("rnd", [1, 5])
def test_R_8_1_contracts_from_two_sources_in_one_turn(rnd, port_first):
    """A port's structure bonus and the Obtain action are two sources: the text pays each (in
    round 1 the £5 is gained once per turn, R-8.1); the earlier reading made the second free."""
    paid = {}
    for reading in BUCHANAN_READINGS:
        g = _buchanan_p8(rnd, reading)
        if not port_first:
            step(g, "obtain contract slot 0")
            step(g, "no second contract")
        step(g, "port A")
        step(g, "draw structure contracts")
        step(g, "keep drawn contract 0")
        if port_first:
            assert g.context == "structure bonus"
            step(g, "keep no contract")
            step(g, "obtain contract slot 0")
        assert min(pv(g, L.P_BOX, 2)) >= 0              # both boxes hold a contract
        paid[reading] = 40 + P8_MONEY - pv(g, L.P_MONEY)
    once = COST[rnd - 1]
    assert paid["any-second"] == once
    assert paid["same-source"] == (once if once < 0 else 2 * once)


# ------------------------------------------------------------ MacKenzie
def _mackenzie(reading, cellar, goods=None, **kw):
    d = alone(**kw)
    d["players"][0] = {"money": 0, "clan": "mackenzie", "cellar": cellar, "goods": goods or {}}
    return scenario_game(d, cellar=reading)


@pytest.mark.parametrize("reading, left, right", [
    ("aged", 0, CELLAR[0]),              # the left barrel has not aged yet; the right once
    ("left-pays", CELLAR[0], CELLAR[1]),
])
def test_R_8_6_barrels_taken_out_pay_by_age(reading, left, right):
    """Any barrel may leave at any time ("à tout moment"), a fresh one for nothing."""
    g = _mackenzie(reading, [1, 1])
    assert {"cellar out left", "cellar out right"} <= set(mask_names(g))
    step(g, "cellar out left")
    assert pv(g, L.P_MONEY) == left and pv(g, L.P_GOODS + 5) == 1
    step(g, "cellar out right")
    assert pv(g, L.P_MONEY) == left + right and pv(g, L.P_GOODS + 5) == 2


@pytest.mark.parametrize("reading", CELLAR_READINGS)
def test_R_8_6_a_barrel_leaving_at_production_has_aged_twice(reading):
    """Start of production: the right barrel goes to stock with £15 in both readings, the
    left one moves right."""
    g = _mackenzie(reading, [1, 1])
    step(g, "pass")
    step(g, "end turn")
    assert pv(g, L.P_CELLAR, 2) == [0, 1] and pv(g, L.P_GOODS + 5) == 1
    assert pv(g, L.P_MONEY) == int(RS.export_board.pass_bonus[2][1]) + CELLAR[1]


@pytest.mark.parametrize("reading, end_money", [("aged", CELLAR[0]), ("left-pays", CELLAR[1])])
def test_R_8_6_cellar_counts_for_T2_and_pays_by_space_at_the_end(reading, end_money):
    """Round 5: production ages the left barrel once; at the end it leaves from the right
    space before final scoring; T2 counts it (cheese + barrel = one pair)."""
    g = _mackenzie(reading, [1, 0], {"cheese": 1}, round=5,
                   scoring_tiles=[None, None, None, None, "T2"])
    step(g, "pass")
    step(g, "end turn")
    assert g.is_terminal and pv(g, L.P_GLORY) == 3
    assert pv(g, L.P_CELLAR, 2) == [0, 0] and pv(g, L.P_GOODS + 5) == 1
    assert pv(g, L.P_MONEY) == int(RS.export_board.pass_bonus[2][1]) + end_money


@pytest.mark.parametrize("reading, fresh", [("aged", 0), ("left-pays", CELLAR[0])])
def test_R_8_6_a_barrel_put_in_at_the_end_of_production_is_fresh_next_round(reading, fresh):
    """The whisky put on the left space at the end of round 2's production has not aged in
    round 3: taking it out pays nothing (the earlier reading paid £7)."""
    d = alone(round=2)
    d["players"][0] = {"money": 0, "clan": "mackenzie", "goods": {"grain": 1},
                       "units": {NEXT_TO_PORT_A: "distillery"}}
    g = scenario_game(d, cellar=reading)
    step(g, "pass")
    step(g, "process 1 whisky")
    step(g, "cellar in whisky")
    assert pv(g, L.P_CELLAR, 2) == [1, 0] and g.round == 3
    if g.current_player != 0:
        step(g, "pass")                                 # player 1 passed first in round 2
    assert g.current_player == 0
    money = pv(g, L.P_MONEY)
    step(g, "cellar out left")
    assert pv(g, L.P_MONEY) == money + fresh and pv(g, L.P_GOODS + 5) == 1


# ------------------------------------------------------------ R-7 import rarity
def _imports_game(reading, fulfilled, track):
    d = alone(round=5, scoring_tiles=[None] * 5,
              import_track=dict(zip(("cotton", "tobacco", "sugar_cane"), track)))
    for p, ids in enumerate(fulfilled):
        d["players"][p] = {"money": 0, "fulfilled": ids, "passed": p > 0}
    g = scenario_game(d, import_rarity=reading)
    imp = np.zeros(3, np.int64)
    import_values(g.state, g.tables, imp)
    return g, imp.tolist()


#: cotton contracts 10, 22, 31, 34, 37, 40 (4 each), 4, 13, 25 (3 each), 1 (2): 35 cotton;
#: tobacco 8, 17, 20, 29, 32, 38, 41 (4 each), 35 (3): 31 tobacco; sugar cane 48: 3
HIGH_EXPORT = ([10, 22, 31, 34, 37, 40, 4, 13, 25, 1, 48], [8, 17, 20, 29, 32, 38, 41, 35])


def test_R_7_a_high_export_game_ranks_the_goods_past_the_track_end():
    """Cotton (35) and tobacco (31) both pass the track's end (30): the text ranks the goods
    imported (cotton most: 3 VP, tobacco 4, sugar cane 5); the capped positions tie and the
    tie order then counts cotton as rarer (cotton 4, tobacco 3)."""
    top = int(RS.export_board.import_track_length)
    assert top == 30
    track = (top, top, 3)
    g, imp = _imports_game("goods", HIGH_EXPORT, track)
    assert imp == [3, 4, 5]
    _, capped = _imports_game("capped", HIGH_EXPORT, track)
    assert capped == [4, 3, 5]
    step(g, "pass")
    assert g.is_terminal
    b = g.score_breakdown()
    assert b[0]["imports"] == 35 * 3 + 3 * 5 and b[1]["imports"] == 31 * 4


def test_R_7_faq_tie_example_on_the_goods_imported():
    """The FAQ: 5 cotton, 5 tobacco, 7 sugar cane are worth 5, 4, 3 VP each (cotton counts
    as rarest). Contracts 16 + 4 cotton, 5 + 35 tobacco, 12 + 48 sugar cane."""
    _, imp = _imports_game("goods", ([16, 4, 5, 35, 12, 48], []), (5, 5, 7))
    assert imp == [5, 4, 3]


def test_R_7_goods_are_counted_over_every_player():
    """The token moves for every player's contracts: the ranking sums them."""
    _, imp = _imports_game("goods", ([16], [4, 12]), (5, 0, 4))     # 5 cotton, 0 tobacco, 4 sugar
    assert imp == [3, 5, 4]
