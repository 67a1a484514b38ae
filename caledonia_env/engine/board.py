"""Map queries over the state: occupancy, reach (R-3.3, R-4), neighbors (R-3.3.1)."""
import numpy as np
from numba import njit

from .constants import MAX_NODES, N_UNITS, NEUTRAL, OCC_STRIDE, T_LOCH, T_PORT
from .layout import (MAX_LEVEL, P_SHIP, P_SIZE, S_OCC, S_PLAYERS, T_ACTIVE, T_N_NODES,
                     T_NEIGHBOR, T_REACH_CNT, T_REACH_LIST, T_TERRAIN, T_UNIT_GOOD)


@njit(cache=True, inline="always")
def pofs(p):
    return S_PLAYERS + p * P_SIZE


@njit(cache=True, inline="always")
def occ_player(v):
    if v < 0 or v == NEUTRAL:
        return -1
    return v // OCC_STRIDE


@njit(cache=True, inline="always")
def occ_unit(v):
    return v % OCC_STRIDE


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


@njit(cache=True)
def reach_of(s, T, p):
    """``reach_mask`` of player p in a new int8[MAX_NODES] array."""
    out = np.empty(MAX_NODES, np.int8)
    reach_mask(s, T, p, out)
    return out


@njit(cache=True)
def placeable(T, node, unit_terrain):
    """Empty-check excluded: node is an active land hex whose terrain fits the unit (R-3.3)."""
    terr = T[T_TERRAIN + node]
    if terr & (T_LOCH | T_PORT):
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

