"""Engine fuzzer: random legal games over every configuration, invariants checked in numba.

Game ``i`` of a run with seed ``S`` is fully defined by ``case(S, i)``: a
:class:`GameConfig` (player count, clan mode, variants, interpretation switches) and
the seed of the random action choices. :func:`fuzz_game` plays it inside numba and
checks :func:`check_state` after every step; :func:`replay` re-plays a failing game
through :class:`Game` up to the failing step.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from caledonia_env.config import CLAN_MODES, CLAN_NAMES, GameConfig
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.board import pofs
from caledonia_env.engine.clans import crow
from caledonia_env.engine.constants import (FISHERMAN, LUMBERJACK, MINER, N_GOODS, N_UNITS, NEUTRAL, OCC_STRIDE,
                               PH_OVER, TERRAIN_LOCH, TERRAIN_PORT)
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import game_over
from caledonia_env.engine.playout import random_legal_action
from caledonia_env.engine.step import apply_action
from caledonia_env.engine.tables.build import (BUCHANAN_READINGS, CELLAR_READINGS, IMPORT_RARITY_READINGS,
                                               SOLO_IMPORT_READINGS, SWAP_BONUS_READINGS)
from caledonia_env.game import Game

BLOCK = 16                 # consecutive games sharing one configuration (and its tables)
MAX_STEPS = 20000          # a random game takes ~1,000 steps; more means it does not end
FAILURES = ("ok", "money < 0", "goods < 0", "merchants < 0", "merchants not conserved",
            "buy and sell space of one good", "units not conserved", "bad occupant",
            "unit on a wrong hex", "price off its track", "round out of range",
            "shipping out of range", "cellar < 0", "empty mask before the end",
            "game did not end", "game ended before the last round",
            "phase or done flag disagrees with game_over")
(OK, E_MONEY, E_GOODS, E_MERCH, E_MERCH_TOTAL, E_BUY_SELL, E_UNITS, E_OCC, E_HEX, E_PRICE,
 E_ROUND, E_SHIP, E_CELLAR, E_MASK, E_STEPS, E_END, E_OVER) = range(len(FAILURES))


# ---------------------------------------------------------------- numba part
@njit(cache=True)
def _player_ok(s, T, p, units):
    poff = pofs(p)
    if s[poff + L.P_MONEY] < 0:
        return E_MONEY
    merch = s[poff + L.P_MERCH] + s[poff + L.P_TRACK]
    if s[poff + L.P_MERCH] < 0 or s[poff + L.P_TRACK] < 0:
        return E_MERCH
    for g in range(N_GOODS):
        if s[poff + L.P_GOODS + g] < 0:
            return E_GOODS
        buy = s[poff + L.P_MARKET + g]
        sell = s[poff + L.P_MARKET + N_GOODS + g]
        if buy < 0 or sell < 0:
            return E_MERCH
        if buy > 0 and sell > 0:
            return E_BUY_SELL
        merch += buy + sell
    if merch != T[L.T_MERCH_SUPPLY] + T[L.T_MERCH_TRACK]:
        return E_MERCH_TOTAL
    for u in range(N_UNITS):                       # units: board + map
        if s[poff + L.P_BOARD + u] < 0:
            return E_UNITS
        units[u] += s[poff + L.P_BOARD + u]
    if T[L.T_CLAN_ANY_WORKER + crow(s, poff)]:       # one pool of workers
        pool = units[LUMBERJACK] + units[MINER] + units[FISHERMAN]
        if pool != T[L.T_UNIT_COUNT + LUMBERJACK] + T[L.T_UNIT_COUNT + MINER]:
            return E_UNITS
        units[LUMBERJACK] = T[L.T_UNIT_COUNT + LUMBERJACK]
        units[MINER] = T[L.T_UNIT_COUNT + MINER]
        units[FISHERMAN] = T[L.T_UNIT_COUNT + FISHERMAN]
    for u in range(N_UNITS):
        if units[u] != T[L.T_UNIT_COUNT + u]:
            return E_UNITS
    if s[poff + L.P_SHIP] < 0 or s[poff + L.P_SHIP] > T[L.T_SHIP_MAX]:
        return E_SHIP
    if s[poff + L.P_CELLAR] < 0 or s[poff + L.P_CELLAR + 1] < 0:
        return E_CELLAR
    return OK


@njit(cache=True)
def check_state(s, T):
    """0 if the state satisfies every invariant, else the failure code (``FAILURES``)."""
    n = s[L.S_NP]
    counts = np.zeros((n, N_UNITS), np.int64)
    for m in range(L.MAX_NODES):
        o = s[L.S_OCC + m]
        if o == -1:
            continue
        if m >= T[L.T_N_NODES]:
            return E_OCC
        if o == NEUTRAL:
            continue
        p = o // OCC_STRIDE
        u = o % OCC_STRIDE
        if o < 0 or p >= n or u >= N_UNITS:
            return E_OCC
        counts[p, u] += 1
        water = T[L.T_TERRAIN + m] & (TERRAIN_LOCH | TERRAIN_PORT)
        if u == FISHERMAN:
            if water == 0:
                return E_HEX
        elif water != 0 or (T[L.T_TERRAIN + m] & T[L.T_UNIT_TERRAIN + u]) == 0:
            return E_HEX
    for p in range(n):
        code = _player_ok(s, T, p, counts[p])
        if code != OK:
            return code
    for g in range(N_GOODS):
        v = s[L.S_PRICE_STEP + g]
        if v < T[L.T_STEP_LO + g] or v > T[L.T_STEP_HI + g]:
            return E_PRICE
    if s[L.S_ROUND] < 1 or s[L.S_ROUND] > T[L.T_ROUNDS]:
        return E_ROUND
    over = game_over(s)
    if (s[L.S_PHASE] == PH_OVER) != over or (s[L.S_DONE] == 1) != over:
        return E_OVER                              # only flow.end_game may end the game
    return OK


@njit(cache=True)
def fuzz_game(s, T, action_seed, max_steps, actions, automa):
    """Play random legal actions from ``s`` to the end, checking every state.

    Returns ``(code, steps)``: ``code`` 0 when clean, else a ``FAILURES`` index found
    after ``steps`` actions (stored in ``actions[:steps]``).
    """
    np.random.seed(action_seed)
    mask = np.zeros(N_ACTIONS, np.int8)
    code = check_state(s, T)
    steps = 0
    while code == OK and not game_over(s):
        if steps >= max_steps:
            return E_STEPS, steps
        a = random_legal_action(s, T, mask)
        if a < 0:
            return E_MASK, steps
        actions[steps] = a
        apply_action(s, T, a, automa)
        steps += 1
        code = check_state(s, T)
    if code == OK and s[L.S_ROUND] != T[L.T_ROUNDS]:
        code = E_END
    return code, steps


# ---------------------------------------------------------------- Python part
@dataclass(frozen=True)
class Case:
    """One fuzzed game: its configuration and the seed of its random actions."""
    config: GameConfig
    action_seed: int


def case(seed: int, index: int) -> Case:
    """The configuration of game ``index`` of a run with ``seed``: 1-4 players (1 = solo),
    no clans / draft / auction / fixed clans, Automa seats (A-0), every variant and
    interpretation switch, a map; ``BLOCK`` consecutive games share all but the game and action seeds (so they
    share the engine tables)."""
    rng = np.random.default_rng([seed, index // BLOCK])
    own = np.random.default_rng([seed, index, 1])
    n = int(rng.integers(1, 5))
    mode = CLAN_MODES[int(rng.integers(4))]
    if n == 1 and mode == "auction":
        mode = "draft"
    sides = tuple(f"{m}{int(rng.integers(1, 3))}" for m in "ABCD")
    kw = dict(num_players=n, seed=int(own.integers(2**31 - 1)), solo=n == 1, map=sides,
              ports=bool(rng.random() < 0.8), scoring_tiles=bool(rng.random() < 0.8),
              variant_static_imports=bool(rng.random() < 0.3),
              kickstarter_tiles=bool(rng.random() < 0.4),
              smaller_map=n in (2, 3) and bool(rng.random() < 0.3),
              interp_price_shift_exact=bool(rng.random() < 0.5),
              interp_retrieve_buy_side=bool(rng.random() < 0.5),
              interp_export_min_contracts=None if rng.random() < 0.5 else int(rng.integers(0, 3)))
    automa = {}
    if n >= 2 and mode != "auction" and rng.random() < 0.25:     # 1..n-1 Automa seats
        seats = rng.permutation(n)[:int(rng.integers(1, n))]
        automa = {int(p): int(rng.integers(1, 6)) for p in sorted(seats)}
        kw["automa"] = automa
    if mode == "fixed":
        drawn = rng.permutation(len(CLAN_NAMES))[:n]              # different clans
        kw["clans"] = tuple(None if p in automa or rng.random() < 0.15 else CLAN_NAMES[int(c)]
                            for p, c in enumerate(drawn))
    elif mode == "none":
        kw["clans"] = None                                         # the no-clans variant
    else:
        kw.update(clans="draft", clan_auction=mode == "auction",
                  kickstarter_clan=bool(rng.random() < 0.5))
    # switches added later draw from their own stream, so the earlier draws stay the same
    later = np.random.default_rng([seed, index // BLOCK, 2])
    kw.update(interp_swap_bonuses=SWAP_BONUS_READINGS[int(later.integers(2))],
              interp_solo_imports=SOLO_IMPORT_READINGS[int(later.integers(2))])
    latest = np.random.default_rng([seed, index // BLOCK, 3])
    kw.update(interp_buchanan=BUCHANAN_READINGS[int(latest.integers(2))],
              interp_cellar=CELLAR_READINGS[int(latest.integers(2))],
              interp_import_rarity=IMPORT_RARITY_READINGS[int(latest.integers(2))])
    return Case(GameConfig(**kw), int(own.integers(2**31 - 1)))


def run_case(c: Case, max_steps: int = MAX_STEPS):
    """Fuzz one game: ``(code, steps, actions)``."""
    g = Game(c.config)
    actions = np.zeros(max_steps, np.int32)
    code, steps = fuzz_game(g.state, g.tables, c.action_seed, max_steps, actions,
                            g.static.automa_switch)
    return int(code), int(steps), actions[:steps]


def run(seed: int, start: int, count: int, max_steps: int = MAX_STEPS):
    """Fuzz games ``start .. start+count-1``: ``(games, steps, failures)`` where each
    failure is ``(index, code, step)``."""
    total = 0
    failures = []
    for i in range(start, start + count):
        code, steps, _ = run_case(case(seed, i), max_steps)
        total += steps
        if code != OK:
            failures.append((i, code, steps))
    return count, total, failures


def replay(seed: int, index: int, max_steps: int = MAX_STEPS):
    """Re-play game ``index`` through :class:`Game` (every action checked legal) up to its
    failing step; returns ``(game, code)`` where ``code`` is :func:`check_state` there."""
    c = case(seed, index)
    _, steps, actions = run_case(c, max_steps)
    g = Game(c.config)
    for a in actions:
        g.step(int(a))
    return g, int(check_state(g.state, g.tables))


__all__ = ["Case", "FAILURES", "MAX_STEPS", "case", "check_state", "fuzz_game",
           "replay", "run", "run_case"]
