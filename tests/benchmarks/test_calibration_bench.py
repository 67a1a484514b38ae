"""benchmarks/calibration.py: solo calibration table and the ±20% sensitivity of every
estimate on common random numbers (a tiny run with random and greedy)."""
import csv
import importlib.util
import json
import os

import numpy as np
import pytest

from caledonia_env.data import load_ruleset
from caledonia_env.data.ranges import ruleset_dimensions
from caledonia_env.tournament.perturb import apply, write_ruleset

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "calibration.py")
spec = importlib.util.spec_from_file_location("calibration_bench", _PATH)
cal = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cal)

KEYS = "starting_tiles:S1.money,export_board:slots_by_players.4,market:wool.track"


def test_json_output_structure_ranking_and_refused_variants(tmp_path, capsys):
    out = tmp_path / "sens.csv"
    assert cal.main(["--games", "2", "--agents", "random,greedy", "--sens-agents", "random",
                     "--sensitivity", "--estimates", KEYS, "--json", "--out", str(out),
                     "-q"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert list(res["calibration"]) == ["random", "greedy"]
    for st in res["calibration"].values():
        assert sum(st["bands"].values()) == 2 and st["vp_ci_low"] <= st["vp"] <= st["vp_ci_high"]
        assert list(st["band_min"].values()) == [0, 116, 131, 146, 161]
    rows = res["sensitivity"]
    assert [(r["estimate"], r["move"]) for r in rows] == [
        ("market:wool.track", "mix 0.5"), ("market:wool.track", "mix 1"),
        ("export_board:slots_by_players.4", "-1"), ("export_board:slots_by_players.4", "+1"),
        ("starting_tiles:S1.money", "-14"), ("starting_tiles:S1.money", "+14")]
    refused = [r for r in rows if r["refused"]]
    assert [(r["estimate"], r["move"]) for r in refused] == [
        ("export_board:slots_by_players.4", "+1")]
    assert "MAX_SLOTS" in refused[0]["refused"] and "caledonia-sens-" not in refused[0]["refused"]
    played = [r for r in rows if not r["refused"]]
    assert all(r["mean"] - r["base"] == pytest.approx(r["delta"]) for r in played)
    effects = [e for _, e in res["ranking"]]
    assert effects == sorted(effects, reverse=True) and len(effects) == 3
    assert dict(res["ranking"])["market:wool.track"] == max(
        abs(r["delta"]) for r in played if r["estimate"] == "market:wool.track")
    assert json.loads(rows[1]["value"]) == [2, 3, 4, 5, 6, 7, 8, 9]   # the old £1-step track
    with open(out, newline="") as f:
        assert len(list(csv.DictReader(f))) == len(rows)


def test_markdown_tables_name_the_bands_and_rank_the_estimates(capsys):
    assert cal.main(["--games", "2", "--agents", "random", "--sens-agents", "random",
                     "--sensitivity", "--estimates", "export_board:slots_by_players.4",
                     "-q"]) == 0
    text = capsys.readouterr().out
    assert "| `random` |" in text and "(161+)" in text and "(131-145)" in text
    assert "| 1 | `export_board:slots_by_players.4` |" in text and "+1: refused" in text


def test_same_seeds_for_base_and_moved_runs(tmp_path, monkeypatch):
    a = cal.solo_vps("random", 3, 7, None)
    assert np.array_equal(a, cal.solo_vps("random", 3, 7, None))
    monkeypatch.setattr(cal, "sensitivity_moves", lambda est, span: [("same", est.value)])
    rows = cal.sensitivity(["random"], 3, 7, None, str(tmp_path), quiet=True,
                           only={"starting_tiles:S1.money"})
    assert rows[0]["base"] == pytest.approx(a.mean()) and rows[0]["delta"] == 0
    assert rows[0]["ci"] == 0


def test_a_moved_value_reaches_the_game(tmp_path):
    rs = load_ruleset()
    tables = rs.to_dict()
    for est in ruleset_dimensions(rs):
        if est.key.endswith(".money") and est.table == "starting_tiles":
            apply(tables, est, est.value + 40)
    path = write_ruleset(tables, str(tmp_path / "rich.json"))
    base = cal.solo_rows("random", 2, 11, None)
    rich = cal.solo_rows("random", 2, 11, path)
    assert [r["game_seed"] for r in base] == [r["game_seed"] for r in rich]
    assert [(r["total"], r["money_left"]) for r in base] != [
        (r["total"], r["money_left"]) for r in rich]


def test_rank_estimates_counts_refused_moves_as_no_effect():
    rows = [{"estimate": "a", "delta": -3.0}, {"estimate": "a", "delta": 1.0},
            {"estimate": "b", "delta": ""}, {"estimate": "c", "delta": 5.5}]
    assert cal.rank_estimates(rows) == [("c", 5.5), ("a", 3.0), ("b", 0.0)]


def test_unknown_estimate_key_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        cal.main(["--games", "1", "--sensitivity", "--estimates", "units:bakery.cost"])
    assert e.value.code == 2
    assert ("not an estimate of the ruleset nor a value the ranges cover: units:bakery.cost"
            in capsys.readouterr().err)
