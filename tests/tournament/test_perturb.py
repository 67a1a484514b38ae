"""Plausible ranges of the estimates, perturbed rulesets and the ensemble balance study
(``caledonia balance --perturb``)."""
import csv
import dataclasses
import json

import numpy as np
import pytest

from caledonia_env import Game, GameConfig
from caledonia_env import config as config_module
from caledonia_env.cli import main
from caledonia_env.data import RulesetError, load_ruleset
from caledonia_env.data.ranges import (RULESET_KINDS, Range, check_ranges, holds_run,
                                       load_ranges, ruleset_dimensions)
from caledonia_env.map import build_board
from caledonia_env.map.board import all_configs
from caledonia_env.tournament import perturb as pt

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


GOODS = ("wool", "grain", "milk", "bread", "cheese", "whisky")


def _dim(key):
    return next(d for d in ruleset_dimensions(load_ruleset(), load_ranges()) if d.key == key)


def test_every_estimate_has_a_range_that_holds_its_value_and_no_other_has_one():
    assert check_ranges(load_ruleset(), load_ranges()) == []
    assert all(r.why.strip() for r in load_ranges().values())


def test_check_ranges_names_a_missing_range_a_value_outside_and_a_value_not_covered():
    ranges = dict(load_ranges())
    del ranges["starting_tiles:S1.money"]
    ranges["starting_tiles:S2.money"] = Range("int", 70, 80, "test")
    ranges["units:bakery.cost"] = Range("int", 1, 9, "test")
    ranges["units:sheep.cost"] = Range("int", 1, 9, "test", covers="sourced:PHP")
    ranges["market:milk.start_step_3_4"] = Range("int", 1, 9, "test", covers="sourced:PHP")
    ranges["market:grain.track"] = Range("track_mix", 0, 1, "test")      # covers no estimate
    ranges["market:milk.start_step_1_2"] = Range("start_step", 2, 4, "test", price=6,
                                                 covers="sourced:PHP")
    bad = check_ranges(load_ruleset(), ranges)
    assert ("market:milk.start_step_3_4: the range is of kind 'int' but the value is "
            "'start_step'") in bad
    assert any(b.startswith("starting_tiles:S1.money: no plausible range") for b in bad)
    assert any(b.startswith("starting_tiles:S2.money: today's value 64") for b in bad)
    assert any(b.startswith("market:milk.start_step_1_2: today's value 3") for b in bad)
    assert "units:bakery.cost: a range for a value that is not an estimate (it is " \
        "rulebook:Campbell and Robertson examples; a range for it says so in 'covers')" in bad
    assert any(b.startswith("units:sheep.cost: a range for a value that is not an estimate "
                            "(it is sourced:PB") for b in bad)
    assert any(b.startswith("market:grain.track: a range for a value that is not an "
                            "estimate (it is sourced:PHP") for b in bad)


def test_the_market_is_a_track_two_start_steps_and_a_solo_bracket_per_good():
    """R-3.1: the tracks and start steps (source PHP) are covered sourced values, the solo
    brackets (R-9.2) estimates; the track comes first, its start steps are drawn on it."""
    dims = [d for d in ruleset_dimensions(load_ruleset(), load_ranges()) if d.table == "market"]
    assert [(d.key, d.kind, d.source) for d in dims] == [
        (f"market:{g}.{f}", k, s) for g in GOODS for f, k, s in (
            ("track", "track_mix", "sourced:PHP"), ("start_step_1_2", "start_step", "sourced:PHP"),
            ("start_step_3_4", "start_step", "sourced:PHP"),
            ("solo_average_steps", "bracket", "estimate"))]
    assert [d.key for d in ruleset_dimensions(load_ruleset()) if d.table == "market"] == [
        f"market:{g}.solo_average_steps" for g in GOODS]        # without ranges: estimates


@pytest.mark.parametrize("entry, needle", [
    ({"kind": "linear", "lo": 1, "hi": 2, "why": "x"}, "kind 'linear'"),
    ({"kind": "int", "lo": 3, "hi": 2, "why": "x"}, "lo 3 and hi 2"),
    ({"kind": "int", "lo": 1, "hi": 2, "why": " "}, "one-line reason"),
    ({"kind": "int", "lo": 1, "hi": 2, "why": "x", "covers": "rulebook"}, "never a rulebook"),
    ({"kind": "int", "lo": 1, "hi": 2, "why": "x", "p_today": 2}, "p_today 2"),
    ({"kind": "track_mix", "lo": 0, "hi": 1, "why": "x", "to": [3, 2]}, "the other track"),
    ({"kind": "track_mix", "lo": 0, "hi": 2, "why": "x", "to": [2, 3]}, "within 0..1"),
    ({"kind": "readings", "why": "x"}, "does not fit the key"),
])
def test_bad_ranges_file_names_the_key(tmp_path, entry, needle):
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"ranges": {"units:sheep.cost": entry}}))
    with pytest.raises(RulesetError, match="units:sheep.cost") as e:
        load_ranges(p)
    assert needle in str(e.value)


def test_mix_track_runs_from_one_track_to_the_other_and_never_falls():
    php, old = [3, 3, 4, 4, 5, 5, 6, 6, 7, 8], [2, 3, 4, 5, 6, 7, 8, 9]
    assert pt.mix_track(php, old, 0) == php and pt.mix_track(php, old, 1) == old
    for t in np.linspace(0, 1, 21):
        track = pt.mix_track(php, old, t)
        assert track == sorted(track) and len(track) in (8, 9, 10)
    assert pt.mix_track(php, old, 0.5) == [3, 3, 4, 5, 5, 6, 7, 8, 9]


def test_the_ranges_hold_both_the_printed_tracks_and_the_old_estimate():
    """Every track's range runs from the PHP track (the default, kept with p_today) to the
    £1-step tracks of the named ruleset market-estimate-2026-11; a draw reaches each."""
    rs, ranges = load_ruleset(), load_ranges()
    php = rs.to_dict()["market"]
    old = load_ruleset("market-estimate-2026-11").to_dict()["market"]
    for g in GOODS:
        r = ranges[f"market:{g}.track"]
        assert (r.lo, r.hi, r.covers) == (0, 1, "sourced:PHP")
        assert pt.mix_track(php[g]["track"], r.to, r.hi) == old[g]["track"]
        for side in ("1_2", "3_4"):           # the old start steps lie in the start ranges
            s = ranges[f"market:{g}.start_step_{side}"]
            assert s.lo <= old[g][f"start_step_{side}"] <= s.hi
    at = {"php": {k: dataclasses.replace(r, p_today=1) if r.kind == "track_mix" else r
                  for k, r in ranges.items()},
          "old": {k: dataclasses.replace(r, lo=1, p_today=None) if r.kind == "track_mix"
                  else r for k, r in ranges.items()}}
    for end, want in (("php", php), ("old", old)):
        tables, drawn = pt.draw_ruleset(rs, at[end], seed=0, draw=0)
        assert [tables["market"][g]["track"] for g in GOODS] == [want[g]["track"] for g in GOODS]
        assert {drawn[f"market:{g}.track"] for g in GOODS} == {0.0 if end == "php" else 1.0}
    weights = [pt.draw_ruleset(rs, ranges, 1, d)[1]["market:wool.track"] for d in range(40)]
    assert 0.0 in weights and max(weights) > 0.5          # p_today 0.5: both kinds of draws


def test_every_draw_keeps_the_printed_points_of_the_market():
    """DA: milk starts at £5 on the 2-player side; EN p.4: two whisky bought at £10 leave
    £12; the solo bracket (R-9.2) in MP's shape: the 1-2 start and three steps above."""
    rs, ranges = load_ruleset(), load_ranges()
    starts = set()
    for d in range(60):
        market = pt.draw_ruleset(rs, ranges, seed=2, draw=d)[0]["market"]
        for g in GOODS:
            m = market[g]
            assert m["track"] == sorted(m["track"])
            assert 2 <= m["start_step_1_2"] <= 4 and 2 <= m["start_step_3_4"] <= 4
            assert m["solo_average_steps"] == [m["start_step_1_2"], m["start_step_1_2"] + 3]
            starts.add(m["start_step_3_4"])
        assert market["milk"]["track"][market["milk"]["start_step_1_2"]] == 5
        assert holds_run(market["whisky"]["track"], [10, None, 12])
    assert starts == {2, 3, 4}                           # whisky's start moves too


def test_a_moved_sourced_value_is_retagged_estimate(tmp_path):
    rs = load_ruleset()
    tables = pt.apply(rs.to_dict(), _dim("market:bread.start_step_3_4"), 4)
    pt.apply(tables, _dim("market:wool.start_step_1_2"), 3)            # today's: no retag
    moved = load_ruleset(pt.write_ruleset(tables, str(tmp_path / "m.json")))
    src = {(t, p): s for t, p, _, s in moved.provenance()}
    assert src[("market", "bread.start_step_3_4")] == "estimate"
    assert src[("market", "wool.start_step_1_2")] == "sourced:PHP"


def test_moves_are_twenty_percent_rounded_and_at_least_one_step():
    ranges = load_ranges()
    assert pt.sensitivity_moves(_dim("starting_tiles:S1.money")) == [("-14", 56), ("+14", 84)]
    assert pt.sensitivity_moves(_dim("starting_tiles:S2.goods.wool")) == [("-1", 0), ("+1", 2)]
    assert [v for _, v in pt.sensitivity_moves(_dim("export_board:import_track.marked_spaces"))
            ] == [2, 4]
    perm = [v for _, v in pt.sensitivity_moves(_dim("solo:removal_slot"))]
    assert perm == [[5, 3, 1, 0, 2, 4], [2, 0, 1, 3, 5, 4]]
    assert pt.sensitivity_moves(_dim("market:milk.start_step_1_2")) == [
        ("-1 step", 2), ("+1 step", 4)]
    assert pt.sensitivity_moves(_dim("market:milk.solo_average_steps")) == [
        ("-1 step", [3, 5]), ("+1 step", [3, 7])]
    track = _dim("market:wool.track")
    assert pt.sensitivity_moves(track) == []                            # needs its range
    assert pt.sensitivity_moves(track, ranges["market:wool.track"]) == [
        ("mix 0.5", [3, 3, 4, 5, 5, 6, 7, 8, 9]), ("mix 1", [2, 3, 4, 5, 6, 7, 8, 9])]


def test_a_moved_value_reaches_the_loaded_ruleset(tmp_path):
    rs = load_ruleset()
    tables = pt.apply(rs.to_dict(), _dim("starting_tiles:S1.money"), 84)
    pt.apply(tables, _dim("export_board:import_track.length"), 24)
    pt.apply(tables, _dim("market:bread.track"), [5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
    moved = load_ruleset(pt.write_ruleset(tables, str(tmp_path / "m.json"))).to_dict()
    assert moved["starting_tiles"]["S1"]["money"] == 84
    assert moved["export_board"]["import_track"]["marked_spaces"] == list(range(3, 25, 3))
    assert moved["market"]["bread"]["track"][0] == 5 and moved["market"]["bread"]["track"][-1] == 14
    assert moved["market"]["wool"] == rs.to_dict()["market"]["wool"]
    with pytest.raises(KeyError, match="starting_tiles:S1.gold"):
        pt.set_value(rs.to_dict(), "starting_tiles", "S1.gold", 1)


def test_draws_are_seeded_inside_the_ranges_and_playable(tmp_path):
    rs, ranges = load_ruleset(), load_ranges()
    a, va = pt.draw_ruleset(rs, ranges, seed=5, draw=1)
    b, vb = pt.draw_ruleset(rs, ranges, seed=5, draw=1)
    _, vc = pt.draw_ruleset(rs, ranges, seed=5, draw=2)
    assert a == b and va == vb and va != vc
    assert set(va) == {k for k, r in ranges.items() if r.kind in RULESET_KINDS + ("side_counts",)}
    for key, r in ranges.items():
        if r.kind == "permutation":
            assert sorted(va[key]) == sorted(_dim(key).value) and va[key][0] == _dim(key).value[0]
        elif r.kind in ("int", "spacing", "start_step", "track_mix"):
            assert r.lo <= va[key] <= r.hi, key
    setup = pt.study_setup(GameConfig(), ranges)
    fields = pt.draw_setup(setup, 5, 1)
    for d in range(4):                # every drawn ruleset validates; the engine plays it
        path = pt.write_ruleset(pt.draw_ruleset(rs, ranges, 5, d)[0], str(tmp_path / f"{d}.json"))
        for n in (1, 2, 4):
            extra = {k: v for k, v in pt.draw_setup(setup, 5, d).items() if n > 1 or k != "map"}
            Game(GameConfig(num_players=n, solo=n == 1, ruleset=path, **extra))
    assert fields == pt.draw_setup(setup, 5, 1) != pt.draw_setup(setup, 5, 2)


@pytest.mark.parametrize("end", ["lo", "hi"])
def test_both_ends_of_every_range_are_playable(tmp_path, end):
    rs, ranges = load_ruleset(), load_ranges()
    tables = rs.to_dict()
    for dim in ruleset_dimensions(rs, ranges):
        r = ranges[dim.key]
        value = getattr(r, end)
        if r.kind == "track_mix":
            value = pt.mix_track(dim.value, r.to, value)
        elif r.kind == "bracket":
            value = [tables["market"][dim.path.split(".")[0]]["start_step_1_2"]] * 2
            value[1] += getattr(r, end)
        elif r.kind == "start_step":
            continue                          # their ends are checked on the drawn tracks
        if r.kind != "permutation":
            pt.apply(tables, dim, value)
    path = pt.write_ruleset(tables, str(tmp_path / f"{end}.json"))
    for n in (1, 3, 4):
        Game(GameConfig(num_players=n, solo=n == 1, ruleset=path))


def test_the_readings_are_every_interp_field_of_the_config():
    """Each [interp] switch is a dimension, found from GameConfig's fields: a new field
    joins without a list to edit (bool, a str with its *_READINGS constant, or readings in
    the ranges file)."""
    ranges = load_ranges()
    switches = pt.interp_switches(ranges)
    assert set(switches) == {f.name for f in dataclasses.fields(GameConfig)
                             if f.name.startswith("interp_")}
    for name, readings in switches.items():
        assert readings[0] == getattr(GameConfig(), name) and len(set(readings)) >= 2

    @dataclasses.dataclass(frozen=True)
    class Wider(GameConfig):
        interp_test_reading: str = "text"
        interp_test_count: int | None = None

        def __post_init__(self):
            super().__post_init__()
            if self.interp_test_reading not in ("text", "other"):
                raise ValueError("interp_test_reading")

    ns = dict(vars(config_module), TEST_READINGS=("other", "text"))
    with pytest.raises(ValueError, match="interp_test_count: its type does not list"):
        pt.interp_switches(ranges, Wider, ns)
    wider = dict(ranges, **{"config:interp_test_count": Range("readings", None, None, "t",
                                                                readings=(None, 2))})
    got = pt.interp_switches(wider, Wider, ns)
    assert got["interp_test_reading"] == ("text", "other")
    assert got["interp_test_count"] == (None, 2)
    with pytest.raises(ValueError, match="0 \\*_READINGS constants"):
        pt.interp_switches(wider, Wider, vars(config_module))


def test_a_draw_picks_a_reading_per_switch_and_a_legal_map():
    """R-1.1: a drawn map is one side per module of the bundled sides; a switch keeps its
    default with p_today (3 in 4) and takes another reading otherwise."""
    setup = pt.study_setup(GameConfig(num_players=3), load_ranges())
    draws = [pt.draw_setup(setup, 0, d) for d in range(200)]
    for f in draws:
        assert f["map"] in all_configs()
        build_board(f["map"], num_players=3)
    assert len({f["map"] for f in draws}) == 16
    for name, (values, p) in setup.readings.items():
        kept = np.mean([f[name] == values[0] for f in draws])
        assert p == 0.75 and 0.6 < kept < 0.9, name
        assert {f[name] for f in draws} == set(values)


def test_held_fixed_names_the_tables_the_map_and_the_readings_not_drawn():
    rs, ranges = load_ruleset(), load_ranges()
    setup = pt.study_setup(GameConfig(), ranges)
    held = pt.held_fixed(rs, ranges, GameConfig(), setup)
    assert "contracts (community)" in held and "units (rulebook, sourced:PB)" in held
    assert not any(h.startswith(("market", "starting_tiles")) for h in held)   # all drawn
    assert not any("module sides" in h for h in held)                          # map:sides
    mine = GameConfig(map="A2,B1,C1,D2", interp_swap_bonuses="first-edition")
    fewer = {k: r for k, r in ranges.items() if not k.startswith("market:wool.")
             and k != "map:sides"}
    setup = pt.study_setup(mine, fewer)
    held = pt.held_fixed(rs, fewer, mine, setup)
    assert not setup.draw_map and "interp_swap_bonuses" not in setup.readings
    assert "the map A2,B1,C1,D2 (--map)" in held and "interp_swap_bonuses='first-edition'" in held
    assert "market (estimate, sourced:PHP)" in held
    assert any(h.startswith("the module sides (the project's eight") for h in held)
    assert "the map drawn per game" in "; ".join(pt.held_fixed(
        rs, {}, GameConfig(), pt.study_setup(GameConfig(), {})))


def test_ensemble_summary_ranks_first_and_last():
    rows = [{"draw": d, "clan": c, "win_rate": w, "rank": k, "clans": 2}
            for d, (c, w, k) in enumerate([("a", 0.7, 1), ("b", 0.3, 2)] * 2)]
    rows += [{"draw": 9, "clan": "a", "win_rate": 0.4, "rank": 2, "clans": 2},
             {"draw": 9, "clan": "b", "win_rate": 0.6, "rank": 1, "clans": 2}]
    s = {x["clan"]: x for x in pt.ensemble_summary(rows)}
    assert s["a"]["first"] == pytest.approx(2 / 3) and s["a"]["last"] == pytest.approx(1 / 3)
    assert s["a"]["mean"] == pytest.approx(0.6) and s["b"]["p5"] < s["b"]["p95"]
    assert pt._rank([{"clan": "x", "win_rate": .5}, {"clan": "y", "win_rate": .5},
                     {"clan": "z", "win_rate": .2}]) == {"x": 1, "y": 1, "z": 3}
    assert "above_par" not in s["a"]
    assert "above par" not in pt.format_ensemble(list(s.values()), "")
    rows.append({"draw": 10, "clan": "b", "win_rate": 0.5, "rank": 1, "clans": 2})  # at par
    s = {x["clan"]: x for x in pt.ensemble_summary(rows, par=0.5)}
    assert s["a"]["above_par"] == pytest.approx(2 / 3)
    assert s["b"]["above_par"] == pytest.approx(1 / 4)
    table = pt.format_ensemble(list(s.values()), "t").splitlines()
    assert table[1].endswith("above par %") and table[3].split()[-1] == "67"   # a, mean 0.6


def test_balance_perturb_plays_each_draw_on_the_same_games(tmp_path, capsys):
    out, plot = tmp_path / "ens.csv", tmp_path / "ens.png"
    assert main(["balance", "--agent", "random", "--players", "2", "--clans",
                 "stewart,campbell", "--games", "2", "--perturb", "2", "--seed", "3",
                 "--out", str(out), "--plot", str(plot), "-q"]) == 0
    text = capsys.readouterr().out
    assert "win share by clan across 2 drawn rulesets" in text and "first %" in text
    assert "above par %" in text and "above par = where it wins more than 50.0%" in text
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["draw"], r["clan"]) for r in rows] == [
        ("0", "campbell"), ("0", "stewart"), ("1", "campbell"), ("1", "stewart")]
    assert {r["games"] for r in rows} == {"2"}           # both clans play in both games
    assert rows[0]["ruleset_fingerprint"] != rows[2]["ruleset_fingerprint"]
    assert rows[0]["value starting_tiles:S1.money"] != "" and "rank" in rows[0]
    for d in ("0", "1"):
        assert sum(float(r["win_rate"]) for r in rows if r["draw"] == d) == pytest.approx(1)
    assert plot.read_bytes()[:8] == PNG_MAGIC
    drawn = [pt.draw_ruleset(load_ruleset(), load_ranges(), 3, d)[1] for d in (0, 1)]
    assert float(rows[2]["value market:wool.track"]) == pytest.approx(
        drawn[1]["market:wool.track"])
    setups = [pt.draw_setup(pt.study_setup(GameConfig(num_players=2), load_ranges()), 3, d)
              for d in (0, 1)]
    assert [r["value map"] for r in rows[::2]] == [",".join(f["map"]) for f in setups]
    assert json.loads(rows[2]["value config:interp_swap_bonuses"]) == \
        setups[1]["interp_swap_bonuses"]
    held = rows[0]["held_fixed"]
    assert "contracts (community)" in held and "module sides" not in held
    assert f"held fixed: {held}" in text and "the readings interp_" in text
    assert np.isfinite(float(rows[0]["ci_low"]))


def test_balance_perturb_draws_the_module_sides(tmp_path, capsys):
    """--perturb with the map:sides range: a draw that does not keep today's sides plays on
    eight perturbed sides its ruleset file carries; the held-fixed text leaves the sides out."""
    out = tmp_path / "sides.csv"
    assert main(["balance", "--agent", "random", "--players", "2", "--clans",
                 "stewart,campbell", "--games", "4", "--perturb", "2", "--seed", "1",
                 "--out", str(out), "--plot", "", "-q"]) == 0
    text = capsys.readouterr().out
    assert "the module sides (their lochs, deltas" in text
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["value map:sides"] for r in rows[::2]][0] == "today"
    changes = json.loads(rows[2]["value map:sides"])
    assert set(changes) == {"A1", "A2", "B1", "B2", "C1", "C2", "D1", "D2"}
    draws = tmp_path / "sides.csv.draws"
    kept = json.loads((draws / "ruleset_draw_0000.json").read_text())
    moved = load_ruleset(str(draws / "ruleset_draw_0001.json"))
    assert "maps" not in kept and set(moved.maps) == set(changes)
    assert rows[2]["ruleset_fingerprint"] == moved.fingerprint()
    held = rows[0]["held_fixed"]
    assert "module sides" not in held and f"held fixed: {held}" in text


def test_balance_perturb_report_says_what_was_drawn_and_held(tmp_path, capsys):
    """--perturb --report: the page and report.json hold the held-fixed and drawn lists, each
    draw's ruleset fingerprint, and per clan the draws it was above and below par in."""
    folder, out = tmp_path / "rep", tmp_path / "ens.csv"
    assert main(["balance", "--agent", "random", "--players", "2", "--clans",
                 "stewart,campbell", "--games", "4", "--perturb", "3", "--seed", "3",
                 "--out", str(out), "--plot", "", "-q", "--report", str(folder)]) == 0
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    meta = data["metadata"]
    assert meta["held fixed"] == rows[0]["held_fixed"].split("; ")
    assert "the map (one of the 16 configurations per draw)" in meta["drawn"]
    assert meta["draws"] == "3" and meta["games played"] == "12"
    assert meta["base ruleset fingerprint"] == load_ruleset().fingerprint()
    per_draw = data["tables"][1]
    assert [r[1] for r in per_draw["rows"]] == [r["ruleset_fingerprint"][:12]
                                                for r in rows[::2]]
    per_clan = data["tables"][0]
    for r in per_clan["rows"]:
        clan, above, below = r[0], r[-2], r[-1]
        rates = [float(x["win_rate"]) for x in rows if x["clan"] == clan.lower()]
        assert (above, below) == (sum(w > .5 for w in rates), sum(w < .5 for w in rates))
        said = next(c for c in data["conclusions"] if c.startswith(f"{clan} is "))
        assert (f"above par in {above} " in said or f"below par in {below} " in said)
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert "held fixed" in page and "contracts (community)" in page and "<script" not in page


def _ensemble(tmp_path, *extra):
    return main(["balance", "--agent", "random", "--players", "2", "--clans",
                 "stewart,campbell", "--games", "4", "--perturb", "3", "--seed", "3",
                 "--out", str(tmp_path / "ens.csv"), "--plot", "", "-q", *extra])


def test_balance_perturb_resume_finishes_an_interrupted_study_with_the_same_table(
        tmp_path, capsys):
    """Every draw's games are streamed to ens.csv.draws/; --resume keeps the complete games
    (a cut draw keeps its finished games, a missing draw is played) and writes the table an
    uninterrupted run wrote."""
    assert _ensemble(tmp_path) == 0
    draws = tmp_path / "ens.csv.draws"
    assert sorted(p.name for p in draws.iterdir()) == [
        "draw_0000.csv", "draw_0001.csv", "draw_0002.csv",
        "ruleset_draw_0000.json", "ruleset_draw_0001.json", "ruleset_draw_0002.json",
        "setup_draw_0000.json", "setup_draw_0001.json", "setup_draw_0002.json"]
    whole = (tmp_path / "ens.csv").read_text()
    lines = (draws / "draw_0001.csv").read_text().splitlines(keepends=True)
    (draws / "draw_0001.csv").write_text("".join(lines[:4]))   # game 0 and half of game 1
    (draws / "draw_0002.csv").unlink()
    (tmp_path / "ens.csv").unlink()
    capsys.readouterr()
    assert _ensemble(tmp_path, "--resume") == 0
    assert "--resume: 5 games already in" in capsys.readouterr().out   # 4 + 1 complete
    assert (tmp_path / "ens.csv").read_text() == whole


def test_balance_perturb_resume_refuses_another_study_and_needs_out(tmp_path, capsys):
    assert _ensemble(tmp_path) == 0
    capsys.readouterr()
    draws = tmp_path / "ens.csv.draws"
    before = {p.name: p.read_bytes() for p in draws.iterdir()}
    assert _ensemble(tmp_path, "--resume", "--seed", "4") == 2
    assert ("--resume: ruleset_draw_0000.json in " in (err := capsys.readouterr().err)
            and "holds another ruleset than draw 0 of this study" in err)
    assert {p.name: p.read_bytes() for p in draws.iterdir()} == before   # nothing rewritten
    (draws / "ruleset_draw_0000.json").unlink()
    assert _ensemble(tmp_path, "--resume", "--seed", "4") == 2
    assert "setup_draw_0000.json in " in capsys.readouterr().err   # the map, the readings
    (draws / "setup_draw_0000.json").unlink()            # the games alone still tell
    assert _ensemble(tmp_path, "--resume", "--seed", "4") == 2
    assert "--resume, draw 0: resume: " in capsys.readouterr().err
    assert main(["balance", "--agent", "random", "--players", "2", "--clans",
                 "stewart,campbell", "--games", "2", "--perturb", "2", "--resume",
                 "--plot", "", "-q"]) == 2
    assert "--perturb --resume needs the --out FILE.csv" in capsys.readouterr().err


@pytest.mark.parametrize("args, needle", [
    (["--perturb", "-1"], "--perturb must be >= 1"),
    (["--perturb", "2", "--ranges", "nope.json"], "cannot read the ranges file"),
    (["--perturb", "2", "--out", "x.parquet"], "--perturb plays locally"),
    (["--perturb", "2", "--ranges", "kind.json"],
     "market:wool.track: the range is of kind 'int' but the value is 'track_mix'"),
    (["--perturb", "2", "--ranges", "old.json"],
     "market:wool: a range for a value that is not an estimate"),
    (["--perturb", "2", "--ranges", "switch.json"],
     "interp_export_min_contracts: its type does not list its readings"),
])
def test_balance_perturb_bad_input_exits_2(tmp_path, capsys, args, needle):
    (tmp_path / "kind.json").write_text(json.dumps({"ranges": {"market:wool.track": {
        "kind": "int", "lo": 1, "hi": 2, "why": "test", "covers": "sourced:PHP"}}}))
    (tmp_path / "old.json").write_text(json.dumps(
        {"ranges": {"market:wool": {"kind": "int", "lo": 1, "hi": 2, "why": "test"}}}))
    (tmp_path / "switch.json").write_text(json.dumps(
        {"ranges": {"config:interp_*": {"kind": "readings", "why": "test"}}}))
    assert main(["balance", "--agent", "random", "--players", "2", "--clans",
                 "stewart,campbell", "--games", "2", "--plot", "", "-q",
                 *[str(tmp_path / a) if a.endswith((".json", ".parquet")) else a
                   for a in args]]) == 2
    assert needle in capsys.readouterr().err
