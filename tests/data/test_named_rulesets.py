"""Provenance vocabulary and Ruleset.provenance(), named bundled rulesets, fingerprints of the
numbers only, and Automa data in a ruleset folder (docs/ruleset.md, docs/automa.md)."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from caledonia_env import Game, GameConfig
from caledonia_env.cli import main
from caledonia_env.data import (
    DEFAULT_RULESET_DIR, RULESETS_DIR, SOURCE_IDS, SOURCES, RulesetError, UNITS, bundled_rulesets,
    load_ruleset,
)
from caledonia_env.data.automa import AUTOMA_DIR
from caledonia_env.data.estimates import strip_provenance
from caledonia_env.data.names import source_kind
from caledonia_env.engine import layout as L
from caledonia_env.engine.board import pofs

#: sha256 of the numbers of the bundled default as of 2026-11 (= estimates-2026-11, forever)
ESTIMATES_2026_11 = "81baf3f4d327e44d6610ec24f041f3a5b15e7141e2b804ca7b00cdac1355473e"
#: the default's fingerprint before provenance was left out of it (records_v2.json carries it)
LEGACY_DEFAULT = "0fca3a26a6a82a1882e4b299f5b68a114f42e430d49f8e8806bd0f8e34daa3fd"


@pytest.fixture(scope="module")
def rs():
    return load_ruleset()


# ---------------------------------------------------------------- provenance vocabulary
@pytest.mark.parametrize("source, kind", [
    ("rulebook", "rulebook"), ("rulebook:EN p.3", "rulebook"), ("erratum", "erratum"),
    ("faq:solo imports", "faq"), ("sourced:PB", "sourced"), ("sourced:EN/PB/BGA", "sourced"),
    ("community", "community"), ("community:Automa helper app", "community"),
    ("estimate", "estimate"),
])
def test_source_forms(source, kind):
    assert source_kind(source) == kind


@pytest.mark.parametrize("source", ["guess", "sourced", "sourced:", "sourced:XY",
                                    "sourced:PB/PB", "sourced:pb", "estimate:mine", "rulebook:",
                                    "Rulebook", 3, None])
def test_bad_source_forms(source):
    with pytest.raises(ValueError, match="unknown source .*allowed: rulebook, rulebook:<where>"):
        source_kind(source)


@pytest.mark.parametrize("where, value", [
    ("sources", {"cost": "sourced:XY"}), ("source", "sourced:PB/"), ("sources", {"cost": "FAQ"})])
def test_bad_source_in_a_file_names_file_field_and_forms(tmp_path, where, value):
    d = json.loads((DEFAULT_RULESET_DIR / "units.json").read_text())
    d["sheep"][where] = value
    (tmp_path / "units.json").write_text(json.dumps(d))
    with pytest.raises(RulesetError) as ex:
        load_ruleset(str(tmp_path))
    msg = str(ex.value)
    assert msg.startswith(f"{tmp_path / 'units.json'}: table 'units', unit 'sheep', field '{where}'")
    assert "unknown source" in msg and "sourced:<ID>" in msg and ", ".join(SOURCE_IDS) in msg
    assert "\n" not in msg


def test_provenance_covers_every_value(rs):
    prov = rs.provenance()
    leaves = 0
    for table, data in strip_provenance(rs.to_dict()).items():
        stack = [data]
        while stack:
            x = stack.pop()
            if isinstance(x, dict):
                stack.extend(x.values())
            elif isinstance(x, list) and any(isinstance(i, dict) for i in x):
                stack.extend(x)
            else:
                leaves += 1
    # a list with per-item sources (contract_cost_by_round: 5 values) is one leaf here and
    # one provenance row per item there
    per_item = len(rs.export_board.contract_cost)
    assert len(prov) == leaves - 1 + per_item
    assert all(source_kind(s) in SOURCES for *_, s in prov)
    got = {(t, p): (v, s) for t, p, v, s in prov}
    assert got[("units", "sheep.cost")] == (8, "sourced:PB")
    assert got[("economy", "shipping.max_level")] == (5, "sourced:EN/PB/BGA")
    assert got[("units", "bakery.cost")] == (8, "rulebook:Campbell and Robertson examples")
    assert got[("units", "miner.income_upgraded")] == (8, "rulebook:EN p.3")
    assert got[("units", "sheep.count")] == (4, "rulebook")
    assert got[("export_board", "contract_cost_by_round[4]")] == (15, "rulebook:Buchanan example")
    assert got[("export_board", "contract_cost_by_round[2]")][1].startswith("community")
    assert got[("export_board", "pass_bonus_by_players.4")] == (
        [16, 14, 12, 10], "community:Automa helper app")
    assert got[("scoring_tiles", "T3.unit_glory.field")] == (2, "rulebook")
    assert got[("contracts", "[0].need_wool")] == (4, "community")
    assert got[("market", "whisky.track")] == ([8, 9, 10, 11, 12, 13, 13, 14, 15, 16],
                                               "sourced:PHP")
    assert sum(t == "contracts" for t, *_ in prov) == len(rs.contracts) * 14
    assert [(t, p, v) for t, p, v, s in prov if s == "estimate"] == rs.estimates()


def test_provenance_is_not_part_of_the_fingerprint(rs):
    d = rs.to_dict()
    d["units"]["sheep"]["sources"]["cost"] = "estimate"
    d["units"]["note"] = "checked against my copy"
    marked = load_ruleset(d)
    assert marked.fingerprint() == rs.fingerprint()
    assert ("units", "sheep.cost", 8) in marked.estimates()
    d["units"]["sheep"]["cost"] = 5
    assert load_ruleset(d).fingerprint() != rs.fingerprint()


def test_records_of_the_earlier_fingerprints_match_estimates_2026_11(rs):
    est = load_ruleset("estimates-2026-11")
    assert est.fingerprint() == ESTIMATES_2026_11
    assert est.matches_fingerprint(LEGACY_DEFAULT) and est.matches_fingerprint(ESTIMATES_2026_11)
    assert rs.matches_fingerprint(rs.fingerprint())
    assert not rs.matches_fingerprint(LEGACY_DEFAULT)        # the default's numbers moved
    assert not rs.matches_fingerprint(ESTIMATES_2026_11)
    assert not rs.matches_fingerprint("0" * 64)


# ---------------------------------------------------------------- named rulesets
def test_bundled_names():
    assert bundled_rulesets() == ("estimates-2026-11", "market-estimate-2026-11")
    assert sorted(p.name for p in RULESETS_DIR.iterdir()) == [
        "estimates-2026-11.json", "market-estimate-2026-11.json"]


SOURCED = {"sheep": 8, "cow": 9, "field": 18, "cheese_dairy": 12}
ESTIMATED = {"sheep": 4, "cow": 6, "field": 6, "cheese_dairy": 8}


def test_R_3_3_R_3_4_the_default_holds_the_sourced_unit_costs_and_shipping_track(rs):
    """R-3.3 unit costs (player board, sourced:PB) and R-3.4 shipping: five upgrades."""
    cost = dict(zip(UNITS, rs.units.cost.tolist()))
    assert {u: cost[u] for u in SOURCED} == SOURCED
    assert rs.economy.shipping_max_level == 5
    prov = {(t, p): s for t, p, _, s in rs.provenance()}
    assert all(prov[("units", f"{u}.cost")] == "sourced:PB" for u in SOURCED)
    assert prov[("economy", "shipping.max_level")] == "sourced:EN/PB/BGA"
    assert len(rs.estimates()) == 41


def test_estimates_2026_11_restates_the_numbers_of_that_default(rs):
    est = load_ruleset("estimates-2026-11")
    assert est.fingerprint() == ESTIMATES_2026_11 != rs.fingerprint()
    cost = dict(zip(UNITS, est.units.cost.tolist()))
    assert {u: cost[u] for u in ESTIMATED} == ESTIMATED
    assert est.economy.shipping_max_level == 6
    # everything else is today's default: the five sourced values are the only difference
    assert {u: c for u, c in cost.items() if u not in ESTIMATED} \
        == {u: c for u, c in zip(UNITS, rs.units.cost.tolist()) if u not in ESTIMATED}
    # the five values and the old market are estimates there (whisky's track item by item,
    # but for the whisky example's two rulebook prices); the rest is today's default
    old_market = [e for e in est.estimates() if e[0] == "market"]
    assert len(old_market) == 5 * 4 + (11 - 2) + 3
    assert ("market", "whisky.track[3]", 10) not in old_market
    others = [e for e in rs.estimates() if e[0] != "market"]
    assert len(est.estimates()) == len(others) + 5 + len(old_market) == 72
    assert all(e in est.estimates() for e in others)
    # the file itself marks each value it holds as an estimate (so it stays one after the
    # default's provenance moves)
    over_rs = load_ruleset(json.loads((RULESETS_DIR / "estimates-2026-11.json").read_text()))
    listed = {(t, p) for t, p, _ in est.estimates()}
    assert {(t, p) for t, p, _, s in over_rs.provenance() if s == "estimate"} >= listed
    # the same numbers as a path give the same ruleset
    assert load_ruleset(str(RULESETS_DIR / "estimates-2026-11.json")) == est


def test_R_3_1_market_estimate_2026_11_restores_the_old_tracks(rs):
    """The named ruleset market-estimate-2026-11 is the default but for the market: the old
    estimate of £1 steps (the whisky example's £10 and £12 marked rulebook), as played before
    the printed tracks (PHP) became the default."""
    old = load_ruleset("market-estimate-2026-11")
    m = old.market
    ends = ((2, 9), (2, 9), (3, 10), (5, 14), (6, 15), (7, 17))
    assert [t.tolist() for t in m.tracks] == [list(range(lo, hi + 1)) for lo, hi in ends]
    assert m.start_prices(4).tolist() == m.start_prices(2).tolist() == [4, 4, 5, 8, 9, 10]
    band = [[int(t[a]), int(t[b])] for t, (a, b) in zip(m.tracks, m.solo_average_steps)]
    assert band == [[4, 6], [4, 6], [5, 7], [8, 10], [9, 11], [10, 12]]
    mine, default = strip_provenance(old.to_dict()), strip_provenance(rs.to_dict())
    assert {k for k in mine if mine[k] != default[k]} == {"market"}
    assert mine["market"] == strip_provenance(load_ruleset("estimates-2026-11").to_dict())["market"]
    prov = {p: s for t, p, _, s in old.provenance() if t == "market"}
    assert {p for p, s in prov.items() if s != "estimate"} == {"whisky.track[3]", "whisky.track[5]"}
    g = Game(GameConfig(num_players=2, seed=3, ruleset="market-estimate-2026-11"))
    assert int(g.tables[L.T_PRICE_START + 5]) == 10 and g.ruleset == old


def test_the_robustness_ranges_mix_toward_the_named_old_tracks():
    """Each market track's range (estimate_ranges.json, kind track_mix) ends at the track of
    the named ruleset market-estimate-2026-11, so that the old estimate lies inside it."""
    from caledonia_env.data.ranges import load_ranges
    old = load_ruleset("market-estimate-2026-11").to_dict()["market"]
    ranges = load_ranges()
    for good in ("wool", "grain", "milk", "bread", "cheese", "whisky"):
        entry = ranges[f"market:{good}.track"]
        assert entry.kind == "track_mix" and list(entry.to) == old[good]["track"], good


def test_unknown_name_lists_the_bundled_names():
    with pytest.raises(RulesetError) as ex:
        load_ruleset("sourced-2026-11")    # the default since 2026-11-26
    assert str(ex.value) == ("sourced-2026-11: no such ruleset directory or file, nor a bundled "
                             "ruleset name (bundled: estimates-2026-11, market-estimate-2026-11)")


def test_a_bundled_name_wins_over_a_same_named_folder(tmp_path, monkeypatch):
    (tmp_path / "estimates-2026-11").mkdir()
    (tmp_path / "estimates-2026-11" / "units.json").write_text("{")
    monkeypatch.chdir(tmp_path)
    assert load_ruleset("estimates-2026-11").economy.shipping_max_level == 6
    with pytest.raises(RulesetError, match="malformed JSON"):
        load_ruleset("./estimates-2026-11")


def test_game_config_takes_a_name():
    g = Game(GameConfig(num_players=2, seed=3, ruleset="estimates-2026-11"))
    assert g.ruleset == load_ruleset("estimates-2026-11")
    assert int(g.tables[L.T_SHIP_MAX]) == 6
    while not g.is_terminal:
        g.step(int(g.legal_actions()[-1]))
        assert max(int(g.state[pofs(p) + L.P_SHIP]) for p in range(2)) <= 6
    again = Game.from_json(json.loads(g.to_json()))   # the record names the ruleset
    assert again.history == g.history and again.ruleset == g.ruleset


def test_cli_play_with_a_named_ruleset(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["play", "--ruleset", "estimates-2026-11", "--players", "greedy,random",
                 "--games", "2", "-q", "--out", str(out)]) in (0, None)
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 4
    assert {r["ruleset"] for r in rows} == {"estimates-2026-11"}
    assert {r["ruleset_fingerprint"] for r in rows} == {ESTIMATES_2026_11}
    assert main(["play", "--ruleset", "nope", "--players", "greedy,random", "--games", "1"]) == 2
    assert "bundled: estimates-2026-11" in capsys.readouterr().err


def test_cli_plays_the_old_market(tmp_path):
    """docs/ruleset.md: --ruleset market-estimate-2026-11 plays the old £1-step market."""
    out = tmp_path / "m.csv"
    assert main(["play", "--ruleset", "market-estimate-2026-11", "--players", "greedy,random",
                 "--games", "1", "-q", "--out", str(out)]) in (0, None)
    rows = list(csv.DictReader(out.open()))
    assert {r["ruleset"] for r in rows} == {"market-estimate-2026-11"}
    assert {r["ruleset_fingerprint"] for r in rows} == {
        load_ruleset("market-estimate-2026-11").fingerprint()}


# ---------------------------------------------------------------- Automa data in a ruleset
def _automa_folder(tmp_path, money):
    d = json.loads((AUTOMA_DIR / "automa.json").read_text())
    d["levels"][2]["money"] = money
    (tmp_path / "automa.json").write_text(json.dumps(d))
    return str(tmp_path)


def test_a_ruleset_folder_may_carry_automa_data(tmp_path):
    folder = _automa_folder(tmp_path, 90)
    assert load_ruleset(folder) == load_ruleset()     # the game tables are the default ones
    base = Game(GameConfig(num_players=3, automa={0: 3}, seed=5))
    own = Game(GameConfig(num_players=3, automa={0: 3}, seed=5, ruleset=folder))
    assert int(base.tables[L.T_AM_MONEY + 3]) == 70 and int(own.tables[L.T_AM_MONEY + 3]) == 90
    money = L.P_MONEY + pofs(0)
    assert int(own.state[money]) == int(base.state[money]) + 20
    plain = Game(GameConfig(num_players=3, automa={0: 3}, seed=5))
    assert (plain.state == base.state).all()           # the default is unchanged


def test_bad_automa_data_in_a_ruleset_folder_is_a_ruleset_error(tmp_path):
    shutil.copy(AUTOMA_DIR / "automa.json", tmp_path / "automa.json")
    rows = (AUTOMA_DIR / "automa_cards.csv").read_text().splitlines()
    rows[1] = rows[1].replace("technology_upgrade", "fly")
    (tmp_path / "automa_cards.csv").write_text("\n".join(rows))
    with pytest.raises(RulesetError, match=r"automa_cards.csv row 2: action 'fly'"):
        load_ruleset(str(tmp_path))
    (tmp_path / "automa_cards.csv").unlink()
    (tmp_path / "automa.jsn").write_text("{}")       # other names stay refused
    load_ruleset(str(tmp_path))
    (tmp_path / "automata.json").write_text("{}")
    with pytest.raises(RulesetError, match=r"unknown ruleset file 'automata.json' .*automa.json"):
        load_ruleset(str(tmp_path))


def test_the_old_default_from_the_cli_plays_the_rules_of_2026_11(tmp_path):
    """--ruleset estimates-2026-11 --variant first-edition-swap,fixed-solo-imports and the
    three readings before #76 is GameConfig(**RULES_2026_11): the numbers and the readings of
    that default."""
    from caledonia_env.config import RULES_2026_11
    from caledonia_env.tournament.variants import variant_options
    opts = variant_options("first-edition-swap,fixed-solo-imports,any-second-contract,left-pays-cellar,capped-import-rarity")
    assert {"ruleset": "estimates-2026-11", **opts} == RULES_2026_11
    out = tmp_path / "old.csv"
    assert main(["play", "--solo", "--players", "greedy", "--ruleset", "estimates-2026-11",
                 "--variant", "first-edition-swap,fixed-solo-imports,any-second-contract,left-pays-cellar,capped-import-rarity", "--games", "2", "-q",
                 "--out", str(out)]) in (0, None)
    rows = list(csv.DictReader(out.open()))
    assert {r["variants"] for r in rows} == {"solo+first-edition-swap+fixed-solo-imports+"
                                             "any-second-contract+left-pays-cellar+"
                                             "capped-import-rarity"}
    assert {r["ruleset_fingerprint"] for r in rows} == {ESTIMATES_2026_11}
