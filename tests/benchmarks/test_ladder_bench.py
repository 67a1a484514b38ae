"""benchmarks/ladder.py: the result rows of a ladder, a tiny run, and the ladder table's
rendering in docs/results.md (a synthetic result file)."""
import importlib.util
import os
import sys

import pytest

_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks")
spec = importlib.util.spec_from_file_location("ladder_bench", os.path.join(_DIR, "ladder.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_result_rows_carry_the_interval_games_and_cost():
    table = [{"agent": "greedy", "elo": 412.34, "lo": 300.0, "hi": 524.68, "games": 20,
              "cpu_s": 0.004567}]
    assert bench.result_rows(2, table, 7) == [{"players": 2, "rung": "greedy",
                                               "elo": [412.3, 300.0, 524.7], "games": 20,
                                               "cpu_s": 0.00457, "seed": 7}]


def test_a_tiny_run_prints_the_ladder(capsys):
    bench.main(["--rungs", "random,greedy", "--games", "4", "--seed", "1"])
    out = capsys.readouterr().out
    assert "random = 0" in out and "4 games, seed 1" in out


def test_the_seed_is_required():
    with pytest.raises(SystemExit) as e:
        bench.main(["--rungs", "random,greedy"])
    assert e.value.code == 2


def test_the_ladder_table_renders(tmp_path):
    sys.path.insert(0, _DIR)
    try:
        import report
        from results_io import write_result
    finally:
        sys.path.pop(0)
    rows = bench.result_rows(2, [{"agent": "greedy", "elo": 400.0, "lo": 350.0, "hi": 450.0,
                                  "games": 20, "cpu_s": 0.005}], 9)
    write_result("ladder", columns=bench.COLUMNS, rows=rows, title=bench.TITLE,
                 meaning=bench.MEANING, path=tmp_path / "ladder-2026-12-10.json")
    [result] = report.read_results(tmp_path)
    assert report.render_table(result)[2] == "| 2 | greedy | 400 (350–450) | 20 | 0.0050 | 9 |"
    assert result["title"] == bench.TITLE and result["table"] == "ladder"
