"""New game from static tables and a seed (R-1): pile, tiles, ports, market, order, clans
(R-1.7, R-9.4), solo blockers (R-9.2) and the smaller map (R-9.3)."""
import numpy as np

from caledonia_env.engine.board import pofs
from caledonia_env.engine.clans import apply_clan
from caledonia_env.engine.constants import (CLAN_AUCTION, CLAN_DRAFT, CLAN_FIXED, EMPTY, MAX_CONTRACTS, MAX_COVER,
                        MAX_DRAW, MAX_NODES, MAX_PLAYERS, MAX_SLOTS, MAX_START_PICKS, N_CLANS,
                        N_CORNERS, N_GOODS, N_PORT_TILES, N_ROUNDS_MAX, N_SCORING_TILES, N_UNITS,
                        NEUTRAL, PH_SETUP_PICK, TERRAIN_LOCH, TERRAIN_PORT)
from caledonia_env.engine.contracts import fill_slots
from caledonia_env.engine.automa.phases import automa_setup
from caledonia_env.engine.automa.run import run_automata
from caledonia_env.engine.flow import resolve, start_auction
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (P_BOARD, P_BOX, P_START_TILE, S_AUC_LEADER, S_AUC_SEAT, S_DECK, S_DECK_COUNT,
                     S_DECK_HEAD, S_DRAWN, S_NEXT_ORDER, S_NP, S_OCC, S_ORDER, S_PHASE,
                     S_PICK_CLANS, S_PICKS, S_PORT_KIND, S_PORTS, S_PRICE_SHIFT_GOOD, S_PRICE_STEP,
                     S_ROUND, S_ROW_FROM, S_SETUP_PTR, S_SLOTS, S_SWAP_NODE, S_TILES, STATE_SIZE,
                     T_ACTIVE, T_CLAN_MODE, T_CLAN_POOL, T_COVER, T_FIXED_CLAN, T_MODULE,
                     T_N_CONTRACTS, T_N_COVER, T_N_HEX, T_N_START_TILES, T_NP, T_PORT_POOL,
                     T_PORTS_ON, T_ROUNDS, T_SCORING_TILES_ON, T_SMALL_MAP,
                     T_SOLO_START_SLOTS, T_STEP_START, T_TERRAIN, T_TILE_POOL, T_UNIT_COUNT)
from caledonia_env.engine.solo import place_blockers
from caledonia_env.engine.rng import rand_int, seed_rng, shuffle


@njit(cache=True, inline="always")
def _fill(s, start, count, value):
    for i in range(count):
        s[start + i] = value


@njit(cache=True)
def _draw_tiles(s, T, pool_at, pool_size, dest, count):
    """Shuffle the tiles switched on in the table's pool (``T[pool_at + t]``) and put the
    first ``count`` of them (fewer if the pool is smaller) at ``s[dest:]``."""
    pool = np.empty(pool_size, np.int32)
    k = 0
    for t in range(pool_size):
        if T[pool_at + t]:
            pool[k] = t
            k += 1
    shuffle(s, pool, 0, k)
    for i in range(min(count, k)):
        s[dest + i] = pool[i]


@njit(cache=True)
def new_game(s, T, seed, first_player, automa):
    """Write a fresh game into state row ``s``; ``first_player`` -1 draws it (R-1.6).
    Automa setup events (A-1) are counted, not kept (see :func:`new_game_log`); ``automa``:
    ``automa.deck.automa_switch(T)``."""
    return new_game_log(s, T, seed, first_player, s[:0], automa)


@njit(cache=True)
def new_game_log(s, T, seed, first_player, amlog, automa):
    """:func:`new_game` that writes the Automa setup events into ``amlog`` (an event log,
    zeroed first; see ``step.apply_action_log``)."""
    s[:] = 0
    amlog[:] = 0
    n = T[T_NP]
    s[S_NP] = n
    seed_rng(s, seed)
    for f, c in ((S_SLOTS, MAX_SLOTS), (S_TILES, N_ROUNDS_MAX), (S_PORTS, N_CORNERS),
                 (S_OCC, MAX_NODES), (S_DRAWN, MAX_DRAW), (S_PICKS, MAX_START_PICKS),
                 (S_PICK_CLANS, MAX_START_PICKS), (S_NEXT_ORDER, MAX_PLAYERS),
                 (S_ORDER, MAX_PLAYERS), (S_DECK, MAX_CONTRACTS)):
        _fill(s, f, c, -1)
    s[S_PRICE_SHIFT_GOOD] = -1
    s[S_PORT_KIND] = -1
    s[S_SWAP_NODE] = -1
    s[S_ROW_FROM] = -1
    s[S_AUC_LEADER] = -1
    # contracts: shuffled pile, one face-up per active slot
    nc = T[T_N_CONTRACTS]
    for i in range(nc):
        s[S_DECK + i] = i
    shuffle(s, s, S_DECK, nc)
    s[S_DECK_HEAD] = 0
    s[S_DECK_COUNT] = nc
    fill_slots(s, T, T[T_SOLO_START_SLOTS])     # solo: five contracts
    # scoring tiles: 5 of the pool in random order
    if T[T_SCORING_TILES_ON]:
        _draw_tiles(s, T, T_TILE_POOL, N_SCORING_TILES, S_TILES, T[T_ROUNDS])
    # ports: 4 tiles of the pool, one per corner
    if T[T_PORTS_ON]:
        _draw_tiles(s, T, T_PORT_POOL, N_PORT_TILES, S_PORTS, N_CORNERS)
    # market
    for g in range(N_GOODS):
        s[S_PRICE_STEP + g] = T[T_STEP_START + g]
    # first player, then clockwise
    first = first_player if first_player >= 0 else rand_int(s, n)
    for i in range(n):
        s[S_ORDER + i] = (first + i) % n
    # player boards (a fixed clan's start, R-8)
    mode = T[T_CLAN_MODE]
    for p in range(n):
        poff = pofs(p)
        for u in range(N_UNITS):
            s[poff + P_BOARD + u] = T[T_UNIT_COUNT + u]
        s[poff + P_BOX] = -1
        s[poff + P_BOX + 1] = -1
        s[poff + P_START_TILE] = -1
        apply_clan(s, T, poff, T[T_FIXED_CLAN + p] if mode == CLAN_FIXED else -1)
    # players + 1 starting tiles on offer (R-9.4: as many as players)
    tiles = np.empty(16, np.int32)
    nt = T[T_N_START_TILES]
    for t in range(nt):
        tiles[t] = t
    shuffle(s, tiles, 0, nt)
    n_picks = n if mode == CLAN_AUCTION else n + 1
    for i in range(min(n_picks, nt, MAX_START_PICKS)):
        s[S_PICKS + i] = tiles[i]
    if mode == CLAN_DRAFT or mode == CLAN_AUCTION:
        # clan tiles drawn at random, each paired with a starting tile
        clans = np.empty(N_CLANS, np.int32)
        k = 0
        for c in range(N_CLANS):
            if (T[T_CLAN_POOL] >> c) & 1:
                clans[k] = c
                k += 1
        shuffle(s, clans, 0, k)
        for i in range(min(n_picks, k, MAX_START_PICKS)):
            s[S_PICK_CLANS + i] = clans[i]
    place_blockers(s, T)
    cover_hexes(s, T)
    s[S_ROUND] = 1
    s[S_PHASE] = PH_SETUP_PICK
    s[S_SETUP_PTR] = 0
    if mode == CLAN_AUCTION:
        s[S_AUC_SEAT] = 0
        start_auction(s, T, rand_int(s, n))     # a random player opens
    if automa is not None:
        automa_setup(s, T, amlog)               # Automa seats, before any human decision
    resolve(s, T, automa)
    if automa is not None:
        run_automata(s, T, amlog)
    return STATE_SIZE


@njit(cache=True, inline="always")
def cover_hexes(s, T):
    """R-9.3 smaller map: the given hexes, or one random active land hex per module."""
    for i in range(min(T[T_N_COVER], MAX_COVER)):
        s[S_OCC + T[T_COVER + i]] = NEUTRAL
    if not T[T_SMALL_MAP]:
        return
    cand = np.empty(MAX_NODES, np.int32)
    for m in range(N_CORNERS):
        k = 0
        for v in range(T[T_N_HEX]):
            if T[T_MODULE + v] != m or T[T_TERRAIN + v] & (TERRAIN_LOCH | TERRAIN_PORT):
                continue
            if T[T_ACTIVE + v] and s[S_OCC + v] == EMPTY:
                cand[k] = v
                k += 1
        if k > 0:
            s[S_OCC + cand[rand_int(s, k)]] = NEUTRAL
