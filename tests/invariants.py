"""State invariants checked after every step of random games (engine quality habits)."""
import numpy as np

from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import NEUTRAL, OCC_STRIDE, UNIT_NAMES


def check_invariants(game):
    s, rs = game.state, game.ruleset
    n = game.num_players
    counts = list(int(x) for x in rs.units.count) + [0]
    total_merchants = rs.economy.merchants_total
    for p in range(n):
        po = L.S_PLAYERS + p * L.P_SIZE
        assert s[po + L.P_MONEY] >= 0, f"player {p} money negative"
        goods = s[po + L.P_GOODS:po + L.P_GOODS + 6]
        assert (goods >= 0).all(), f"player {p} goods negative: {goods}"
        market = s[po + L.P_MARKET:po + L.P_MARKET + 12]
        assert (market >= 0).all() and s[po + L.P_MERCH] >= 0 and s[po + L.P_TRACK] >= 0
        assert s[po + L.P_MERCH] + s[po + L.P_TRACK] + market.sum() == total_merchants, \
            f"player {p} merchants not conserved"
        assert not ((market[:6] > 0) & (market[6:] > 0)).any(), "buy and sell space of one good (R-3.1)"
        on_map = np.zeros(len(counts), int)
        for m in range(game.board.n_nodes):
            o = int(s[L.S_OCC + m])
            if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
                on_map[o % OCC_STRIDE] += 1
        board = s[po + L.P_BOARD:po + L.P_BOARD + len(counts)]
        assert (board >= 0).all(), f"player {p} board negative"
        total = board + on_map
        if game.clan(p) == "macdonald":   # one pool of workers, fishermen included
            lj, mi, fi = (UNIT_NAMES.index(u) for u in ("lumberjack", "miner", "fisherman"))
            assert total[[lj, mi, fi]].sum() == counts[lj] + counts[mi], \
                f"player {p} workers not conserved: {board} + {on_map}"
            total[[lj, mi, fi]] = counts[lj], counts[mi], counts[fi]
        assert (total == counts).all(), f"player {p} units not conserved: {board} + {on_map}"
        assert 0 <= s[po + L.P_SHIP] <= rs.economy.shipping_max_level
    for g in range(6):
        step = s[L.S_PRICE_STEP + g] - game.tables[L.T_STEP_LO + g]
        assert 0 <= step < len(rs.market.tracks[g]), "price off its track"
    assert 1 <= s[L.S_ROUND] <= rs.setup.rounds


def play_checked(game, bots, limit=None):
    """Play with one bot per player, checking that act() leaves the game unchanged and picks
    a legal action; returns the actions."""
    seen = []
    while not game.is_terminal and (limit is None or len(seen) < limit):
        p = game.current_player
        before = game.state.copy()
        a = bots[p].act(game)
        assert np.array_equal(before, game.state), "act() must not change the game"
        assert game.legal_mask()[a], f"{bots[p].name} chose illegal {game.describe_action(a)!r}"
        game.step(a)
        seen.append(a)
    return seen
