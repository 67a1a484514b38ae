"""Scenario tests for R-6 (production, round scoring tiles T1-T9), R-7 (final scoring) and
R-9.1 (two-player rules).

Every test names the rule id it checks. The rulebook's worked examples (import scoring
15 + 8 + 18, tied export majority 9 + 9) live in tests/rules/test_rulebook_examples.py; the tests
here extend them. Numbers that are ruleset data are read from ``game.ruleset``.
"""
import json
from dataclasses import replace

import pytest
from conftest import Hexes, base_scenario, mask_names

from caledonia_env import Game
from caledonia_env.data.names import SCORING_TILES, UNITS
from caledonia_env.engine import layout as L
from caledonia_env.game import Static

GOODS = ("wool", "grain", "milk", "bread", "cheese", "whisky")


# ----------------------------------------------------------------- helpers
def pf(game, p, field, n=1):
    off = L.S_PLAYERS + p * L.P_SIZE + field
    v = game.state[off:off + n]
    return int(v[0]) if n == 1 else [int(x) for x in v]


def goods(game, p):
    return dict(zip(GOODS, pf(game, p, L.P_GOODS, 6)))


def step(game, name):
    game.step(game.parse_action(name))


def pass_bonus_last(game):
    """£ for passing last (player 0 passes after everyone else, R-3.8)."""
    n = game.num_players
    return int(game.ruleset.export_board.pass_bonus[n][n - 1])


def last_round_scenario(n=2, rnd=2, tiles=None, **kw):
    """Round ``rnd``, every player but 0 has passed (in seat order); player 0 to act."""
    d = base_scenario(n, **kw)
    d.update(round=rnd, turn_order=list(range(n)), current_player=0,
             next_turn_order=list(range(1, n)),
             scoring_tiles=tiles if tiles is not None else [None] * 5)
    return d


def play_out(d, choose=None, variants=None):
    """Player 0 passes; production decisions via ``choose(game)`` (default: process 0);
    returns the game after round scoring (and final scoring after round 5). ``variants``:
    switch readings for the engine tables (scenarios hold none)."""
    for p in range(1, d["num_players"]):
        d["players"][p]["passed"] = True
    g = Game.from_scenario(d)
    if variants:
        g.static = Static(g.ruleset, g.board, g.num_players,
                          replace(g.static.variants, **variants))
    step(g, "pass")
    while g.context == "production":
        if choose is None:
            kind = mask_names(g)[0].split()[-1]
            step(g, f"process 0 {kind}")
        else:
            step(g, choose(g))
    return g


def finish_game(d, choose=None, variants=None):
    d["round"] = 5
    g = play_out(d, choose, variants)
    assert g.is_terminal
    return g


def tile_glory(game, tile, count):
    st = game.ruleset.scoring_tiles
    i = SCORING_TILES.index(tile)
    return int(st.glory[i]) * (count // int(st.per[i]))


def income(game, unit, upgraded):
    i = UNITS.index(unit)
    u = game.ruleset.units
    return int(u.income_upgraded[i] if upgraded else u.income_base[i])


def output(game, unit):
    return int(game.ruleset.units.output[UNITS.index(unit)])


# ==================================================================== R-6.1
@pytest.mark.parametrize("lj_up,mi_up", [(False, False), (True, False), (False, True), (True, True)])
def test_R_6_1_worker_income(lj_up, mi_up):
    """R-6.1: each lumberjack £4 (£6 upgraded), each miner £6 (£8 upgraded), for everyone."""
    d = last_round_scenario()
    d["players"][0] = {"money": 5, "units": {"A1-05": "lumberjack", "A1-10": "lumberjack",
                                             "A1-16": "miner"},
                       "technology": {"lumberjack": lj_up, "miner": mi_up}}
    d["players"][1] = {"money": 1, "units": {"B1-12": "miner"}}
    g = play_out(d)
    assert g.round == 3
    want0 = 5 + pass_bonus_last(g) + 2 * income(g, "lumberjack", lj_up) + income(g, "miner", mi_up)
    assert pf(g, 0, L.P_MONEY) == want0
    # player 1 passed before the scenario starts, so only production income is added
    assert pf(g, 1, L.P_MONEY) == 1 + income(g, "miner", False)


# ==================================================================== R-6.2
def test_R_6_2_basic_goods():
    """R-6.2: each sheep 1 wool, each cow 1 milk, each field 2 grain (added to the stock)."""
    d = last_round_scenario()
    d["players"][0] = {"money": 0, "goods": {"wool": 1},
                       "units": {"A1-03": "sheep", "A1-09": "sheep", "A1-14": "cow",
                                 "A1-19": "field", "A1-25": "field"}}
    d["players"][1] = {"money": 0, "units": {"C1-31": "cow"}}
    g = play_out(d)
    assert goods(g, 0) == {"wool": 1 + 2 * output(g, "sheep"), "grain": 2 * output(g, "field"),
                           "milk": output(g, "cow"), "bread": 0, "cheese": 0, "whisky": 0}
    assert (output(g, "sheep"), output(g, "cow"), output(g, "field")) == (1, 1, 2)
    assert goods(g, 1)["milk"] == 1


# ==================================================================== R-6.3
def test_R_6_3_processing_uses_this_phase_output():
    """R-6.3: a dairy may turn the milk the cow produced this phase into cheese."""
    d = last_round_scenario()
    d["players"][0] = {"money": 0, "units": {"A1-03": "cow", "A1-09": "cheese_dairy",
                                             "A1-14": "cheese_dairy"}}
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)
    step(g, "pass")
    assert g.context == "production" and g.current_player == 0
    assert mask_names(g) == ["process 0 cheese", "process 1 cheese"]   # 2 dairies, 1 milk
    step(g, "process 1 cheese")
    assert goods(g, 0)["cheese"] == 1 and goods(g, 0)["milk"] == 0
    assert g.round == 3


def test_R_6_3_amount_limited_by_buildings():
    """R-6.3: at most one conversion per building; the player chooses how many (0 allowed)."""
    d = last_round_scenario()
    d["players"][0] = {"money": 0, "goods": {"milk": 5},
                       "units": {"A1-09": "cheese_dairy", "A1-14": "cheese_dairy"}}
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)
    step(g, "pass")
    assert mask_names(g) == ["process 0 cheese", "process 1 cheese", "process 2 cheese"]
    step(g, "process 0 cheese")                       # processing is optional
    assert goods(g, 0)["milk"] == 5 and goods(g, 0)["cheese"] == 0


def test_R_6_3_bakery_and_distillery_share_grain():
    """R-6.3: bakeries and distilleries both take grain; the choices draw on one stock."""
    d = last_round_scenario()
    d["players"][0] = {"money": 0, "units": {"A1-03": "field", "A1-09": "bakery",
                                             "A1-14": "bakery", "A1-19": "distillery",
                                             "A1-25": "distillery"}}
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)
    step(g, "pass")
    assert mask_names(g) == ["process 0 bread", "process 1 bread", "process 2 bread"]
    step(g, "process 1 bread")
    assert mask_names(g) == ["process 0 whisky", "process 1 whisky"]
    step(g, "process 1 whisky")
    assert goods(g, 0) == {"wool": 0, "grain": 0, "milk": 0, "bread": 1, "cheese": 0, "whisky": 1}


def test_R_6_3_conversions_per_building_read_from_ruleset(tmp_path):
    """R-6.3 with ruleset data: a building converts up to ``units.<building>.output`` goods
    (1 in the bundled data); an override of 2 (with 2 dairies per board, so the action space
    still holds every choice) lets one dairy turn 2 milk into 2 cheese."""
    override = tmp_path / "dairy2.json"
    override.write_text(json.dumps({"units": {"cheese_dairy": {"output": 2, "count": 2}}}))
    d = last_round_scenario(ruleset=str(override))
    d["players"][0] = {"money": 0, "goods": {"milk": 5}, "units": {"A1-09": "cheese_dairy"}}
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)
    step(g, "pass")
    assert output(g, "cheese_dairy") == 2
    assert mask_names(g) == ["process 0 cheese", "process 1 cheese", "process 2 cheese"]
    step(g, "process 2 cheese")
    assert goods(g, 0)["milk"] == 3 and goods(g, 0)["cheese"] == 2


def test_R_6_3_building_output_beyond_the_action_space_is_refused(tmp_path):
    """R-6.3: data the engine cannot honour (4 buildings x 2 > 4 conversions) is refused."""
    override = tmp_path / "bakery2.json"
    override.write_text(json.dumps({"units": {"bakery": {"output": 2}}}))
    with pytest.raises(ValueError, match="bakery"):
        Game.from_scenario(base_scenario(ruleset=str(override)))


def test_R_6_3_nothing_to_process_no_decision():
    """R-6.3: buildings without inputs ask nothing; the round moves on."""
    d = last_round_scenario()
    d["players"][0] = {"money": 0, "units": {"A1-09": "distillery", "A1-14": "cheese_dairy"}}
    g = play_out(d, choose=lambda g: pytest.fail("no processing decision expected"))
    assert g.round == 3 and g.context == "main action"


def test_R_6_3_players_process_in_next_round_order():
    """R-6.3 (engine order): processing choices in the next round's turn order."""
    d = last_round_scenario()
    for p in (0, 1):
        d["players"][p] = {"money": 0, "goods": {"milk": 1},
                           "units": {("A1-09", "C1-31")[p]: "cheese_dairy"}}
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)          # player 1 passed first: next order is 1, 0
    step(g, "pass")
    assert g.current_player == 1
    step(g, "process 1 cheese")
    assert g.current_player == 0 and g.context == "production"
    step(g, "process 0 cheese")
    assert goods(g, 1)["cheese"] == 1 and goods(g, 0)["cheese"] == 0
    assert [int(x) for x in g.state[L.S_ORDER:L.S_ORDER + 2]] == [1, 0]


# ==================================================================== R-6.4
def _score_round(tile, p0, p1=None, n=2, choose=None, **kw):
    tiles = [None, tile, None, None, None]
    d = last_round_scenario(n, 2, tiles, **kw)
    d["players"][0] = dict(p0, glory=p0.get("glory", 0))
    if p1 is not None:
        d["players"][1] = p1
    g = play_out(d, choose)
    assert g.round == 3
    return g


def test_R_6_4_T1_basic_goods_after_production():
    """T1: 1 glory per basic good in stock, counted after production."""
    g = _score_round("T1", {"money": 0, "goods": {"wool": 2, "grain": 1, "bread": 3},
                            "units": {"A1-03": "sheep"}},
                     {"money": 0, "goods": {"milk": 2, "cheese": 4}})
    assert pf(g, 0, L.P_GLORY) == tile_glory(g, "T1", 2 + 1 + 1) == 4
    assert pf(g, 1, L.P_GLORY) == tile_glory(g, "T1", 2)


def test_R_6_4_T2_pairs_of_processed_goods():
    """T2: 3 glory per pair of processed goods (5 goods -> 2 pairs)."""
    g = _score_round("T2", {"money": 0, "goods": {"bread": 3, "cheese": 2, "wool": 4}},
                     {"money": 0, "goods": {"whisky": 1}})
    assert pf(g, 0, L.P_GLORY) == tile_glory(g, "T2", 5) == 6
    assert pf(g, 1, L.P_GLORY) == 0


def test_R_6_4_T3_deployed_units_fields_double():
    """T3: 1 per sheep, cow, dairy, bakery, distillery; 2 per field; workers nothing."""
    g = _score_round("T3", {"money": 0, "units": {"A1-03": "sheep", "A1-09": "field",
                                                   "A1-14": "distillery", "A1-05": "lumberjack",
                                                   "A1-16": "miner"}},
                     {"money": 0, "units": {"C1-31": "cow", "C1-26": "cheese_dairy"}})
    assert pf(g, 0, L.P_GLORY) == 4
    assert pf(g, 1, L.P_GLORY) == 2


def test_R_6_4_T4_deployed_workers():
    """T4: 2 glory per deployed worker."""
    g = _score_round("T4", {"money": 0, "units": {"A1-05": "lumberjack", "A1-16": "miner",
                                                   "A1-03": "sheep"}})
    assert pf(g, 0, L.P_GLORY) == tile_glory(g, "T4", 2) == 4


def test_R_6_4_T5_pairs_of_units_on_border_hexes():
    """T5: 3 glory per pair of units on border hexes of the active map (3 border units ->
    1 pair). With 2 players the hexes next to the mist are border hexes (R-9.1)."""
    g = _score_round("T5", {"money": 0, "units": {"A1-03": "sheep", "A1-07": "sheep",
                                                   "A1-09": "cow", "A1-11": "sheep"}})
    b = g.board
    assert [bool(b.border[b.node(h)]) for h in ("A1-03", "A1-07", "A1-09", "A1-11")] == \
        [True, True, True, False]
    assert pf(g, 0, L.P_GLORY) == tile_glory(g, "T5", 3) == 3


def test_R_6_4_T5_border_depends_on_player_count():
    """T5 with R-9.1: A1-07 and A1-09 border the mist only on the 2-player map; with 4
    players the same units hold only one border hex (A1-03): no pair."""
    g = _score_round("T5", {"money": 0, "units": {"A1-03": "sheep", "A1-07": "sheep",
                                                   "A1-09": "cow", "A1-11": "sheep"}},
                     {"money": 0}, n=4)
    b = g.board
    assert [bool(b.border[b.node(h)]) for h in ("A1-03", "A1-07", "A1-09", "A1-11")] == \
        [True, False, False, False]
    assert pf(g, 0, L.P_GLORY) == tile_glory(g, "T5", 1) == 0


def test_R_6_4_T6_tracked_imports_not_hops():
    """T6: 1 glory per cotton, tobacco, sugar cane on fulfilled contracts (hops do not count):
    contract 16 (2 cotton) + contract 9 (1 sugar cane, 5 hops) -> 3."""
    g = _score_round("T6", {"money": 0, "fulfilled": [16, 9]})
    assert pf(g, 0, L.P_GLORY) == tile_glory(g, "T6", 3) == 3


def test_R_6_4_T7_meat_on_fulfilled_contracts():
    """T7: 2 glory per meat unit: contract 3 (2 beef) + contract 14 (1 mutton) -> 6."""
    g = _score_round("T7", {"money": 0, "fulfilled": [3, 14]}, {"money": 0, "fulfilled": [16]})
    assert pf(g, 0, L.P_GLORY) == tile_glory(g, "T7", 3) == 6
    assert pf(g, 1, L.P_GLORY) == tile_glory(g, "T7", 1) == 2


def test_R_6_4_T8_upgrades():
    """T8: 1 per shipping level, hired merchant (empty track space) and upgraded technology."""
    track = int(Game.from_scenario(base_scenario()).tables[L.T_MERCH_TRACK])
    g = _score_round("T8", {"money": 0, "shipping": 2, "merchants_on_track": track - 2,
                            "merchants": 4, "technology": {"lumberjack": True}},
                     {"money": 0})
    assert pf(g, 0, L.P_GLORY) == tile_glory(g, "T8", 2 + 2 + 1) == 5
    assert pf(g, 1, L.P_GLORY) == 0


def test_R_6_4_T9_expensive_hexes_kickstarter():
    """T9 (Kickstarter): 2 glory per occupied hex with land cost £5 or £6."""
    g = _score_round("T9", {"money": 0, "units": {"A1-09": "sheep", "A1-06": "lumberjack",
                                                   "A1-03": "sheep"}}, kickstarter_tiles=True)
    b = g.board
    assert [int(b.land_cost[b.node(h)]) for h in ("A1-09", "A1-06", "A1-03")] == [5, 6, 3]
    assert pf(g, 0, L.P_GLORY) == tile_glory(g, "T9", 2) == 4


def test_R_6_4_only_the_current_round_tile_scores():
    """R-6.4: round 2 scores the round-2 tile only (T4 here), not the others."""
    d = last_round_scenario(2, 2, ["T1", "T4", "T1", "T1", "T1"])
    d["players"][0] = {"money": 0, "goods": {"wool": 5}, "units": {"A1-05": "lumberjack"}}
    g = play_out(d)
    assert pf(g, 0, L.P_GLORY) == tile_glory(g, "T4", 1)


def test_R_6_4_round_5_tile_scores_before_final_scoring():
    """R-6.4 in round 5, then R-7: the last tile's glory is in the final glory VP."""
    d = last_round_scenario(2, 5, [None, None, None, None, "T4"])
    d["players"][0] = {"money": 0, "glory": 10, "units": {"A1-05": "lumberjack"}}
    g = finish_game(d)
    assert g.score_breakdown()[0]["glory"] == 10 + tile_glory(g, "T4", 1)


def test_R_6_4_scoring_tiles_disabled():
    """R-6.4 / R-9.3: with scoring tiles off nobody gains round glory."""
    d = last_round_scenario(2, 2, ["T4"] * 5, scoring_tiles_enabled=False)
    d["players"][0] = {"money": 0, "units": {"A1-05": "lumberjack"}}
    g = play_out(d)
    assert pf(g, 0, L.P_GLORY) == 0


@pytest.mark.parametrize("kick", [False, True])
def test_R_6_4_T9_drawn_only_with_kickstarter_tiles(kick):
    """R-6.4 / R-1.4: five distinct tiles per game; T9 only when kickstarter_tiles is on."""
    seen = set()
    for seed in range(60):
        tiles = [int(t) for t in Game(num_players=2, seed=seed, kickstarter_tiles=kick)
                 .state[L.S_TILES:L.S_TILES + 5]]
        assert len(set(tiles)) == 5 and min(tiles) >= 0
        seen.update(tiles)
    assert (SCORING_TILES.index("T9") in seen) is kick
    assert seen >= set(range(8))


# ====================================================================== R-7
def test_R_7_glory_goods_money_hops_and_total():
    """R-7: 1 VP per glory, basic good 1, processed good 2, £10 -> 1 VP, hops 1 VP each;
    the total is the sum of all parts."""
    d = last_round_scenario()
    d["players"][0] = {"money": 41, "glory": 17,
                       "goods": {"wool": 2, "grain": 1, "bread": 1, "cheese": 2},
                       "fulfilled": [9, 23]}              # 5 + 8 hops, 1 sugar cane
    g = finish_game(d)
    fs = g.ruleset.final_scoring
    b = g.score_breakdown()[0]
    money = 41 + pass_bonus_last(g)
    assert b["glory"] == 17
    assert b["goods"] == 3 * fs.vp_per_basic_good + 3 * fs.vp_per_processed_good == 9
    assert b["money"] == money // fs.money_per_vp
    assert b["hops"] == 13 * fs.vp_per_hops
    assert b["total"] == sum(v for k, v in b.items() if k != "total")
    assert list(g.scores()) == [b["total"] for b in g.score_breakdown()]


def test_R_7_money_only_full_tens():
    """R-7: 1 VP per full £10; £9 is worth nothing."""
    d = last_round_scenario()
    bonus = int(Game.from_scenario(d).ruleset.export_board.pass_bonus[2][1])
    d["players"][0] = {"money": 29 - bonus}
    d["players"][1] = {"money": 9}
    g = finish_game(d)
    assert [b["money"] for b in g.score_breakdown()] == [2, 0]


# imports: player holds 2 cotton (16), 4 tobacco (8), 1 sugar cane (6); weights make every
# assignment of 3/4/5 VP give a different sum
IMPORT_CASES = [
    # cotton, tobacco, sugar token positions -> VP per (cotton, tobacco, sugar)
    ((9, 3, 5), (3, 5, 4)),        # the rulebook example's ranking
    ((4, 4, 4), (5, 4, 3)),        # all level: cotton rarest, then tobacco
    ((5, 5, 2), (4, 3, 5)),        # cotton ties tobacco for most: cotton counts rarer
    ((1, 3, 3), (5, 4, 3)),        # tobacco ties sugar cane: tobacco counts rarer
    ((6, 2, 6), (4, 5, 3)),        # cotton ties sugar cane: cotton counts rarer
    ((0, 0, 7), (5, 4, 3)),        # cotton ties tobacco for least
]


@pytest.mark.parametrize("track,vp", IMPORT_CASES)
def test_R_7_imports_by_rarity_with_tie_order(track, vp):
    """R-7: most imported good 3 VP each, second 4, least 5; ties: cotton rarest, then
    tobacco, then sugar cane. The token positions are set apart from the goods, so the
    positions rank (the capped reading); the goods reading: test_text_readings.py."""
    d = last_round_scenario(import_track=dict(zip(("cotton", "tobacco", "sugar_cane"), track)))
    d["players"][0] = {"money": 0, "fulfilled": [16, 8, 6]}
    d["players"][1] = {"money": 0, "fulfilled": [4]}      # 3 cotton
    g = finish_game(d, variants={"import_rarity": "capped"})
    by_rank = [int(x) for x in g.ruleset.final_scoring.import_vp_by_rank]
    assert sorted(vp) == sorted(by_rank)
    b = g.score_breakdown()
    assert b[0]["imports"] == 2 * vp[0] + 4 * vp[1] + 1 * vp[2]
    assert b[1]["imports"] == 3 * vp[0]


def test_R_7_static_import_goods_variant():
    """R-7 variant "static import goods": each cotton, tobacco, sugar cane worth 4 VP."""
    d = last_round_scenario(import_track={"cotton": 9, "tobacco": 0, "sugar_cane": 3},
                            variant_static_imports=True)
    d["players"][0] = {"money": 0, "fulfilled": [16, 8, 6]}
    g = finish_game(d)
    assert g.score_breakdown()[0]["imports"] == 7 * g.ruleset.final_scoring.static_import_vp == 28


@pytest.mark.parametrize("n,fulfilled,want", [
    (3, [[5, 7, 11], [16, 19], [24]], [12, 6, 0]),
    (4, [[5, 7], [11, 16], [19, 24], [25]], [6, 6, 6, 0]),   # three tied first: (12+6+0)/3
    (4, [[5, 7, 11], [16, 19], [24, 25], []], [12, 3, 3, 0]),  # two tied second: 6/2
    (4, [[5], [7], [11], [16]], [4, 4, 4, 4]),                 # all tied: (12+6)/4 rounded down
    (2, [[5, 7], [11]], [8, 0]),
    (2, [[], []], [0, 0]),
    (3, [[5], [], []], [12, 0, 0]),          # [interp] no contract, no rank
])
def test_R_7_export_majority(n, fulfilled, want):
    """R-7: 3-4 players 12 / 6 VP, 2 players 8 VP; ties add the tied places and split,
    rounded down."""
    d = last_round_scenario(n)
    for p in range(n):
        d["players"][p] = {"money": 0, "fulfilled": fulfilled[p]}
    g = finish_game(d)
    assert [b["exports"] for b in g.score_breakdown()] == want
    vp = [int(x) for x in g.ruleset.final_scoring.export_majority_vp[n]]
    assert vp[0] == (8 if n == 2 else 12)


# settlements: A1-06 + A1-07 are neighbors (one settlement); A1-12 lies across the river
# from both (level 1 links it); A1-14 is one loch away from A1-07 and A1-12 (level 2)
SETTLE = {"A1-06": "lumberjack", "A1-07": "sheep", "A1-12": "sheep", "A1-14": "sheep"}


@pytest.mark.parametrize("level,count", [(0, 1), (1, 2), (2, 3), (5, 3)])
def test_R_7_settlements_linked_through_shipping_range(level, count):
    """R-7: settlements are neighbor-connected groups; count the largest set linked through
    shipping range. Player 1 has one lone unit: 2 players score 12 / 0, a tie 6 each."""
    d = last_round_scenario()
    d["players"][0] = {"money": 0, "units": dict(SETTLE), "shipping": level}
    d["players"][1] = {"money": 0, "units": {"C1-31": "sheep"}}
    g = finish_game(d)
    vp = [int(x) for x in g.ruleset.final_scoring.settlement_vp[2]][:2]
    want = [vp[0], vp[1]] if count > 1 else [(vp[0] + vp[1]) // 2] * 2
    assert [b["settlements"] for b in g.score_breakdown()] == want


def test_R_7_settlements_river_splits_and_opponents_do_not_join():
    """R-7: a river between two units makes two settlements (linked at level 1); an
    opponent's unit neighboring two of mine does not merge them into one settlement.
    3 players, 18 / 12 / 6 VP."""
    d = last_round_scenario(3)
    # player 0: A1-07 | A1-12 share a river: two settlements, linked at level 1 -> 2
    d["players"][0] = {"money": 0, "units": {"A1-07": "sheep", "A1-12": "sheep"}, "shipping": 1}
    # player 1: A1-14 and A1-25 (3 apart through two lochs, level 3) -> 2
    d["players"][1] = {"money": 0, "units": {"A1-14": "sheep", "A1-25": "sheep"}, "shipping": 3}
    # player 2: A1-19 neighbors both A1-14 and A1-25 -> 1
    d["players"][2] = {"money": 0, "units": {"A1-19": "cow"}}
    g = finish_game(d)
    b = g.board
    assert int(b.ship_req[b.node("A1-07"), b.node("A1-12")]) == 1
    assert int(b.ship_req[b.node("A1-14"), b.node("A1-25")]) == 3
    assert {b.node("A1-14"), b.node("A1-25")} <= {int(w) for w in b.neighbor[b.node("A1-19")]}
    vp = [int(x) for x in g.ruleset.final_scoring.settlement_vp[3]]
    tie = (vp[0] + vp[1]) // 2
    assert [x["settlements"] for x in g.score_breakdown()] == [tie, tie, vp[2]] == [15, 15, 6]


def test_R_7_settlements_four_players_three_tied_second():
    """R-7: 3-4 players 18 / 12 / 6; three tied for second share (12 + 6 + 0) / 3."""
    d = last_round_scenario(4)
    d["players"][0] = {"money": 0, "units": dict(SETTLE), "shipping": 2}        # 3
    d["players"][1] = {"money": 0, "units": {"C1-31": "sheep", "C1-27": "lumberjack",
                                             "C1-21": "sheep"}}                  # 1
    d["players"][2] = {"money": 0, "units": {"D1-11": "sheep", "D1-06": "sheep"}}
    d["players"][3] = {"money": 0, "units": {"B1-04": "sheep"}}
    g = finish_game(d)
    b = g.board
    # player 1: C1-27 neighbors C1-31 and C1-21 -> one settlement
    nb = {h: {b.labels[int(w)] for w in b.neighbor[b.node(h)] if w >= 0} for h in ("C1-27",)}
    assert {"C1-31", "C1-21"} <= nb["C1-27"]
    # player 2: D1-11 and D1-06 are not neighbors and not within level 0 -> 1
    assert b.ship_req[b.node("D1-11"), b.node("D1-06")] > 0
    vp = [int(x) for x in g.ruleset.final_scoring.settlement_vp[4]]
    got = [x["settlements"] for x in g.score_breakdown()]
    # p0 3; p1, p2, p3 one each -> tie for second among three: (12 + 6 + 0) / 3
    assert got == [vp[0]] + [(vp[1] + vp[2] + vp[3]) // 3] * 3


def test_R_7_settlements_example_split_second_place():
    """R-7: p0 3 settlements, p1 and p2 two each, p3 one: 18, 9, 9, 0."""
    d = last_round_scenario(4)
    d["players"][0] = {"money": 0, "units": dict(SETTLE), "shipping": 2}
    d["players"][1] = {"money": 0, "units": {"B1-13": "sheep", "B1-14": "sheep"},
                       "shipping": 1}             # river B1-13 | B1-14: two, linked at level 1
    d["players"][2] = {"money": 0, "units": {"D1-09": "sheep", "D1-15": "sheep"},
                       "shipping": 1}             # river D1-09 | D1-15
    d["players"][3] = {"money": 0, "units": {"C1-31": "sheep"}}
    g = finish_game(d)
    vp = [int(x) for x in g.ruleset.final_scoring.settlement_vp[4]]
    assert [x["settlements"] for x in g.score_breakdown()] == \
        [vp[0], (vp[1] + vp[2]) // 2, (vp[1] + vp[2]) // 2, vp[3]] == [18, 9, 9, 0]


def test_R_7_winner_tie_broken_by_leftover_money():
    """R-7 [interp]: most VP; tied totals broken by the money left after buying VP."""
    d = last_round_scenario()
    bonus = int(Game.from_scenario(d).ruleset.export_board.pass_bonus[2][1])
    d["players"][0] = {"money": 19 - bonus, "glory": 5}
    d["players"][1] = {"money": 15, "glory": 5}
    g = finish_game(d)
    assert g.scores()[0] == g.scores()[1]
    assert g.winners() == [0]
    d["players"][1] = {"money": 19, "glory": 5}
    g = finish_game(d)
    assert g.winners() == [0, 1]
    d["players"][1] = {"money": 19, "glory": 6}
    g = finish_game(d)
    assert g.winners() == [1]


# ==================================================================== R-9.1
def test_R_9_1_misted_hexes_inactive_with_two_players():
    """R-9.1: with 2 players the misted land hexes are not part of the map (A1-01 next to
    A1-07 is misted): not offered; with 4 players it is."""
    for n, offered in ((2, False), (4, True)):
        d = base_scenario(n)
        d["players"][0] = {"money": 50, "units": {"A1-07": "sheep"}}
        g = Game.from_scenario(d)
        assert bool(g.board.mist[g.board.node("A1-01")])
        assert ("expand sheep @ A1-01" in mask_names(g)) is offered


def test_R_9_1_starting_workers_never_on_misted_hexes():
    """R-9.1 / R-1.8: starting workers go only on active hexes of the smaller map."""
    g = Game(num_players=2, seed=5)
    while g.context == "starting pick":
        g.step(g.legal_actions()[0])
    assert g.context == "starting worker"
    b = g.board
    hexes = {n.split(" @ ")[1] for n in mask_names(g)}
    assert hexes and all(b.active[b.node(h)] for h in hexes)
    g4 = Game(num_players=4, seed=5)
    while g4.context == "starting pick":
        g4.step(g4.legal_actions()[0])
    hexes4 = {n.split(" @ ")[1] for n in mask_names(g4)}
    assert any(bool(g4.board.mist[g4.board.node(h)]) for h in hexes4)


@pytest.mark.parametrize("n", [2, 3])
def test_R_9_1_neighborhood_limit_four_with_two_players(n):
    """R-9.1: neighborhood purchases up to 4 of a good with 2 players (3 with 3-4)."""
    hx = Hexes(Game.from_scenario(base_scenario()).board)
    v, w, x = hx.pasture_triangle()
    d = base_scenario(n, market={"whisky": 10})
    d["players"][0] = {"money": 100, "merchants": 5, "units": {hx.label(v): "sheep"}}
    d["players"][1] = {"money": 0, "units": {hx.label(w): "distillery"}}
    g = Game.from_scenario(d)
    step(g, f"expand sheep @ {hx.label(x)}")
    assert g.context == "neighborhood purchase"
    limit = int(g.ruleset.economy.neighborhood_limit[n])
    assert limit == (4 if n == 2 else 3)
    buys = [nm for nm in mask_names(g) if nm.endswith(" whisky")]
    assert buys == [f"neighborhood buy {k} whisky" for k in range(1, limit + 1)]


def test_R_9_1_ports_at_the_two_player_spot():
    """R-9.1 / R-1.2: with 2 players port-A sits next to A1-03 (the 1-2 spot); with 4 players
    it sits at the other spot, out of A1-03's reach at level 0."""
    for n, offered in ((2, True), (4, False)):
        d = base_scenario(n, ports={"A": "P5", "B": None, "C": None, "D": None})
        d["players"][0] = {"money": 0, "units": {"A1-03": "sheep"}}
        g = Game.from_scenario(d)
        assert ("port A (P5)" in mask_names(g)) is offered


def test_R_9_1_two_player_majorities():
    """R-9.1: 2-player majorities: exports 8 (tie 4 each), settlements 12 / 0 (tie 6 each)."""
    d = last_round_scenario()
    d["players"][0] = {"money": 0, "fulfilled": [5, 7], "units": {"A1-07": "sheep", "A1-12": "sheep"},
                       "shipping": 1}
    d["players"][1] = {"money": 0, "fulfilled": [11], "units": {"C1-31": "sheep"}}
    g = finish_game(d)
    assert [(b["exports"], b["settlements"]) for b in g.score_breakdown()] == [(8, 12), (0, 0)]
    d["players"][0]["shipping"] = 0
    d["players"][0]["fulfilled"] = [5]
    g = finish_game(d)
    assert [(b["exports"], b["settlements"]) for b in g.score_breakdown()] == [(4, 6), (4, 6)]


def test_R_9_1_two_player_pass_bonus_and_slots():
    """R-9.1 with R-3.8 / R-1.4 data: 2 players use their own pass bonus row and slots."""
    g = Game(num_players=2, seed=1)
    eb = g.ruleset.export_board
    assert [int(x) for x in g.tables[L.T_PASS_BONUS:L.T_PASS_BONUS + 2]] == \
        [int(x) for x in eb.pass_bonus[2][:2]]
    assert int(g.tables[L.T_N_SLOTS]) == int(eb.slots[2])
