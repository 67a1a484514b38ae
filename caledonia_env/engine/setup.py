"""New game from static tables and a seed (R-1): pile, tiles, ports, market, order."""
import numpy as np
from numba import njit

from .board import pofs
from .constants import (MAX_CONTRACTS, MAX_DRAW, MAX_NODES, MAX_PLAYERS, MAX_SLOTS,
                        MAX_START_PICKS, N_CORNERS, N_GOODS, N_PORT_TILES, N_ROUNDS_MAX,
                        N_SCORING_TILES, N_UNITS, PH_SETUP_PICK)
from .contracts import refill_slots
from .flow import resolve
from .layout import (P_BOX, P_CLAN, P_MERCH, P_BOARD, P_START_TILE, P_TRACK, S_DECK,
                     S_DECK_COUNT, S_DECK_HEAD, S_DRAWN, S_NEXT_ORDER, S_NP, S_OCC,
                     S_ORDER, S_P4_GOOD, S_PHASE, S_PICK_CLANS, S_PICKS, S_PORT_KIND,
                     S_PORTS, S_PRICE, S_ROUND, S_SETUP_PTR, S_SLOTS, S_SWAP_NODE,
                     S_TILES, STATE_SIZE, T_MERCH_SUPPLY, T_MERCH_TRACK, T_N_CONTRACTS,
                     T_N_START_TILES, T_NP, T_PORT_POOL, T_PORTS_ON, T_PRICE_START,
                     T_ROUNDS, T_SCORING_TILES_ON, T_TILE_POOL, T_UNIT_COUNT)
from .rng import rand_int, seed_rng, shuffle


@njit(cache=True)
def _fill(s, start, count, value):
    for i in range(count):
        s[start + i] = value


@njit(cache=True)
def new_game(s, T, seed, first_player):
    """Write a fresh game into state row ``s``; ``first_player`` -1 draws it (R-1.6)."""
    s[:] = 0
    n = T[T_NP]
    s[S_NP] = n
    seed_rng(s, seed)
    for f, c in ((S_SLOTS, MAX_SLOTS), (S_TILES, N_ROUNDS_MAX), (S_PORTS, N_CORNERS),
                 (S_OCC, MAX_NODES), (S_DRAWN, MAX_DRAW), (S_PICKS, MAX_START_PICKS),
                 (S_PICK_CLANS, MAX_START_PICKS), (S_NEXT_ORDER, MAX_PLAYERS),
                 (S_ORDER, MAX_PLAYERS), (S_DECK, MAX_CONTRACTS)):
        _fill(s, f, c, -1)
    s[S_P4_GOOD] = -1
    s[S_PORT_KIND] = -1
    s[S_SWAP_NODE] = -1
    # contracts: shuffled pile, one face-up per active slot
    nc = T[T_N_CONTRACTS]
    for i in range(nc):
        s[S_DECK + i] = i
    shuffle(s, s, S_DECK, nc)
    s[S_DECK_HEAD] = 0
    s[S_DECK_COUNT] = nc
    refill_slots(s, T)
    # scoring tiles: 5 of the pool in random order
    if T[T_SCORING_TILES_ON]:
        pool = np.empty(N_SCORING_TILES, np.int32)
        k = 0
        for t in range(N_SCORING_TILES):
            if T[T_TILE_POOL + t]:
                pool[k] = t
                k += 1
        shuffle(s, pool, 0, k)
        for r in range(min(T[T_ROUNDS], k)):
            s[S_TILES + r] = pool[r]
    # ports: 4 tiles of the pool, one per corner
    if T[T_PORTS_ON]:
        pool = np.empty(N_PORT_TILES, np.int32)
        k = 0
        for t in range(N_PORT_TILES):
            if T[T_PORT_POOL + t]:
                pool[k] = t
                k += 1
        shuffle(s, pool, 0, k)
        for c in range(min(N_CORNERS, k)):
            s[S_PORTS + c] = pool[c]
    # market
    for g in range(N_GOODS):
        s[S_PRICE + g] = T[T_PRICE_START + g]
    # first player, then clockwise
    first = first_player if first_player >= 0 else rand_int(s, n)
    for i in range(n):
        s[S_ORDER + i] = (first + i) % n
    # player boards
    for p in range(n):
        po = pofs(p)
        for u in range(N_UNITS):
            s[po + P_BOARD + u] = T[T_UNIT_COUNT + u]
        s[po + P_MERCH] = T[T_MERCH_SUPPLY]
        s[po + P_TRACK] = T[T_MERCH_TRACK]
        s[po + P_BOX] = -1
        s[po + P_BOX + 1] = -1
        s[po + P_CLAN] = -1
        s[po + P_START_TILE] = -1
    # players + 1 starting tiles on offer
    tiles = np.empty(16, np.int32)
    nt = T[T_N_START_TILES]
    for t in range(nt):
        tiles[t] = t
    shuffle(s, tiles, 0, nt)
    for i in range(min(n + 1, nt, MAX_START_PICKS)):
        s[S_PICKS + i] = tiles[i]
    s[S_ROUND] = 1
    s[S_PHASE] = PH_SETUP_PICK
    s[S_SETUP_PTR] = 0
    resolve(s, T)
    return STATE_SIZE
