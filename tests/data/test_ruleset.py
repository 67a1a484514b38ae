"""Ruleset data: default values (docs/ruleset.md, docs/rules.md), provenance, overrides, validation."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from caledonia_env.data import (
    CLAN_START_FIELDS, CLANS, CONTRACT_COLUMNS, DEFAULT_RULESET_DIR, GOODS, IMPORT_GOODS,
    PORT_KINDS, PORT_PARAMS, PORTS, SCORING_KINDS, SCORING_TILES, SOURCES, STARTING_TILES,
    TABLES, TERRAINS, UNITS, Ruleset, RulesetError, load_ruleset,
)
from caledonia_env.data.names import source_kind
from caledonia_env.engine.actions import PRICE_DELTAS
from caledonia_env.engine.constants import MAX_DRAW, MAX_NB_BUY
from caledonia_env.engine.tables.build import CAPACITY_LIMITS, check_engine_support
from caledonia_env.game import Game

DOCS = Path(__file__).resolve().parents[2] / "docs" / "ruleset.md"


@pytest.fixture(scope="module")
def rs() -> Ruleset:
    return load_ruleset()


def U(name):
    return UNITS.index(name)


def G(name):
    return GOODS.index(name)


# ---------------------------------------------------------------------------
# Default values
# ---------------------------------------------------------------------------
def test_default_is_cached_and_immutable(rs):
    assert load_ruleset() is rs
    assert load_ruleset(rs) is rs
    with pytest.raises(ValueError):
        rs.units.cost[0] = 99  # read-only arrays
    with pytest.raises(AttributeError):
        rs.units = None
    assert rs.units.cost.dtype == np.int32 and rs.units.terrain.dtype == bool


def test_name_orders():
    assert GOODS == ("wool", "grain", "milk", "bread", "cheese", "whisky")
    assert UNITS == ("sheep", "cow", "field", "cheese_dairy", "bakery", "distillery",
                     "lumberjack", "miner")
    assert IMPORT_GOODS == ("cotton", "tobacco", "sugar_cane", "hops")
    assert len(CLANS) == 9 and CLANS[-1] == "brewer"
    assert PORTS[0] == "P1" and SCORING_TILES[-1] == "T9" and STARTING_TILES[-1] == "S9"


def test_units_player_board(rs):
    """R-1.5, R-3.3, R-6.1, R-6.2, R-6.3 and the player board."""
    u = rs.units
    assert list(u.count) == [4] * 8
    assert list(u.cost) == [8, 9, 18, 12, 8, 10, 6, 10]     # sourced:PB and rulebook
    assert u.cost[U("bakery")] == 8 and u.cost[U("distillery")] == 10
    assert (u.income_base[U("lumberjack")], u.income_upgraded[U("lumberjack")]) == (4, 6)
    assert (u.income_base[U("miner")], u.income_upgraded[U("miner")]) == (6, 8)
    assert u.output[U("field")] == 2 and u.output[U("sheep")] == 1
    assert [GOODS[i] if i >= 0 else None for i in u.good] == [
        "wool", "milk", "grain", "cheese", "bread", "whisky", None, None]
    assert not hasattr(u, "input") and not hasattr(u, "meat")  # fixed by the engine, not data
    assert u.terrain.shape == (8, 3)
    assert u.terrain[U("lumberjack")].tolist() == [False, True, False]
    assert u.terrain[U("miner")][TERRAINS.index("mountain")]
    assert u.terrain[:6, TERRAINS.index("pasture")].all()


def test_economy(rs):
    """R-3.3.1, R-3.4, R-3.5, R-3.6, R-3.7.2."""
    e = rs.economy
    assert (e.merchants_total, e.hire_cost, e.hire_bonus_cost) == (7, 4, 0)
    assert (e.shipping_cost, e.shipping_max_level, e.shipping_bonus_cost) == (4, 5, 0)
    assert (e.technology_cost, e.technology_bonus_cost) == (10, 5)
    assert e.neighborhood_discount.tolist() == [2, 2, 2, 3, 3, 3]
    assert e.neighborhood_limit.tolist() == [0, 0, 4, 3, 3]  # by player count; solo: none


#: the printed tracks of source PHP, cheapest step first
PHP_TRACKS = {"wool": [3, 3, 4, 4, 5, 5, 6, 6, 7, 8], "grain": [3, 3, 4, 5, 6, 6, 7, 7, 8, 8],
              "milk": [3, 4, 5, 5, 6, 6, 7, 7, 8, 8], "bread": [7, 8, 9, 10, 11, 11, 12, 13, 14, 15],
              "cheese": [7, 8, 9, 10, 11, 12, 13, 14, 14, 15],
              "whisky": [8, 9, 10, 11, 12, 13, 13, 14, 15, 16]}


def test_R_3_1_market_is_the_php_tracks(rs):
    """R-1.3, R-3.1: the printed tracks (source PHP), every marker starting on step 3 on both
    sides; the solo 'average' bracket (R-9.2, an estimate) is the start and three steps above."""
    m = rs.market
    assert {g: t.tolist() for g, t in zip(GOODS, m.tracks)} == PHP_TRACKS
    assert m.min.tolist() == [3, 3, 3, 7, 7, 8] and m.max.tolist() == [8, 8, 8, 15, 15, 16]
    assert m.start_step.shape == (5, 6)
    for n in (1, 2, 3, 4):
        assert m.start_steps(n).tolist() == [3] * 6
        assert m.start_prices(n).tolist() == [4, 5, 5, 10, 10, 11]
    assert m.solo_average_steps.tolist() == [[3, 6]] * 6
    prov = {(t, p): s for t, p, _, s in rs.provenance() if t == "market"}
    for g in GOODS:
        assert prov[("market", f"{g}.track")] == "sourced:PHP"
        assert prov[("market", f"{g}.start_step_1_2")] == "sourced:PHP"
        assert prov[("market", f"{g}.start_step_3_4")] == "sourced:PHP"
        assert prov[("market", f"{g}.solo_average_steps")] == "estimate"


def test_market_known_points(rs):
    """The tracks agree with every printed point known: MP's photographed column (7, 6, 6, 5,
    5, 4 circled, 4, 3 from the top) is wool's steps 8 down to 1 with the start on step 3 and
    its bracket on 6, 5, 5, 4 (steps 6..3); DA starts milk at £5 on the 2-player side; EN p.4
    buys two whisky at £10 and leaves the price at £12 (two steps up)."""
    m, wool, milk, whisky = rs.market, G("wool"), G("milk"), G("whisky")
    assert m.tracks[wool][8:0:-1].tolist() == [7, 6, 6, 5, 5, 4, 4, 3]
    assert m.start_steps(2)[wool] == 3 and m.start_prices(2)[wool] == 4
    lo, hi = m.solo_average_steps[wool]
    assert m.tracks[wool][hi:lo - 1:-1].tolist() == [6, 5, 5, 4]
    assert m.start_prices(2)[milk] == 5 and m.start_prices(1)[milk] == 5
    at10 = m.step_of(whisky, 10)
    assert m.tracks[whisky][at10 + 2] == 12


def test_market_step_of_takes_the_cheapest_step(rs):
    m = rs.market
    assert [m.step_of(0, p) for p in (3, 4, 5, 7, 8, 9, 2)] == [0, 2, 4, 8, 9, None, None]


def test_export_board(rs):
    """R-1.4, R-3.2, R-3.8, R-3.7.1, R-3.3.2."""
    x = rs.export_board
    assert x.contract_cost.tolist() == [-5, 0, 5, 10, 15]  # round 1 gains £5, round 5 costs £15
    assert x.slots.tolist() == [0, 6, 6, 5, 6]
    assert x.pass_bonus[4].tolist() == [16, 14, 12, 10]  # community (Automa helper app)
    assert x.pass_bonus[3].tolist() == [16, 14, 12, 0]
    assert x.pass_bonus[2].tolist() == [16, 14, 0, 0]
    assert x.pass_bonus[1, 0] == 16  # solo: every pass
    assert x.import_track_length == 30 and x.import_money_per_mark == 1
    assert np.flatnonzero(x.import_marked).tolist() == list(range(3, 31, 3))
    assert (x.structure_buildings, x.structure_draw, x.structure_keep) == (4, 3, 1)


def test_contracts(rs):
    c = rs.contracts
    assert len(c) == 50 and c.table.shape == (50, 13) and c.columns == CONTRACT_COLUMNS
    assert sorted(c.ids.tolist()) == list(range(1, 51))
    first = dict(zip(CONTRACT_COLUMNS, c.table[0].tolist()))
    assert first == {"need_wool": 4, "need_bread": 0, "need_cheese": 0, "need_whisky": 0,
                     "need_beef": 0, "need_mutton": 0, "gain_cotton": 2, "gain_tobacco": 0,
                     "gain_sugar_cane": 0, "gain_hops": 1, "gain_money": 0,
                     "gain_free_hex": 1, "gain_upgrade": 0}
    assert c.need_goods[0].tolist() == [4, 0, 0, 0, 0, 0]
    assert c.gain_imports[0].tolist() == [2, 0, 0, 1]
    assert c.need_meat[2].tolist() == [2, 0]          # contract 3: 2 beef
    assert c.gain_money[2] == 10 and c.gain_upgrade[9] == 2
    assert not c.need_goods[:, [G("grain"), G("milk")]].any()
    assert (c.need_goods.sum(1) + c.need_meat.sum(1) > 0).all()
    # column sums pin the bundled copy of the community contracts.csv
    assert c.table.sum(0).tolist() == [40, 35, 33, 34, 18, 18, 53, 49, 45, 109, 174, 13, 12]
    assert np.array_equal(c.column("gain_hops"), c.gain_imports[:, 3])


def test_starting_tiles(rs):
    s = rs.starting_tiles
    assert s.money.tolist() == [70, 64, 62, 60, 60, 58, 58, 56, 55]
    assert s.goods[0].tolist() == [0] * 6
    assert s.goods[2].tolist() == [1, 2, 0, 0, 0, 0]        # S3: 2 grain, 1 wool
    assert s.goods[8].tolist() == [1, 1, 0, 0, 0, 1]        # S9: whisky, wool, grain


def test_scoring_tiles(rs):
    """R-6.4 tiles T1-T9."""
    t = rs.scoring_tiles
    assert [SCORING_KINDS[k] for k in t.kind] == list(SCORING_KINDS)
    assert t.glory.tolist() == [1, 3, 1, 2, 3, 1, 2, 1, 2]
    assert t.per.tolist() == [1, 2, 1, 1, 2, 1, 1, 1, 1]
    assert t.optional.tolist() == [False] * 8 + [True]
    assert t.unit_glory[2].tolist() == [1, 1, 2, 1, 1, 1, 0, 0]
    assert t.unit_glory[0].sum() == 0
    assert t.min_land_cost[8] == 5


def test_ports(rs):
    """R-5 P1-P9."""
    p = rs.ports

    def param(port, name):
        return int(p.params[PORTS.index(port), PORT_PARAMS.index(name)])

    assert [PORT_KINDS[k] for k in p.kind] == list(PORT_KINDS)
    assert param("P1", "animals") == 1 and param("P5", "money") == 10
    assert (param("P2", "discard"), param("P2", "gain")) == (1, 3)
    assert param("P6", "steps") == 3
    assert (param("P3", "discard"), param("P3", "gain")) == (1, 2)
    assert param("P7", "units") == 2
    assert (param("P4", "upgrades"), param("P4", "glory")) == (1, 3)
    assert param("P8", "money") == 5 and param("P9", "cost") == 3
    assert p.optional.tolist() == [False] * 8 + [True]
    assert param("P5", "gain") == 0


def test_final_scoring(rs):
    """R-7."""
    f = rs.final_scoring
    assert (f.vp_per_basic_good, f.vp_per_processed_good, f.money_per_vp, f.vp_per_hops) == (
        1, 2, 10, 1)
    assert f.import_vp_by_rank.tolist() == [3, 4, 5]
    assert [IMPORT_GOODS[i] for i in f.import_rarity_order] == ["cotton", "tobacco", "sugar_cane"]
    assert f.static_import_vp == 4
    assert f.export_majority_vp[4].tolist() == [12, 6, 0, 0]
    assert f.export_majority_vp[3].tolist() == [12, 6, 0, 0]
    assert f.export_majority_vp[2].tolist() == [8, 0, 0, 0]
    assert f.settlement_vp[4].tolist() == [18, 12, 6, 0]
    assert f.settlement_vp[2].tolist() == [12, 0, 0, 0]
    assert f.tie_rule == "split_floor" and f.winner_tiebreak == "money"


def test_clans(rs):
    """R-8.1 to R-8.9."""
    c = rs.clans
    C = CLANS.index
    col = CLAN_START_FIELDS.index
    assert c.start[C("buchanan"), col("export_boxes")] == 2
    assert c.start[C("campbell"), col("export_boxes")] == 1
    assert c.start[C("fergusson"), col("workers_to_place")] == 3
    assert (c.start_shipping(C("fergusson"), 2), c.start_shipping(C("fergusson"), 4)) == (2, 3)
    assert (c.start_shipping(C("macdonald"), 1), c.start_shipping(C("macdonald"), 3)) == (1, 0)
    assert (c.start_shipping(C("stewart"), 2), c.start_shipping(C("stewart"), 4)) == (1, 1)
    assert c.start[C("stewart"), col("merchants_in_supply")] == 5
    assert c.start[C("campbell")].tolist() == rs.setup.player_start.tolist() == [2, 1, 2, 0, 0]
    p = c.params
    assert p["buchanan"]["structure_draw"] == 6 and p["buchanan"]["structure_keep"] == 2
    assert p["campbell"]["building_discount"] == (3, 4, 4, 5)
    assert p["cunningham"]["milk_money"] == 8
    assert p["macdonald"]["worker_cost"] == 6 and p["macdonald"]["worker_income"] == 4
    assert p["macdonald"]["technology_allowed"] is False
    assert p["mackenzie"]["whisky_money"] == 3 and p["mackenzie"]["cellar_money"] == (7, 15)
    assert (p["robertson"]["delta_discount_1_2"], p["robertson"]["delta_discount_3_4"]) == (2, 3)
    assert p["stewart"]["market_money"] == 1
    assert p["brewer"]["beer_money"] == 9 and p["brewer"]["beer_max_per_contract"] == 3
    assert c.optional.tolist() == [False] * 8 + [True]


def test_setup(rs):
    """R-1.7, R-1.9, R-2, R-9.4."""
    s = rs.setup
    assert s.rounds == 5 and (s.min_players, s.max_players) == (1, 4)
    assert s.no_clans_seat_money.tolist() == [0, 2, 4, 6]
    assert s.auction_max_bid == 30 and s.extra_clans_drawn == 1
    assert not hasattr(s, "ports_in_play") and not hasattr(s, "port_markers")  # map corners


def test_solo(rs):
    """R-9.2."""
    s = rs.solo
    assert (s.pass_money, s.start_contracts, s.blocked_land_cost) == (16, 5, 1)
    assert s.track_imports is False and s.import_vp == 4
    assert s.market_phase_rounds == (2, 3, 4, 5) and s.goods_changed_per_round == 3
    assert [GOODS[i] for i in s.goods_die] == list(GOODS)
    assert s.price_die.tolist() == [-3, -2, -1, 1, 2, 3]
    assert s.removal_slot[0] == 4  # -3 -> bottom left of the 3x2 grid
    assert sorted(s.removal_slot.tolist()) == list(range(6))
    assert [s.export_points(n) for n in (9, 7, 6, 5, 4)] == [12, 12, 8, 4, 0]
    assert [s.settlement_points(n) for n in (14, 13, 11, 10, 8, 7)] == [18, 12, 12, 6, 6, 0]
    assert [s.rating(v) for v in (0, 115, 116, 145, 146, 161, 300)] == [
        "Newbie", "Newbie", "Rookie", "Average", "Expert", "Genius", "Genius"]


# ---------------------------------------------------------------------------
# Provenance
# ---------------------------------------------------------------------------
def test_every_table_has_a_valid_source(rs):
    assert set(rs.sources) == set(TABLES)
    assert all(source_kind(s) in SOURCES for s in rs.sources.values())
    assert rs.sources["contracts"] == "community"
    assert rs.sources["market"] == "sourced:PHP" and rs.sources["units"] == "rulebook"
    for f in DEFAULT_RULESET_DIR.glob("*.json"):
        assert source_kind(json.loads(f.read_text())["source"]) in SOURCES, f.name


def test_R_9_2_R_7_tags_name_what_the_value_is(rs):
    """R-9.2: the solo passing bonus of £16 is printed on EN p.8 (the solo page; the rating
    bands are on p.9); R-7: the export majority's contract threshold is a reading [interp],
    not a printed number, so it is an estimate."""
    prov = {(t, p): (v, s) for t, p, v, s in rs.provenance()}
    assert prov[("solo", "pass_money")] == (16, "rulebook:EN p.8")
    assert prov[("final_scoring", "export_majority_min_contracts")] == (1, "estimate")


def test_estimates_list_data_md_estimates(rs):
    est = {(t, p): v for t, p, v in rs.estimates()}
    for key, value in {
        ("market", "cheese.solo_average_steps"): [3, 6],
        ("final_scoring", "export_majority_min_contracts"): 1,
        ("export_board", "slots_by_players.3"): 5,
        ("export_board", "import_track.marked_spaces"): list(range(3, 31, 3)),
        ("starting_tiles", "S1.money"): 70, ("starting_tiles", "S9.goods.whisky"): 1,
        ("solo", "removal_slot"): [4, 2, 0, 1, 3, 5],
    }.items():
        assert est.get(key) == value, key
    for key in [("units", "bakery.cost"), ("units", "distillery.cost"), ("units", "miner.cost"),
                ("units", "sheep.cost"), ("units", "field.cost"), ("economy", "shipping.max_level"),
                ("units", "sheep.count"), ("solo", "pass_money"), ("market", "wool.track"),
                ("market", "whisky.start_step_3_4")] + [
                ("export_board", f"contract_cost_by_round[{i}]") for i in range(5)] + [
                ("export_board", f"pass_bonus_by_players.{n}") for n in "234"]:
        assert key not in est, key
    assert not [e for e in rs.estimates() if e[0] in ("clans", "ports", "scoring_tiles", "setup")]
    assert [e for e in rs.estimates() if e[0] == "final_scoring"] == [
        ("final_scoring", "export_majority_min_contracts", 1)]     # a reading [interp]


def _docs_estimates() -> tuple[set, int]:
    """The (table, path, value) items of docs/ruleset.md's Estimates list, and its count line."""
    text = DOCS.read_text()
    section = text[text.index("## Estimates"):]
    items, table = set(), None
    for line in section.splitlines():
        head = re.match(r"- `(\w+)`", line)
        if head:
            table = head.group(1)
            line = line[head.end():]
        for path, value in re.findall(r"`([\w.\[\]]+)` = (\[[-\d, ]*\]|-?\d+)", line):
            items.add((table, path, value.replace(" ", "")))
    count = re.search(r"\*\*(\d+) values are estimates\*\*", section)
    return items, int(count.group(1)) if count else -1


def test_docs_list_every_estimate_and_nothing_else(rs):
    listed, count = _docs_estimates()
    data = {(t, p, json.dumps(v).replace(" ", "")) for t, p, v in rs.estimates()}
    assert not data - listed, "estimates missing from docs/ruleset.md"
    assert not listed - data, "docs/ruleset.md lists values that are not estimates (or differ)"
    assert count == len(rs.estimates()) == len(data), "the count line of docs/ruleset.md"


# ---------------------------------------------------------------------------
# Serialisation
# ---------------------------------------------------------------------------
def test_to_dict_and_fingerprint(rs):
    d = rs.to_dict()
    assert set(d) == set(TABLES)
    json.dumps(d)  # plain JSON
    assert d["contracts"][0]["need_wool"] == 4
    assert re.fullmatch(r"[0-9a-f]{64}", rs.fingerprint())
    again = load_ruleset(d)
    assert again is not rs and again == rs and again.fingerprint() == rs.fingerprint()
    d["market"]["whisky"]["start_step_3_4"] = 4
    assert load_ruleset(d).fingerprint() != rs.fingerprint()
    d2 = rs.to_dict()
    d2["market"]["whisky"]["start_step_3_4"] = 99  # to_dict returns a copy
    assert rs.market.start_prices(3)[G("whisky")] == 11


# ---------------------------------------------------------------------------
# Overrides
# ---------------------------------------------------------------------------
def _default(name: str) -> dict:
    return json.loads((DEFAULT_RULESET_DIR / name).read_text())


def test_directory_override_replaces_only_given_files(tmp_path, rs):
    market = _default("market.json")
    market["whisky"]["start_step_3_4"] = 4
    market["whisky"]["sources"]["start_step_3_4"] = "rulebook"
    (tmp_path / "market.json").write_text(json.dumps(market))
    (tmp_path / "README.md").write_text("other files are ignored")
    got = load_ruleset(tmp_path)
    assert got.market.start_prices(4)[G("whisky")] == 12
    assert got.market.start_prices(2)[G("whisky")] == 11
    assert got.units.cost.tolist() == rs.units.cost.tolist()
    assert got != rs
    est = {(t, p) for t, p, _ in got.estimates()}
    assert ("market", "whisky.start_step_3_4") not in est
    assert ("market", "whisky.solo_average_steps") in est
    prov = {(t, p): s for t, p, _, s in got.provenance()}
    assert prov[("market", "whisky.start_step_3_4")] == "rulebook"
    assert prov[("market", "whisky.start_step_1_2")] == "sourced:PHP"
    assert load_ruleset(str(tmp_path)) == got


def test_directory_override_contracts(tmp_path):
    lines = (DEFAULT_RULESET_DIR / "contracts.csv").read_text().splitlines()
    (tmp_path / "contracts.csv").write_text("\n".join(lines[:11]) + "\n")
    got = load_ruleset(tmp_path)
    assert len(got.contracts) == 10 and got.contracts.ids.tolist() == list(range(1, 11))


def test_directory_unknown_file_is_an_error(tmp_path):
    (tmp_path / "markets.json").write_text("{}")
    with pytest.raises(RulesetError, match="unknown ruleset file 'markets.json'"):
        load_ruleset(tmp_path)


def test_single_file_override_merges(tmp_path, rs):
    over = tmp_path / "override.json"
    over.write_text(json.dumps({
        "units": {"sheep": {"cost": 5, "sources": {"cost": "rulebook"}}},
        "export_board": {"contract_cost_by_round": [-5, 1, 5, 10, 15]},
        "solo": {"pass_money": 15},
    }))
    got = load_ruleset(over)
    assert got.units.cost[U("sheep")] == 5 and got.units.cost[U("cow")] == 9
    assert got.export_board.contract_cost.tolist() == [-5, 1, 5, 10, 15]
    assert got.export_board.pass_bonus[1, 0] == 15
    est = {(t, p) for t, p, _ in got.estimates()}
    assert ("units", "sheep.cost") not in est and ("starting_tiles", "S1.money") in est
    assert got.market.start_step.tolist() == rs.market.start_step.tolist()


def test_single_file_override_whole_table_and_contracts(tmp_path):
    market = _default("market.json")
    market["source"] = "rulebook"
    for g in GOODS:
        market[g]["start_step_1_2"] = 0
    rows = load_ruleset().to_dict()["contracts"][:8]
    got = load_ruleset({"market": market, "contracts": rows})
    assert got.market.start_prices(1).tolist() == got.market.min.tolist()
    assert got.sources["market"] == "rulebook" and len(got.contracts) == 8


@pytest.mark.parametrize("bad, message", [
    ({"markets": {}}, "unknown table 'markets'"),
    ({"units": 3}, "table 'units': expected an object"),
    ([1, 2], "expected an object"),
])
def test_single_file_override_errors(tmp_path, bad, message):
    over = tmp_path / "o.json"
    over.write_text(json.dumps(bad))
    with pytest.raises(RulesetError, match=re.escape(message)):
        load_ruleset(over)


def test_bad_override_paths(tmp_path):
    with pytest.raises(RulesetError, match="no such ruleset"):
        load_ruleset(tmp_path / "nope")
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(RulesetError, match="directory or a .json file"):
        load_ruleset(tmp_path / "x.txt")
    (tmp_path / "broken.json").write_text('{"units": {\n  "sheep": \n}')
    with pytest.raises(RulesetError, match=r"broken\.json.*malformed JSON at line 3"):
        load_ruleset(tmp_path / "broken.json")


# ---------------------------------------------------------------------------
# Broken data files: each error names the file, the table and the field
# ---------------------------------------------------------------------------
def _set(*keys_value):
    *keys, value = keys_value

    def mutate(d):
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value
    return mutate


def _delete(*keys):
    def mutate(d):
        for k in keys[:-1]:
            d = d[k]
        del d[keys[-1]]
    return mutate


BROKEN = [
    # (file, mutation, substrings the message must contain)
    ("market.json", _set("whisky", "start_step_3_4", "ten"),
     ["good 'whisky', field 'start_step_3_4': expected an integer, got \"ten\""]),
    ("market.json", _set("wool", "start_step_1_2", 10),
     ["good 'wool', field 'start_step_1_2'", "step 10 is outside the track's steps 0..9"]),
    ("market.json", _set("milk", "track", [3, 4, 4, 3]),
     ["good 'milk', field 'track'", "[3, 4, 4, 3]: step prices must not fall"]),
    ("market.json", _set("milk", "track", []), ["good 'milk', field 'track'", "at least 1"]),
    ("market.json", _set("bread", "solo_average_steps", [5, 3]),
     ["good 'bread', field 'solo_average_steps'", "[5, 3] must be steps first <= last"]),
    ("market.json", _set("bread", "solo_average_steps", [3, 10]),
     ["good 'bread', field 'solo_average_steps'", "within the track's steps 0..9"]),
    ("market.json", _set("cheese", "solo_average_steps", [3]),
     ["good 'cheese', field 'solo_average_steps'", "expected 2 items, got 1"]),
    ("market.json", _set("wool", "min", 2),
     ["good 'wool': old market key(s) 'min': a track is now 'track'", "'start_step_1_2'",
      "'start_step_3_4'", "'solo_average_steps'"]),
    ("market.json", _set("source", "guess"), ["field 'source'", "unknown source \"guess\""]),
    ("market.json", _delete("source"), ["table 'market'", "missing field 'source'"]),
    ("market.json", _delete("wool", "track"), ["good 'wool'", "missing field 'track'"]),
    ("market.json", _set("whiskey", {}), ["unknown good 'whiskey'"]),
    ("market.json", _delete("cheese"), ["missing good 'cheese'"]),
    ("units.json", _set("bakery", "cost", True),
     ["unit 'bakery', field 'cost'", "booleans are not integers"]),
    ("units.json", _set("sheep", "cost", 4.0), ["unit 'sheep', field 'cost'", "got 4.0"]),
    ("units.json", _set("sheep", "cost", -1), ["unit 'sheep', field 'cost'", "must not be negative"]),
    ("units.json", _set("cow", "count", -4), ["unit 'cow', field 'count'", "must not be negative"]),
    ("units.json", _set("sheep", "cots", 4), ["unit 'sheep'", "unknown field 'cots'"]),
    ("units.json", _set("sheep", "good", "whiskey"),
     ["unit 'sheep', field 'good'", "unknown good \"whiskey\""]),
    ("units.json", _set("miner", "terrain", ["mountains"]),
     ["unit 'miner', field 'terrain', item 1", "unknown terrain \"mountains\""]),
    ("units.json", _set("sheeps", {}), ["unknown unit 'sheeps'"]),
    ("units.json", _set("sheep", "sources", {"costs": "estimate"}),
     ["unit 'sheep', field 'sources', key 'costs'", "names no field"]),
    ("units.json", _set("sheep", "sources", {"cost": "guess"}),
     ["unit 'sheep', field 'sources', key 'cost'", "unknown source"]),
    ("economy.json", _delete("neighborhood", "limit_by_players", "1"),
     ["field 'neighborhood', field 'limit_by_players'", "missing players '1'"]),
    ("economy.json", _set("technology", "cost", "10"),
     ["field 'technology', field 'cost'", "expected an integer, got \"10\""]),
    ("export_board.json", lambda d: (_set("contract_cost_by_round", [-5, 0, 5, 10])(d),
                                     _delete("sources")(d)),
     ["field 'contract_cost_by_round'", "expected 5 values", "setup.rounds"]),
    ("export_board.json", _set("pass_bonus_by_players", "3", [16, 12]),
     ["field 'pass_bonus_by_players', players '3'", "expected 3 values"]),
    ("export_board.json", _set("sources", {"contract_cost_by_round": ["rulebook"]}),
     ["field 'sources', key 'contract_cost_by_round'", "1 sources, but field"]),
    ("export_board.json", _set("import_track", "marked_spaces", [3, 40]),
     ["field 'import_track', field 'marked_spaces'", "within 1..length"]),
    ("export_board.json", _set("contracts_source", "wiki"),
     ["field 'contracts_source'", "unknown source"]),
    ("starting_tiles.json", _set("S2", "goods", {"gold": 1}),
     ["tile 'S2', field 'goods'", "unknown good 'gold'"]),
    ("scoring_tiles.json", _set("T10", {}), ["unknown tile 'T10'"]),
    ("scoring_tiles.json", _set("T1", "kind", "goods"),
     ["tile 'T1', field 'kind'", "unknown scoring kind \"goods\""]),
    ("scoring_tiles.json", _delete("T3", "unit_glory"), ["tile 'T3'", "missing field 'unit_glory'"]),
    ("scoring_tiles.json", _set("T1", "per", 0), ["tile 'T1', field 'per'", "must be >= 1"]),
    ("scoring_tiles.json", _set("T3", "unit_glory", {"fields": 2}),
     ["tile 'T3', field 'unit_glory'", "unknown unit 'fields'"]),
    ("ports.json", _set("P5", "gain", 1), ["port 'P5'", "unknown field 'gain'"]),
    ("ports.json", _set("P9", "optional", "yes"),
     ["port 'P9', field 'optional'", "expected true or false"]),
    ("clans.json", _set("mcdonald", {}), ["unknown clan 'mcdonald'"]),
    ("clans.json", _set("campbell", "building_discount", [3, 4]),
     ["clan 'campbell', field 'building_discount'", "expected 4 values"]),
    ("clans.json", _set("stewart", "merchants_in_supply", 9),
     ["clan 'stewart', field 'merchants_in_supply'", "economy.merchants.total"]),
    ("clans.json", _delete("cunningham", "milk_money"),
     ["clan 'cunningham'", "missing field 'milk_money'"]),
    ("final_scoring.json", _set("import_rarity_order", ["cotton", "coffee", "tobacco"]),
     ["field 'import_rarity_order', item 2", "unknown import good \"coffee\""]),
    ("final_scoring.json", _set("import_rarity_order", ["cotton", "cotton", "tobacco"]),
     ["field 'import_rarity_order'", "duplicate item"]),
    ("final_scoring.json", _set("settlement_vp", "2", [12, 6, 3]),
     ["field 'settlement_vp', players '2'", "3 places for 2 players"]),
    ("setup.json", _set("no_clans_seat_money", [0, 2, 4]),
     ["field 'no_clans_seat_money'", "expected 4 values"]),
    ("setup.json", _set("max_players", 5), ["field 'max_players'", "must be <= 4"]),
    ("solo.json", _set("removal_slot", [4, 2, 0, 1, 3, 6]),
     ["field 'removal_slot', item 6", "slot 6 does not exist"]),
    ("solo.json", _set("price_die", [-3, -2, 0, 1, 2, 3]),
     ["field 'price_die', item 3", "must not be 0"]),
    ("solo.json", _set("export_vp", [{"min": 5, "vp": 4}, {"min": 7, "vp": 12}]),
     ["field 'export_vp'", "strictly decreasing"]),
    ("solo.json", _set("rating", [{"min": 0, "nom": "Newbie"}]),
     ["field 'rating', item 1", "unknown field 'nom'"]),
]


@pytest.mark.parametrize("fname, mutate, expected", BROKEN,
                         ids=[f"{b[0]}:{b[2][-1][:30]}" for b in BROKEN])
def test_broken_json_is_reported_precisely(tmp_path, fname, mutate, expected):
    data = _default(fname)
    mutate(data)
    (tmp_path / fname).write_text(json.dumps(data, indent=1))
    with pytest.raises(RulesetError) as info:
        load_ruleset(tmp_path)
    msg = str(info.value)
    table = fname.removesuffix(".json")
    assert msg.startswith(str(tmp_path / fname) + f": table '{table}'"), msg
    for part in expected:
        assert part in msg, msg
    assert isinstance(info.value, ValueError)


def test_brief_example_message(tmp_path):
    data = _default("market.json")
    data["whisky"]["start_step_3_4"] = "ten"
    (tmp_path / "market.json").write_text(json.dumps(data))
    with pytest.raises(RulesetError) as info:
        load_ruleset(tmp_path)
    assert str(info.value).endswith(
        "market.json: table 'market', good 'whisky', field 'start_step_3_4': "
        "expected an integer, got \"ten\"")


def test_malformed_json_names_line(tmp_path):
    (tmp_path / "ports.json").write_text('{\n  "source": "rulebook",\n  "P1": {,\n}')
    with pytest.raises(RulesetError, match=r"ports\.json: table 'ports': malformed JSON at line 3"):
        load_ruleset(tmp_path)


def _csv_lines():
    return (DEFAULT_RULESET_DIR / "contracts.csv").read_text().splitlines()


def _mutate_cell(row, col, value):
    def mutate(lines):
        cells = lines[row].split(",")
        cells[lines[0].split(",").index(col)] = value
        lines[row] = ",".join(cells)
    return mutate


def _rename_column(old, new):
    def mutate(lines):
        lines[0] = lines[0].replace(old, new)
    return mutate


def _add_need_grain(lines):
    lines[:] = [ln + (",need_grain" if i == 0 else ",1") for i, ln in enumerate(lines)]


BROKEN_CSV = [
    (_rename_column("need_wool", "need_wol"), ["header", "unknown column 'need_wol'"]),
    (_add_need_grain, ["header, column 'need_grain'", "may not need grain or milk"]),
    (_rename_column("need_cheese", "need_milk"), ["column 'need_milk'", "grain or milk"]),
    (_mutate_cell(3, "need_cheese", "x"),
     ["row 3 (line 4), column 'need_cheese': expected an integer, got \"x\""]),
    (_mutate_cell(5, "gain_money", "-2"), ["row 5 (id 5), column 'gain_money'", "must not be negative"]),
    (_mutate_cell(4, "id", "2"), ["row 4 (id 2), column 'id'", "duplicate contract id 2 (also row 2)"]),
    (lambda lines: lines.append("51,0,0,0,0,0,0,1,0,0,0,0,0,0"),
     ["row 51 (id 51)", "needs nothing"]),
    (lambda lines: lines.__setitem__(2, "2,6,0"), ["row 2 (line 3)", "expected 14 cells, got 3"]),
    (lambda lines: lines.__delitem__(slice(0, None)), ["the file is empty"]),
]


@pytest.mark.parametrize("mutate, expected", BROKEN_CSV, ids=[b[1][-1][:30] for b in BROKEN_CSV])
def test_broken_contracts_csv(tmp_path, mutate, expected):
    lines = _csv_lines()
    mutate(lines)
    (tmp_path / "contracts.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(RulesetError) as info:
        load_ruleset(tmp_path)
    msg = str(info.value)
    assert msg.startswith(str(tmp_path / "contracts.csv") + ": table 'contracts'"), msg
    for part in expected:
        assert part in msg, msg


def test_contract_rows_from_json_are_checked():
    rows = load_ruleset().to_dict()["contracts"]
    rows[0]["need_wool"] = True
    with pytest.raises(RulesetError, match=r"<override>: table 'contracts', row 1 \(id 1\), "
                                           r"column 'need_wool'.*booleans"):
        load_ruleset({"contracts": rows})
    with pytest.raises(RulesetError, match="cannot fill 6 export slots"):
        load_ruleset({"contracts": rows[1:4]})


def test_bundled_directory_copy_loads_equal(tmp_path, rs):
    for f in DEFAULT_RULESET_DIR.iterdir():
        shutil.copy(f, tmp_path / f.name)
    assert load_ruleset(tmp_path) == rs


# ---------------------------------------------------------------------------
# Fields the engine never read are gone (unknown keys are rejected)
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("over, message", [
    ({"setup": {"ports_in_play": 4}}, "table 'setup': unknown field 'ports_in_play'"),
    ({"setup": {"port_markers": 4}}, "table 'setup': unknown field 'port_markers'"),
    ({"units": {"bakery": {"input": "grain"}}}, "unit 'bakery': unknown field 'input'"),
    ({"units": {"cow": {"meat": "beef"}}}, "unit 'cow': unknown field 'meat'"),
])
def test_removed_fields_are_rejected(over, message):
    """R-5 / R-6.3 / R-3.7: port corners, building inputs and meat are fixed by the engine."""
    with pytest.raises(RulesetError, match=re.escape(message)):
        load_ruleset(over)


# ---------------------------------------------------------------------------
# Values the engine cannot honour (capacities of its arrays and action ids)
# ---------------------------------------------------------------------------
def _many_contracts(n):
    row = load_ruleset().to_dict()["contracts"][0]
    return [{**row, "id": i} for i in range(1, n + 1)]


ENGINE_REFUSES = [
    # (override, substrings: the path, the allowed range, the capacity named)
    ({"economy": {"neighborhood": {"limit_by_players": {"2": 5}}}},
     ["field 'neighborhood', field 'limit_by_players', players '2'", "5 is outside 0..4",
      "MAX_NB_BUY"]),
    ({"export_board": {"structure_bonus": {"draw": 7}}},
     ["field 'structure_bonus', field 'draw'", "7 is outside 0..6", "MAX_DRAW"]),
    ({"clans": {"buchanan": {"structure_draw": 7}}},
     ["clan 'buchanan', field 'structure_draw'", "0..6", "MAX_DRAW"]),
    ({"ports": {"P6": {"steps": 4}}}, ["port 'P6', field 'steps'", "4 is outside 1..3"]),
    ({"export_board": {"slots_by_players": {"4": 7}}},
     ["field 'slots_by_players', players '4'", "1..6", "MAX_SLOTS"]),
    ({"economy": {"merchants": {"total": 9}}},
     ["field 'merchants', field 'total'", "0..8", "MAX_MERCHANTS"]),
    ({"economy": {"shipping": {"max_level": 8}}},
     ["field 'shipping', field 'max_level'", "1..7", "MAX_LEVEL"]),
    ({"export_board": {"import_track": {"length": 64}}},
     ["field 'import_track', field 'length'", "1..63", "MAX_TRACK"]),
    ({"clans": {"brewer": {"beer_max_per_contract": 4}}},
     ["clan 'brewer', field 'beer_max_per_contract'", "0..3", "MAX_BREW"]),
    ({"setup": {"auction_max_bid": 31}}, ["field 'auction_max_bid'", "0..30", "MAX_BID"]),
    ({"setup": {"rounds": 6},
      "export_board": {"contract_cost_by_round": [-5, 0, 5, 10, 15, 20],
                       "sources": {"contract_cost_by_round": ["rulebook"] * 6}}},
     ["field 'rounds'", "1..5", "N_ROUNDS_MAX"]),
    ({"clans": {"stewart": {"export_boxes": 3}}},
     ["clan 'stewart', field 'export_boxes'", "0..2", "MAX_BOXES"]),
    ({"units": {"bakery": {"count": 5}}, "clans": {"campbell": {"building_discount": [3] * 5}}},
     ["unit 'bakery', field 'count'", "0..4", "MAX_PROCESS"]),
    ({"solo": {"goods_die": list(GOODS) * 3}},
     ["field 'goods_die'", "18 items, outside the allowed length 1..12", "MAX_DIE"]),
    ({"contracts": _many_contracts(65)}, ["table 'contracts'", "65 items", "1..64",
                                          "MAX_CONTRACTS"]),
    ({"setup": {"extra_clans_drawn": 2}}, ["field 'extra_clans_drawn'", "1..1"]),
    ({"ports": {"P7": {"units": 3}}}, ["port 'P7', field 'units'", "1..2"]),
]


@pytest.mark.parametrize("over, expected", ENGINE_REFUSES,
                         ids=[e[1][0][:40] for e in ENGINE_REFUSES])
def test_engine_refuses_what_it_cannot_honour(over, expected):
    """R-3.3.1 (neighborhood purchases), R-3.3.2 / R-8.1 (structure draw), P6 (price steps) and
    every other capacity: the override loads, the engine refuses it naming file, table, field
    and the allowed range (derived from its MAX_* constants)."""

    rs = load_ruleset(over)
    with pytest.raises(RulesetError) as info:
        check_engine_support(rs)
    msg = str(info.value)
    assert msg.startswith("<override>: table '"), msg
    for part in expected:
        assert part in msg, msg


def test_engine_limits_follow_its_constants():
    """R-3.3.1 / R-3.3.2 / P6: the bounds are the engine's capacities, not literals."""

    bound = {(t, p): hi for t, p, lo, hi, why, length in CAPACITY_LIMITS}
    assert bound["economy", "neighborhood.limit_by_players.*"] == MAX_NB_BUY == 4
    assert bound["export_board", "structure_bonus.draw"] == MAX_DRAW == 6
    assert bound["ports", "P6.steps"] == max(PRICE_DELTAS) == 3


def test_game_refuses_an_override_the_engine_cannot_honour(tmp_path):
    """R-3.3.1: a purchase limit above the action ids is refused when a game is built."""

    over = tmp_path / "o.json"
    over.write_text(json.dumps({"economy": {"neighborhood": {"limit_by_players": {"4": 6}}}}))
    with pytest.raises(RulesetError, match=re.escape(f"{over}: table 'economy'") + ".*players '4'"):
        Game(num_players=4, seed=0, ruleset=str(over))


def test_default_ruleset_fits_the_engine(rs):

    check_engine_support(rs)
