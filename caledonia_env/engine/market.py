"""The market's price tracks (R-3.1): each good's price marker stands on a numbered step.

A track's steps are numbered ``T_STEP_LO .. T_STEP_HI``, cheapest first; ``T_TRACK`` holds
the price of each step (printed tracks repeat a price on consecutive steps). The marker
moves one step per unit traded, clamped at the ends. ``tables`` numbers the cheapest step
by its price, so on a track of £1 steps the step number is the price itself.
"""
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import MAX_MARKET_STEPS, S_PRICE_STEP, T_STEP_HI, T_STEP_LO, T_TRACK


@njit(cache=True)
def clamp_step(T, g, v):
    """Step number ``v`` of good g, clamped to its track."""
    lo = T[T_STEP_LO + g]
    hi = T[T_STEP_HI + g]
    return lo if v < lo else (hi if v > hi else v)


@njit(cache=True, inline="always")
def price_at(T, g, step):
    """Price of good g at step number ``step``."""
    return T[T_TRACK + g * MAX_MARKET_STEPS + step - T[T_STEP_LO + g]]


@njit(cache=True)
def market_price(s, T, g):
    """Good g's current market price: the price of its marker's step (R-3.1)."""
    return price_at(T, g, s[S_PRICE_STEP + g])


@njit(cache=True)
def move_price(s, T, g, steps):
    """Move good g's price marker by ``steps``, clamped to its track (R-3.1)."""
    s[S_PRICE_STEP + g] = clamp_step(T, g, s[S_PRICE_STEP + g] + steps)
