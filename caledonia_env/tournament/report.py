"""One report per study (``caledonia balance --report DIR``): a folder holding a
self-contained HTML page (``index.html``: the conclusions, the exact command and what the
study held, its figures embedded as base64 PNG, its tables; readable without JavaScript),
the same tables as Markdown (``report.md``) and everything as JSON (``report.json``).

:func:`write_report` takes a plain :class:`StudySummary`, so any study can fill one;
:func:`balance_study` and :func:`ensemble_study` fill it for the balance study and its
``--perturb`` ensemble, with the conclusions written as sentences from the numbers.
"""
from __future__ import annotations

import base64
import dataclasses
import datetime
import html
import json
import math
import os

from caledonia_env.tournament.games import SCORE_FIELDS
from caledonia_env.tournament.output import write_text
from caledonia_env.tournament.stats import clan_title, group_stats, head_to_head

#: the files a report folder holds
REPORT_FILES = ("index.html", "report.md", "report.json")
#: share of the draws a conclusion of an ensemble study must hold in to be called robust
ROBUST = 0.9
_COMPONENTS = SCORE_FIELDS[:-1]             # the VP components; the last is the total


@dataclasses.dataclass(frozen=True)
class StudySummary:
    """What a report shows. ``metadata``: label -> text or list of texts (seeds, agent,
    ruleset fingerprint, what was held fixed, ...); ``tables``: ``(caption, header, rows)``
    with one cell per header column (numbers stay numbers in report.json); ``figures``:
    ``(caption, PNG bytes)``; ``conclusions``: plain sentences."""
    title: str
    command: str
    metadata: dict
    tables: list
    figures: list = ()
    conclusions: list = ()


def write_report(summary: StudySummary, folder: str) -> list[str]:
    """Write ``summary`` into ``folder`` (created, one level) as :data:`REPORT_FILES`, each
    atomically; their paths. ValueError for a table row whose length is not its header's."""
    for caption, header, rows in summary.tables:
        bad = [i for i, r in enumerate(rows) if len(r) != len(header)]
        if bad:
            raise ValueError(f"table {caption!r}: row {bad[0]} has {len(rows[bad[0]])} cells "
                             f"for {len(header)} columns")
    written = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    os.makedirs(folder, exist_ok=True)
    texts = (render_html(summary, written), render_markdown(summary, written),
             json.dumps(report_json(summary, written), indent=1, ensure_ascii=False) + "\n")
    paths = [os.path.join(folder, name) for name in REPORT_FILES]
    for path, text in zip(paths, texts):
        write_text(path, text)
    return paths


def cell_text(value) -> str:
    """A table cell as shown: empty for None, numbers as given (the study rounds them)."""
    return "" if value is None else str(value)


def report_json(summary: StudySummary, written: str) -> dict:
    """The machine-readable report: every field of ``summary`` but the images (their
    captions only) and the time it was written."""
    return {"title": summary.title, "command": summary.command, "written": written,
            "metadata": summary.metadata, "conclusions": list(summary.conclusions),
            "tables": [{"caption": c, "header": list(h), "rows": [list(r) for r in rows]}
                       for c, h, rows in summary.tables],
            "figures": [c for c, _ in summary.figures]}


_STYLE = """body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
main{max-width:70rem;margin:0 auto;padding:1rem 1.5rem 3rem}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #ccc}
code,pre{font-family:ui-monospace,monospace;font-size:.9rem}
pre{background:#eee;padding:.6rem;white-space:pre-wrap;word-break:break-all}
dt{font-weight:600;margin-top:.5rem}dd{margin-left:1.5rem}
#conclusions li{margin:.3rem 0}
figure{margin:1rem 0}img{max-width:100%;height:auto;border:1px solid #ddd}
table{border-collapse:collapse;margin:1rem 0 2rem;font-size:.9rem}
caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{border:1px solid #ccc;padding:.2rem .5rem}th{background:#eee}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto}footer{margin-top:3rem;color:#666;font-size:.85rem}"""


def _html_value(value) -> str:
    if isinstance(value, (list, tuple)):
        return "<ul>" + "".join(f"<li>{html.escape(str(v))}</li>" for v in value) + "</ul>"
    return html.escape(str(value))


def _html_table(caption: str, header, rows) -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(
            f"<td class=\"num\">{html.escape(cell_text(v))}</td>"
            if isinstance(v, (int, float)) and not isinstance(v, bool)
            else f"<td>{html.escape(cell_text(v))}</td>" for v in row) + "</tr>"
        for row in rows)
    return (f"<div class=\"scroll\"><table><caption>{html.escape(caption)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


def render_html(summary: StudySummary, written: str) -> str:
    """The report page: no script, no outside resource (the images are data URIs)."""
    e = html.escape
    parts = ["<!DOCTYPE html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
             f"<title>{e(summary.title)}</title><style>{_STYLE}</style></head>",
             f"<body><main><h1>{e(summary.title)}</h1>",
             "<section id=\"conclusions\"><h2>Conclusions</h2><ul>"]
    parts += [f"<li>{e(s)}</li>" for s in summary.conclusions]
    parts += ["</ul></section>", "<section id=\"study\"><h2>The study</h2><dl>",
              f"<dt>command</dt><dd><pre>{e(summary.command)}</pre></dd>"]
    parts += [f"<dt>{e(str(k))}</dt><dd>{_html_value(v)}</dd>"
              for k, v in summary.metadata.items()]
    parts.append("</dl></section>")
    if summary.figures:
        parts.append("<section id=\"figures\"><h2>Figures</h2>")
        for caption, png in summary.figures:
            data = base64.b64encode(png).decode("ascii")
            parts.append(f"<figure><img src=\"data:image/png;base64,{data}\" "
                         f"alt=\"{e(caption)}\"><figcaption>{e(caption)}</figcaption></figure>")
        parts.append("</section>")
    parts.append("<section id=\"tables\"><h2>Tables</h2>")
    parts += [_html_table(*t) for t in summary.tables]
    parts += ["</section>", f"<footer>Written {e(written)} by caledonia_env; the same tables "
              f"in report.md, everything in report.json.</footer>", "</main></body></html>"]
    return "\n".join(parts) + "\n"


def _md_cell(value) -> str:
    return cell_text(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_markdown(summary: StudySummary, written: str) -> str:
    """The report as Markdown: conclusions, the study, the tables (figures: index.html)."""
    out = [f"# {summary.title}", "", "## Conclusions", ""]
    out += [f"- {s}" for s in summary.conclusions]
    out += ["", "## The study", "", "```", summary.command, "```", ""]
    for k, v in summary.metadata.items():
        if isinstance(v, (list, tuple)):
            out.append(f"- {k}:")
            out += [f"  - {x}" for x in v]
        else:
            out.append(f"- {k}: {v}")
    if summary.figures:
        out += ["", "Figures (in index.html): "
                + "; ".join(c for c, _ in summary.figures) + "."]
    out += ["", "## Tables"]
    for caption, header, rows in summary.tables:
        out += ["", f"### {caption}", "", "| " + " | ".join(_md_cell(h) for h in header) + " |",
                "|" + "|".join("---" for _ in header) + "|"]
        out += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in rows]
    out += ["", f"Written {written} by caledonia_env."]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- the balance study
def _pct(x: float) -> str:
    """A share as a percentage for a sentence: ``0.25`` -> ``25%``, ``1/3`` -> ``33.3%``."""
    return f"{100 * x:.3g}%"


def _name(key) -> str:
    key = str(key)
    return key if key.startswith("automa:") else clan_title(key)


def par_verdict(stat: dict, par: float) -> str:
    """``above par``, ``below par`` or ``level with par``: where a win rate's 95% interval
    lies against par (level: the interval holds par)."""
    if stat["ci_low"] > par:
        return "above par"
    if stat["ci_high"] < par:
        return "below par"
    return "level with par"


def balance_conclusions(stats: list[dict], seats: list[dict], par: float,
                        drafted_games: int | None = None) -> list[str]:
    """Sentences from a balance study's clan and seat statistics (:func:`group_stats` by
    ``clan`` and by ``seat``; Automa seats under their name): how many clans are above and
    below par, each clan's win rate against par (best first), the spread, the first
    player's; with ``drafted_games`` (the games of a drafted study) the draft shares."""
    ranked = sorted(stats, key=lambda s: -s["win_rate"])
    clans = [s for s in ranked if not str(s["clan"]).startswith("automa:")]
    verdicts = [par_verdict(s, par) for s in clans]
    out = [f"Above par ({_pct(par)}, an even share of the wins): {verdicts.count('above par')}"
           f" of {len(clans)} clans; below par: {verdicts.count('below par')}; level with par "
           f"within their 95% intervals: {verdicts.count('level with par')}."]
    for s in ranked:
        v = par_verdict(s, par)
        tail = (f"{v} ({_pct(par)})" if v != "level with par"
                else f"level with par ({_pct(par)}): its interval holds par")
        out.append(f"{_name(s['clan'])} wins {100 * s['win_rate']:.1f}% "
                   f"({100 * s['ci_low']:.1f}–{100 * s['ci_high']:.1f}) of its {s['n']} "
                   f"games, {tail}.")
    if len(clans) > 1:
        best, worst = clans[0], clans[-1]
        out.append(f"{_name(best['clan'])} has the highest win rate and "
                   f"{_name(worst['clan'])} the lowest: {100 * best['win_rate']:.1f}% against "
                   f"{100 * worst['win_rate']:.1f}%, "
                   f"{100 * (best['win_rate'] - worst['win_rate']):.1f} points apart.")
    first = next((s for s in seats if s["seat"] == 0), None)
    if first is not None:
        out.append(f"The first player (seat 1) wins {100 * first['win_rate']:.1f}% "
                   f"({100 * first['ci_low']:.1f}–{100 * first['ci_high']:.1f}) of the games, "
                   f"{par_verdict(first, par)} ({_pct(par)}).")
    if drafted_games:
        shares = sorted(clans, key=lambda s: -s["n"])
        out.append(f"The agents drafted {_name(shares[0]['clan'])} most often (in "
                   f"{100 * shares[0]['n'] / drafted_games:.0f}% of the games) and "
                   f"{_name(shares[-1]['clan'])} least often "
                   f"({100 * shares[-1]['n'] / drafted_games:.0f}%); a drafted clan's win "
                   f"rate counts only the games the agents chose it.")
    return out


def _stat_table(stats: list[dict], key: str, par: float, label, games=None) -> list[list]:
    rows = []
    for s in stats:
        row = [label(s[key]), s["n"]] + ([round(100 * s["n"] / games, 1)] if games else [])
        row += [round(s["wins"], 1), round(100 * s["win_rate"], 1), round(100 * s["ci_low"], 1),
                round(100 * s["ci_high"], 1), par_verdict(s, par), round(s["total"], 1)]
        rows.append(row + [round(s[f], 1) for f in _COMPONENTS])
    return rows


def balance_study(rows: list[dict], *, players: int, title: str, command: str,
                  metadata: dict, drafted: bool = False, figures=()) -> StudySummary:
    """The :class:`StudySummary` of a balance study's game rows (``tournament.run``; Automa
    seats named by their agent in ``clan``): tables by clan (with the draft share when
    ``drafted``) and by seat, the head-to-head matrix, and their conclusions; ``metadata``
    gets the games played and the ruleset fingerprints."""
    par = 1 / players
    games = len({r["game"] for r in rows})
    stats = group_stats(rows, "clan")
    seats = group_stats(rows, "seat")
    names, ahead, meet = head_to_head(rows)
    stat_head = ["games", "wins", "win %", "95% CI low %", "95% CI high %", "vs par",
                 "mean VP"] + [f"VP {f}" for f in _COMPONENTS]
    clan_head = ["clan", "games"] + (["draft share %"] if drafted else []) + stat_head[1:]
    h2h = [[_name(a)] + [round(100 * ahead[i, j] / meet[i, j], 1) if meet[i, j] else None
                         for j in range(len(names))] for i, a in enumerate(names)]
    tables = [
        (f"Win rate by clan ({players} players, par {_pct(par)}; ties split)", clan_head,
         _stat_table(stats, "clan", par, _name, games if drafted else None)),
        ("Win rate by seat (round-1 turn order, seat 1 plays first)", ["seat"] + stat_head,
         _stat_table(seats, "seat", par, lambda s: s + 1)),
        ("Head to head: % of the games where the row clan finished ahead of the column clan "
         "(ties count one half)", ["clan"] + [_name(n) for n in names], h2h)]
    prints = sorted({r["ruleset_fingerprint"] for r in rows})
    meta = dict(metadata, **{"games played": str(games),
                             "ruleset fingerprint": prints[0] if len(prints) == 1 else prints})
    return StudySummary(title, command, meta, tables, list(figures),
                        balance_conclusions(stats, seats, par, games if drafted else None))


# ---------------------------------------------------------------- the --perturb ensemble
def ensemble_conclusions(rows: list[dict], par: float) -> list[str]:
    """Sentences from the rows of :func:`~caledonia_env.tournament.perturb.ensemble_balance`
    (one per draw and clan): per clan on which side of par it is in how many draws
    (robust where one side holds in :data:`ROBUST` of them), who ranks first and last most
    often, and how precisely one draw measures a win share."""
    by: dict = {}
    for r in rows:
        by.setdefault(r["clan"], []).append(r)
    draws = len({r["draw"] for r in rows})
    per = []
    for clan, rs in by.items():
        w = sorted(r["win_rate"] for r in rs)
        per.append((clan, sum(w) / len(w), sum(x > par for x in w), sum(x < par for x in w),
                    len(w), sum(r["rank"] == 1 for r in rs), sum(r["rank"] == r["clans"]
                                                                 for r in rs)))
    per.sort(key=lambda p: -p[1])
    above = [p for p in per if p[2] >= ROBUST * p[4]]
    below = [p for p in per if p[3] >= ROBUST * p[4]]
    out = [f"Across {draws} drawn rulesets, in at least {100 * ROBUST:.0f}% of the draws: "
           f"above par ({_pct(par)}) {len(above)} of {len(per)} clans, below par "
           f"{len(below)}; on either side as the draws vary: "
           f"{len(per) - len(above) - len(below)}."]
    for clan, mean, up, down, n, _, _ in per:
        name = _name(clan)
        if up >= ROBUST * n:
            out.append(f"{name} is above par in {up} of {n} drawn rulesets (mean win share "
                       f"{100 * mean:.1f}%).")
        elif down >= ROBUST * n:
            out.append(f"{name} is below par in {down} of {n} drawn rulesets (mean win share "
                       f"{100 * mean:.1f}%).")
        else:
            out.append(f"{name} is above par in {up} and below par in {down} of {n} drawn "
                       f"rulesets (mean win share {100 * mean:.1f}%): not settled by the "
                       f"data.")
    first = max(per, key=lambda p: p[5])
    last = max(per, key=lambda p: p[6])
    out.append(f"{_name(first[0])} ranks first in the most draws ({first[5]} of {first[4]}); "
               f"{_name(last[0])} ranks last in the most ({last[6]} of {last[4]}).")
    half = sum(r["ci_high"] - r["ci_low"] for r in rows) / (2 * len(rows))
    out.append(f"Within one draw a clan's win share is measured to about ±{100 * half:.1f} "
               f"points (the mean half-width of its 95% interval), so part of the spread "
               f"across draws is sampling noise.")
    return out


def ensemble_study(rows: list[dict], summary: list[dict], *, players: int, title: str,
                   command: str, metadata: dict, figures=()) -> StudySummary:
    """The :class:`StudySummary` of an ensemble study: its ``summary``
    (:func:`~caledonia_env.tournament.perturb.ensemble_summary` with par) per clan, each
    draw's ruleset fingerprint, map and win share per clan, and the conclusions."""
    par = 1 / players
    draws = sorted({r["draw"] for r in rows})
    clans = [s["clan"] for s in summary]
    counts = {c: (sum(r["win_rate"] > par for r in rows if r["clan"] == c),
                  sum(r["win_rate"] < par for r in rows if r["clan"] == c)) for c in clans}
    per_clan = [[_name(s["clan"]), s["draws"], round(100 * s["mean"], 1), round(100 * s["p5"], 1),
                 round(100 * s["p95"], 1), round(100 * s["first"]), round(100 * s["last"]),
                 counts[s["clan"]][0], counts[s["clan"]][1]] for s in summary]
    cells = {(r["draw"], r["clan"]): r for r in rows}
    per_draw = []
    for d in draws:
        first = next(r for r in rows if r["draw"] == d)
        per_draw.append([d, first["ruleset_fingerprint"][:12], first.get("value map", "")]
                        + [round(100 * cells[d, c]["win_rate"], 1) if (d, c) in cells else None
                           for c in clans])
    tables = [
        (f"Win share by clan across {len(draws)} drawn rulesets ({players} players, par "
         f"{_pct(par)})", ["clan", "draws", "mean win %", "5% of draws", "95% of draws",
                           "first in % of draws", "last in % of draws",
                           "draws above par", "draws below par"], per_clan),
        ("Each draw: its ruleset's fingerprint, its map and each clan's win %",
         ["draw", "ruleset fingerprint", "map"] + [_name(c) for c in clans], per_draw)]
    meta = dict(metadata, **{"draws": str(len(draws)),
                             "games played": str(sum(r["games"] for r in rows) // players)})
    return StudySummary(title, command, meta, tables, list(figures),
                        ensemble_conclusions(rows, par))


# ---------------------------------------------------------------- --compare, --agent A,B, --until
def _pp(x: float) -> float:
    return round(100 * x, 1)


def arms_study(summary, *, title: str, command: str, metadata: dict, figures=()) -> StudySummary:
    """The :class:`StudySummary` of a study on arms (``balance --compare``, several
    ``--agent`` names, ``--until resolved``): the
    :class:`~caledonia_env.tournament.arms.BalanceSummary` ``summary``'s verdicts (with the
    games each needed), per agent the paired table B - A (a comparison) or the win rate by
    clan, and its conclusions as sentences; ``metadata`` gets the interval, the margin, the
    games and why the study stopped."""
    s = summary
    par = 1 / s.players
    unit = "pp B - A" if s.compare else "%"
    several = len(s.agents) > 1
    head = (["clan"] + (["agent"] if several else []) + ["verdict", f"estimate {unit}",
            f"low {unit}", f"high {unit}", "games"] + (["games needed"] if s.stopped != "fixed"
                                                        else []))
    verdicts = [[_name(v["clan"])] + ([v["agent"]] if several else [])
                + [v["text"], _pp(v["estimate"]), _pp(v["low"]), _pp(v["high"]), v["n"]]
                + ([v["games_needed"]] if s.stopped != "fixed" else []) for v in s.verdicts]
    tables = [(f"Verdicts ({s.interval}; margin ±{100 * s.margin:g} pp)", head, verdicts)]
    if several:
        tables.append(("Does the conclusion change with the agent? (open: some verdict is "
                       "unresolved)", ["clan", "changes with agent"],
                       [[_name(c), x] for c, x in s.changes_with_agent.items()]))
    for agent in s.agents:
        if s.compare:
            rows = [[_name(p["clan"]), p["n"], _pp(p["win_a"]), _pp(p["win_b"]), _pp(p["diff"]),
                     _pp(p["ci_low"]), _pp(p["ci_high"]),
                     round(p["ratio"], 1) if math.isfinite(p["ratio"]) else None,
                     round(p["delta"]["total"], 1),
                     ", ".join(f"{f} {p['delta'][f]:+.1f}" for f in p["moved"]),
                     "" if p["rank_a"] is None else f"{p['rank_a']} -> {p['rank_b']}"]
                    for p in s.tables["paired"][agent]]
            tables.append((f"B - A by clan with {agent} (B = {s.compare}; paired normal 95% "
                           f"interval; 'independent x': games two independent studies need "
                           f"per game of this one)",
                           ["clan", "games", "A win %", "B win %", "B - A pp", "95% CI low pp",
                            "95% CI high pp", "independent x", "VP B - A", "VP moved most",
                            "rank A -> B"], rows))
        else:
            stat_head = ["clan", "games", "wins", "win %", "95% CI low %", "95% CI high %",
                         "vs par", "mean VP"] + [f"VP {f}" for f in _COMPONENTS]
            tables.append((f"Win rate by clan with {agent} (par {_pct(par)}; ties split)",
                           stat_head, _stat_table(s.tables["by_clan"][agent]["A"], "clan", par,
                                                  _name)))
    meta = dict(metadata, **{
        "interval": s.interval, "margin": f"±{100 * s.margin:g} percentage points",
        "games per arm": str(s.games), "games played": str(s.games_played),
        "stopped": {"fixed": "after the fixed --games",
                    "resolved": "every verdict resolved",
                    "cap": f"at the cap of {s.max_games} games per arm"}.get(s.stopped,
                                                                             s.stopped)})
    if s.compare:
        meta["B"] = s.compare
    conclusions = [c[:1].upper() + c[1:] for c in s.conclusions]
    return StudySummary(title, command, meta, tables, list(figures), conclusions)
