"""Perturbed module sides (map/perturb.py), a ruleset that carries its own sides (the
optional ``maps`` table) and the ``map:sides`` range that draws them (docs/map.md,
docs/ruleset.md)."""
import copy
import json

import numpy as np
import pytest

from caledonia_env.config import GameConfig
from caledonia_env.data import RulesetError, load_ruleset
from caledonia_env.data.ranges import SIDES_KEY, load_ranges, ruleset_dimensions
from caledonia_env.game import Game
from caledonia_env.map import MODULE_SIDES, all_configs, build_board, parse_side
from caledonia_env.map.format import MAPS_DIR
from caledonia_env.map.perturb import (COUNTS, draw_changes, perturb_side, side_counts,
                                       terrain_changes)
from caledonia_env.tournament import perturb as pt

#: the bundled default's fingerprint before rulesets could carry sides: it must not move
DEFAULT_FINGERPRINT = "da2ff9ad19feb50dd5648b2a459b6ec3a7a37032a4cd89c485e69a67f1fd8cd9"
BOUNDS = {"loch": (-2, 2), "delta": (-2, 2), "cost_1": (-2, 2), "terrain": (0, 4)}


def _side(name):
    with open(f"{MAPS_DIR}/{name}.json", encoding="utf-8") as f:
        return json.load(f)


def _moved(before, after):
    c0, c1 = side_counts(before), side_counts(after)
    return {"loch": c1["loch"] - c0["loch"], "delta": c1["delta"] - c0["delta"],
            "cost_1": c1["cost_1"] - c0["cost_1"], "terrain": terrain_changes(before, after)}


@pytest.mark.parametrize("name", MODULE_SIDES)
def test_a_perturbed_side_parses_and_moves_exactly_the_counts_it_reports(name):
    side = _side(name)
    original = copy.deepcopy(side)
    for seed in range(40):
        out, done = perturb_side(side, np.random.default_rng([seed]), BOUNDS)
        parse_side(out, expected_name=name)
        assert done == _moved(side, out), seed
        for k, (lo, hi) in BOUNDS.items():
            assert lo <= done[k] <= hi, (seed, k)
        assert {h["id"] for h in out["hexes"]} == {h["id"] for h in side["hexes"]}
        assert out["ports"] == side["ports"] and out["grid"] == side["grid"]
        ports = {x for spec in side["ports"].values() for k, v in spec.items() if k != "at"
                 for x in v}
        old = {h["id"]: h for h in side["hexes"]}
        for h in out["hexes"]:           # a port's hexes stay land or loch as they were
            if h["id"] in ports:
                assert (h["terrain"] == "loch") == (old[h["id"]]["terrain"] == "loch")
    assert side == original                       # the input is left as it was


@pytest.mark.parametrize("name", MODULE_SIDES)
def test_every_bundled_side_takes_each_single_change(name):
    """One loch, delta and £1 hex either way and a few terrains are reachable on every
    bundled side (all its deltas sit on river mouths, so a delta moves with a river edge)."""
    side = _side(name)
    for k in ("loch", "delta", "cost_1"):
        for want in (-1, 1):
            out, done = perturb_side(side, np.random.default_rng(7), changes={k: want})
            assert done[k] == want and _moved(side, out)[k] == want, (k, want)
            assert all(done[j] == 0 for j in COUNTS if j != k)
    out, done = perturb_side(side, np.random.default_rng(7), changes={"terrain": 3})
    assert done["terrain"] == 3 == terrain_changes(side, out)


def test_perturbation_is_seeded_and_refuses_unknown_counts():
    side = _side("C2")
    a = perturb_side(side, np.random.default_rng(3), BOUNDS)
    b = perturb_side(side, np.random.default_rng(3), BOUNDS)
    assert a == b
    assert draw_changes({"loch": (1, 1)}, np.random.default_rng(0)) == {
        "loch": 1, "delta": 0, "cost_1": 0, "terrain": 0}
    with pytest.raises(ValueError, match="unknown side count"):
        perturb_side(side, np.random.default_rng(0), changes={"river": 1})
    with pytest.raises(ValueError, match="terrain is a number of hexes"):
        perturb_side(side, np.random.default_rng(0), changes={"terrain": -1})


def test_perturbed_sides_assemble_in_every_configuration():
    rng = np.random.default_rng(11)
    sides = {n: perturb_side(_side(n), rng, BOUNDS)[0] for n in MODULE_SIDES}
    for cfg in all_configs():
        for n in (2, 4):
            b = build_board(cfg, num_players=n, sides=sides)
            assert b.config == cfg and b.n_nodes == b.n_hex + 4


# ---------------------------------------------------------------- a ruleset with its own sides
def _perturbed_a1():
    out, done = perturb_side(_side("A1"), np.random.default_rng(0),
                             changes={"loch": 1, "cost_1": 1, "terrain": 2})
    assert done == {"loch": 1, "delta": 0, "cost_1": 1, "terrain": 2}
    return out


def test_a_ruleset_without_sides_keeps_its_fingerprint():
    assert load_ruleset().fingerprint() == DEFAULT_FINGERPRINT
    assert load_ruleset().maps == {} and "maps" not in load_ruleset().to_dict()
    assert load_ruleset({"maps": {}}).fingerprint() == DEFAULT_FINGERPRINT
    assert load_ruleset(load_ruleset().to_dict()).fingerprint() == DEFAULT_FINGERPRINT


def test_a_ruleset_carrying_sides_plays_its_games_on_them(tmp_path):
    side = _perturbed_a1()
    path = tmp_path / "own.json"
    path.write_text(json.dumps({"maps": {"A1": side}}))
    rs = load_ruleset(str(path))
    assert rs.fingerprint() != DEFAULT_FINGERPRINT and set(rs.maps) == {"A1"}
    assert load_ruleset(rs.to_dict()) == rs                      # the sides round-trip
    renoted = dict(side, notes="other words")                   # notes are not the layout
    assert load_ruleset({"maps": {"A1": renoted}}) == rs
    cfg = dict(num_players=2, seed=4, map=("A1", "B2", "C1", "D2"))
    own = Game(GameConfig(ruleset=str(path), **cfg))
    base = Game(GameConfig(**cfg))
    assert own.board.labels == base.board.labels
    old = {h["id"]: h for h in _side("A1")["hexes"]}
    new_loch = next(h["id"] for h in side["hexes"]
                    if h["terrain"] == "loch" and old[h["id"]]["terrain"] != "loch")
    v = own.board.node(f"A1-{new_loch:02d}")
    assert own.board.is_land(v) is False and base.board.is_land(v) is True
    assert (own.board.land_cost != base.board.land_cost).any()
    b2 = [i for i, lab in enumerate(base.board.labels) if lab.startswith("B2-")]
    assert (own.board.terrain[b2] == base.board.terrain[b2]).all()   # other sides bundled
    rng = np.random.default_rng(0)
    for _ in range(100000):
        if own.is_terminal:
            break
        own.step(int(rng.choice(own.legal_actions())))
    assert own.is_terminal
    again = Game(GameConfig(**cfg))                              # the bundled board is unchanged
    assert (again.board.terrain == base.board.terrain).all()


def test_a_ruleset_folder_may_carry_sides_in_maps_json(tmp_path):
    (tmp_path / "maps.json").write_text(json.dumps({"A1": _perturbed_a1()}))
    rs = load_ruleset(str(tmp_path))
    assert set(rs.maps) == {"A1"} and rs != load_ruleset()
    g = Game(GameConfig(num_players=4, seed=1, map="A1,B1,C1,D1", ruleset=str(tmp_path)))
    assert (g.board.terrain != build_board("A1,B1,C1,D1", 4).terrain).any()


def test_a_bad_carried_side_is_a_ruleset_error_naming_the_side_and_hex(tmp_path):
    side = _side("A1")
    side["hexes"][7]["delta"] = False
    with pytest.raises(RulesetError, match=r"table 'maps': side A1: hex A1-07 \(col 3, row 1\)"
                                           r".*must be marked \"delta\": true"):
        load_ruleset({"maps": {"A1": side}})
    with pytest.raises(RulesetError, match=r"side E1: a ruleset carries sides of the bundled"):
        load_ruleset({"maps": {"E1": _side("A1")}})
    with pytest.raises(RulesetError, match=r"'side' is 'A1' but the file is for side 'A2'"):
        load_ruleset({"maps": {"A2": _side("A1")}})
    with pytest.raises(RulesetError, match=r"table 'maps': expected an object"):
        load_ruleset({"maps": ["A1"]})
    (tmp_path / "maps.json").write_text(json.dumps({"B1": side}))
    with pytest.raises(RulesetError, match=r"maps.json: table 'maps': side B1: 'side' is 'A1'"):
        load_ruleset(str(tmp_path))


# ---------------------------------------------------------------- the map:sides range
def test_the_sides_range_is_read_and_checked(tmp_path):
    r = load_ranges()[SIDES_KEY]
    assert r.kind == "side_counts" and set(r.count_bounds()) == set(COUNTS)
    assert 0 < r.p_today < 1
    assert SIDES_KEY not in {d.key for d in ruleset_dimensions(load_ruleset(), load_ranges())}
    for entry, msg in [
            ({"kind": "side_counts", "why": "x"}, "'counts'"),
            ({"kind": "side_counts", "why": "x", "counts": {"river": [0, 1]}}, "'counts'"),
            ({"kind": "side_counts", "why": "x", "counts": {"loch": [1, 0]}}, "lo <= hi"),
            ({"kind": "side_counts", "why": "x", "counts": {"terrain": [-1, 2]}}, ">= 0"),
            ({"kind": "int", "lo": 0, "hi": 1, "why": "x", "counts": {}}, "belongs to")]:
        p = tmp_path / "r.json"
        p.write_text(json.dumps({"ranges": {SIDES_KEY: entry}}))
        with pytest.raises(RulesetError, match=msg):
            load_ranges(p)
    p.write_text(json.dumps({"ranges": {"map": {"kind": "side_counts", "why": "x",
                                                "counts": {"loch": [0, 1]}}}}))
    with pytest.raises(RulesetError, match="does not fit the key"):
        load_ranges(p)


def test_a_draw_carries_eight_perturbed_sides_on_its_own_stream(tmp_path):
    rs, ranges = load_ruleset(), load_ranges()
    without = {k: r for k, r in ranges.items() if k != SIDES_KEY}
    bounds = ranges[SIDES_KEY].count_bounds()
    kept = 0
    for d in range(12):
        tables, drawn = pt.draw_ruleset(rs, ranges, 5, d)
        plain, plain_drawn = pt.draw_ruleset(rs, without, 5, d)
        assert {k: v for k, v in tables.items() if k != "maps"} == plain    # others unchanged
        assert {k: v for k, v in drawn.items() if k != SIDES_KEY} == plain_drawn
        if drawn[SIDES_KEY] == "today":
            kept += 1
            assert "maps" not in tables
            continue
        assert set(tables["maps"]) == set(MODULE_SIDES) == set(drawn[SIDES_KEY])
        for name, done in drawn[SIDES_KEY].items():
            assert done == _moved(_side(name), tables["maps"][name])
            assert all(bounds[k][0] <= done[k] <= bounds[k][1] for k in bounds)
        loaded = load_ruleset(pt.write_ruleset(tables, str(tmp_path / f"{d}.json")))
        assert loaded.maps == tables["maps"] and loaded.fingerprint() != rs.fingerprint()
    assert 0 < kept < 12
    assert pt.draw_ruleset(rs, ranges, 5, 3) == pt.draw_ruleset(rs, ranges, 5, 3)
    setup = pt.study_setup(GameConfig(), ranges)
    assert "the module sides" in pt.describe_drawn(rs, ranges, setup)
    assert not any("module sides" in h for h in pt.held_fixed(rs, ranges, GameConfig(), setup))
