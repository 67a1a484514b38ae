"""R-3.1 price tracks that repeat a price on consecutive steps (the printed
shape): the marker moves one step per unit traded, clamped at the ends; the start and the solo
'average' bracket (R-9.2) are steps, not prices."""
import json

import numpy as np
import pytest
from conftest import base_scenario
from market_tracks import (WOOL, WOOL_AVERAGE, WOOL_START, WOOL_TRACK, marker, put_marker,
                           repeated_ruleset)

from caledonia_env import Game, GameConfig
from caledonia_env.engine.automa import expand as AX
from caledonia_env.engine import layout as L
from caledonia_env.engine.market import market_price
from caledonia_env.engine.solo import solo_price_change
from caledonia_env.scenario import ScenarioError


def wool_price(g):
    return int(market_price(g.state, g.tables, WOOL))


def trade(tmp_path, at, player, action):
    """Player 0 (``player`` fields) trades wool with the marker on step ``at``."""
    d = base_scenario(ruleset=repeated_ruleset(tmp_path), market={"wool": {"step": at}})
    d["players"][0] = player
    g = Game.from_scenario(d)
    assert wool_price(g) == WOOL_TRACK[at]
    g.step(g.parse_action(action))
    return g


def money(g, p=0):
    return int(g.state[L.S_PLAYERS + p * L.P_SIZE + L.P_MONEY])


@pytest.mark.parametrize("n", [2, 4])
def test_R_3_1_start_is_the_circled_step_on_both_sides(tmp_path, n):
    g = Game(GameConfig(num_players=n, seed=n, ruleset=repeated_ruleset(tmp_path)))
    assert marker(g.state, g.tables) == WOOL_START and wool_price(g) == 4
    assert g.tables[L.T_PRICE_START + WOOL] == 4


def test_R_3_1_buying_two_moves_two_steps_and_pays_the_price_before(tmp_path):
    g = trade(tmp_path, WOOL_START, {"money": 30, "merchants": 3}, "trade buy 2 wool")
    assert money(g) == 30 - 2 * 4
    assert marker(g.state, g.tables) == WOOL_START + 2 and wool_price(g) == 5


def test_R_3_1_one_unit_bought_on_the_first_of_two_equal_steps_leaves_the_price(tmp_path):
    g = trade(tmp_path, 1, {"money": 4, "merchants": 1}, "trade buy 1 wool")
    assert money(g) == 0 and marker(g.state, g.tables) == 2 and wool_price(g) == 4


def test_R_3_1_selling_moves_down_one_step_per_unit(tmp_path):
    g = trade(tmp_path, 5, {"money": 0, "merchants": 3, "goods": {"wool": 3}},
              "trade sell 3 wool")
    assert money(g) == 3 * 6 and marker(g.state, g.tables) == 2 and wool_price(g) == 4


def test_R_3_1_the_marker_is_clamped_at_both_ends(tmp_path):
    g = trade(tmp_path, 1, {"money": 0, "merchants": 3, "goods": {"wool": 3}},
              "trade sell 3 wool")
    assert money(g) == 3 * 4 and marker(g.state, g.tables) == 0 and wool_price(g) == 3
    g = trade(tmp_path, 6, {"money": 18, "merchants": 3}, "trade buy 3 wool")
    last = len(WOOL_TRACK) - 1
    assert money(g) == 0 and marker(g.state, g.tables) == last and wool_price(g) == 7


@pytest.mark.parametrize("at, die, to", [
    (2, -1, 3),   # £4, below the bracket: rises |die|
    (6, 2, 4),    # the second £6 is above the bracket (the first £6 is in it): falls |die|
    (5, 2, 7),    # the first £6, in the bracket: moves by the die
    (3, -3, 0),   # in the bracket, clamped at the bottom
])
def test_R_9_2_solo_average_bracket_is_a_step_range(tmp_path, at, die, to):
    """R-9.2: low / average / high by the marker's step, so equal prices may differ."""
    g = Game(GameConfig(num_players=1, solo=True, ruleset=repeated_ruleset(tmp_path)))
    s, T = g.state.copy(), g.tables
    put_marker(s, T, at)
    solo_price_change(s, T, WOOL, die)
    assert marker(s, T) == to


def test_automa_brackets_are_step_ranges(tmp_path):
    """A-5: the Automa's medium bracket is the same step range."""
    g = Game(GameConfig(num_players=2, ruleset=repeated_ruleset(tmp_path), automa={1: 3}))
    s, T = g.state.copy(), g.tables
    lo, hi = WOOL_AVERAGE
    want = {lo - 1: AX.LOWER, lo: AX.MEDIUM, hi: AX.MEDIUM, hi + 1: AX.UPPER}
    for k, b in want.items():
        put_marker(s, T, k)
        assert AX.bracket(s, T, WOOL) == b, k
    assert WOOL_TRACK[hi] == WOOL_TRACK[hi + 1]      # same price, different bracket


def test_scenario_marker_by_price_or_step_and_round_trip(tmp_path):
    """A price puts the marker on the cheapest step of that price; {"step": k} on step k;
    to_scenario writes the step only where the price would name a cheaper step."""
    rules = repeated_ruleset(tmp_path)
    g = Game.from_scenario(base_scenario(ruleset=rules, market={"wool": 4}))
    assert marker(g.state, g.tables) == 1 and g.to_scenario()["market"]["wool"] == 4
    g = Game(GameConfig(num_players=2, seed=5, ruleset=rules))
    d = g.to_scenario()
    assert d["market"]["wool"] == {"step": WOOL_START}
    again = Game.from_scenario(json.loads(json.dumps(d)))
    assert np.array_equal(again.state, g.state)


def test_scenario_market_errors(tmp_path):
    rules = repeated_ruleset(tmp_path)
    with pytest.raises(ScenarioError, match=r"market\.wool\.step must be in 0\.\.7, got 8"):
        Game.from_scenario(base_scenario(ruleset=rules, market={"wool": {"step": 8}}))
    gap = tmp_path / "gap.json"
    gap.write_text(json.dumps({"market": {"milk": {"track": [3, 3, 5, 8], "start_step_1_2": 1,
                                                   "start_step_3_4": 1,
                                                   "solo_average_steps": [1, 2]}}}))
    with pytest.raises(ScenarioError, match="no step of its track is priced 4; the steps are "
                                            "3, 3, 5, 8"):
        Game.from_scenario(base_scenario(ruleset=str(gap), market={"milk": 4}))
