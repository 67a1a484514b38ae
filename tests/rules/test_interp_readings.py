"""Two switchable readings (docs/interpretations.md): the port swap's expansion bonuses
(P6, printed port 7: first-edition text or the publisher's erratum, R-5) and the value of
solo imports (R-9.2: fixed, or by rarity of the player's own counts, R-7) — the config
field, its checks, the engine tables and a game record carrying it. The solo scoring
scenarios are in test_solo.py."""
import json
from dataclasses import replace

import pytest
from conftest import base_scenario, mask_names

from caledonia_env import Game, GameConfig
from caledonia_env.config import READINGS_2026_11_26, ConfigError, ConfigTypeError
from caledonia_env.data import load_ruleset
from caledonia_env.engine import layout as L
from caledonia_env.engine.tables.build import SOLO_IMPORT_READINGS, SWAP_BONUS_READINGS, Variants
from caledonia_env.game import Static

SWAP = "P7"          # the swap tile's printed number (port 7)
# Player 0's units (2-player map A1,B1,C1,D1): A1-03 is next to port A; B1-04 (player 1's
# cheese dairy) is a neighbor of A1-09; three distilleries wait for a fourth.
UNITS = {"A1-03": "sheep", "A1-09": "cow", "A1-14": "distillery", "A1-19": "distillery",
         "A1-25": "distillery"}


def step(g, name):
    g.step(g.parse_action(name))


def money(g, p=0):
    return int(g.state[L.S_PLAYERS + p * L.P_SIZE + L.P_MONEY])


def swap_game(reading, **kw):
    """Player 0 may use the swap port; the position's engine tables use ``reading``."""
    d = base_scenario(pile=[1, 2, 3, 4, 5], round=3, **kw)
    d["ports"] = {"A": SWAP, "B": None, "C": None, "D": None}
    d["players"][0] = {"money": 20, "merchants": 3, "units": dict(UNITS)}
    d["players"][1] = {"money": 0, "units": {"B1-04": "cheese_dairy"}}
    g = Game.from_scenario(d)
    g.static = Static(g.ruleset, g.board, g.num_players,
                      replace(g.static.variants, swap_bonuses=reading))
    return g


def test_R_5_P7_R_9_2_readings_and_defaults():
    """The defaults are the publisher's erratum (P7 swap: both bonuses) and FAQ (solo imports
    by rarity) since 2026-11-26; the first-edition swap and the fixed 4 VP are the switches,
    and the engine's own default tables agree with GameConfig."""
    assert SWAP_BONUS_READINGS == ("first-edition", "erratum")
    assert SOLO_IMPORT_READINGS == ("fixed", "rarity")
    cfg = GameConfig()
    assert (cfg.interp_swap_bonuses, cfg.interp_solo_imports) == ("erratum", "rarity")
    assert (Variants().swap_bonuses, Variants().solo_imports) == ("erratum", "rarity")
    assert Game(GameConfig(num_players=2)).static.variants.swap_bonuses == "erratum"


def test_R_5_P7_first_edition_swap_gives_no_neighborhood_purchase():
    """First edition: the swapped-in bakery next to an opponent's cheese dairy buys nothing;
    the fourth distillery swapped in still gives the structure (building) bonus."""
    g = swap_game("first-edition")
    step(g, "port A")
    step(g, "expand distillery @ A1-03")
    step(g, "expand bakery @ A1-09")
    assert g.context == "structure bonus"
    step(g, "decline structure bonus")
    assert g.context == "main action" and money(g) == 20


def test_R_5_P7_erratum_swap_gives_neighborhood_then_building_bonus():
    """Erratum: the same two exchanges offer the neighborhood purchase (cheese, R-3.3.1)
    for the bakery, then the structure bonus for the fourth distillery (R-3.3.2)."""
    g = swap_game("erratum")
    step(g, "port A")
    step(g, "expand distillery @ A1-03")
    assert g.context == "port swap"               # A1-03 has no opponent neighbor
    step(g, "expand bakery @ A1-09")
    assert g.context == "neighborhood purchase"
    assert "neighborhood buy 1 cheese" in mask_names(g)
    assert not any("wool" in n or "whisky" in n for n in mask_names(g))
    before = money(g)
    step(g, "neighborhood buy 1 cheese")
    assert money(g) < before
    assert g.context == "structure bonus"
    step(g, "decline structure bonus")
    assert g.context == "main action"


def test_R_5_P7_erratum_neighborhood_purchase_between_the_two_exchanges():
    """Erratum: the bonus of the first exchange is resolved before the second exchange."""
    g = swap_game("erratum")
    step(g, "port A")
    step(g, "expand bakery @ A1-09")
    assert g.context == "neighborhood purchase"
    step(g, "neighborhood done")
    assert g.context == "port swap"
    second = mask_names(g)
    assert "expand distillery @ A1-03" in second
    assert not any(n.endswith("A1-09") or n.startswith("expand cow") for n in second)
    step(g, "expand distillery @ A1-03")
    assert g.context == "structure bonus"


def test_R_9_2_solo_swap_gives_no_neighborhood_bonus_in_either_reading():
    """Solo has no neighborhood bonus (R-9.2), so the erratum adds nothing there."""
    cfg = GameConfig(num_players=1, solo=True, interp_swap_bonuses="erratum")
    g = Game(cfg)
    assert int(g.tables[L.T_SWAP_NB_BONUS]) == 1 and int(g.tables[L.T_NEIGHBOR_BONUS]) == 0


@pytest.mark.parametrize("field, reading, slot, flag", [
    ("interp_swap_bonuses", "first-edition", L.T_SWAP_NB_BONUS, 0),
    ("interp_swap_bonuses", "erratum", L.T_SWAP_NB_BONUS, 1),
    ("interp_solo_imports", "fixed", L.T_SOLO_IMPORT_RARITY, 0),
    ("interp_solo_imports", "rarity", L.T_SOLO_IMPORT_RARITY, 1),
])
def test_config_reading_reaches_the_engine_tables(field, reading, slot, flag):
    g = Game(GameConfig(num_players=1, solo=True, seed=3, **{field: reading}))
    assert int(g.tables[slot]) == flag


def test_solo_rarity_needs_solo_and_yields_to_the_static_variant():
    """The rarity reading changes only solo games without the static-imports variant."""
    g = Game(GameConfig(num_players=2, interp_solo_imports="rarity"))
    assert int(g.tables[L.T_SOLO_IMPORT_RARITY]) == 0
    g = Game(GameConfig(num_players=1, solo=True, variant_static_imports=True,
                        interp_solo_imports="rarity"))
    assert int(g.tables[L.T_SOLO_IMPORT_RARITY]) == 0


@pytest.mark.parametrize("field", ["interp_swap_bonuses", "interp_solo_imports"])
def test_config_readings_are_checked(field):
    with pytest.raises(ConfigError, match=rf"GameConfig.{field} must be one of .*, got 'both'"):
        GameConfig(**{field: "both"})
    with pytest.raises(ConfigTypeError, match=field):
        GameConfig(**{field: True})
    assert getattr(GameConfig(**{field: "  " + getattr(GameConfig(), field).upper()}),
                   field) == getattr(GameConfig(), field)


@pytest.mark.parametrize("switch, bad", [("swap_bonuses", "errata"), ("solo_imports", 4)])
def test_engine_variants_are_checked(switch, bad):
    g = Game(GameConfig(num_players=2))
    with pytest.raises(ValueError, match=f"{switch} must be one of"):
        Static(g.ruleset, g.board, 2, replace(g.static.variants, **{switch: bad})).tables


def test_readings_round_trip_through_records():
    cfg = GameConfig(num_players=1, solo=True, seed=4, interp_swap_bonuses="first-edition",
                     interp_solo_imports="fixed")
    assert GameConfig.from_dict(cfg.to_dict()) == cfg
    g = Game(cfg)
    for _ in range(5):
        g.step(g.legal_actions()[0])
    record = json.loads(g.to_json())
    assert record["config"]["interp_swap_bonuses"] == "first-edition"
    assert record["config"]["interp_solo_imports"] == "fixed"
    again = Game.from_json(record)
    assert again.config == cfg and again.history == g.history
    # a config without the switches plays today's defaults; a record from before version 5
    # without them plays the readings of its time (records.upgrade_setup)
    older = dict(record["config"])
    del older["interp_swap_bonuses"], older["interp_solo_imports"]
    for k in READINGS_2026_11_26:
        del older[k]
    assert GameConfig.from_dict(older) == replace(cfg, interp_swap_bonuses="erratum",
                                                  interp_solo_imports="rarity")
    then = dict(record, version=4, config=older,
                ruleset_fingerprint=load_ruleset("estimates-2026-11").fingerprint())
    assert Game.record_start(then).config == replace(cfg, ruleset="estimates-2026-11",
                                                     **READINGS_2026_11_26)
