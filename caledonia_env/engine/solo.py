"""Solo mode (R-9.2): neutral blockers, the market phase with its two dice, solo scoring."""

from caledonia_env.engine.constants import EMPTY, NEUTRAL, TERRAIN_LOCH, TERRAIN_PORT
from caledonia_env.engine.contracts import refill_slots
from caledonia_env.engine.market import move_price
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (MAX_THRESH, S_OCC, S_PRICE_STEP, S_ROUND, S_SLOTS, T_ACTIVE, T_LAND_COST,
                     T_N_HEX, T_SOLO_AVG_HI, T_SOLO_AVG_LO, T_SOLO_BLOCK_COST,
                     T_SOLO_GOODS_DIE, T_SOLO_GOODS_FACES, T_SOLO_MARKET_ROUNDS,
                     T_SOLO_N_CHANGE, T_SOLO_PRICE_DIE, T_SOLO_PRICE_FACES, T_SOLO_REMOVE,
                     T_TERRAIN)
from caledonia_env.engine.rng import rand_int


@njit(cache=True, inline="always")
def place_blockers(s, T):
    """A neutral piece on every active land hex of the blocked land cost (R-9.2)."""
    cost = T[T_SOLO_BLOCK_COST]
    if cost < 0:
        return
    for v in range(T[T_N_HEX]):
        terr = T[T_TERRAIN + v]
        if terr & (TERRAIN_LOCH | TERRAIN_PORT) or T[T_ACTIVE + v] == 0:
            continue
        if T[T_LAND_COST + v] == cost and s[S_OCC + v] == EMPTY:
            s[S_OCC + v] = NEUTRAL


@njit(cache=True, inline="always")
def solo_price_change(s, T, g, d):
    """One good's change (R-9.2): a low price rises by |d| steps, a high one falls by |d|,
    an average one moves by d (bands: the market's solo 'average' brackets, in steps)."""
    step = s[S_PRICE_STEP + g]
    a = d if d > 0 else -d
    if step < T[T_SOLO_AVG_LO + g]:
        move_price(s, T, g, a)
    elif step > T[T_SOLO_AVG_HI + g]:
        move_price(s, T, g, -a)
    else:
        move_price(s, T, g, d)


@njit(cache=True, inline="always")
def is_market_round(s, T):
    return (T[T_SOLO_MARKET_ROUNDS] >> s[S_ROUND]) & 1


@njit(cache=True, inline="always")
def market_phase(s, T):
    """R-9.2 market phase of the preparation: three different goods (the goods die is
    rolled again on a repeat) change by the price die; then the contract slots are refilled
    and the contract the last price die points to leaves the game. Dice use the state RNG."""
    changed = 0
    last = -1
    n_goods = T[T_SOLO_GOODS_FACES]
    for _ in range(T[T_SOLO_N_CHANGE]):
        g = T[T_SOLO_GOODS_DIE + rand_int(s, n_goods)]
        while changed & (1 << g):
            g = T[T_SOLO_GOODS_DIE + rand_int(s, n_goods)]
        changed |= 1 << g
        last = rand_int(s, T[T_SOLO_PRICE_FACES])
        solo_price_change(s, T, g, T[T_SOLO_PRICE_DIE + last])
    refill_slots(s, T)
    if last >= 0:
        s[S_SLOTS + T[T_SOLO_REMOVE + last]] = -1


@njit(cache=True)
def threshold_vp(T, off, n, value):
    """VP of the first (min, vp) threshold row that ``value`` reaches (rows by min, descending)."""
    for i in range(min(n, MAX_THRESH)):
        if value >= T[off + 2 * i]:
            return T[off + 2 * i + 1]
    return 0
