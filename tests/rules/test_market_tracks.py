"""R-3.1 price tracks on the default (printed, source PHP) market, which repeats a price on
consecutive steps: the marker moves one step per unit traded, clamped at the ends; the start,
port 6's shift and the solo 'average' bracket (R-9.2) count steps, not pounds."""
import json

import numpy as np
import pytest
from conftest import base_scenario
from market_tracks import (MARKET, WHISKY, WOOL, WOOL_TRACK, marker, price, price_after,
                           put_marker, track)

from caledonia_env import Game, GameConfig
from caledonia_env.data import GOODS
from caledonia_env.engine import layout as L
from caledonia_env.engine.automa import expand as AX
from caledonia_env.engine.solo import solo_price_change
from caledonia_env.scenario import ScenarioError

WOOL_START = int(MARKET.start_step[4, WOOL])
WOOL_AVERAGE = [int(x) for x in MARKET.solo_average_steps[WOOL]]


def trade(at, player, action, good="wool"):
    """Player 0 (``player`` fields) trades with ``good``'s marker on step ``at``."""
    g0 = GOODS.index(good)
    d = base_scenario(market={good: {"step": at}})
    d["players"][0] = player
    g = Game.from_scenario(d)
    assert price(g, g0) == track(g0)[at]
    g.step(g.parse_action(action))
    return g


def money(g, p=0):
    return int(g.state[L.S_PLAYERS + p * L.P_SIZE + L.P_MONEY])


def test_R_3_1_the_default_wool_track_repeats_prices():
    """The shape these tests rely on: the start is the second of two £4 steps (PHP, MP)."""
    assert WOOL_TRACK == [3, 3, 4, 4, 5, 5, 6, 6, 7, 8]
    assert WOOL_START == 3 and WOOL_TRACK[WOOL_START - 1] == WOOL_TRACK[WOOL_START] == 4


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_R_1_3_R_3_1_start_is_the_circled_step_on_both_sides(n):
    g = Game(GameConfig(num_players=n, solo=n == 1, seed=n))
    assert [marker(g.state, g.tables, i) for i in range(6)] == [3] * 6
    assert [price(g, i) for i in range(6)] == [4, 5, 5, 10, 10, 11]
    assert g.tables[L.T_PRICE_START + WOOL] == 4


def test_R_3_1_rulebook_whisky_example_on_the_default_tracks():
    """EN p.4: two whisky bought at £10 cost £20 and leave the price at £12."""
    at10 = MARKET.step_of(WHISKY, 10)
    g = trade(at10, {"money": 20, "merchants": 2}, "trade buy 2 whisky", good="whisky")
    assert money(g) == 0 and price(g, WHISKY) == 12
    assert marker(g.state, g.tables, WHISKY) == at10 + 2


def test_R_3_1_buying_two_moves_two_steps_and_pays_the_price_before():
    g = trade(WOOL_START, {"money": 30, "merchants": 3}, "trade buy 2 wool")
    assert money(g) == 30 - 2 * 4
    assert marker(g.state, g.tables) == WOOL_START + 2 and price(g, WOOL) == 5


def test_R_3_1_one_unit_bought_on_the_first_of_two_equal_steps_leaves_the_price():
    g = trade(2, {"money": 4, "merchants": 1}, "trade buy 1 wool")
    assert money(g) == 0 and marker(g.state, g.tables) == 3 and price(g, WOOL) == 4


def test_R_3_1_one_unit_sold_on_the_second_of_two_equal_steps_leaves_the_price():
    g = trade(WOOL_START, {"money": 0, "merchants": 1, "goods": {"wool": 1}}, "trade sell 1 wool")
    assert money(g) == 4 and marker(g.state, g.tables) == 2 and price(g, WOOL) == 4


def test_R_3_1_selling_moves_down_one_step_per_unit():
    g = trade(6, {"money": 0, "merchants": 3, "goods": {"wool": 3}}, "trade sell 3 wool")
    assert money(g) == 3 * 6 and marker(g.state, g.tables) == 3 and price(g, WOOL) == 4


def test_R_3_1_the_marker_is_clamped_at_both_ends():
    g = trade(1, {"money": 0, "merchants": 3, "goods": {"wool": 3}}, "trade sell 3 wool")
    assert money(g) == 3 * 3 and marker(g.state, g.tables) == 0 and price(g, WOOL) == 3
    last = len(WOOL_TRACK) - 1
    g = trade(last - 1, {"money": 3 * 7, "merchants": 3}, "trade buy 3 wool")
    assert money(g) == 0 and marker(g.state, g.tables) == last and price(g, WOOL) == 8


@pytest.mark.parametrize("at, action, moved", [
    (WOOL_START, "price wool +1", 1),      # £4 -> £5
    (2, "price wool +1", 1),               # the first £4 -> the second: the price stays
    (WOOL_START, "price wool -3", -3),     # clamped at the cheapest step
    (len(WOOL_TRACK) - 2, "price wool +3", 3),   # clamped at the dearest step
])
def test_R_5_port_6_moves_the_marker_by_steps(at, action, moved):
    """Port 6: one good's marker moves up to three steps, clamped, before trading it."""
    d = base_scenario(market={"wool": {"step": at}},
                      ports={"A": "P6", "B": None, "C": None, "D": None})
    d["players"][0] = {"money": 50, "merchants": 2, "goods": {"wool": 2},
                       "units": {"A1-03": "sheep"}}
    g = Game.from_scenario(d)
    g.step(g.parse_action("port A"))
    g.step(g.parse_action(action))
    assert g.context == "main action"
    want = min(max(at + moved, 0), len(WOOL_TRACK) - 1)
    assert marker(g.state, g.tables) == want and price(g, WOOL) == price_after(WOOL, at, moved)


@pytest.mark.parametrize("at, die, to", [
    (2, -1, 3),   # the first £4, below the bracket: rises |die|
    (7, 2, 5),    # the second £6 is above the bracket (the first £6 is in it): falls |die|
    (6, 2, 8),    # the first £6, in the bracket: moves by the die
    (3, -3, 0),   # the second £4, in the bracket, clamped at the bottom
    (9, -3, 6),   # high at the top: falls |die|
])
def test_R_9_2_solo_average_bracket_is_a_step_range(at, die, to):
    """R-9.2 on the default wool track: low / average / high by the marker's step (the
    circled start and the three steps above it), so equal prices may differ."""
    assert WOOL_AVERAGE == [3, 6]
    g = Game(GameConfig(num_players=1, solo=True))
    s, T = g.state.copy(), g.tables
    put_marker(s, T, at)
    solo_price_change(s, T, WOOL, die)
    assert marker(s, T) == to


def test_A_5_automa_brackets_are_step_ranges():
    """A-5: the Automa's medium bracket is the same step range."""
    g = Game(GameConfig(num_players=2, automa={1: 3}))
    s, T = g.state.copy(), g.tables
    lo, hi = WOOL_AVERAGE
    want = {lo - 1: AX.LOWER, lo: AX.MEDIUM, hi: AX.MEDIUM, hi + 1: AX.UPPER}
    for k, b in want.items():
        put_marker(s, T, k)
        assert AX.bracket(s, T, WOOL) == b, k
    assert WOOL_TRACK[lo - 1] == WOOL_TRACK[lo]      # same price, different bracket
    assert WOOL_TRACK[hi] == WOOL_TRACK[hi + 1]


def test_scenario_marker_by_price_or_step_and_round_trip():
    """A price puts the marker on the cheapest step of that price; {"step": k} on step k;
    to_scenario writes the step only where the price would name a cheaper step."""
    g = Game.from_scenario(base_scenario(market={"wool": 4}))
    assert marker(g.state, g.tables) == 2 and g.to_scenario()["market"]["wool"] == 4
    g = Game(GameConfig(num_players=2, seed=5))
    d = g.to_scenario()
    assert d["market"]["wool"] == {"step": WOOL_START}
    again = Game.from_scenario(json.loads(json.dumps(d)))
    assert np.array_equal(again.state, g.state)


def test_scenario_market_errors(tmp_path):
    last = len(WOOL_TRACK) - 1
    with pytest.raises(ScenarioError, match=rf"market\.wool\.step must be in 0\.\.{last}, got "
                                            rf"{last + 1}"):
        Game.from_scenario(base_scenario(market={"wool": {"step": last + 1}}))
    gap = tmp_path / "gap.json"
    gap.write_text(json.dumps({"market": {"milk": {"track": [3, 3, 5, 8], "start_step_1_2": 1,
                                                   "start_step_3_4": 1,
                                                   "solo_average_steps": [1, 2]}}}))
    with pytest.raises(ScenarioError, match="no step of its track is priced 4; the steps are "
                                            "3, 3, 5, 8"):
        Game.from_scenario(base_scenario(ruleset=str(gap), market={"milk": 4}))
