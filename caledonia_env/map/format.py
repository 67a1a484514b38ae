"""Module side files: load and validate one side of a map module (R-1.1).

A side file is JSON (format documented in ``docs/map.md``)::

    {"side": "A1",
     "grid": {"cols": 6, "rows": 6},
     "hexes": [{"id": 0, "col": 1, "row": 0, "terrain": ["forest"], "cost": 3,
                "mist": true, "delta": false}, ...,
               {"id": 4, "col": 4, "row": 0, "terrain": "loch", "mist": true}],
     "rivers": [[7, 8], [8, 14]],
     "ports": {"NW": {"1-2": [3, 4], "3-4": [0, 6]}}}

Coordinates are local "odd-r" offset coordinates (pointy-top hexes, odd rows
shifted half a hex to the right); the module's block is ``cols`` x ``rows``
with ``rows`` even so that translating a block by whole blocks keeps row
parity (adjacency stays consistent across the seams). Every error is a
:class:`MapError` naming the file and, where there is one, the hex
(``A1-07 (col 1, row 1)``).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from caledonia_env.data.names import MODULES

MAPS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "data", "maps")

MODULE_SIDES = tuple(f"{m}{s}" for m in MODULES for s in (1, 2))
#: outer corner of each module (A top-left, B top-right, C bottom-right, D bottom-left)
MODULE_CORNER = {"A": "NW", "B": "NE", "C": "SE", "D": "SW"}
PORT_COUNTS = ("1-2", "3-4")

TERRAIN_PASTURE = 1
TERRAIN_FOREST = 2
TERRAIN_MOUNTAIN = 4
TERRAIN_LOCH = 8
TERRAIN_PORT = 16
LAND_TERRAINS = {"pasture": TERRAIN_PASTURE, "forest": TERRAIN_FOREST,
                 "mountain": TERRAIN_MOUNTAIN}
MIN_COST, MAX_COST = 1, 6

HEX_KEYS = {"id", "col", "row", "terrain", "cost", "mist", "delta"}
TOP_KEYS = {"side", "grid", "hexes", "rivers", "ports", "notes", "format"}
_SIDE_RE = re.compile(r"^[A-D][A-Za-z0-9_]*$")


class MapError(ValueError):
    """A malformed module side file or an invalid map configuration."""


def odd_r_neighbors(col: int, row: int) -> list[tuple[int, int]]:
    """The six grid positions around (col, row) in odd-r offset coordinates.

    Order: E, NE, NW, W, SW, SE (row numbers grow downwards).
    """
    if row & 1:
        return [(col + 1, row), (col + 1, row - 1), (col, row - 1),
                (col - 1, row), (col, row + 1), (col + 1, row + 1)]
    return [(col + 1, row), (col, row - 1), (col - 1, row - 1),
            (col - 1, row), (col - 1, row + 1), (col, row + 1)]


def common_neighbors(a: tuple[int, int], b: tuple[int, int]) -> list[tuple[int, int]]:
    """The two grid positions touching both ends of the edge a|b (a, b adjacent)."""
    nb = set(odd_r_neighbors(*b))
    return [p for p in odd_r_neighbors(*a) if p in nb]


@dataclass(frozen=True)
class HexSpec:
    id: int
    col: int
    row: int
    terrain: int          # bitmask of TERRAIN_* (TERRAIN_LOCH alone for a loch)
    cost: int             # 0 for a loch
    mist: bool
    delta: bool

    @property
    def is_loch(self) -> bool:
        return self.terrain == TERRAIN_LOCH


@dataclass(frozen=True)
class Side:
    """One validated module side (local coordinates and local hex ids)."""
    name: str
    source: str
    cols: int
    rows: int
    hexes: tuple[HexSpec, ...]                        # sorted by id
    rivers: tuple[tuple[int, int], ...]               # local id pairs, (small, large)
    ports: dict = field(default_factory=dict)         # {"1-2": (ids), "3-4": (ids)}
    port_at: dict = field(default_factory=dict)       # {"1-2": (col, row)} optional

    @property
    def module(self) -> str:
        return self.name[0]

    @property
    def corner(self) -> str:
        return MODULE_CORNER[self.module]

    def label(self, hex_id: int) -> str:
        return f"{self.name}-{hex_id:02d}"

    def by_id(self) -> dict:
        return {h.id: h for h in self.hexes}


def seam_positions(module: str, cols: int, rows: int) -> set[tuple[int, int]]:
    """Local positions on the seams of ``module`` with its neighbours (must all be hexes)."""
    right = module in "AD"      # A and D have a module to their right
    below = module in "AB"      # A and B have a module below
    out = set()
    for r in range(rows):
        out.add((cols - 1, r) if right else (0, r))
    for c in range(cols):
        out.add((c, rows - 1) if below else (c, 0))
    return out


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def parse_side(data, source: str = "<dict>", expected_name: str | None = None) -> Side:
    """Validate a side given as a JSON-like dict; ``source`` names it in messages."""
    def fail(msg):
        raise MapError(f"{source}: {msg}")

    if not isinstance(data, dict):
        fail("a side file must hold a JSON object")
    unknown = set(data) - TOP_KEYS
    if unknown:
        fail(f"unknown top-level field(s) {sorted(unknown)}; allowed: {sorted(TOP_KEYS)}")
    for key in ("side", "grid", "hexes", "ports"):
        if key not in data:
            fail(f"missing top-level field {key!r}")
    name = data["side"]
    if not isinstance(name, str) or not _SIDE_RE.match(name):
        fail(f"'side' must be a side name starting with its module letter A-D (e.g. 'A1'), "
             f"got {name!r}")
    if expected_name is not None and name != expected_name:
        fail(f"'side' is {name!r} but the file is for side {expected_name!r}")
    module = name[0]

    grid = data["grid"]
    if not isinstance(grid, dict) or not _is_int(grid.get("cols")) or not _is_int(grid.get("rows")):
        fail("'grid' must be {\"cols\": int, \"rows\": int}")
    cols, rows = grid["cols"], grid["rows"]
    if set(grid) - {"cols", "rows", "coords"}:
        fail(f"unknown field(s) in 'grid': {sorted(set(grid) - {'cols', 'rows', 'coords'})}")
    if grid.get("coords", "odd-r") != "odd-r":
        fail("only 'odd-r' offset coordinates are supported in 'grid.coords'")
    if cols < 1 or rows < 2:
        fail(f"grid {cols}x{rows} is too small")
    if rows % 2:
        fail(f"grid rows must be even so that module translation keeps row parity, got {rows}")

    raw = data["hexes"]
    if not isinstance(raw, list) or not raw:
        fail("'hexes' must be a non-empty list")

    hexes: dict[int, HexSpec] = {}
    at: dict[tuple[int, int], int] = {}
    for i, h in enumerate(raw):
        where = f"hexes[{i}]"
        if not isinstance(h, dict):
            fail(f"{where} must be an object")
        hid = h.get("id")
        if "id" not in h:
            fail(f"{where}: missing field 'id'")
        if not _is_int(hid) or hid < 0:
            fail(f"{where}: 'id' must be a non-negative integer, got {hid!r}")
        label = f"{name}-{hid:02d}"
        pos = f"({h.get('col')!r}, {h.get('row')!r})"

        def hfail(msg, label=label, h=h):
            raise MapError(f"{source}: hex {label} (col {h.get('col')!r}, row {h.get('row')!r}): "
                           f"{msg}")

        if hid in hexes:
            hfail(f"duplicate hex id {hid}")
        unknown = set(h) - HEX_KEYS
        if unknown:
            hfail(f"unknown field(s) {sorted(unknown)}; allowed: {sorted(HEX_KEYS)}")
        for key in ("col", "row", "terrain"):
            if key not in h:
                hfail(f"missing field {key!r}")
        col, row = h["col"], h["row"]
        if not _is_int(col) or not _is_int(row):
            hfail("'col' and 'row' must be integers")
        if not (0 <= col < cols and 0 <= row < rows):
            hfail(f"position {pos} is outside the {cols}x{rows} grid")
        if (col, row) in at:
            hfail(f"position {pos} already holds hex {name}-{at[(col, row)]:02d}")
        terr = h["terrain"]
        if terr == "loch" or terr == ["loch"]:
            bits = TERRAIN_LOCH
        else:
            if isinstance(terr, str):
                terr = [terr]
            if not isinstance(terr, list) or not terr:
                hfail(f"'terrain' must be \"loch\" or a non-empty list of {sorted(LAND_TERRAINS)}, "
                      f"got {h['terrain']!r}")
            bits = 0
            for t in terr:
                if t == "loch":
                    hfail("a loch cannot be combined with land terrain")
                if t not in LAND_TERRAINS:
                    hfail(f"unknown terrain {t!r}; allowed: {sorted(LAND_TERRAINS)} or \"loch\"")
                if bits & LAND_TERRAINS[t]:
                    hfail(f"terrain {t!r} listed twice")
                bits |= LAND_TERRAINS[t]
        if bits == TERRAIN_LOCH:
            cost = h.get("cost", 0)
            if cost not in (0, None):
                hfail(f"a loch has no land cost, got cost {cost!r}")
            cost = 0
        else:
            if "cost" not in h:
                hfail("missing field 'cost' (land hexes cost £1-£6)")
            cost = h["cost"]
            if not _is_int(cost) or not (MIN_COST <= cost <= MAX_COST):
                hfail(f"land cost must be an integer {MIN_COST}..{MAX_COST}, got {cost!r}")
        flags = {}
        for key in ("mist", "delta"):
            v = h.get(key, False)
            if not isinstance(v, bool):
                hfail(f"{key!r} must be true or false, got {v!r}")
            flags[key] = v
        if flags["delta"] and bits == TERRAIN_LOCH:
            hfail("a loch cannot be a river delta (deltas are land hexes)")
        hexes[hid] = HexSpec(hid, col, row, bits, cost, flags["mist"], flags["delta"])
        at[(col, row)] = hid

    def hlabel(hid):
        s = hexes[hid]
        return f"hex {name}-{hid:02d} (col {s.col}, row {s.row})"

    # seams: every position touching another module must be a hex
    missing = sorted(seam_positions(module, cols, rows) - set(at), key=lambda p: (p[1], p[0]))
    if missing:
        fail(f"seam position(s) (col, row) {missing} have no hex; module {module}'s seam "
             f"row/column must be complete so that the assembled map has no holes")

    # rivers
    rivers_raw = data.get("rivers", [])
    if not isinstance(rivers_raw, list):
        fail("'rivers' must be a list of [id, id] pairs")
    rivers: set[tuple[int, int]] = set()
    river_hexes: dict[int, list[tuple[int, int]]] = {}
    for k, pair in enumerate(rivers_raw):
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(_is_int(x) for x in pair)):
            fail(f"rivers[{k}] must be a pair of hex ids, got {pair!r}")
        a, b = pair
        for x in (a, b):
            if x not in hexes:
                fail(f"rivers[{k}] {pair}: no hex with id {x}")
        if a == b:
            fail(f"rivers[{k}]: {hlabel(a)} paired with itself")
        ha, hb = hexes[a], hexes[b]
        if (hb.col, hb.row) not in odd_r_neighbors(ha.col, ha.row):
            fail(f"rivers[{k}]: river between non-adjacent hexes: {hlabel(a)} and {hlabel(b)}")
        for x in (a, b):
            if hexes[x].is_loch:
                fail(f"rivers[{k}]: {hlabel(x)} is a loch; rivers run between two land hexes")
        key = (min(a, b), max(a, b))
        if key in rivers:
            fail(f"rivers[{k}]: river between {hlabel(a)} and {hlabel(b)} listed twice")
        rivers.add(key)
        for x in (a, b):
            river_hexes.setdefault(x, []).append(key)

    # deltas: every delta touches a river and a loch; every river mouth has its deltas marked
    def touches_loch(s):
        return any(p in at and hexes[at[p]].is_loch for p in odd_r_neighbors(s.col, s.row))

    for s in hexes.values():
        if s.delta:
            if s.id not in river_hexes:
                fail(f"{hlabel(s.id)}: delta hex has no river edge")
            if not touches_loch(s):
                fail(f"{hlabel(s.id)}: delta hex is not adjacent to a loch hex")
    for a, b in sorted(rivers):
        ha, hb = hexes[a], hexes[b]
        for p in common_neighbors((ha.col, ha.row), (hb.col, hb.row)):
            if p in at and hexes[at[p]].is_loch:
                for x in (a, b):
                    if not hexes[x].delta:
                        fail(f"{hlabel(x)}: the river {name}-{a:02d}|{name}-{b:02d} flows into "
                             f"loch {name}-{at[p]:02d}, so this hex must be marked "
                             f"\"delta\": true")

    # ports
    ports_raw = data["ports"]
    corner = MODULE_CORNER[module]
    if not isinstance(ports_raw, dict) or set(ports_raw) != {corner}:
        fail(f"'ports' must be {{\"{corner}\": {{\"1-2\": [hex ids], \"3-4\": [hex ids]}}}} "
             f"(module {module}'s outer corner is {corner}), got keys "
             f"{sorted(ports_raw) if isinstance(ports_raw, dict) else ports_raw!r}")
    spec = ports_raw[corner]
    if not isinstance(spec, dict) or not set(PORT_COUNTS) <= set(spec) \
            or set(spec) - set(PORT_COUNTS) - {"at"}:
        fail(f"ports.{corner} must have exactly the keys \"1-2\" and \"3-4\" (and optional "
             f"\"at\"), got {sorted(spec) if isinstance(spec, dict) else spec!r}")
    ports, port_at = {}, {}
    for pc in PORT_COUNTS:
        ids = spec[pc]
        if not isinstance(ids, list) or not ids or not all(_is_int(x) for x in ids):
            fail(f"ports.{corner}.{pc} must be a non-empty list of hex ids, got {ids!r}")
        if len(set(ids)) != len(ids) or len(ids) > 6:
            fail(f"ports.{corner}.{pc}: hex ids must be distinct and at most 6, got {ids}")
        for x in ids:
            if x not in hexes:
                fail(f"ports.{corner}.{pc}: no hex with id {x}")
        if pc == "1-2" and all(hexes[x].mist and not hexes[x].is_loch for x in ids):
            fail(f"ports.{corner}.1-2: every adjacent hex is misted land, so the port could "
                 f"never be reached with 1-2 players; list at least one unmisted hex or a loch")
        ports[pc] = tuple(ids)
    if "at" in spec:
        at_spec = spec["at"]
        if not isinstance(at_spec, dict) or set(at_spec) - set(PORT_COUNTS):
            fail(f"ports.{corner}.at must map \"1-2\"/\"3-4\" to [col, row]")
        for pc, xy in at_spec.items():
            if (not isinstance(xy, list) or len(xy) != 2
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                               for v in xy)):
                fail(f"ports.{corner}.at.{pc} must be [col, row] numbers, got {xy!r}")
            port_at[pc] = (float(xy[0]), float(xy[1]))

    return Side(name=name, source=source, cols=cols, rows=rows,
                hexes=tuple(hexes[k] for k in sorted(hexes)),
                rivers=tuple(sorted(rivers)), ports=ports, port_at=port_at)


def side_path(name_or_path: str, maps_dir: str | None = None) -> str:
    """Path of a side: a bundled side name ('C2') or a path to a JSON file."""
    if name_or_path.endswith(".json") or os.sep in name_or_path or "/" in name_or_path:
        return name_or_path
    return os.path.join(maps_dir or MAPS_DIR, f"{name_or_path}.json")


def load_side(name_or_path: str, maps_dir: str | None = None) -> Side:
    """Load and validate one side file (bundled name like 'A1', or a path)."""
    path = side_path(name_or_path, maps_dir)
    source = os.path.basename(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise MapError(f"{source}: no such side file ({path}); bundled sides: "
                       f"{list(MODULE_SIDES)}") from None
    except json.JSONDecodeError as e:
        raise MapError(f"{source}: not valid JSON: {e}") from None
    expected = None
    if not (name_or_path.endswith(".json") or "/" in name_or_path or os.sep in name_or_path):
        expected = name_or_path
    return parse_side(data, source=source, expected_name=expected)
