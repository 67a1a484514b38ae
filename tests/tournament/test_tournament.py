"""Tournament machinery behind ``caledonia play`` / ``balance``: balanced clan schedules, the
rules recorded with every result, output-path checks and clean interruption."""
import csv
import io
import itertools
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from caledonia_env import tournament as tn
from caledonia_env.cli import main
from caledonia_env.config import CLAN_NAMES
from signals import terminate_when

BASE_CLANS = [c for c in CLAN_NAMES if c != "brewer"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# ------------------------------------------------------------ balanced schedule
@pytest.mark.parametrize("n", [2, 3, 4])
def test_balance_schedule_every_prefix_is_near_balanced(n):
    """After every block of n games the clans' game counts differ by at most two blocks
    (2n games), and within its block every clan sat in every seat once."""
    sched = tn.balance_schedule(BASE_CLANS, n, seed=5)
    assert len(sched) == len(list(itertools.combinations(BASE_CLANS, n))) * n
    for end in range(n, len(sched) + 1, n):
        counts = Counter(c for t in sched[:end] for c in t)
        low = min(counts.get(c, 0) for c in BASE_CLANS)
        assert max(counts.values()) - low <= 2 * n, (end, counts)
        block = sched[end - n:end]
        assert {frozenset(t) for t in block} == {frozenset(block[0])}
        for seat in range(n):
            assert sorted(t[seat] for t in block) == sorted(block[0])
    full = Counter((c, seat) for t in sched for seat, c in enumerate(t))
    assert len(set(full.values())) == 1 and len(full) == len(BASE_CLANS) * n


def test_balance_schedule_order_comes_from_the_seed():
    a, b = (tn.balance_schedule(BASE_CLANS, 4, seed=s) for s in (0, 1))
    assert a != b
    assert Counter(frozenset(t) for t in a) == Counter(frozenset(t) for t in b)
    assert tn.balance_schedule(BASE_CLANS, 4, seed=0) == a
    assert a[:4] != tuple(tuple(c[r:] + c[:r]) for r, c in
                          zip(range(4), [tuple(BASE_CLANS[:4])] * 4))   # not alphabetical


def test_balance_40_games_every_clan_plays_as_often(tmp_path, capsys):
    """balance --games 40 (4 players, 8 clans): game counts per clan differ by at most one
    block (4), and every clan's seats differ by at most 1 (player 0 is first, R-1.6)."""
    out = tmp_path / "b.csv"
    assert main(["balance", "--agent", "random", "--games", "40", "--out", str(out),
                 "--plot", "", "-q"]) == 0
    rows = _rows(out)
    per_clan = Counter(r["clan"] for r in rows)
    assert set(per_clan) == set(BASE_CLANS)
    assert max(per_clan.values()) - min(per_clan.values()) <= 4
    for clan in BASE_CLANS:
        seats = Counter(r["seat"] for r in rows if r["clan"] == clan)
        assert max(seats.values()) - min(seats.get(str(s), 0) for s in range(4)) <= 1
    assert {r["player"] for r in rows if r["seat"] == "0"} == {"0"}
    assert "games per clan" in capsys.readouterr().out


# ------------------------------------------------------------ rules in the output
def test_rules_are_recorded_in_csv_records_and_tables(tmp_path, capsys):
    override = tmp_path / "rules.json"
    override.write_text(json.dumps({}))
    out, rec = tmp_path / "r.csv", tmp_path / "rec"
    assert main(["play", "--players", "random,random,random", "--games", "2", "--auction",
                 "--variant", "no-ports,static-imports", "--ruleset", str(override),
                 "--out", str(out), "--record-dir", str(rec), "-q"]) == 0
    rows = _rows(out)
    assert {r["clan_mode"] for r in rows} == {"auction"}
    assert {r["variants"] for r in rows} == {"static-imports+no-ports"}
    assert {r["ruleset"] for r in rows} == {str(override)}
    assert len({r["ruleset_fingerprint"] for r in rows}) == 1
    config = json.loads((rec / "game_000000.json").read_text())["config"]
    assert config["ports"] is False and config["variant_static_imports"] is True
    assert config["clan_auction"] is True and config["ruleset"] == str(override)
    assert "rules: clans auction; variants static-imports, no-ports" in capsys.readouterr().out


def test_R_9_2_solo_play_and_default_standard_game(tmp_path):
    """--solo plays the one-player game (R-9.2); without options the clans are drafted
    (R-1.7) with no variant and the bundled ruleset."""
    out = tmp_path / "s.csv"
    assert main(["play", "--players", "greedy", "--solo", "--games", "1", "--out", str(out),
                 "-q"]) == 0
    (row,) = _rows(out)
    assert row["variants"] == "solo" and row["clan_mode"] == "draft" and row["clan"] != "-"
    assert main(["play", "--players", "random,random", "--games", "1", "--out", str(out),
                 "-q"]) == 0
    assert {(r["clan_mode"], r["variants"], r["ruleset"]) for r in _rows(out)} == \
        {("draft", "", "bundled")}


@pytest.mark.parametrize("args, needle", [
    (["--variant", "no-dice"], "variants: static-imports, no-scoring-tiles, no-ports"),
    (["--ruleset", "/no/such/rules"], "--ruleset"),
    (["--clans", "stewart,stewart"], "clans must be different"),
    (["--clans", "stewart,campbell", "--auction"], "--auction"),
    (["--solo"], "must be 1 with --solo"),
    (["--variant", "smaller-map", "--players", "random,random,random,random"], "2-3 player"),
])
def test_play_bad_rules_exit_2_with_one_line(args, needle, capsys):
    argv = ["play", "--games", "1", "-q", *args]
    if "--players" not in args:
        argv += ["--players", "random,random"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.startswith("caledonia play: error:")
    assert err.count("\n") == 1


def test_balance_rules_options(tmp_path, capsys):
    out = tmp_path / "b.csv"
    assert main(["balance", "--agent", "random", "--players", "2", "--clans",
                 "stewart,campbell", "--games", "2", "--variant", "no-scoring-tiles",
                 "--out", str(out), "--plot", "", "-q"]) == 0
    assert {r["variants"] for r in _rows(out)} == {"no-scoring-tiles"}
    assert {r["clan_mode"] for r in _rows(out)} == {"fixed"}
    assert main(["balance", "--players", "2", "--games", "1", "--variant", "kickstarter-clan",
                 "-q", "--plot", ""]) == 2
    assert "kickstarter_clan" in capsys.readouterr().err


def test_render_and_demo_take_the_rules_options(tmp_path, capsys):
    png = tmp_path / "solo.png"
    assert main(["render", "--solo", "--seed", "2", "--moves", "10", "-o", str(png)]) == 0
    assert png.stat().st_size > 1000
    assert main(["demo", "--players", "2", "--clans", "none", "--variant", "no-ports",
                 "-o", str(tmp_path / "d.png")]) == 0
    assert main(["render", "--solo", "--players", "3", "-o", str(png)]) == 2
    assert "--solo" in capsys.readouterr().err


# ------------------------------------------------------------------ output paths
@pytest.mark.parametrize("argv, needle", [
    (["play", "--players", "random,random", "--out", "{f}/x.csv"], "does not exist"),
    (["play", "--players", "random,random", "--out", "{d}"], "is a folder"),
    (["play", "--players", "random,random", "--record-dir", "{d}/no/rec"], "does not exist"),
    (["play", "--players", "random,random", "--record-dir", "{f}"], "not a folder"),
    (["balance", "--players", "2", "--out", "{d}/no/b.csv"], "does not exist"),
    (["balance", "--players", "2", "--plot", "{f}/b.png"], "does not exist"),
    (["render", "-o", "{d}/no/x.png"], "does not exist"),
    (["plot", "{d}", "-o", "{d}/no/curve.png"], "does not exist"),
])
def test_unwritable_or_missing_output_paths_exit_2_before_playing(argv, needle, tmp_path,
                                                                  capsys):
    f = tmp_path / "a_file"
    f.write_text("x")
    argv = [a.format(d=tmp_path, f=f) for a in argv]
    if argv[0] in ("play", "balance"):
        argv += ["--games", "1", "-q"]
    before = sorted(os.listdir(tmp_path))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == before         # nothing created


def test_train_and_evaluate_paths_checked_first(tmp_path, capsys):
    pytest.importorskip("sb3_contrib")
    assert main(["train", "--out", str(tmp_path / "no" / "run"), "--timesteps", "10"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["evaluate", "pretrained", "--games", "1", "--league-file",
                 str(tmp_path / "no" / "deeper" / "league.csv"), "-q"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["evaluate", "pretrained", "--games", "1", "--out",
                 str(tmp_path / "no" / "e.csv"), "--league-file", "", "-q"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


# --------------------------------------------------------------------- SIGTERM
def test_sigterm_during_play_keeps_the_finished_games_and_their_records(tmp_path):
    """SIGTERM in the middle of a --record-dir tournament: exit 143, the finished games'
    rows in the CSV, each with its record (a record is written before its rows), the
    --resume command in the message, no hidden temporary file and no lock file left."""
    out, rec = tmp_path / "t.csv", tmp_path / "rec"
    proc = subprocess.Popen(
        [sys.executable, "-m", "caledonia_env", "play", "--players", "greedy,greedy",
         "--games", "100000", "--workers", "2", "--out", str(out), "--record-dir", str(rec),
         "-q"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = terminate_when(proc, lambda: rec.is_dir() and len(os.listdir(rec)) > 1,
                         pause=1.0)      # some games finished, their records written
    assert proc.returncode == 143, err
    games = {int(r["game"]) for r in _rows(out)}
    assert len(_rows(out)) == 2 * len(games) > 0
    assert f"terminated; {len(games)} complete games kept in {out} with their records in " \
           f"{rec}; run the same command with --resume" in err, err
    records = {int(n[5:11]) for n in os.listdir(rec)}
    assert games <= records and len(records - games) <= 1, (games, records)
    assert sorted(os.listdir(tmp_path)) == ["rec", "t.csv"]
    assert all(n.startswith("game_") and n.endswith(".json") for n in os.listdir(rec))


def test_the_progress_bar_counts_its_unit_from_its_start_on_a_terminal_only(monkeypatch):
    """One bar for games, training steps (resumed runs start part-way) and expert batches."""
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with tn.progress_bar(2048, "training", unit="step", start=1024) as bar:
        bar.update(1024)
    assert err.getvalue() == ""                       # not a terminal: silent
    monkeypatch.setattr(err, "isatty", lambda: True, raising=False)
    with tn.progress_bar(2048, "training", unit="step", start=1024, scale=True) as bar:
        assert bar.n == 1024
        bar.update(1024)
    assert "training" in err.getvalue() and "2.05k/2.05k" in err.getvalue()
    assert "step/s" in err.getvalue()
    with tn.progress_bar(3, "fit", quiet=True, unit="batch") as bar:
        bar.update(3)
    assert "batch" not in err.getvalue()              # quiet: silent on a terminal too
