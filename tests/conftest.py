"""Shared helpers: find hexes with given properties on the real map, build scenarios; with
parallel workers (pytest-xdist), numba's cache is filled once before they start."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))

from caledonia_env import Game, GameConfig, agents  # noqa: E402
from caledonia_env.engine.compile import helper as pc  # noqa: E402
from caledonia_env.engine.constants import TERRAIN_LOCH, TERRAIN_PASTURE, TERRAIN_PORT  # noqa: E402
from caledonia_env.engine.layout import STATE_SIZE  # noqa: E402
from caledonia_env.engine.playout import random_games  # noqa: E402
from caledonia_env.envs.vector import CaledoniaVectorEnv  # noqa: E402

MAP = "A1,B1,C1,D1"


def warm_game_paths() -> None:
    """Compile (or load) the engine through ``Game`` (with and without an Automa seat: two
    compilations, ``engine.automa.deck.automa_switch``) and the greedy and mcts bots."""
    game = Game(GameConfig(num_players=2, seed=0, automa={1: 3}))
    game.step(int(game.legal_actions()[0]))
    game = Game(GameConfig(num_players=4, seed=0, clans="draft"))
    game.step(int(game.legal_actions()[0]))
    for name in ("greedy", "mcts:4"):
        agents.make(name, seed=0).act(game.clone())


def warm_kernels() -> None:
    """Compile (or load) the vector env's kernels and the random playouts."""
    env = CaledoniaVectorEnv(num_envs=2, num_players=2, seed=0)
    env.reset()
    env.step(env.sample_actions())
    game = Game(GameConfig(num_players=4, seed=0, clans="draft"))
    random_games(game.tables, 1, 0, np.zeros((1, STATE_SIZE), np.int32), None)


def warm_numba_cache() -> None:
    """Fill numba's cache with the code most tests run, which every process of the session
    shares by path: :func:`warm_kernels` in a second process while this one runs
    :func:`warm_game_paths` (the two use two cores; the engine functions both call are
    compiled twice, and each write to the cache replaces its file whole). Neither starts a
    ``Game``'s compile helper (engine/compile/helper.py): with both cores already busy a
    third compiling process only adds contention."""
    switch, before = pc.SWITCH, os.environ.get(pc.SWITCH)
    helper = subprocess.Popen([sys.executable, "-c", "import conftest; conftest.warm_kernels()"],
                              cwd=os.path.dirname(__file__), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True,
                              env=dict(os.environ, **{switch: "0"}))
    os.environ[switch] = "0"
    try:
        warm_game_paths()
    finally:
        if before is None:
            del os.environ[switch]
        else:
            os.environ[switch] = before
        out = helper.communicate()[0]
    if helper.returncode != 0:
        raise RuntimeError(f"warming numba's cache (vector env, playouts) failed:\n{out}")


def pytest_configure(config):
    """With parallel workers (``-n``), compile the common code once here, in the controller,
    before any worker starts: two workers compiling the same function at once both pay for
    it. Without workers each test compiles what it needs, as it comes. Workers get one
    OpenMP thread each (``OMP_NUM_THREADS``, unless set)."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    # Each worker is one core's load: torch's OpenMP threads (one per core by default) would
    # spin on the cores the other workers use. One each, for the workers and the processes
    # they start (numba's threads are NUMBA_NUM_THREADS and stay as they are).
    os.environ.setdefault("OMP_NUM_THREADS", "1")
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
