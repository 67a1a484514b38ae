"""The engine's ``automa`` argument: games without Automa seats never compile the Automa's
code (docs/architecture.md, "numba functions"; A-1, A-3, A-7, A-8)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from caledonia_env import Game, GameConfig
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.envs.vector import CaledoniaVectorEnv

ROOT = Path(__file__).resolve().parents[2]

# In a fresh interpreter: the end of round 1 (R-6.4, then) compiled for a game without
# Automa seats, then with the switch on; which Automa phase functions had been compiled after
# each. The functions on the path from ``end_round`` to the Automa phases (``start_round``
# calls ``automa_prepare``) are compiled here, never loaded: numba's cache is off for them
# (so nothing is written to it either), while their other callees load from the cache the
# tests share. A function loaded from the cache leaves its callees untyped, so a new function
# on that path would make the "with" list below come out short: the test fails, never passes
# blindly.
CHILD = """
import json, numpy as np
from numba.core.caching import NullCache
from caledonia_env.config import GameConfig
from caledonia_env.engine import flow, layout as L
from caledonia_env.engine.automa import phases
from caledonia_env.game import static_tables
path = (flow.end_round, flow.start_round, phases.automa_prepare, phases.automa_final)
for f in path:
    f._cache = NullCache()
cfg = GameConfig(num_players=2, seed=3, map="A1,B1,C1,D1")
static = static_tables(cfg)   # tables only: nothing compiled
s = np.zeros(L.STATE_SIZE, np.int32)
s[L.S_NP], s[L.S_ROUND] = 2, 1
flow.end_round(s, static.tables, static.automa_switch)
compiled = lambda: sorted(f.__name__ for f in (phases.automa_prepare, phases.automa_final)
                          if f.signatures)
without = compiled()
flow.end_round(s.copy(), static.tables, True)
print(json.dumps({"switch": static.automa_switch, "without": without, "with": compiled(),
                  "round": int(s[L.S_ROUND]),
                  "compiled": sorted(f.__name__ for f in path if f.signatures)}))
"""

def test_switch_is_none_without_automa_seats_and_true_with_one():
    assert automa_switch(Game(GameConfig(num_players=3, seed=1)).tables) is None
    assert automa_switch(Game(GameConfig(num_players=2, seed=1, automa={1: 2})).tables) is True
    solo = Game(GameConfig(num_players=1, solo=True, seed=1))
    assert solo.static.automa_switch is automa_switch(solo.tables) is None


def test_switch_of_a_batch_of_tables_is_true_if_any_game_has_an_automa_seat():
    plain = Game(GameConfig(num_players=2, seed=1)).tables
    automa = Game(GameConfig(num_players=2, seed=1, automa={0: 1})).tables
    assert automa_switch(np.stack([plain, plain])) is None
    assert automa_switch(np.stack([plain, automa])) is True
    assert CaledoniaVectorEnv(num_envs=2, num_players=2, seed=0).automa is None


def test_a_game_without_automa_seats_does_not_compile_the_automa_phases():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                         text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["switch"] is None
    assert got["without"] == []                               # pruned before typing
    assert got["with"] == ["automa_final", "automa_prepare"]  # compiled when asked for
    assert got["compiled"] == ["automa_final", "automa_prepare", "end_round", "start_round"]
    assert got["round"] == 2                                  # the round did end
