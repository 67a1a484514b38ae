"""Plausible ranges of the ruleset's estimates (``estimate_ranges.json``) and the grouping of
``Ruleset.estimates()`` into the units a study varies: one value, or a whole market track."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caledonia_env.data.names import RulesetError

DEFAULT_RANGES = Path(__file__).with_name("estimate_ranges.json")
KINDS = ("int", "track_scale", "spacing", "permutation")


@dataclass(frozen=True)
class Estimate:
    """One unit of variation: ``key`` ``'<table>:<path>'`` (``'market:<good>'`` for a track),
    its ``kind`` (one of :data:`KINDS`, or ``'fixed'`` for a value no study can vary) and
    today's ``value`` (the track's table for ``track_scale``)."""
    key: str
    table: str
    path: str
    kind: str
    value: Any


@dataclass(frozen=True)
class Range:
    """A plausible range: ``lo``..``hi`` (values, factors or spacings by ``kind``), the
    positions a permutation keeps (``fixed``) and the one-line reason (``why``)."""
    kind: str
    lo: float | None
    hi: float | None
    why: str
    fixed: tuple = ()

    def contains(self, est: Estimate) -> bool:
        """Whether today's value of ``est`` lies in the range."""
        if self.kind != est.kind:
            return False
        if self.kind == "int":
            return self.lo <= est.value <= self.hi
        if self.kind == "track_scale":
            return self.lo <= 1.0 <= self.hi
        if self.kind == "spacing":
            return self.lo <= spacing_of(est.value) <= self.hi
        return all(0 <= i < len(est.value) for i in self.fixed)


def spacing_of(marks) -> int | None:
    """The common step of evenly spaced marks that start at the step (3, 6, 9…), else None."""
    if not marks or not all(isinstance(m, int) for m in marks):
        return None
    step = marks[0]
    ok = step > 0 and all(m == step * (i + 1) for i, m in enumerate(marks))
    return step if ok else None


def _kind(table: str, value) -> str:
    if table == "market":
        return "track_scale"
    if isinstance(value, bool):
        return "fixed"
    if isinstance(value, int):
        return "int"
    if isinstance(value, list) and spacing_of(value):
        return "spacing"
    if isinstance(value, list) and sorted(value) == list(range(len(value))):
        return "permutation"
    return "fixed"


def estimate_groups(rs) -> list[Estimate]:
    """Every estimate of ``rs`` (:meth:`Ruleset.estimates`) once, market values grouped per
    good into one ``track_scale`` entry (its value: the good's market table)."""
    out, seen = [], set()
    raw = rs.to_dict()
    for table, path, value in rs.estimates():
        if table == "market":
            good = path.split(".")[0]
            key = f"market:{good}"
            if key not in seen:
                seen.add(key)
                out.append(Estimate(key, table, good, "track_scale", raw["market"][good]))
            continue
        out.append(Estimate(f"{table}:{path}", table, path, _kind(table, value), value))
    return out


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
    out = {}
    for key, e in entries.items():
        kind = e.get("kind") if isinstance(e, dict) else None
        if kind not in KINDS:
            raise RulesetError(f"{path}: range {key!r}: kind {kind!r}; allowed: {', '.join(KINDS)}")
        if not str(e.get("why", "")).strip():
            raise RulesetError(f"{path}: range {key!r}: give a one-line reason in 'why'")
        lo, hi = e.get("lo"), e.get("hi")
        if kind != "permutation":
            num = (int,) if kind in ("int", "spacing") else (int, float)
            if not (isinstance(lo, num) and isinstance(hi, num) and lo <= hi):
                raise RulesetError(f"{path}: range {key!r}: lo {lo!r} and hi {hi!r} must be "
                                   f"{'integers' if num == (int,) else 'numbers'} with lo <= hi")
        out[key] = Range(kind, lo, hi, str(e["why"]), tuple(e.get("fixed", ())))
    return out


def check_ranges(rs, ranges: dict[str, Range]) -> list[str]:
    """Problems (one line each): an estimate of ``rs`` with no range or outside its range, a
    range for a value that is not an estimate. Empty when every estimate is covered."""
    groups = {g.key: g for g in estimate_groups(rs)}
    bad = [f"{k}: no plausible range" for k in groups if k not in ranges]
    bad += kind_mismatches(rs, ranges)
    bad += [f"{k}: today's value {groups[k].value!r} is outside {r.kind} {r.lo}..{r.hi}"
            for k, r in ranges.items()
            if k in groups and r.kind == groups[k].kind and not r.contains(groups[k])]
    bad += [f"{k}: a range for a value that is not an estimate" for k in ranges
            if k not in groups]
    return bad


def kind_mismatches(rs, ranges: dict[str, Range]) -> list[str]:
    """Ranges whose kind does not fit the estimate of ``rs`` they name (one line each)."""
    return [f"{g.key}: the range is of kind {ranges[g.key].kind!r} but the estimate is "
            f"{g.kind!r}" for g in estimate_groups(rs)
            if g.key in ranges and ranges[g.key].kind != g.kind]
