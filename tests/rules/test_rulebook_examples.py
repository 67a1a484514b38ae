"""The rulebook's worked examples, as scenario tests (each names its rule id)."""

from caledonia_env import Game
from caledonia_env.engine import layout as L
from caledonia_env.engine.market import market_price
from conftest import base_scenario, finish_round5


def player(game, p, field, n=1):
    off = L.S_PLAYERS + p * L.P_SIZE + field
    v = game.state[off:off + n]
    return int(v[0]) if n == 1 else [int(x) for x in v]


def test_R_3_1_whisky_bought_at_10_moves_price_to_12():
    """R-3.1 rulebook: buy two whisky at £10 -> pay £20, price rises two steps to £12."""
    d = base_scenario(market={"whisky": 10})
    d["players"][0] = {"money": 30, "merchants": 2}
    g = Game.from_scenario(d)
    g.step(g.parse_action("trade buy 2 whisky"))
    assert player(g, 0, L.P_MONEY) == 10
    assert player(g, 0, L.P_GOODS + 5) == 2
    assert market_price(g.state, g.tables, 5) == 12
    assert player(g, 0, L.P_MARKET + 5) == 2 and player(g, 0, L.P_MERCH) == 0


def test_R_3_3_1_neighborhood_whisky_at_7(hexes):
    """R-3.3.1 rulebook: next to an opponent distillery, whisky at £10 costs £7."""
    v, w, x = hexes.pasture_triangle()
    d = base_scenario(market={"whisky": 10})
    d["players"][0] = {"money": 50, "merchants": 5, "units": {hexes.label(v): "sheep"}}
    d["players"][1] = {"money": 0, "units": {hexes.label(w): "distillery"}}
    g = Game.from_scenario(d)
    money0 = 50 - int(g.ruleset.units.cost[0]) - int(g.board.land_cost[x])
    g.step(g.parse_action(f"expand sheep @ {hexes.label(x)}"))
    assert g.context == "neighborhood purchase"
    names = [g.describe_action(a) for a in g.legal_actions()]
    assert "neighborhood buy 4 whisky" in names  # 2 players: up to 4 of the good
    assert "neighborhood buy 5 whisky" not in names
    g.step(g.parse_action("neighborhood buy 1 whisky"))
    assert player(g, 0, L.P_MONEY) == money0 - 7
    assert market_price(g.state, g.tables, 5) == 11


def test_R_7_import_scoring_15_8_18():
    """R-7 rulebook: tobacco least imported (5 VP), sugar cane 4, cotton most (3):
    3 tobacco + 2 sugar cane + 6 cotton = 15 + 8 + 18 (9 cotton, 3 tobacco, 5 sugar cane in
    all, the second player's too)."""
    d = base_scenario(3, import_track={"cotton": 9, "tobacco": 3, "sugar_cane": 5})
    d["players"][0]["fulfilled"] = [2, 4, 13, 24]    # 3 tobacco, 3+3 cotton, 2 sugar cane
    d["players"][1]["fulfilled"] = [28, 48]          # 3 cotton, 3 sugar cane
    g = finish_round5(d)
    assert g.score_breakdown()[0]["imports"] == 15 + 8 + 18


def test_R_7_import_ties_cotton_counts_rarest():
    """R-7: with all tokens level, cotton is rarest (5), then tobacco (4), sugar cane (3)."""
    d = base_scenario(3, import_track={"cotton": 5, "tobacco": 5, "sugar_cane": 5})
    d["players"][0]["fulfilled"] = [2, 4, 24]        # 3 tobacco, 3 cotton, 2 sugar cane
    d["players"][1]["fulfilled"] = [5, 16, 48]       # 2 tobacco, 2 cotton, 3 sugar cane
    g = finish_round5(d)
    assert g.score_breakdown()[0]["imports"] == 3 * 4 + 3 * 5 + 2 * 3


def test_R_7_export_majority_tie_9_9():
    """R-7 rulebook: 3 players, two tied for most contracts share 12 + 6 -> 9 each."""
    d = base_scenario(3)
    d["players"][0]["fulfilled"] = [5, 7]
    d["players"][1]["fulfilled"] = [11, 16]
    d["players"][2]["fulfilled"] = [19]
    g = finish_round5(d)
    assert [b["exports"] for b in g.score_breakdown()] == [9, 9, 0]


def test_R_7_export_majority_two_players_tie_4_each():
    d = base_scenario(2)
    d["players"][0]["fulfilled"] = [5]
    d["players"][1]["fulfilled"] = [7]
    g = finish_round5(d)
    assert [b["exports"] for b in g.score_breakdown()] == [4, 4]
