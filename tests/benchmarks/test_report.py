"""benchmarks/report.py: docs/results.md and the README's headline rows are what the result
files of benchmarks/results/ render, and a changed figure makes ``--check`` fail."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "benchmarks" / "report.py"
sys.path.insert(0, str(ROOT / "benchmarks"))
import report  # noqa: E402
import results_io  # noqa: E402

sys.path.pop(0)


def run(*args):
    return subprocess.run([sys.executable, str(REPORT), *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def copy_repo(tmp_path):
    """The files report.py reads and writes, in a folder of their own."""
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    shutil.copy(ROOT / "docs" / "results.md", tmp_path / "docs" / "results.md")
    shutil.copytree(ROOT / "benchmarks" / "results", tmp_path / "benchmarks" / "results")
    return tmp_path


def test_the_rendered_files_are_in_sync_with_the_results():
    r = run("--check")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr


def test_every_result_file_parses_and_says_how_it_was_measured():
    results = results_io.read_results()
    assert results
    for r in results:
        for key in ("command", "date", "commit", "machine"):
            assert r[key], f"{r['path'].name}: empty {key}"
        keys = {c["key"] for c in r["columns"]}
        for row in r["rows"]:
            assert set(row) <= keys, f"{r['path'].name}: a row has keys outside its columns"


def test_every_table_has_a_file_and_every_headline_a_row():
    tables = report.newest(results_io.read_results())
    assert set(report.ORDER) <= set(tables)
    blocks = report.headline_rows(tables)
    assert set(blocks) == {"speed", "ladder", "strength", "fidelity", "fuzzing", "balance"}


def test_a_changed_figure_fails_the_check(tmp_path):
    repo = copy_repo(tmp_path)
    path = repo / "benchmarks" / "results" / "fuzz-2026-11-23.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["rows"][0]["failures"] = 1
    path.write_text(json.dumps(data), encoding="utf-8")
    r = run("--check", "--root", str(repo))
    assert r.returncode == 1 and "out of date" in r.stderr
    assert "-| 1,000,000 | 111.3 M | 0 |" in r.stdout and "+| 1,000,000 | 111.3 M | 1 |" in r.stdout
    assert run("--root", str(repo)).returncode == 0          # a re-render puts it in sync
    assert run("--check", "--root", str(repo)).returncode == 0
    assert "| 1 | [table]" in (repo / "README.md").read_text(encoding="utf-8")


def test_the_balance_block_has_every_player_count_and_follows_its_files(tmp_path):
    """One row per player count (caledonia balance's default agent): the highest and lowest clan,
    the first player, the clan drafted most; a re-measured figure moves the row, a player
    count missing from a table is an error naming the file."""
    tables = report.newest(results_io.read_results())
    rows = report.balance_rows(tables)[2:]
    assert [r.split(" | ")[0] for r in rows] == ["| 2", "| 3", "| 4"]
    for n, row in zip((2, 3, 4), rows):
        clans = [r for r in tables["balance"]["rows"]
                 if r["players"] == n and r["agent"] == report.BALANCE_AGENT]
        best = max(clans, key=lambda r: r["win"][0])
        assert f"| {best['clan']} {best['win'][0]:.1f} (" in row
        drafted = [r for r in tables["balance_draft"]["rows"]
                   if r["players"] == n and r["agent"] == report.BALANCE_AGENT]
        top = max(drafted, key=lambda r: r["picked"])
        assert f"{top['clan']} (wins {top['win'][0]:.1f}%)" in row
        assert f"in {top['picked']:.0f}% of the games" in row
    repo = copy_repo(tmp_path)
    path = repo / "benchmarks" / "results" / "balance_draft-2026-12-02.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["rows"] = [r for r in data["rows"] if r["players"] != 3]
    path.write_text(json.dumps(data), encoding="utf-8")
    r = run("--check", "--root", str(repo))
    assert r.returncode == 2 and "balance_draft-2026-12-02.json has no rows of `qpolicy` " \
        "for 3 players" in r.stderr


def test_the_clan_verdicts_name_each_agents_verdict_and_whether_it_changes():
    """Per player count, agents from the weakest to the strongest; a clan above par with one
    agent and below with another changes (yes), one that another agent leaves unresolved is
    open, one every agent places the same is not."""
    def row(agent, clan, win):
        return {"players": 2, "agent": agent, "clan": clan, "par": 50.0, "win": win}
    table = {"rows": [row("`qpolicy`", "Stewart", [40.0, 36.0, 44.0]),
                      row("`greedy`", "Stewart", [60.0, 56.0, 64.0]),
                      row("`qpolicy`", "Campbell", [52.0, 48.0, 56.0]),
                      row("`greedy`", "Campbell", [58.0, 54.0, 62.0]),
                      row("`qpolicy`", "Buchanan", [25.0, 21.0, 29.0]),
                      row("`greedy`", "Buchanan", [30.0, 26.0, 34.0])]}
    lines = report.balance_verdicts(table)
    assert lines[3] == "| clan | `greedy` | `qpolicy` | changes with the agent |"
    rows = {line.split(" | ")[0].strip("| "): line for line in lines[5:]}
    assert rows["Stewart"] == "| Stewart | above (60.0%) | below (40.0%) | **yes** |"
    assert rows["Campbell"] == "| Campbell | above (58.0%) | par in CI (52.0%) | open |"
    assert rows["Buchanan"] == "| Buchanan | below (30.0%) | below (25.0%) | no |"
    assert report.verdict([50.0, 49.5, 50.5], 50.0) == "at"


def test_the_newest_file_of_a_table_wins(tmp_path):
    repo = copy_repo(tmp_path)
    old = repo / "benchmarks" / "results" / "fuzz-2026-11-23.json"
    data = json.loads(old.read_text(encoding="utf-8"))
    data.update(date="2099-01-01", commit="abc1234")
    (old.parent / "fuzz-2099-01-01.json").write_text(json.dumps(data), encoding="utf-8")
    assert run("--root", str(repo)).returncode == 0
    text = (repo / "docs" / "results.md").read_text(encoding="utf-8")
    assert "date 2099-01-01, commit abc1234" in text and "fuzz-2026-11-23" not in text


@pytest.mark.parametrize("change, says", [
    (lambda d: d.pop("commit"), "missing commit"),
    (lambda d: d.update(date="yesterday"), "is not YYYY-MM-DD")])
def test_an_incomplete_result_file_is_an_error_naming_it(tmp_path, change, says):
    repo = copy_repo(tmp_path)
    path = repo / "benchmarks" / "results" / "bots-2026-11-26.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    r = run("--check", "--root", str(repo))
    assert r.returncode == 2 and "bots-2026-11-26.json" in r.stderr and says in r.stderr


def test_write_result_records_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(ROOT / "benchmarks" / "fuzz.py"), "--games", "3"])
    path = results_io.write_result(
        "fuzz", title="t", meaning="m", columns=[{"key": "games", "label": "games"}],
        rows=[{"games": 3}], path=tmp_path / "fuzz-x.json")
    r = json.loads(path.read_text(encoding="utf-8"))
    assert r["command"] == "python benchmarks/fuzz.py --games 3"
    assert r["benchmark"] == "fuzz.py" and r["source"] == "measured"
    assert r["commit"] and r["machine"]["cores"] >= 1 and "python" in r["machine"]


def test_write_result_merges_rows_by_one_key_or_several(tmp_path, monkeypatch):
    """A run replaces the rows of the values it measured and keeps the others (one file for
    several player counts, or for several player counts and agents)."""
    monkeypatch.setattr(sys, "argv", [str(ROOT / "benchmarks" / "balance.py")])
    cols = [{"key": "players", "label": "p"}, {"key": "agent", "label": "a"},
            {"key": "win", "label": "w"}]
    path = tmp_path / "balance-x.json"

    def write(rows, key):
        results_io.write_result("balance", title="t", meaning="m", columns=cols, rows=rows,
                                path=path, merge_key=key)
        return [(r["players"], r["agent"], r["win"])
                for r in json.loads(path.read_text(encoding="utf-8"))["rows"]]

    write([{"players": 2, "agent": "g", "win": 1}, {"players": 4, "agent": "g", "win": 2}],
          "players")
    assert write([{"players": 4, "agent": "t", "win": 3}], "players") == [(2, "g", 1), (4, "t", 3)]
    assert write([{"players": 4, "agent": "g", "win": 5}], ("players", "agent")) == [
        (2, "g", 1), (4, "g", 5), (4, "t", 3)]
    assert write([{"players": 2, "agent": "g", "win": 7}], ("players", "agent")) == [
        (2, "g", 7), (4, "g", 5), (4, "t", 3)]
