"""Money, market and upgrade effects: R-3.1 trade, R-3.3.1 purchases, R-3.4-3.6 upgrades."""

from caledonia_env.engine.actions import A_HIRE, A_SHIP, A_TECH
from caledonia_env.engine.clans import cpar
from caledonia_env.engine.constants import N_GOODS
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (P_GOODS, P_MARKET, P_MERCH, P_MONEY, P_SHIP, P_TECH, P_TRACK,
                     T_CLAN_MARKET_MONEY, T_CLAN_TECH_OK, T_HIRE_BONUS_COST, T_HIRE_COST, T_NB_DISC,
                     T_SHIP_BONUS_COST, T_SHIP_COST, T_SHIP_MAX, T_TECH_BONUS_COST, T_TECH_COST)
from caledonia_env.engine.market import market_price, move_price


@njit(cache=True)
def can_trade(s, T, poff, side, g, k):
    """R-3.1: k merchants in supply, buy/sell exclusion, money (buy) or goods (sell).
    Stewart's market money arrives before paying (R-8.8)."""
    if s[poff + P_MERCH] < k:
        return False
    if s[poff + P_MARKET + (1 - side) * N_GOODS + g] > 0:
        return False
    if side == 0:
        return s[poff + P_MONEY] + cpar(s, T, poff, T_CLAN_MARKET_MONEY) >= k * market_price(s, T, g)
    return s[poff + P_GOODS + g] >= k


@njit(cache=True, inline="always")
def do_trade(s, T, poff, side, g, k):
    price = market_price(s, T, g)
    s[poff + P_MONEY] += cpar(s, T, poff, T_CLAN_MARKET_MONEY)   # before paying
    s[poff + P_MERCH] -= k
    s[poff + P_MARKET + side * N_GOODS + g] += k
    if side == 0:
        s[poff + P_MONEY] -= k * price
        s[poff + P_GOODS + g] += k
        move_price(s, T, g, k)
    else:
        s[poff + P_MONEY] += k * price
        s[poff + P_GOODS + g] -= k
        move_price(s, T, g, -k)


@njit(cache=True)
def nb_price(s, T, g):
    """Neighborhood price of one unit: price minus the discount, never below 0 (R-3.3.1)."""
    disc = T[T_NB_DISC + g]
    v = market_price(s, T, g) - disc
    return v if v > 0 else 0


@njit(cache=True)
def can_nb_buy(s, T, poff, g, k):
    if s[poff + P_MERCH] < k:
        return False
    if s[poff + P_MARKET + N_GOODS + g] > 0:
        return False
    return s[poff + P_MONEY] + cpar(s, T, poff, T_CLAN_MARKET_MONEY) >= k * nb_price(s, T, g)


@njit(cache=True, inline="always")
def do_nb_buy(s, T, poff, g, k):
    s[poff + P_MONEY] += cpar(s, T, poff, T_CLAN_MARKET_MONEY)   # per good type
    s[poff + P_MONEY] -= k * nb_price(s, T, g)
    s[poff + P_MERCH] -= k
    s[poff + P_MARKET + g] += k
    s[poff + P_GOODS + g] += k
    move_price(s, T, g, k)


@njit(cache=True, inline="always")
def ship_cost(T, bonus):
    return T[T_SHIP_BONUS_COST] if bonus else T[T_SHIP_COST]


@njit(cache=True)
def can_ship(s, T, poff, bonus):
    """R-3.4 (bonus: the export upgrade bonus price, R-3.7.2)."""
    return s[poff + P_SHIP] < T[T_SHIP_MAX] and s[poff + P_MONEY] >= ship_cost(T, bonus)


@njit(cache=True, inline="always")
def do_ship(s, T, poff, bonus):
    s[poff + P_MONEY] -= ship_cost(T, bonus)
    s[poff + P_SHIP] += 1


@njit(cache=True)
def tech_cost(T, bonus):
    return T[T_TECH_BONUS_COST] if bonus else T[T_TECH_COST]


@njit(cache=True)
def can_tech(s, T, poff, t, bonus):
    """R-3.5; never for a clan without technology (R-8.5 MacDonald)."""
    return (s[poff + P_TECH + t] == 0 and cpar(s, T, poff, T_CLAN_TECH_OK) != 0
            and s[poff + P_MONEY] >= tech_cost(T, bonus))


@njit(cache=True, inline="always")
def do_tech(s, T, poff, t, bonus):
    s[poff + P_MONEY] -= tech_cost(T, bonus)
    s[poff + P_TECH + t] = 1


@njit(cache=True, inline="always")
def hire_cost(T, bonus):
    return T[T_HIRE_BONUS_COST] if bonus else T[T_HIRE_COST]


@njit(cache=True)
def can_hire(s, T, poff, bonus):
    """R-3.6 (bonus: the export upgrade bonus price, R-3.7.2)."""
    return s[poff + P_TRACK] > 0 and s[poff + P_MONEY] >= hire_cost(T, bonus)


@njit(cache=True, inline="always")
def do_hire(s, T, poff, bonus):
    s[poff + P_MONEY] -= hire_cost(T, bonus)
    s[poff + P_TRACK] -= 1
    s[poff + P_MERCH] += 1


@njit(cache=True)
def upgrade_mask(s, T, poff, bonus, mask):
    """Mark the upgrades the player can pay (R-3.4 shipping, R-3.5 technology, R-3.6 merchant),
    at the export upgrade bonus prices with ``bonus`` (R-3.7.2)."""
    if can_ship(s, T, poff, bonus):
        mask[A_SHIP] = 1
    for t in range(2):
        if can_tech(s, T, poff, t, bonus):
            mask[A_TECH + t] = 1
    if can_hire(s, T, poff, bonus):
        mask[A_HIRE] = 1


@njit(cache=True)
def do_upgrade(s, T, poff, a, bonus):
    """Apply upgrade action ``a`` (A_SHIP, A_TECH + t or A_HIRE), bonus price with ``bonus``."""
    if a == A_SHIP:
        do_ship(s, T, poff, bonus)
    elif a == A_HIRE:
        do_hire(s, T, poff, bonus)
    else:
        do_tech(s, T, poff, a - A_TECH, bonus)
