"""Random legal playouts inside numba (benchmarks, property tests, rollouts) and the one
uniformly random pick from a legal-action mask (also the vector env's random opponents)."""
import numpy as np

from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import STATE_SIZE, copy_state, game_over
from caledonia_env.engine.mask import N_WORDS, legal_mask, n_legal
from caledonia_env.engine.rng import lcg_int
from caledonia_env.engine.setup import new_game
from caledonia_env.engine.step import apply_action


BLOCK = 8                           # words per block in random_pick's search


@njit(cache=True, inline="always")
def _word_count(x):
    """Set bytes of a mask word (every mask byte is 0 or 1): the sum of its bytes, folded
    in halves (no byte exceeds 8, so nothing carries)."""
    x = x + (x >> np.uint64(32))
    x = x + (x >> np.uint64(16))
    x = x + (x >> np.uint64(8))
    return np.int64(x & np.uint64(0xFF))


@njit(cache=True, inline="always")
def _block_count(words, w0):
    """Set bytes in the 8 words from ``w0`` (at most 64, so the byte-sum multiply is exact)."""
    acc = np.uint64(0)
    for w in range(w0, w0 + BLOCK):
        acc += words[w]
    return np.int64((acc * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True)
def random_pick(mask, lcg=None, i=0):
    """A uniformly random id set in ``mask`` (int8, at least N_ACTIONS long, 0 after), -1 if
    none: the r-th set id, r drawn from numba's np.random stream, or with ``lcg`` from
    stream ``i`` of that int64 LCG state vector (``rng.lcg_int``: the vector env's per-env
    streams). One draw either way, none for an empty mask.

    The count is :func:`~caledonia_env.engine.mask.n_legal`; the search skips whole blocks
    of 8 words by their count, then words, then bytes."""
    k = n_legal(mask)
    if k == 0:
        return -1
    if lcg is None:
        r = np.random.randint(k)
    else:
        r = lcg_int(lcg, i, k)
    words = mask[:N_WORDS * 8].view(np.uint64)
    w = 0
    while w + BLOCK <= N_WORDS:
        c = _block_count(words, w)
        if r < c:
            break
        r -= c
        w += BLOCK
    while w < N_WORDS:
        x = words[w]
        if x:
            c = _word_count(x)
            if r < c:
                for a in range(8 * w, 8 * w + 8):
                    if mask[a]:
                        if r == 0:
                            return a
                        r -= 1
            r -= c
        w += 1
    for a in range(N_WORDS * 8, N_ACTIONS):
        if mask[a]:
            if r == 0:
                return a
            r -= 1
    return -1


@njit(cache=True)
def random_legal_action(s, T, mask):
    """A uniformly random legal action (numba's np.random stream), -1 if none."""
    legal_mask(s, T, mask)
    return random_pick(mask)


@njit(cache=True)
def rollout(s, T, seed, max_steps, automa):
    """Play random legal actions from state ``s`` until the game ends; returns steps taken."""
    np.random.seed(seed)
    mask = np.zeros(N_ACTIONS, np.int8)
    steps = 0
    while not game_over(s) and steps < max_steps:
        a = random_legal_action(s, T, mask)
        if a < 0:
            return -1 - steps
        apply_action(s, T, a, automa)
        steps += 1
    return steps


@njit(cache=True)
def random_games(T, n_games, seed, final_states, automa):
    """Play ``n_games`` random games from fresh setups; returns the total number of steps."""
    s = np.zeros(STATE_SIZE, np.int32)
    total = 0
    for g in range(n_games):
        new_game(s, T, seed + g, -1, automa)
        steps = rollout(s, T, seed * 7919 + g, 100000, automa)
        if steps < 0:
            return steps
        total += steps
        if g < final_states.shape[0]:
            copy_state(final_states[g], s)      # a slice copy compiles shape-error text
    return total
