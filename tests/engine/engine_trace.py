"""Determinism guard for engine speed work: a hash of every decision of random games.

``trace_hashes(config, n_games, seed)`` plays ``n_games`` random games inside numba (the
pick of ``engine.playout.random_legal_action``, numba's np.random stream) and returns one
64-bit FNV-1a hash per game over, at every decision: the state's header and player blocks
(the whole state row; until the event log moved out of it, ``s[:S_AM_LOG]``, the same
cells), the legal mask, the action drawn and the Automa events the step logged (A-3, read
in order from the event log, so the log's size and place do not matter). Any change to
a rule, a mask, an apply or the random pick changes the hashes.

``python tests/engine/engine_trace.py`` rewrites ``tests/engine/engine_trace_hashes.json`` (only with an
engine known to be right); ``tests/engine/test_engine_trace.py`` compares against it.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
from numba import njit

HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(HERE))

from caledonia_env import Game, GameConfig  # noqa: E402
from caledonia_env.config import RULES_2026_11  # noqa: E402
from caledonia_env.engine.actions import N_ACTIONS  # noqa: E402
from caledonia_env.engine.automa.deck import automa_switch  # noqa: E402
from caledonia_env.engine.layout import (AM_EV_W, AM_LOG_CAP, AM_LOG_SIZE,  # noqa: E402
                                         S_AM_NLOG, STATE_SIZE, game_over)
from caledonia_env.engine.playout import random_legal_action  # noqa: E402
from caledonia_env.engine.setup import new_game_log  # noqa: E402
from caledonia_env.engine.step import apply_action_log  # noqa: E402

HASHES = os.path.join(HERE, "engine_trace_hashes.json")

#: (name, GameConfig keywords, games); 320 games in all.
CASES = (
    ("2p draft", dict(num_players=2, seed=1), 45),
    ("3p draft", dict(num_players=3, seed=2), 45),
    ("4p draft", dict(num_players=4, seed=3), 45),
    ("4p no clans", dict(num_players=4, seed=4, clans=None), 25),
    ("3p auction, brewer", dict(num_players=3, seed=5, clan_auction=True,
                                kickstarter_clan=True), 25),
    ("2p no clans, smaller map", dict(num_players=2, seed=6, clans=None, smaller_map=True), 20),
    ("4p two automa seats", dict(num_players=4, seed=7, automa={1: 3, 3: 5}), 25),
    ("2p automa", dict(num_players=2, seed=8, automa={0: 1}), 20),
    ("solo", dict(num_players=1, solo=True, seed=9), 30),
    ("3p no clans, static imports, P4 exact", dict(num_players=3, seed=10, clans=None,
                                                   variant_static_imports=True,
                                                   interp_price_shift_exact=True), 20),
    ("2p estimates-2026-11, first-edition swap, fixed imports",
     dict(num_players=2, seed=11, **RULES_2026_11), 20),
)

FNV_OFFSET = np.uint64(14695981039346656037)
FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True)
def _mix(h, v):
    return (h ^ np.uint64(np.int64(v) & 0xFFFFFFFF)) * FNV_PRIME


@njit(cache=True)
def _play(T, n_games, seed, out, automa):
    s = np.zeros(STATE_SIZE, np.int32)
    amlog = np.zeros(AM_LOG_SIZE, np.int32)
    mask = np.zeros(N_ACTIONS, np.int8)
    for g in range(n_games):
        new_game_log(s, T, seed + g, -1, amlog, automa)
        np.random.seed(seed * 7919 + g)
        h = FNV_OFFSET
        steps = 0
        while True:
            for i in range(STATE_SIZE):
                h = _mix(h, s[i])
            n = s[S_AM_NLOG]
            lo = n - AM_LOG_CAP if n > AM_LOG_CAP else 0
            for e in range(lo, n):
                base = (e % AM_LOG_CAP) * AM_EV_W
                for k in range(AM_EV_W):
                    h = _mix(h, amlog[base + k])
            if game_over(s) or steps >= 100000:
                break
            a = random_legal_action(s, T, mask)
            for i in range(N_ACTIONS):
                if mask[i]:
                    h = _mix(h, i)
            h = _mix(h, a)
            if a < 0:
                break
            apply_action_log(s, T, a, amlog, automa)
            steps += 1
        out[g, 0] = h
        out[g, 1] = steps


def trace_hashes(config: dict, n_games: int, seed: int = 0) -> list[str]:
    """One hex hash per game (see the module docstring), with its step count appended."""
    T = Game(GameConfig(**config)).tables
    out = np.zeros((n_games, 2), np.uint64)
    _play(T, n_games, seed, out, automa_switch(T))
    return [f"{int(h):016x}:{int(n)}" for h, n in out]


def main() -> int:
    ref = {name: trace_hashes(cfg, n) for name, cfg, n in CASES}
    with open(HASHES, "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")
    print(f"wrote {sum(len(v) for v in ref.values())} game hashes to {HASHES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
