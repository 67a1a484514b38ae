"""Plausible ranges of the ruleset's uncertain values (``estimate_ranges.json``) and the
ruleset values a study varies: every estimate, and every sourced value of limited trust a
range names in its ``covers`` (R-3.1 market tracks and start steps, source PHP). Entries
for the map (``map``: its configuration; ``map:sides``: the counts on the module sides) and
the rule readings (``config:interp_*``) are read here too; the tournament layer draws them
(``caledonia_env.tournament.perturb``)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caledonia_env.data.names import RulesetError
from caledonia_env.map.perturb import COUNTS as SIDE_COUNTS

DEFAULT_RANGES = Path(__file__).with_name("estimate_ranges.json")
#: kinds of a ruleset value's range; 'fixed' (no range kind) marks a value no study can vary
RULESET_KINDS = ("int", "spacing", "permutation", "track_mix", "start_step", "bracket")
#: kinds of the entries that vary the game's setup, not the ruleset's numbers: ``map`` (the
#: configuration of the module sides, R-1.1), ``map:sides`` (the counts on the sides, which a
#: drawn ruleset carries) and ``config:<GameConfig field>`` (the rule readings)
STUDY_KINDS = ("map_sides", "side_counts", "readings")
KINDS = RULESET_KINDS + STUDY_KINDS
MAP_KEY = "map"
SIDES_KEY = "map:sides"
CONFIG_PREFIX = "config:"
#: the one ``config:`` wildcard: its ``p_today`` applies to every ``interp_*`` switch
INTERP_KEY = "config:interp_*"
_MARKET_KINDS = {"track": "track_mix", "start_step_1_2": "start_step",
                 "start_step_3_4": "start_step", "solo_average_steps": "bracket"}


@dataclass(frozen=True)
class Dimension:
    """One ruleset value a study varies: ``key`` ``'<table>:<path>'``, its ``kind`` (one of
    :data:`RULESET_KINDS`, or ``'fixed'``), today's ``value`` and its provenance tag
    ``source`` (``'estimate'`` or the sourced tag a range covers)."""
    key: str
    table: str
    path: str
    kind: str
    value: Any
    source: str = "estimate"


@dataclass(frozen=True)
class Range:
    """A plausible range. ``lo``..``hi``: values (int), spacings, start steps (start_step),
    the mix weight between today's track and ``to`` (track_mix: 0 = today, 1 = ``to``) or
    the steps the solo bracket spans above the 1-2 start (bracket); None for side_counts,
    whose ``counts`` hold ``(count, lo, hi)`` for each count of :data:`SIDE_COUNTS` it
    moves (signed changes; ``terrain``: hexes changed). ``covers``: the
    provenance tag of the value ('estimate' or a ``sourced:`` tag of limited trust).
    ``p_today``: the chance a draw keeps today's value (None: uniform over the range).
    ``fixed``: the positions a permutation keeps; ``contains``: a run of prices every drawn
    track holds (None = any price); ``price``: the price a start step must show;
    ``readings``: the readings of a switch whose type does not list them."""
    kind: str
    lo: float | None
    hi: float | None
    why: str
    fixed: tuple = ()
    covers: str = "estimate"
    p_today: float | None = None
    to: tuple = ()
    contains: tuple = ()
    price: int | None = None
    readings: tuple = ()
    counts: tuple = ()

    def count_bounds(self) -> dict:
        """``{count: (lo, hi)}`` of a side_counts range."""
        return {k: (lo, hi) for k, lo, hi in self.counts}

    def contains_value(self, dim: Dimension, market: dict | None = None) -> bool:
        """Whether today's value of ``dim`` lies in the range (``market``: the good's table,
        for the market kinds)."""
        if self.kind != dim.kind:
            return False
        v = dim.value
        if self.kind == "int":
            return self.lo <= v <= self.hi
        if self.kind == "spacing":
            return self.lo <= spacing_of(v) <= self.hi
        if self.kind == "permutation":
            return all(0 <= i < len(v) for i in self.fixed)
        if self.kind == "track_mix":
            return self.lo == 0 and holds_run(v, self.contains) and holds_run(self.to, self.contains)
        if self.kind == "start_step":
            return (self.lo <= v <= self.hi and v < len(market["track"])
                    and (self.price is None or market["track"][v] == self.price))
        return v[0] == market["start_step_1_2"] and self.lo <= v[1] - v[0] <= self.hi


def spacing_of(marks) -> int | None:
    """The common step of evenly spaced marks that start at the step (3, 6, 9…), else None."""
    if not marks or not all(isinstance(m, int) for m in marks):
        return None
    step = marks[0]
    ok = step > 0 and all(m == step * (i + 1) for i, m in enumerate(marks))
    return step if ok else None


def holds_run(track, run) -> bool:
    """Whether ``track`` holds ``run`` on consecutive steps (None in ``run``: any price)."""
    run = list(run)
    return not run or any(all(r is None or track[i + j] == r for j, r in enumerate(run))
                          for i in range(len(track) - len(run) + 1))


def _kind(table: str, path: str, value) -> str:
    if table == "market":
        return _MARKET_KINDS.get(path.split(".")[-1], "fixed")
    if isinstance(value, bool):
        return "fixed"
    if isinstance(value, int):
        return "int"
    if isinstance(value, list) and spacing_of(value):
        return "spacing"
    if isinstance(value, list) and sorted(value) == list(range(len(value))):
        return "permutation"
    return "fixed"


def ruleset_dimensions(rs, ranges: dict[str, Range] | None = None) -> list[Dimension]:
    """Every estimate of ``rs`` (:meth:`Ruleset.estimates`), and every other value a range
    of ``ranges`` names whose provenance is the range's ``covers``, in the ruleset's order
    (a market good's track before its start steps and its solo bracket)."""
    ranges = ranges or {}
    out = []
    for table, path, value, source in rs.provenance():
        key = f"{table}:{path}"
        if source == "estimate" or (key in ranges and ranges[key].covers == source):
            out.append(Dimension(key, table, path, _kind(table, path, value), value, source))
    return out


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _entry(path, key: str, e) -> Range:
    """One entry of the ranges file as a :class:`Range`; RulesetError naming the key."""
    def bad(msg):
        return RulesetError(f"{path}: range {key!r}: {msg}")

    kind = e.get("kind") if isinstance(e, dict) else None
    if kind not in KINDS:
        raise bad(f"kind {kind!r}; allowed: {', '.join(KINDS)}")
    if not str(e.get("why", "")).strip():
        raise bad("give a one-line reason in 'why'")
    lo, hi = e.get("lo"), e.get("hi")
    if kind in ("int", "spacing", "start_step", "bracket", "track_mix"):
        num = _number if kind == "track_mix" else _is_int
        if not (num(lo) and num(hi) and lo <= hi):
            raise bad(f"lo {lo!r} and hi {hi!r} must be "
                      f"{'numbers' if kind == 'track_mix' else 'integers'} with lo <= hi")
    covers = e.get("covers", "estimate")
    if covers != "estimate" and not str(covers).startswith("sourced:"):
        raise bad(f"covers {covers!r}: a range covers an 'estimate' or a 'sourced:<id>' "
                  f"value of limited trust, never a rulebook value")
    p = e.get("p_today")
    if p is not None and not (_number(p) and 0 <= p <= 1):
        raise bad(f"p_today {p!r} must be a probability 0..1")
    to = e.get("to", [])
    if kind == "track_mix" and not (isinstance(to, list) and to and all(map(_is_int, to))
                                    and to == sorted(to)):
        raise bad(f"'to' {to!r} must be the other track: step prices, cheapest first")
    if kind == "track_mix" and not 0 <= lo <= hi <= 1:
        raise bad(f"lo {lo} and hi {hi} are mix weights within 0..1")
    counts = e.get("counts", {})
    if kind == "side_counts":
        if not isinstance(counts, dict) or not counts or set(counts) - set(SIDE_COUNTS):
            raise bad(f"'counts' {counts!r} must map some of {', '.join(SIDE_COUNTS)} to "
                      f"[lo, hi]")
        for k, b in counts.items():
            if not (isinstance(b, list) and len(b) == 2 and all(map(_is_int, b))
                    and b[0] <= b[1]):
                raise bad(f"counts.{k} {b!r} must be [lo, hi], integers with lo <= hi")
            if k == "terrain" and b[0] < 0:
                raise bad(f"counts.terrain {b!r} is a number of hexes, >= 0")
    elif "counts" in e:
        raise bad("'counts' belongs to a side_counts range")
    return Range(kind, lo, hi, str(e["why"]), tuple(e.get("fixed", ())), covers, p,
                 tuple(to), tuple(e.get("contains", ())), e.get("price"),
                 tuple(e.get("readings", ())),
                 tuple((k, b[0], b[1]) for k, b in counts.items()) if kind == "side_counts"
                 else ())


def load_ranges(path: str | os.PathLike | None = None) -> dict[str, Range]:
    """The ranges file (default: the bundled ``estimate_ranges.json``) as ``{key: Range}``;
    :class:`RulesetError` naming the file and key for a bad entry."""
    path = Path(path) if path is not None else DEFAULT_RANGES
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except (OSError, ValueError) as e:
        raise RulesetError(f"{path}: cannot read the ranges file: {e}") from None
    entries = raw.get("ranges") if isinstance(raw, dict) else None
    if not isinstance(entries, dict):
        raise RulesetError(f"{path}: expected an object with a 'ranges' object of "
                           f"'<table>:<path>' keys")
    out = {key: _entry(path, key, e) for key, e in entries.items()}
    for key, r in out.items():
        want = {MAP_KEY: ("map_sides",), SIDES_KEY: ("side_counts",)}.get(
            key, ("readings",) if key.startswith(CONFIG_PREFIX) else RULESET_KINDS)
        if r.kind not in want:
            raise RulesetError(f"{path}: range {key!r}: kind {r.kind!r} does not fit the key "
                               f"('map': map_sides, 'map:sides': side_counts, "
                               f"'config:<field>': readings, else a ruleset value)")
    return out


def ruleset_ranges(ranges: dict[str, Range]) -> dict[str, Range]:
    """The entries of ``ranges`` that name ruleset values (not the map, its sides' counts or
    the readings)."""
    return {k: r for k, r in ranges.items() if r.kind in RULESET_KINDS}


def check_ranges(rs, ranges: dict[str, Range]) -> list[str]:
    """Problems (one line each): an estimate of ``rs`` with no range or outside its range, a
    range for a value that is neither an estimate nor of the source it ``covers``, a kind
    that does not fit. Empty when every estimate is covered."""
    ranges = ruleset_ranges(ranges)
    dims = {d.key: d for d in ruleset_dimensions(rs, ranges)}
    market = rs.to_dict()["market"]
    bad = [f"{k}: no plausible range" for k, d in dims.items()
           if d.source == "estimate" and k not in ranges]
    bad += kind_mismatches(rs, ranges)
    bad += [f"{k}: today's value {dims[k].value!r} is outside {r.kind} {r.lo}..{r.hi}"
            for k, r in ranges.items()
            if k in dims and r.kind == dims[k].kind and not r.contains_value(
                dims[k], market.get(dims[k].path.split(".")[0]))]
    sources = {f"{t}:{p}": s for t, p, _, s in rs.provenance()}
    bad += [f"{k}: a range for a value that is not an estimate"
            + (f" (it is {sources[k]}; a range for it says so in 'covers')" if k in sources
               else "") for k, r in ranges.items() if k not in dims]
    return bad


def kind_mismatches(rs, ranges: dict[str, Range]) -> list[str]:
    """Ranges whose kind does not fit the ruleset value of ``rs`` they name (one line each)."""
    ranges = ruleset_ranges(ranges)
    return [f"{d.key}: the range is of kind {ranges[d.key].kind!r} but the value is "
            f"{d.kind!r}" for d in ruleset_dimensions(rs, ranges)
            if d.key in ranges and ranges[d.key].kind != d.kind]
