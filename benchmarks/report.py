"""Render docs/results.md and the README's headline rows from benchmarks/results/*.json.

Every table of docs/results.md is the newest result file of its ``table`` (by date; see
benchmarks/results_io.py for the schema), printed with its command, date, commit, machine
and what it means. The README's headline tables sit between marker comments
(``<!-- results:begin BLOCK -->`` … ``<!-- results:end BLOCK -->``); their rows are the
figures named in this script's ``HEADLINES``, taken from the same files, and the clan balance
of each player count (``balance_rows``). A re-measurement is a new
result file and a re-render, never an edit of the rendered text.

    python benchmarks/report.py            # rewrite docs/results.md and the README blocks
    python benchmarks/report.py --check    # exit 1 with a diff where they are out of date

A result file that is not valid JSON or lacks a required key exits 2, naming the file.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_io import RESULTS, ROOT, read_results  # noqa: E402

from caledonia_env.cli.balance import DEFAULT_AGENT  # noqa: E402
from caledonia_env.tournament.arms import Design, changes_with_agent  # noqa: E402
from caledonia_env.tournament.sequential import ABOVE, AT, BELOW, verdicts  # noqa: E402

#: The order of the tables in docs/results.md; tables not named here follow, by name.
ORDER = ("fuzz", "fidelity", "compare_peers", "env_speed", "cold_start", "fresh_clone", "bots",
         "strength_tuned", "strength_policies", "strength_searches", "strength_value",
         "strength_value_listwise",
         "strength_qpolicy", "strength_qpolicy_3p", "strength_qpolicy_4p", "strength_cheap_4p",
         "calibration", "sensitivity", "automa", "automa_tuned", "balance", "balance_seats", "balance_draft",
         "balance_ensemble",
         "evaluation_fit", "ladder", "strength_estimates")

#: The README's headline rows: (block, table, (column, value) picking the row — or a tuple of
#: such pairs, all of which must match — or None for the first, figure column, claim, note
#: column or None). The claim may name the row's cells
#: (``{games}``). A row that is missing from the newest file is an error.
HEADLINES = (
    ("fuzzing", "fuzz", None, "failures", "failures in {games} random legal games, every "
     "invariant checked after every step", None),
    ("fidelity", "fidelity", ("source", "named source (all but estimate)"), "share",
     "ruleset values that name their source (rulebook, errata, public sources, community)",
     None),
    ("fidelity", "fidelity", ("source", "estimate"), "values", "values still estimated (docs/"
     "ruleset.md lists them)", None),
    ("fidelity", "calibration", ("agent", "`mcts:256c36:solo`"), "mean_vp", "best solo agent "
     "against the rulebook's bands (Expert 146+)", None),
    ("speed", "compare_peers", ("what", "Python loop: `legal_actions()` + random choice + "
     "`step()`, 4p"), "ratio", "Python game loop, vs OpenSpiel chess via pyspiel", None),
    ("speed", "compare_peers", ("what", "`Game.clone()` (mid-game)"), "ratio",
     "`Game.clone()`, vs OpenSpiel chess `state.clone()`", None),
    ("speed", "compare_peers", ("what", "PettingZoo AEC loop (last() + mask + step()), 4p"),
     "ratio", "PettingZoo AEC loop, vs connect_four_v3 / chess_v6", None),
    ("speed", "compare_peers", ("what", "whole 4p games per thread"), "ratio",
     "whole 4p games (Python API), vs Catanatron", None),
    ("speed", "compare_peers", ("what", "engine loop inside numba, 4p drafted clans (mask "
     "every step)"), "ratio", "engine loop inside numba, vs OpenSpiel C++ (maedn)", None),
    ("ladder", "ladder", (("players", 2), ("rung", "vmcts:8")), "elo",
     "2p `vmcts:8` (short rollouts on the learned value), {cpu_s} CPU s a game", None),
    ("ladder", "ladder", (("players", 2), ("rung", "qpolicy")), "elo",
     "2p `qpolicy` (learned policy over the tuned evaluation), {cpu_s} CPU s a game", None),
    ("ladder", "ladder", (("players", 2), ("rung", "mcts:8")), "elo",
     "2p `mcts:8`, {cpu_s} CPU s a game", None),
    ("ladder", "ladder", (("players", 2), ("rung", "greedy:2p")), "elo",
     "2p `greedy:2p`, {cpu_s} CPU s a game", None),
    ("ladder", "ladder", (("players", 4), ("rung", "vmcts:2")), "elo",
     "4p `vmcts:2`, {cpu_s} CPU s a game", None),
    ("ladder", "ladder", (("players", 4), ("rung", "qpolicy")), "elo",
     "4p `qpolicy` (the balance study's default), {cpu_s} CPU s a game", None),
    ("ladder", "ladder", (("players", 2), ("rung", "automa:1")), "elo",
     "2p `automa:1` (the Automa's easiest level)", None),
    ("ladder", "ladder", (("players", 2), ("rung", "automa:3")), "elo",
     "2p `automa:3`", None),
    ("strength", "strength_tuned", ("match", "2p `greedy:2p` vs `greedy`"), "win",
     "2p `greedy:2p` (tuned evaluation) vs `greedy`", "target"),
    ("strength", "strength_tuned", ("match", "3p `greedy:3p` vs `greedy` + `greedy`"), "win",
     "3p `greedy:3p` vs 2 × `greedy`", "target"),
    ("strength", "strength_tuned", ("match", "4p `greedy:4p` vs `greedy` + `greedy` + "
     "`greedy`"), "win", "4p `greedy:4p` vs 3 × `greedy`", "target"),
    ("strength", "strength_policies", ("match", "2p `ppo:pretrained` vs `greedy`"), "win",
     "2p `ppo:pretrained` (the PPO route; 3p, 4p in the table) vs `greedy`", "target"),
    ("strength", "strength_value", ("match", "2p `vmcts:8` vs `nmctsg:64h2`"), "win",
     "2p `vmcts:8` (cheap search, ~0.6 s a game) vs `nmctsg:64h2` (2.4 s)", None),
    ("strength", "strength_qpolicy", ("match", "2p `qpolicy` vs `greedy:2p`"), "win",
     "2p `qpolicy` (learned policy over the tuned evaluation, 0.15 ms a decision) vs `greedy:2p`",
     "target"),
    ("strength", "strength_qpolicy_3p", ("match", "3p `qpolicy` vs `greedy` + `greedy`"), "win",
     "3p `qpolicy` vs 2 × `greedy`", "target"),
    ("strength", "strength_qpolicy_3p", ("match", "3p `qpolicy` vs `greedy:3p` + `greedy:3p`"),
     "win", "3p `qpolicy` vs 2 × `greedy:3p` (par 33%)", None),
    ("strength", "strength_qpolicy_4p", ("match", "4p `qpolicy` vs `greedy` + `greedy` + "
     "`greedy`"), "win", "4p `qpolicy` vs 3 × `greedy`", "target"),
    ("strength", "strength_qpolicy_4p", ("match", "4p `qpolicy` vs `greedy:4p` + `greedy:4p` + "
     "`greedy:4p`"), "win", "4p `qpolicy` vs 3 × `greedy:4p` (par 25%)", "target"),
    ("strength", "strength_cheap_4p", ("match", "4p `qpolicy` vs `nmctsg:64h2` + `nmctsg:64h2` + "
     "`nmctsg:64h2`"), "win", "4p `qpolicy` (0.008 CPU s a game) vs 3 × `nmctsg:64h2` (~3.6 s; "
     "its network trained on the earlier economy)", "target"),
    ("strength", "automa", ("agent", "`mcts:32:solo` (the weights tuned for the solo game)"),
     "automa_3", "2p `mcts:32:solo` vs `automa:3`, VP agent:Automa (every agent loses to "
     "levels 3–5)", None),
)


def slug(heading: str) -> str:
    """GitHub's anchor of a markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def cell(value, column: dict) -> str:
    """A value as the table prints it: numbers in the column's format, ``[lo, hi]`` as a
    range, ``[value, lo, hi]`` as a value and its interval."""
    spec, unit = column.get("format", ""), column.get("unit", "")

    def num(x):
        return format(x, spec) if isinstance(x, (int, float)) and spec else str(x)
    if value is None or value == "":
        return ""
    if isinstance(value, list) and len(value) == 2:
        return f"{num(value[0])}–{num(value[1])}{unit}"
    if isinstance(value, list) and len(value) == 3:
        return f"{num(value[0])}{unit} ({num(value[1])}–{num(value[2])})"
    return f"{num(value)}{unit}" if isinstance(value, (int, float)) else str(value)


def newest(results: list[dict]) -> dict[str, dict]:
    """{table: its newest result file} (by date, then file name)."""
    best: dict[str, dict] = {}
    for r in sorted(results, key=lambda r: (r["date"], r["path"].name)):
        best[r["table"]] = r
    return best


def machine_text(m: dict) -> str:
    if "description" in m:
        return m["description"]
    parts = [m.get("cpu", "?"), f"{m['cores']} cores" if "cores" in m else None,
             f"python {m['python']}" if "python" in m else None,
             f"numba {m['numba']}" if "numba" in m else None]
    return ", ".join(p for p in parts if p)


def render_table(r: dict) -> list[str]:
    cols = r["columns"]
    out = ["| " + " | ".join(c["label"] for c in cols) + " |",
           "|" + "|".join("---:" if c.get("format") else "---" for c in cols) + "|"]
    for row in r["rows"]:
        out.append("| " + " | ".join(cell(row.get(c["key"]), c) for c in cols) + " |")
    return out


def render_results(tables: dict[str, dict]) -> str:
    """The text of docs/results.md."""
    names = [t for t in ORDER if t in tables] + sorted(set(tables) - set(ORDER))
    out = ["# Results", "",
           "<!-- Generated by `python benchmarks/report.py` from benchmarks/results/*.json: "
           "add a result file and re-render, do not edit. -->", "",
           "Every table is the newest result file of its kind under `benchmarks/results/` "
           "(one JSON file per measurement run: command, date, commit, machine, figures). "
           "A benchmark run with `--save` writes a new one; `python benchmarks/report.py` "
           "renders this page and the README's headline rows from them. What each benchmark "
           "measures and how to run it: [performance.md](performance.md) (speed), "
           "[training.md](training.md) (the trained agents), [agents.md](agents.md) (the "
           "bots and searches). Win shares are percentages with 95% Wilson intervals.", ""]
    out += [f"- [{tables[t]['title']}](#{slug(tables[t]['title'])})" for t in names]
    for t in names:
        r = tables[t]
        out += ["", f"## {r['title']}", "", r["meaning"], "",
                f"- command: `{r['command']}`",
                f"- date {r['date']}, commit {r['commit']}; machine: {machine_text(r['machine'])}",
                f"- ruleset: {r['ruleset']}"]
        if r.get("source") and r["source"] != "measured":
            out.append(f"- {r['source']}")
        out.append(f"- file: `{r['path'].relative_to(ROOT).as_posix()}`")
        out += [""] + render_table(r)
        if r.get("notes"):
            out += ["", r["notes"]]
        if t == "balance":
            out += ["", "### Clan verdicts by agent", "",
                    f"Each clan's verdict in the table above: above or below par (its whole "
                    f"95% interval on one side), at par (within par ± {PAR_MARGIN:g} points) or "
                    f"par in CI (unresolved); agents from the weakest to the strongest (rating "
                    f"ladder). Changes with the agent: yes where two agents reach opposite "
                    f"verdicts, open where the resolved ones agree but another agent leaves par "
                    f"inside its interval, no where every agent says the same."] + balance_verdicts(r)
    return "\n".join(out) + "\n"


#: The agent of the README's clan balance rows: ``caledonia balance``'s default (as the
#: result files write agents).
BALANCE_AGENT = f"`{DEFAULT_AGENT}`"
BALANCE_TABLES = ("balance", "balance_seats", "balance_draft")
#: The balance table's agents from the weakest to the strongest (the rating ladder's order);
#: agents not named here follow, by name.
BALANCE_STRENGTH = ("`greedy`", "`greedy:{players}p`", "`qpolicy`")
#: A clan is at par when its whole 95% interval lies within par ± this many points
#: (the balance study's default margin, ``tournament.arms.Design.margin``, in points).
PAR_MARGIN = 100 * Design.margin


def verdict(win: list, par: float) -> str:
    """The :func:`verdicts` code of a win share [value, low, high] (percent): ABOVE, BELOW
    (its whole 95% interval on one side of par), AT (within par ± :data:`PAR_MARGIN`) or ''
    (par inside the interval, unresolved)."""
    return str(verdicts(win[1], win[2], par, PAR_MARGIN)[()])


VERDICT_WORDS = {ABOVE: "above", BELOW: "below", AT: "at par", "": "par in CI"}


def balance_verdicts(table: dict) -> list[str]:
    """docs/results.md's clan verdicts by agent: per player count and clan the verdict of each
    agent of the balance table (:func:`verdict`), agents from the weakest to the strongest,
    and whether it changes with the agent (``tournament.arms.changes_with_agent``: yes when
    two agents reach different verdicts, open when the resolved ones agree but some are
    unresolved)."""
    out = []
    for n in sorted({r["players"] for r in table["rows"]}):
        rows = [r for r in table["rows"] if r["players"] == n]
        known = [a.format(players=n) for a in BALANCE_STRENGTH]
        agents = sorted({r["agent"] for r in rows},
                        key=lambda a: (known.index(a) if a in known else len(known), a))
        by = {(r["clan"], r["agent"]): r for r in rows}
        said = [{"clan": c, "agent": a, "verdict": verdict(r["win"], r["par"]), "win": r["win"]}
                for (c, a), r in by.items()]
        changes = changes_with_agent(said)
        cells = {(v["clan"], v["agent"]): f"{VERDICT_WORDS[v['verdict']]} ({v['win'][0]:.1f}%)"
                 for v in said}
        out += ["", f"{n} players (par {100 / n:.1f}%):", "",
                "| clan | " + " | ".join(agents) + " | changes with the agent |",
                "|---|" + "---|" * len(agents) + "---|"]
        for clan in sorted(changes):
            flag = "**yes**" if changes[clan] == "yes" else changes[clan]
            out.append(f"| {clan} | " + " | ".join(cells.get((clan, a), "") for a in agents)
                       + f" | {flag} |")
    return out


def balance_rows(tables: dict[str, dict]) -> list[str]:
    """The README's ``balance`` block: per player count (every one the balance table holds)
    with :data:`BALANCE_AGENT`, the clans with the highest and the lowest win share, the
    first player's, and the clan drafted most often (all of them on a tie); ValueError for
    a table or a player count missing from one of :data:`BALANCE_TABLES`."""
    missing = [t for t in BALANCE_TABLES if t not in tables]
    if missing:
        raise ValueError(f"balance headline: no result file of table {missing[0]!r}")
    clans, seats, draft = (tables[t] for t in BALANCE_TABLES)
    win = next(c for c in clans["columns"] if c["key"] == "win")
    links = " · ".join(f"[{what}](docs/results.md#{slug(r['title'])})"
                       for what, r in (("clans", clans), ("seats", seats), ("draft", draft)))
    lines = ["| players | par | highest clan, win % (95% CI) | lowest clan | first player "
             "(seat 1) | drafted most | |", "|---:|---:|---|---|---|---|---|"]
    for n in sorted({r["players"] for r in clans["rows"]}):
        agent = BALANCE_AGENT.format(players=n)
        mine = {t["table"]: [r for r in t["rows"] if r["players"] == n and r["agent"] == agent]
                for t in (clans, seats, draft)}
        for t in BALANCE_TABLES:
            if not mine[t]:
                raise ValueError(f"balance headline: {tables[t]['path'].name} has no rows of "
                                 f"{agent} for {n} players")
        first = min(mine["balance_seats"], key=lambda r: r["seat"])     # seat 1 plays first
        best = max(mine["balance"], key=lambda r: r["win"][0])
        worst = min(mine["balance"], key=lambda r: r["win"][0])
        top = max(r["picked"] for r in mine["balance_draft"])
        most = " and ".join(f"{r['clan']} (wins {r['win'][0]:.1f}%)"
                            for r in mine["balance_draft"] if r["picked"] == top)
        lines.append(f"| {n} | {cell(best['par'], win)}% | {best['clan']} {cell(best['win'], win)}"
                     f" | {worst['clan']} {cell(worst['win'], win)} | {cell(first['win'], win)} "
                     f"| {most}, in {top:.0f}% of the games | {links} |")
    return lines


def headline_rows(tables: dict[str, dict]) -> dict[str, list[str]]:
    """{block: its table's lines}, each row linking to its table in docs/results.md; the
    ``balance`` block is :func:`balance_rows`."""
    blocks: dict[str, list[str]] = {}
    for block, table, pick, figure, claim, note_key in HEADLINES:
        r = tables.get(table)
        if r is None:
            raise ValueError(f"headline {claim!r}: no result file of table {table!r}")
        pairs = () if pick is None else (pick,) if isinstance(pick[0], str) else pick
        row = next((x for x in r["rows"] if all(x.get(k) == v for k, v in pairs)), None)
        if row is None:
            raise ValueError(f"headline {claim!r}: {r['path'].name} has no row "
                             + ", ".join(f"{k}={v!r}" for k, v in pairs))
        col = {c["key"]: c for c in r["columns"]}
        claim = claim.format(**{k: cell(v, col[k]) for k, v in row.items() if k in col})
        text = cell(row[figure], col[figure])
        if note_key and row.get(note_key):
            text += f", target {cell(row[note_key], col[note_key])}"
        lines = blocks.setdefault(block, ["| claim | figure | |", "|---|---|---|"])
        lines.append(f"| {claim} | {text} | [table](docs/results.md#{slug(r['title'])}) |")
    blocks["balance"] = balance_rows(tables)
    return blocks


def render_readme(readme: str, tables: dict[str, dict]) -> str:
    """``readme`` with every marked block's rows replaced; ``ValueError`` for a block of
    ``HEADLINES`` that has no markers."""
    for block, lines in headline_rows(tables).items():
        pat = re.compile(rf"(<!-- results:begin {block} -->\n).*?(<!-- results:end {block} -->)",
                         re.S)
        if not pat.search(readme):
            raise ValueError(f"README.md has no <!-- results:begin {block} --> block")
        readme = pat.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(2), readme)
    return readme


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 with a diff if docs/results.md or the README's "
                        "marked blocks differ from what the result files render")
    p.add_argument("--root", type=Path, default=ROOT,
                   help="repository to render (default: this one); its benchmarks/results/, "
                        "docs/results.md and README.md are used")
    a = p.parse_args(argv)
    results_dir = a.root / RESULTS.relative_to(ROOT)
    try:
        found = read_results(results_dir)
        for r in found:                       # paths in the text are the repository's
            r["path"] = ROOT / r["path"].relative_to(a.root)
        tables = newest(found)
        readme_path = a.root / "README.md"
        targets = {a.root / "docs" / "results.md": render_results(tables),
                   readme_path: render_readme(readme_path.read_text(encoding="utf-8"), tables)}
    except ValueError as e:
        print(f"report.py: {e}", file=sys.stderr)
        return 2
    stale = 0
    for path, text in targets.items():
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old == text:
            continue
        stale += 1
        if a.check:
            name = path.relative_to(a.root).as_posix()
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), name, name + " (rendered)"))
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(a.root).as_posix()}")
    if a.check and stale:
        print(f"report.py --check: {stale} file(s) out of date; run python benchmarks/report.py",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
