"""The legal-action mask for the pending decision (exact for every context)."""
import numpy as np

from caledonia_env.engine.actions import (A_BID, A_BID_DECLINE, A_BREW, A_BUTTER, A_BUTTER_DONE, A_CELLAR_IN,
                      A_CELLAR_OUT, A_CELLAR_SKIP, A_DECLINE_HEX, A_DECLINE_UPGRADE, A_END_TURN,
                      A_FULFILL, A_FULFILL_BOTH, A_KEEP, A_KEEP_NONE, A_NB_BUY,
                      A_NB_DONE, A_OBTAIN, A_OBTAIN_DONE, A_PASS, A_PICK_GOOD, A_PLACE, A_PORT,
                      A_PRICE, A_PROCESS, A_RETRIEVE, A_ROW, A_SELECT, A_START_PICK,
                      A_STRUCT_DECLINE, A_STRUCT_DRAW, A_TRADE, N_ACTIONS, PRICE_DELTAS)
from caledonia_env.engine.clans import brew_max, butter_max, can_row_from, cpar, may_row, row_ok
from caledonia_env.engine.board import ctz, pofs, reach_bits, reach_of, table_word
from caledonia_env.engine.constants import (COW, CTX_AFTER_MAIN, CTX_AUCTION, CTX_BONUS, CTX_BREW, CTX_BUTTER,
                        CTX_CELLAR, CTX_MAIN, CTX_NEIGHBOR, CTX_PORT_COPY, CTX_PORT_DISCARD,
                        CTX_PORT_GAIN, CTX_PORT_PRICE, CTX_PORT_SWAP, CTX_PROCESS, CTX_ROW,
                        CTX_SECOND_CONTRACT, CTX_SLAUGHTER, CTX_START_PICK, CTX_START_WORKER,
                        CTX_STRUCTURE, FISHERMAN, MAX_BUTTER, MAX_DRAW, MAX_MERCHANTS, MAX_NB_BUY,
                        MAX_NODES, MAX_PROCESS, MAX_SLOTS, MAX_START_PICKS, N_CORNERS, N_GOODS,
                        NEUTRAL, OCC_STRIDE, PORT_BASIC_EXCHANGE, PORT_PRICE_SHIFT, SHEEP)
from caledonia_env.engine.contracts import can_afford_contract, goods_ok, meat_deficit, meat_deficit2, need_good
from caledonia_env.engine.economy import can_nb_buy, can_trade, upgrade_mask
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (P_BOX, P_CELLAR, P_GOODS, P_MARKET, P_MERCH, P_MONEY, RB_LEN, RB_WORDS,
                     S_AUC_HIGH, S_BONUS_HEX, S_BONUS_UPG, S_BREW_LEFT, S_CTX, S_DRAWN, S_MAIN_DONE,
                     S_MEAT_PORTS, S_MEAT_REM, S_N_DRAWN, S_NB_PENDING, S_OCC, S_PICKS, S_PLAYER,
                     S_PORT_KIND, S_PORT_LEFT, S_PRICE_SHIFT_GOOD, S_PROC_KIND, S_ROW_FROM,
                     S_SLOTS, T_ADJ, T_AUCTION_MAX, T_CLAN_FULFILL_MAX, T_CLAN_MARKET_MONEY,
                     T_CLAN_ROWS, T_N_NODES, T_PRICE_SHIFT_EXACT, T_UNIT_NODES)
from caledonia_env.engine.market import market_price
from caledonia_env.engine.legality import (can_obtain, place_scan, free_box_count, meat_ports, n_boxes, nb_limit,
                      process_max, retrieve_ok, start_worker_scan)
from caledonia_env.engine.ports import (copy_ok, owns, port_param, ports_open, price_move_ok, usable_ports,
                    swap_completes, swap_ok)
from caledonia_env.engine.compile.scratch import scratch

N_DELTAS = len(PRICE_DELTAS)


@njit(cache=True, inline="always")
def _cellar_out(s, poff, mask):
    """R-8.6: a barrel may leave the cellar at any time, inside any decision of its owner."""
    for space in range(2):
        if s[poff + P_CELLAR + space] > 0:
            mask[A_CELLAR_OUT + space] = 1


@njit(cache=True)
def _trades(s, T, poff, mask, only_good):
    """Trades of 1..k merchants (R-3.1): ``economy.can_trade`` holds for every k up to a
    bound, which is computed directly (merchants, goods, money // price)."""
    top = min(s[poff + P_MERCH], MAX_MERCHANTS)
    if top <= 0:
        return
    money = s[poff + P_MONEY] + cpar(s, T, poff, T_CLAN_MARKET_MONEY)
    for side in range(2):
        for g in range(N_GOODS):
            if only_good >= 0 and g != only_good:
                continue
            if s[poff + P_MARKET + (1 - side) * N_GOODS + g] > 0:
                continue
            if side == 1:
                kmax = min(top, s[poff + P_GOODS + g])
            else:
                price = market_price(s, T, g)
                if price > 0:
                    kmax = min(top, money // price)
                else:
                    kmax = 0
                    while kmax < top and can_trade(s, T, poff, side, g, kmax + 1):
                        kmax += 1
            row = A_TRADE + (side * N_GOODS + g) * MAX_MERCHANTS - 1
            for k in range(1, kmax + 1):
                mask[row + k] = 1


@njit(cache=True, inline="always")
def _fulfill_ok(s, T, p, box, reach):
    poff = pofs(p)
    c = s[poff + P_BOX + box]
    if c < 0 or not goods_ok(s, T, poff, c):
        return False
    return _meat_ok(s, T, p, c, -1, reach)


@njit(cache=True, inline="always")
def _fulfill_both_ok(s, T, p, reach):
    """R-8.1: both boxes at once: the goods and animals of both contracts together."""
    poff = pofs(p)
    if cpar(s, T, poff, T_CLAN_FULFILL_MAX) < 2 or n_boxes(s, T, p) < 2:
        return False
    c0 = s[poff + P_BOX]
    c1 = s[poff + P_BOX + 1]
    if c0 < 0 or c1 < 0:
        return False
    for g in range(N_GOODS):
        if s[poff + P_GOODS + g] < need_good(T, c0, g) + need_good(T, c1, g):
            return False
    return _meat_ok(s, T, p, c0, c1, reach)


@njit(cache=True)
def _meat_ok(s, T, p, c, c2, reach):
    """The animals of contract c (plus c2 if >= 0), with P1 ports sparing one each
    (``reach``: p's ``board.reach_of``, whose own-node bitset lists p's units)."""
    cows = 0
    sheep = 0
    for w in range(RB_WORDS):
        x = reach[2 * RB_WORDS + w]
        while x:
            u = s[S_OCC + w * 64 + ctz(x)] % OCC_STRIDE
            x &= x - np.uint64(1)
            if u == COW:
                cows += 1
            elif u == SHEEP:
                sheep += 1
    if c2 >= 0:
        d = meat_deficit2(T, c, c2, cows, sheep)
    else:
        d = meat_deficit(T, c, cows, sheep)
    if d == 0:
        return True
    ports = meat_ports(s, T, p, reach)
    n_ports = 0
    for cc in range(N_CORNERS):
        if ports & (1 << cc):
            n_ports += 1
    return d <= n_ports


@njit(cache=True, inline="always")
def _ports(s, T, p, before_main, reach, mask):
    """R-5: the port bonus actions usable now (``ports.usable_ports``)."""
    usable = usable_ports(s, T, p, before_main, reach)
    for c in range(N_CORNERS):
        if usable & (1 << c):
            mask[A_PORT + c] = 1


@njit(cache=True)
def _rows(s, T, p, mask):
    """R-8.5: the fishermen of p that may row, found among the water nodes only
    (``T_UNIT_NODES`` of the fisherman: every loch and port)."""
    tab = T_UNIT_NODES + FISHERMAN * (2 * RB_WORDS)
    for w in range(RB_WORDS):
        x = table_word(T, tab + 2 * w)
        while x:
            node = w * 64 + ctz(x)
            x &= x - np.uint64(1)
            if can_row_from(s, T, p, node):
                mask[A_ROW + node] = 1


@njit(cache=True)
def legal_mask(s, T, mask):
    """Write the legal actions of the pending decision into ``mask`` (int8[N_ACTIONS])."""
    mask[:] = 0
    ctx = s[S_CTX]
    p = s[S_PLAYER]
    if p < 0:
        return
    poff = pofs(p)
    if ctx >= CTX_MAIN and ctx != CTX_AUCTION:
        _cellar_out(s, poff, mask)
    if ctx == CTX_MAIN:
        if s[S_PRICE_SHIFT_GOOD] >= 0:
            _trades(s, T, poff, mask, s[S_PRICE_SHIFT_GOOD])
            return
        mask[A_PASS] = 1
        reach = scratch(RB_LEN, np.uint64)
        reach_bits(s, T, p, reach)
        _trades(s, T, poff, mask, -1)
        if can_obtain(s, T, p):
            for i in range(MAX_SLOTS):
                if s[S_SLOTS + i] >= 0:
                    mask[A_OBTAIN + i] = 1
        place_scan(s, T, p, False, mask, False, reach)
        upgrade_mask(s, T, poff, False, mask)
        for b in range(n_boxes(s, T, p)):
            if _fulfill_ok(s, T, p, b, reach):
                mask[A_FULFILL + b] = 1
        if _fulfill_both_ok(s, T, p, reach):
            mask[A_FULFILL_BOTH] = 1
        _ports(s, T, p, True, reach, mask)
        if cpar(s, T, poff, T_CLAN_ROWS) > 0 and may_row(s, T, poff):
            _rows(s, T, p, mask)
    elif ctx == CTX_AFTER_MAIN:
        mask[A_END_TURN] = 1
        if ports_open(s, p):
            reach = scratch(RB_LEN, np.uint64)
            reach_bits(s, T, p, reach)
            _ports(s, T, p, False, reach, mask)
    elif ctx == CTX_NEIGHBOR:
        mask[A_NB_DONE] = 1
        pend = s[S_NB_PENDING]
        for g in range(N_GOODS):
            if pend & (1 << g):
                for k in range(1, nb_limit(s, T, p, g) + 1):
                    if not can_nb_buy(s, T, poff, g, k):
                        break
                    mask[A_NB_BUY + g * MAX_NB_BUY + k - 1] = 1
    elif ctx == CTX_STRUCTURE and s[S_N_DRAWN] == 0:
        mask[A_STRUCT_DRAW] = 1              # R-3.3.2 / P8: drawing is optional
        mask[A_STRUCT_DECLINE] = 1
    elif ctx == CTX_STRUCTURE:
        mask[A_KEEP_NONE] = 1
        if free_box_count(s, T, p) > 0 and can_afford_contract(s, T, poff):
            for i in range(MAX_DRAW):
                if s[S_DRAWN + i] >= 0:
                    mask[A_KEEP + i] = 1
    elif ctx == CTX_SLAUGHTER:
        for m in range(T[T_N_NODES]):
            o = s[S_OCC + m]
            if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
                u = o % OCC_STRIDE
                if (u == COW and s[S_MEAT_REM] > 0) or (u == SHEEP and s[S_MEAT_REM + 1] > 0):
                    mask[A_SELECT + m] = 1
        ports = s[S_MEAT_PORTS]
        for c in range(N_CORNERS):
            if ports & (1 << c):
                mask[A_PORT + c] = 1
    elif ctx == CTX_BONUS:
        if s[S_BONUS_HEX] > 0:
            mask[A_DECLINE_HEX] = 1
            place_scan(s, T, p, True, mask, False, reach_of(s, T, p))
        if s[S_BONUS_UPG] > 0:
            mask[A_DECLINE_UPGRADE] = 1
            upgrade_mask(s, T, poff, True, mask)
            for i in range(2 * N_GOODS):
                if retrieve_ok(s, T, poff, i):
                    mask[A_RETRIEVE + i] = 1
    elif ctx == CTX_PORT_DISCARD or ctx == CTX_PORT_GAIN:
        first = 0 if s[S_PORT_KIND] == PORT_BASIC_EXCHANGE else 3
        for g in range(first, first + 3):
            if ctx == CTX_PORT_GAIN or s[poff + P_GOODS + g] > 0:
                mask[A_PICK_GOOD + g] = 1
    elif ctx == CTX_PORT_PRICE:
        steps = port_param(T, PORT_PRICE_SHIFT, 0)
        exact = T[T_PRICE_SHIFT_EXACT] != 0           # [interp] exactly / up to the tile's steps
        for g in range(N_GOODS):
            for i in range(N_DELTAS):
                d = PRICE_DELTAS[i]
                size = d if d > 0 else -d
                if (size == steps or (size < steps and not exact)) \
                        and price_move_ok(s, T, poff, g, d):
                    mask[A_PRICE + g * N_DELTAS + i] = 1
    elif ctx == CTX_PORT_SWAP:
        left = s[S_PORT_LEFT]
        for node in range(T[T_N_NODES]):
            if not owns(s, p, node):
                continue
            for u in range(FISHERMAN):
                if swap_ok(s, T, p, node, u) and swap_completes(s, T, p, node, u, left):
                    mask[A_PLACE + u * MAX_NODES + node] = 1
    elif ctx == CTX_PORT_COPY:
        for c in range(N_CORNERS):
            if copy_ok(s, T, p, c, s[S_MAIN_DONE] == 0):
                mask[A_PORT + c] = 1
    elif ctx == CTX_PROCESS:
        kind = s[S_PROC_KIND]
        for k in range(process_max(s, T, p, kind) + 1):
            mask[A_PROCESS + kind * (MAX_PROCESS + 1) + k] = 1
    elif ctx == CTX_START_PICK:
        for i in range(MAX_START_PICKS):
            if s[S_PICKS + i] >= 0:
                mask[A_START_PICK + i] = 1
    elif ctx == CTX_START_WORKER:
        start_worker_scan(s, T, p, mask, False)
    elif ctx == CTX_SECOND_CONTRACT:
        mask[A_OBTAIN_DONE] = 1
        for i in range(MAX_SLOTS):
            if s[S_SLOTS + i] >= 0:
                mask[A_OBTAIN + i] = 1
    elif ctx == CTX_ROW:
        src = s[S_ROW_FROM]
        for k in range(6):
            dst = T[T_ADJ + src * 6 + k]
            if dst < 0:
                break
            if row_ok(s, T, p, src, dst):
                mask[A_SELECT + dst] = 1
    elif ctx == CTX_CELLAR:
        mask[A_CELLAR_IN] = 1
        mask[A_CELLAR_SKIP] = 1
    elif ctx == CTX_BUTTER:
        mask[A_BUTTER_DONE] = 1
        top = butter_max(s, T, poff)
        for k in range(1, min(top, MAX_BUTTER) + 1):
            mask[A_BUTTER + k - 1] = 1
    elif ctx == CTX_BREW:
        for k in range(brew_max(s, T, poff, s[S_BREW_LEFT]) + 1):
            mask[A_BREW + k] = 1
    elif ctx == CTX_AUCTION:
        high = s[S_AUC_HIGH]
        if high >= 0:
            mask[A_BID_DECLINE] = 1
        for k in range(high + 1, T[T_AUCTION_MAX] + 1):
            mask[A_BID + k] = 1


N_WORDS = N_ACTIONS // 8            # whole 8-byte words of a mask; the tail is read bytewise
assert N_WORDS < 256                # n_legal sums the words by byte lanes of one uint64


@njit(cache=True, inline="always")
def n_legal(mask):
    """The number of legal actions in ``mask`` (int8, at least N_ACTIONS long, 0 after).

    Adds the mask's 8-byte words lane by lane (every byte is 0 or 1 and there are fewer
    than 256 words, so no lane carries: a branch-free loop the compiler vectorizes), then
    the bytes after the last whole word."""
    words = mask[:N_WORDS * 8].view(np.uint64)
    acc = np.uint64(0)
    for w in range(N_WORDS):
        acc += words[w]
    k = 0
    for lane in range(8):
        k += np.int64((acc >> np.uint64(8 * lane)) & np.uint64(0xFF))
    for a in range(N_WORDS * 8, N_ACTIONS):
        k += mask[a]
    return k


@njit(cache=True)
def count_legal(mask):
    """(number of legal actions in ``mask``, the last legal id or -1): a decision with one
    legal action needs no choice."""
    k = n_legal(mask)
    last = N_ACTIONS - 1
    if k:
        while not mask[last]:
            last -= 1
    else:
        last = -1
    return k, last
