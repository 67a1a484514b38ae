"""The publisher's Automa as a seat type (A-0 … A-8): its turn (A-3) and actions (A-4).

An Automa seat is an ordinary player row (money, units, merchants, shipping, box,
ports used …) plus the deck fields P_AM_* (A-10). Every turn is resolved here in
numba and written to the event log (``amlog``, see ``automa.events.log_event``).
Numbers come from the T_AM_* tables (``data/automa``) and the normal rule tables.
The deck is in :mod:`.deck`, Expand in :mod:`.expand`, setup and the round phases in
:mod:`.phases`, the event log in :mod:`.events`.
"""
import numpy as np

from caledonia_env.engine.automa.deck import (ACT_EXPAND, ACT_FULFILL, ACT_SKIP, ACT_TAKE, ACT_TECH, ACT_TRADE,
                          ACT_UPGRADE, CARD_ACTIONS, CARD_N_ACTIONS, CARD_UPGRADE, card, draw_card,
                          is_automa, next_action_card)
from caledonia_env.engine.automa.expand import LOWER, UPPER, am_expand, bracket, claim_ports
from caledonia_env.engine.automa.events import (EV_FULFILL, EV_PASS, EV_SKIP, EV_TAKE, EV_TECH, EV_TRADE, EV_UPGRADE,
                         log_event)
from caledonia_env.engine.board import count_units, pofs
from caledonia_env.engine.constants import LUMBERJACK, MAX_SLOTS, MINER, N_GOODS
from caledonia_env.engine.contracts import advance_import, cval
from caledonia_env.engine.market import move_price
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (C_GAIN_HEX, C_GAIN_IMPORT, C_GAIN_MONEY, C_GAIN_UPG, C_NEED, P_AM_SUPPORT,
                     P_BOX, P_FULFILLED, P_IMPORTS, P_MARKET, P_MEAT, P_MERCH, P_MONEY,
                     P_N_FULFILLED, P_PASSED, P_SHIP, P_TECH, P_TRACK, S_IMPORT, S_N_PASSED,
                     S_NEXT_ORDER, S_NP, S_ROUND, S_SLOTS, T_AM_C_COST, T_AM_FEE, T_AM_HEX_MONEY,
                     T_AM_RARITY_ROUND, T_AM_TECH_MIN, T_AM_TRADE_MAX, T_AM_TRADE_MONEY,
                     T_AM_UPG_MONEY, T_HIRE_COST, T_PASS_BONUS, T_ROUNDS, T_SHIP_COST, T_SHIP_MAX,
                     T_STATIC_IMPORTS, T_TECH_COST)
from caledonia_env.engine.rng import rand_int


@njit(cache=True)
def contract_money_cost(T, c):
    """A-4.6 C: money per good required (wool, bread, cheese, whisky, beef, mutton)."""
    total = 0
    for i in range(6):
        total += cval(T, c, C_NEED + i) * T[T_AM_C_COST + i]
    return total


@njit(cache=True)
def contract_money_bonus(T, c):
    """A-4.6 B / A-4.7: contract money + money per free hex + per upgrade bonus."""
    return (cval(T, c, C_GAIN_MONEY) + cval(T, c, C_GAIN_HEX) * T[T_AM_HEX_MONEY]
            + cval(T, c, C_GAIN_UPG) * T[T_AM_UPG_MONEY])


# ------------------------------------------------------------ actions
@njit(cache=True)
def am_tech(s, T, p, c, amlog):
    """A-4.2: a worker type with enough workers on the map and an unflipped tile."""
    poff = pofs(p)
    if s[poff + P_MONEY] < T[T_TECH_COST]:
        return False
    units = np.zeros(16, np.int32)
    count_units(s, T, p, units)
    elig = 0
    if units[LUMBERJACK] >= T[T_AM_TECH_MIN] and s[poff + P_TECH] == 0:
        elig |= 1
    if units[MINER] >= T[T_AM_TECH_MIN] and s[poff + P_TECH + 1] == 0:
        elig |= 2
    if elig == 0:
        return False
    t = 0 if elig == 1 else (1 if elig == 2 else rand_int(s, 2))
    s[poff + P_MONEY] -= T[T_TECH_COST]
    s[poff + P_TECH + t] = 1
    log_event(s, p, EV_TECH, c, t, 0, 0, amlog)
    return True


@njit(cache=True)
def am_upgrade(s, T, p, c, amlog):
    """A-4.3: the support card's upgrade type first, then the other; A-6 after shipping."""
    poff = pofs(p)
    sup = s[poff + P_AM_SUPPORT]
    first = card(T, sup, CARD_UPGRADE) if sup >= 0 else 0
    for k in range(2):
        kind = (first + k) % 2
        if kind == 0 and s[poff + P_TRACK] > 0 and s[poff + P_MONEY] >= T[T_HIRE_COST]:
            s[poff + P_MONEY] -= T[T_HIRE_COST]
            s[poff + P_TRACK] -= 1
            s[poff + P_MERCH] += 1
            log_event(s, p, EV_UPGRADE, c, 0, 0, 0, amlog)
            return True
        if kind == 1 and s[poff + P_SHIP] < T[T_SHIP_MAX] and s[poff + P_MONEY] >= T[T_SHIP_COST]:
            s[poff + P_MONEY] -= T[T_SHIP_COST]
            s[poff + P_SHIP] += 1
            log_event(s, p, EV_UPGRADE, c, 1, 0, 0, amlog)
            claim_ports(s, T, p, amlog)
            return True
    return False


@njit(cache=True)
def am_trade(s, T, p, c, amlog):
    """A-4.4: a random good without an own merchant, 1-3 merchants, direction by bracket."""
    poff = pofs(p)
    merch = s[poff + P_MERCH]
    if merch <= 0:
        return False
    goods = np.empty(N_GOODS, np.int32)
    k = 0
    for g in range(N_GOODS):
        if s[poff + P_MARKET + g] == 0 and s[poff + P_MARKET + N_GOODS + g] == 0:
            goods[k] = g
            k += 1
    if k == 0:
        return False
    g = goods[rand_int(s, k)]
    n = 1 + rand_int(s, T[T_AM_TRADE_MAX])
    if n > merch:
        n = merch
    b = bracket(s, T, g)
    side = 1 if b == UPPER else (0 if b == LOWER else rand_int(s, 2))
    s[poff + P_MERCH] -= n
    s[poff + P_MARKET + side * N_GOODS + g] += n
    move_price(s, T, g, n if side == 0 else -n)
    s[poff + P_MONEY] += n * T[T_AM_TRADE_MONEY]
    log_event(s, p, EV_TRADE, c, g, side, n, amlog)
    return True


@njit(cache=True)
def am_fulfill(s, T, p, c, amlog):
    """A-4.7: pay C, gain money instead of bonuses, imports advance as usual."""
    poff = pofs(p)
    k = s[poff + P_BOX]
    if k < 0:
        return False
    cost = contract_money_cost(T, k)
    if s[poff + P_MONEY] < cost:
        return False
    gain = contract_money_bonus(T, k)
    s[poff + P_MONEY] += gain - cost
    s[poff + P_BOX] = -1
    s[poff + P_N_FULFILLED] += 1
    s[poff + P_FULFILLED + k // 31] |= 1 << (k % 31)
    s[poff + P_MEAT] += cval(T, k, C_NEED + 4) + cval(T, k, C_NEED + 5)
    for i in range(4):
        amount = cval(T, k, C_GAIN_IMPORT + i)
        s[poff + P_IMPORTS + i] += amount
        if i < 3 and amount > 0 and T[T_STATIC_IMPORTS] == 0:
            advance_import(s, T, poff, i, amount)
    log_event(s, p, EV_FULFILL, c, k, gain - cost, 0, amlog)
    return True


@njit(cache=True)
def rarity_key(s, T, p, k):
    """A-4.6 rounds 4-5: imports so far of the contract's rarest tracked good, counting
    contracts in other non-Automa players' boxes as fulfilled; none ranks last."""
    best = 1 << 30
    for i in range(3):
        if cval(T, k, C_GAIN_IMPORT + i) <= 0:
            continue
        cnt = s[S_IMPORT + i]
        for q in range(s[S_NP]):
            if q == p or is_automa(T, q):
                continue
            for b in range(2):
                other = s[pofs(q) + P_BOX + b]
                if other >= 0:
                    cnt += cval(T, other, C_GAIN_IMPORT + i)
        if cnt < best:
            best = cnt
    return best


@njit(cache=True)
def am_take(s, T, p, c, amlog):
    """A-4.6: the round's fee; rounds 1-3 cheapest (then richest), later rarest import
    (then dearest); in the last round only affordable ones, fulfilled at once."""
    poff = pofs(p)
    if s[poff + P_BOX] >= 0:
        return False
    r = s[S_ROUND]
    fee = T[T_AM_FEE + r - 1]
    money = s[poff + P_MONEY] + fee
    if money < 0:
        return False
    last = r >= T[T_ROUNDS]
    slots = np.empty(MAX_SLOTS, np.int32)
    k1 = np.empty(MAX_SLOTS, np.int64)     # minimised
    k2 = np.empty(MAX_SLOTS, np.int64)     # maximised
    n = 0
    for i in range(MAX_SLOTS):
        k = s[S_SLOTS + i]
        if k < 0:
            continue
        cost = contract_money_cost(T, k)
        if last and cost > money:
            continue
        slots[n] = i
        if r < T[T_AM_RARITY_ROUND]:
            k1[n] = cost
            k2[n] = contract_money_bonus(T, k)
        else:
            k1[n] = rarity_key(s, T, p, k)
            k2[n] = cost
        n += 1
    if n == 0:
        return False
    b1 = k1[0]
    for i in range(n):
        b1 = min(b1, k1[i])
    b2 = -(1 << 40)
    for i in range(n):
        if k1[i] == b1:
            b2 = max(b2, k2[i])
    m = 0
    for i in range(n):
        if k1[i] == b1 and k2[i] == b2:
            slots[m] = slots[i]
            m += 1
    i = slots[rand_int(s, m)] if m > 1 else slots[0]
    k = s[S_SLOTS + i]
    s[S_SLOTS + i] = -1
    s[poff + P_BOX] = k
    s[poff + P_MONEY] += fee
    log_event(s, p, EV_TAKE, c, k, fee, int(last), amlog)
    if last:
        am_fulfill(s, T, p, c, amlog)
    return True


@njit(cache=True)
def am_pass(s, T, p, c, amlog):
    """A-3.2 / A-4.8: pass with the bonus of the passing position (tables)."""
    pos = s[S_N_PASSED]
    s[S_NEXT_ORDER + pos] = p
    s[pofs(p) + P_MONEY] += T[T_PASS_BONUS + pos]
    s[pofs(p) + P_PASSED] = 1
    s[S_N_PASSED] = pos + 1
    log_event(s, p, EV_PASS, c, T[T_PASS_BONUS + pos], pos, 0, amlog)


@njit(cache=True)
def try_action(s, T, p, act, c, amlog):
    if act == ACT_TECH:
        return am_tech(s, T, p, c, amlog)
    if act == ACT_UPGRADE:
        return am_upgrade(s, T, p, c, amlog)
    if act == ACT_TRADE:
        return am_trade(s, T, p, c, amlog)
    if act == ACT_EXPAND:
        return am_expand(s, T, p, c, amlog)
    if act == ACT_FULFILL:
        return am_fulfill(s, T, p, c, amlog)
    if act == ACT_TAKE:
        return am_take(s, T, p, c, amlog)
    return False


@njit(cache=True)
def automa_turn(s, T, p, amlog=None):
    """A-3: draw the action card, walk its entries (support card on the first Expand or
    Upgrade entry), perform the first possible one; pass after the last entry."""
    poff = pofs(p)
    c = next_action_card(s, T, poff)
    if c < 0:
        am_pass(s, T, p, c, amlog)
        return
    for i in range(card(T, c, CARD_N_ACTIONS)):
        act = card(T, c, CARD_ACTIONS + i)
        if (act == ACT_EXPAND or act == ACT_UPGRADE) and s[poff + P_AM_SUPPORT] < 0:
            s[poff + P_AM_SUPPORT] = draw_card(s, T, poff)
        if act == ACT_SKIP:
            log_event(s, p, EV_SKIP, c, 0, 0, 0, amlog)
            return
        if try_action(s, T, p, act, c, amlog):
            return
    am_pass(s, T, p, c, amlog)
