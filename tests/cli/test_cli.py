"""The ``caledonia`` command run in-process: play, replay, render, demo, help and bad input."""
import csv
import html
import json
import os
import shlex
import subprocess
import sys

import pytest

from caledonia_env import Game
from caledonia_env import tournament as tn
from caledonia_env.cli import build_parser, main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _listing(folder):
    return sorted(os.listdir(folder))


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One small tournament with CSV and records, shared by several tests."""
    d = tmp_path_factory.mktemp("play")
    out, rec = d / "results.csv", d / "records"
    code = main(["play", "--players", "greedy,random,random", "--games", "3", "--seed", "4",
                 "--out", str(out), "--record-dir", str(rec), "-q"])
    return code, out, rec


# ---------------------------------------------------------------------- play
def test_play_writes_csv_and_records(played, capsys):
    code, out, rec = played
    assert code == 0
    rows = _rows(out)
    assert len(rows) == 3 * 3
    assert list(rows[0]) == list(tn.CSV_FIELDS)
    assert {r["agent"] for r in rows} == {"greedy", "random"}
    for g in range(3):
        game_rows = [r for r in rows if int(r["game"]) == g]
        assert sorted(int(r["seat"]) for r in game_rows) == [0, 1, 2]
        assert sum(float(r["win"]) for r in game_rows) == pytest.approx(1.0)
        assert min(int(r["rank"]) for r in game_rows) == 1
    assert _listing(rec) == [f"game_{g:06d}.json" for g in range(3)]
    assert not [f for f in os.listdir(rec.parent) if f.startswith(".")]   # no temp left


def test_R_7_records_replay_to_the_csv_scores(played):
    """Every record replays (Game.from_json) to the VP written in the CSV (R-7 totals)."""
    _, out, rec = played
    rows = _rows(out)
    for g in range(3):
        game = Game.from_json((rec / f"game_{g:06d}.json").read_text())
        assert game.is_terminal
        for p, vp in enumerate(game.scores()):
            row = next(r for r in rows if int(r["game"]) == g and int(r["player"]) == p)
            assert int(row["total"]) == vp
            assert set(tn.SCORE_FIELDS) <= set(row)


def test_play_prints_tables_by_agent_and_seat(capsys):
    assert main(["play", "--players", "random,random", "--games", "4", "-q"]) == 0
    text = capsys.readouterr().out
    assert "by agent" in text and "by seat" in text and "95% CI" in text
    for field in ("glory", "goods", "settlem"):
        assert field in text


def test_play_is_independent_of_worker_count(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["play", "--players", "random,greedy", "--games", "4", "--seed", "9",
                 "--out", str(a), "-q"]) == 0
    assert main(["play", "--players", "random,greedy", "--games", "4", "--seed", "9",
                 "--workers", "2", "--out", str(b), "-q"]) == 0
    strip = lambda rows: [{k: v for k, v in r.items() if k != "think_seconds"} for r in rows]
    assert strip(_rows(a)) == strip(_rows(b))


def test_play_fixed_map(tmp_path):
    out = tmp_path / "m.csv"
    assert main(["play", "--players", "random,random", "--games", "2", "--map", "a2,b1,c2,d1",
                 "--out", str(out), "-q"]) == 0
    assert {r["map"] for r in _rows(out)} == {"A2,B1,C2,D1"}


def test_progress_bar_goes_to_stderr_on_a_terminal_only(capsys, monkeypatch):
    assert main(["play", "--players", "random,random", "--games", "2"]) == 0
    assert capsys.readouterr().err == ""          # stderr is not a terminal: no bar
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert main(["play", "--players", "random,random", "--games", "2"]) == 0
    err = capsys.readouterr().err
    assert "2/2" in err and "game" in err
    assert main(["play", "--players", "random,random", "--games", "2", "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_wilson_interval_known_values():
    lo, hi = tn.wilson(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-3) and hi == pytest.approx(0.7634, abs=1e-3)
    lo, hi = tn.wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-3)
    assert tn.wilson(0, 0) == (0.0, 1.0)


def test_failed_run_keeps_the_finished_games_and_leaves_nothing_half_written(tmp_path,
                                                                            monkeypatch):
    """An error in game 2: games 0 and 1 keep their rows and records (streamed as they
    finished), no temporary file is left."""
    real = tn.play_game

    def broken(spec, g, record=False):
        if g == 2:
            raise RuntimeError("engine exploded")
        return real(spec, g, record)

    monkeypatch.setattr(tn, "play_game", broken)
    out, rec = tmp_path / "r.csv", tmp_path / "rec"
    with pytest.raises(RuntimeError):
        main(["play", "--players", "random,random", "--games", "4", "--out", str(out),
              "--record-dir", str(rec), "-q"])
    assert _listing(tmp_path) == ["r.csv", "rec"]
    assert _listing(rec) == ["game_000000.json", "game_000001.json"]
    assert sorted({int(r["game"]) for r in _rows(out)}) == [0, 1]


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize("args, needle", [
    (["--players", "greedy,alphazero"], "available: greedy, mcts, qpolicy, random"),
    (["--players", "greedy"], "2 to 4"),
    (["--players", "random,random,random,random,random"], "2 to 4"),
    (["--players", "random,,random"], "empty agent name"),
    (["--players", "random:3,random"], "takes no parameter"),
    (["--players", "mcts:lots,random"], "rollout count"),
    (["--players", "random,random", "--map", "A1,B2,C3,D1"], "allowed sides"),
    (["--players", "random,random", "--map", "A1,B2"], "allowed sides"),
    (["--players", "random,random", "--games", "0"], "positive"),
    (["--players", "random,random", "--seed", "-1"], "seed"),
    (["--players", "random,random", "--workers", "0"], "workers"),
])
def test_play_bad_input_exits_2_with_allowed_values(args, needle, capsys, tmp_path):
    out = tmp_path / "x.csv"
    games = [] if "--games" in args else ["--games", "1"]
    assert main(["play", *args, *games, "--out", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert needle in err
    assert err.startswith("caledonia play: error:")
    assert not out.exists()


def test_play_output_in_missing_folder_fails_before_playing(tmp_path, capsys):
    assert main(["play", "--players", "random,random", "--games", "1",
                 "--out", str(tmp_path / "no" / "r.csv"), "-q"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_unknown_option_and_command_exit_2(capsys):
    assert main(["play", "--players", "random,random", "--frobnicate"]) == 2
    assert main(["conquer"]) == 2
    assert main([]) == 2


# ------------------------------------------------------------ clans/balance
@pytest.mark.parametrize("clans, expect", [
    ("stewart,campbell", {"stewart", "campbell"}),
    ("stewart,none", {"stewart", "-"}),
    ("none", {"-"}),
])
def test_R_8_play_with_fixed_clans(tmp_path, clans, expect):
    out = tmp_path / "c.csv"
    assert main(["play", "--players", "greedy,random", "--games", "2", "--clans", clans,
                 "--out", str(out), "-q"]) == 0
    rows = _rows(out)
    assert {r["clan"] for r in rows} == expect
    if "stewart" in expect:
        assert all(r["clan"] == "stewart" for r in rows if r["player"] == "0")


@pytest.mark.parametrize("mode", ["draft", "auction"])
def test_R_1_7_R_9_4_play_with_drafted_or_auctioned_clans(tmp_path, capsys, mode):
    out = tmp_path / "d.csv"
    assert main(["play", "--players", "greedy,random,random", "--games", "2", "--clans", mode,
                 "--out", str(out), "-q"]) == 0
    rows = _rows(out)
    assert all(r["clan"] != "-" for r in rows)
    assert {r["clan_mode"] for r in rows} == {mode}
    # drafted / auctioned clans are chosen by agents of different strength: no by-clan table
    # (clan against clan is 'balance'); the clans are in the CSV
    assert "by clan" not in capsys.readouterr().out


@pytest.mark.parametrize("clans, needle", [
    ("stewart,klingon", "unknown clan"),
    ("stewart", "one clan per player"),
])
def test_play_bad_clans_exit_2(capsys, clans, needle):
    assert main(["play", "--players", "random,random", "--games", "1", "--clans", clans, "-q"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "campbell" in err


def test_balance_tables_csv_and_plot(tmp_path, capsys):
    out, plot = tmp_path / "b.csv", tmp_path / "b.png"
    assert main(["balance", "--agent", "random", "--players", "2", "--clans",
                 "stewart,campbell,fergusson", "--games", "6", "--out", str(out),
                 "--plot", str(plot), "-q"]) == 0
    text = capsys.readouterr().out
    assert "win rate by clan" in text and "head to head" in text
    rows = _rows(out)
    assert len(rows) == 12
    # every pair of the three clans meets, each in both seats (3 pairs x 2 rotations)
    pairs = {tuple(r["clan"] for r in rows if r["game"] == g) for g in {r["game"] for r in rows}}
    assert pairs == {("stewart", "campbell"), ("campbell", "stewart"), ("stewart", "fergusson"),
                     ("fergusson", "stewart"), ("campbell", "fergusson"), ("fergusson", "campbell")}
    assert plot.read_bytes()[:8] == PNG_MAGIC


def test_balance_report_writes_the_page_the_markdown_and_the_json(tmp_path, capsys):
    """--report DIR: index.html (conclusions, command, seeds, fingerprint, the plot embedded),
    report.md and report.json, whose sentences say what its clan table holds."""
    folder = tmp_path / "rep"
    argv = ["balance", "--players", "2", "--games", "40", "--agent", "greedy", "--plot", "",
            "-q", "--report", str(folder)]
    assert main(argv) == 0
    assert f"report written to {folder}" in capsys.readouterr().out
    assert sorted(os.listdir(folder)) == ["index.html", "report.json", "report.md"]
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert data["command"] == shlex.join(["caledonia", *argv])
    meta = data["metadata"]
    assert meta["agent"] == "every player greedy" and meta["games played"] == "40"
    assert meta["seeds"].startswith("tournament seed 0") and len(meta["ruleset fingerprint"]) == 64
    caption, header, rows = data["tables"][0]["caption"], data["tables"][0]["header"], \
        data["tables"][0]["rows"]
    assert "par 50%" in caption and sum(r[header.index("games")] for r in rows) == 80
    for r in rows:
        clan, rate, verdict = r[0], r[header.index("win %")], r[header.index("vs par")]
        said = next(c for c in data["conclusions"] if c.startswith(f"{clan} wins "))
        assert said.startswith(f"{clan} wins {rate:.1f}% (") and f", {verdict} (50%)" in said
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert "<script" not in page and "data:image/png;base64,iVBORw0KGgo" in page
    for sentence in data["conclusions"]:
        assert f"<li>{html.escape(sentence)}</li>" in page
    assert meta["ruleset fingerprint"] in page and "caledonia balance --players 2" in page
    md = (folder / "report.md").read_text(encoding="utf-8")
    assert "## Conclusions" in md and f"- {data['conclusions'][1]}" in md
    assert main(["balance", "--players", "2", "--games", "2", "--plot", "", "-q", "--report",
                 str(tmp_path / "no" / "rep")]) == 2
    assert "--report" in capsys.readouterr().err


@pytest.mark.parametrize("players", [2, 3, 4])
def test_balance_plays_qpolicy_of_its_player_count_unless_told(tmp_path, capsys, players):
    """The default agent is qpolicy (the policy file of the game's player count); the tuned
    evaluation and the default weights stay one flag away (--agent greedy:Np, greedy)."""
    out = tmp_path / "b.csv"
    assert main(["balance", "--players", str(players), "--games", str(players), "-q",
                 "--out", str(out), "--plot", ""]) == 0
    assert "every player qpolicy" in capsys.readouterr().out
    assert {r["agent"] for r in csv.DictReader(out.open())} == {"qpolicy"}
    for agent in (f"greedy:{players}p", "greedy"):
        assert main(["balance", "--players", str(players), "--games", "2", "-q", "--agent",
                     agent, "--out", str(tmp_path / "g.csv"), "--plot", ""]) == 0
        assert {r["agent"] for r in csv.DictReader((tmp_path / "g.csv").open())} == {agent}


def test_balance_against_the_automa_compares_clans_on_the_other_seats(tmp_path, capsys):
    """A-0/A-1.3: --automa puts Automa seats (no clan) after the agent's seats; every clan
    plays as often, and the Automa is listed under its name in the tables."""
    out = tmp_path / "a.csv"
    assert main(["balance", "--agent", "random", "--players", "3", "--automa", "2",
                 "--clans", "stewart,campbell,fergusson", "--games", "6", "--out", str(out),
                 "--plot", "", "-q"]) == 0
    text = capsys.readouterr().out
    assert "2 x random with a clan against automa:2" in text and "automa:2" in text
    rows = _rows(out)
    assert len(rows) == 18
    for g in {r["game"] for r in rows}:
        seats = sorted((r for r in rows if r["game"] == g), key=lambda r: int(r["player"]))
        assert [r["agent"] for r in seats] == ["random", "random", "automa:2"]
        assert seats[2]["clan"] == "-" and "-" not in (seats[0]["clan"], seats[1]["clan"])
    per_clan = {c: sum(r["clan"] == c for r in rows) for c in ("stewart", "campbell", "fergusson")}
    assert set(per_clan.values()) == {4}


def test_balance_drafted_design_lets_the_agents_draft_r17(tmp_path, capsys):
    """R-1.7: --design drafted plays the standard game; every seat holds a drafted clan and
    the summary gives each clan's draft share."""
    out = tmp_path / "d.csv"
    assert main(["balance", "--agent", "greedy", "--players", "3", "--design", "drafted",
                 "--games", "4", "--out", str(out), "--plot", "", "-q"]) == 0
    text = capsys.readouterr().out
    assert "clans drafted by the players (R-1.7" in text and "draft share" in text
    rows = _rows(out)
    assert len(rows) == 12 and {r["clan_mode"] for r in rows} == {"draft"}
    for g in {r["game"] for r in rows}:
        clans = [r["clan"] for r in rows if r["game"] == g]
        assert len(set(clans)) == 3 and "-" not in clans
    share = {c: sum(r["clan"] == c for r in rows) for c in {r["clan"] for r in rows}}
    for clan, n in share.items():
        assert f"{clan} {100 * n / 4:.0f}%" in text
    assert main(["balance", "--design", "drafted", "--clans", "stewart,campbell",
                 "--plot", "", "-q"]) == 2
    assert "--design assigned" in capsys.readouterr().err


@pytest.mark.parametrize("automa, needle", [("6", "1-5"), ("x", "levels 1-5"),
                                            ("3,4", "no seat for the clans")])
def test_balance_bad_automa_exits_2(tmp_path, capsys, automa, needle):
    assert main(["balance", "--players", "2", "--automa", automa, "--plot", "", "-q"]) == 2
    assert needle in capsys.readouterr().err


def test_play_solo_prints_mean_vp_and_rating_bands_r92(tmp_path, capsys):
    """R-9.2: `play --solo` adds the mean VP with its CI and the share of each rating band."""
    out = tmp_path / "s.csv"
    assert main(["play", "--players", "random", "--solo", "--games", "6", "--out", str(out),
                 "-q"]) == 0
    text = capsys.readouterr().out
    line = next(x for x in text.splitlines() if x.startswith("random: mean VP"))
    rows = _rows(out)
    mean = sum(int(r["total"]) for r in rows) / len(rows)
    assert f"mean VP {mean:.1f}" in line and "over 6 games" in line
    for band in ("Newbie", "Rookie", "Average", "Expert", "Genius"):
        assert band in line
    summary = tn.solo_summary([{"total": int(r["total"])} for r in rows])
    assert sum(summary["bands"].values()) == 6
    assert summary["vp_ci_low"] <= summary["vp"] <= summary["vp_ci_high"]


def test_balance_schedule_meets_every_combination():
    sched = tn.balance_schedule(["a", "b", "c", "d", "e"], 4)
    assert len(sched) == 5 * 4
    assert {frozenset(s) for s in sched} == {frozenset(c) for c in
                                             __import__("itertools").combinations("abcde", 4)}
    for clan in "abcde":       # every clan plays every seat equally often
        for seat in range(4):
            assert sum(s[seat] == clan for s in sched) == 4


def test_head_to_head_counts():
    rows = [{"game": 0, "clan": "a", "rank": 1}, {"game": 0, "clan": "b", "rank": 2},
            {"game": 1, "clan": "a", "rank": 1}, {"game": 1, "clan": "b", "rank": 1}]
    names, ahead, meet = tn.head_to_head(rows)
    assert names == ["a", "b"]
    assert ahead[0, 1] == 1.5 and ahead[1, 0] == 0.5 and meet[0, 1] == 2


@pytest.mark.parametrize("args, needle", [
    (["--clans", "stewart,borg"], "unknown clan"),
    (["--clans", "stewart", "--players", "2"], "need at least 2 clans"),
    (["--clans", "stewart,stewart", "--players", "2"], "different"),
    (["--players", "5"], "--players must be 2 to 4"),
    (["--agent", "deepblue"], "available:"),
    (["--games", "0"], "positive"),
])
def test_balance_bad_input_exits_2(tmp_path, capsys, args, needle):
    plot = tmp_path / "p.png"
    assert main(["balance", *args, "--plot", str(plot), "-q"]) == 2
    assert needle in capsys.readouterr().err
    assert not plot.exists()


# ---------------------------------------------------------------- replay
def test_replay_all_prints_every_decision(played, capsys):
    _, _, rec = played
    path = rec / "game_000001.json"
    n = len(json.loads(path.read_text())["actions"])
    assert main(["replay", str(path), "--all", "--brief"]) == 0
    out = capsys.readouterr().out
    assert f"#{n}/{n}" in out
    assert "winner(s)" in out and "starting pick" in out


def test_replay_steps_on_enter(played, capsys, monkeypatch):
    _, _, rec = played
    answers = iter(["", "", "q"])
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["replay", str(rec / "game_000000.json")]) == 0
    out = capsys.readouterr().out
    assert "#3/" in out and "#4/" not in out
    assert out.count("Clans of Caledonia") == 4       # start + three positions


@pytest.mark.parametrize("content, needle", [
    (None, "cannot read"),
    ("not json {", "a game record is JSON"),
    ('{"hello": 1}', "unsupported game record version"),
    (b"\xff\xfe{}", "UTF-8"),
    ("[" * 5000 + "]" * 5000, "nest"),
    ('{"version": 1, "config": {"num_players": 7}, "map": ["A1", "B1", "C1", "D1"], '
     '"actions": []}', "num_players"),
    ('{"version": 1, "config": {"num_players": 2, "seed": 1}, "actions": []}',
     "names the map it was played on"),
    ('{"version": 1, "config": {"num_players": 2, "seed": 1}, "map": ["A1", "B2", "C2", "D2"], '
     '"actions": [99999]}',
     "does not replay"),
])
def test_replay_bad_files_exit_2(tmp_path, capsys, content, needle):
    path = tmp_path / "g.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    assert main(["replay", str(path), "--all"]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_ruleset_value_the_engine_cannot_hold_exits_2(tmp_path, capsys):
    """A ruleset the schema accepts but the engine cannot play (a bid above the engine's
    limit) is one line and exit 2 before any game, not a traceback at game creation."""
    rules = tmp_path / "rules.json"
    rules.write_text('{"setup": {"auction_max_bid": 100}}')
    assert main(["demo", "--ruleset", str(rules)]) == 2
    err = capsys.readouterr().err
    assert "auction_max_bid" in err and "Traceback" not in err


# ---------------------------------------------------------------- render
def test_render_new_game_after_random_moves(tmp_path, capsys):
    out = tmp_path / "board.png"
    assert main(["render", "--seed", "3", "--players", "2", "--moves", "30", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert "30 random moves" in capsys.readouterr().out
    assert _listing(tmp_path) == ["board.png"]


def test_render_recorded_game(played, tmp_path):
    _, _, rec = played
    out = tmp_path / "final.png"
    assert main(["render", "--game", str(rec / "game_000002.json"), "--moves", "20",
                 "-o", str(out), "--text"]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize("args, needle", [
    (["--players", "9"], "num_players"),
    (["--map", "Z1,B1,C1,D1"], "allowed sides"),
    (["--moves", "-3"], "--moves"),
    (["--game", "/nonexistent/game.json"], "cannot read"),
])
def test_render_bad_input_exits_2(tmp_path, capsys, args, needle):
    out = tmp_path / "b.png"
    assert main(["render", *args, "-o", str(out)]) == 2
    assert needle in capsys.readouterr().err
    assert not out.exists()


# ------------------------------------------------------------ demo / help
def test_demo_still_works(tmp_path, capsys):
    out = tmp_path / "demo.png"
    assert main(["demo", "--players", "2", "--seed", "1", "-o", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert "decisions in" in capsys.readouterr().out


def test_help_of_every_command_explains_every_option(capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) >= {"play", "balance", "replay", "render", "demo", "train", "expert",
                                 "evaluate", "plot"}
    for name, cmd in sub.choices.items():
        assert main([name, "--help"]) == 0
        text = capsys.readouterr().out
        assert "examples:" in text
        for action in cmd._actions:
            if action.dest != "help":
                assert action.help, f"{name}: option {action.dest} has no help"
                flag = action.option_strings[-1] if action.option_strings else (action.metavar or action.dest)
                assert flag in text
    assert main(["--help"]) == 0
    assert "examples:" in capsys.readouterr().out


def test_python_dash_m_entry_point():
    r = subprocess.run([sys.executable, "-m", "caledonia_env", "play", "--players", "nobody,random"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert "unknown agent 'nobody'" in r.stderr
