"""benchmarks/balance.py: the per-player-count clan and seat tables summarise a balance
study's rows (ties split, Wilson intervals, par 100/P %)."""
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import balance  # noqa: E402

sys.path.pop(0)

FIELDS = ["game", "seat", "agent", "clan", "win", "total"]


def write_rows(path, games):
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        for g, seats in enumerate(games):
            for seat, (clan, win, total) in enumerate(seats):
                w.writerow({"game": g, "seat": seat, "agent": "greedy", "clan": clan,
                            "win": win, "total": total})


def test_clan_and_seat_shares_split_ties(tmp_path):
    path = tmp_path / "rows.csv"
    write_rows(path, [[("mackenzie", 1.0, 120), ("stewart", 0.0, 100), ("buchanan", 0.0, 90)],
                      [("stewart", 0.5, 110), ("mackenzie", 0.5, 110), ("buchanan", 0.0, 80)]])
    players, agent, clans, seats = balance.summarise(path)
    assert (players, agent) == (3, "greedy")
    assert clans["mackenzie"] == [2, 1.5, 230.0] and clans["buchanan"] == [2, 0.0, 170.0]
    assert seats[0] == [2, 1.5, 230.0] and seats[2] == [2, 0.0, 170.0]
    rows = balance.result_rows(players, agent, clans, "clan", balance.clan_title)
    mac = next(r for r in rows if r["clan"] == "MacKenzie")
    assert mac["win"][0] == 75.0 and mac["win"][1] < 75.0 < mac["win"][2]
    assert mac["par"] == 33.3 and mac["vp"] == 115.0 and mac["games"] == 2


def test_from_csv_prints_both_tables(tmp_path, capsys):
    path = tmp_path / "rows.csv"
    write_rows(path, [[("campbell", 1.0, 100), ("robertson", 0.0, 90)]])
    assert balance.main(["--from-csv", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Campbell" in out and "Robertson" in out and "win share by seat" in out


def test_drafted_pick_rates_are_the_share_of_the_games_a_clan_was_drafted_in(tmp_path, capsys):
    path = tmp_path / "rows.csv"
    write_rows(path, [[("mackenzie", 1.0, 120), ("stewart", 0.0, 100)],
                      [("stewart", 1.0, 110), ("buchanan", 0.0, 80)],
                      [("stewart", 0.0, 90), ("mackenzie", 1.0, 115)],
                      [("campbell", 0.5, 100), ("mackenzie", 0.5, 100)]])
    players, agent, clans, seats = balance.summarise(path)
    rows = {r["clan"]: r for r in balance.draft_rows(players, agent, clans, seats[0][0])}
    assert rows["MacKenzie"]["picked"] == 75.0 and rows["Buchanan"]["picked"] == 25.0
    assert rows["MacKenzie"]["win"][0] == 83.3 and rows["Stewart"]["win"][0] == 33.3
    assert {r["played"] for r in rows.values()} == {4}
    assert sum(r["picked"] for r in rows.values()) == 200.0          # players x 100%
    keys = {c["key"] for c in balance.DRAFT_COLUMNS}
    assert set(rows["Stewart"]) == keys
    assert balance.main(["--from-csv", str(path), "--design", "drafted"]) == 0
    assert "MacKenzie    75.0%  win 83.3%" in capsys.readouterr().out
