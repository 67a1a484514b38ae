"""The publisher's Automa as an engine seat (A-0 … A-8, reference checks A-13).

Scenario tests drive the numba functions of ``caledonia_env.engine.automa`` on a real
game state with a controlled support card (a copy of the tables with one card row
rewritten), so each A- rule is checked on its own. The Automa's actions take the event log
as a required last argument (``None`` here, as the engine passes it in a game without a
log), so every caller shares one compilation.
"""
import numpy as np
import pytest

from caledonia_env import Game, GameConfig
from caledonia_env.data.automa import ACTIONS, CRITERIA, MODULES, load_automa
from caledonia_env.engine.automa import deck as AD
from caledonia_env.engine.automa import expand as AX
from caledonia_env.engine.automa import phases as APH
from caledonia_env.engine.automa import turn as A
from caledonia_env.engine import layout as L
from caledonia_env.engine.board import pofs
from caledonia_env.engine.constants import (BAKERY, COW, DAIRY, DISTILLERY, EMPTY, FIELD,
                                            LUMBERJACK, MILK, MINER, NEUTRAL, OCC_STRIDE, SHEEP,
                                            TERRAIN_FOREST, TERRAIN_LOCH, TERRAIN_PASTURE,
                                            TERRAIN_PORT)
from caledonia_env.engine.flow import end_round, start_production, start_round
from caledonia_env.engine.scoring import settlement_networks

AP = 1          # the Automa's seat in the 2-player fixture
HUMAN = 0
#: The event log (A-3) of the direct calls below: the engine always passes one
#: (``automa.run.run_automata``), so they run the engine's own compilations.
LOG = np.zeros(L.AM_LOG_SIZE, np.int32)


def game(seed=1, n=2, automa=None):
    return Game(GameConfig(num_players=n, automa=automa or {AP: 5}, seed=seed))


def poff(p=AP):
    return pofs(p)


def clear_units(g, p):
    s = g.state
    for v in range(g.board.n_nodes):
        o = int(s[L.S_OCC + v])
        if 0 <= o < 64 and o // 16 == p:
            s[L.S_OCC + v] = EMPTY
            s[pofs(p) + L.P_BOARD + o % 16] += 1


def put(g, p, u, v):
    g.state[L.S_OCC + v] = p * 16 + u
    g.state[pofs(p) + L.P_BOARD + u] -= 1


def tables_with_card(g, c, actions=None, criteria=None, modules="ABCD", steps=7, upgrade=None):
    """A copy of the tables where card row c has the given fields."""
    T = g.tables.copy()
    base = L.T_AM_CARDS + c * L.AM_CARD_W
    if actions is not None:
        T[base + AD.CARD_N_ACTIONS] = len(actions)
        for i, a in enumerate(actions):
            T[base + AD.CARD_ACTIONS + i] = ACTIONS.index(a)
    if criteria is not None:
        for i, k in enumerate(criteria):
            T[base + AD.CARD_CRITERIA + i] = CRITERIA.index(k)
    T[base + AD.CARD_MODULES] = sum(1 << MODULES.index(m) for m in modules)
    T[base + AD.CARD_STEPS] = steps
    if upgrade is not None:
        T[base + AD.CARD_UPGRADE] = ("merchant", "shipping").index(upgrade)
    return T


def land(g, v):
    return g.board.terrain[v] & (TERRAIN_LOCH | TERRAIN_PORT) == 0 and g.board.active[v]


def nbrs(g, v):
    return [int(w) for w in g.board.neighbor[v] if w >= 0]


def money(g, p=AP):
    return int(g.state[pofs(p) + L.P_MONEY])


def isolate(g, x, keep):
    """Automa unit on x only; every empty land neighbor of x except ``keep`` blocked."""
    s = g.state
    clear_units(g, AP)
    put(g, AP, SHEEP, x)
    for w in nbrs(g, x):
        if w not in keep and s[L.S_OCC + w] == EMPTY and land(g, w):
            s[L.S_OCC + w] = NEUTRAL
    s[pofs(AP) + L.P_SHIP] = 0


def pasture_with_free_neighbors(g, k, module=None):
    s = g.state
    for v in range(g.board.n_hex):
        if not land(g, v) or s[L.S_OCC + v] != EMPTY or not g.board.terrain[v] & TERRAIN_PASTURE:
            continue
        if module is not None and g.board.module[v] != module:
            continue
        free = [w for w in nbrs(g, v) if land(g, w) and s[L.S_OCC + w] == EMPTY
                and g.board.terrain[w] & TERRAIN_PASTURE]
        if len(free) >= k:
            return v, free
    raise AssertionError("no such hex")


# ----------------------------------------------------------------- deck
def test_a13_deck_sizes_by_round_and_removal_a22():
    """A-2.2 / A-13: round 1 -> 14 cards; round 3 with card 5 removed -> 17; round 5 -> 22."""
    g = game()
    s, T = g.state, g.tables
    for rnd, removed, size in ((1, 0, 14), (3, 1 << 4, 17), (5, 0, 22)):
        s[L.S_ROUND] = rnd
        s[poff() + L.P_AM_REMOVED] = removed
        AD.build_deck(s, T, poff())
        assert s[poff() + L.P_AM_NPILE] == size


def _set_pile(s, ids):
    """Pile with the first id on top (card ids are rows + 1)."""
    rows = [i - 1 for i in ids][::-1]
    s[poff() + L.P_AM_PILE:poff() + L.P_AM_PILE + len(rows)] = rows
    s[poff() + L.P_AM_NPILE] = len(rows)
    s[poff() + L.P_AM_DISCARD] = 0
    s[poff() + L.P_AM_REMOVED] = 0
    s[poff() + L.P_AM_ACTION] = -1
    s[poff() + L.P_AM_SUPPORT] = -1


def _bits(x):
    return {c + 1 for c in range(31) if (int(x) >> c) & 1}


def test_a13_draw_support_and_reshuffle_a23_a24_a25():
    """A-13: pile [1,2,3]: action 1; action 2 (1 discarded); support 3; next draw reshuffles
    the discard {1,2,3}: 2 left in the pile, discard empty."""
    g = game()
    s, T = g.state, g.tables
    _set_pile(s, [1, 2, 3])
    assert AD.next_action_card(s, T, poff()) + 1 == 1
    assert AD.next_action_card(s, T, poff()) + 1 == 2
    assert _bits(s[poff() + L.P_AM_DISCARD]) == {1}
    s[poff() + L.P_AM_SUPPORT] = AD.draw_card(s, T, poff())
    assert s[poff() + L.P_AM_SUPPORT] + 1 == 3
    AD.next_action_card(s, T, poff())
    assert s[poff() + L.P_AM_NPILE] == 2 and s[poff() + L.P_AM_DISCARD] == 0


def test_a13_skip_cards_removed_as_action_only_a26():
    """A-13 / A-2.6: pile [10,2,11,3]: 10; 2 (card 10 removed, discard empty); support 11;
    3 (discard {2, 11}, one removed card)."""
    g = game()
    s, T = g.state, g.tables
    _set_pile(s, [10, 2, 11, 3])
    assert AD.next_action_card(s, T, poff()) + 1 == 10
    assert AD.next_action_card(s, T, poff()) + 1 == 2
    assert _bits(s[poff() + L.P_AM_REMOVED]) == {10} and s[poff() + L.P_AM_DISCARD] == 0
    s[poff() + L.P_AM_SUPPORT] = AD.draw_card(s, T, poff())
    assert AD.next_action_card(s, T, poff()) + 1 == 3
    assert _bits(s[poff() + L.P_AM_DISCARD]) == {2, 11}
    assert _bits(s[poff() + L.P_AM_REMOVED]) == {10}


def test_a13_removed_cards_stay_out_of_later_decks_a26():
    g = game()
    s, T = g.state, g.tables
    s[poff() + L.P_AM_REMOVED] = 1 << 9
    s[L.S_ROUND] = 2
    AD.build_deck(s, T, poff())
    pile = set(s[poff() + L.P_AM_PILE:poff() + L.P_AM_PILE + s[poff() + L.P_AM_NPILE]])
    assert 9 not in pile and len(pile) == 15


def test_a3_skip_card_spends_the_turn_without_passing_a41():
    """A-4.1 / A-3.2: a skip card uses the turn; the Automa does not pass."""
    g = game()
    s, T = g.state, g.tables
    _set_pile(s, [11])
    before = money(g)
    A.automa_turn(s, T, AP, LOG)
    assert s[poff() + L.P_PASSED] == 0 and money(g) == before


def test_a32_passes_only_past_the_last_entry_a48():
    """A-3.2 / A-4.8: nothing on the card possible -> pass with the table's bonus."""
    g = game()
    s = g.state
    T = tables_with_card(g, 0, actions=["export_contract_fulfill", "technology_upgrade"])
    _set_pile(s, [1])
    s[L.S_N_PASSED] = 1
    before = money(g)
    A.automa_turn(s, T, AP, LOG)
    assert s[poff() + L.P_PASSED] == 1 and s[L.S_NEXT_ORDER + 1] == AP
    assert money(g) - before == T[L.T_PASS_BONUS + 1]


def test_a13_contract_fee_by_round_a46():
    """A-13: taking a contract in round 1..5 -> +5, 0, -5, -10, -15 (A-4.6 data)."""
    g = game()
    s, T = g.state, g.tables
    assert list(T[L.T_AM_FEE:L.T_AM_FEE + 5]) == [5, 0, -5, -10, -15]
    for rnd in range(1, 5):
        g2 = game()
        s = g2.state
        s[L.S_ROUND] = rnd
        s[poff() + L.P_MONEY] = 50
        assert A.am_take(s, T, AP, 0, LOG)
        assert money(g2) == 50 + T[L.T_AM_FEE + rnd - 1]


def test_a13_unit_cycle_a454():
    """A-13 / A-4.5.4: sheep +1 -> cow; cow +6 -> sheep; cheese dairy +7 -> cheese dairy,
    and the advanced type is stored."""
    for pref, steps, unit, new_pref in ((0, 1, COW, 1), (1, 6, SHEEP, 0), (2, 7, DAIRY, 2)):
        g = game()
        s = g.state
        x, free = pasture_with_free_neighbors(g, 1)
        isolate(g, x, keep=[free[0]])
        s[poff() + L.P_MONEY] = 200
        s[poff() + L.P_AM_PREF] = pref
        T = tables_with_card(g, 0, criteria=["costs", "port", "settlements", "neighborhood"],
                             steps=steps)
        s[poff() + L.P_AM_SUPPORT] = 0
        assert AX.am_expand(s, T, AP, 0, LOG)
        assert s[L.S_OCC + free[0]] == AP * 16 + unit
        assert s[poff() + L.P_AM_PREF] == new_pref


def test_a454_unit_skips_types_not_on_board_or_unaffordable():
    """A-4.5.4: the first type in cyclic order that is still on the board and affordable."""
    g = game()
    s = g.state
    x, free = pasture_with_free_neighbors(g, 1)
    isolate(g, x, keep=[free[0]])
    s[poff() + L.P_MONEY] = 200
    s[poff() + L.P_AM_PREF] = 0
    s[poff() + L.P_BOARD + COW] = 0          # cow (P') gone -> cheese dairy next
    T = tables_with_card(g, 0, steps=1)
    s[poff() + L.P_AM_SUPPORT] = 0
    assert AX.am_expand(s, T, AP, 0, LOG)
    assert s[L.S_OCC + free[0]] == AP * 16 + DAIRY
    assert s[poff() + L.P_AM_PREF] == 1      # P' stored whatever unit was placed


# ----------------------------------------------------------------- expand criteria
def test_a453_costs_criterion_takes_the_cheapest_land():
    """A-4.5.2 / A-4.5.3 costs: among the candidates the lowest land cost wins."""
    g = game(seed=4)
    s = g.state
    for x in range(g.board.n_hex):
        if not land(g, x) or s[L.S_OCC + x] != EMPTY:
            continue
        free = [w for w in nbrs(g, x) if land(g, w) and s[L.S_OCC + w] == EMPTY
                and g.board.terrain[w] & TERRAIN_PASTURE]
        if len({int(g.board.land_cost[w]) for w in free}) >= 2:
            break
    isolate(g, x, keep=free)
    s[poff() + L.P_MONEY] = 200
    T = tables_with_card(g, 0, criteria=["costs", "port", "settlements", "neighborhood"])
    s[poff() + L.P_AM_SUPPORT] = 0
    assert AX.am_expand(s, T, AP, 0, LOG)
    placed = [w for w in free if s[L.S_OCC + w] >= 0 and s[L.S_OCC + w] // 16 == AP]
    assert len(placed) == 1
    assert g.board.land_cost[placed[0]] == min(g.board.land_cost[w] for w in free)


def test_a451_modules_restrict_candidates_and_none_is_not_possible():
    """A-4.5.1: only hexes in the support card's modules; no candidate -> not possible."""
    g = game()
    s = g.state
    x, free = pasture_with_free_neighbors(g, 1)
    isolate(g, x, keep=[free[0]])
    s[poff() + L.P_MONEY] = 200
    other = [m for m in MODULES if MODULES.index(m) != g.board.module[free[0]]]
    T = tables_with_card(g, 0, modules="".join(other))
    s[poff() + L.P_AM_SUPPORT] = 0
    assert not AX.am_expand(s, T, AP, 0, LOG)      # the only free hex is outside the card's modules
    s[L.S_ROUND] = 5                   # round 5: all four modules
    assert AX.am_expand(s, T, AP, 0, LOG)


def test_a04_expand_needs_money_for_land_and_unit():
    """A-0.4: an Expand the Automa cannot pay for is not possible."""
    g = game()
    s = g.state
    x, free = pasture_with_free_neighbors(g, 1)
    isolate(g, x, keep=[free[0]])
    s[poff() + L.P_MONEY] = int(g.board.land_cost[free[0]])    # no unit affordable on top
    T = tables_with_card(g, 0)
    s[poff() + L.P_AM_SUPPORT] = 0
    assert not AX.am_expand(s, T, AP, 0, LOG)


def settlement_key(s, T, p, v):
    """The A-4.5.3 settlement key of one hex, with the network table built for it."""
    comp, root, size = (np.empty(L.MAX_NODES, np.int32) for _ in range(3))
    roots = AX.network_table(s, T, p, comp, root, size)
    return AX.settlement_key(s, T, p, v, comp, root, size, roots, np.zeros(L.MAX_NODES, np.int32))


def settlement_key_by_recount(g, s, p, v):
    """The same key by brute force: count the networks before and after placing a unit."""
    def nets(node):
        comp, parent = np.empty(L.MAX_NODES, np.int32), np.empty(L.MAX_NODES, np.int32)
        n = settlement_networks(s, g.tables, p, comp, parent)

        def find(c):
            while parent[c] != c:
                c = parent[c]
            return c
        roots = [find(c) for c in range(n)]
        return len(set(roots)), (roots.count(find(comp[node])) if node >= 0 else 0)
    alone = not any(0 <= s[L.S_OCC + w] < L.MAX_PLAYERS * OCC_STRIDE
                    and s[L.S_OCC + w] // OCC_STRIDE == p for w in nbrs(g, v))
    before, _ = nets(-1)
    old = s[L.S_OCC + v]
    s[L.S_OCC + v] = p * OCC_STRIDE + SHEEP
    after, size = nets(v)
    s[L.S_OCC + v] = old
    return (2 if after < before else (1 if alone else 0)) * 1000 + size


@pytest.mark.parametrize("players", [2, 4])
def test_a453_settlement_key_matches_a_recount(players):
    """A-4.5.3: the incremental settlement key equals a recount of the networks with the
    unit placed, on every empty land hex of boards from random games with Automa seats,
    for every seat and random shipping levels."""
    rng = np.random.default_rng(players)
    checked = 0
    for seed in range(4):
        g = Game(GameConfig(num_players=players, seed=seed, automa={1: 3}))
        while not g.is_terminal:
            if g.context == "main action" and rng.random() < 0.15:
                s = g.state.copy()
                for p in range(players):
                    s[pofs(p) + L.P_SHIP] = rng.integers(0, 5)
                    for v in range(g.board.n_hex):
                        if s[L.S_OCC + v] == EMPTY and land(g, v):
                            assert (settlement_key(s, g.tables, p, v)
                                    == settlement_key_by_recount(g, s, p, v))
                            checked += 1
            g.step(int(rng.choice(np.flatnonzero(g.legal_mask()))))
    assert checked > 1000


def test_a453_settlements_tiers_proposal():
    """A-4.5.3 settlements [proposal]: joining two networks (tier 2) > new settlement
    (tier 1) > growing a settlement (tier 0)."""
    g = game(seed=2)
    s, T = g.state, g.tables
    clear_units(g, AP)
    s[poff() + L.P_SHIP] = 0
    # v with two neighbors x, y that are not neighbors of each other
    for v in range(g.board.n_hex):
        nb = [w for w in nbrs(g, v) if land(g, w) and s[L.S_OCC + w] == EMPTY]
        pair = [(x, y) for x in nb for y in nb if x < y and y not in nbrs(g, x)
                and g.board.ship_req[x, y] > 0]
        if land(g, v) and s[L.S_OCC + v] == EMPTY and pair:
            x, y = pair[0]
            break
    put(g, AP, SHEEP, x)
    put(g, AP, SHEEP, y)
    assert settlement_key(s, T, AP, v) == 2001          # one settlement after joining
    z = [w for w in nbrs(g, x) if land(g, w) and w != v and s[L.S_OCC + w] == EMPTY
         and w not in nbrs(g, y) and g.board.ship_req[w, y] > 0][0]
    assert settlement_key(s, T, AP, z) // 1000 == 0
    s[poff() + L.P_SHIP] = 6
    far = [w for w in range(g.board.n_hex) if land(g, w) and s[L.S_OCC + w] == EMPTY
           and all(w not in nbrs(g, q) for q in (x, y)) and g.board.ship_req[x, w] <= 6][0]
    assert settlement_key(s, T, AP, far) // 1000 in (1, 2)


def test_a453_port_criterion_yes_no_in_card_modules():
    """A-4.5.3 port: a hex that brings an unclaimed port of the card's modules into reach."""
    g = game()
    s, T = g.state, g.tables
    for c in range(4):
        if s[L.S_PORTS + c] < 0:
            continue
        pnode = g.board.n_hex + c
        near = [int(w) for w in g.board.adjacent[pnode] if w >= 0 and land(g, w)]
        if near:
            break
    s[poff() + L.P_PORTS_USED] = 0
    s[poff() + L.P_SHIP] = 0
    v = near[0]
    assert AX.port_key(s, T, AP, v, 15) == 1
    assert AX.port_key(s, T, AP, v, 1 << c) == 1
    assert AX.port_key(s, T, AP, v, 15 & ~(1 << c)) == 0     # [interp] card's modules only
    s[poff() + L.P_PORTS_USED] = 15
    assert AX.port_key(s, T, AP, v, 15) == 0


def test_a455_neighborhood_purchase_money_and_merchants():
    """A-4.5.5: next to a human cow the Automa buys milk on the buy space (medium bracket:
    up to 2), the price rises one step per unit, £3 per merchant, no goods."""
    g = game()
    s = g.state
    x, free = pasture_with_free_neighbors(g, 1)
    v = free[0]
    isolate(g, x, keep=[v])
    w = [q for q in nbrs(g, v) if q != x and land(g, q) and s[L.S_OCC + q] in (EMPTY, NEUTRAL)
         and g.board.terrain[q] & TERRAIN_PASTURE]
    if not w:
        pytest.skip("no pasture neighbor for the human cow on this map")
    s[L.S_OCC + w[0]] = HUMAN * 16 + COW
    s[poff() + L.P_MONEY] = 200
    s[poff() + L.P_MERCH] = 3
    marker = int(s[L.S_PRICE_STEP + MILK])
    assert AX.bracket(s, g.tables, MILK) == AX.MEDIUM
    T = tables_with_card(g, 0)
    s[poff() + L.P_AM_SUPPORT] = 0
    used = bin(int(s[poff() + L.P_PORTS_USED])).count("1")
    assert AX.am_expand(s, T, AP, 0, LOG)
    claimed = bin(int(s[poff() + L.P_PORTS_USED])).count("1") - used     # A-6 on the way
    assert s[poff() + L.P_MARKET + MILK] == 2
    assert s[L.S_PRICE_STEP + MILK] == marker + 2                      # two steps up
    assert s[poff() + L.P_GOODS + MILK] == 0
    u = int(s[L.S_OCC + v]) % 16
    paid = int(g.board.land_cost[v]) + int(T[L.T_UNIT_COST + u])
    assert money(g) == 200 - paid + 2 * T[L.T_AM_NB_MONEY] + claimed * T[L.T_AM_PORT_MONEY]


def test_a5_brackets_proposal_from_market_band():
    """A-5 [proposal]: below the medium band lower, above it upper, inclusive band."""
    g = game()
    s, T = g.state, g.tables
    for gd in range(6):
        lo, hi = T[L.T_SOLO_AVG_LO + gd], T[L.T_SOLO_AVG_HI + gd]       # step numbers
        for step, want in ((lo - 1, AX.LOWER), (lo, AX.MEDIUM), (hi, AX.MEDIUM), (hi + 1, AX.UPPER)):
            s[L.S_PRICE_STEP + gd] = step
            assert AX.bracket(s, T, gd) == want


def test_a44_trade_direction_by_bracket_and_money():
    """A-4.4: upper -> sell, lower -> buy; N merchants placed, price moves N, £1 each."""
    for side, end in ((1, L.T_STEP_HI), (0, L.T_STEP_LO)):
        g = game()
        s, T = g.state, g.tables
        for gd in range(6):
            s[L.S_PRICE_STEP + gd] = T[end + gd]
        s[poff() + L.P_MERCH] = 5
        m0 = money(g)
        assert A.am_trade(s, T, AP, 0, LOG)
        placed = s[poff() + L.P_MARKET:poff() + L.P_MARKET + 12]
        gd = int(np.flatnonzero(placed)[0]) % 6
        n = int(placed.sum())
        assert placed[side * 6 + gd] == n and 1 <= n <= 3
        assert money(g) - m0 == n * T[L.T_AM_TRADE_MONEY]
        moved = s[L.S_PRICE_STEP + gd] - T[end + gd]
        assert moved == (-n if side == 1 else n)


def test_a44_trade_excludes_goods_with_an_automa_merchant():
    """A-4.4 / A-11.7: never a good holding an Automa merchant; none left -> not possible."""
    g = game()
    s, T = g.state, g.tables
    s[poff() + L.P_MERCH] = 5
    for gd in range(5):
        s[poff() + L.P_MARKET + gd] = 1
    assert A.am_trade(s, T, AP, 0, LOG)
    assert s[poff() + L.P_MARKET + 5] + s[poff() + L.P_MARKET + 11] > 0
    assert not A.am_trade(s, T, AP, 0, LOG)
    s[poff() + L.P_MERCH] = 0
    assert not A.am_trade(s, T, AP, 0, LOG)


def test_a42_technology_needs_three_workers_and_money():
    """A-4.2: >= 3 workers of a type on the map, tile unflipped, £10."""
    g = game()
    s, T = g.state, g.tables
    clear_units(g, AP)
    forests = [v for v in range(g.board.n_hex) if land(g, v) and s[L.S_OCC + v] == EMPTY
               and g.board.terrain[v] & TERRAIN_FOREST][:3]
    for v in forests[:2]:
        put(g, AP, LUMBERJACK, v)
    s[poff() + L.P_MONEY] = 50
    assert not A.am_tech(s, T, AP, 0, LOG)
    put(g, AP, LUMBERJACK, forests[2])
    s[poff() + L.P_MONEY] = T[L.T_TECH_COST] - 1
    assert not A.am_tech(s, T, AP, 0, LOG)
    s[poff() + L.P_MONEY] = T[L.T_TECH_COST]
    assert A.am_tech(s, T, AP, 0, LOG)
    assert s[poff() + L.P_TECH] == 1 and money(g) == 0
    assert not A.am_tech(s, T, AP, 0, LOG)


def test_a43_upgrade_order_from_support_card_and_ports():
    """A-4.3: the support card's type first, the other when it is complete; £4."""
    g = game()
    s = g.state
    T = tables_with_card(g, 0, upgrade="shipping")
    s[poff() + L.P_AM_SUPPORT] = 0
    s[poff() + L.P_MONEY] = 20
    ship = int(s[poff() + L.P_SHIP])
    assert A.am_upgrade(s, T, AP, 0, LOG)
    assert s[poff() + L.P_SHIP] == ship + 1
    s[poff() + L.P_SHIP] = T[L.T_SHIP_MAX]
    track = int(s[poff() + L.P_TRACK])
    m0 = money(g)
    assert A.am_upgrade(s, T, AP, 0, LOG)
    assert s[poff() + L.P_TRACK] == track - 1 and money(g) == m0 - T[L.T_HIRE_COST]
    s[poff() + L.P_MONEY] = 3
    assert not A.am_upgrade(s, T, AP, 0, LOG)


def test_a6_port_claim_gives_money_once():
    """A-6: a port in reach is claimed at once for £10, once per Automa."""
    g = game()
    s, T = g.state, g.tables
    c = [k for k in range(4) if s[L.S_PORTS + k] >= 0][0]
    s[poff() + L.P_PORTS_USED] = 0
    clear_units(g, AP)
    v = [int(w) for w in g.board.adjacent[g.board.n_hex + c] if w >= 0 and land(g, w)
         and s[L.S_OCC + w] == EMPTY][0]
    put(g, AP, SHEEP, v)
    m0 = money(g)
    AX.claim_ports(s, T, AP, LOG)
    assert money(g) - m0 >= T[L.T_AM_PORT_MONEY] and (s[poff() + L.P_PORTS_USED] >> c) & 1
    m1 = money(g)
    AX.claim_ports(s, T, AP, LOG)
    assert money(g) == m1


# ----------------------------------------------------------------- contracts
def test_a46_rounds_1_to_3_cheapest_contract():
    g = game(seed=3)
    s, T = g.state, g.tables
    s[L.S_ROUND] = 2
    s[poff() + L.P_MONEY] = 100
    offered = [int(c) for c in s[L.S_SLOTS:L.S_SLOTS + 6] if c >= 0]
    best = min(A.contract_money_cost(T, c) for c in offered)
    assert A.am_take(s, T, AP, 0, LOG)
    assert A.contract_money_cost(T, int(s[poff() + L.P_BOX])) == best


def test_a46_rounds_4_5_rarest_import_then_dearest():
    g = game(seed=3)
    s, T = g.state, g.tables
    s[L.S_ROUND] = 4
    s[poff() + L.P_MONEY] = 100
    offered = [int(c) for c in s[L.S_SLOTS:L.S_SLOTS + 6] if c >= 0]
    keys = {c: A.rarity_key(s, T, AP, c) for c in offered}
    assert A.am_take(s, T, AP, 0, LOG)
    got = int(s[poff() + L.P_BOX])
    assert keys[got] == min(keys.values())
    assert A.contract_money_cost(T, got) == max(A.contract_money_cost(T, c) for c in offered
                                                 if keys[c] == keys[got])


def test_a46_round5_only_affordable_and_fulfilled_at_once_a47():
    """A-4.6 round 5: only contracts with £15 + C <= money; fulfilled at once (A-4.7)."""
    g = game(seed=3)
    s, T = g.state, g.tables
    s[L.S_ROUND] = T[L.T_ROUNDS]
    offered = [int(c) for c in s[L.S_SLOTS:L.S_SLOTS + 6] if c >= 0]
    cheapest = min(A.contract_money_cost(T, c) for c in offered)
    fee = -T[L.T_AM_FEE + 4]
    s[poff() + L.P_MONEY] = fee + cheapest - 1
    assert not A.am_take(s, T, AP, 0, LOG)
    s[poff() + L.P_MONEY] = fee + cheapest
    n0 = int(s[poff() + L.P_N_FULFILLED])
    assert A.am_take(s, T, AP, 0, LOG)
    assert s[poff() + L.P_BOX] == -1 and s[poff() + L.P_N_FULFILLED] == n0 + 1
    assert money(g) >= 0


def test_a47_fulfil_pays_c_and_gains_money_for_bonuses():
    g = game(seed=3)
    s, T = g.state, g.tables
    c = int([k for k in s[L.S_SLOTS:L.S_SLOTS + 6] if k >= 0][0])
    s[poff() + L.P_BOX] = c
    cost = A.contract_money_cost(T, c)
    s[poff() + L.P_MONEY] = cost - 1
    assert not A.am_fulfill(s, T, AP, 0, LOG)
    s[poff() + L.P_MONEY] = cost
    imports0 = s[L.S_IMPORT:L.S_IMPORT + 3].copy()
    assert A.am_fulfill(s, T, AP, 0, LOG)
    gain = (A.cval(T, c, L.C_GAIN_MONEY) + 5 * A.cval(T, c, L.C_GAIN_HEX)
            + 5 * A.cval(T, c, L.C_GAIN_UPG))
    marks = money(g) - gain
    assert marks >= 0                       # plus the £1 import marks
    for i in range(3):
        assert s[L.S_IMPORT + i] >= imports0[i]
    assert s[poff() + L.P_BOX] == -1 and s[L.S_BONUS_HEX] == 0 and s[L.S_BONUS_UPG] == 0


# ----------------------------------------------------------------- A-1 setup
def test_a1_setup_money_shipping_workers_order_picks():
    """A-1.1 / A-1.2 / A-1.4 / A-1.5 / A-1.3: money by level less worker costs plus port
    money, shipping 2, one worker per module, humans first, humans + 1 starting pairs."""
    for level in (1, 5):
        g = Game(GameConfig(num_players=3, automa={0: level}, seed=level))
        s, T = g.state, g.tables
        poff = pofs(0)
        assert s[poff + L.P_SHIP] == T[L.T_AM_SHIP] == 2
        workers = [v for v in range(g.board.n_hex) if s[L.S_OCC + v] in (LUMBERJACK, MINER)]
        assert sorted(g.board.module[v] for v in workers) == [0, 1, 2, 3]
        spent = sum(int(g.board.land_cost[v]) + int(T[L.T_UNIT_COST + s[L.S_OCC + v]])
                    for v in workers)
        ports = bin(int(s[poff + L.P_PORTS_USED])).count("1")
        assert s[poff + L.P_MONEY] == load_automa().level(level)["money"] - spent + 10 * ports
        assert s[L.S_ORDER + 2] == 0                       # Automa last in round 1
        assert sum(1 for i in range(5) if s[L.S_PICKS + i] >= 0) == 3
        texts = [e["text"] for e in g.automa_events]
        assert sum("starting" in t for t in texts) == 4
        assert g.current_player != 0


# ----------------------------------------------------------------- A-7 round phases
def test_a71_preparation_money_and_new_deck():
    g = game()
    s, T = g.state, g.tables
    s[L.S_ROUND] = 1
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + 2] = [0, 1]
    m0 = money(g)
    start_round(s, T, False, True)
    assert money(g) - m0 == T[L.T_AM_PREP_MONEY] == 10
    assert s[poff() + L.P_AM_NPILE] == 16 and s[poff() + L.P_AM_ACTION] == -1


def test_a72_production_money_instead_of_goods():
    """A-7.2: workers as usual, £5 per sheep/cow/building, £10 per field (sourced: DA, a
    field's production capacity 2 at £5 each), no goods."""
    g = game()
    s, T = g.state, g.tables
    clear_units(g, AP)
    past = [v for v in range(g.board.n_hex) if land(g, v) and s[L.S_OCC + v] == EMPTY
            and g.board.terrain[v] & TERRAIN_PASTURE]
    for u, v in zip((SHEEP, COW, FIELD, DAIRY, BAKERY, DISTILLERY), past):
        put(g, AP, u, v)
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + 2] = [0, 1]
    m0 = money(g)
    start_production(s, T, True)            # nothing to process: the next round's preparation follows
    assert s[L.S_ROUND] == 2
    assert money(g) - m0 == 5 * 5 + 10 + T[L.T_AM_PREP_MONEY]
    assert all(s[poff() + L.P_GOODS + k] == 0 for k in range(6))


def test_a73_no_round_scoring_for_the_automa():
    g = game()
    s, T = g.state, g.tables
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + 2] = [0, 1]
    s[poff() + L.P_MONEY] = 500
    s[poff() + L.P_GOODS:poff() + L.P_GOODS + 6] = 9
    end_round(s, T, True)
    assert s[poff() + L.P_GLORY] == 0


# ----------------------------------------------------------------- A-8 final scoring
def test_a8_final_fixed_glory_and_money_per_five():
    """A-8.1 / A-8.2: glory = difficulty value, 1 VP per full £5, no goods."""
    g = game()
    s, T = g.state, g.tables
    s[poff() + L.P_MONEY] = 47
    s[L.S_ROUND] = T[L.T_ROUNDS]
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + 2] = [0, 1]
    end_round(s, T, True)
    b = g.score_breakdown()[AP]
    assert b["glory"] == 50 and b["money"] == 9 and b["goods"] == 0


@pytest.mark.parametrize("v,w,exp", [((3, 2), (8, 4), None), ((3, 1), (8, 0), None),
                                     ((2, 2), (4, 4), None)])
def test_a83_two_seat_export_majority(v, w, exp):
    """A-8.3: most 8 (tie 4 each), exactly one fewer 4, else 0."""
    g = game()
    T = g.tables
    a, b = v
    assert (APH.two_seat(a, b, 0, T, L.T_AM_TWO_EXPORT), APH.two_seat(b, a, 0, T, L.T_AM_TWO_EXPORT)) == w


@pytest.mark.parametrize("v,w", [((5, 3), (12, 6)), ((5, 4), (12, 6)), ((5, 2), (12, 0)),
                                 ((4, 4), (6, 6))])
def test_a83_two_seat_settlement_majority(v, w):
    """A-8.3: most 12 (tie 6 each), one or two fewer 6, else 0."""
    g = game()
    a, b = v
    T = g.tables
    assert (APH.two_seat(a, b, 1, T, L.T_AM_TWO_SETTLE), APH.two_seat(b, a, 1, T, L.T_AM_TWO_SETTLE)) == w


def test_a83_applies_to_the_human_in_a_two_seat_game():
    g = game()
    s, T = g.state, g.tables
    s[pofs(HUMAN) + L.P_N_FULFILLED] = 2
    s[poff() + L.P_N_FULFILLED] = 3
    s[L.S_ROUND] = T[L.T_ROUNDS]
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + 2] = [0, 1]
    end_round(s, T, True)
    b = g.score_breakdown()
    assert b[AP]["exports"] == 8 and b[HUMAN]["exports"] == 4
    assert b[HUMAN]["total"] == sum(v for k, v in b[HUMAN].items() if k != "total")


# ----------------------------------------------------------------- config / agents
@pytest.mark.parametrize("kw,match", [
    (dict(num_players=2, automa={0: 1, 1: 1}), "at least one seat"),
    (dict(num_players=2, automa={2: 1}), "seat 2"),
    (dict(num_players=2, automa={1: 6}), "level"),
    (dict(num_players=1, solo=True, automa={0: 1}), "num_players 2-4"),
    (dict(num_players=2, automa={1: 3}, clan_auction=True), "clan_auction"),
    (dict(num_players=2, automa=[1]), "dict"),
])
def test_a0_config_validation(kw, match):
    with pytest.raises(ValueError, match=match):
        GameConfig(**kw)


def test_a0_config_round_trip_json_keys():
    c = GameConfig(num_players=3, automa={"2": 4, 0: 1})
    assert c.automa == {0: 1, 2: 4}
    assert GameConfig.from_dict(c.to_dict()) == c


def test_a0_agents_registry_automa_marker():
    from caledonia_env import agents
    m = agents.make("automa:3")
    assert m.level == 3 and m.name == "automa:3"
    with pytest.raises(RuntimeError, match="engine"):
        m.act(None)
    with pytest.raises(ValueError, match="1-5|level"):
        agents.make("automa:9")
    assert agents.automa_seats(["greedy", "automa:5", m]) == {1: 5, 2: 3}


def test_a0_data_validation(tmp_path):
    import shutil
    from caledonia_env.data.automa import AUTOMA_DIR, AutomaDataError, load_automa
    shutil.copy(AUTOMA_DIR / "automa.json", tmp_path / "automa.json")
    rows = (AUTOMA_DIR / "automa_cards.csv").read_text().splitlines()
    rows[1] = rows[1].replace("technology_upgrade", "fly")
    (tmp_path / "automa_cards.csv").write_text("\n".join(rows))
    with pytest.raises(AutomaDataError, match="fly"):
        load_automa(str(tmp_path))


def test_a72_production_money_is_sourced_from_the_publishers_digital_automa():
    """The field's £10 (A-11 item 9) is the DA source's rule: £5 per unit of capacity."""
    from caledonia_env.data.automa import load_automa
    p = load_automa().params
    assert p["sources"]["production_money"] == "sourced:DA"
    assert p["production_money"]["field"] == 2 * p["production_money"]["sheep"] == 10


@pytest.mark.parametrize("sources, says", [
    ({"production_money": "sourced:XY"}, "sources.production_money: unknown source"),
    ({"production_mony": "estimate"}, "sources names 'production_mony'"),
    (["estimate"], "sources must map"),
])
def test_a0_automa_sources_are_checked_provenances(tmp_path, sources, says):
    import json
    import shutil
    from caledonia_env.data.automa import AUTOMA_DIR, AutomaDataError, load_automa
    shutil.copy(AUTOMA_DIR / "automa_cards.csv", tmp_path / "automa_cards.csv")
    params = json.loads((AUTOMA_DIR / "automa.json").read_text())
    params["sources"] = sources
    (tmp_path / "automa.json").write_text(json.dumps(params))
    with pytest.raises(AutomaDataError, match=says):
        load_automa(str(tmp_path))
