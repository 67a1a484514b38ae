"""Seeded random numbers stored in the state (minstd), so clones replay exactly, and the
vector env's per-env 64-bit LCG streams."""

from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import S_RNG

_MOD = 2147483647


@njit(cache=True)
def seed_rng(s, seed):
    x = (seed % (_MOD - 1)) + 1
    s[S_RNG] = x
    for _ in range(4):
        rand_int(s, 2)


@njit(cache=True)
def rand_int(s, n):
    """Uniform integer in [0, n)."""
    x = (int(s[S_RNG]) * 48271) % _MOD   # int: 64-bit product without the JIT too
    s[S_RNG] = x
    return ((x - 1) * int(n)) // (_MOD - 1)


@njit(cache=True)
def shuffle(s, arr, start, count):
    """Fisher-Yates shuffle of arr[start:start+count] in place."""
    for i in range(count - 1, 0, -1):
        j = rand_int(s, i + 1)
        tmp = arr[start + i]
        arr[start + i] = arr[start + j]
        arr[start + j] = tmp


@njit(cache=True, inline="always")
def lcg_int(rng, i, n):
    """Uniform int in [0, n) from stream ``i`` of the int64 LCG state vector ``rng`` (its
    high bits)."""
    x = rng[i] * 6364136223846793005 + 1442695040888963407
    rng[i] = x
    return ((x >> 33) & 0x7FFFFFFF) % n
