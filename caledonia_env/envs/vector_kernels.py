"""The vector env's numba kernels: N games stepped, settled, reset and observed in one call.

Used by :class:`caledonia_env.envs.vector.CaledoniaVectorEnv` (its card is there). Each
env row ``i`` owns a state ``S[i]``, a static table index ``tidx[i]`` into ``TB``, a
learner seat ``seats[i]`` and a 64-bit LCG stream ``rng[i]`` that draws the table, the
game seed, the seat and the random opponents' moves. Mask rows are int8[``MASK_WIDTH``]
(:data:`caledonia_env.engine.actions.MASK_WIDTH`: N_ACTIONS padded to whole 8-byte words);
the random opponents pick with :func:`caledonia_env.engine.playout.random_pick` on their
env's stream.
The ``cfg`` vector of the kernels holds the options at the ``CFG_*`` indices.
Two kernels use the engine: :func:`vector_call` (step, reset, observe and the Python
opponents' apply and settle, chosen by ``op``) and :func:`step_parallel` (its step over
numba's threads). Each compiled function links and generates the code of the whole engine
below it again, so the per-env helpers (:func:`_advance`, :func:`_new_episode`,
:func:`_settle`, :func:`_one`) are inlined into the kernels and every serial use is one
function (issue #37; docs/performance.md, the first compile).
"""
import numpy as np
from numba import prange

from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.board import pofs
from caledonia_env.engine.constants import MAX_PLAYERS
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import P_SCORE, S_PLAYER, T_NP, game_over
from caledonia_env.engine.mask import legal_mask
from caledonia_env.engine.playout import random_pick
from caledonia_env.engine.rng import lcg_int
from caledonia_env.engine.setup import new_game
from caledonia_env.engine.step import apply_action
from caledonia_env.envs.observation import encode_obs
from caledonia_env.envs.rewards import SCORE_TOTAL, terminal_rewards

SEED_LIMIT = 2**31 - 2
# the kernels' int64 config vector
CFG_TABLE, CFG_SEAT, CFG_FIRST, CFG_MODE, CFG_PENALIZE, CFG_ADVANCE = range(6)
# what :func:`vector_call` does
OP_STEP, OP_RESET, OP_OBSERVE, OP_APPLY, OP_SETTLE = range(5)


@njit(cache=True, inline="always")
def _advance(s, T, seat, mask, rng, i, automa):
    """Random legal opponents play until ``seat`` decides or the game ends; returns their moves."""
    k = 0
    while not game_over(s) and s[S_PLAYER] != seat:
        legal_mask(s, T, mask)
        a = random_pick(mask, rng, i)
        if a < 0:
            break
        apply_action(s, T, a, automa)
        k += 1
    return k


@njit(cache=True, inline="always")
def _new_episode(i, S, TB, tidx, seats, rng, fixed_table, fixed_seat, first_player, mask,
                 advance, automa):
    """Fresh game for env i: table (map / player count), seed, seat; opponents move first.

    Returns the opponents' moves played (those of games that ended before the learner's
    first decision included)."""
    moves = 0
    while True:
        t = fixed_table if fixed_table >= 0 else lcg_int(rng, i, TB.shape[0])
        tidx[i] = t
        T = TB[t]
        new_game(S[i], T, lcg_int(rng, i, SEED_LIMIT), first_player, automa)
        seats[i] = fixed_seat if fixed_seat >= 0 else lcg_int(rng, i, T[T_NP])
        if advance:
            moves += _advance(S[i], T, seats[i], mask, rng, i, automa)
        if not game_over(S[i]):
            return moves


@njit(cache=True, inline="always")
def _settle(i, S, TB, tidx, seats, rng, fixed_table, fixed_seat, first_player, mode,
            final_obs, rewards, dones, scores, mask, advance, illegal, illegal_reward, automa):
    """If env i's game is over (or it was forfeited): reward, last obs, scores, auto-reset."""
    s = S[i]
    T = TB[tidx[i]]
    if not illegal and not game_over(s):
        rewards[i] = 0.0
        dones[i] = False
        return 0
    seat = seats[i]
    n = T[T_NP]
    for p in range(MAX_PLAYERS):
        scores[i, p] = s[pofs(p) + P_SCORE + SCORE_TOTAL] if (p < n and not illegal) else -1
    if illegal:
        rewards[i] = illegal_reward
    else:
        r = np.zeros(MAX_PLAYERS, np.float64)
        terminal_rewards(s, T, mode, r)
        rewards[i] = r[seat]
    dones[i] = True
    encode_obs(s, T, seat, final_obs[i])
    return _new_episode(i, S, TB, tidx, seats, rng, fixed_table, fixed_seat, first_player,
                        mask, advance, automa)


@njit(cache=True, inline="always")
def _one(i, S, TB, tidx, seats, rng, actions, cur_masks, cfg, obs, masks, final_obs, rewards,
         dones, scores, moves, illegal_reward, automa):
    """One env: learner action, random opponents, reward / auto-reset, observation and mask."""
    s = S[i]
    a = actions[i]
    illegal = cfg[CFG_PENALIZE] != 0 and (a < 0 or a >= N_ACTIONS or cur_masks[i, a] == 0)
    k = 0
    if not illegal:
        T = TB[tidx[i]]
        apply_action(s, T, a, automa)
        k = 1 + _advance(s, T, seats[i], masks[i], rng, i, automa)
    k += _settle(i, S, TB, tidx, seats, rng, cfg[CFG_TABLE], cfg[CFG_SEAT], cfg[CFG_FIRST],
                 cfg[CFG_MODE], final_obs, rewards, dones, scores, masks[i], True, illegal,
                 illegal_reward, automa)
    moves[i] += k
    T = TB[tidx[i]]
    encode_obs(s, T, seats[i], obs[i])
    legal_mask(s, T, masks[i])


@njit(cache=True)
def vector_call(op, S, TB, tidx, seats, rng, actions, cur_masks, cfg, obs, masks, final_obs,
                rewards, dones, scores, moves, illegal, illegal_reward, automa):
    """Every env row of ``S`` at once, by ``op``; returns -1 unless noted.

    - ``OP_RESET``: a fresh game in every env (opponents move first when
      ``cfg[CFG_ADVANCE]``), masks into ``masks``;
    - ``OP_STEP``: step every env in order (:func:`_one`), or in raise mode return the
      first env whose action is illegal (nothing stepped);
    - ``OP_OBSERVE``: observations and masks into ``obs`` and ``masks``;
    - ``OP_APPLY``: apply ``actions[i]`` where ``illegal[i]`` is False (Python opponents);
    - ``OP_SETTLE``: rewards, last observations, scores and resets of the games that ended
      or were forfeited (``illegal``), with no opponent moves (Python opponents).

    One compiled function for every use of the engine by the vector env: each compiled
    function links, optimises and generates the code of the whole engine below it again
    (issue #37; docs/performance.md, the first compile)."""
    # OP_RESET first: numba compiles the callees in the order of the code, so a first
    # compile starts with the setup while a compile helper does the mask and the step
    if op == OP_RESET:
        for i in range(S.shape[0]):
            _new_episode(i, S, TB, tidx, seats, rng, cfg[CFG_TABLE], cfg[CFG_SEAT],
                         cfg[CFG_FIRST], masks[i], cfg[CFG_ADVANCE] != 0, automa)
    elif op == OP_STEP:
        if cfg[CFG_PENALIZE] == 0:
            bad = first_illegal(cur_masks, actions)
            if bad >= 0:
                return bad
        for i in range(S.shape[0]):
            _one(i, S, TB, tidx, seats, rng, actions, cur_masks, cfg, obs, masks, final_obs,
                 rewards, dones, scores, moves, illegal_reward, automa)
    elif op == OP_OBSERVE:
        for i in range(S.shape[0]):
            T = TB[tidx[i]]
            encode_obs(S[i], T, seats[i], obs[i])
            legal_mask(S[i], T, masks[i])
    elif op == OP_APPLY:
        for i in range(S.shape[0]):
            if not illegal[i]:
                apply_action(S[i], TB[tidx[i]], actions[i], automa)
    elif op == OP_SETTLE:
        for i in range(S.shape[0]):
            _settle(i, S, TB, tidx, seats, rng, cfg[CFG_TABLE], cfg[CFG_SEAT], cfg[CFG_FIRST],
                    cfg[CFG_MODE], final_obs, rewards, dones, scores, masks[i], False,
                    illegal[i], illegal_reward, automa)
    return -1


@njit(cache=True, parallel=True)
def step_parallel(S, TB, tidx, seats, rng, actions, cur_masks, cfg, obs, masks, final_obs,
                   rewards, dones, scores, moves, illegal, illegal_reward, automa):
    """As :func:`vector_call`'s ``OP_STEP``, the envs spread over numba's threads (prange);
    the same arguments but ``op``."""
    if cfg[CFG_PENALIZE] == 0:
        bad = first_illegal(cur_masks, actions)
        if bad >= 0:
            return bad
    for j in prange(S.shape[0]):
        i = np.int64(j)     # prange counts in uint64: one compilation of _one and its callees
        _one(i, S, TB, tidx, seats, rng, actions, cur_masks, cfg, obs, masks, final_obs,
             rewards, dones, scores, moves, illegal_reward, automa)
    return -1


@njit(cache=True)
def first_illegal(cur_masks, actions):
    """Index of the first env whose action is not legal, -1 if all are."""
    for i in range(actions.shape[0]):
        a = actions[i]
        if a < 0 or a >= N_ACTIONS or cur_masks[i, a] == 0:
            return i
    return -1


@njit(cache=True)
def sample_legal_actions(masks, rng, out):
    """out[i] = a uniformly random legal action of masks[i] (-1 if none); rng: int64[N] state.

    ``masks`` rows must be padded to MASK_WIDTH (as the vector env's buffers are)."""
    for i in range(masks.shape[0]):
        out[i] = random_pick(masks[i], rng, i)
