"""Solo mode (R-9.2): scenario tests for every solo rule."""
from dataclasses import replace

import numpy as np
import pytest

from caledonia_env import Game, GameConfig
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import NEUTRAL, TERRAIN_LOCH, TERRAIN_PORT, UNIT_NAMES
from caledonia_env.engine.layout import STATE_SIZE
from caledonia_env.engine.market import market_price
from caledonia_env.engine.playout import random_games
from caledonia_env.engine.scoring import import_values
from caledonia_env.game import Static
from conftest import base_scenario, mask_names

RS = Game(GameConfig(num_players=1, solo=True)).ruleset
SO = RS.solo
GOODS = ("wool", "grain", "milk", "bread", "cheese", "whisky")


def pv(game, field, n=1):
    off = L.S_PLAYERS + field
    v = game.state[off:off + n]
    return int(v[0]) if n == 1 else [int(x) for x in v]


def solo_scenario(**kw):
    d = base_scenario(1, solo=True, **kw)
    d["players"] = [{"money": 0}]
    return d


def with_solo_imports(g, reading):
    """The same position under the solo-imports reading ``reading`` (engine Variants)."""
    g.static = Static(g.ruleset, g.board, g.num_players,
                      replace(g.static.variants, solo_imports=reading))
    return g


def finish(d, solo_imports="fixed"):
    """Round 5: the player passes and the game ends (imports valued by ``solo_imports``)."""
    d.update(round=5, scoring_tiles=[None] * 5)
    g = with_solo_imports(Game.from_scenario(d), solo_imports)
    g.step(g.parse_action("pass"))
    while not g.is_terminal:
        g.step(g.legal_actions()[0])
    return g


class Minstd:
    """Mirror of the engine's seeded RNG (caledonia_env.engine.rng)."""
    MOD = 2147483647

    def __init__(self, x):
        self.x = int(x)

    def rand_int(self, n):
        self.x = (self.x * 48271) % self.MOD
        return ((self.x - 1) * n) // (self.MOD - 1)


def test_R_9_2_solo_is_one_player_with_solo_true():
    with pytest.raises(ValueError, match="solo"):
        GameConfig(num_players=1)
    with pytest.raises(ValueError, match="solo"):
        GameConfig(num_players=2, solo=True)
    g = Game(GameConfig(num_players=1, solo=True, seed=3))
    assert g.num_players == 1 and g.context == "starting pick" and len(g.legal_actions()) == 2


def test_R_9_2_two_player_map_with_neutral_pieces_on_every_1_hex():
    g = Game(GameConfig(num_players=1, solo=True, seed=4, map="A2,B1,C2,D1"))
    b = g.board
    two = Game(GameConfig(num_players=2, seed=4, map="A2,B1,C2,D1")).board
    assert (b.active == two.active).all()                     # the 1-2 player map
    for v in range(b.n_hex):
        land = not b.terrain[v] & (TERRAIN_LOCH | TERRAIN_PORT) and b.active[v]
        blocked = g.state[L.S_OCC + v] == NEUTRAL
        assert blocked == (land and b.land_cost[v] == SO.blocked_land_cost), b.labels[v]
    # blocked hexes are never offered
    while g.context == "starting pick":
        g.step(g.legal_actions()[0])
    for name in mask_names(g):
        v = b.node(name.split("@ ")[1])
        assert g.state[L.S_OCC + v] != NEUTRAL


def test_R_9_2_five_contracts_at_the_start():
    for seed in range(5):
        g = Game(GameConfig(num_players=1, solo=True, seed=seed))
        slots = [int(x) for x in g.state[L.S_SLOTS:L.S_SLOTS + 6]]
        assert sum(c >= 0 for c in slots) == SO.start_contracts == 5


def test_R_9_2_no_neighborhood_bonus():
    g = Game(GameConfig(num_players=1, solo=True))
    assert g.tables[L.T_NEIGHBOR_BONUS] == 0
    assert RS.economy.neighborhood_limit[1] == 0


def test_R_9_2_every_pass_gains_16():
    d = solo_scenario(round=2)
    g = Game.from_scenario(d)
    g.step(g.parse_action("pass"))
    assert g.round == 3 and pv(g, L.P_MONEY) == SO.pass_money == 16
    g.step(g.parse_action("pass"))
    assert g.round == 4 and pv(g, L.P_MONEY) == 32


@pytest.mark.parametrize("reading", ["fixed", "rarity"])
def test_R_9_2_imports_not_tracked_and_worth_4_each(reading):
    """Solo imports move no token and pay no £1 mark in either reading; the fixed reading
    (default) values each at ``solo.import_vp``."""
    d = solo_scenario(round=5)
    d["players"][0] = {"money": 0, "contracts": [2], "goods": {"wool": 6}}   # 3 tobacco
    g = with_solo_imports(Game.from_scenario(d), reading)
    g.step(g.parse_action("fulfill contract box 0"))
    assert [int(x) for x in g.state[L.S_IMPORT:L.S_IMPORT + 3]] == [0, 0, 0]
    assert pv(g, L.P_MONEY) == 0                                 # no £1 marks
    d = solo_scenario()
    d["players"][0]["fulfilled"] = [2, 4, 24]     # 3 tobacco, 3 cotton, 2 sugar cane
    g = finish(d)
    assert g.score_breakdown()[0]["imports"] == 8 * SO.import_vp


# fulfilled contracts -> (cotton, tobacco, sugar cane) VP each by the player's own counts
# (3 / 4 / 5 from final_scoring.import_vp_by_rank; ties: cotton rarest, then tobacco)
SOLO_RARITY = [
    ([10, 2, 6], (3, 4, 5)),        # 4 cotton, 3 tobacco, 1 sugar cane
    ([2, 4, 24], (4, 3, 5)),        # 3 cotton ties 3 tobacco for most: cotton counts rarer
    ([4, 2, 21], (5, 4, 3)),        # 3 of each: cotton rarest, then tobacco
    ([6], (4, 5, 3)),               # only 1 sugar cane: most; cotton ties tobacco at 0
]


@pytest.mark.parametrize("fulfilled, vp", SOLO_RARITY)
def test_R_9_2_solo_imports_by_rarity_of_own_contracts(fulfilled, vp):
    """R-9.2 FAQ reading (switch ``rarity``): cotton, tobacco and sugar cane are worth
    3 / 4 / 5 VP each by how many the player has on fulfilled contracts (most 3 VP), ties
    as R-7; the fixed reading (default) gives ``solo.import_vp`` each."""
    assert [int(x) for x in RS.final_scoring.import_vp_by_rank] == [3, 4, 5]
    counts = np.sum([RS.contracts.gain_imports[RS.contracts.ids.tolist().index(c)][:3]
                     for c in fulfilled], axis=0)
    d = solo_scenario()
    d["players"][0]["fulfilled"] = list(fulfilled)
    rarity = finish(d, "rarity").score_breakdown()[0]["imports"]
    fixed = finish(d).score_breakdown()[0]["imports"]
    assert rarity == int(np.dot(counts, vp))
    assert fixed == int(counts.sum()) * SO.import_vp
    assert (rarity == fixed) == (len(set(counts.tolist())) == 1)   # equal counts: 3+4+5 = 3 x 4


def test_R_9_2_solo_rarity_values_follow_the_players_counts_during_the_game():
    """The values the observation and the evaluators read (``import_values``) follow the
    player's counts as contracts are fulfilled; no token ever moves."""
    d = solo_scenario(round=5)
    d["players"][0] = {"money": 0, "contracts": [2], "goods": {"wool": 6},   # 3 tobacco
                       "fulfilled": [16]}                                    # 2 cotton
    g = with_solo_imports(Game.from_scenario(d), "rarity")
    imp = np.zeros(3, np.int64)
    import_values(g.state, g.tables, imp)
    assert imp.tolist() == [3, 5, 4]           # cotton most; at 0 tobacco counts rarer
    g.step(g.parse_action("fulfill contract box 0"))
    import_values(g.state, g.tables, imp)
    assert imp.tolist() == [4, 3, 5]
    assert [int(x) for x in g.state[L.S_IMPORT:L.S_IMPORT + 3]] == [0, 0, 0]


def prices_of(g):
    return [int(market_price(g.state, g.tables, i)) for i in range(6)]


def _round2_to_3(steps, rng_state, slots, pile):
    market = {g_: {"step": k} for g_, k in steps.items()}
    d = solo_scenario(round=2, market=market, slots=slots, pile=pile, rng=rng_state)
    g = Game.from_scenario(d)
    g.step(g.parse_action("pass"))
    assert g.round == 3
    return g


@pytest.mark.parametrize("rng_state", [12345, 987654321, 2024, 77777])
def test_R_9_2_market_phase_dice_bands_refill_and_removal(rng_state):
    # markers as steps: low, the bracket's first step, the top, the bracket's last step,
    # high, low (the default brackets are steps 3..6)
    steps = {"wool": 0, "grain": 3, "milk": 9, "bread": 6, "cheese": 7, "whisky": 1}
    slots = [1, 2, None, 4, None, 6]
    pile = [10, 11, 12, 13, 14]
    g = _round2_to_3(steps, rng_state, slots, pile)
    # mirror: goods die re-rolled on repeats, one price die per good
    r = Minstd(rng_state)
    tracks = RS.market.tracks
    marker = [steps[g_] for g_ in GOODS]
    changed, last = [], None
    while len(changed) < SO.goods_changed_per_round:
        good = int(SO.goods_die[r.rand_int(len(SO.goods_die))])
        if good in changed:
            continue
        changed.append(good)
        last = r.rand_int(len(SO.price_die))
        die = int(SO.price_die[last])
        lo, hi = (int(x) for x in RS.market.solo_average_steps[good])   # steps of the band
        k = marker[good]
        step = abs(die) if k < lo else (-abs(die) if k > hi else die)
        marker[good] = min(max(k + step, 0), len(tracks[good]) - 1)
    expect = [int(tracks[i][k]) for i, k in enumerate(marker)]
    assert prices_of(g) == expect
    ids = [int(x) for x in RS.contracts.ids]
    filled = [1, 2, 10, 4, 11, 6]
    filled[int(SO.removal_slot[last])] = None
    now = [None if c < 0 else ids[c] for c in g.state[L.S_SLOTS:L.S_SLOTS + 6]]
    assert now == filled and sum(c is not None for c in now) == 5
    assert int(g.state[L.S_RNG]) == r.x


def test_R_9_2_market_phase_low_average_high():
    """A low price rises by |die|, a high one falls by |die|, an average one moves by the die."""
    from caledonia_env.engine.solo import solo_price_change
    g = Game(GameConfig(num_players=1, solo=True))
    T = g.tables
    assert RS.market.solo_average_steps[0].tolist() == [3, 6]          # wool: average steps
    for step, die, expected in ((0, -3, 3), (2, 2, 4), (9, -2, 7), (7, 3, 4), (3, -1, 2),
                                (6, 2, 8)):
        s = np.zeros(STATE_SIZE, np.int32)
        s[L.S_PRICE_STEP] = T[L.T_STEP_LO] + step
        solo_price_change(s, T, 0, die)
        assert s[L.S_PRICE_STEP] - T[L.T_STEP_LO] == expected, (step, die)
        assert market_price(s, T, 0) == RS.market.tracks[0][expected]


def test_R_9_2_market_phase_only_in_rounds_2_to_5():
    assert tuple(SO.market_phase_rounds) == (2, 3, 4, 5)
    g = Game(GameConfig(num_players=1, solo=True, seed=1))
    assert prices_of(g) == [int(x) for x in RS.market.start_prices(1)]
    # without solo the same round change leaves prices alone
    d = base_scenario(2, round=2, next_turn_order=[1])
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)
    before = g.state[L.S_PRICE_STEP:L.S_PRICE_STEP + 6].copy()
    g.step(g.parse_action("pass"))
    assert g.round == 3 and (g.state[L.S_PRICE_STEP:L.S_PRICE_STEP + 6] == before).all()


@pytest.mark.parametrize("fulfilled,vp", [(7, 12), (8, 12), (6, 8), (5, 4), (4, 0)])
def test_R_9_2_solo_export_scoring(fulfilled, vp):
    d = solo_scenario()
    d["players"][0]["fulfilled"] = list(range(3, 3 + fulfilled))
    g = finish(d)
    assert g.score_breakdown()[0]["exports"] == vp == SO.export_points(fulfilled)


def _linked_settlements(board, k, level):
    """k lone land hexes (no two neighbors), all linked through shipping range ``level``."""
    land = [v for v in range(board.n_hex) if board.active[v]
            and not board.terrain[v] & (TERRAIN_LOCH | TERRAIN_PORT)]
    nbr = {v: {int(w) for w in board.neighbor[v] if w >= 0} for v in land}
    req = board.ship_req
    for start in land:
        chosen = [start]
        while len(chosen) < k:
            cand = [v for v in land if v not in chosen and not nbr[v] & set(chosen)
                    and any(req[u, v] <= level for u in chosen)]
            if not cand:
                break
            chosen.append(cand[0])
        if len(chosen) == k:
            return chosen
    raise AssertionError(f"no {k} linked settlements")


def _units_for(board, nodes):
    counts = {u: 4 for u in UNIT_NAMES[:8]}
    out = {}
    for v in nodes:
        t = int(board.terrain[v])
        for u in UNIT_NAMES[:8]:
            ok = (t & 1 and u in UNIT_NAMES[:6]) or (t & 2 and u == "lumberjack") \
                or (t & 4 and u == "miner")
            if ok and counts[u] > 0:
                counts[u] -= 1
                out[board.labels[v]] = u
                break
        else:
            raise AssertionError("too many units of a kind")
    return out


@pytest.mark.parametrize("k,vp", [(7, 0), (8, 6), (10, 6), (11, 12), (13, 12), (14, 18)])
def test_R_9_2_solo_settlement_scoring(k, vp):
    game = Game.from_scenario(solo_scenario())
    board, level = game.board, game.ruleset.economy.shipping_max_level   # the top level
    nodes = _linked_settlements(board, k, level)
    d = solo_scenario()
    d["players"][0].update(shipping=level, units=_units_for(board, nodes))
    g = finish(d)
    assert g.score_breakdown()[0]["settlements"] == vp == SO.settlement_points(k)


@pytest.mark.parametrize("total,band", [(0, "Newbie"), (115, "Newbie"), (116, "Rookie"),
                                        (130, "Rookie"), (131, "Average"), (145, "Average"),
                                        (146, "Expert"), (160, "Expert"), (161, "Genius")])
def test_R_9_2_rating_bands(total, band):
    assert SO.rating(total) == band


def test_R_9_2_rating_in_the_score_breakdown():
    d = solo_scenario()
    d["players"][0].update(glory=120)
    g = finish(d)
    b = g.score_breakdown()[0]
    assert b["rating"] == SO.rating(b["total"]) == "Rookie"
    assert b["total"] == sum(v for k, v in b.items() if k not in ("total", "rating"))


@pytest.mark.parametrize("clans", [None, "draft"])
def test_R_9_2_random_solo_games_end_after_five_rounds(clans):
    T = Game(GameConfig(num_players=1, solo=True, seed=2, clans=clans)).tables
    finals = np.zeros((50, STATE_SIZE), np.int32)
    assert random_games(T, 50, 99, finals, automa_switch(T)) > 0
    assert all(L.game_over(f) for f in finals) and (finals[:, L.S_ROUND] == 5).all()
    assert (finals[:, L.S_SLOTS:L.S_SLOTS + 6] >= 0).sum(axis=1).max() <= 5


def test_R_9_2_dice_replay_from_the_seed():
    a = Game(GameConfig(num_players=1, solo=True, seed=21))
    rng = np.random.default_rng(0)
    while not a.is_terminal:
        a.step(int(rng.choice(a.legal_actions())))
    b = Game.from_json(a.to_json())
    assert np.array_equal(a.state, b.state)
