"""Perturbed module sides: a side with other counts of lochs, deltas, £1 hexes and terrains.

The bundled sides are the project's own layouts (the printed map is not in the data), so a
robustness study varies them (``caledonia balance --perturb``, range ``map:sides``): each
count moves by a drawn amount and the result is still a valid side (:func:`parse_side`).

:func:`perturb_side` takes a side in its JSON form (the dict of a side file) and a
``numpy.random.Generator`` and applies, in this order:

* ``loch`` (signed): a land hex becomes a loch, or a loch becomes land (pasture, forest or
  mountain, £2-£4). Never a port's hex; a new loch is a land hex without a river, not a
  delta, not £1, on no river's mouth and whose loss keeps the side's land in one piece; a
  loch that turns to land leaves every delta beside another loch.
* ``delta`` (signed): a river gains a mouth (a new river edge between two land hexes that
  share a loch: both ends become deltas, R-8.7) or loses one (the mouth's river edge is
  removed and its ends stop being deltas unless another mouth needs them, or one end stays
  a delta where it still lies on a river). A step changes one delta or two; a step that
  would overshoot is not taken.
* ``cost_1`` (signed): a land hex of £2 or more becomes £1, or a £1 hex becomes £2.
* ``terrain`` (a number of hexes): single-terrain land hexes take another of pasture,
  forest and mountain.

Each move is taken only while the side keeps every rule :func:`parse_side` checks; where no
hex allows a move the count stops short. :func:`perturb_side` returns the new side and the
changes it made (``{"loch": +1, "delta": -2, "cost_1": 0, "terrain": 2}``), which
:func:`side_counts` of the two sides confirm.
"""
from __future__ import annotations

import copy

import numpy as np

from caledonia_env.map.format import (LAND_TERRAINS, MIN_COST, common_neighbors, odd_r_neighbors,
                                      parse_side)

#: the counts a perturbation changes: signed changes, and ``terrain`` (hexes changed, >= 0)
COUNTS = ("loch", "delta", "cost_1", "terrain")
SIGNED = ("loch", "delta", "cost_1")
_LAND = tuple(LAND_TERRAINS)                     # pasture, forest, mountain
_NEW_LAND_P = (0.6, 0.2, 0.2)                    # a loch turned land: mostly pasture, as the sides
_NEW_LAND_COST = (2, 4)                          # ... and never £1 (cost_1 is its own count)


def _is_loch(h: dict) -> bool:
    return h["terrain"] == "loch" or h["terrain"] == ["loch"]


def _terrains(h: dict) -> list:
    t = h["terrain"]
    return [t] if isinstance(t, str) else list(t)


def side_counts(side: dict) -> dict:
    """``{"loch": n, "delta": n, "cost_1": n, "land": n}`` of a side in its JSON form."""
    hexes = side["hexes"]
    return {"loch": sum(_is_loch(h) for h in hexes),
            "delta": sum(bool(h.get("delta")) for h in hexes),
            "cost_1": sum(not _is_loch(h) and h.get("cost") == 1 for h in hexes),
            "land": sum(not _is_loch(h) for h in hexes)}


def terrain_changes(before: dict, after: dict) -> int:
    """Hexes land in both sides whose terrain differs."""
    old = {h["id"]: h for h in before["hexes"]}
    return sum(1 for h in after["hexes"] if h["id"] in old and not _is_loch(h)
               and not _is_loch(old[h["id"]]) and set(_terrains(h)) != set(_terrains(old[h["id"]])))


class _Work:
    """A side being perturbed: its hexes by id and position, its rivers and port hexes."""

    def __init__(self, side: dict):
        self.side = side
        self.hexes = {h["id"]: h for h in side["hexes"]}
        self.at = {(h["col"], h["row"]): h["id"] for h in side["hexes"]}
        self.rivers = {tuple(sorted(p)) for p in side.get("rivers", [])}
        self.ports = {x for spec in side["ports"].values()
                      for k, ids in spec.items() if k != "at" for x in ids}

    # ----------------------------------------------------------------- geometry
    def pos(self, hid):
        h = self.hexes[hid]
        return h["col"], h["row"]

    def around(self, hid) -> list[int]:
        return [self.at[p] for p in odd_r_neighbors(*self.pos(hid)) if p in self.at]

    def loch(self, hid) -> bool:
        return _is_loch(self.hexes[hid])

    def river_ids(self) -> set:
        return {x for e in self.rivers for x in e}

    def mouth_lochs(self, edge) -> list[int]:
        """The lochs a river edge flows into (its two common neighbours that are lochs)."""
        a, b = edge
        return [self.at[p] for p in common_neighbors(self.pos(a), self.pos(b))
                if p in self.at and self.loch(self.at[p])]

    def forced(self) -> set:
        """Hexes that must be deltas: both ends of every river edge that flows into a loch."""
        return {x for e in self.rivers if self.mouth_lochs(e) for x in e}

    def land_pieces(self) -> int:
        land = {i for i in self.hexes if not self.loch(i)}
        seen, pieces = set(), 0
        for start in land:
            if start in seen:
                continue
            pieces += 1
            stack = [start]
            seen.add(start)
            while stack:
                for j in self.around(stack.pop()):
                    if j in land and j not in seen:
                        seen.add(j)
                        stack.append(j)
        return pieces

    def deltas_touch_lochs(self) -> bool:
        return all(any(self.loch(j) for j in self.around(i))
                   for i, h in self.hexes.items() if h.get("delta"))

    # ----------------------------------------------------------------- moves
    def to_loch_candidates(self) -> list[int]:
        on_river = self.river_ids()
        mouths = {self.at[p] for a, b in self.rivers
                  for p in common_neighbors(self.pos(a), self.pos(b)) if p in self.at}
        pieces = self.land_pieces()
        out = []
        for i, h in sorted(self.hexes.items()):
            if (self.loch(i) or h.get("delta") or h.get("cost") == 1 or i in on_river
                    or i in mouths or i in self.ports):
                continue
            saved = h["terrain"]
            h["terrain"] = "loch"
            ok = self.land_pieces() <= pieces
            h["terrain"] = saved
            if ok:
                out.append(i)
        return out

    def to_land_candidates(self) -> list[int]:
        lochs = [i for i in self.hexes if self.loch(i)]
        if len(lochs) <= 1:
            return []
        out = []
        for i in sorted(lochs):
            if i in self.ports:
                continue
            h = self.hexes[i]
            h["terrain"] = "pasture"
            ok = self.deltas_touch_lochs()
            h["terrain"] = "loch"
            if ok:
                out.append(i)
        return out

    def make_loch(self, i):
        h = self.hexes[i]
        h["terrain"] = "loch"
        h.pop("cost", None)
        h["delta"] = False

    def make_land(self, i, rng):
        h = self.hexes[i]
        h["terrain"] = [_LAND[int(rng.choice(len(_LAND), p=_NEW_LAND_P))]]
        h["cost"] = int(rng.integers(_NEW_LAND_COST[0], _NEW_LAND_COST[1] + 1))
        h["delta"] = False

    def new_mouths(self) -> list[tuple[tuple, int]]:
        """(edge, deltas gained) of every land edge, not a river yet, that flows into a loch."""
        out = []
        for a in sorted(self.hexes):
            if self.loch(a):
                continue
            for b in self.around(a):
                if b <= a or self.loch(b) or (a, b) in self.rivers:
                    continue
                if self.mouth_lochs((a, b)):
                    gain = sum(not self.hexes[x].get("delta") for x in (a, b))
                    if gain:
                        out.append(((a, b), gain))
        return out

    def unmark_candidates(self) -> list[int]:
        """Deltas no river mouth needs (they may stop being deltas on their own)."""
        forced = self.forced()
        return [i for i, h in sorted(self.hexes.items()) if h.get("delta") and i not in forced]

    def markable(self) -> list[int]:
        """Land hexes on a river beside a loch that are not deltas yet."""
        on_river = self.river_ids()
        return [i for i, h in sorted(self.hexes.items())
                if not self.loch(i) and not h.get("delta") and i in on_river
                and any(self.loch(j) for j in self.around(i))]

    def removals(self) -> list[tuple[tuple, list]]:
        """(mouth edge, the deltas that stop being deltas when it goes) of each river mouth:
        an end no other mouth needs stops, or stays a delta where another river edge still
        touches it (it still lies on a river beside a loch), so one edge may offer a loss of
        one or of two."""
        out = []
        for e in sorted(self.rivers):
            if not self.mouth_lochs(e):
                continue
            rest = self.rivers - {e}
            still = {x for f in rest if self.mouth_lochs(f) for x in f}
            on_river = {x for f in rest for x in f}
            lost = [x for x in e if x not in still and self.hexes[x].get("delta")]
            if lost:
                out.append((e, lost))
            for keep in lost:
                if keep in on_river and len(lost) == 2:
                    out.append((e, [x for x in lost if x != keep]))
        return out

    def result(self) -> dict:
        side = dict(self.side)
        side["hexes"] = [self.hexes[h["id"]] for h in self.side["hexes"]]
        side["rivers"] = [list(e) for e in sorted(self.rivers)]
        return side


def _pick(rng, items):
    return items[int(rng.integers(len(items)))]


def _lochs(w: _Work, target: int, rng) -> int:
    done = 0
    while done != target:
        if target > 0:
            cands = w.to_loch_candidates()
            if not cands:
                break
            w.make_loch(_pick(rng, cands))
            done += 1
        else:
            cands = w.to_land_candidates()
            if not cands:
                break
            w.make_land(_pick(rng, cands), rng)
            done -= 1
    return done


def _deltas(w: _Work, target: int, rng) -> int:
    done = 0
    while done != target:
        left = abs(target - done)
        if target > done:
            singles = [((None, i), 1) for i in w.markable()]
            ops = singles + [(("edge", e), g) for e, g in w.new_mouths() if g <= left]
            if not ops:
                break
            (how, x), gain = _pick(rng, ops)
            if how == "edge":
                w.rivers.add(x)
                for i in x:
                    w.hexes[i]["delta"] = True
            else:
                w.hexes[x]["delta"] = True
            done += gain
        else:
            ops = [((None, [i]), None) for i in w.unmark_candidates()]
            ops += [((e, lost), None) for e, lost in w.removals() if len(lost) <= left]
            if not ops:
                break
            (edge, lost), _ = _pick(rng, ops)
            if edge is not None:
                w.rivers.discard(edge)
            for i in lost:
                w.hexes[i]["delta"] = False
            done -= len(lost)
    return done


def _cost_1(w: _Work, target: int, rng) -> int:
    done = 0
    while done != target:
        land = [i for i, h in sorted(w.hexes.items()) if not w.loch(i)]
        if target > 0:
            cands = [i for i in land if w.hexes[i]["cost"] > MIN_COST]
        else:
            cands = [i for i in land if w.hexes[i]["cost"] == MIN_COST]
        if not cands:
            break
        w.hexes[_pick(rng, cands)]["cost"] = MIN_COST if target > 0 else MIN_COST + 1
        done += 1 if target > 0 else -1
    return done


def _terrain(w: _Work, before: dict, k: int, rng) -> int:
    old = {h["id"]: h for h in before["hexes"]}
    cands = [i for i, h in sorted(w.hexes.items())
             if not w.loch(i) and not _is_loch(old[i]) and len(_terrains(h)) == 1]
    chosen = rng.permutation(len(cands))[:k] if cands else []
    for j in chosen:
        h = w.hexes[cands[int(j)]]
        others = [t for t in _LAND if t != _terrains(h)[0]]
        h["terrain"] = [others[int(rng.integers(len(others)))]]
    return len(chosen)


def draw_changes(bounds: dict, rng: np.random.Generator) -> dict:
    """Target changes drawn uniformly (inclusive) from ``bounds`` (count -> (lo, hi))."""
    return {k: int(rng.integers(int(bounds[k][0]), int(bounds[k][1]) + 1)) if k in bounds else 0
            for k in COUNTS}


def perturb_side(side: dict, rng: np.random.Generator, bounds: dict | None = None,
                 changes: dict | None = None) -> tuple[dict, dict]:
    """``(new side, changes made)``: ``side`` (a side file's dict, left unchanged) with its
    counts moved. ``changes`` gives the targets (``loch``, ``delta``, ``cost_1`` signed,
    ``terrain`` >= 0); else they are drawn from ``bounds`` (count -> (lo, hi)), a count
    without bounds unchanged. A count stops short where no hex allows another move; the
    changes made are returned. The new side passes :func:`parse_side`."""
    if changes is None:
        changes = draw_changes(bounds or {}, rng)
    unknown = set(changes) - set(COUNTS)
    if unknown:
        raise ValueError(f"unknown side count(s) {sorted(unknown)}; allowed: {list(COUNTS)}")
    if changes.get("terrain", 0) < 0:
        raise ValueError(f"terrain is a number of hexes, >= 0, got {changes['terrain']}")
    before = copy.deepcopy(side)
    w = _Work(copy.deepcopy(side))
    done = {"loch": _lochs(w, changes.get("loch", 0), rng),
            "delta": _deltas(w, changes.get("delta", 0), rng),
            "cost_1": _cost_1(w, changes.get("cost_1", 0), rng)}
    done["terrain"] = _terrain(w, before, changes.get("terrain", 0), rng)
    out = w.result()
    name = side.get("side", "?")
    what = ", ".join(f"{k} {v:+d}" if k in SIGNED else f"{k} {v}" for k, v in done.items())
    out["notes"] = f"{side.get('notes', '')} Perturbed from {name}: {what}.".strip()
    parse_side(out, source=f"perturbed side {name}", expected_name=name)
    return out, done
