"""Clans (R-8), the clan draft (R-1.7) and the clan auction (R-9.4): scenario tests per power."""
import numpy as np
import pytest

from caledonia_env import Game, GameConfig
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import A_PLACE
from caledonia_env.engine.constants import MAX_NODES
from caledonia_env.engine.constants import (TERRAIN_FOREST, TERRAIN_LOCH, TERRAIN_MOUNTAIN,
                                            TERRAIN_PASTURE)
from caledonia_env.engine.market import market_price
from conftest import Hexes, base_scenario, mask_names

RS = Game(GameConfig(num_players=2)).ruleset
CP = RS.clans.params
COST = dict(zip(("sheep", "cow", "field", "cheese_dairy", "bakery", "distillery", "lumberjack",
                 "miner"), (int(x) for x in RS.units.cost)))


def pv(game, p, field, n=1):
    off = L.S_PLAYERS + p * L.P_SIZE + field
    v = game.state[off:off + n]
    return int(v[0]) if n == 1 else [int(x) for x in v]


def step(game, name):
    game.step(game.parse_action(name))


def solo_turns(n=2, **kw):
    """Scenario where player 0 acts and every other player has passed (round 2 by default)."""
    d = base_scenario(n, **kw)
    d["next_turn_order"] = list(range(1, n))
    for p in range(1, n):
        d["players"][p]["passed"] = True
    return d


def board_of(n=2):
    return Game.from_scenario(base_scenario(n)).board


def pasture_cluster(board, k, avoid=()):
    """k active pastures (pasture only) connected through neighbor adjacency."""
    h = Hexes(board)
    pastures = set(h.land(TERRAIN_PASTURE, only=True))
    for start in sorted(pastures):
        if start in avoid:
            continue
        seen, frontier = [start], [start]
        while frontier and len(seen) < k:
            v = frontier.pop(0)
            for w in h.neighbors(v):
                if w in pastures and w not in seen and w not in avoid:
                    seen.append(w)
                    frontier.append(w)
                    if len(seen) == k:
                        break
        if len(seen) == k:
            return [board.labels[v] for v in seen]
    raise AssertionError("no pasture cluster")


def contract_row(cid):
    i = [int(x) for x in RS.contracts.ids].index(cid)
    return dict(zip(RS.contracts.columns, (int(x) for x in RS.contracts.table[i])))


# ----------------------------------------------------------------- draft
def test_R_1_7_draft_players_plus_one_pairs_chosen_in_reverse_order():
    g = Game(GameConfig(num_players=3, seed=5, clans="draft", first_player=1))
    order = [int(x) for x in g.state[L.S_ORDER:L.S_ORDER + 3]]
    assert order == [1, 2, 0]
    choosers = []
    for expected_offer in (4, 3, 2):
        assert g.context == "starting pick"
        legal = g.legal_actions()
        assert len(legal) == expected_offer
        names = [g.describe_action(a) for a in legal]
        assert all("(" in n and ", S" in n for n in names)        # clan and tile named
        choosers.append(g.current_player)
        p = g.current_player
        i = int(legal[0]) - g.parse_action("starting pick 0")
        clan = int(g.state[L.S_PICK_CLANS + i])
        tile = int(g.state[L.S_PICKS + i])
        g.step(legal[0])
        assert pv(g, p, L.P_CLAN) == clan and pv(g, p, L.P_START_TILE) == tile
        assert pv(g, p, L.P_MONEY) == RS.starting_tiles.money[tile]      # no seat money
    assert choosers == [0, 2, 1]                                       # reverse turn order
    assert g.context == "starting worker"
    clans = [g.clan(p) for p in range(3)]
    assert len(set(clans)) == 3 and None not in clans


def test_R_1_7_pick_applies_the_clans_start():
    d = base_scenario(2, phase="setup_pick", context="starting pick", current_player=1,
                      clans="draft", round=1,
                      picks=[{"tile": "S1", "clan": "stewart"}, {"tile": "S2", "clan": "fergusson"},
                             {"tile": "S3", "clan": "macdonald"}])
    d["pending"] = {"setup_step": 0}
    g = Game.from_scenario(d)
    step(g, "starting pick 0")
    assert g.clan(1) == "stewart"
    st = CP["stewart"]
    assert pv(g, 1, L.P_MERCH) == RS.clans.start[7][2] == 5
    assert pv(g, 1, L.P_TRACK) == RS.economy.merchants_total - 5
    assert pv(g, 1, L.P_SHIP) == RS.clans.start_shipping(7, 2) == 1
    assert pv(g, 1, L.P_MONEY) == RS.starting_tiles.money[0]
    assert st["market_money"] == 1
    assert g.current_player == 0 and sorted(mask_names(g)) == [
        "starting pick 1 (fergusson, S2)", "starting pick 2 (macdonald, S3)"]
    step(g, "starting pick 1")
    assert g.clan(0) == "fergusson" and pv(g, 0, L.P_SHIP) == RS.clans.start_shipping(3, 2)


def test_R_1_7_draft_draws_distinct_clans_from_the_pool():
    seen = set()
    for seed in range(40):
        g = Game(GameConfig(num_players=4, seed=seed, clans="draft"))
        drawn = [int(c) for c in g.state[L.S_PICK_CLANS:L.S_PICK_CLANS + 5]]
        assert len(set(drawn)) == 5 and min(drawn) >= 0
        seen.update(drawn)
    assert seen == set(range(8))                      # the brewer is optional
    with_brewer = set()
    for seed in range(40):
        g = Game(GameConfig(num_players=4, seed=seed, clans="draft", kickstarter_clan=True))
        with_brewer.update(int(c) for c in g.state[L.S_PICK_CLANS:L.S_PICK_CLANS + 5])
    assert 8 in with_brewer


def test_R_1_9_no_clans_stays_available_with_seat_money():
    g = Game(GameConfig(num_players=4, seed=2, first_player=0, clans=None))
    money = []
    while g.context == "starting pick":
        p = g.current_player
        tile = int(g.state[L.S_PICKS + int(g.legal_actions()[0]) - g.parse_action("starting pick 0")])
        g.step(g.legal_actions()[0])
        money.append((p, pv(g, p, L.P_MONEY) - int(RS.starting_tiles.money[tile])))
    assert dict(money) == {0: 0, 1: 2, 2: 4, 3: 6}
    assert all(g.clan(p) is None for p in range(4))


def test_R_1_7_config_errors():
    with pytest.raises(ValueError, match="unknown clan"):
        GameConfig(num_players=2, clans=("stewart", "mcduck"))
    with pytest.raises(ValueError, match="one clan per player"):
        GameConfig(num_players=3, clans=("stewart", "campbell"))
    with pytest.raises(ValueError, match="fixed clan list"):
        GameConfig(num_players=2, clans=("stewart", "campbell"), clan_auction=True)
    with pytest.raises(ValueError, match="'draft'"):
        GameConfig(num_players=2, clans="random")
    cfg = GameConfig(num_players=2, clans=["Stewart", None])
    assert cfg.clans == ("stewart", None) and cfg.clan_mode == "fixed"
    assert GameConfig.from_dict(cfg.to_dict()) == cfg


# --------------------------------------------------------------- auction
def test_R_9_4_auction_sequence_positions_and_vp():
    g = Game(GameConfig(num_players=3, seed=8, clan_auction=True))
    assert g.context == "clan auction"
    o = g.current_player
    names = mask_names(g)
    assert "decline bid" not in names                        # the opener must bid
    assert "bid 0" in names and "bid 30" in names and "bid 31" not in names
    step(g, "bid 5")
    assert g.current_player == (o + 1) % 3
    assert "bid 5" not in mask_names(g) and "bid 6" in mask_names(g)
    step(g, "bid 7")
    assert g.current_player == (o + 2) % 3
    step(g, "decline bid")
    assert g.current_player == o                              # back to the opener
    step(g, "decline bid")
    winner = (o + 1) % 3
    assert g.context == "starting pick" and g.current_player == winner
    assert len(g.legal_actions()) == 3                        # as many clans as players
    g.step(g.legal_actions()[1])
    assert g.state[L.S_ORDER] == winner and pv(g, winner, L.P_BID) == 7
    # next auction: opened left of the winner
    assert g.context == "clan auction" and g.current_player == (o + 2) % 3
    step(g, "bid 0")
    assert g.current_player == o
    step(g, "decline bid")
    assert g.context == "starting pick" and g.current_player == (o + 2) % 3
    g.step(g.legal_actions()[0])
    # the last player takes the last clan for free and plays last
    assert [int(x) for x in g.state[L.S_ORDER:L.S_ORDER + 3]] == [winner, (o + 2) % 3, o]
    assert pv(g, o, L.P_BID) == 0 and g.clan(o) is not None
    assert g.context == "starting worker" and g.current_player == winner
    clans = {g.clan(p) for p in range(3)}
    assert len(clans) == 3
    rng = np.random.default_rng(1)
    while not g.is_terminal:
        g.step(int(rng.choice(g.legal_actions())))
    b = g.score_breakdown()
    assert b[winner]["auction"] == -7 and b[(o + 2) % 3]["auction"] == 0
    assert all(sum(v for k, v in x.items() if k != "total") == x["total"] for x in b)


def test_R_9_4_max_bid_ends_the_auction():
    g = Game(GameConfig(num_players=4, seed=3, clan_auction=True))
    o = g.current_player
    step(g, f"bid {RS.setup.auction_max_bid}")
    assert g.context == "starting pick" and g.current_player == o


# ------------------------------------------------------------ Buchanan
def test_R_8_1_buchanan_two_contracts_in_round_5_cost_15_not_30():
    d = solo_turns(round=5, slots=[1, 2, 3, 4, 5, 6])
    d["players"][0] = {"money": 40, "clan": "buchanan"}
    g = Game.from_scenario(d)
    step(g, "obtain contract slot 0")
    assert g.context == "second contract"
    assert "no second contract" in mask_names(g) and "obtain contract slot 1" in mask_names(g)
    assert "obtain contract slot 0" not in mask_names(g)
    step(g, "obtain contract slot 1")
    assert pv(g, 0, L.P_MONEY) == 40 - int(RS.export_board.contract_cost[4])
    assert [int(RS.contracts.ids[c]) for c in pv(g, 0, L.P_BOX, 2)] == [1, 2]


def test_R_8_1_contracts_in_separate_turns_pay_each_time():
    d = solo_turns(round=5, slots=[1, 2, 3, 4, 5, 6])
    d["players"][0] = {"money": 40, "clan": "buchanan"}
    g = Game.from_scenario(d)
    step(g, "obtain contract slot 0")
    step(g, "no second contract")
    assert g.context == "main action" and g.current_player == 0
    step(g, "obtain contract slot 3")
    assert pv(g, 0, L.P_MONEY) == 40 - 2 * int(RS.export_board.contract_cost[4])
    assert g.context == "main action"          # boxes full: no second-contract decision


def test_R_8_1_round_1_gains_5_once_per_turn():
    d = solo_turns(round=1, slots=[1, 2, 3, 4, 5, 6])
    d["players"][0] = {"money": 0, "clan": "buchanan"}
    gain = -int(RS.export_board.contract_cost[0])
    g = Game.from_scenario(d)
    step(g, "obtain contract slot 0")
    step(g, "obtain contract slot 1")
    assert pv(g, 0, L.P_MONEY) == gain                         # two in one turn: once
    g = Game.from_scenario(d)
    step(g, "obtain contract slot 0")
    step(g, "no second contract")
    step(g, "obtain contract slot 1")
    assert pv(g, 0, L.P_MONEY) == 2 * gain                     # each turn with contracts


def test_R_8_1_other_clans_have_one_box_and_one_contract_per_action():
    d = solo_turns(round=5, slots=[1, 2, 3, 4, 5, 6])
    d["players"][0] = {"money": 40, "clan": "campbell"}
    g = Game.from_scenario(d)
    step(g, "obtain contract slot 0")
    assert g.context == "main action" and g.current_player == 0
    assert not any(n.startswith("obtain") for n in mask_names(g))


def test_R_8_1_structure_bonus_draws_6_keeps_up_to_2_paying_once():
    board = board_of()
    cl = pasture_cluster(board, 4)
    d = solo_turns(round=4)
    d["players"][0] = {"money": 100, "clan": "buchanan",
                       "units": {cl[0]: "bakery", cl[1]: "bakery", cl[2]: "bakery"}}
    g = Game.from_scenario(d)
    pile = int(g.state[L.S_DECK_COUNT])
    step(g, f"expand bakery @ {cl[3]}")
    assert g.context == "structure bonus"
    step(g, "draw structure contracts")
    drawn = [int(x) for x in g.state[L.S_DRAWN:L.S_DRAWN + 6]]
    assert all(x >= 0 for x in drawn) and CP["buchanan"]["structure_draw"] == 6
    money = pv(g, 0, L.P_MONEY)
    step(g, "keep drawn contract 2")
    assert pv(g, 0, L.P_MONEY) == money - int(RS.export_board.contract_cost[3])
    assert g.context == "structure bonus"                 # a second one may be kept
    step(g, "keep drawn contract 4")
    assert pv(g, 0, L.P_MONEY) == money - int(RS.export_board.contract_cost[3])
    assert pv(g, 0, L.P_BOX, 2) == [drawn[2], drawn[4]]
    assert int(g.state[L.S_DECK_COUNT]) == pile - 2       # four went back under the pile


def test_R_8_1_port_P8_draws_6():
    board = board_of()
    a = [board.labels[v] for v in board.adjacent[board.node("port-A")] if v >= 0
         and board.terrain[v] & TERRAIN_PASTURE][0]
    d = solo_turns(ports={"A": "P8", "B": None, "C": None, "D": None})
    d["players"][0] = {"money": 10, "clan": "buchanan", "units": {a: "sheep"}}
    g = Game.from_scenario(d)
    step(g, "port A")
    assert g.context == "structure bonus"
    step(g, "draw structure contracts")
    assert sum(int(x) >= 0 for x in g.state[L.S_DRAWN:L.S_DRAWN + 6]) == 6
    assert pv(g, 0, L.P_MONEY) == 10 + RS.ports.params[7][1]


def test_R_8_1_fulfill_two_contracts_in_one_action():
    d = solo_turns(variant_static_imports=True)
    c35, c48 = contract_row(35), contract_row(48)
    goods = {"wool": c35["need_wool"] + c48["need_wool"], "whisky": 1, "bread": 1, "cheese": 1}
    d["players"][0] = {"money": 0, "clan": "buchanan", "contracts": [35, 48], "goods": goods}
    g = Game.from_scenario(d)
    names = mask_names(g)
    assert "fulfill both contracts" in names and "fulfill contract box 1" in names
    step(g, "fulfill both contracts")
    assert pv(g, 0, L.P_N_FULFILLED) == 2 and pv(g, 0, L.P_BOX, 2) == [-1, -1]
    assert pv(g, 0, L.P_GOODS, 6) == [0] * 6
    assert pv(g, 0, L.P_MONEY) == c35["gain_money"] + c48["gain_money"]
    # goods for only one of the two: each alone, not both
    d["players"][0]["goods"] = {"wool": 3, "whisky": 1}
    g = Game.from_scenario(d)
    names = mask_names(g)
    assert "fulfill both contracts" not in names and "fulfill contract box 0" in names
    # no other clan has the action
    d["players"][0].update(clan="stewart", contracts=[35])
    assert "fulfill both contracts" not in mask_names(Game.from_scenario(d))


# ------------------------------------------------------------- Campbell
def test_R_8_2_campbell_rulebook_example_bakeries_5_4_4_distillery_7():
    board = board_of()
    cl = pasture_cluster(board, 6)
    d = solo_turns()
    d["players"][0] = {"money": 200, "clan": "campbell", "units": {cl[0]: "sheep"}}
    g = Game.from_scenario(d)
    disc = CP["campbell"]["building_discount"]
    expected = [("bakery", COST["bakery"] - disc[0]), ("bakery", COST["bakery"] - disc[1]),
                ("bakery", COST["bakery"] - disc[2]), ("distillery", COST["distillery"] - disc[0]),
                ("bakery", COST["bakery"] - disc[3])]
    assert [c for _, c in expected[:4]] == [5, 4, 4, 7]            # the rulebook's numbers
    for (unit, cost), hex_ in zip(expected, cl[1:]):
        money = pv(g, 0, L.P_MONEY)
        step(g, f"expand {unit} @ {hex_}")
        land = int(board.land_cost[board.node(hex_)])
        assert money - pv(g, 0, L.P_MONEY) == cost + land, unit
        if g.context == "structure bonus":
            step(g, "decline structure bonus")


# ----------------------------------------------------------- Cunningham
def test_R_8_3_cunningham_butter_8_per_milk_at_end_of_production():
    d = solo_turns(market={"milk": 6})
    d["players"][0] = {"money": 0, "clan": "cunningham", "goods": {"milk": 3}}
    g = Game.from_scenario(d)
    step(g, "pass")
    assert g.context == "butter" and g.current_player == 0
    assert mask_names(g) == ["butter 1 milk", "butter 2 milk", "butter 3 milk", "butter done"]
    money = pv(g, 0, L.P_MONEY)
    merchants = pv(g, 0, L.P_MERCH)
    step(g, "butter 2 milk")
    assert pv(g, 0, L.P_MONEY) == money + 2 * CP["cunningham"]["milk_money"]
    assert pv(g, 0, L.P_GOODS + 2) == 1
    assert g.context == "butter" and mask_names(g) == ["butter 1 milk", "butter done"]
    step(g, "butter done")
    assert g.context == "main action" and g.round == 3
    assert market_price(g.state, g.tables, 2) == 6 and pv(g, 0, L.P_MERCH) == merchants


def test_R_8_3_butter_after_processing_and_only_for_cunningham():
    board = board_of()
    h = pasture_cluster(board, 1)
    d = solo_turns()
    d["players"][0] = {"money": 0, "clan": "cunningham", "goods": {"milk": 2},
                       "units": {h[0]: "cheese_dairy"}}
    g = Game.from_scenario(d)
    step(g, "pass")
    assert g.context == "production"
    step(g, "process 1 cheese")
    assert g.context == "butter" and "butter 1 milk" in mask_names(g)
    assert "butter 2 milk" not in mask_names(g)
    d["players"][0]["clan"] = "campbell"
    g = Game.from_scenario(d)
    step(g, "pass")
    step(g, "process 0 cheese")
    assert g.context == "main action" and g.round == 3


# ------------------------------------------------------------ Fergusson
def _play_picks(g):
    while g.context == "starting pick":
        g.step(g.legal_actions()[0])


@pytest.mark.parametrize("players", [2, 3, 4])
def test_R_8_4_fergusson_three_border_workers_third_after_everyone(players):
    clans = ("fergusson",) + (None,) * (players - 1)
    g = Game(GameConfig(num_players=players, seed=4, clans=clans, first_player=0))
    ship = RS.clans.start_shipping(3, players)
    assert pv(g, 0, L.P_SHIP) == ship == (2 if players <= 2 else 3)
    _play_picks(g)
    order = list(range(players)) + list(reversed(range(players))) + [0]
    placers = []
    border = g.board.border
    while g.context == "starting worker":
        p = g.current_player
        placers.append(p)
        legal = g.legal_actions()
        nodes = [(int(a) - A_PLACE) % MAX_NODES for a in legal]
        if p == 0:
            assert all(border[v] for v in nodes)
        else:
            assert not all(border[v] for v in nodes)
        money = pv(g, p, L.P_MONEY)
        a = int(legal[-1])
        name = g.describe_action(a)
        unit, hex_ = name.split()[1], name.split("@ ")[1]
        g.step(a)
        assert money - pv(g, p, L.P_MONEY) == COST[unit] + int(g.board.land_cost[g.board.node(hex_)])
    assert placers == order


# ------------------------------------------------------------ MacDonald
def _loch_next_to_pasture(board, avoid=()):
    h = Hexes(board)
    for v in h.land(TERRAIN_PASTURE, only=True):
        for w in h.adjacent(v):
            if w < board.n_hex and board.terrain[w] & TERRAIN_LOCH and w not in avoid \
                    and w in h.neighbors(v):
                return board.labels[v], board.labels[w]
    raise AssertionError


def _loch_pair(board):
    """Two adjacent lochs (a, b), and a third loch c adjacent to b but not to a."""
    lochs = [v for v in range(board.n_hex) if board.terrain[v] & TERRAIN_LOCH]
    adj = {v: [int(w) for w in board.adjacent[v] if w >= 0] for v in range(board.n_nodes)}
    for a in lochs:
        for b in adj[a]:
            if b in lochs:
                for c in adj[b]:
                    if c in lochs and c != a and c not in adj[a]:
                        return a, b, c
    raise AssertionError


def test_R_8_5_macdonald_has_no_technology():
    d = solo_turns()
    d["players"][0] = {"money": 50, "clan": "macdonald"}
    assert not any("technology" in n for n in mask_names(Game.from_scenario(d)))
    d["players"][0]["clan"] = None
    assert "technology upgrade miner" in mask_names(Game.from_scenario(d))
    d["players"][0] = {"money": 50, "clan": "macdonald", "merchants_on_track": 0}
    d.update(context="export bonus", pending={"upgrades": 1, "main_done": 1})
    names = mask_names(Game.from_scenario(d))
    assert "shipping upgrade" in names and not any("technology" in n for n in names)


def test_R_8_5_workers_cost_6_earn_4_and_share_one_pool():
    board = board_of()
    h = Hexes(board)
    mountains = h.land(TERRAIN_MOUNTAIN)
    mountain, m2 = next((v, [w for w in h.neighbors(v) if w in mountains])
                        for v in mountains if any(w in mountains for w in h.neighbors(v)))
    forest = [v for v in h.land(TERRAIN_FOREST) if v not in h.adjacent(mountain) + [mountain] + m2][0]
    a, b, c = _loch_pair(board)
    lab = board.labels
    d = solo_turns()
    d["players"][0] = {"money": 50, "clan": "macdonald",
                       "units": {lab[mountain]: "miner", lab[forest]: "lumberjack",
                                 lab[a]: "fisherman"}}
    g = Game.from_scenario(d)
    assert pv(g, 0, L.P_BOARD + 6, 2) == [1, 4]          # three workers out of the pool of 8
    assert m2
    money = pv(g, 0, L.P_MONEY)
    step(g, f"expand miner @ {lab[m2[0]]}")
    assert money - pv(g, 0, L.P_MONEY) == CP["macdonald"]["worker_cost"] + int(board.land_cost[m2[0]])
    assert COST["miner"] != CP["macdonald"]["worker_cost"]
    g = Game.from_scenario(d)
    money = pv(g, 0, L.P_MONEY)
    step(g, "pass")
    pass_bonus = int(RS.export_board.pass_bonus[2][1])
    assert pv(g, 0, L.P_MONEY) == money + pass_bonus + 3 * CP["macdonald"]["worker_income"]
    # the pool: with the lumberjacks used up, a lumberjack still comes from the miners
    forests = h.land(TERRAIN_FOREST)
    f, f2 = next((v, w) for v in forests for w in h.neighbors(v) if w in forests)
    others = [v for v in forests if v not in (f, f2)][:3]
    d["players"][0]["units"] = {lab[v]: "lumberjack" for v in [f] + others}
    g = Game.from_scenario(d)
    assert pv(g, 0, L.P_BOARD + 6, 2) == [0, 4]
    step(g, f"expand lumberjack @ {lab[f2]}")
    assert pv(g, 0, L.P_BOARD + 6, 2) == [0, 3]


def test_R_8_5_fisherman_on_lochs_and_ports_never_adjacent():
    board = board_of()
    land, loch = _loch_next_to_pasture(board)
    d = solo_turns(ports={"A": "P5", "B": None, "C": None, "D": None})
    port_land = [board.labels[v] for v in board.adjacent[board.node("port-A")]
                 if v >= 0 and board.terrain[v] & TERRAIN_PASTURE][0]
    d["players"][0] = {"money": 50, "clan": "macdonald", "units": {land: "sheep", port_land: "cow"}}
    g = Game.from_scenario(d)
    names = mask_names(g)
    assert f"expand fisherman @ {loch}" in names
    assert "expand fisherman @ port-A" in names
    step(g, f"expand fisherman @ {loch}")
    assert pv(g, 0, L.P_MONEY) == 50 - CP["macdonald"]["worker_cost"] - CP["macdonald"]["fisherman_land_cost"]
    # no second fisherman next to the first one
    d["players"][0]["units"][loch] = "fisherman"
    d["players"][0]["shipping"] = 3
    g = Game.from_scenario(d)
    v = board.node(loch)
    names = mask_names(g)
    for w in board.adjacent[v]:
        if w >= 0 and board.terrain[w] & TERRAIN_LOCH:
            assert f"expand fisherman @ {board.labels[w]}" not in names
    assert any(n.startswith("expand fisherman @") for n in names)
    # no port tile at a corner: no fisherman there; other clans: no fishermen at all
    d["ports"] = {"A": None, "B": None, "C": None, "D": None}
    assert "expand fisherman @ port-A" not in mask_names(Game.from_scenario(d))
    d["players"][0]["units"].pop(loch)
    d["players"][0]["clan"] = "stewart"
    assert not any("fisherman" in n for n in mask_names(Game.from_scenario(d)))


def test_R_8_5_rowing_once_per_turn_before_the_main_action():
    board = board_of()
    a, b, c = _loch_pair(board)
    lab = board.labels
    d = solo_turns()
    d["players"][0] = {"money": 20, "clan": "macdonald", "units": {lab[a]: "fisherman"}}
    g = Game.from_scenario(d)
    assert f"row fisherman @ {lab[a]}" in mask_names(g)
    step(g, f"row fisherman @ {lab[a]}")
    assert g.context == "fisherman rowing"
    dests = mask_names(g)
    assert f"select @ {lab[b]}" in dests
    assert all(board.terrain[board.node(n.split("@ ")[1])] & TERRAIN_LOCH for n in dests)
    step(g, f"select @ {lab[b]}")
    assert g.context == "main action"
    assert g.state[L.S_OCC + b] == 0 * 16 + 8 and g.state[L.S_OCC + a] == -1
    assert not any(n.startswith("row") for n in mask_names(g))          # once per turn
    step(g, "shipping upgrade")
    # next turn: rowing again, but not after the main action
    if g.context == "after main action":
        assert not any(n.startswith("row") for n in mask_names(g))
        step(g, "end turn")
    assert g.context == "main action" and f"row fisherman @ {lab[b]}" in mask_names(g)


def test_R_8_5_land_next_to_a_fisherman_is_a_neighbor():
    board = board_of()
    h = Hexes(board)
    for v in range(board.n_hex):
        if not board.terrain[v] & TERRAIN_LOCH:
            continue
        lands = [w for w in h.adjacent(v) if w < board.n_hex and board.active[w]
                 and board.terrain[w] & TERRAIN_PASTURE and not board.terrain[w] & TERRAIN_LOCH]
        if lands:
            break
    d = solo_turns()
    d["players"][0] = {"money": 30, "clan": "macdonald", "units": {board.labels[v]: "fisherman"}}
    names = mask_names(Game.from_scenario(d))
    for w in lands:
        assert f"expand sheep @ {board.labels[w]}" in names


def test_R_8_5_neighborhood_bonus_when_deploying_not_when_rowing():
    board = board_of()
    lab = board.labels

    def land_nb(v):
        return [int(w) for w in board.neighbor[v] if 0 <= w < board.n_hex and board.active[w]
                and board.terrain[w] & TERRAIN_PASTURE and not board.terrain[w] & TERRAIN_LOCH]

    loch, m, own, opp = next(
        (v, m, nb[0], nb[1]) for v in range(board.n_hex) if board.terrain[v] & TERRAIN_LOCH
        for nb in [land_nb(v)] if len(nb) >= 2
        for m in board.adjacent[v] if m >= 0 and board.terrain[m] & TERRAIN_LOCH
        and opp_free(board, m, nb[1]))
    d = solo_turns()
    d["players"][0] = {"money": 50, "clan": "macdonald", "merchants": 2, "units": {lab[own]: "sheep"}}
    d["players"][1]["units"] = {lab[opp]: "distillery"}
    g = Game.from_scenario(d)
    step(g, f"expand fisherman @ {lab[loch]}")
    assert g.context == "neighborhood purchase" and "neighborhood buy 1 whisky" in mask_names(g)
    # rowing next to the distillery: no purchase
    d["players"][0]["units"] = {lab[m]: "fisherman"}
    g = Game.from_scenario(d)
    step(g, f"row fisherman @ {lab[m]}")
    step(g, f"select @ {lab[loch]}")
    assert g.context == "main action" and g.state[L.S_NB_PENDING] == 0


def opp_free(board, m, opp):
    """The distillery on ``opp`` is not a neighbor of loch m (so rowing from m gains nothing)."""
    return opp not in [int(w) for w in board.neighbor[m]]


@pytest.mark.parametrize("players,level", [(1, 1), (2, 1), (3, 0), (4, 0)])
def test_R_8_5_river_crossing_with_1_2_players(players, level):
    # each clan is played once (duplicate clans are rejected): MacDonald in every seat in turn
    for seat in range(players):
        clans = tuple("macdonald" if p == seat else None for p in range(players))
        g = Game(GameConfig(num_players=players, solo=players == 1, clans=clans))
        assert pv(g, seat, L.P_SHIP) == level


def test_R_8_5_macdonald_may_start_with_a_fisherman():
    g = Game(GameConfig(num_players=2, seed=1, clans=("macdonald", None), first_player=0))
    _play_picks(g)
    assert g.current_player == 0
    names = mask_names(g)
    assert any(n.startswith("expand fisherman @") for n in names)
    money = pv(g, 0, L.P_MONEY)
    step(g, [n for n in names if n.startswith("expand fisherman")][0])
    assert money - pv(g, 0, L.P_MONEY) == CP["macdonald"]["worker_cost"]


# ------------------------------------------------------------ MacKenzie
def test_R_8_6_mackenzie_3_per_whisky_and_cellar_in():
    board = board_of()
    cl = pasture_cluster(board, 2)
    d = solo_turns()
    d["players"][0] = {"money": 0, "clan": "mackenzie", "goods": {"grain": 2},
                       "units": {cl[0]: "distillery", cl[1]: "distillery"}}
    g = Game.from_scenario(d)
    step(g, "pass")
    money = pv(g, 0, L.P_MONEY)
    step(g, "process 2 whisky")
    assert pv(g, 0, L.P_MONEY) == money + 2 * CP["mackenzie"]["whisky_money"]
    assert g.context == "cellar" and mask_names(g) == ["cellar in whisky", "cellar skip"]
    step(g, "cellar in whisky")
    assert pv(g, 0, L.P_CELLAR, 2) == [1, 0] and pv(g, 0, L.P_GOODS + 5) == 1
    assert g.context == "main action" and g.round == 3


def test_R_8_6_no_cellar_without_fresh_whisky():
    d = solo_turns()
    d["players"][0] = {"money": 0, "clan": "mackenzie", "goods": {"whisky": 3}}
    g = Game.from_scenario(d)
    step(g, "pass")
    assert g.context == "main action" and g.round == 3


def test_R_8_6_cellar_ages_at_the_start_of_production():
    d = solo_turns()
    d["players"][0] = {"money": 0, "clan": "mackenzie", "cellar": [1, 1]}
    g = Game.from_scenario(d)
    step(g, "pass")
    assert g.context == "after main action"          # barrels may leave at any time
    step(g, "end turn")
    assert pv(g, 0, L.P_CELLAR, 2) == [0, 1]
    assert pv(g, 0, L.P_GOODS + 5) == 1
    assert pv(g, 0, L.P_MONEY) == int(RS.export_board.pass_bonus[2][1]) + CP["mackenzie"]["cellar_money"][1]


def test_R_8_6_barrels_out_at_any_time_0_and_7():
    """The left barrel has not aged (nothing), the right one has aged once (£7); the
    earlier reading's £7 / £15 are in test_text_readings.py."""
    d = solo_turns()
    d["players"][0] = {"money": 0, "clan": "mackenzie", "cellar": [1, 1]}
    g = Game.from_scenario(d)
    assert {"cellar out left", "cellar out right"} <= set(mask_names(g))
    step(g, "cellar out left")
    assert pv(g, 0, L.P_MONEY) == 0 and pv(g, 0, L.P_GOODS + 5) == 1
    assert g.context == "main action"
    step(g, "trade sell 1 whisky")
    assert g.context == "after main action" and "cellar out right" in mask_names(g)
    money = pv(g, 0, L.P_MONEY)
    step(g, "cellar out right")
    assert pv(g, 0, L.P_MONEY) == money + CP["mackenzie"]["cellar_money"][0] == money + 7


def test_R_8_6_cellar_counts_for_T2_and_is_emptied_before_final_scoring():
    d = solo_turns(round=5, scoring_tiles=[None, None, None, None, "T2"])
    d["players"][0] = {"money": 0, "clan": "mackenzie", "goods": {"cheese": 1}, "cellar": [1, 0]}
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)
    step(g, "pass")
    step(g, "end turn")
    assert g.is_terminal
    # production moved the barrel right (no money yet); T2: cheese + barrel = one pair; it
    # leaves the right space, aged once, with £7
    assert pv(g, 0, L.P_GLORY) == 3
    assert pv(g, 0, L.P_CELLAR, 2) == [0, 0] and pv(g, 0, L.P_GOODS + 5) == 1
    assert pv(g, 0, L.P_MONEY) == int(RS.export_board.pass_bonus[2][1]) + 7
    assert g.score_breakdown()[0]["goods"] == 2 * 2


# ------------------------------------------------------------ Robertson
def _delta_with_neighbor(board, cost=None, terrain=TERRAIN_PASTURE):
    h = Hexes(board)
    for v in range(board.n_hex):
        if not (board.delta[v] and board.active[v] and board.terrain[v] & terrain):
            continue
        if cost is not None and board.land_cost[v] != cost:
            continue
        for w in h.neighbors(v):
            if w < board.n_hex and board.active[w] and board.terrain[w] & TERRAIN_PASTURE \
                    and not board.terrain[w] & TERRAIN_LOCH and not board.delta[w]:
                return board.labels[v], board.labels[w]
    raise AssertionError


@pytest.mark.parametrize("players", [2, 4])
def test_R_8_7_robertson_delta_discount_rulebook_example(players):
    board = board_of(players)
    delta, nb = _delta_with_neighbor(board, cost=1)
    d = solo_turns(players)
    d["players"][0] = {"money": 50, "clan": "robertson", "units": {nb: "sheep"}}
    g = Game.from_scenario(d)
    step(g, f"expand bakery @ {delta}")
    disc = CP["robertson"]["delta_discount_1_2" if players <= 2 else "delta_discount_3_4"]
    assert 50 - pv(g, 0, L.P_MONEY) == COST["bakery"] + 1 - disc
    if players == 4:
        assert 50 - pv(g, 0, L.P_MONEY) == 6                    # the rulebook: 8 + 1 - 3
    d["players"][0]["clan"] = None
    g = Game.from_scenario(d)
    step(g, f"expand bakery @ {delta}")
    assert 50 - pv(g, 0, L.P_MONEY) == COST["bakery"] + 1


def test_R_8_7_robertson_starting_workers_get_the_discount():
    g = Game(GameConfig(num_players=4, seed=2, clans=("robertson", None, None, None),
                        first_player=0))
    _play_picks(g)
    assert g.current_player == 0
    board = g.board
    names = [n for n in mask_names(g) if board.delta[board.node(n.split("@ ")[1])]]
    assert names
    name = names[0]
    unit, hex_ = name.split()[1], name.split("@ ")[1]
    money = pv(g, 0, L.P_MONEY)
    step(g, name)
    paid = money - pv(g, 0, L.P_MONEY)
    assert paid == max(0, COST[unit] + int(board.land_cost[board.node(hex_)])
                       - CP["robertson"]["delta_discount_3_4"])


# -------------------------------------------------------------- Stewart
@pytest.mark.parametrize("players", [2, 4])
def test_R_8_8_stewart_start_5_merchants_and_river_crossing(players):
    g = Game(GameConfig(num_players=players, clans=("stewart",) + (None,) * (players - 1)))
    assert pv(g, 0, L.P_MERCH) == 5 and pv(g, 0, L.P_TRACK) == RS.economy.merchants_total - 5
    assert pv(g, 0, L.P_SHIP) == 1 and pv(g, 1, L.P_SHIP) == 0


def test_R_8_8_stewart_gets_1_per_trade_before_paying():
    d = solo_turns(market={"whisky": 10})
    d["players"][0] = {"money": 9, "clan": "stewart", "merchants": 5}
    g = Game.from_scenario(d)
    assert "trade buy 1 whisky" in mask_names(g)
    step(g, "trade buy 1 whisky")
    assert pv(g, 0, L.P_MONEY) == 0
    d["players"][0]["clan"] = None
    assert "trade buy 1 whisky" not in mask_names(Game.from_scenario(d))
    d["players"][0] = {"money": 0, "clan": "stewart", "merchants": 5, "goods": {"wool": 3}}
    g = Game.from_scenario(d)
    price = int(market_price(g.state, g.tables, 0))
    step(g, "trade sell 3 wool")
    assert pv(g, 0, L.P_MONEY) == 3 * price + 1                    # once per transaction


def test_R_8_8_stewart_neighborhood_1_per_good_type():
    h = Hexes(board_of())
    pastures = h.land(TERRAIN_PASTURE, only=True)
    x, (v, w, y) = next((x, nb[:3]) for x in pastures
                        for nb in [[u for u in h.neighbors(x) if u in pastures]] if len(nb) >= 3)
    d = solo_turns()
    d["players"][0] = {"money": 60, "clan": "stewart", "merchants": 5, "units": {h.label(v): "sheep"}}
    d["players"][1]["units"] = {h.label(w): "distillery", h.label(y): "cow"}
    g = Game.from_scenario(d)
    step(g, f"expand sheep @ {h.label(x)}")
    money = pv(g, 0, L.P_MONEY)
    price = int(market_price(g.state, g.tables, 5)) - int(RS.economy.neighborhood_discount[5])
    step(g, "neighborhood buy 2 whisky")
    assert pv(g, 0, L.P_MONEY) == money + 1 - 2 * price
    money = pv(g, 0, L.P_MONEY)
    mp = int(market_price(g.state, g.tables, 2)) - int(RS.economy.neighborhood_discount[2])
    step(g, "neighborhood buy 1 milk")
    assert pv(g, 0, L.P_MONEY) == money + 1 - mp


# --------------------------------------------------------------- brewer
def test_R_8_9_brewer_brews_one_beer_per_hop_for_grain():
    d = solo_turns(variant_static_imports=True)
    c = contract_row(2)                       # 6 wool -> 3 tobacco, 2 hops
    d["players"][0] = {"money": 0, "clan": "brewer", "contracts": [2],
                       "goods": {"wool": 6, "grain": 5}}
    g = Game.from_scenario(d)
    step(g, "fulfill contract box 0")
    assert g.context == "brewing"
    assert mask_names(g) == [f"brew {k} beer" for k in range(c["gain_hops"] + 1)]
    step(g, "brew 2 beer")
    w = CP["brewer"]
    assert pv(g, 0, L.P_MONEY) == 2 * w["beer_money"]
    assert pv(g, 0, L.P_GOODS + 1) == 5 - 2 * w["beer_grain"] and pv(g, 0, L.P_BEER) == 2


def test_R_8_9_brewer_max_3_per_contract_and_grain_limits():
    d = solo_turns(variant_static_imports=True)
    d["players"][0] = {"money": 0, "clan": "brewer", "contracts": [9],   # 5 hops
                       "goods": {"cheese": 2, "grain": 9}}
    g = Game.from_scenario(d)
    step(g, "fulfill contract box 0")
    assert mask_names(g)[-1] == f"brew {CP['brewer']['beer_max_per_contract']} beer"
    d["players"][0]["goods"] = {"cheese": 2, "grain": 1}
    g = Game.from_scenario(d)
    step(g, "fulfill contract box 0")
    assert mask_names(g) == ["brew 0 beer", "brew 1 beer"]
    d["players"][0]["goods"] = {"cheese": 2}
    g = Game.from_scenario(d)
    step(g, "fulfill contract box 0")
    assert g.context != "brewing"                   # no grain: no decision
    d["players"][0].update(clan=None, goods={"cheese": 2, "grain": 9})
    g = Game.from_scenario(d)
    step(g, "fulfill contract box 0")
    assert g.context != "brewing"


# ------------------------------------------------------------ scenario schema
def test_R_8_scenario_round_trip_keeps_clan_state():
    g = Game(GameConfig(num_players=3, seed=9, clans="draft"))
    rng = np.random.default_rng(3)
    for _ in range(60):
        g.step(int(rng.choice(g.legal_actions())))
    from caledonia_env.scenario import to_scenario
    sc = to_scenario(g)
    assert all(p["clan"] in RS.clans.params for p in sc["players"])
    assert np.array_equal(Game.from_scenario(sc).state, g.state)


def _rowing_layout():
    """A map with lochs a - b and a loch `other` adjacent to b but not to a."""
    from caledonia_env.map import build_board
    from caledonia_env.map.board import all_configs
    for cfg in all_configs():
        board = build_board(cfg, num_players=2)
        adj = {v: [int(w) for w in board.adjacent[v] if w >= 0] for v in range(board.n_nodes)}
        lochs = [v for v in range(board.n_hex) if board.terrain[v] & TERRAIN_LOCH]
        for a in lochs:
            for b in adj[a]:
                if b not in lochs:
                    continue
                for o in lochs:
                    if o not in (a, b) and o not in adj[a] and b in adj[o]:
                        return ",".join(cfg), board, a, b, o
    raise AssertionError("no map has three lochs in such a row")


def test_R_8_5_rowing_keeps_fishermen_apart():
    cfg, board, a, b, other = _rowing_layout()
    lab = board.labels
    d = solo_turns(map=cfg)
    d["players"][0] = {"money": 0, "clan": "macdonald",
                       "units": {lab[a]: "fisherman", lab[other]: "fisherman"}}
    g = Game.from_scenario(d)
    adj = {v: [int(w) for w in board.adjacent[v] if w >= 0] for v in range(board.n_nodes)}
    expected = {f"select @ {lab[w]}" for w in adj[a] if board.terrain[w] & TERRAIN_LOCH
                and w != other and other not in adj[w]}
    assert f"select @ {lab[b]}" not in expected
    if expected:
        step(g, f"row fisherman @ {lab[a]}")
        assert set(mask_names(g)) == expected
    else:
        assert f"row fisherman @ {lab[a]}" not in mask_names(g)
    d["players"][0]["units"] = {lab[a]: "fisherman"}
    g = Game.from_scenario(d)
    step(g, f"row fisherman @ {lab[a]}")
    assert f"select @ {lab[b]}" in mask_names(g)


def test_R_8_5_far_lochs_need_shipping_range_from_the_fisherman():
    board = board_of()
    a, b, c = _loch_pair(board)
    lab = board.labels
    d = solo_turns()
    d["players"][0] = {"money": 30, "clan": "macdonald", "units": {lab[a]: "fisherman"},
                       "shipping": 1}
    assert board.ship_req[a, c] == 2
    assert f"expand fisherman @ {lab[c]}" not in mask_names(Game.from_scenario(d))
    d["players"][0]["shipping"] = 2
    assert f"expand fisherman @ {lab[c]}" in mask_names(Game.from_scenario(d))


def test_R_8_5_fisherman_on_a_port_uses_that_port():
    d = solo_turns(ports={"A": "P5", "B": None, "C": None, "D": None})
    d["players"][0] = {"money": 0, "clan": "macdonald", "units": {"port-A": "fisherman"}}
    g = Game.from_scenario(d)
    assert "port A" in [n.split(" (")[0] for n in mask_names(g)]
    step(g, "port A")
    assert pv(g, 0, L.P_MONEY) == RS.ports.params[1][1]


def test_R_8_clan_numbers_come_from_the_ruleset(tmp_path):
    import json
    path = tmp_path / "override.json"
    path.write_text(json.dumps({"clans": {"stewart": {"market_money": 3},
                                          "campbell": {"building_discount": [1, 2, 2, 2]}}}))
    d = solo_turns(market={"whisky": 10}, ruleset=str(path))
    d["players"][0] = {"money": 7, "clan": "stewart", "merchants": 5}
    g = Game.from_scenario(d)
    step(g, "trade buy 1 whisky")
    assert pv(g, 0, L.P_MONEY) == 0
    cl = pasture_cluster(g.board, 2)
    d["players"][0] = {"money": 50, "clan": "campbell", "units": {cl[0]: "sheep"}}
    g = Game.from_scenario(d)
    step(g, f"expand bakery @ {cl[1]}")
    assert 50 - pv(g, 0, L.P_MONEY) == COST["bakery"] - 1 + int(g.board.land_cost[g.board.node(cl[1])])


@pytest.mark.parametrize("cfg", [dict(num_players=3, clan_auction=True),
                                 dict(num_players=2, clans=("macdonald", "mackenzie")),
                                 dict(num_players=1, solo=True, clans="draft")])
def test_R_9_4_R_8_scenario_round_trip_at_every_step(cfg):
    from caledonia_env.scenario import to_scenario
    g = Game(GameConfig(seed=4, **cfg))
    rng = np.random.default_rng(4)
    k = 0
    while not g.is_terminal:
        if k % 7 == 0:
            assert np.array_equal(Game.from_scenario(to_scenario(g)).state, g.state), g.context
        g.step(int(rng.choice(g.legal_actions())))
        k += 1


@pytest.mark.parametrize("kw", [dict(num_players=4), dict(num_players=2),
                                dict(num_players=1, solo=True)])
def test_R_1_7_standard_game_drafts_clans_by_default(kw):
    """R-1.7: the default GameConfig is the standard game: players + 1 clan/starting-tile
    pairs are drawn (two in solo, R-9.2) and every pick names a clan; clans=None is the
    no-clans variant (R-1.9)."""
    g = Game(GameConfig(seed=3, **kw))
    assert g.config.clans == "draft" and g.config.clan_mode == "draft"
    picks = [g.describe_action(a) for a in g.legal_actions()]
    assert g.context == "starting pick" and len(picks) == kw["num_players"] + 1
    assert all("(" in p and ", S" in p for p in picks)          # "(stewart, S5)"
    while g.context == "starting pick":
        g.step(g.legal_actions()[0])
    assert all(g.clan(p) is not None for p in range(g.num_players))
    plain = Game(GameConfig(seed=3, clans=None, **kw))
    assert plain.config.clan_mode == "none"
    assert all(", S" not in plain.describe_action(a) for a in plain.legal_actions())
