"""caledonia_env.tournament.report: a study's report folder (HTML, Markdown, JSON) and the
conclusions it writes from the numbers."""
import base64
import json

import pytest

from caledonia_env.tournament.report import (REPORT_FILES, StudySummary, balance_conclusions,
                                             balance_study, ensemble_conclusions, par_verdict,
                                             write_report)
from caledonia_env.tournament.stats import wilson

PNG = b"\x89PNG\r\n\x1a\n" + b"not really an image"


def stat(clan, wins, n, key="clan"):
    lo, hi = wilson(wins, n)
    return {key: clan, "n": n, "wins": wins, "win_rate": wins / n, "ci_low": lo, "ci_high": hi}


def interval(wins, n):
    lo, hi = wilson(wins, n)
    return f"{100 * lo:.1f}–{100 * hi:.1f}"


def test_a_clan_above_par_and_one_below_are_said_so_with_their_numbers():
    stats = [stat("buchanan", 150, 1000), stat("stewart", 312, 1000), stat("campbell", 250, 1000)]
    seats = [stat(0, 280, 1000, "seat"), stat(1, 220, 1000, "seat")]
    text = balance_conclusions(stats, seats, 0.25)
    assert text[0] == ("Above par (25%, an even share of the wins): 1 of 3 clans; below par: 1; "
                       "level with par within their 95% intervals: 1.")
    assert text[1] == (f"Stewart wins 31.2% ({interval(312, 1000)}) of its 1000 games, above "
                       f"par (25%).")
    assert text[2] == (f"Campbell wins 25.0% ({interval(250, 1000)}) of its 1000 games, level "
                       f"with par (25%): its interval holds par.")
    assert text[3] == (f"Buchanan wins 15.0% ({interval(150, 1000)}) of its 1000 games, below "
                       f"par (25%).")
    assert "Stewart has the highest win rate and Buchanan the lowest: 31.2% against 15.0%, " \
           "16.2 points apart." in text
    assert text[-1].startswith(f"The first player (seat 1) wins 28.0% ({interval(280, 1000)})") \
        and text[-1].endswith("above par (25%).")
    assert par_verdict(stat("x", 45, 100), 0.5) == "level with par"
    drafted = balance_conclusions([stat("stewart", 100, 300), stat("buchanan", 10, 100)], [],
                                  1 / 3, drafted_games=400)
    assert "33.3%" in drafted[0]
    assert drafted[-1].startswith("The agents drafted Stewart most often (in 75% of the games) "
                                  "and Buchanan least often (25%)")


def draw_rows(rates: dict, draws: int):
    """Rows of ensemble_balance: one per draw and clan, ranked within the draw."""
    rows = []
    for d in range(draws):
        w = {c: f(d) for c, f in rates.items()}
        order = sorted(w.values(), reverse=True)
        for c, x in w.items():
            lo, hi = wilson(400 * x, 400)
            rows.append({"draw": d, "clan": c, "games": 400, "wins": 400 * x, "win_rate": x,
                         "ci_low": lo, "ci_high": hi, "rank": 1 + order.index(x),
                         "clans": len(w), "ruleset_fingerprint": f"{d:064x}"})
    return rows


def test_ensemble_conclusions_count_the_draws_on_each_side_of_par():
    rows = draw_rows({"stewart": lambda d: 0.38, "buchanan": lambda d: 0.10,
                      "campbell": lambda d: 0.30 if d % 2 else 0.20,
                      "mackenzie": lambda d: 0.22 + d / 1000}, 24)
    text = ensemble_conclusions(rows, 0.25)
    assert text[0].startswith("Across 24 drawn rulesets, in at least 90% of the draws: above "
                              "par (25%) 1 of 4 clans, below par 2;")
    assert "Stewart is above par in 24 of 24 drawn rulesets (mean win share 38.0%)." in text
    assert "Buchanan is below par in 24 of 24 drawn rulesets (mean win share 10.0%)." in text
    assert "MacKenzie is below par in 24 of 24 drawn rulesets (mean win share 23.2%)." in text
    assert ("Campbell is above par in 12 and below par in 12 of 24 drawn rulesets (mean win "
            "share 25.0%): not settled by the data.") in text
    assert "Stewart ranks first in the most draws (24 of 24); Buchanan ranks last in the most " \
           "(24 of 24)." in text


def summary(**kw):
    fields = dict(title="Study <b>&</b>", command="caledonia balance --clans 'a<b>'",
                  metadata={"agent": "greedy", "held fixed": ["contracts (community)", "x<y"]},
                  tables=[("Caption <i>", ["clan", "win %"],
                           [["Stewart|x", 31.2], ["<script>alert(1)</script>", None]])],
                  figures=[("a plot", PNG)], conclusions=["Stewart wins <more> & more."])
    fields.update(kw)
    return StudySummary(**fields)


def test_write_report_writes_three_escaped_self_contained_files(tmp_path):
    folder = tmp_path / "rep"
    paths = write_report(summary(), str(folder))
    assert [p.rsplit("/", 1)[1] for p in paths] == list(REPORT_FILES)
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert "<script" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<title>Study &lt;b&gt;&amp;&lt;/b&gt;</title>" in page
    assert "<li>Stewart wins &lt;more&gt; &amp; more.</li>" in page
    assert "caledonia balance --clans &#x27;a&lt;b&gt;&#x27;" in page
    assert "<li>x&lt;y</li>" in page and '<td class="num">31.2</td>' in page
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in page
    assert "http" not in page.replace("http-equiv", "")       # no outside resource
    md = (folder / "report.md").read_text(encoding="utf-8")
    assert "| Stewart\\|x | 31.2 |" in md and "- Stewart wins <more> & more." in md
    assert "caledonia balance --clans 'a<b>'" in md and "  - x<y" in md
    data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert data["tables"][0]["rows"] == [["Stewart|x", 31.2], ["<script>alert(1)</script>", None]]
    assert data["conclusions"] == ["Stewart wins <more> & more."] and data["figures"] == ["a plot"]
    assert data["metadata"]["held fixed"] == ["contracts (community)", "x<y"] and data["written"]
    with pytest.raises(ValueError, match="row 0 has 1 cells for 2 columns"):
        write_report(summary(tables=[("t", ["a", "b"], [["x"]])]), str(folder))


def test_balance_study_tables_follow_the_rows():
    rows = []
    for g, (a, b) in enumerate([("stewart", "buchanan")] * 3 + [("buchanan", "stewart")]):
        for p, clan in enumerate((a, b)):
            win = 1.0 if clan == "stewart" else 0.0
            rows.append({"game": g, "clan": clan, "seat": p, "win": win, "rank": 2 - int(win),
                         "think_seconds": 0.0, "ruleset_fingerprint": "f" * 64,
                         **{f: 10.0 * win for f in ("glory", "goods", "money", "hops", "imports",
                                                    "exports", "settlements", "auction")},
                         "total": 100 + 10 * win})
    s = balance_study(rows, players=2, title="t", command="c", metadata={"agent": "x"})
    (cap, head, clans), (_, _, seats), (_, h2h_head, h2h) = s.tables
    assert head[:7] == ["clan", "games", "wins", "win %", "95% CI low %", "95% CI high %",
                        "vs par"]
    assert [r[:4] for r in clans] == [["Buchanan", 4, 0.0, 0.0], ["Stewart", 4, 4.0, 100.0]]
    assert [r[:4] for r in seats] == [[1, 4, 3.0, 75.0], [2, 4, 1.0, 25.0]]
    assert h2h_head == ["clan", "Buchanan", "Stewart"]
    assert h2h == [["Buchanan", None, 0.0], ["Stewart", 100.0, None]]
    assert s.metadata == {"agent": "x", "games played": "4", "ruleset fingerprint": "f" * 64}
    assert s.conclusions[1].startswith("Stewart wins 100.0% (")
    drafted = balance_study(rows, players=2, title="t", command="c", metadata={}, drafted=True)
    assert drafted.tables[0][1][2] == "draft share %" and drafted.tables[0][2][0][2] == 100.0
