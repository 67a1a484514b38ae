"""Paired what-if studies (``caledonia balance --compare B``) and several agents in one study
(``--agent A,B``): what B may change and the errors that name what is allowed, common random
numbers (identical rules give identical rows), the paired statistics, --out / --plot /
--resume / --workers, the backends, and the conclusions that change with the agent."""
import csv
import json
import dataclasses
import math
import os

import pytest

from caledonia_env import scale
from caledonia_env import tournament as tn
from caledonia_env.cli import main
from caledonia_env.config import GameConfig
from caledonia_env.tournament.arms import (AT, ABOVE, BELOW, ArmFiles, Design, changes_with_agent,
                                           make_arms, run_arms, study_verdicts, summarize)
from caledonia_env.tournament.compare import (paired_stats, parse_change, ruleset_file,
                                              same_rules, saving, write_tables)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CLANS = ["mackenzie", "stewart", "campbell"]
COMPARE = ["--players", "2", "--agent", "greedy", "--clans", ",".join(CLANS), "-q"]


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def untimed(rows, drop=("think_seconds", "ruleset")):
    return [{k: v for k, v in r.items() if k not in drop} for r in rows]


def _spec(players=2, games=6, drafted=False):
    if drafted:
        return tn.TournamentSpec(players=("greedy",) * players, games=games, seed=3,
                                 config=GameConfig(num_players=players, clans="draft"))
    return tn.TournamentSpec(players=("greedy",) * players, games=games, seed=3,
                             config=GameConfig(num_players=players, first_player=0),
                             clan_schedule=tn.balance_schedule(CLANS, players, seed=3))


def _play(tmp_path, spec, items, games, agents=("greedy",)):
    change = parse_change(items, spec.template.ruleset)
    b = change.config(spec.template, None if change.tables is None
                      else write_tables(change.tables, ruleset_file(str(tmp_path))))
    arms = make_arms(spec, agents, len(spec.players), b)
    with ArmFiles([str(tmp_path / a.file_name(k)) for k, a in enumerate(arms)]) as files:
        played = run_arms(arms, files, Design(len(spec.players), spec.clan_schedule is None),
                          games)
    return arms, played, b


# ------------------------------------------------------------ what B changes
@pytest.mark.parametrize("items, needle", [
    (["clans.mackenzi.whisky_money=4"], "no key 'mackenzi' in table clans; allowed there: "
                                        "buchanan, campbell"),
    (["clans.mackenzie.whisky_mony=4"], "no key 'whisky_mony' in table clans.mackenzie; allowed "
                                        "there: optional, whisky_money, cellar_money"),
    (["clan.mackenzie.whisky_money=4"], "no key 'clan' among the tables; allowed there: setup"),
    (["clans.mackenzie.whisky_money=-1"], "field 'whisky_money': must not be negative, got -1"),
    (["clans.mackenzie.whisky_money=lots"], "whisky_money takes an integer (now 3), got 'lots'"),
    (["clans.mackenzie.whisky_money=2.5"], "takes an integer (now 3)"),
    (["clans.mackenzie.optional=1"], "takes true or false (now false)"),
    (["clans.mackenzie=4"], "clans.mackenzie is a table (keys: optional, whisky_money"),
    (["clans.mackenzie.cellar_money[2]=9"], "is a list of 2 items: give "
                                            "clans.mackenzie.cellar_money[0] to"),
    (["clans.mackenzie.whisky_money.x=1"], "is the value 3, not a table"),
    (["no-such-thing"], "not a TABLE.PATH=VALUE override, a variant (static-imports"),
    (["estimates-2026-11", "market-estimate-2026-11"], "B takes one ruleset"),
])
def test_a_bad_change_names_the_key_and_what_is_allowed(items, needle):
    with pytest.raises(ValueError) as e:
        parse_change(items)
    assert needle in str(e.value) and str(e.value).startswith(items[-1])


def test_b_may_be_overrides_a_variant_or_a_ruleset_and_overrides_apply_to_it():
    c = parse_change(["clans.mackenzie.whisky_money=4", "clans.mackenzie.cellar_money[1]=16"])
    assert c.tables["clans"]["mackenzie"]["whisky_money"] == 4
    assert c.tables["clans"]["mackenzie"]["cellar_money"] == [7, 16]
    assert c.describe() == ("clans.mackenzie.whisky_money 3 -> 4; "
                            "clans.mackenzie.cellar_money[1] 15 -> 16")
    v = parse_change(["static-imports"])
    assert v.variants == {"variant_static_imports": True} and v.tables is None
    assert v.config(GameConfig(num_players=2)).variant_static_imports
    named = parse_change(["estimates-2026-11", "units.sheep.cost=5"])
    assert named.overrides == (("units.sheep.cost", 4, 5),)     # the named ruleset's 4, not 3
    with pytest.raises(ValueError, match="written to"):
        named.config(GameConfig(num_players=2))                   # B's file must be given


# ------------------------------------------------------------ common random numbers
@pytest.mark.parametrize("drafted, players", [(False, 2), (True, 3)])
def test_identical_rules_give_identical_rows(tmp_path, drafted, players):
    """A's rules written as B's overrides: every row the same (seeds, map, clans, seats,
    agent streams), every paired difference 0; the rows differ once B changes a number."""
    spec = _spec(players, drafted=drafted)
    arms, played, b = _play(tmp_path, spec, ["clans.mackenzie.whisky_money=3"], 4)
    a_rows, b_rows = played.rows
    assert same_rules(spec.template, b) and b.ruleset != spec.template.ruleset
    assert untimed(a_rows) == untimed(b_rows) and len(a_rows) == 4 * players
    z = 1.959964
    for s in paired_stats(a_rows, b_rows, drafted):
        assert s["diff"] == 0 and s["var_diff"] == 0 and math.isinf(s["ratio"])
        # no difference seen in n games: the Wilson bound on the share B changes, not [0, 0]
        bound = z * z / (s["n"] + z * z)
        assert (s["ci_low"], s["ci_high"]) == pytest.approx((-bound, bound))
    assert saving(paired_stats(a_rows, b_rows, drafted), 4)["independent_games"] == math.inf
    (tmp_path / "x").mkdir()
    _, other, b2 = _play(tmp_path / "x", spec, ["clans.mackenzie.whisky_money=12"], 4)
    assert not same_rules(spec.template, b2)
    assert untimed(other.rows[0]) == untimed(a_rows)           # A is A whatever B is
    assert untimed(other.rows[1]) != untimed(a_rows)


# ------------------------------------------------------------ the paired statistics
def _row(g, player, clan, win, total, goods=0):
    r = {f: 0 for f in tn.SCORE_FIELDS}
    r.update(game=g, player=player, agent="greedy", clan=clan, win=win, total=total,
             goods=goods)
    return r


def test_paired_statistics_by_hand():
    """Four games of x against y; B turns game 2 from y's win into x's, and game 3 from x's
    win into a tie: x's differences 0, 0, 1, -0.5; its VP total rises by 2 a game."""
    wins_a = [(1, 0), (0, 1), (0, 1), (1, 0)]
    wins_b = [(1, 0), (0, 1), (1, 0), (0.5, 0.5)]
    A = [_row(g, p, c, w[p], 100, 10) for g, w in enumerate(wins_a) for p, c in enumerate("xy")]
    B = [_row(g, p, c, w[p], 102 if c == "x" else 100, 10 + 3 * (c == "x"))
         for g, w in enumerate(wins_b) for p, c in enumerate("xy")]
    x = {s["clan"]: s for s in paired_stats(A, B)}["x"]
    d = [0, 0, 1, -0.5]                       # B - A of x's win share, per game
    assert x["n"] == 4 and x["win_a"] == 0.5 and x["win_b"] == 0.625
    assert x["diff"] == pytest.approx(sum(d) / 4)
    var = sum((v - sum(d) / 4) ** 2 for v in d) / 3
    assert x["var_diff"] == pytest.approx(var)
    assert x["ratio"] == pytest.approx((x["var_a"] + x["var_b"]) / var)
    assert x["var_a"] + x["var_b"] - 2 * x["cov"] == pytest.approx(var)
    half = 1.959964 * math.sqrt(var / 4)
    assert (x["ci_low"], x["ci_high"]) == pytest.approx((x["diff"] - half, x["diff"] + half))
    assert x["delta"]["total"] == 2 and x["moved"][0] == "goods" and x["delta"]["goods"] == 3
    assert (x["rank_a"], x["rank_b"]) == (1, 1)
    with pytest.raises(ValueError, match="not paired"):
        paired_stats(A, B[:-2])


# ------------------------------------------------------------ the command
def test_compare_prints_the_paired_table_writes_the_sides_and_the_plot(tmp_path, capsys):
    out, plot = tmp_path / "w.csv", tmp_path / "w.png"
    assert main(["balance", *COMPARE, "--games", "6", "--compare",
                 "clans.mackenzie.whisky_money=9", "--out", str(out), "--plot", str(plot)]) == 0
    text = capsys.readouterr().out
    assert "B - A by clan" in text and "clans.mackenzie.whisky_money 3 -> 9" in text
    assert "two independent studies would need" in text and "B changes" in text
    rows = _rows(out)
    assert list(rows[0])[0] == "side" and len(rows) == 2 * 6 * 2
    a = [r for r in rows if r["side"] == "A"]
    b = [r for r in rows if r["side"] == "B"]
    assert [(r["game"], r["clan"], r["seat"]) for r in a] == \
        [(r["game"], r["clan"], r["seat"]) for r in b]
    assert {r["ruleset"] for r in a} == {"bundled"}
    assert {r["ruleset"] for r in b} == {str(tmp_path / "w.csv.arms" / "ruleset_B.json")}
    assert sorted(os.listdir(tmp_path / "w.csv.arms")) == ["0-greedy-A.csv", "1-greedy-B.csv",
                                                          "ruleset_B.json"]
    assert plot.read_bytes()[:8] == PNG_MAGIC


def test_resume_finishes_an_interrupted_compare_study(tmp_path, capsys):
    """B's file cut after two games (and inside a row): --resume (with two workers) plays
    only the missing games, and the paired rows are those of the study played whole."""
    out = tmp_path / "w.csv"
    argv = ["balance", *COMPARE, "--games", "6", "--compare", "clans.mackenzie.whisky_money=6",
            "--out", str(out), "--plot", ""]
    assert main(argv) == 0
    whole = untimed(_rows(out), ("think_seconds",))
    arm = tmp_path / "w.csv.arms" / "1-greedy-B.csv"
    lines = arm.read_text().splitlines(keepends=True)
    arm.write_text("".join(lines[:1 + 2 * 2]) + lines[5][:20])
    out.unlink()
    capsys.readouterr()
    assert main(argv + ["--resume", "--workers", "2"]) == 0
    assert "--resume: 8 games already in" in capsys.readouterr().out     # 6 of A, 2 of B
    assert untimed(_rows(out), ("think_seconds",)) == whole
    assert main(argv[:-4] + ["clans.mackenzie.whisky_money=7", *argv[-4:], "--resume"]) == 2
    assert "ruleset_fingerprint" in capsys.readouterr().err      # another B: refused


@pytest.mark.parametrize("args, needle", [
    (["--compare", "clans.mackenzie.whisky_mony=4"], "--compare clans.mackenzie.whisky_mony=4: "
                                                     "no key 'whisky_mony'"),
    (["--compare", "static-imports", "--perturb", "2"], "do not combine with --compare"),
    (["--compare", "static-imports", "--out", "x.parquet"], "give FILE.csv"),
    (["--compare", "static-imports", "--resume"], "need --out FILE.csv"),
    (["--confidence", "0.9"], "--confidence go with --until resolved"),
    (["--until", "resolved", "--games", "10"], "not --games"),
    (["--until", "resolved", "--confidence", "1.5"], "--confidence is a level between 0 and 1"),
    (["--until", "resolved", "--batch", "0"], "--batch must be a positive"),
    (["--margin", "0"], "--margin is in percentage points"),
    (["--agent", "greedy,,random"], "empty agent name"),
    (["--agent", "greedy,greedy"], "each agent once"),
    (["--agent", "greedy,deepblue"], "available:"),
])
def test_bad_what_if_input_exits_2_naming_the_option(tmp_path, monkeypatch, capsys, args,
                                                    needle):
    monkeypatch.chdir(tmp_path)
    assert main(["balance", "--players", "2", "--games", "2", "--plot", "", "-q", *args]
                if "--until" not in args else
                ["balance", "--players", "2", "--plot", "", "-q", *args]) == 2
    assert needle in capsys.readouterr().err


# ------------------------------------------------------------ backends
def test_both_backends_play_an_arm_through_the_same_chunk_function(tmp_path):
    """``scale.play_chunk`` (what a local process and a Ray task run) gives B's arm the
    rows the local study file holds."""
    spec = _spec()
    arms, played, _ = _play(tmp_path, spec, ["clans.mackenzie.whisky_money=6"], 4)
    chunk = scale.play_chunk(dataclasses.replace(arms[1].spec, games=4), [0, 1, 2, 3])
    assert untimed(chunk["rows"]) == untimed(played.rows[1])


@pytest.mark.slow
def test_ray_gives_the_local_paired_rows(tmp_path):
    """``--backend ray`` (a local Ray, as tests/scale does) writes the same arm rows."""
    pytest.importorskip("ray")
    spec = _spec()
    arms, local, b = _play(tmp_path, spec, ["clans.mackenzie.whisky_money=6"], 4)
    (tmp_path / "ray").mkdir()
    paths = [str(tmp_path / "ray" / a.file_name(k)) for k, a in enumerate(arms)]
    with ArmFiles(paths, backend="ray", workers=2) as files:
        remote = run_arms(arms, files, Design(2), 4)
    assert [untimed(r) for r in remote.rows] == [untimed(r) for r in local.rows]


# ------------------------------------------------------------ several agents
def test_changes_with_agent_yes_no_open():
    rows = [{"clan": "x", "verdict": ABOVE}, {"clan": "x", "verdict": AT},
            {"clan": "y", "verdict": BELOW}, {"clan": "y", "verdict": BELOW},
            {"clan": "z", "verdict": ABOVE}, {"clan": "z", "verdict": ""}]
    assert changes_with_agent(rows) == {"x": "yes", "y": "no", "z": "open"}


def test_several_agents_play_the_same_games_and_mark_what_changes(tmp_path, capsys):
    out = tmp_path / "a.csv"
    assert main(["balance", "--players", "2", "--agent", "greedy,random", "--clans",
                 ",".join(CLANS), "--games", "6", "--out", str(out), "--plot",
                 str(tmp_path / "a.png"), "-q"]) == 0
    text = capsys.readouterr().out
    assert "changes with agent" in text and "win rate by clan" in text
    rows = _rows(out)
    by = {a: [(r["game"], r["game_seed"], r["clan"], r["seat"]) for r in rows if r["agent"] == a]
          for a in ("greedy", "random")}
    assert by["greedy"] == by["random"] and len(by["greedy"]) == 12
    assert (tmp_path / "a.png").read_bytes()[:8] == PNG_MAGIC


def test_a_conclusion_that_differs_between_agents_is_marked_and_said(tmp_path):
    """The verdicts and sentences of a summary: a clan above par under one agent and below
    under the other is marked 'yes' and named in a sentence."""
    spec = _spec()
    arms = make_arms(spec, ("greedy", "random"), 2)
    with ArmFiles([str(tmp_path / a.file_name(k)) for k, a in enumerate(arms)]) as files:
        played = run_arms(arms, files, Design(2, margin=0.3), 6)
    for v in played.verdicts:                      # force opposite verdicts on mackenzie
        if v["clan"] == "mackenzie":
            v["verdict"], v["text"] = (ABOVE, "above par") if v["agent"] == "greedy" else \
                (BELOW, "below par")
    s = summarize(arms, played, Design(2, margin=0.3))
    assert s.changes_with_agent["mackenzie"] == "yes"
    assert ("mackenzie's conclusion changes with the agent: above par with greedy, below par "
            "with random.") in s.conclusions
    d = s.to_dict()
    assert d["games"] == 6 and d["games_played"] == 12 and d["tables"]["by_clan"]["random"]["A"]
    assert study_verdicts(arms, played.rows, Design(2, margin=0.3))[0]["games_needed"] is None


def test_several_agents_with_compare_and_until_share_one_error_budget(tmp_path, capsys):
    """--agent A,B --compare --until resolved: the verdicts of both agents on both clans
    read one study-wide level (Bonferroni over 4), each agent's games paired, and a
    conclusion every agent shares is marked 'no'."""
    assert main(["balance", "--players", "2", "--agent", "greedy,random", "--clans",
                 "cunningham,buchanan", "--compare", "clans.mackenzie.whisky_money=3",
                 "--until", "resolved", "--margin", "20", "--batch", "20", "--max-games",
                 "300", "--plot", "", "-q"]) == 0
    text = capsys.readouterr().out
    assert "Bonferroni over 4 verdicts" in text and "every verdict resolved after" in text
    table = text.split("changes with agent")[1].split("\n\n")[0]
    assert table.count("no change (±20 pp)") == 4 and table.split()[-1] == "no"
    assert "no clan's conclusion changes with the agent." in text


def test_help_gives_an_example_of_every_new_option(capsys):
    assert main(["balance", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for example in ("--compare clans.mackenzie.whisky_money=4", "--compare static-imports",
                    "--agent greedy:4p,qpolicy", "--until resolved --max-games 8000",
                    "--confidence 0.9", "--max-games 5000", "--batch 112", "--margin 2"):
        assert example in text, example


def test_compare_report_says_the_difference_what_was_held_and_embeds_the_figure(tmp_path):
    """--compare with --report: one page with the paired table, B's change, what the pairing
    held fixed, the conclusions from the same numbers the terminal shows, and no trace of
    the temporary folder B's ruleset was written to."""
    rep = tmp_path / "rep"
    assert main(["balance", *COMPARE, "--games", "6", "--compare",
                 "clans.mackenzie.whisky_money=9", "--report", str(rep), "--plot", ""]) == 0
    data = json.loads((rep / "report.json").read_text())
    assert data["metadata"]["B"] == "clans.mackenzie.whisky_money 3 -> 9"
    assert "common random numbers" in data["metadata"]["held fixed"]
    assert "caledonia-arms-" not in json.dumps(data)
    caps = [t["caption"] for t in data["tables"]]
    assert caps[0].startswith("Verdicts") and any(c.startswith("B - A by clan") for c in caps)
    paired = next(t for t in data["tables"] if t["caption"].startswith("B - A by clan"))
    by = {r[0]: dict(zip(paired["header"], r)) for r in paired["rows"]}
    assert set(by) == {"MacKenzie", "Stewart", "Campbell"}
    for r in by.values():
        assert r["games"] == 4 and r["B - A pp"] == pytest.approx(r["B win %"] - r["A win %"],
                                                                  abs=0.11)
        assert r["95% CI low pp"] <= r["B - A pp"] <= r["95% CI high pp"]
    assert any("two independent studies would need" in c for c in data["conclusions"])
    page = (rep / "index.html").read_text()
    assert "data:image/png;base64," in page and "whisky_money 3 -&gt; 9" in page


def test_until_report_gives_the_games_each_verdict_needed_and_why_it_stopped(tmp_path):
    rep = tmp_path / "rep"
    assert main(["balance", *COMPARE[:2], "--agent", "greedy,random", "--clans",
                 ",".join(CLANS), "-q", "--until", "resolved", "--batch", "6", "--max-games",
                 "12", "--report", str(rep), "--plot", ""]) == 0
    data = json.loads((rep / "report.json").read_text())
    verdicts = data["tables"][0]
    assert verdicts["header"][:3] == ["clan", "agent", "verdict"]
    assert "games needed" in verdicts["header"] and len(verdicts["rows"]) == 2 * 3
    assert data["metadata"]["stopped"] in ("every verdict resolved",
                                           "at the cap of 12 games per arm")
    assert data["tables"][1]["header"] == ["clan", "changes with agent"]
    changed = [r[0] for r in data["tables"][1]["rows"] if r[1] == "yes"]
    said = [c for c in data["conclusions"] if "changes with the agent" in c]
    if changed:
        assert len(said) == len(changed) and all(n.lower() in s.lower()
                                                 for n, s in zip(changed, said))
    else:
        assert said and said[0].startswith("No clan's conclusion changes")
