"""Where one engine step goes: numba-timed microbenchmarks over a corpus of real states.

Records every decision of ``--games`` random games (4 players, drafted clans by default),
then times each engine piece over that corpus inside numba (one call per piece, so no
dispatch cost): the whole random step (as in ``engine.playout.rollout``), the legal mask
(split by decision context), the random pick over the mask, ``apply_action`` (split by
context), the state copy, the expansion scan (``legality.place_scan``) and the reach
computation (``board.reach_bits``) for main-action decisions, ``new_game``, and the
deciding player's observation (``envs.observation.encode_obs``, written into 2 x 64
rotating rows as the vector env's buffers are).
Prints ns per step (averaged over all steps) and the share of the whole step. Times are
this thread's CPU time (``time.thread_time``), so other jobs on a shared machine disturb
them less than wall time would.

    python benchmarks/engine_profile.py               # 4 players, 40 games
    python benchmarks/engine_profile.py --players 2
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from numba import njit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from caledonia_env.engine.actions import N_ACTIONS  # noqa: E402
from caledonia_env.engine.board import reach_bits  # noqa: E402
from caledonia_env.engine.constants import CONTEXT_NAMES, CTX_MAIN  # noqa: E402
from caledonia_env.engine.layout import RB_LEN, S_CTX, S_PLAYER, S_PRICE_SHIFT_GOOD, STATE_SIZE, game_over  # noqa: E402
from caledonia_env.engine.board import pofs  # noqa: E402
from caledonia_env.engine.economy import upgrade_mask  # noqa: E402
from caledonia_env.engine.mask import _fulfill_both_ok, _fulfill_ok, _trades, legal_mask  # noqa: E402
from caledonia_env.engine.legality import can_obtain, n_boxes  # noqa: E402
from caledonia_env.engine.ports import usable_ports  # noqa: E402
from caledonia_env.engine.legality import place_scan  # noqa: E402
from caledonia_env.engine.playout import random_legal_action, random_pick, rollout  # noqa: E402
from caledonia_env.engine.automa.deck import automa_switch  # noqa: E402
from caledonia_env.engine.setup import new_game  # noqa: E402
from caledonia_env.engine.step import apply_action  # noqa: E402
from caledonia_env.envs.observation import OBS_SIZE, encode_obs  # noqa: E402


@njit(cache=True)
def record(T, n_games, seed, cap, automa):
    """States before every decision of ``n_games`` random games, and the actions taken."""
    states = np.zeros((cap, STATE_SIZE), np.int32)
    actions = np.zeros(cap, np.int64)
    s = np.zeros(STATE_SIZE, np.int32)
    mask = np.zeros(N_ACTIONS, np.int8)
    k = 0
    np.random.seed(seed)
    for g in range(n_games):
        new_game(s, T, seed + g, -1, automa)
        while not game_over(s) and k < cap:
            a = random_legal_action(s, T, mask)
            states[k] = s
            actions[k] = a
            apply_action(s, T, a, automa)
            k += 1
    return states[:k], actions[:k]


@njit(cache=True)
def t_rollouts(T, n_games, seed, automa):
    s = np.zeros(STATE_SIZE, np.int32)
    steps = 0
    for g in range(n_games):
        new_game(s, T, seed + g, -1, automa)
        steps += rollout(s, T, seed * 7919 + g, 100000, automa)
    return steps


@njit(cache=True)
def t_new_game(T, n_games, seed, automa):
    s = np.zeros(STATE_SIZE, np.int32)
    for g in range(n_games):
        new_game(s, T, seed + g, -1, automa)
    return s[0]


@njit(cache=True)
def t_mask_subset(states, idx, T, reps):
    mask = np.zeros(N_ACTIONS, np.int8)
    acc = 0
    for _ in range(reps):
        for i in idx:
            legal_mask(states[i], T, mask)
            acc += mask[0]
    return acc


@njit(cache=True)
def t_pick(states, T, reps):
    """The random pick of rollout (``playout.random_pick``) over one main-action mask."""
    mask = np.zeros(N_ACTIONS, np.int8)
    legal_mask(states[len(states) // 2], T, mask)
    acc = 0
    for _ in range(reps):
        acc += random_pick(mask)
    return acc


@njit(cache=True)
def t_copy(states, reps):
    s = np.zeros(STATE_SIZE, np.int32)
    acc = 0
    for _ in range(reps):
        for i in range(states.shape[0]):
            s[:] = states[i]
            acc += s[0]
    return acc


@njit(cache=True)
def t_apply_subset(states, actions, idx, T, automa, reps):
    s = np.zeros(STATE_SIZE, np.int32)
    acc = 0
    for _ in range(reps):
        for i in idx:
            s[:] = states[i]
            apply_action(s, T, actions[i], automa)
            acc += s[0]
    return acc


@njit(cache=True)
def t_copy_subset(states, idx, reps):
    s = np.zeros(STATE_SIZE, np.int32)
    acc = 0
    for _ in range(reps):
        for i in idx:
            s[:] = states[i]
            acc += s[0]
    return acc


@njit(cache=True)
def t_encode(states, T, out, reps):
    """The deciding player's observation of every state, into the rows of ``out`` in turn."""
    acc = 0.0
    for _ in range(reps):
        for i in range(states.shape[0]):
            row = out[i % out.shape[0]]
            encode_obs(states[i], T, max(states[i, S_PLAYER], 0), row)
            acc += row[0]
    return acc


@njit(cache=True)
def reaches(states, T):
    """Each state's deciding player's reach bitsets (so the scans below are timed without them)."""
    out = np.zeros((states.shape[0], RB_LEN), np.uint64)
    for i in range(states.shape[0]):
        reach_bits(states[i], T, states[i, S_PLAYER], out[i])
    return out


@njit(cache=True)
def t_places(states, reach, idx, T, reps):
    mask = np.zeros(N_ACTIONS, np.int8)
    acc = 0
    for _ in range(reps):
        for i in idx:
            s = states[i]
            acc += place_scan(s, T, s[S_PLAYER], False, mask, False, reach[i])
    return acc


@njit(cache=True)
def t_reach(states, idx, T, reps):
    out = np.zeros(RB_LEN, np.uint64)
    acc = 0
    for _ in range(reps):
        for i in idx:
            s = states[i]
            reach_bits(s, T, s[S_PLAYER], out)
            acc += np.int64(out[0] & np.uint64(1))
    return acc


@njit(cache=True)
def t_main_part(states, reach, idx, T, part, reps):
    """One part of the main-action mask: 0 trades, 1 upgrades, 2 contracts, 3 ports."""
    mask = np.zeros(N_ACTIONS, np.int8)
    acc = 0
    for _ in range(reps):
        for i in idx:
            s = states[i]
            p = s[S_PLAYER]
            po = pofs(p)
            if part == 0:
                _trades(s, T, po, mask, -1)
            elif part == 1:
                upgrade_mask(s, T, po, False, mask)
            elif part == 2:
                acc += can_obtain(s, T, p)
                for b in range(n_boxes(s, T, p)):
                    acc += _fulfill_ok(s, T, p, b, reach[i])
                acc += _fulfill_both_ok(s, T, p, reach[i])
            else:
                acc += usable_ports(s, T, p, True, reach[i])
    return acc + mask[0]


def clock(fn, *args, min_s=0.3):
    """Seconds per rep of fn(*args, reps), reps grown until a call lasts min_s."""
    fn(*args, 0)                                    # compile or load from the cache
    reps = 1
    while True:
        t0 = time.thread_time()
        fn(*args, reps)
        dt = time.thread_time() - t0
        if dt >= min_s:
            return dt / reps
        reps *= 4


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=40,
                        help="games recorded (the corpus should fit the CPU cache)")
    parser.add_argument("--clans", choices=("draft", "none"), default="draft")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from caledonia_env import Game, GameConfig
    T = Game(GameConfig(num_players=args.players, seed=args.seed,
                        clans=None if args.clans == "none" else "draft")).tables
    automa = automa_switch(T)
    states, actions = record(T, args.games, args.seed, args.games * 2000, automa)
    n = len(states)
    t_rollouts(T, 2, 1, automa)
    t0 = time.thread_time()
    steps = t_rollouts(T, args.games, args.seed, automa)
    whole = (time.thread_time() - t0) / steps
    t_new_game(T, 2, 1, automa)
    t0 = time.thread_time()
    t_new_game(T, args.games, args.seed, automa)
    setup = (time.thread_time() - t0) / args.games
    ctx = states[:, S_CTX]
    rows = [("whole random step (rollout: mask + pick + apply)", whole, "")]
    mask_total = apply_total = 0.0
    copy_all = clock(t_copy, states) / n
    by_ctx = []
    for c in np.unique(ctx):
        idx = np.flatnonzero(ctx == c)
        share = len(idx) / n
        m = clock(t_mask_subset, states, idx, T) / len(idx)
        a = (clock(t_apply_subset, states, actions, idx, T, automa)
             - clock(t_copy_subset, states, idx)) / len(idx)
        mask_total += m * share
        apply_total += a * share
        by_ctx.append((CONTEXT_NAMES[c], share, m, a))
    rows.append(("legal_mask (all contexts)", mask_total, ""))
    rows.append(("random pick (random_pick: word scan of the mask)", clock(t_pick, states, T), ""))
    rows.append(("apply_action (all contexts)", apply_total, ""))
    rows.append(("new_game, per step", setup * args.games / steps, f"{setup * 1e6:.1f} µs/game"))
    reach = reaches(states, T)
    main_idx = np.flatnonzero((ctx == CTX_MAIN) & (states[:, S_PRICE_SHIFT_GOOD] < 0))
    share = len(main_idx) / n
    rows.append(("  expansion scan (place_scan, reach given) in main decisions",
                 clock(t_places, states, reach, main_idx, T) / len(main_idx) * share,
                 f"{clock(t_places, states, reach, main_idx, T) / len(main_idx) * 1e9:.0f} ns per call"))
    rows.append(("  reach (board.reach_bits) in main decisions",
                 clock(t_reach, states, main_idx, T) / len(main_idx) * share,
                 f"{clock(t_reach, states, main_idx, T) / len(main_idx) * 1e9:.0f} ns per call"))
    for part, name in enumerate(("trades (_trades)", "upgrades (upgrade_mask)",
                                 "contracts (can_obtain, fulfil checks)",
                                 "ports (usable_ports, reach given)")):
        per = clock(t_main_part, states, reach, main_idx, T, part) / len(main_idx)
        rows.append((f"  {name} in main decisions", per * share, f"{per * 1e9:.0f} ns per call"))
    rows.append(("state copy (reference: STATE_SIZE int32)", copy_all, f"{STATE_SIZE * 4} B"))
    rows.append(("observation (encode_obs, the deciding player's; not part of a step)",
                 clock(t_encode, states, T, np.zeros((128, OBS_SIZE), np.float32)) / n,
                 f"{OBS_SIZE} float32"))
    print(f"{args.players} players, clans {args.clans}, {args.games} games, {steps} steps "
          f"({steps / args.games:.0f}/game), {1 / whole:,.0f} steps/s in the rollout loop\n")
    print("| piece | ns per step | share of a step | note |\n|---|---|---|---|")
    for name, sec, note in rows:
        print(f"| {name} | {sec * 1e9:,.0f} | {sec / whole:.0%} | {note} |")
    print("\n| context | share of steps | mask ns | apply ns |\n|---|---|---|---|")
    for name, share, m, a in sorted(by_ctx, key=lambda r: -r[1] * (r[2] + r[3])):
        print(f"| {name} | {share:.1%} | {m * 1e9:,.0f} | {a * 1e9:,.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
