"""The balance-under-uncertainty table of docs/results.md as a result file.

Summarises the rows of ``caledonia balance --perturb N --out FILE.csv`` (one row per drawn
ruleset and clan): per clan the mean win share over the draws, its 5–95% spread, and the share
of draws in which the clan is first, last and above par. The study's ``held_fixed`` column
goes into the result's notes, so the table says what the draws did not vary.

    caledonia balance --players 4 --perturb 24 --games 400 --seed 0 --out ensemble.csv
    python benchmarks/ensemble.py ensemble.csv --players 4 --agent qpolicy --save

One result file holds every player count and agent: a run replaces the rows of its --players
and --agent and keeps the others of the same day's file.
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from balance import clan_title  # noqa: E402

from caledonia_env.cli.balance import DEFAULT_AGENT  # noqa: E402


def summarise(path: Path) -> tuple[int, list[dict], str]:
    """(draws, one row per clan, the held-fixed text) of an ensemble study's rows; each row
    keeps its per-draw win shares (%) as ``w`` for the above-par count."""
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    if not rows:
        raise SystemExit(f"{path}: no rows")
    by_draw = defaultdict(list)
    for r in rows:
        by_draw[r["draw"]].append(r)
    out = []
    per_clan = defaultdict(list)
    for draw in by_draw.values():
        last = max(int(r["rank"]) for r in draw)
        for r in draw:
            per_clan[r["clan"]].append((float(r["win_rate"]), int(r["rank"]) == 1,
                                        int(r["rank"]) == last))
    for clan, vals in sorted(per_clan.items(), key=lambda kv: -np.mean([v[0] for v in kv[1]])):
        w = np.array([v[0] for v in vals]) * 100
        out.append({"clan": clan_title(clan), "mean": round(float(w.mean()), 1),
                    "spread": [round(float(np.percentile(w, 5)), 1),
                               round(float(np.percentile(w, 95)), 1)],
                    "first": round(100 * sum(v[1] for v in vals) / len(vals)),
                    "last": round(100 * sum(v[2] for v in vals) / len(vals)),
                    "w": w})
    held = next((r.get("held_fixed", "") for r in rows if r.get("held_fixed")), "")
    return len(by_draw), out, held


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("csv", type=Path, help="the --out rows of `caledonia balance --perturb N`")
    p.add_argument("--players", type=int, default=4, help="the study's player count (par)")
    p.add_argument("--agent", default=DEFAULT_AGENT,
                   help=f"the study's agent, as its --agent (default {DEFAULT_AGENT}, the "
                        f"default of caledonia balance)")
    p.add_argument("--command", default="", help="the study's command, kept in the result file's notes")
    p.add_argument("--save", action="store_true",
                   help="write the table as a result file (benchmarks/results/)")
    a = p.parse_args(argv)
    draws, rows, held = summarise(a.csv)
    par = 100 / a.players
    for r in rows:
        r["above_par"] = round(100 * float((r.pop("w") > par).mean()))
    print(f"{draws} drawn rulesets, {a.players} players, par {par:.1f}%")
    print(f"{'clan':<11} {'mean':>6} {'5-95%':>13} {'first':>6} {'last':>5} {'>par':>5}")
    for r in rows:
        print(f"{r['clan']:<11} {r['mean']:>6.1f} {r['spread'][0]:>6.1f}-{r['spread'][1]:<6.1f} "
              f"{r['first']:>5}% {r['last']:>4}% {r['above_par']:>4}%")
    if held:
        print(f"held fixed: {held}")
    if a.save:
        from results_io import write_result
        for r in rows:
            r.update(players=a.players, agent=f"`{a.agent}`", draws=draws)
        cols = [{"key": "players", "label": "players", "format": "d"},
                {"key": "agent", "label": "agent"},
                {"key": "draws", "label": "draws", "format": "d"},
                {"key": "clan", "label": "clan"},
                {"key": "mean", "label": "mean win % over the draws", "format": ".1f"},
                {"key": "spread", "label": "5–95% of draws", "format": ".1f"},
                {"key": "first", "label": "first in", "format": "d", "unit": "%"},
                {"key": "last", "label": "last in", "format": "d", "unit": "%"},
                {"key": "above_par", "label": "above par in", "format": "d", "unit": "%"}]
        meaning = ("The same games of each player count, with the same agent in every seat, "
                   "under rulesets drawn "
                   "from the plausible ranges of `caledonia_env/data/estimate_ranges.json`: the "
                   "estimates, the market's track shapes (between the printed PHP tracks and the "
                   "old £1 steps), start steps and solo brackets, the map configuration, the "
                   "module sides themselves (perturbed counts of lochs, deltas, £1 hexes and "
                   "terrains) and every rule reading. A clan conclusion is safe where it holds in at least "
                   "90% of the draws.")
        study = (a.command.replace(f"--players {a.players}", "--players N")
                 .replace(f"--agent {a.agent}", "--agent A"))
        notes = " ".join(x for x in (f"Study: `{study}` (N: the row's players, A: its agent)."
                                      if study else "",
                                      f"Held fixed: {held}" if held else "") if x)
        write_result("balance_ensemble", columns=cols, rows=rows, merge_key=("players", "agent"),
                     title="Clan balance under uncertainty (drawn rulesets, 2, 3 and 4 players)",
                     meaning=meaning, notes=notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
