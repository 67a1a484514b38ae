"""Export contracts: pile, slots, obtain (R-3.2), fulfill (R-3.7), imports (R-3.7.1)."""

from caledonia_env.engine.clans import cpar
from caledonia_env.engine.constants import (BREAD, CHEESE, MAX_CONTRACTS, MAX_SLOTS, PAY_EACH, PAY_ONCE_TURN,
                                            WHISKY, WOOL)
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (C_GAIN_HEX, C_GAIN_IMPORT, C_GAIN_MONEY, C_GAIN_UPG, C_NEED, C_WIDTH,
                     P_BOX, P_FULFILLED, P_GOODS, P_IMPORTS, P_MEAT, P_MONEY, P_N_FULFILLED,
                     S_BONUS_HEX, S_BONUS_UPG, S_DECK, S_DECK_COUNT, S_DECK_HEAD, S_IMPORT,
                     S_KEEP_LEFT, S_MEAT_REM, S_N_DRAWN, S_ROUND, S_SECOND_OBTAIN, S_SLOTS,
                     S_TURN_CONTRACTS, T_CLAN_PAY_ONCE, T_CLAN_STRUCT_KEEP,
                     T_CONTRACT_COST, T_CONTRACTS,
                     T_IMPORT_MARKED, T_IMPORT_MARK_PAY, T_IMPORT_TRACK_LEN, T_N_SLOTS)


@njit(cache=True, inline="always")
def cval(T, c, col):
    return T[T_CONTRACTS + c * C_WIDTH + col]


@njit(cache=True)
def need_good(T, c, g):
    """Goods contract c needs of good g (contracts never need grain or milk)."""
    if g == WOOL:
        return cval(T, c, C_NEED + 0)
    if g == BREAD:
        return cval(T, c, C_NEED + 1)
    if g == CHEESE:
        return cval(T, c, C_NEED + 2)
    if g == WHISKY:
        return cval(T, c, C_NEED + 3)
    return 0


@njit(cache=True)
def draw(s):
    """Top contract of the face-down pile, -1 if it is empty."""
    if s[S_DECK_COUNT] == 0:
        return -1
    h = s[S_DECK_HEAD]
    c = s[S_DECK + h]
    s[S_DECK + h] = -1          # the buffer holds only the pile (exact scenario round trips)
    s[S_DECK_HEAD] = (h + 1) % MAX_CONTRACTS
    s[S_DECK_COUNT] -= 1
    return c


@njit(cache=True, inline="always")
def put_under(s, c):
    """Put contract c under the pile (R-3.3.2)."""
    pos = (s[S_DECK_HEAD] + s[S_DECK_COUNT]) % MAX_CONTRACTS
    s[S_DECK + pos] = c
    s[S_DECK_COUNT] += 1


@njit(cache=True)
def fill_slots(s, T, k):
    """Fill the empty slots among the first ``k`` from the pile; the others stay empty."""
    for i in range(k):
        if s[S_SLOTS + i] < 0:
            s[S_SLOTS + i] = draw(s)
    for i in range(k, MAX_SLOTS):
        s[S_SLOTS + i] = -1


@njit(cache=True)
def refill_slots(s, T):
    """Fill every empty active slot from the pile (R-1.4, R-2.1)."""
    fill_slots(s, T, T[T_N_SLOTS])


@njit(cache=True, inline="always")
def contract_cost(s, T):
    """This round's contract cost; negative means the player gains money (R-3.2)."""
    return T[T_CONTRACT_COST + s[S_ROUND] - 1]


@njit(cache=True, inline="always")
def same_source(s, T, poff):
    """A contract of the source now being taken from was already taken this turn (R-8.1):
    one was kept from the structure bonus being resolved, or the Obtain action took its
    first and may take a second."""
    if s[S_N_DRAWN] > 0:
        return s[S_KEEP_LEFT] < cpar(s, T, poff, T_CLAN_STRUCT_KEEP)
    return s[S_SECOND_OBTAIN] != 0


@njit(cache=True)
def player_contract_cost(s, T, poff):
    """The round's cost, or nothing for a further contract of the turn where the clan pays
    once (R-8.1 Buchanan): for the second from the same source (``PAY_ONCE_SOURCE``), or
    for any second (``PAY_ONCE_TURN``, the earlier reading). Round 1's £5 is gained once
    per turn in either reading."""
    cost = contract_cost(s, T)
    pay = cpar(s, T, poff, T_CLAN_PAY_ONCE)
    if s[S_TURN_CONTRACTS] == 0 or pay == PAY_EACH:
        return cost
    if cost < 0 or pay == PAY_ONCE_TURN or same_source(s, T, poff):
        return 0
    return cost


@njit(cache=True)
def can_afford_contract(s, T, poff):
    return s[poff + P_MONEY] >= player_contract_cost(s, T, poff)


@njit(cache=True)
def take_contract(s, T, poff, c, box):
    """Put contract c into ``box`` paying (or gaining) the player's cost (R-3.2)."""
    s[poff + P_MONEY] -= player_contract_cost(s, T, poff)
    s[poff + P_BOX + box] = c
    s[S_TURN_CONTRACTS] += 1


@njit(cache=True, inline="always")
def goods_ok(s, T, poff, c):
    for g in range(6):
        if s[poff + P_GOODS + g] < need_good(T, c, g):
            return False
    return True


@njit(cache=True, inline="always")
def meat_deficit(T, c, cows, sheep):
    """Animals the player lacks for contract c's beef and mutton."""
    return _lacking(cval(T, c, C_NEED + 4), cval(T, c, C_NEED + 5), cows, sheep)


@njit(cache=True, inline="always")
def meat_deficit2(T, c, c2, cows, sheep):
    """Animals the player lacks for the beef and mutton of contracts c and c2 together."""
    return _lacking(cval(T, c, C_NEED + 4) + cval(T, c2, C_NEED + 4),
                    cval(T, c, C_NEED + 5) + cval(T, c2, C_NEED + 5), cows, sheep)


@njit(cache=True, inline="always")
def _lacking(beef, mutton, cows, sheep):
    return max(beef - cows, 0) + max(mutton - sheep, 0)


@njit(cache=True)
def advance_import(s, T, poff, i, amount):
    """Move import token i ``amount`` steps; £ per marked space reached or passed (R-3.7.1)."""
    old = s[S_IMPORT + i]
    new = old + amount
    top = T[T_IMPORT_TRACK_LEN]
    if new > top:
        new = top     # the token stops at the last space
    s[S_IMPORT + i] = new
    for pos in range(old + 1, new + 1):
        if T[T_IMPORT_MARKED + pos]:
            s[poff + P_MONEY] += T[T_IMPORT_MARK_PAY]


@njit(cache=True, inline="always")
def fulfill(s, T, poff, box, track_imports):
    """R-3.7: pay goods, score the contract, queue meat and export bonuses."""
    c = s[poff + P_BOX + box]
    s[poff + P_BOX + box] = -1
    for g in range(6):
        s[poff + P_GOODS + g] -= need_good(T, c, g)
    beef = cval(T, c, C_NEED + 4)
    mutton = cval(T, c, C_NEED + 5)
    s[S_MEAT_REM] += beef
    s[S_MEAT_REM + 1] += mutton
    s[poff + P_MEAT] += beef + mutton
    s[poff + P_N_FULFILLED] += 1
    s[poff + P_FULFILLED + c // 31] |= 1 << (c % 31)
    for i in range(4):
        amount = cval(T, c, C_GAIN_IMPORT + i)
        s[poff + P_IMPORTS + i] += amount
        if i < 3 and amount > 0 and track_imports:
            advance_import(s, T, poff, i, amount)
    s[poff + P_MONEY] += cval(T, c, C_GAIN_MONEY)
    s[S_BONUS_HEX] += cval(T, c, C_GAIN_HEX)
    s[S_BONUS_UPG] += cval(T, c, C_GAIN_UPG)
    return c

