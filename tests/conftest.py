"""Shared helpers: find hexes with given properties on the real map, build scenarios; with
parallel workers (pytest-xdist), numba's cache is filled once before they start
(``tests/warm.py``)."""
import os
import sys
import time

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from caledonia_env import Game  # noqa: E402
from caledonia_env.engine.constants import TERRAIN_LOCH, TERRAIN_PASTURE, TERRAIN_PORT  # noqa: E402
from warm import warm_numba_cache  # noqa: E402

MAP = "A1,B1,C1,D1"


def pytest_configure(config):
    """With parallel workers (``-n``), compile the common code once here, in the controller,
    before any worker starts: two workers compiling the same function at once both pay for
    it. Without workers each test compiles what it needs, as it comes."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    t0 = time.perf_counter()
    warm_numba_cache()
    config.numba_warm_seconds = time.perf_counter() - t0


def pytest_report_header(config):
    took = getattr(config, "numba_warm_seconds", None)
    if took is not None:
        return f"numba cache warmed for the workers in {took:.1f} s"


class Hexes:
    """Queries over a board to pick hexes for scenario tests (labels)."""

    def __init__(self, board):
        self.b = board

    def label(self, node):
        return self.b.labels[node]

    def land(self, terrain=TERRAIN_PASTURE, only=False, cost=None):
        out = []
        for v in range(self.b.n_hex):
            t = int(self.b.terrain[v])
            if t & (TERRAIN_LOCH | TERRAIN_PORT) or not self.b.active[v]:
                continue
            if (t == terrain) if only else (t & terrain):
                if cost is None or self.b.land_cost[v] == cost:
                    out.append(v)
        return out

    def neighbors(self, v):
        return [int(w) for w in self.b.neighbor[v] if w >= 0]

    def adjacent(self, v):
        return [int(w) for w in self.b.adjacent[v] if w >= 0]

    def pasture_pair(self):
        """Two neighboring pasture hexes (no river between)."""
        for v in self.land(TERRAIN_PASTURE):
            for w in self.neighbors(v):
                if w < self.b.n_hex and self.b.terrain[w] & TERRAIN_PASTURE and self.b.active[w] \
                        and not self.b.terrain[w] & TERRAIN_LOCH:
                    return v, w
        raise AssertionError("map has no two neighboring pastures")

    def pasture_triangle(self):
        """Three mutually neighboring pasture hexes (v, w, x): no rivers between."""
        pastures = set(self.land(TERRAIN_PASTURE))
        for v in sorted(pastures):
            for w in self.neighbors(v):
                if w not in pastures:
                    continue
                for x in self.neighbors(w):
                    if x in pastures and x != v and x in self.neighbors(v):
                        return v, w, x
        raise AssertionError("map has no three mutually neighboring pastures")

    def far_from(self, nodes, terrain=TERRAIN_PASTURE):
        """A hex of ``terrain`` out of reach (ship level 6) of all ``nodes``."""
        for v in self.land(terrain):
            if all(self.b.ship_req[u, v] > 6 for u in nodes) and v not in nodes:
                return v
        raise AssertionError("no far hex")


@pytest.fixture
def hexes():
    return Hexes(Game.from_scenario(base_scenario()).board)


def base_scenario(n=2, **kw):
    d = {"version": 2, "num_players": n, "map": MAP, "round": 2, "turn_order": list(range(n)),
         "current_player": 0, "players": [{"money": 0} for _ in range(n)],
         "ports": {"A": None, "B": None, "C": None, "D": None}}
    d.update(kw)
    return d


def finish_round5(d):
    """Round 5, every other player passed: player 0 passes and the game ends (R-7)."""
    n = d["num_players"]
    d.update(round=5, scoring_tiles=[None] * 5, turn_order=list(range(n)), current_player=0,
             next_turn_order=list(range(1, n)))
    for p in range(1, n):
        d["players"][p]["passed"] = True
    g = Game.from_scenario(d)
    g.step(g.parse_action("pass"))
    assert g.is_terminal
    return g


def mask_names(game):
    return sorted(game.describe_action(a) for a in game.legal_actions())


@pytest.fixture
def names():
    return mask_names


def np_equal(a, b):
    return np.array_equal(a, b)
