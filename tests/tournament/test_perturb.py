"""Plausible ranges of the estimates, perturbed rulesets and the ensemble balance study
(``caledonia balance --perturb``)."""
import csv
import json

import numpy as np
import pytest

from caledonia_env import Game, GameConfig
from caledonia_env.cli import main
from caledonia_env.data import RulesetError, load_ruleset
from caledonia_env.data.ranges import Range, check_ranges, estimate_groups, load_ranges
from caledonia_env.tournament import perturb as pt

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _est(key):
    return next(e for e in estimate_groups(load_ruleset()) if e.key == key)


def test_every_estimate_has_a_range_that_holds_its_value_and_no_other_has_one():
    assert check_ranges(load_ruleset(), load_ranges()) == []
    assert all(r.why.strip() for r in load_ranges().values())


def test_check_ranges_names_a_missing_range_a_value_outside_and_a_non_estimate():
    ranges = dict(load_ranges())
    del ranges["starting_tiles:S1.money"]
    ranges["starting_tiles:S2.money"] = Range("int", 70, 80, "test")
    ranges["units:bakery.cost"] = Range("int", 1, 9, "test")
    ranges["market:milk"] = Range("int", 1, 9, "test")
    bad = check_ranges(load_ruleset(), ranges)
    assert "market:milk: the range is of kind 'int' but the estimate is 'track_scale'" in bad
    assert any(b.startswith("starting_tiles:S1.money: no plausible range") for b in bad)
    assert any(b.startswith("starting_tiles:S2.money: today's value 64") for b in bad)
    assert any(b.startswith("units:bakery.cost: a range for a value that is not") for b in bad)


def test_market_estimates_are_one_track_per_good():
    keys = [e.key for e in estimate_groups(load_ruleset()) if e.table == "market"]
    assert keys == [f"market:{g}" for g in ("wool", "grain", "milk", "bread", "cheese", "whisky")]


@pytest.mark.parametrize("entry, needle", [
    ({"kind": "linear", "lo": 1, "hi": 2, "why": "x"}, "kind 'linear'"),
    ({"kind": "int", "lo": 3, "hi": 2, "why": "x"}, "lo 3 and hi 2"),
    ({"kind": "int", "lo": 1, "hi": 2, "why": " "}, "one-line reason"),
])
def test_bad_ranges_file_names_the_key(tmp_path, entry, needle):
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"ranges": {"units:sheep.cost": entry}}))
    with pytest.raises(RulesetError, match="units:sheep.cost") as e:
        load_ranges(p)
    assert needle in str(e.value)


def test_scale_market_track_scales_every_price_and_keeps_the_order():
    wool = load_ruleset().to_dict()["market"]["wool"]
    up = pt.scale_market_track(wool, 1.2)
    assert up["track"] == [2, 4, 5, 6, 7, 8, 10, 11]            # 2..9 x 1.2, rounded
    assert {k: v for k, v in up.items() if k != "track"} == \
        {k: v for k, v in wool.items() if k != "track"}          # start steps, bracket stay
    repeated = {"track": [3, 4, 4, 5], "start_step_1_2": 1}
    assert pt.scale_market_track(repeated, 1.5) == {"track": [5, 6, 6, 8], "start_step_1_2": 1}


def test_moves_are_twenty_percent_rounded_and_at_least_one_step():
    assert pt.sensitivity_moves(_est("starting_tiles:S1.money")) == [("-14", 56), ("+14", 84)]
    assert pt.sensitivity_moves(_est("starting_tiles:S2.goods.wool")) == [("-1", 0), ("+1", 2)]
    assert [v for _, v in pt.sensitivity_moves(_est("export_board:import_track.marked_spaces"))
            ] == [2, 4]
    assert [v for _, v in pt.sensitivity_moves(_est("market:wool"))] == [0.8, 1.2]
    perm = [v for _, v in pt.sensitivity_moves(_est("solo:removal_slot"))]
    assert perm == [[5, 3, 1, 0, 2, 4], [2, 0, 1, 3, 5, 4]]


def test_a_moved_value_reaches_the_loaded_ruleset(tmp_path):
    rs = load_ruleset()
    tables = pt.apply(rs.to_dict(), _est("starting_tiles:S1.money"), 84)
    pt.apply(tables, _est("export_board:import_track.length"), 24)
    pt.apply(tables, _est("market:bread"), 0.8)
    moved = load_ruleset(pt.write_ruleset(tables, str(tmp_path / "m.json"))).to_dict()
    assert moved["starting_tiles"]["S1"]["money"] == 84
    assert moved["export_board"]["import_track"]["marked_spaces"] == list(range(3, 25, 3))
    assert moved["market"]["bread"]["track"][0] == 4 and moved["market"]["bread"]["track"][-1] == 11
    assert moved["market"]["wool"] == rs.to_dict()["market"]["wool"]
    with pytest.raises(KeyError, match="starting_tiles:S1.gold"):
        pt.set_value(rs.to_dict(), "starting_tiles", "S1.gold", 1)


def test_draws_are_seeded_inside_the_ranges_and_playable(tmp_path):
    rs, ranges = load_ruleset(), load_ranges()
    a, va = pt.draw_ruleset(rs, ranges, seed=5, draw=1)
    b, vb = pt.draw_ruleset(rs, ranges, seed=5, draw=1)
    _, vc = pt.draw_ruleset(rs, ranges, seed=5, draw=2)
    assert a == b and va == vb and va != vc
    assert set(va) == set(ranges)
    for key, r in ranges.items():
        if r.kind == "permutation":
            assert sorted(va[key]) == sorted(_est(key).value) and va[key][0] == _est(key).value[0]
        else:
            assert r.lo <= va[key] <= r.hi, key
    path = pt.write_ruleset(a, str(tmp_path / "d.json"))
    for n in (1, 4):                 # the engine accepts the draw (capacities, cross checks)
        Game(GameConfig(num_players=n, solo=n == 1, ruleset=path))


@pytest.mark.parametrize("end", ["lo", "hi"])
def test_both_ends_of_every_range_are_playable(tmp_path, end):
    rs, ranges = load_ruleset(), load_ranges()
    tables = rs.to_dict()
    for est in estimate_groups(rs):
        r = ranges[est.key]
        if r.kind != "permutation":
            pt.apply(tables, est, getattr(r, end))
    path = pt.write_ruleset(tables, str(tmp_path / f"{end}.json"))
    for n in (1, 3, 4):
        Game(GameConfig(num_players=n, solo=n == 1, ruleset=path))


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
    assert float(rows[2]["value market:wool"]) == pytest.approx(drawn[1]["market:wool"])
    assert np.isfinite(float(rows[0]["ci_low"]))


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
        "ruleset_draw_0000.json", "ruleset_draw_0001.json", "ruleset_draw_0002.json"]
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
    (draws / "ruleset_draw_0000.json").unlink()          # the games alone still tell
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
     "market:wool: the range is of kind 'int' but the estimate is 'track_scale'"),
])
def test_balance_perturb_bad_input_exits_2(tmp_path, capsys, args, needle):
    (tmp_path / "kind.json").write_text(json.dumps(
        {"ranges": {"market:wool": {"kind": "int", "lo": 1, "hi": 2, "why": "test"}}}))
    assert main(["balance", "--agent", "random", "--players", "2", "--clans",
                 "stewart,campbell", "--games", "2", "--plot", "", "-q",
                 *[str(tmp_path / a) if a.endswith((".json", ".parquet")) else a
                   for a in args]]) == 2
    assert needle in capsys.readouterr().err


@pytest.mark.parametrize("end", ["lo", "hi"])
def test_track_ranges_keep_the_known_prices(end):
    """DA: milk starts at £5 on the 2-player side; EN p.4: whisky 10 -> 12 after two."""
    ranges, market = load_ranges(), load_ruleset().to_dict()["market"]
    milk = pt.scale_market_track(market["milk"], getattr(ranges["market:milk"], end))
    assert milk["track"][milk["start_step_1_2"]] == 5
    f = getattr(ranges["market:whisky"], end)
    whisky = pt.scale_market_track(market["whisky"], f)
    start = whisky["start_step_3_4"]
    assert whisky["track"][start] == 10 and whisky["track"][start + 2] == 12
