"""Turn and round flow: what the next decision is (R-1.7, R-1.8, R-2, R-3.8, R-6, R-8, R-9).

``resolve`` looks at the pending work of the turn in a fixed priority order
and sets S_CTX / S_PLAYER; when nothing is pending, the turn, phase or round
moves on. Pending work that offers no legal option is dropped here.

``automa`` (``automa.deck.automa_switch``): ``None`` in a game without Automa seats, whose
compilation then leaves out every call of the Automa (A-7, A-8).
"""
import numpy as np

from caledonia_env.engine.automa.deck import is_automa
from caledonia_env.engine.automa.phases import automa_final, automa_prepare, automa_production
from caledonia_env.engine.board import count_units, pofs
from caledonia_env.engine.clans import apply_clan, brew_max, butter_max, cellar_age, cellar_out, crow
from caledonia_env.engine.constants import (CLAN_AUCTION, CLAN_DRAFT, COW, CTX_AFTER_MAIN, CTX_AUCTION, CTX_BONUS,
                        CTX_BREW, CTX_BUTTER, CTX_CELLAR, CTX_GAME_OVER, CTX_MAIN, CTX_NEIGHBOR,
                        CTX_PORT_COPY, CTX_PORT_DISCARD, CTX_PORT_GAIN, CTX_PORT_PRICE,
                        CTX_PORT_SWAP, CTX_PROCESS, CTX_ROW, CTX_SECOND_CONTRACT, CTX_SLAUGHTER,
                        CTX_START_PICK, CTX_START_WORKER, CTX_STRUCTURE, FIELD, FISHERMAN,
                        LUMBERJACK, MAX_DRAW, MAX_SLOTS, MAX_START_PICKS, MINER, N_GOODS, N_UNITS,
                        PH_ACTIONS, PH_OVER, PH_PRODUCTION, PH_SETUP_PICK, PH_SETUP_WORKERS,
                        PORT_BASIC_EXCHANGE, PORT_COPY, PORT_PRICE_SHIFT, PORT_PROCESSED_EXCHANGE,
                        PORT_SWAP_UNITS, SHEEP, WHISKY)
from caledonia_env.engine.contracts import draw, refill_slots
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (P_BID, P_CELLAR, P_GLORY, P_GOODS, P_MARKET, P_MERCH, P_MONEY, P_PASSED,
                     P_START_TILE, P_TECH, P_WHISKY_MADE, S_AUC_BIDDER, S_AUC_HIGH, S_AUC_LEADER,
                     S_AUC_OUT, S_AUC_SEAT, S_AUC_STAGE, S_BONUS_HEX, S_BONUS_UPG, S_BREW_LEFT,
                     S_CTX, S_DECK_COUNT, S_DONE, S_DRAWN, S_KEEP_LEFT, S_MAIN_DONE, S_MEAT_REM,
                     S_N_DRAWN, S_N_PASSED, S_NB_BOUGHT, S_NB_PENDING, S_NEXT_ORDER, S_NP, S_ORDER,
                     S_PHASE, S_PICK_CLANS, S_PICKS, S_PLAYER, S_PORT_KIND, S_PORT_LEFT,
                     S_PORT_STAGE, S_PRICE_SHIFT_GOOD, S_PROC_KIND, S_PROC_SEAT, S_ROUND,
                     S_ROW_FROM, S_ROWED, S_SECOND_OBTAIN, S_SETUP_PTR, S_SLOTS, S_STRUCT_PENDING,
                     S_TILES, S_TURN_CONTRACTS, S_TURN_POS, T_AUCTION_MAX, T_CLAN_CELLAR_IN,
                     T_CLAN_INCOME, T_CLAN_MODE, T_CLAN_STRUCT_DRAW, T_CLAN_STRUCT_KEEP,
                     T_CLAN_WORKERS, T_ROUNDS, T_SCORING_TILES_ON, T_SEAT_MONEY, T_START_GOODS,
                     T_START_MONEY, T_UNIT_GOOD, T_UNIT_YIELD)
from caledonia_env.engine.legality import (any_after_main_port, any_free_hex, any_nb_buy, any_start_worker,
                      any_upgrade_bonus, can_obtain_with_cellar, free_box_count, process_max)
from caledonia_env.engine.scoring import final_scoring, tile_glory
from caledonia_env.engine.solo import is_market_round, market_phase


# ------------------------------------------------------------------ setup
@njit(cache=True, inline="always")
def setup_next(s, T, automa):
    """Advance through the clan auction (R-9.4), starting picks (R-1.7/R-1.9) and
    starting workers (R-1.8, R-8.4)."""
    n = s[S_NP]
    if s[S_PHASE] == PH_SETUP_PICK:
        if T[T_CLAN_MODE] == CLAN_AUCTION:
            if s[S_AUC_STAGE] == 0:
                s[S_CTX] = CTX_AUCTION
                s[S_PLAYER] = s[S_AUC_BIDDER]
                return
            if s[S_AUC_STAGE] == 1:
                s[S_CTX] = CTX_START_PICK
                s[S_PLAYER] = s[S_AUC_LEADER]
                return
        elif s[S_SETUP_PTR] < n:
            s[S_CTX] = CTX_START_PICK
            s[S_PLAYER] = s[S_ORDER + n - 1 - s[S_SETUP_PTR]]   # reverse turn order
            return
        s[S_PHASE] = PH_SETUP_WORKERS
        s[S_SETUP_PTR] = 0
    while True:
        p = worker_placer(s, T, s[S_SETUP_PTR])
        if p < 0:
            break
        if any_start_worker(s, T, p):
            s[S_CTX] = CTX_START_WORKER
            s[S_PLAYER] = p
            return
        s[S_SETUP_PTR] += 1          # no legal hex left for this worker: it is skipped
    start_round(s, T, True, automa)


@njit(cache=True, inline="always")
def worker_placer(s, T, ptr):
    """Who places starting worker number ``ptr`` (R-1.8): one each in turn order, a second
    each in reverse order, further ones (Fergusson's third, R-8.4) in turn order after
    everyone; -1 when all are placed."""
    n = s[S_NP]
    for k in range(8):
        for i in range(n):
            seat = i if k % 2 == 0 else n - 1 - i
            p = s[S_ORDER + seat]
            if T[T_CLAN_WORKERS + crow(s, pofs(p))] > k:
                if ptr == 0:
                    return p
                ptr -= 1
    return -1


# ------------------------------------------------------------ clan auction
@njit(cache=True)
def _unassigned(s, p):
    return s[pofs(p) + P_START_TILE] < 0


@njit(cache=True, inline="always")
def next_bidder(s, after):
    """Next player clockwise after ``after`` who may still bid in this auction (R-9.4)."""
    n = s[S_NP]
    for k in range(1, n):
        q = (after + k) % n
        if _unassigned(s, q) and not (s[S_AUC_OUT] >> q) & 1 and q != s[S_AUC_LEADER]:
            return q
    return -1


@njit(cache=True)
def start_auction(s, T, opener):
    """Open the auction for the next turn-order position (R-9.4); the last player left
    takes the last clan free and plays last."""
    n = s[S_NP]
    left = 0
    last = -1
    for p in range(n):
        if _unassigned(s, p):
            left += 1
            last = p
    if left == 0:
        s[S_AUC_STAGE] = 2
        return
    if left == 1:
        for i in range(MAX_START_PICKS):
            if s[S_PICKS + i] >= 0:
                s[S_ORDER + s[S_AUC_SEAT]] = last
                take_pair(s, T, last, i)
                break
        s[S_AUC_SEAT] += 1
        s[S_AUC_STAGE] = 2
        return
    while not _unassigned(s, opener):
        opener = (opener + 1) % n
    s[S_AUC_STAGE] = 0
    s[S_AUC_HIGH] = -1
    s[S_AUC_LEADER] = -1
    s[S_AUC_OUT] = 0
    s[S_AUC_BIDDER] = opener


@njit(cache=True, inline="always")
def auction_won(s, T):
    """The leader pays the bid in VP and takes the position being auctioned (R-9.4)."""
    leader = s[S_AUC_LEADER]
    s[pofs(leader) + P_BID] = s[S_AUC_HIGH]
    s[S_ORDER + s[S_AUC_SEAT]] = leader
    s[S_AUC_STAGE] = 1


@njit(cache=True, inline="always")
def auction_bid(s, T, p, bid):
    """p bids ``bid`` (-1 declines); the auction ends when nobody may outbid the leader."""
    if bid < 0:
        s[S_AUC_OUT] |= 1 << p
    else:
        s[S_AUC_HIGH] = bid
        s[S_AUC_LEADER] = p
    q = next_bidder(s, p)
    if q < 0 or s[S_AUC_HIGH] >= T[T_AUCTION_MAX]:
        auction_won(s, T)
    else:
        s[S_AUC_BIDDER] = q


@njit(cache=True)
def take_pair(s, T, p, i):
    """Starting pair i goes to p (R-1.7, R-1.9, R-9.4): the tile's money and goods, the
    pair's clan (draft, auction), and the no-clan seat money (R-1.9)."""
    poff = pofs(p)
    tile = s[S_PICKS + i]
    clan = s[S_PICK_CLANS + i]
    s[S_PICKS + i] = -1
    s[S_PICK_CLANS + i] = -1
    s[poff + P_START_TILE] = tile
    s[poff + P_MONEY] += T[T_START_MONEY + tile]
    for g in range(N_GOODS):
        s[poff + P_GOODS + g] += T[T_START_GOODS + tile * N_GOODS + g]
    mode = T[T_CLAN_MODE]
    if mode == CLAN_DRAFT or mode == CLAN_AUCTION:
        apply_clan(s, T, poff, clan)
    for seat in range(s[S_NP]):
        if s[S_ORDER + seat] == p:
            s[poff + P_MONEY] += T[T_SEAT_MONEY + seat]


@njit(cache=True, inline="always")
def auction_pick_done(s, T):
    """After the winner's pick: the next position, opened left of the winner (R-9.4)."""
    n = s[S_NP]
    s[S_AUC_SEAT] += 1
    start_auction(s, T, (s[S_AUC_LEADER] + 1) % n)


@njit(cache=True)
def start_round(s, T, first, automa):
    """R-2.1 preparation (skipped in round 1), then the first turn of the round."""
    n = s[S_NP]
    if not first:
        s[S_ROUND] += 1
        for p in range(n):
            poff = pofs(p)
            for i in range(12):
                s[poff + P_MERCH] += s[poff + P_MARKET + i]
                s[poff + P_MARKET + i] = 0
        if is_market_round(s, T):
            market_phase(s, T)       # solo: dice, refill, removal
        else:
            refill_slots(s, T)
        if automa is not None:
            automa_prepare(s, T)
        for i in range(n):
            s[S_ORDER + i] = s[S_NEXT_ORDER + i]
    new_turn(s)
    for p in range(n):
        s[pofs(p) + P_PASSED] = 0
        s[S_NEXT_ORDER + p] = -1
    s[S_N_PASSED] = 0
    s[S_PHASE] = PH_ACTIONS
    s[S_TURN_POS] = 0
    s[S_MAIN_DONE] = 0
    s[S_PRICE_SHIFT_GOOD] = -1
    s[S_PLAYER] = s[S_ORDER]
    s[S_CTX] = CTX_MAIN


# ------------------------------------------------------------------ turns
@njit(cache=True)
def new_turn(s):
    """Reset the per-turn counters (R-8.1 contracts, R-8.5 rowing, R-3.3.1 purchases)."""
    s[S_TURN_CONTRACTS] = 0
    s[S_ROWED] = 0
    s[S_ROW_FROM] = -1
    for g in range(N_GOODS):
        s[S_NB_BOUGHT + g] = 0


@njit(cache=True)
def end_turn(s, T, automa):
    """Next player in turn order who has not passed; production when all passed (R-2.2)."""
    n = s[S_NP]
    s[S_MAIN_DONE] = 0
    s[S_PRICE_SHIFT_GOOD] = -1
    new_turn(s)
    if s[S_N_PASSED] >= n:
        start_production(s, T, automa)
        return
    pos = s[S_TURN_POS]
    for k in range(1, n + 1):
        q = (pos + k) % n
        p = s[S_ORDER + q]
        if s[pofs(p) + P_PASSED] == 0:
            s[S_TURN_POS] = q
            s[S_PLAYER] = p
            s[S_CTX] = CTX_MAIN
            return


# ------------------------------------------------------------- production
@njit(cache=True, inline="always")
def start_production(s, T, automa):
    """MacKenzie's cellar ages (R-8.6); R-6.1 income (clan rates, R-8.5) and R-6.2 basic
    goods for everyone, then processing choices."""
    n = s[S_NP]
    units = np.zeros(N_UNITS, np.int32)
    for p in range(n):
        poff = pofs(p)
        cellar_age(s, T, poff)
        s[poff + P_WHISKY_MADE] = 0
        count_units(s, T, p, units)
        inc = T_CLAN_INCOME + crow(s, poff) * 5
        s[poff + P_MONEY] += units[LUMBERJACK] * T[inc + s[poff + P_TECH]]
        s[poff + P_MONEY] += units[MINER] * T[inc + 2 + s[poff + P_TECH + 1]]
        s[poff + P_MONEY] += units[FISHERMAN] * T[inc + 4]
        for u in (SHEEP, COW, FIELD):
            g = T[T_UNIT_GOOD + u]
            s[poff + P_GOODS + g] += units[u] * T[T_UNIT_YIELD + u]
    if automa is not None:
        automa_production(s, T)
    s[S_PHASE] = PH_PRODUCTION
    s[S_PROC_SEAT] = 0
    s[S_PROC_KIND] = 0
    production_next(s, T, automa)


@njit(cache=True)
def production_next(s, T, automa):
    """Next production choice in next round's turn order: processing per building kind
    (R-6.3, steps 0-2), MacKenzie's cellar (R-8.6, step 3), Cunningham's butter (R-8.3,
    step 4); then round scoring (R-6.4)."""
    n = s[S_NP]
    while s[S_PROC_SEAT] < n:
        p = s[S_NEXT_ORDER + s[S_PROC_SEAT]]
        poff = pofs(p)
        while s[S_PROC_KIND] < 5:
            k = s[S_PROC_KIND]
            if k < 3:
                due = process_max(s, T, p, k) > 0
                ctx = CTX_PROCESS
            elif k == 3:
                due = cellar_in_ok(s, T, poff)
                ctx = CTX_CELLAR
            else:
                due = butter_max(s, T, poff) > 0
                ctx = CTX_BUTTER
            if due:
                s[S_PLAYER] = p
                s[S_CTX] = ctx
                return
            s[S_PROC_KIND] += 1
        s[S_PROC_SEAT] += 1
        s[S_PROC_KIND] = 0
    end_round(s, T, automa)


@njit(cache=True, inline="always")
def cellar_in_ok(s, T, poff):
    """A freshly produced whisky may go onto the empty left cellar space (R-8.6)."""
    return (T[T_CLAN_CELLAR_IN + crow(s, poff)] > 0 and s[poff + P_WHISKY_MADE] > 0
            and s[poff + P_GOODS + WHISKY] > 0 and s[poff + P_CELLAR] == 0)


@njit(cache=True, inline="always")
def end_round(s, T, automa):
    """R-6.4 round scoring; after the last round, final scoring (R-7)."""
    n = s[S_NP]
    tile = s[S_TILES + s[S_ROUND] - 1]
    if T[T_SCORING_TILES_ON] and tile >= 0:
        for p in range(n):
            if not is_automa(T, p):
                s[pofs(p) + P_GLORY] += tile_glory(s, T, p, tile)
    if s[S_ROUND] >= T[T_ROUNDS]:
        for p in range(n):           # barrels leave the cellar, with their money
            poff = pofs(p)
            while s[poff + P_CELLAR] > 0:
                cellar_out(s, T, poff, 0, 0)
            while s[poff + P_CELLAR + 1] > 0:
                cellar_out(s, T, poff, 1, 1)
        final_scoring(s, T)
        if automa is not None:
            automa_final(s, T)
        end_game(s)
        return
    start_round(s, T, False, automa)


@njit(cache=True, inline="always")
def end_game(s):
    """The game is over (R-7 scored): the decision context says so (``layout.game_over``, the
    one test); the phase and S_DONE mirror it, and nobody decides."""
    s[S_PHASE] = PH_OVER
    s[S_CTX] = CTX_GAME_OVER
    s[S_DONE] = 1
    s[S_PLAYER] = -1


# ---------------------------------------------------------------- resolve
@njit(cache=True, inline="always")
def any_slot(s):
    for i in range(MAX_SLOTS):
        if s[S_SLOTS + i] >= 0:
            return True
    return False


@njit(cache=True, inline="always")
def structure_offer(s, T, p):
    """The structure bonus can be taken: an empty box and a non-empty pile (R-3.3.2)."""
    return (free_box_count(s, T, p) > 0 and s[S_DECK_COUNT] > 0
            and T[T_CLAN_STRUCT_DRAW + crow(s, pofs(p))] > 0)


@njit(cache=True, inline="always")
def structure_draw(s, T, p):
    """Draw the structure bonus contracts (R-3.3.2; Buchanan draws 6 and keeps 0-2, R-8.1);
    False if there is nothing to pick."""
    if free_box_count(s, T, p) == 0:
        return False
    poff = pofs(p)
    for i in range(MAX_DRAW):
        s[S_DRAWN + i] = -1
    k = 0
    while k < T[T_CLAN_STRUCT_DRAW + crow(s, poff)]:
        c = draw(s)
        if c < 0:
            break
        s[S_DRAWN + k] = c
        k += 1
    s[S_N_DRAWN] = k
    s[S_KEEP_LEFT] = T[T_CLAN_STRUCT_KEEP + crow(s, poff)]
    return k > 0


@njit(cache=True)
def resolve(s, T, automa):
    """Set S_CTX / S_PLAYER for the next decision."""
    ph = s[S_PHASE]
    if ph == PH_SETUP_PICK or ph == PH_SETUP_WORKERS:
        setup_next(s, T, automa)
        return
    if ph == PH_PRODUCTION:
        production_next(s, T, automa)
        return
    if ph == PH_OVER:
        s[S_CTX] = CTX_GAME_OVER
        return
    p = s[S_PLAYER]
    # 1. neighborhood purchases right after an expansion
    if s[S_NB_PENDING] != 0:
        if any_nb_buy(s, T, p):
            s[S_CTX] = CTX_NEIGHBOR
            return
        s[S_NB_PENDING] = 0
    # 2. a port effect in progress
    kind = s[S_PORT_KIND]
    if kind >= 0:
        if s[S_PORT_LEFT] > 0:
            if kind == PORT_BASIC_EXCHANGE or kind == PORT_PROCESSED_EXCHANGE:
                s[S_CTX] = CTX_PORT_DISCARD if s[S_PORT_STAGE] == 0 else CTX_PORT_GAIN
            elif kind == PORT_PRICE_SHIFT:
                s[S_CTX] = CTX_PORT_PRICE
            elif kind == PORT_SWAP_UNITS:
                s[S_CTX] = CTX_PORT_SWAP
            elif kind == PORT_COPY:
                s[S_CTX] = CTX_PORT_COPY
            return
        s[S_PORT_KIND] = -1
    # 3. structure bonus (R-3.3.2, P8); Buchanan may keep a second drawn contract
    if s[S_N_DRAWN] > 0:
        s[S_CTX] = CTX_STRUCTURE
        return
    if s[S_STRUCT_PENDING]:
        if structure_offer(s, T, p):         # draw or decline (optional, R-3.3.2 / P8)
            s[S_CTX] = CTX_STRUCTURE
            return
        s[S_STRUCT_PENDING] = 0
    # 4. animals to slaughter for a fulfilled contract
    if s[S_MEAT_REM] + s[S_MEAT_REM + 1] > 0:
        s[S_CTX] = CTX_SLAUGHTER
        return
    # 4b. beer for the contract's hops
    if s[S_BREW_LEFT] > 0:
        if brew_max(s, T, pofs(p), s[S_BREW_LEFT]) > 0:
            s[S_CTX] = CTX_BREW
            return
        s[S_BREW_LEFT] = 0
    # 5. export bonuses / P4 upgrade; impossible ones lapse
    if s[S_BONUS_HEX] > 0 and not any_free_hex(s, T, p):
        s[S_BONUS_HEX] = 0
    if s[S_BONUS_UPG] > 0 and not any_upgrade_bonus(s, T, p):
        s[S_BONUS_UPG] = 0
    if s[S_BONUS_HEX] > 0 or s[S_BONUS_UPG] > 0:
        s[S_CTX] = CTX_BONUS
        return
    # 5b. Buchanan's second contract in the same Obtain action
    if s[S_SECOND_OBTAIN]:
        if can_obtain_with_cellar(s, T, p) and any_slot(s):
            s[S_CTX] = CTX_SECOND_CONTRACT
            return
        s[S_SECOND_OBTAIN] = 0
    # 5c. where MacDonald's chosen fisherman rows to
    if s[S_ROW_FROM] >= 0:
        s[S_CTX] = CTX_ROW
        return
    # 6. the turn itself: main action, then ports after it
    if s[S_MAIN_DONE] == 0:
        s[S_CTX] = CTX_MAIN
        return
    if any_after_main_port(s, T, p):
        s[S_CTX] = CTX_AFTER_MAIN
        return
    end_turn(s, T, automa)
