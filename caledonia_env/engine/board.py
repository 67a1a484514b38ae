"""Map queries over the state: occupancy, reach (R-3.3, R-4), neighbors (R-3.3.1)."""
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

from caledonia_env.engine.constants import (EMPTY, MAX_NODES, N_UNITS, NEUTRAL, OCC_SHIFT, OCC_STRIDE, TERRAIN_LOCH,
                        TERRAIN_PORT)
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (MAX_LEVEL, P_SHIP, P_SIZE, RB_LEN, RB_WORDS, S_OCC, S_PLAYERS, T_ACTIVE,
                     T_N_NODES, T_NEIGHBOR, T_REACH_BITS, T_REACH_CNT, T_REACH_LIST, T_TERRAIN,
                     T_UNIT_GOOD)


@njit(cache=True, inline="always")
def pofs(p):
    return S_PLAYERS + p * P_SIZE


@njit(cache=True)
def reach_mask(s, T, p, out):
    """out[v] = 1 if node v is a neighbor of, or within shipping range of, a unit of p (R-4)."""
    n = T[T_N_NODES]
    level = s[pofs(p) + P_SHIP]
    if level >= MAX_LEVEL:
        level = MAX_LEVEL - 1
    for v in range(n):
        out[v] = 0
    for m in range(n):
        o = s[S_OCC + m]
        if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
            cnt = T[T_REACH_CNT + m * MAX_LEVEL + level]
            base = T_REACH_LIST + m * MAX_NODES
            for i in range(cnt):
                out[T[base + i]] = 1


def ctz(x):
    """Index of the lowest set bit of the non-zero word ``x`` (plain Python, for
    NUMBA_DISABLE_JIT; compiled code uses the CPU instruction, see the overload below)."""
    x = int(x)
    return (x & -x).bit_length() - 1


@overload(ctz)
def _ctz_compiled(x):
    def impl(x):
        return np.int64(trailing_zeros(x))
    return impl


@njit(cache=True, inline="always")
def table_word(T, i):
    """The 64-bit word stored as two int32 halves at T[i] (low) and T[i + 1] (high)."""
    return np.uint64(np.int64(T[i]) & 0xFFFFFFFF) | (np.uint64(np.int64(T[i + 1]) & 0xFFFFFFFF)
                                                     << np.uint64(32))


@njit(cache=True, inline="always")
def node_words(s, n, p, w):
    """Word w (nodes 64w..64w+63 of the first n) of the empty-node and of p's own-node
    bitsets, built without branches (the loop vectorizes; EMPTY and NEUTRAL are never a
    player's occupant code)."""
    lo = w * 64
    empty = np.uint64(0)
    own = np.uint64(0)
    for m in range(lo, min(n, lo + 64)):
        o = s[S_OCC + m]
        b = np.uint64(m - lo)
        empty |= np.uint64(o == EMPTY) << b
        own |= np.uint64((o >> OCC_SHIFT) == p) << b
    return empty, own


@njit(cache=True)
def reach_bits(s, T, p, rb):
    """One pass over the map: ``rb[w]`` (w < RB_WORDS) is the bitset of the nodes p reaches
    (node v is bit v % 64 of word v // 64; the same nodes as ``reach_mask``, R-4),
    ``rb[RB_WORDS + w]`` the bitset of the empty nodes, ``rb[2 * RB_WORDS + w]`` that of
    p's own nodes (``rb`` has RB_LEN words).

    The empty and own bitsets are built word by word without branches (``node_words``);
    then only p's own nodes are visited to OR their reach."""
    level = s[pofs(p) + P_SHIP]
    if level >= MAX_LEVEL:
        level = MAX_LEVEL - 1
    n = T[T_N_NODES]
    for w in range(RB_WORDS):
        empty, own = node_words(s, n, p, w)
        rb[w] = 0
        rb[RB_WORDS + w] = empty
        rb[2 * RB_WORDS + w] = own
    for w in range(RB_WORDS):
        own = rb[2 * RB_WORDS + w]
        while own:
            m = w * 64 + ctz(own)
            own &= own - np.uint64(1)
            base = T_REACH_BITS + (m * MAX_LEVEL + level) * (2 * RB_WORDS)
            for k in range(RB_WORDS):
                rb[k] |= table_word(T, base + 2 * k)


@njit(cache=True)
def reach_of(s, T, p):
    """``reach_bits`` of player p in a new uint64[RB_LEN] array."""
    rb = np.empty(RB_LEN, np.uint64)
    reach_bits(s, T, p, rb)
    return rb


@njit(cache=True, inline="always")
def in_reach(rb, v):
    """Node v is in the reach bitset ``rb`` (``reach_bits``)."""
    return (rb[v >> 6] >> np.uint64(v & 63)) & np.uint64(1) != 0


@njit(cache=True)
def placeable(T, node, unit_terrain):
    """Empty-check excluded: node is an active land hex whose terrain fits the unit (R-3.3)."""
    terr = T[T_TERRAIN + node]
    if terr & (TERRAIN_LOCH | TERRAIN_PORT):
        return False
    if T[T_ACTIVE + node] == 0:
        return False
    return (terr & unit_terrain) != 0


@njit(cache=True)
def neighbor_goods(s, T, p, node):
    """Bitmask of goods of opponent units that are neighbors of ``node`` (R-3.3.1)."""
    mask = 0
    for k in range(6):
        w = T[T_NEIGHBOR + node * 6 + k]
        if w < 0:
            break
        o = s[S_OCC + w]
        if o >= 0 and o != NEUTRAL and o // OCC_STRIDE != p:
            g = T[T_UNIT_GOOD + o % OCC_STRIDE]
            if g >= 0:
                mask |= 1 << g
    return mask


@njit(cache=True)
def count_units(s, T, p, out):
    """out[u] = number of p's units of type u on the map."""
    for u in range(N_UNITS):
        out[u] = 0
    for m in range(T[T_N_NODES]):
        o = s[S_OCC + m]
        if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
            out[o % OCC_STRIDE] += 1

