"""Solo calibration of the economy (R-9.2) and its sensitivity to every estimate.

    python benchmarks/calibration.py --games 500 --workers 2
    python benchmarks/calibration.py --sensitivity --games 300 --workers 2 --out sens.csv
    python benchmarks/calibration.py --games 500 --agents random,greedy,mcts:32@120 --save

An agent written ``NAME@N`` plays N games (the first N of the same games) instead of --games.

Part 1: each agent (default random, greedy, mcts:32 and ppo:pretrained, which picks the solo
checkpoint) plays solo games 0..N-1 from ``(seed, g)`` on the ruleset (bundled or --ruleset):
mean VP with a 95% CI and the share of games in each rating band, printed beside the bands.

Part 2 (--sensitivity): every estimate the ruleset still lists (``Ruleset.estimates()``) and
every sourced value the bundled ranges cover (a market track and its start steps, source
PHP) is moved one at a time: by -20% and +20% (rounded, at least one step), a permutation
reversed and rotated, a start step or the solo bracket's end one step either way, a track
half-way to and onto the old £1-step track; and greedy and mcts:32 (--sens-agents)
play the SAME games (common random numbers) under each variant. The table ranks the
estimates by the largest move of a solo mean (with the 95% CI of the paired difference).
A variant the engine refuses (e.g. beyond an array capacity) is listed as refused.
Progress goes to stderr; --json prints everything as JSON, --out writes the rows as CSV.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import tempfile

import numpy as np

from caledonia_env import Game, GameConfig
from caledonia_env import tournament as tn
from caledonia_env.data import RulesetError, load_ruleset
from caledonia_env.data.ranges import load_ranges, ruleset_dimensions, ruleset_ranges
from caledonia_env.tournament.perturb import apply, sensitivity_moves, write_ruleset

DEFAULT_AGENTS = "random,greedy,mcts:32,ppo:pretrained"
SENS_AGENTS = "greedy,mcts:32"


def solo_rows(agent: str, games: int, seed: int, ruleset: str | None, workers: int = 1,
              progress=None) -> list[dict]:
    """The rows of games 0..games-1 (seeded by (seed, g)) of ``agent`` playing solo."""
    spec = tn.TournamentSpec(players=(agent,), games=games, seed=seed,
                             config=GameConfig(num_players=1, solo=True, ruleset=ruleset))
    return sorted(tn.run(spec, workers=workers, progress=progress), key=lambda r: r["game"])


def solo_vps(agent: str, games: int, seed: int, ruleset: str | None, workers: int = 1
             ) -> np.ndarray:
    """Final VP of :func:`solo_rows`, game by game."""
    return np.array([r["total"] for r in solo_rows(agent, games, seed, ruleset, workers)], float)


def agent_games(spec: str, games: int) -> tuple[str, int]:
    """(agent, games) of an ``--agents`` entry: ``NAME@N`` plays N games, ``NAME`` ``games``;
    ValueError for an N that is not a whole number >= 1."""
    name, sep, n = spec.rpartition("@")
    if not sep:
        return spec, games
    if not n.isdigit() or int(n) < 1 or not name:
        raise ValueError(f"--agents: {spec!r}: write NAME@N with N a number of games >= 1")
    return name, int(n)


def calibrate(agents, games: int, seed: int, ruleset: str | None, workers: int = 1,
              quiet: bool = False) -> dict:
    """Per agent (``NAME`` or ``NAME@N``, :func:`agent_games`): :func:`tournament.solo_summary`
    of its games (bands of the ruleset)."""
    out = {}
    for spec in agents:
        name, n = agent_games(spec, games)
        with tn.progress_bar(n, label=f"{name} games", quiet=quiet) as bar:
            rows = solo_rows(name, n, seed, ruleset, workers, bar.update)
        out[name] = tn.solo_summary(rows, ruleset)
    return out


def _playable(path: str) -> str:
    """'' if a solo game can be set up under the ruleset at ``path``, else the refusal."""
    try:
        Game(GameConfig(num_players=1, solo=True, ruleset=path))
    except (RulesetError, ValueError) as e:
        return str(e).splitlines()[0]
    return ""


def sensitivity(agents, games: int, seed: int, ruleset: str | None, folder: str,
                workers: int = 1, quiet: bool = False, only=None) -> list[dict]:
    """One row per (estimate, move, agent): the solo mean under the moved value, its change
    against the base on the same games and the 95% CI half-width of the paired change;
    ``refused`` holds the engine's message for a variant it cannot play. ``only``: the
    keys to move (default every estimate and every value the bundled ranges cover)."""
    base_rs = load_ruleset(ruleset)
    base = {a: solo_vps(a, games, seed, ruleset, workers) for a in agents}
    rows = []
    ranges = ruleset_ranges(load_ranges())
    groups = [g for g in ruleset_dimensions(base_rs, ranges) if not only or g.key in only]
    for i, est in enumerate(groups):
        moves = sensitivity_moves(est, ranges.get(est.key))
        if not moves:
            rows.append({"estimate": est.key, "kind": est.kind, "move": "", "value": "",
                         "agent": "", "base": "", "mean": "", "delta": "", "ci": "",
                         "refused": "no numeric move for this value"})
        for j, (label, value) in enumerate(moves):
            tables = apply(base_rs.to_dict(), est, value)
            path = os.path.join(folder, f"sens_{i:03d}_{j}.json")
            try:
                write_ruleset(tables, path)
                refused = _playable(path)
            except RulesetError as e:
                refused = str(e).splitlines()[0]
            refused = refused.replace(f"{path}: ", "")
            for a in agents:
                row = {"estimate": est.key, "kind": est.kind, "move": label,
                       "value": json.dumps(value), "agent": a, "base": float(base[a].mean()),
                       "mean": "", "delta": "", "ci": "", "refused": refused}
                if not refused:
                    vps = solo_vps(a, games, seed, path, workers)
                    diff = vps - base[a]
                    sd = float(diff.std(ddof=1)) if games > 1 else float("nan")
                    row.update(mean=float(vps.mean()), delta=float(diff.mean()),
                               ci=1.96 * sd / np.sqrt(games))
                rows.append(row)
        if not quiet:
            print(f"sensitivity: {i + 1}/{len(groups)} estimates ({est.key})",
                  file=sys.stderr, flush=True)
    return rows


def rank_estimates(rows: list[dict]) -> list[tuple[str, float]]:
    """(estimate, effect) sorted by effect, largest first: effect = the largest |change| of a
    solo mean over its moves and agents (refused variants count as 0)."""
    effect: dict = {}
    for r in rows:
        d = abs(r["delta"]) if r["delta"] != "" else 0.0
        effect[r["estimate"]] = max(effect.get(r["estimate"], 0.0), d)
    return sorted(effect.items(), key=lambda kv: -kv[1])


def format_calibration(results: dict, games: int, seed: int) -> str:
    """Markdown table: mean VP (95% CI) and the share of games in each band."""
    first = next(iter(results.values()))
    bands, mins = list(first["bands"]), first["band_min"]
    edges = [f"{b} ({mins[b]}-{mins[n] - 1})" for b, n in zip(bands, bands[1:])]
    edges.append(f"{bands[-1]} ({mins[bands[-1]]}+)")
    lines = ["| agent | games | mean VP (95% CI) | SD | " + " | ".join(edges) + " |",
             "|" + "---|" * (4 + len(bands))]
    for name, st in results.items():
        shares = " | ".join(f"{100 * st['bands'][b] / st['games']:.1f}%" for b in bands)
        lines.append(f"| `{name}` | {st['games']} | {st['vp']:.1f} ({st['vp_ci_low']:.1f}-{st['vp_ci_high']:.1f})"
                     f" | {st['vp_sd']:.1f} | {shares} |")
    counts = sorted({st["games"] for st in results.values()})
    each = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    lines.append(f"\n{each} solo games per agent, seed {seed} (the first games of the same "
                 f"list for every agent)")
    return "\n".join(lines)


def format_sensitivity(rows: list[dict], agents) -> str:
    """Markdown table of the estimates ranked by effect, each move's change per agent."""
    lines = ["| rank | estimate | effect | " + " | ".join(
        f"{a}: move -> change (95% CI)" for a in agents) + " |", "|" + "---|" * (3 + len(agents))]
    for k, (key, eff) in enumerate(rank_estimates(rows), 1):
        cells = []
        for a in agents:
            mine = [r for r in rows if r["estimate"] == key and r["agent"] == a]
            cells.append("; ".join(
                f"{r['move']}: refused" if r["refused"] else
                f"{r['move']}: {r['delta']:+.1f} (±{r['ci']:.1f})" for r in mine) or "-")
        lines.append(f"| {k} | `{key}` | {eff:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def _names(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=300, help="solo games per agent and variant")
    p.add_argument("--agents", default=DEFAULT_AGENTS, help=f"default {DEFAULT_AGENTS}")
    p.add_argument("--sens-agents", default=SENS_AGENTS,
                   help=f"agents of --sensitivity (default {SENS_AGENTS})")
    p.add_argument("--seed", type=int, default=20261126, help="match seed (default 20261126)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--ruleset", default=None, help="ruleset folder or override .json")
    p.add_argument("--sensitivity", action="store_true", help="also move every estimate (±20%%) and "
                   "every value the ranges cover")
    p.add_argument("--estimates", default=None, metavar="KEY[,KEY]",
                   help="move only these estimates (keys as in estimate_ranges.json, e.g. "
                        "starting_tiles:S1.money,market:wool.track)")
    p.add_argument("--json", action="store_true", help="print the results as JSON only")
    p.add_argument("--out", default=None, metavar="FILE.csv",
                   help="rows as CSV (the sensitivity rows with --sensitivity)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--save", action="store_true",
                   help="also write the calibration table to benchmarks/results/"
                        "calibration-DATE.json, or with --sensitivity the ranking to "
                        "sensitivity-DATE.json (benchmarks/report.py renders them)")
    a = p.parse_args(argv)
    if a.games < 1 or a.workers < 1:
        p.error(f"--games and --workers must be >= 1, got {a.games} and {a.workers}")
    try:
        keys = {g.key for g in ruleset_dimensions(load_ruleset(a.ruleset),
                                                  ruleset_ranges(load_ranges()))}
    except RulesetError as e:
        p.error(str(e))
    try:
        for spec in _names(a.agents):
            agent_games(spec, a.games)
    except ValueError as e:
        p.error(str(e))
    only = _names(a.estimates) if a.estimates else None
    unknown = sorted(set(only or ()) - keys)
    if unknown:
        p.error(f"--estimates: not an estimate of the ruleset nor a value the ranges "
                f"cover: {', '.join(unknown)}; allowed: {', '.join(sorted(keys))}")
    result = {"games": a.games, "seed": a.seed, "ruleset": a.ruleset or "bundled",
              "calibration": calibrate(_names(a.agents), a.games, a.seed, a.ruleset,
                                       a.workers, a.quiet)}
    sens_agents = _names(a.sens_agents)
    if a.sensitivity:
        with tempfile.TemporaryDirectory(prefix="caledonia-sens-") as folder:
            result["sensitivity"] = sensitivity(sens_agents, a.games, a.seed, a.ruleset,
                                                folder, a.workers, a.quiet, only)
        result["ranking"] = rank_estimates(result["sensitivity"])
    if a.json:
        print(json.dumps(result, indent=1))
    else:
        print(format_calibration(result["calibration"], a.games, a.seed))
        if a.sensitivity:
            print("\nSensitivity of the solo mean VP to each estimate (±20%, same games):\n")
            print(format_sensitivity(result["sensitivity"], sens_agents))
    if a.out:
        rows = result.get("sensitivity") or [
            {"agent": k, **{f: v for f, v in st.items() if f not in ("bands", "band_min")},
             **{f"band {b}": n for b, n in st["bands"].items()}}
            for k, st in result["calibration"].items()]
        tn.write_text(a.out, _csv(rows))
        if not a.json:
            print(f"{len(rows)} rows written to {a.out}")
    if a.save and a.sensitivity:
        save_sensitivity(result["sensitivity"], sens_agents, a.games, a.seed, a.ruleset)
    elif a.save:
        save(result["calibration"], a.ruleset, a.seed)
    return 0


def save_sensitivity(rows: list[dict], agents, games: int, seed: int, ruleset) -> None:
    """The sensitivity ranking as a result file ``sensitivity`` (benchmarks/results_io.py):
    per value moved, its largest effect and every move's paired change per agent."""
    from results_io import write_result
    columns = [{"key": "rank", "label": "rank", "format": "d"},
               {"key": "estimate", "label": "value moved"},
               {"key": "kind", "label": "kind"},
               {"key": "effect", "label": "largest change (VP)", "format": ".1f"},
               {"key": "moves", "label": "move: change of the solo mean (95% CI)"}]
    out = []
    for k, (key, eff) in enumerate(rank_estimates(rows), 1):
        mine = [r for r in rows if r["estimate"] == key]
        cells = []
        for a in agents:
            these = [r for r in mine if r["agent"] == a]
            text = "; ".join(f"{r['move']}: refused" if r["refused"] else
                             f"{r['move']}: {r['delta']:+.1f} (±{r['ci']:.1f})" for r in these)
            if text:
                cells.append(text if len(agents) == 1 else f"{a}: {text}")
        out.append({"rank": k, "estimate": f"`{key}`", "kind": mine[0]["kind"],
                    "effect": round(eff, 2), "moves": " · ".join(cells) or "no numeric move"})
    meaning = ("Every estimate, and every sourced value the ranges cover, moved one at a time "
               "on the same solo games: by ±20% (at least one step), a permutation reversed "
               "and rotated, a start step or the solo bracket's end one step either way, a "
               "market track half-way to and onto the old £1-step track. Each cell is the "
               "change of the solo mean VP with the 95% CI of the paired difference; the "
               "values are ranked by their largest change.")
    write_result("sensitivity", columns=columns, rows=out, ruleset=ruleset or "default",
                 title="Which estimates matter most (solo sensitivity)", meaning=meaning,
                 notes=f"{games} solo games of seed {seed}, the same games under every "
                       f"variant (paired changes); agents {', '.join(agents)}.")


def save(results: dict, ruleset, seed: int) -> None:
    """The calibration table as a result file (benchmarks/results_io.py)."""
    from results_io import write_result
    bands = list(next(iter(results.values()))["bands"])
    columns = [{"key": "agent", "label": "agent"},
               {"key": "games", "label": "games", "format": "d"},
               {"key": "mean_vp", "label": "mean VP (95% CI)", "format": ".1f"}]
    columns += [{"key": b.lower(), "label": b, "format": "g", "unit": "%"} for b in bands]
    rows = [{"agent": f"`{name}`", "games": st["games"],
             "mean_vp": [round(st["vp"], 1), round(st["vp_ci_low"], 1), round(st["vp_ci_high"], 1)],
             **{b.lower(): round(100 * st["bands"][b] / st["games"], 1) for b in bands}}
            for name, st in results.items()]
    write_result("calibration", columns=columns, rows=rows, ruleset=ruleset or "default",
                 notes=f"Seed {seed}: the first games of the same list for every agent.")


if __name__ == "__main__":
    sys.exit(main())
