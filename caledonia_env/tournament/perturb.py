"""Rulesets with their uncertain values moved: one value at a time (±20% or the range's other
end, for sensitivity studies) or all at once, drawn from their plausible ranges with the map
configuration, the counts on the module sides (carried by the drawn ruleset) and the rule
readings (``caledonia balance --perturb N``), and the balance
study over such an ensemble (win share per clan across the draws, what the draws held
fixed, its plot)."""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import pathlib
import re
import textwrap
import typing

import numpy as np

from caledonia_env import config as config_module
from caledonia_env.config import GameConfig
from caledonia_env.data import RulesetError, load_ruleset
from caledonia_env.data.ranges import (CONFIG_PREFIX, INTERP_KEY, MAP_KEY, SIDES_KEY, Dimension,
                                       Range, holds_run, ruleset_dimensions, ruleset_ranges,
                                       spacing_of)
from caledonia_env.map.board import all_configs
from caledonia_env.map.format import MAPS_DIR, MODULE_SIDES
from caledonia_env.map.perturb import perturb_side
from caledonia_env.tournament.output import write_text
from caledonia_env.tournament.runner import run
from caledonia_env.tournament.stats import group_stats

STEP = 0.2                                   # the sensitivity move: ±20% of the estimate
TRIES = 1000                                 # draws of a track before its constraints fail
_SEG = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _round(x: float) -> int:
    return int(np.floor(x + 0.5))


def mix_track(a, b, t: float) -> list[int]:
    """The step list a share ``t`` of the way from track ``a`` to track ``b`` (R-3.1): its
    length mixed likewise, each step the mix of both tracks read at the same relative
    position, rounded. ``t = 0`` is ``a``, ``t = 1`` is ``b``; the result never falls."""
    n = max(1, _round((1 - t) * len(a) + t * len(b)))

    def at(track, x):
        pos = x * (len(track) - 1)
        i = min(int(np.floor(pos + 1e-9)), len(track) - 1)
        j = min(i + 1, len(track) - 1)
        return track[i] + (track[j] - track[i]) * max(0.0, pos - i)

    return [_round((1 - t) * at(a, k / max(n - 1, 1)) + t * at(b, k / max(n - 1, 1)))
            for k in range(n)]


def set_value(tables: dict, table: str, path: str, value, source: str | None = None) -> dict:
    """``tables`` (``Ruleset.to_dict()`` form, changed in place and returned) with the value at
    ``path`` (dotted keys, ``[i]`` list items) of ``table`` replaced; ``source`` (e.g.
    ``'estimate'``) retags a dict's field in its ``sources``."""
    keys = [m.group(1) if m.group(1) is not None else int(m.group(2))
            for m in _SEG.finditer(path)]
    node = tables[table]
    for k in keys[:-1]:
        node = node[k]
    present = keys[-1] in node if isinstance(node, dict) else keys[-1] < len(node)
    if not present:
        raise KeyError(f"{table}:{path} is not in the ruleset")
    node[keys[-1]] = value
    if source is not None and isinstance(node, dict):
        node.setdefault("sources", {})[keys[-1]] = source
    return tables


def _market(tables: dict, dim: Dimension) -> dict:
    return tables["market"][dim.path.split(".")[0]]


def apply(tables: dict, dim: Dimension, value) -> dict:
    """``tables`` with ``dim`` set to ``value`` (the step of the marks for ``spacing``, the
    step list for a track, else the value itself); a sourced value moved away from today's
    is retagged ``estimate``."""
    if dim.kind == "spacing":
        value = list(range(value, dim.value[-1] + 1, value))
    moved = dim.source != "estimate" and value != dim.value
    set_value(tables, dim.table, dim.path, value, "estimate" if moved else None)
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


def sensitivity_moves(dim: Dimension, span: Range | None = None) -> list[tuple[str, object]]:
    """The (label, value for :func:`apply`) of the variants of ``dim`` a sensitivity study
    plays: ``-20%`` / ``+20%`` (rounded, at least one step); a permutation reversed and
    rotated by one; a start step one step either way; the solo bracket one step narrower and
    wider; a track half-way to and at the other end of its range ``span``; none for a
    ``fixed`` value (or a track without its range)."""
    v = dim.value
    if dim.kind == "int":
        return [(f"{x - v:+d}", x) for x in _int_moves(v)]
    if dim.kind == "spacing":
        return [(f"every {x}", x) for x in _int_moves(spacing_of(v)) if x >= 1]
    if dim.kind == "permutation":
        return [("reversed", v[::-1]), ("rotated", v[1:] + v[:1])]
    if dim.kind == "start_step":
        return [(f"{d:+d} step", v + d) for d in (-1, 1) if v + d >= 0]
    if dim.kind == "bracket":
        return [(f"{d:+d} step", [v[0], v[1] + d]) for d in (-1, 1) if v[1] + d >= v[0]]
    if dim.kind == "track_mix" and span is not None:
        return [(f"mix {t:g}", mix_track(v, span.to, t)) for t in (0.5, 1.0)]
    return []


def _start_steps(track, span: Range) -> list[int]:
    """The steps of ``track`` a start-step range allows (its price, if it names one)."""
    return [k for k in range(int(span.lo), min(int(span.hi), len(track) - 1) + 1)
            if span.price is None or track[k] == span.price]


def _draw_track(dim: Dimension, span: Range, starts: list[Range], rng) -> tuple[float, list]:
    """(mix weight, step list) of a track drawn from its range: today's track with
    probability ``p_today``, else a weight uniform in lo..hi; drawn again until the track
    holds the range's ``contains`` run and a step for each start-step range of its good."""
    for _ in range(TRIES):
        keep = span.p_today is not None and rng.random() < span.p_today
        t = float(span.lo) if keep else float(rng.uniform(span.lo, span.hi))
        track = mix_track(dim.value, span.to, t)
        if holds_run(track, span.contains) and all(_start_steps(track, s) for s in starts):
            return t, track
    raise RulesetError(f"{dim.key}: no track in its range holds {list(span.contains)} and "
                       f"the start steps of its good in {TRIES} draws")


def draw_value(dim: Dimension, span: Range, rng: np.random.Generator, tables: dict):
    """One value of ``dim`` drawn from its plausible range: integers and spacings uniformly
    (inclusive); a permutation shuffled outside its fixed positions; a start step uniformly
    among the steps of the good's (drawn) track its range allows; the solo bracket from the
    1-2 start, lo..hi steps wide (clamped at the track's end)."""
    r = span
    if r.kind in ("int", "spacing"):
        return int(rng.integers(r.lo, r.hi + 1))
    if r.kind == "start_step":
        steps = _start_steps(_market(tables, dim)["track"], r)
        return int(steps[rng.integers(len(steps))])
    if r.kind == "bracket":
        m = _market(tables, dim)
        first = m["start_step_1_2"]
        return [first, min(first + int(rng.integers(r.lo, r.hi + 1)), len(m["track"]) - 1)]
    v = list(dim.value)
    free = [i for i in range(len(v)) if i not in r.fixed]
    shuffled = [v[i] for i in free]
    rng.shuffle(shuffled)
    for i, x in zip(free, shuffled):
        v[i] = x
    return v


def draw_ruleset(base, ranges: dict[str, Range], seed: int, draw: int) -> tuple[dict, dict]:
    """(tables, drawn values by key): every value of ``base`` that has a range (its
    estimates, and the sourced values a range covers), drawn from
    ``numpy.random.default_rng([seed, draw])``; a market good's track first, then its start
    steps and its solo bracket on that track. The value recorded for a track is its mix
    weight (0 = today's track, 1 = the range's ``to``). Values without a range stay. With a
    ``map:sides`` range the tables carry the drawn module sides (:func:`draw_sides`,
    table ``maps``) and its value is the changes made per side (``"today"`` when kept)."""
    rng = np.random.default_rng([seed, draw])
    sides_range = ranges.get(SIDES_KEY)
    ranges = ruleset_ranges(ranges)
    tables, drawn = base.to_dict(), {}
    for dim in ruleset_dimensions(base, ranges):
        span = ranges.get(dim.key)
        if span is None:
            continue
        if span.kind == "track_mix":
            good = dim.path.split(".")[0]
            starts = [ranges[k] for k in (f"market:{good}.start_step_1_2",
                                          f"market:{good}.start_step_3_4") if k in ranges]
            drawn[dim.key], value = _draw_track(dim, span, starts, rng)
        else:
            value = drawn[dim.key] = draw_value(dim, span, rng, tables)
        apply(tables, dim, value)
    if sides_range is not None:
        maps, drawn[SIDES_KEY] = draw_sides(base, sides_range, seed, draw)
        if maps:
            tables["maps"] = maps
    return tables, drawn


def draw_sides(base, span: Range, seed: int, draw: int) -> tuple[dict, object]:
    """(sides, changes) of one draw of a ``map:sides`` range: all eight module sides (the
    ones ``base`` carries, else the bundled) kept with ``p_today`` (``({}, "today")``), else
    each perturbed (:func:`caledonia_env.map.perturb.perturb_side`) within the range's
    ``counts``; changes ``{side: {count: change}}``. Drawn from
    ``numpy.random.default_rng([seed, draw, 2])``, apart from the ruleset's values and the
    setup's draws, so adding the range changes no other drawn value."""
    rng = np.random.default_rng([seed, draw, 2])
    if span.p_today is not None and rng.random() < span.p_today:
        return {}, "today"
    carried = base.maps
    maps, changes = {}, {}
    for name in MODULE_SIDES:
        side = carried.get(name)
        if side is None:
            side = json.loads(pathlib.Path(MAPS_DIR, f"{name}.json").read_text(encoding="utf-8"))
        maps[name], changes[name] = perturb_side(side, rng, span.count_bounds())
    return maps, changes


def write_ruleset(tables: dict, path: str) -> str:
    """Write ``tables`` as an override file, validated by loading it; return the path."""
    pathlib.Path(path).write_text(json.dumps(tables), encoding="utf-8")
    load_ruleset(path)
    return path


# ---------------------------------------------------------------- the setup: map and readings
def interp_switches(ranges: dict[str, Range], cls=GameConfig,
                    namespace: dict | None = None) -> dict[str, tuple]:
    """``{field: readings}`` for every ``interp_*`` field of ``cls``, its default first: a
    bool reads False or True; a str the ``*_READINGS`` constant of ``namespace`` (default:
    the names :mod:`caledonia_env.config` holds, where GameConfig checks its readings)
    holding its default, every reading of which ``cls`` accepts; any other field the
    ``readings`` of its ``config:<field>`` range. ValueError naming a field whose readings
    are not known, or a constant the config does not accept."""
    namespace = vars(config_module) if namespace is None else namespace
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        if not f.name.startswith("interp_"):
            continue
        default, hint = f.default, hints[f.name]
        if hint is bool:
            readings = (False, True)
        elif hint is str:
            found = [v for k, v in namespace.items() if k.endswith("_READINGS")
                     and isinstance(v, tuple) and default in v]
            if len(found) != 1:
                raise ValueError(f"GameConfig.{f.name}: {len(found)} *_READINGS constants "
                                 f"hold its default {default!r}; one must")
            readings = found[0]
            for x in readings:
                cls(**{f.name: x})                     # refused readings raise here
        else:
            span = ranges.get(CONFIG_PREFIX + f.name)
            if span is None or not span.readings:
                raise ValueError(f"GameConfig.{f.name}: its type does not list its readings: "
                                 f"give them in the range {CONFIG_PREFIX + f.name!r} "
                                 f"('readings')")
            readings = span.readings
        if default not in readings:
            raise ValueError(f"GameConfig.{f.name}: its default {default!r} is not among "
                             f"its readings {readings}")
        out[f.name] = (default,) + tuple(x for x in readings if x != default)
    return out


@dataclasses.dataclass(frozen=True)
class Setup:
    """What a study draws beside the ruleset: the map (``draw_map``: one of the 16
    configurations of the bundled sides per draw) and each switch of ``readings`` (field ->
    (readings, today first), chance of keeping today's)."""
    draw_map: bool
    readings: dict


def study_setup(template: GameConfig, ranges: dict[str, Range], cls=GameConfig) -> Setup:
    """The :class:`Setup` of ``ranges`` for games of ``template``: the map unless the
    template names one (--map); every ``interp_*`` switch with a range (its own
    ``config:<field>`` or ``config:interp_*``) whose template value is its default (a
    reading set by the options is held); no switch when no ``config:`` range is given."""
    drawn = any(k.startswith(CONFIG_PREFIX) for k in ranges)
    switches = interp_switches(ranges, cls) if drawn else {}
    readings = {}
    for name, values in switches.items():
        span = ranges.get(CONFIG_PREFIX + name) or ranges.get(INTERP_KEY)
        if span is not None and getattr(template, name) == values[0]:
            readings[name] = (values, 0.5 if span.p_today is None else span.p_today)
    return Setup(MAP_KEY in ranges and template.map is None, readings)


def draw_setup(setup: Setup, seed: int, draw: int) -> dict:
    """The GameConfig fields of one draw: ``map`` (side labels) and each switch's reading
    (today's with its ``p_today``, else one of the others uniformly), from
    ``numpy.random.default_rng([seed, draw, 1])`` (apart from the ruleset's draws)."""
    rng = np.random.default_rng([seed, draw, 1])
    out = {}
    if setup.draw_map:
        configs = all_configs()
        out["map"] = configs[int(rng.integers(len(configs)))]
    for name, (values, p) in setup.readings.items():
        keep = rng.random() < p or len(values) == 1
        out[name] = values[0] if keep else values[1 + int(rng.integers(len(values) - 1))]
    return out


def _source_family(tag: str) -> str:
    return tag if tag.startswith("sourced:") else tag.split(":")[0]


def describe_drawn(base, ranges: dict[str, Range], setup: Setup) -> str:
    """One line: what the draws of a study vary (the ruleset values by provenance, the map,
    the readings)."""
    by: dict = {}
    for d in ruleset_dimensions(base, ruleset_ranges(ranges)):
        if d.key in ranges:
            by.setdefault(d.source, []).append(d)
    parts = [f"{len(ds)} {src} values" + (f" ({', '.join(sorted({d.kind for d in ds}))})"
                                          if src != "estimate" else "")
             for src, ds in sorted(by.items())]
    if setup.draw_map:
        parts.append(f"the map (one of the {len(all_configs())} configurations per draw)")
    if SIDES_KEY in ranges:
        parts.append("the module sides (their lochs, deltas, £1 hexes and terrains, "
                     "per draw)")
    if setup.readings:
        parts.append("the readings " + ", ".join(setup.readings))
    return "; ".join(parts) or "nothing"


def held_fixed(base, ranges: dict[str, Range], template: GameConfig, setup: Setup,
               cls=GameConfig) -> list[str]:
    """What the draws of a study hold fixed, one item each: per ruleset table the sources
    of its values without a range (``contracts (community)``), the module sides unless a
    ``map:sides`` range draws them, the map when the template names it, the readings not
    drawn."""
    varied = {d.key for d in ruleset_dimensions(base, ruleset_ranges(ranges))
              if d.key in ranges}
    tables: dict = {}
    for t, p, _, s in base.provenance():
        if f"{t}:{p}" not in varied:
            tables.setdefault(t, set()).add(_source_family(s))
    out = [f"{t} ({', '.join(sorted(s))})" for t, s in tables.items()]
    if SIDES_KEY not in ranges and base.maps:
        out.append(f"the module sides (the ruleset's own {', '.join(base.maps)}, the "
                   f"project's original others)")
    elif SIDES_KEY not in ranges:
        out.append("the module sides (the project's eight original sides: the printed map "
                   "is not in the data)")
    if template.map is not None:
        out.append(f"the map {','.join(template.map)} (--map)")
    elif not setup.draw_map:
        out.append("the map drawn per game from its seed, the same in every draw")
    out += [f"{f.name}={getattr(template, f.name)!r}" for f in dataclasses.fields(cls)
            if f.name.startswith("interp_") and f.name not in setup.readings]
    return out


# ---------------------------------------------------------------- the ensemble balance study
class OtherDraw(ValueError):
    """A resumed ensemble study whose folder holds a ruleset of another draw."""


def _rank(stats: list[dict]) -> dict:
    """Rank of each clan by win rate (1 = best; ties share the better rank)."""
    rates = sorted((s["win_rate"] for s in stats), reverse=True)
    return {s["clan"]: 1 + rates.index(s["win_rate"]) for s in stats}


def _check_file(path: str, text: str, what: str, d: int, folder: str, resume: bool) -> None:
    """With ``resume``: OtherDraw unless the file at ``path`` is absent or holds ``text``."""
    old = pathlib.Path(path)
    if resume and old.exists() and old.read_text(encoding="utf-8") != text:
        raise OtherDraw(f"{os.path.basename(path)} in {folder} holds another {what} than "
                        f"draw {d} of this study: another --seed or --ranges?")


def ensemble_balance(spec, n: int, ranges: dict[str, Range], folder: str, seed: int = 0,
                     workers: int = 1, progress=None, on_draw=None, play=None,
                     resume: bool = False) -> list[dict]:
    """Play ``spec`` (a balance study) under ``n`` draws from ``ranges``: a ruleset
    (``folder/ruleset_draw_0000.json``, ...) and a setup, the map and the rule readings
    (``setup_draw_0000.json``: the GameConfig fields drawn); the same games (seeds, clans)
    in every draw. One row per (draw, clan): games, wins, win_rate, Wilson CI, rank (1 =
    best), the ruleset's fingerprint, each drawn value (``value <key>``; ``value map``,
    ``value map:sides``, ``value config:<field>``) and ``held_fixed`` (:func:`held_fixed`, joined by '; ').
    ``on_draw(draw, rows)`` sees each draw's rows. ``play(spec, draw)`` returns the game
    rows of one draw's study (default: ``runner.run`` with ``workers`` and ``progress``;
    ``caledonia balance --perturb --out`` streams each draw to a resumable file instead).
    With ``resume`` a draw file already in ``folder`` must hold the same draw, else
    :class:`OtherDraw` is raised before that file is rewritten (another ``seed`` or
    ``ranges``)."""
    base = load_ruleset(spec.template.ruleset)
    setup = study_setup(spec.template, ranges)
    fixed = "; ".join(held_fixed(base, ranges, spec.template, setup))
    if play is None:
        def play(drawn_spec, draw):
            return run(drawn_spec, workers=workers, progress=progress)
    out = []
    for d in range(n):
        tables, drawn = draw_ruleset(base, ranges, seed, d)
        fields = draw_setup(setup, seed, d)
        path = os.path.join(folder, f"ruleset_draw_{d:04d}.json")
        setup_path = os.path.join(folder, f"setup_draw_{d:04d}.json")
        setup_text = json.dumps({k: list(v) if isinstance(v, tuple) else v
                                 for k, v in fields.items()})
        _check_file(path, json.dumps(tables), "ruleset", d, folder, resume)
        _check_file(setup_path, setup_text, "setup", d, folder, resume)
        write_ruleset(tables, path)
        write_text(setup_path, setup_text)
        rows = play(dataclasses.replace(spec, config=dataclasses.replace(
            spec.template, ruleset=path, **fields)), d)
        rows = [dict(r, clan=r["agent"]) if r["agent"].startswith("automa:") else r
                for r in rows]
        stats = group_stats(rows, "clan")
        rank = _rank(stats)
        values = {f"value {k}": json.dumps(v) if isinstance(v, (list, dict)) else v
                  for k, v in drawn.items()}
        values.update({f"value {MAP_KEY}" if k == "map" else f"value {CONFIG_PREFIX}{k}":
                       ",".join(v) if k == "map" else json.dumps(v)
                       for k, v in fields.items()})
        draw_rows = [{"draw": d, "clan": s["clan"], "games": s["n"], "wins": s["wins"],
                      "win_rate": s["win_rate"], "ci_low": s["ci_low"], "ci_high": s["ci_high"],
                      "rank": rank[s["clan"]], "clans": len(stats),
                      "ruleset_fingerprint": rows[0]["ruleset_fingerprint"], **values,
                      "held_fixed": fixed}
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
    if rows and rows[0].get("held_fixed"):
        fig.text(0.01, 0.01, textwrap.fill(f"held fixed: {rows[0]['held_fixed']}", 160),
                 fontsize=7, va="bottom")
        fig.tight_layout(rect=(0, 0.08, 1, 1))
    else:
        fig.tight_layout()
    return fig
