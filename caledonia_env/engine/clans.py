"""Clan abilities (R-8) as cheap lookups into the per-clan rows of the static table.

Every player's clan (``P_CLAN``, -1 for none) selects one row of the ``T_CLAN_*``
tables (row ``NO_CLAN`` holds the no-clan values), so a clan check in the hot
path is one table read, never a branch on the clan's identity.
"""

from caledonia_env.engine.constants import (DAIRY, DISTILLERY, EMPTY, FISHERMAN, GRAIN, LUMBERJACK, MAX_BREW,
                        MAX_PROCESS, MILK, MINER, N_UNITS, NO_CLAN, OCC_STRIDE, TERRAIN_LOCH,
                        TERRAIN_PORT, WHISKY)
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (P_BEER, P_BOARD, P_CELLAR, P_CLAN, P_GOODS, P_MERCH, P_MONEY, P_SHIP, P_TRACK,
                     S_MAIN_DONE, S_OCC, S_PORTS, S_PRICE_SHIFT_GOOD, S_ROWED, T_ADJ,
                     T_CLAN_ANY_WORKER, T_CLAN_BEER_GRAIN, T_CLAN_BEER_MONEY, T_CLAN_BUILD_DISC,
                     T_CLAN_CELLAR_MONEY, T_CLAN_DELTA_DISC, T_CLAN_FISH_LAND, T_CLAN_MERCH_SUPPLY,
                     T_CLAN_MERCH_TRACK, T_CLAN_MILK_MONEY, T_CLAN_ROWS, T_CLAN_SHIP,
                     T_CLAN_UNIT_COST, T_DELTA, T_LAND_COST, T_PORT_NODE, T_TERRAIN, T_UNIT_COUNT)


@njit(cache=True, inline="always")
def crow(s, poff):
    """Row of the player's clan in the T_CLAN_* tables (NO_CLAN without a clan)."""
    c = s[poff + P_CLAN]
    return c if c >= 0 else NO_CLAN


@njit(cache=True, inline="always")
def cpar(s, T, poff, off):
    """The player's value of the per-clan table at ``off``."""
    return T[off + crow(s, poff)]


@njit(cache=True)
def apply_clan(s, T, poff, clan):
    """Take clan ``clan`` (-1 none): its starting merchants and shipping (R-1.5, R-8)."""
    s[poff + P_CLAN] = clan
    row = crow(s, poff)
    s[poff + P_MERCH] = T[T_CLAN_MERCH_SUPPLY + row]
    s[poff + P_TRACK] = T[T_CLAN_MERCH_TRACK + row]
    s[poff + P_SHIP] = T[T_CLAN_SHIP + row]


@njit(cache=True, inline="always")
def is_worker(u):
    return u == LUMBERJACK or u == MINER or u == FISHERMAN


@njit(cache=True)
def board_avail(s, T, poff, u):
    """Units of type u the player can still deploy; MacDonald's workers are one pool (R-8.5)."""
    if T[T_CLAN_ANY_WORKER + crow(s, poff)] and is_worker(u):
        return s[poff + P_BOARD + LUMBERJACK] + s[poff + P_BOARD + MINER]
    if u == FISHERMAN:
        return 0
    return s[poff + P_BOARD + u]


@njit(cache=True)
def take_from_board(s, T, poff, u):
    """Remove one unit of type u from the player board (pooled workers: lumberjacks first)."""
    if T[T_CLAN_ANY_WORKER + crow(s, poff)] and is_worker(u):
        if s[poff + P_BOARD + LUMBERJACK] > 0:
            s[poff + P_BOARD + LUMBERJACK] -= 1
        else:
            s[poff + P_BOARD + MINER] -= 1
    else:
        s[poff + P_BOARD + u] -= 1


@njit(cache=True)
def base_cost(s, T, poff, u):
    """Unit cost without land: the clan's price (R-8.5) less Campbell's discount (R-8.2)."""
    row = crow(s, poff)
    c = T[T_CLAN_UNIT_COST + row * N_UNITS + u]
    if u >= DAIRY and u <= DISTILLERY:
        k = T[T_UNIT_COUNT + u] - s[poff + P_BOARD + u]      # buildings of this type deployed
        if k >= 0 and k < MAX_PROCESS:
            c -= T[T_CLAN_BUILD_DISC + row * MAX_PROCESS + k]
    return c


@njit(cache=True, inline="always")
def land_part(s, T, poff, u, node, free_land):
    """Land share of an expansion: land cost (none on a free hex, the fisherman fee on a
    loch or port, R-8.5), less Robertson's delta discount (R-8.7)."""
    row = crow(s, poff)
    if u == FISHERMAN:
        c = T[T_CLAN_FISH_LAND + row]
    elif free_land:
        c = 0
    else:
        c = T[T_LAND_COST + node]
    if T[T_DELTA + node]:
        c -= T[T_CLAN_DELTA_DISC + row]
    return c


@njit(cache=True)
def total_cost(base, land):
    """Never below £0 (a discount cannot pay the player)."""
    c = base + land
    return c if c > 0 else 0


# ------------------------------------------------------------ MacDonald
@njit(cache=True)
def fisher_spot(s, T, p, node, ignore):
    """``node`` may hold p's fisherman: an empty loch, or a port with a tile in play, with no
    other fisherman of p adjacent (the one on ``ignore`` excepted)."""
    if s[S_OCC + node] != EMPTY:
        return False
    terr = T[T_TERRAIN + node]
    if terr & TERRAIN_PORT:
        if s[S_PORTS + node - T[T_PORT_NODE]] < 0:
            return False
    elif not terr & TERRAIN_LOCH:
        return False
    mine = p * OCC_STRIDE + FISHERMAN
    for k in range(6):
        w = T[T_ADJ + node * 6 + k]
        if w < 0:
            break
        if w != ignore and s[S_OCC + w] == mine:
            return False
    return True


@njit(cache=True)
def row_ok(s, T, p, src, dst):
    """The fisherman on ``src`` may row to ``dst``: an adjacent empty loch hex or port tile
    (R-8.5: "placés ou déplacés sur toutes les cases loch vides et tuiles bonus Port")."""
    return fisher_spot(s, T, p, dst, src)


@njit(cache=True, inline="always")
def can_row_from(s, T, p, src):
    if s[S_OCC + src] != p * OCC_STRIDE + FISHERMAN:
        return False
    for k in range(6):
        dst = T[T_ADJ + src * 6 + k]
        if dst < 0:
            break
        if row_ok(s, T, p, src, dst):
            return True
    return False


@njit(cache=True, inline="always")
def may_row(s, T, poff):
    """Rowing is still allowed this turn: before the main action, not after P6 (R-8.5)."""
    return (s[S_ROWED] < T[T_CLAN_ROWS + crow(s, poff)] and s[S_MAIN_DONE] == 0
            and s[S_PRICE_SHIFT_GOOD] < 0)


# ------------------------------------------------------------ MacKenzie
CELLAR_AGED = 2     # the money column of a barrel leaving the right space at production


@njit(cache=True, inline="always")
def cellar_pay(s, T, poff, column):
    """£ of a barrel taken out: ``column`` 0 left space, 1 right space, ``CELLAR_AGED``
    leaving the right space at the start of production (R-8.6; the values follow the
    ``interp_cellar`` reading, engine.tables.clan_params)."""
    return T[T_CLAN_CELLAR_MONEY + crow(s, poff) * 3 + column]


@njit(cache=True)
def cellar_out(s, T, poff, space, column):
    """Take the barrel on ``space`` (0 left, 1 right) to stock and gain the money of
    ``column`` (:func:`cellar_pay`)."""
    s[poff + P_CELLAR + space] -= 1
    s[poff + P_GOODS + WHISKY] += 1
    s[poff + P_MONEY] += cellar_pay(s, T, poff, column)


@njit(cache=True, inline="always")
def cellar_age(s, T, poff):
    """Start of production (R-8.6): the barrel on the right space goes to stock, aged twice
    (paid), the left one moves right (aged once)."""
    if s[poff + P_CELLAR + 1] > 0:
        cellar_out(s, T, poff, 1, CELLAR_AGED)
    if s[poff + P_CELLAR] > 0:
        s[poff + P_CELLAR] -= 1
        s[poff + P_CELLAR + 1] += 1


# ----------------------------------------------------------- Cunningham
@njit(cache=True)
def butter_max(s, T, poff):
    """Milk the player may turn into butter now (0 if not Cunningham)."""
    if T[T_CLAN_MILK_MONEY + crow(s, poff)] <= 0:
        return 0
    return s[poff + P_GOODS + MILK]


@njit(cache=True, inline="always")
def do_butter(s, T, poff, k):
    s[poff + P_GOODS + MILK] -= k
    s[poff + P_MONEY] += k * T[T_CLAN_MILK_MONEY + crow(s, poff)]


# -------------------------------------------------------------- brewer
@njit(cache=True)
def brew_max(s, T, poff, left):
    """Beer the player can brew now: hops left, grain, the id range."""
    row = crow(s, poff)
    if T[T_CLAN_BEER_MONEY + row] <= 0:
        return 0
    k = left if left < MAX_BREW else MAX_BREW
    g = T[T_CLAN_BEER_GRAIN + row]
    if g > 0:
        have = s[poff + P_GOODS + GRAIN] // g
        if have < k:
            k = have
    return k


@njit(cache=True, inline="always")
def do_brew(s, T, poff, k):
    row = crow(s, poff)
    s[poff + P_GOODS + GRAIN] -= k * T[T_CLAN_BEER_GRAIN + row]
    s[poff + P_MONEY] += k * T[T_CLAN_BEER_MONEY + row]
    s[poff + P_BEER] += k
