"""Simplification variants (R-9.3): static imports, no scoring tiles, no ports, smaller map,
Kickstarter tiles."""
import numpy as np
import pytest

from caledonia_env import Game, GameConfig
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import NEUTRAL, TERRAIN_LOCH, TERRAIN_PORT
from caledonia_env.engine.layout import STATE_SIZE
from caledonia_env.engine.playout import random_games
from conftest import base_scenario, finish_round5, mask_names

RS = Game(GameConfig(num_players=2)).ruleset


def pv(game, p, field):
    return int(game.state[L.S_PLAYERS + p * L.P_SIZE + field])


def play_random(game, seed):
    rng = np.random.default_rng(seed)
    names = set()
    while not game.is_terminal:
        legal = game.legal_actions()
        a = int(rng.choice(legal))
        names.update(game.describe_action(x).split(" (")[0] for x in legal)
        game.step(a)
    return names


# ------------------------------------------------------------ static imports
def test_R_9_3_static_imports_do_not_move_the_track():
    d = base_scenario(2, variant_static_imports=True, next_turn_order=[1])
    d["players"][0] = {"money": 0, "contracts": [2], "goods": {"wool": 6}}   # 3 tobacco
    g = Game.from_scenario(d)
    g.step(g.parse_action("fulfill contract box 0"))
    assert [int(x) for x in g.state[L.S_IMPORT:L.S_IMPORT + 3]] == [0, 0, 0]
    assert pv(g, 0, L.P_MONEY) == 0
    d["variant_static_imports"] = False
    g = Game.from_scenario(d)
    g.step(g.parse_action("fulfill contract box 0"))
    assert int(g.state[L.S_IMPORT + 1]) == 3 and pv(g, 0, L.P_MONEY) == 1   # the mark at 3


def test_R_9_3_static_imports_worth_4_each():
    d = base_scenario(3, variant_static_imports=True,
                      import_track={"cotton": 9, "tobacco": 3, "sugar_cane": 5})
    d["players"][0]["fulfilled"] = [2, 4, 13, 24]          # 3 tobacco, 6 cotton, 2 sugar cane
    g = finish_round5(d)
    assert g.score_breakdown()[0]["imports"] == 11 * RS.final_scoring.static_import_vp


# ----------------------------------------------------- no scoring tiles / ports
def test_R_9_3_no_scoring_tiles():
    g = Game(GameConfig(num_players=3, seed=5, scoring_tiles=False))
    assert (g.state[L.S_TILES:L.S_TILES + 5] == -1).all()
    d = base_scenario(2, round=2, scoring_tiles_enabled=False, scoring_tiles=["T1"] * 5,
                      next_turn_order=[1])
    d["players"][0] = {"money": 0, "goods": {"wool": 5}}
    d["players"][1]["passed"] = True
    g = Game.from_scenario(d)
    g.step(g.parse_action("pass"))
    assert g.round == 3 and pv(g, 0, L.P_GLORY) == 0
    d["scoring_tiles_enabled"] = True
    g = Game.from_scenario(d)
    g.step(g.parse_action("pass"))
    assert pv(g, 0, L.P_GLORY) == 5


def test_R_9_3_no_ports():
    g = Game(GameConfig(num_players=2, seed=6, ports=False, clans=("macdonald", "buchanan")))
    assert (g.state[L.S_PORTS:L.S_PORTS + 4] == -1).all()
    names = play_random(g, 6)
    assert not any(n.startswith("port ") for n in names)
    assert not any(n.startswith("expand fisherman @ port") for n in names)


# ----------------------------------------------------------------- smaller map
def _covered(g):
    return [v for v in range(g.board.n_hex) if g.state[L.S_OCC + v] == NEUTRAL]


@pytest.mark.parametrize("players", [2, 3])
def test_R_9_3_smaller_map_covers_one_land_hex_per_module(players):
    seen = set()
    for seed in range(6):
        g = Game(GameConfig(num_players=players, seed=seed, smaller_map=True))
        b = g.board
        cov = _covered(g)
        assert len(cov) == 4
        assert sorted(int(b.module[v]) for v in cov) == [0, 1, 2, 3]
        assert all(b.active[v] and not b.terrain[v] & (TERRAIN_LOCH | TERRAIN_PORT) for v in cov)
        again = Game(GameConfig(num_players=players, seed=seed, smaller_map=True))
        assert _covered(again) == cov                        # from the seed
        seen.add(tuple(b.labels[v] for v in cov))
        plain = Game(GameConfig(num_players=players, seed=seed))
        assert _covered(plain) == []
    assert len(seen) > 1


def test_R_9_3_smaller_map_given_hexes_are_never_available():
    b = Game(GameConfig(num_players=2, map="A1,B1,C1,D1")).board
    land = [b.labels[v] for v in range(b.n_hex) if b.active[v]
            and not b.terrain[v] & (TERRAIN_LOCH | TERRAIN_PORT)]
    given = tuple(land[i] for i in (0, 20, 40, 60))
    g = Game(GameConfig(num_players=2, map="A1,B1,C1,D1", smaller_map=True, covered_hexes=given))
    assert sorted(b.labels[v] for v in _covered(g)) == sorted(given)
    rng = np.random.default_rng(0)
    while not g.is_terminal:
        for a in g.legal_actions():
            name = g.describe_action(a)
            if "@ " in name:
                assert name.split("@ ")[1] not in given
        g.step(int(rng.choice(g.legal_actions())))


def test_R_9_3_smaller_map_errors():
    with pytest.raises(ValueError, match="2-3 player"):
        GameConfig(num_players=4, smaller_map=True)
    with pytest.raises(ValueError, match="smaller_map"):
        GameConfig(num_players=2, covered_hexes=("A1-01", "B1-01", "C1-01", "D1-01"))
    with pytest.raises(ValueError, match="four"):
        GameConfig(num_players=2, smaller_map=True, covered_hexes=("A1-01",))
    b = Game(GameConfig(num_players=2, map="A1,B1,C1,D1")).board
    loch = [b.labels[v] for v in range(b.n_hex) if b.terrain[v] & TERRAIN_LOCH][0]
    land = [b.labels[v] for v in range(b.n_hex) if b.active[v]
            and not b.terrain[v] & (TERRAIN_LOCH | TERRAIN_PORT)]
    with pytest.raises(ValueError, match="active land hex"):
        Game(GameConfig(num_players=2, map="A1,B1,C1,D1", smaller_map=True,
                        covered_hexes=(loch,) + tuple(land[:3])))
    with pytest.raises(ValueError, match="not on map"):
        Game(GameConfig(num_players=2, map="A1,B1,C1,D1", smaller_map=True,
                        covered_hexes=("Z9-99",) + tuple(land[:3])))


# ------------------------------------------------------------ Kickstarter tiles
def test_R_9_3_kickstarter_tiles_T9_P9_on_or_off():
    on_t, on_p, off_t, off_p = set(), set(), set(), set()
    for seed in range(30):
        g = Game(GameConfig(num_players=3, seed=seed, kickstarter_tiles=True))
        on_t.update(int(x) for x in g.state[L.S_TILES:L.S_TILES + 5])
        on_p.update(int(x) for x in g.state[L.S_PORTS:L.S_PORTS + 4])
        g = Game(GameConfig(num_players=3, seed=seed))
        off_t.update(int(x) for x in g.state[L.S_TILES:L.S_TILES + 5])
        off_p.update(int(x) for x in g.state[L.S_PORTS:L.S_PORTS + 4])
    assert 8 in on_t and 8 in on_p                       # T9, P9 (index 8)
    assert 8 not in off_t and 8 not in off_p


# -------------------------------------------------------- variants combined
def test_R_9_3_variants_combine_with_clans_in_random_games():
    cfg = GameConfig(num_players=3, seed=12, clans="draft", smaller_map=True, ports=False,
                     scoring_tiles=False, variant_static_imports=True, kickstarter_tiles=True)
    T = Game(cfg).tables
    finals = np.zeros((30, STATE_SIZE), np.int32)
    assert random_games(T, 30, 5, finals, automa_switch(T)) > 0
    assert all(L.game_over(f) for f in finals)
    assert (finals[:, L.S_IMPORT:L.S_IMPORT + 3] == 0).all()


def test_R_9_3_scenario_keeps_variants():
    d = base_scenario(2, variant_static_imports=True, ports_enabled=False,
                      scoring_tiles_enabled=False, kickstarter_tiles=True)
    g = Game.from_scenario(d)
    cfg = g.config
    assert cfg.variant_static_imports and not cfg.ports and not cfg.scoring_tiles
    assert cfg.kickstarter_tiles and "pass" in mask_names(g)
