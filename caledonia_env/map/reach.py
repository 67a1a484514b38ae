"""Adjacency, neighbors (R-0), river pairs and the shipping-range matrix (R-4).

``ship_req[u, v]`` is the minimum shipping level a player needs so that a unit
on node ``u`` can expand to node ``v``:

* 0 — ``v`` is a neighbor of ``u`` (adjacent, no river on the shared edge);
* 1 — ``v`` is adjacent to ``u`` across a river;
* k + 1 — ``v`` is reached from ``u`` through a path of k >= 1 intermediate
  loch hexes (u -> l1 -> ... -> lk -> v, each li a loch, never a land hex or a
  port);
* ``UNREACHABLE`` (127) otherwise, for u == v, and whenever u or v is inactive.
"""
from __future__ import annotations

from collections import deque

import numpy as np

UNREACHABLE = 127
MAX_DEGREE = 6


def pad_lists(lists: list[list[int]], width: int = MAX_DEGREE) -> np.ndarray:
    out = np.full((len(lists), width), -1, np.int16)
    for i, row in enumerate(lists):
        if len(row) > width:
            raise ValueError(f"node {i} has {len(row)} > {width} adjacent nodes")
        out[i, :len(row)] = sorted(row)
    return out


def neighbor_lists(adj: list[list[int]], rivers: set[tuple[int, int]]) -> list[list[int]]:
    """Adjacent nodes with no river on the shared edge."""
    return [[v for v in row if (min(u, v), max(u, v)) not in rivers] for u, row in enumerate(adj)]


def ship_requirements(adj: list[list[int]], rivers: set[tuple[int, int]],
                      is_loch: np.ndarray, active: np.ndarray) -> np.ndarray:
    """The (n, n) int8 minimum-shipping-level matrix (see module docstring)."""
    n = len(adj)
    req = np.full((n, n), UNREACHABLE, np.int16)
    for u in range(n):
        if not active[u]:
            continue
        row = req[u]
        # direct adjacency
        for v in adj[u]:
            row[v] = 1 if (min(u, v), max(u, v)) in rivers else 0
        # breadth-first over loch hexes: dist[l] = number of lochs on the path u -> ... -> l
        dist = {}
        queue = deque()
        for l in adj[u]:
            if is_loch[l]:
                dist[l] = 1
                queue.append(l)
        while queue:
            l = queue.popleft()
            d = dist[l]
            for v in adj[l]:
                if v == u:
                    continue
                if d + 1 < row[v]:
                    row[v] = d + 1
                if is_loch[v] and v not in dist:
                    dist[v] = d + 1
                    queue.append(v)
        row[u] = UNREACHABLE
    inactive = ~np.asarray(active, bool)
    req[:, inactive] = UNREACHABLE
    req[inactive, :] = UNREACHABLE
    return req.astype(np.int8)
