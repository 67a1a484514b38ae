"""Apply one action to the state (the mask says it is legal), then resolve the next decision."""
import numpy as np

from caledonia_env.engine.actions import (A_BID, A_BID_DECLINE, A_BREW, A_BUTTER, A_BUTTER_DONE, A_CELLAR_IN,
                      A_CELLAR_OUT, A_DECLINE_HEX, A_DECLINE_UPGRADE, A_END_TURN,
                      A_FULFILL, A_FULFILL_BOTH, A_HIRE, A_KEEP, A_KEEP_NONE, A_NB_BUY,
                      A_NB_DONE, A_OBTAIN, A_OBTAIN_DONE, A_PASS, A_PICK_GOOD, A_PLACE, A_PORT,
                      A_PRICE, A_PROCESS, A_RETRIEVE, A_ROW, A_SELECT, A_SHIP, A_START_PICK,
                      A_STRUCT_DRAW, A_STRUCT_DECLINE, A_TRADE, PRICE_DELTAS)
from caledonia_env.engine.clans import cellar_out, cpar, do_brew, do_butter, take_from_board
from caledonia_env.engine.board import count_units, neighbor_goods, pofs
from caledonia_env.engine.constants import (CLAN_AUCTION, COW, CTX_AFTER_MAIN, CTX_AUCTION, CTX_BONUS, CTX_BREW,
                        CTX_BUTTER, CTX_CELLAR, CTX_MAIN, CTX_NEIGHBOR, CTX_PORT_COPY,
                        CTX_PORT_DISCARD, CTX_PORT_GAIN, CTX_PORT_PRICE, CTX_PORT_SWAP, CTX_PROCESS,
                        CTX_ROW, CTX_SECOND_CONTRACT, CTX_SLAUGHTER, CTX_START_PICK,
                        CTX_START_WORKER, CTX_STRUCTURE, DAIRY, DISTILLERY, EMPTY, HOPS, MAX_DRAW,
                        MAX_MERCHANTS, MAX_NB_BUY, MAX_NODES, MAX_PROCESS, N_GOODS, N_UNITS,
                        OCC_STRIDE, PORT_COPY, PROCESS_IN, PROCESS_OUT, SHEEP, WHISKY)
from caledonia_env.engine.contracts import cval, fulfill, put_under, take_contract
from caledonia_env.engine.economy import do_nb_buy, do_trade, do_upgrade
from caledonia_env.engine.automa.run import run_automata
from caledonia_env.engine.flow import auction_bid, auction_pick_done, end_turn, resolve, structure_draw, take_pair
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (C_GAIN_IMPORT, P_BOARD, P_BOX, P_CELLAR, P_GOODS, P_MARKET, P_MERCH, P_MONEY,
                     P_PASSED, P_PORTS_USED, P_WHISKY_MADE, S_AM_NLOG, S_BONUS_HEX, S_BONUS_UPG,
                     S_BREW_LEFT, S_CTX, S_DRAWN, S_KEEP_LEFT, S_MAIN_DONE, S_MEAT_PORTS,
                     S_MEAT_REM, S_N_DRAWN, S_N_PASSED, S_NB_BOUGHT, S_NB_PENDING, S_NEXT_ORDER,
                     S_OCC, S_PLAYER, S_PORT_KIND, S_PORT_LEFT, S_PORT_STAGE, S_PORTS,
                     S_PRICE_SHIFT_GOOD, S_PROC_KIND, S_ROW_FROM, S_ROWED, S_SECOND_OBTAIN,
                     S_SETUP_PTR, S_SLOTS, S_STRUCT_PENDING, T_CLAN_BEER_MAX, T_CLAN_MODE,
                     T_CLAN_OBTAIN_MAX, T_CLAN_WHISKY_MONEY, T_NEIGHBOR_BONUS, T_PASS_BONUS,
                     T_STATIC_IMPORTS, T_STRUCT_BUILDINGS, T_UNIT_COUNT)
from caledonia_env.engine.market import move_price
from caledonia_env.engine.legality import free_box_count, meat_ports, n_boxes, unit_cost
from caledonia_env.engine.ports import apply_effect, do_swap, port_param, swap_neighborhood, use_port

N_DELTAS = len(PRICE_DELTAS)


@njit(cache=True)
def check_structure(s, T, p, u):
    """Fourth building of a type placed with an empty export box (R-3.3.2; with two boxes,
    R-8.1, one empty box is enough)."""
    deployed = T[T_UNIT_COUNT + u] - s[pofs(p) + P_BOARD + u]
    if u >= DAIRY and u <= DISTILLERY and deployed == T[T_STRUCT_BUILDINGS]:
        if free_box_count(s, T, p) > 0:
            s[S_STRUCT_PENDING] = 1


@njit(cache=True)
def place_unit(s, T, p, u, node, free_land, bonuses):
    """Expand (R-3.3): pay, occupy, then queue the neighborhood and structure bonuses."""
    poff = pofs(p)
    s[poff + P_MONEY] -= unit_cost(s, T, p, u, node, free_land)
    take_from_board(s, T, poff, u)
    s[S_OCC + node] = p * OCC_STRIDE + u
    if bonuses:
        if T[T_NEIGHBOR_BONUS]:
            s[S_NB_PENDING] = neighbor_goods(s, T, p, node)
        check_structure(s, T, p, u)


@njit(cache=True, inline="always")
def do_pass(s, T, p):
    """R-3.8: leftmost free position of next round's order and its pass bonus."""
    pos = s[S_N_PASSED]
    s[S_NEXT_ORDER + pos] = p
    s[pofs(p) + P_MONEY] += T[T_PASS_BONUS + pos]
    s[pofs(p) + P_PASSED] = 1
    s[S_N_PASSED] = pos + 1


@njit(cache=True)
def do_fulfill(s, T, p, box):
    """R-3.7 for one box; the brewer may brew for the contract's hops (R-8.9)."""
    poff = pofs(p)
    s[S_MEAT_PORTS] = meat_ports(s, T, p, np.empty(0, np.uint64))
    c = fulfill(s, T, poff, box, T[T_STATIC_IMPORTS] == 0)
    hops = cval(T, c, C_GAIN_IMPORT + HOPS)
    cap = cpar(s, T, poff, T_CLAN_BEER_MAX)
    s[S_BREW_LEFT] += hops if hops < cap else cap


@njit(cache=True, inline="always")
def spare_animal(s, T, p, corner):
    """P1 (or P9 copying it): one slaughtered animal fewer (R-5)."""
    poff = pofs(p)
    s[poff + P_PORTS_USED] |= 1 << corner
    if s[S_PORTS + corner] == PORT_COPY:
        s[poff + P_MONEY] -= port_param(T, PORT_COPY, 0)
    s[S_MEAT_PORTS] &= ~(1 << corner)
    units = np.zeros(N_UNITS, np.int32)
    count_units(s, T, p, units)
    beef, mutton = s[S_MEAT_REM], s[S_MEAT_REM + 1]
    # spare the animal the player lacks; otherwise a cow (the dearer unit) [interp]
    if beef > 0 and (beef > units[COW] or mutton == 0 or mutton <= units[SHEEP]):
        s[S_MEAT_REM] -= 1
    else:
        s[S_MEAT_REM + 1] -= 1


@njit(cache=True)
def finish_structure(s):
    """Drawn contracts not kept go under the pile (R-3.3.2)."""
    for i in range(MAX_DRAW):
        if s[S_DRAWN + i] >= 0:
            put_under(s, s[S_DRAWN + i])
            s[S_DRAWN + i] = -1
    s[S_N_DRAWN] = 0
    s[S_KEEP_LEFT] = 0


@njit(cache=True, inline="always")
def start_pick(s, T, p, i):
    """Take starting pair i (R-1.7 / R-1.9 / R-9.4)."""
    take_pair(s, T, p, i)
    s[S_SETUP_PTR] += 1
    if T[T_CLAN_MODE] == CLAN_AUCTION:
        auction_pick_done(s, T)


@njit(cache=True)
def first_free_box(s, T, p):
    poff = pofs(p)
    for b in range(n_boxes(s, T, p)):
        if s[poff + P_BOX + b] < 0:
            return b
    return -1


@njit(cache=True)
def apply_action(s, T, a, automa):
    """Apply legal action ``a`` for the deciding player and resolve what comes next.
    Automa events (A-3) are counted in ``s[S_AM_NLOG]`` but not kept (see
    :func:`apply_action_log`). ``automa``: ``automa.deck.automa_switch(T)``, ``None`` in a
    game without Automa seats (the Automa's code is then not compiled)."""
    apply_action_log(s, T, a, s[:0], automa)


@njit(cache=True)
def apply_action_log(s, T, a, amlog, automa):
    """:func:`apply_action` that also writes the Automa events of this call (A-3) into
    ``amlog`` (int32[AM_LOG_SIZE], a ring from slot 0; the count ``s[S_AM_NLOG]`` starts
    at 0 in every call; read them with ``automa.events.read_events``)."""
    s[S_AM_NLOG] = 0
    ctx = s[S_CTX]
    p = s[S_PLAYER]
    poff = pofs(p)
    if a == A_CELLAR_OUT or a == A_CELLAR_OUT + 1:
        space = a - A_CELLAR_OUT
        cellar_out(s, T, poff, space, space)     # inside any decision of its owner
    elif ctx == CTX_MAIN:
        if a >= A_PORT and a < A_PORT + 4:
            use_port(s, T, p, a - A_PORT, n_boxes(s, T, p))
        elif a >= A_ROW and a < A_ROW + MAX_NODES:
            s[S_ROW_FROM] = a - A_ROW            # the destination comes next
        else:
            s[S_MAIN_DONE] = 1
            if a == A_PASS:
                do_pass(s, T, p)
            elif a >= A_TRADE and a < A_OBTAIN:
                r = a - A_TRADE
                k = r % MAX_MERCHANTS + 1
                sg = r // MAX_MERCHANTS
                do_trade(s, T, poff, sg // N_GOODS, sg % N_GOODS, k)
                s[S_PRICE_SHIFT_GOOD] = -1
            elif a >= A_OBTAIN and a < A_PLACE:
                slot = a - A_OBTAIN
                take_contract(s, T, poff, s[S_SLOTS + slot], first_free_box(s, T, p))
                s[S_SLOTS + slot] = -1
                s[S_SECOND_OBTAIN] = int(cpar(s, T, poff, T_CLAN_OBTAIN_MAX) > 1)
            elif a >= A_PLACE and a < A_SHIP:
                r = a - A_PLACE
                place_unit(s, T, p, r // MAX_NODES, r % MAX_NODES, False, True)
            elif a >= A_SHIP and a <= A_HIRE:
                do_upgrade(s, T, poff, a, False)
            elif a >= A_FULFILL and a < A_PORT:
                do_fulfill(s, T, p, a - A_FULFILL)
            elif a == A_FULFILL_BOTH:
                do_fulfill(s, T, p, 0)           # two contracts in one action
                do_fulfill(s, T, p, 1)
    elif ctx == CTX_AFTER_MAIN:
        if a == A_END_TURN:
            end_turn(s, T, automa)
            if automa is not None:
                run_automata(s, T, amlog)    # Automa seats move until the next decision
            return
        use_port(s, T, p, a - A_PORT, n_boxes(s, T, p))
    elif ctx == CTX_SECOND_CONTRACT:
        if a != A_OBTAIN_DONE:
            slot = a - A_OBTAIN
            take_contract(s, T, poff, s[S_SLOTS + slot], first_free_box(s, T, p))
            s[S_SLOTS + slot] = -1
        s[S_SECOND_OBTAIN] = 0
    elif ctx == CTX_ROW:
        src = s[S_ROW_FROM]
        s[S_OCC + a - A_SELECT] = s[S_OCC + src]
        s[S_OCC + src] = EMPTY
        s[S_ROW_FROM] = -1
        s[S_ROWED] += 1
    elif ctx == CTX_CELLAR:
        if a == A_CELLAR_IN:
            s[poff + P_GOODS + WHISKY] -= 1
            s[poff + P_CELLAR] += 1
        s[S_PROC_KIND] += 1
    elif ctx == CTX_BUTTER:
        if a == A_BUTTER_DONE:
            s[S_PROC_KIND] += 1
        else:
            do_butter(s, T, poff, a - A_BUTTER + 1)
    elif ctx == CTX_BREW:
        k = a - A_BREW
        do_brew(s, T, poff, k)
        s[S_BREW_LEFT] = 0 if k == 0 else s[S_BREW_LEFT] - k
    elif ctx == CTX_AUCTION:
        auction_bid(s, T, p, -1 if a == A_BID_DECLINE else a - A_BID)
    elif ctx == CTX_NEIGHBOR:
        if a == A_NB_DONE:
            s[S_NB_PENDING] = 0
        else:
            r = a - A_NB_BUY
            g = r // MAX_NB_BUY
            do_nb_buy(s, T, poff, g, r % MAX_NB_BUY + 1)
            s[S_NB_BOUGHT + g] += r % MAX_NB_BUY + 1     # limit per good per turn
            s[S_NB_PENDING] &= ~(1 << g)
    elif ctx == CTX_STRUCTURE:
        if a == A_STRUCT_DRAW or a == A_STRUCT_DECLINE:
            s[S_STRUCT_PENDING] = 0              # R-3.3.2 / P8: the draw is optional
            if a == A_STRUCT_DRAW:
                structure_draw(s, T, p)
        elif a == A_KEEP_NONE:
            finish_structure(s)
        else:
            i = a - A_KEEP
            take_contract(s, T, poff, s[S_DRAWN + i], first_free_box(s, T, p))
            s[S_DRAWN + i] = -1
            s[S_KEEP_LEFT] -= 1
            if s[S_KEEP_LEFT] <= 0 or free_box_count(s, T, p) == 0:
                finish_structure(s)
    elif ctx == CTX_SLAUGHTER:
        if a >= A_PORT and a < A_PORT + 4:
            spare_animal(s, T, p, a - A_PORT)
        else:
            node = a - A_SELECT
            u = s[S_OCC + node] % OCC_STRIDE
            s[S_OCC + node] = EMPTY
            s[poff + P_BOARD + u] += 1
            s[S_MEAT_REM + (0 if u == COW else 1)] -= 1
        if s[S_MEAT_REM] + s[S_MEAT_REM + 1] == 0:
            s[S_MEAT_PORTS] = 0
    elif ctx == CTX_BONUS:
        if a == A_DECLINE_HEX:
            s[S_BONUS_HEX] -= 1
        elif a == A_DECLINE_UPGRADE:
            s[S_BONUS_UPG] -= 1
        elif a >= A_PLACE and a < A_SHIP:
            r = a - A_PLACE
            s[S_BONUS_HEX] -= 1
            place_unit(s, T, p, r // MAX_NODES, r % MAX_NODES, True, True)
        else:
            s[S_BONUS_UPG] -= 1
            if a >= A_SHIP and a <= A_HIRE:
                do_upgrade(s, T, poff, a, True)
            else:
                i = a - A_RETRIEVE
                s[poff + P_MARKET + i] -= 1
                s[poff + P_MERCH] += 1
    elif ctx == CTX_PORT_DISCARD:
        s[poff + P_GOODS + a - A_PICK_GOOD] -= 1
        s[S_PORT_STAGE] = 1
    elif ctx == CTX_PORT_GAIN:
        s[poff + P_GOODS + a - A_PICK_GOOD] += 1
        s[S_PORT_LEFT] -= 1
    elif ctx == CTX_PORT_PRICE:
        r = a - A_PRICE
        g = r // N_DELTAS
        move_price(s, T, g, PRICE_DELTAS[r % N_DELTAS])
        s[S_PRICE_SHIFT_GOOD] = g
        s[S_PORT_LEFT] = 0
    elif ctx == CTX_PORT_SWAP:
        r = a - A_PLACE
        u = r // MAX_NODES
        do_swap(s, T, p, r % MAX_NODES, u)
        swap_neighborhood(s, T, p, r % MAX_NODES)
        check_structure(s, T, p, u)
    elif ctx == CTX_PORT_COPY:
        s[S_PORT_KIND] = -1
        s[S_PORT_LEFT] = 0
        apply_effect(s, T, p, s[S_PORTS + a - A_PORT], n_boxes(s, T, p))
    elif ctx == CTX_PROCESS:
        r = a - A_PROCESS
        kind = r // (MAX_PROCESS + 1)
        k = r % (MAX_PROCESS + 1)
        s[poff + P_GOODS + PROCESS_IN[kind]] -= k
        s[poff + P_GOODS + PROCESS_OUT[kind]] += k
        if PROCESS_OUT[kind] == WHISKY:          # MacKenzie: money per whisky made
            s[poff + P_WHISKY_MADE] += k
            s[poff + P_MONEY] += k * cpar(s, T, poff, T_CLAN_WHISKY_MONEY)
        s[S_PROC_KIND] = kind + 1
    elif ctx == CTX_START_PICK:
        start_pick(s, T, p, a - A_START_PICK)
    elif ctx == CTX_START_WORKER:
        r = a - A_PLACE
        place_unit(s, T, p, r // MAX_NODES, r % MAX_NODES, False, False)
        s[S_SETUP_PTR] += 1
    resolve(s, T, automa)
    if automa is not None:
        run_automata(s, T, amlog)    # Automa seats move until the next decision
