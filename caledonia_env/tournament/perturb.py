"""Rulesets with estimates moved: one value at a time (±20%, for sensitivity studies) or all
at once, drawn from their plausible ranges (``caledonia balance --perturb N``), and the
balance study over such an ensemble (win share per clan across the draws, its plot)."""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import pathlib
import re

import numpy as np

from caledonia_env.data import load_ruleset
from caledonia_env.data.ranges import Estimate, Range, estimate_groups, spacing_of
from caledonia_env.tournament.output import write_text
from caledonia_env.tournament.runner import run
from caledonia_env.tournament.stats import group_stats

STEP = 0.2                                   # the sensitivity move: ±20% of the estimate
_SEG = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
# The price keys of today's market format (track min..max, starting prices, solo bracket).


def _round(x: float) -> int:
    return int(np.floor(x + 0.5))


def scale_market_track(track: dict, factor: float) -> dict:
    """The good's market table with every step price ×``factor``, rounded (the track as a
    whole). The start steps and the solo bracket are step indices and stay; rounding a
    non-decreasing track keeps it non-decreasing."""
    out = dict(track)
    out["track"] = [_round(p * factor) for p in track["track"]]
    return out


def set_value(tables: dict, table: str, path: str, value) -> dict:
    """``tables`` (``Ruleset.to_dict()`` form, changed in place and returned) with the value at
    ``path`` (dotted keys, ``[i]`` list items) of ``table`` replaced."""
    keys = [m.group(1) if m.group(1) is not None else int(m.group(2))
            for m in _SEG.finditer(path)]
    node = tables[table]
    for k in keys[:-1]:
        node = node[k]
    present = keys[-1] in node if isinstance(node, dict) else keys[-1] < len(node)
    if not present:
        raise KeyError(f"{table}:{path} is not in the ruleset")
    node[keys[-1]] = value
    return tables


def apply(tables: dict, est: Estimate, value) -> dict:
    """``tables`` with ``est`` set to ``value`` (a factor for a market track, the step of the
    marks for ``spacing``, else the value itself)."""
    if est.kind == "track_scale":
        tables["market"][est.path] = scale_market_track(tables["market"][est.path], value)
    elif est.kind == "spacing":
        set_value(tables, est.table, est.path, list(range(value, est.value[-1] + 1, value)))
    else:
        set_value(tables, est.table, est.path, value)
    _refit_import_marks(tables)
    return tables


def _refit_import_marks(tables: dict) -> None:
    """Keep the import track's evenly spaced marks running to its last space (the estimate's
    shape: every k-th space up to the end) when its length or spacing moved."""
    track = tables.get("export_board", {}).get("import_track", {})
    step = spacing_of(track.get("marked_spaces"))
    if step and isinstance(track.get("length"), int):
        track["marked_spaces"] = list(range(step, track["length"] + 1, step))


def _int_moves(v: int) -> list[int]:
    """v ±20%, rounded, at least one step; never below 0."""
    lo = min(v - 1, _round(v * (1 - STEP)))
    hi = max(v + 1, _round(v * (1 + STEP)))
    return [x for x in (lo, hi) if x >= 0]


def sensitivity_moves(est: Estimate) -> list[tuple[str, object]]:
    """The (label, value for :func:`apply`) of the variants of ``est`` a sensitivity study
    plays: ``-20%`` / ``+20%`` (rounded, at least one step), for a permutation its reverse
    and its rotation by one; none for a ``fixed`` value."""
    if est.kind == "int":
        return [(f"{x - est.value:+d}", x) for x in _int_moves(est.value)]
    if est.kind == "track_scale":
        return [(f"x{1 - STEP:g}", 1 - STEP), (f"x{1 + STEP:g}", 1 + STEP)]
    if est.kind == "spacing":
        s = spacing_of(est.value)
        return [(f"every {x}", x) for x in _int_moves(s) if x >= 1]
    if est.kind == "permutation":
        v = list(est.value)
        return [("reversed", v[::-1]), ("rotated", v[1:] + v[:1])]
    return []


def draw_value(est: Estimate, span: Range, rng: np.random.Generator):
    """One value of ``est`` drawn uniformly from its plausible range (integers inclusive)."""
    r = span
    if r.kind in ("int", "spacing"):
        return int(rng.integers(r.lo, r.hi + 1))
    if r.kind == "track_scale":
        return float(rng.uniform(r.lo, r.hi))
    v = list(est.value)
    free = [i for i in range(len(v)) if i not in r.fixed]
    shuffled = [v[i] for i in free]
    rng.shuffle(shuffled)
    for i, x in zip(free, shuffled):
        v[i] = x
    return v


def draw_ruleset(base, ranges: dict[str, Range], seed: int, draw: int) -> tuple[dict, dict]:
    """(tables, drawn values by key): every estimate of ``base`` that has a range, drawn
    from ``numpy.random.default_rng([seed, draw])``; estimates without a range keep today's
    value."""
    rng = np.random.default_rng([seed, draw])
    tables, drawn = base.to_dict(), {}
    for est in estimate_groups(base):
        if est.key in ranges:
            drawn[est.key] = draw_value(est, ranges[est.key], rng)
            apply(tables, est, drawn[est.key])
    return tables, drawn


def write_ruleset(tables: dict, path: str) -> str:
    """Write ``tables`` as an override file, validated by loading it; return the path."""
    pathlib.Path(path).write_text(json.dumps(tables), encoding="utf-8")
    load_ruleset(path)
    return path


# ---------------------------------------------------------------- the ensemble balance study
class OtherDraw(ValueError):
    """A resumed ensemble study whose folder holds a ruleset of another draw."""


def _rank(stats: list[dict]) -> dict:
    """Rank of each clan by win rate (1 = best; ties share the better rank)."""
    rates = sorted((s["win_rate"] for s in stats), reverse=True)
    return {s["clan"]: 1 + rates.index(s["win_rate"]) for s in stats}


def ensemble_balance(spec, n: int, ranges: dict[str, Range], folder: str, seed: int = 0,
                     workers: int = 1, progress=None, on_draw=None, play=None,
                     resume: bool = False) -> list[dict]:
    """Play ``spec`` (a balance study) under ``n`` rulesets drawn from ``ranges`` (written to
    ``folder`` as ``ruleset_draw_0000.json``, ...); the same games (seeds, clans) in every
    draw. One row per (draw, clan): games, wins, win_rate, Wilson CI, rank (1 = best), the
    ruleset's fingerprint and each drawn value (``value <key>``). ``on_draw(draw, rows)``
    sees each draw's rows. ``play(spec, draw)`` returns the game rows of one draw's study
    (default: ``runner.run`` with ``workers`` and ``progress``; ``caledonia balance
    --perturb --out`` streams each draw to a resumable file instead). With ``resume`` a
    ruleset file already in ``folder`` must hold the same draw, else :class:`OtherDraw` is
    raised before that file is rewritten (another ``seed`` or ``ranges``)."""
    base = load_ruleset(spec.template.ruleset)
    if play is None:
        def play(drawn_spec, draw):
            return run(drawn_spec, workers=workers, progress=progress)
    out = []
    for d in range(n):
        tables, drawn = draw_ruleset(base, ranges, seed, d)
        path = os.path.join(folder, f"ruleset_draw_{d:04d}.json")
        old = pathlib.Path(path)
        if resume and old.exists() and old.read_text(encoding="utf-8") != json.dumps(tables):
            raise OtherDraw(f"{os.path.basename(path)} in {folder} holds another ruleset "
                             f"than draw {d} of this study: another --seed or --ranges?")
        write_ruleset(tables, path)
        rows = play(dataclasses.replace(
            spec, config=dataclasses.replace(spec.template, ruleset=path)), d)
        rows = [dict(r, clan=r["agent"]) if r["agent"].startswith("automa:") else r
                for r in rows]
        stats = group_stats(rows, "clan")
        rank = _rank(stats)
        values = {f"value {k}": json.dumps(v) if isinstance(v, list) else v
                  for k, v in drawn.items()}
        draw_rows = [{"draw": d, "clan": s["clan"], "games": s["n"], "wins": s["wins"],
                      "win_rate": s["win_rate"], "ci_low": s["ci_low"], "ci_high": s["ci_high"],
                      "rank": rank[s["clan"]], "clans": len(stats),
                      "ruleset_fingerprint": rows[0]["ruleset_fingerprint"], **values}
                     for s in stats]
        if on_draw:
            on_draw(d, draw_rows)
        out.extend(draw_rows)
    return out


def ensemble_summary(rows: list[dict], par: float | None = None) -> list[dict]:
    """Per clan across the draws: mean win share, its 5-95% range, share of draws ranked
    first and last, and with ``par`` (the win share of an even game, 1 / players) the share
    of draws where the clan won more than par (sorted by mean, best first)."""
    by: dict = {}
    for r in rows:
        by.setdefault(r["clan"], []).append(r)
    out = []
    for clan, rs in by.items():
        w = np.array([r["win_rate"] for r in rs])
        out.append({"clan": clan, "draws": len(rs), "mean": float(w.mean()),
                    "p5": float(np.percentile(w, 5)), "p95": float(np.percentile(w, 95)),
                    "first": sum(r["rank"] == 1 for r in rs) / len(rs),
                    "last": sum(r["rank"] == r["clans"] for r in rs) / len(rs)})
        if par is not None:
            out[-1]["above_par"] = float((w > par).mean())
    return sorted(out, key=lambda s: -s["mean"])


def write_ensemble_csv(rows: list[dict], path: str) -> None:
    """The rows of :func:`ensemble_balance` as CSV (one per draw and clan), atomically."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    write_text(path, buf.getvalue())


def format_ensemble(summary: list[dict], title: str) -> str:
    """Text table of :func:`ensemble_summary` (the above-par column when it has one)."""
    above = bool(summary) and "above_par" in summary[0]
    head = (f"{'clan':<14}{'draws':>6}{'mean win %':>12}{'5-95% range':>15}{'first %':>9}"
            f"{'last %':>8}" + (f"{'above par %':>13}" if above else ""))
    lines = [title, head, "-" * len(head)]
    for s in summary:
        span = f"{100 * s['p5']:.1f}-{100 * s['p95']:.1f}"
        lines.append(f"{s['clan']!s:<14}{s['draws']:>6}{100 * s['mean']:>12.1f}{span:>15}"
                     f"{100 * s['first']:>9.0f}{100 * s['last']:>8.0f}"
                     + (f"{100 * s['above_par']:>13.0f}" if above else ""))
    return "\n".join(lines)


def ensemble_figure(rows: list[dict], num_players: int, title: str):
    """Each clan's win share in every draw (dots), its mean and 5-95% range; par line."""
    import matplotlib                 # inside: a slow import, needed only to draw
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    summary = ensemble_summary(rows)
    clans = [s["clan"] for s in summary]
    fig, ax = plt.subplots(figsize=(10, 5.5))
    jitter = np.random.default_rng(0)
    for i, clan in enumerate(clans):
        w = [100 * r["win_rate"] for r in rows if r["clan"] == clan]
        ax.scatter(i + jitter.uniform(-0.15, 0.15, len(w)), w, s=10, alpha=0.5, color="#5b8db8")
    mean = np.array([100 * s["mean"] for s in summary])
    err = [mean - [100 * s["p5"] for s in summary], [100 * s["p95"] for s in summary] - mean]
    ax.errorbar(range(len(clans)), mean, yerr=err, fmt="o", color="k", capsize=5,
                label="mean, 5-95% of draws")
    ax.axhline(100 / num_players, color="k", ls="--", lw=1, label=f"par {100 / num_players:.0f}%")
    ax.set_xticks(range(len(clans)), clans, rotation=35, ha="right")
    ax.set_ylabel("win rate % in one drawn ruleset")
    ax.legend()
    ax.set_title(title)
    fig.tight_layout()
    return fig
