"""The engine without the JIT (NUMBA_DISABLE_JIT=1, for stepping through it in a Python
debugger) plays exactly the games the compiled engine plays: same final states, same
Automa events, and no integer overflow warnings (int32 scalars overflow in plain NumPy
where compiled code widens them to 64 bits)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import numpy as np

from caledonia_env import Game, GameConfig

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = [dict(num_players=2, seed=3, automa={1: 5}),
           dict(num_players=3, seed=4),
           dict(num_players=4, seed=5, automa={0: 1, 2: 3})]


def play_all() -> list:
    """One random game per config: a hash of the final state and the Automa events."""
    out = []
    for i, cfg in enumerate(CONFIGS):
        g = Game(GameConfig(**cfg))
        rng = np.random.default_rng(i)
        while not g.is_terminal:
            g.step(int(rng.choice(np.flatnonzero(g.legal_mask()))))
        out.append([hashlib.sha1(g.state.tobytes()).hexdigest(),
                    [e["text"] for e in g.automa_events]])
    return out


def test_engine_without_jit_plays_the_same_games():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", __file__],
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    nojit = json.loads(run.stdout.strip().splitlines()[-1])
    jit = json.loads(json.dumps(play_all()))
    assert any(events for _, events in jit)          # the Automa games did log turns
    assert nojit == jit


if __name__ == "__main__":
    print(json.dumps(play_all()))
