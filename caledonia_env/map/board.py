"""Assemble four module sides into a :class:`Board` of numpy arrays (R-1.1, R-1.2).

Node order: the hexes of the A side (by local id), then B, C, D, followed by
exactly four port nodes (corners A, B, C, D) at the port position for the
player count. Global coordinates: module A's block at (0, 0), B at (cols, 0),
C at (cols, rows), D at (0, rows); ``rows`` is even, so odd-r parity is kept.
"""
from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import lru_cache

import numpy as np

from caledonia_env.map.format import (MODULE_SIDES, MODULES, PORT_COUNTS, TERRAIN_FOREST, TERRAIN_LOCH,
                     TERRAIN_MOUNTAIN, TERRAIN_PASTURE, TERRAIN_PORT, MapError, Side, load_side,
                     odd_r_neighbors, parse_side)
from caledonia_env.map.reach import neighbor_lists, pad_lists, ship_requirements

#: Fixed padding for node-indexed engine arrays and action ids (>= every configuration's n_nodes).
MAX_NODES = 160
N_PORTS = 4
SQRT3 = math.sqrt(3.0)


@dataclass(frozen=True, eq=False)
class Board:
    """A fully assembled map for one configuration and player count.

    All arrays are indexed by node id (hexes first, then the 4 ports) and are
    read-only. See ``docs/map.md`` for the meaning of every field.
    """
    config: tuple            # 4 side names, e.g. ("A1", "B2", "C1", "D2")
    num_players: int
    n_hex: int
    n_nodes: int
    labels: list             # "C2-14" for hexes, "port-A".."port-D" for ports
    terrain: np.ndarray      # uint8 bitmask: 1 pasture, 2 forest, 4 mountain, 8 loch, 16 port
    land_cost: np.ndarray    # int16, 0 for lochs and ports
    active: np.ndarray       # bool: usable in this player count (lochs and ports always)
    border: np.ndarray       # bool: land hex on the border of the active map
    delta: np.ndarray        # bool: river delta hex
    mist: np.ndarray         # bool: misted hex (inactive with 1-2 players if land)
    module: np.ndarray       # int8 0..3 (A..D); ports: their corner
    coords: np.ndarray       # int16 (n_nodes, 2) global odd-r (col, row); ports (-1, -1)
    xy: np.ndarray           # float64 (n_nodes, 2) centre for drawing (y up, hex radius 1)
    adjacent: np.ndarray     # int16 (n_nodes, 6) adjacent nodes, -1 padded, ascending
    neighbor: np.ndarray     # int16 (n_nodes, 6) adjacent with no river between, -1 padded
    river_pairs: np.ndarray  # int16 (k, 2) node pairs (u < v) whose shared edge is a river
    ship_req: np.ndarray     # int8 (n_nodes, n_nodes) minimum shipping level u -> v
    _index: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_index",
                           {lab.upper(): i for i, lab in enumerate(self.labels)})

    # ------------------------------------------------------------------ queries
    def node(self, label: str) -> int:
        """Node id of a label ('C2-14', 'port-B'); case-insensitive."""
        try:
            return self._index[label.strip().upper()]
        except (KeyError, AttributeError):
            raise MapError(f"no node labelled {label!r} on map {','.join(self.config)} "
                           f"(labels look like '{self.labels[0]}' or 'port-A')") from None

    @property
    def ports(self) -> np.ndarray:
        """Node ids of the four ports (corners A, B, C, D)."""
        return np.arange(self.n_hex, self.n_nodes)

    def is_land(self, v: int) -> bool:
        return bool(self.terrain[v] & (TERRAIN_PASTURE | TERRAIN_FOREST | TERRAIN_MOUNTAIN))

    def to_dict(self) -> dict:
        """Plain-Python view (lists) of every field, for debugging and JSON dumps."""
        out = {}
        for f in fields(self):
            if f.name.startswith("_"):
                continue
            v = getattr(self, f.name)
            out[f.name] = v.tolist() if isinstance(v, np.ndarray) else (
                list(v) if isinstance(v, tuple) else v)
        out["nodes"] = [self.node_dict(v) for v in range(self.n_nodes)]
        return out

    def node_dict(self, v: int) -> dict:
        t = int(self.terrain[v])
        names = [n for bit, n in ((TERRAIN_PASTURE, "pasture"), (TERRAIN_FOREST, "forest"),
                                  (TERRAIN_MOUNTAIN, "mountain"), (TERRAIN_LOCH, "loch"),
                                  (TERRAIN_PORT, "port")) if t & bit]
        return {"id": v, "label": self.labels[v], "terrain": names,
                "cost": int(self.land_cost[v]), "active": bool(self.active[v]),
                "border": bool(self.border[v]), "delta": bool(self.delta[v]),
                "mist": bool(self.mist[v]), "module": "ABCD"[int(self.module[v])],
                "neighbors": [self.labels[u] for u in self.neighbor[v] if u >= 0],
                "across_river": [self.labels[u] for u in self.adjacent[v]
                                 if u >= 0 and u not in self.neighbor[v]]}

    def __repr__(self) -> str:
        return (f"Board(config={','.join(self.config)}, num_players={self.num_players}, "
                f"n_hex={self.n_hex}, n_nodes={self.n_nodes})")


def parse_config(config) -> tuple:
    """'A1,B2,C1,D2' or a sequence of 4 names/paths -> tuple of 4 strings."""
    if isinstance(config, str):
        parts = [p.strip() for p in config.split(",")]
    else:
        try:
            parts = [str(p).strip() for p in config]
        except TypeError:
            parts = []
    if len(parts) != 4:
        raise MapError(f"a map configuration names 4 sides, one per module in order A,B,C,D "
                       f"(e.g. 'A1,B2,C1,D2'); got {config!r}; sides: {list(MODULE_SIDES)}")
    out = []
    for m, p in zip(MODULES, parts):
        if p.endswith(".json") or "/" in p:
            out.append(p)
            continue
        p = p.upper()
        if p not in MODULE_SIDES or p[0] != m:
            raise MapError(f"position {m} of the map needs side {m}1 or {m}2, got {p!r} in "
                           f"{config!r}; sides: {list(MODULE_SIDES)}")
        out.append(p)
    return tuple(out)


def build_board(config="A1,B1,C1,D1", num_players: int = 4, maps_dir: str | None = None,
                sides: Mapping[str, dict] | None = None) -> Board:
    """Assemble the board for ``config`` (4 sides A,B,C,D) and ``num_players`` (1-4).

    ``config`` is "A1,B2,C1,D2" or a sequence of 4 side names; an entry may
    also be a path to a side JSON file (e.g. a typed-in printed side), and
    ``maps_dir`` replaces the bundled directory for plain names. ``sides`` maps
    side names to sides in their JSON form (a ruleset's ``maps`` table) that
    replace the bundled sides of those names.
    """
    names = parse_config(config)
    if not isinstance(num_players, numbers.Integral) or isinstance(num_players, bool) \
            or not 1 <= int(num_players) <= 4:
        raise MapError(f"num_players must be 1, 2, 3 or 4, got {num_players!r}")
    if sides and any(n in sides for n in names):
        loaded = [parse_side(sides[n], source=f"carried side {n}", expected_name=n)
                  if n in sides else _load_cached(n, maps_dir) for n in names]
        return assemble(loaded, int(num_players))
    return _build_cached(names, int(num_players), maps_dir)


@lru_cache(maxsize=256)
def _build_cached(sides: tuple, num_players: int, maps_dir) -> Board:
    loaded = [_load_cached(s, maps_dir) for s in sides]
    return assemble(loaded, num_players)


@lru_cache(maxsize=64)
def _load_cached(name: str, maps_dir) -> Side:
    return load_side(name, maps_dir)


def hex_xy(col: float, row: float) -> tuple[float, float]:
    """Centre of an odd-r hex of radius 1 (pointy-top), y pointing up."""
    return SQRT3 * (col + 0.5 * (int(math.floor(row)) & 1)), -1.5 * row


def assemble(sides, num_players: int) -> Board:
    """Build a Board from 4 validated :class:`Side` objects (modules A, B, C, D in order)."""
    if len(sides) != 4:
        raise MapError(f"a board needs 4 sides (A, B, C, D), got {len(sides)}")
    for m, s in zip(MODULES, sides):
        if s.module != m:
            raise MapError(f"{s.source}: side {s.name} is a module {s.module} side but was "
                           f"placed at position {m}")
    cols, rows = sides[0].cols, sides[0].rows
    for s in sides[1:]:
        if (s.cols, s.rows) != (cols, rows):
            raise MapError(f"{s.source}: grid {s.cols}x{s.rows} differs from "
                           f"{sides[0].source}'s {cols}x{rows}; all four sides share one grid")
    origin = {"A": (0, 0), "B": (cols, 0), "C": (cols, rows), "D": (0, rows)}
    small = num_players <= 2
    pkey = PORT_COUNTS[0] if small else PORT_COUNTS[1]

    labels, terrain, cost, mist, delta, module, coords = [], [], [], [], [], [], []
    local_to_node: list[dict] = []
    for mi, s in enumerate(sides):
        oc, orow = origin[s.module]
        table = {}
        for h in s.hexes:
            table[h.id] = len(labels)
            labels.append(s.label(h.id))
            terrain.append(h.terrain)
            cost.append(h.cost)
            mist.append(h.mist)
            delta.append(h.delta)
            module.append(mi)
            coords.append((h.col + oc, h.row + orow))
        local_to_node.append(table)
    n_hex = len(labels)
    n_nodes = n_hex + N_PORTS
    if n_nodes > MAX_NODES:
        raise MapError(f"map {','.join(s.name for s in sides)} has {n_nodes} nodes, more than "
                       f"MAX_NODES={MAX_NODES}")
    pos = {c: i for i, c in enumerate(coords)}

    adj: list[list[int]] = [[] for _ in range(n_nodes)]
    for i, (c, r) in enumerate(coords):
        for p in odd_r_neighbors(c, r):
            j = pos.get(p)
            if j is not None:
                adj[i].append(j)
    rivers = set()
    for mi, s in enumerate(sides):
        t = local_to_node[mi]
        for a, b in s.rivers:
            u, v = t[a], t[b]
            rivers.add((min(u, v), max(u, v)))
    port_xy = []
    for mi, s in enumerate(sides):
        p = n_hex + mi
        labels.append(f"port-{MODULES[mi]}")
        terrain.append(TERRAIN_PORT)
        cost.append(0)
        mist.append(False)
        delta.append(False)
        module.append(mi)
        coords.append((-1, -1))
        for hid in s.ports[pkey]:
            v = local_to_node[mi][hid]
            adj[p].append(v)
            adj[v].append(p)
        port_xy.append(s.port_at.get(pkey))
    for v in range(n_nodes):
        if len(adj[v]) > 6:
            raise MapError(f"node {labels[v]} has {len(adj[v])} adjacent nodes (hexes + port); "
                           f"a port may only touch hexes on the edge of the map")

    terrain_a = np.array(terrain, np.uint8)
    is_loch = terrain_a == TERRAIN_LOCH
    is_port = terrain_a == TERRAIN_PORT
    is_land = ~is_loch & ~is_port
    mist_a = np.array(mist, bool)
    active = ~(is_land & mist_a) if small else np.ones(n_nodes, bool)

    border = np.zeros(n_nodes, bool)
    for i in range(n_hex):
        if not (is_land[i] and active[i]):
            continue
        for p in odd_r_neighbors(*coords[i]):
            j = pos.get(p)
            if j is None or not active[j]:
                border[i] = True
                break

    xy = np.zeros((n_nodes, 2), np.float64)
    for i in range(n_hex):
        xy[i] = hex_xy(*coords[i])
    centre = xy[:n_hex].mean(axis=0)
    for mi, s in enumerate(sides):
        p = n_hex + mi
        at = port_xy[mi]
        if at is not None:
            oc, orow = origin[s.module]
            xy[p] = (SQRT3 * (at[0] + oc), -1.5 * (at[1] + orow))
        else:
            nb = [v for v in adj[p]]
            c = xy[nb].mean(axis=0)
            d = c - centre
            d = d / (np.linalg.norm(d) or 1.0)
            xy[p] = c + 1.6 * d

    neighbor = neighbor_lists(adj, rivers)
    req = ship_requirements(adj, rivers, is_loch, active)
    rp = np.array(sorted(rivers), np.int16).reshape(-1, 2)

    arrays = dict(
        terrain=terrain_a, land_cost=np.array(cost, np.int16), active=active, border=border,
        delta=np.array(delta, bool), mist=mist_a, module=np.array(module, np.int8),
        coords=np.array(coords, np.int16), xy=xy, adjacent=pad_lists(adj),
        neighbor=pad_lists(neighbor), river_pairs=rp, ship_req=req)
    for a in arrays.values():
        a.setflags(write=False)
    return Board(config=tuple(s.name for s in sides), num_players=num_players, n_hex=n_hex,
                 n_nodes=n_nodes, labels=labels, **arrays)


def all_configs() -> list[tuple]:
    """The 16 configurations (one side per module)."""
    return [tuple(f"{m}{k}" for m, k in zip(MODULES, ks))
            for ks in itertools.product((1, 2), repeat=4)]


assert 4 * 6 * 6 + N_PORTS <= MAX_NODES   # bundled 6x6 grids can never exceed the padding
