"""The in-numba fuzzer: 10,000 random games clean, and a broken invariant is caught."""
from collections import Counter

import numpy as np
import pytest

from caledonia_env import Game, GameConfig, fuzz
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import OCC_STRIDE, PH_OVER, SHEEP, TERRAIN_LOCH


def test_fuzz_10000_games_every_configuration_clean():
    """Random legal games over every configuration: invariants hold after every step, the
    mask is never empty before the end, every game ends after the last round."""
    games, steps, failures = fuzz.run(seed=2026, start=0, count=10_000)
    assert failures == [], [(i, fuzz.FAILURES[c], s) for i, c, s in failures[:5]]
    assert games == 10_000 and steps > 10 * games


def test_cases_cover_every_configuration():
    configs = [fuzz.case(3, i).config for i in range(0, 4000, fuzz.BLOCK)]
    assert Counter((c.num_players, c.clan_mode) for c in configs).keys() >= {
        (n, m) for n in (1, 2, 3, 4) for m in ("none", "draft", "fixed")} | {
        (n, "auction") for n in (2, 3, 4)}
    for flag in ("ports", "scoring_tiles", "variant_static_imports", "kickstarter_tiles",
                 "smaller_map", "kickstarter_clan", "interp_price_shift_exact", "interp_retrieve_buy_side"):
        assert {bool(getattr(c, flag)) for c in configs} == {False, True}, flag
    assert any(c.solo for c in configs)
    assert any(isinstance(c.clans, tuple) and "brewer" in c.clans for c in configs)
    assert {c.interp_export_min_contracts for c in configs} >= {None, 0, 1}
    assert {c.interp_swap_bonuses for c in configs} == {"first-edition", "erratum"}
    assert {c.interp_solo_imports for c in configs if c.solo} == {"fixed", "rarity"}


@pytest.fixture
def state():
    g = Game(GameConfig(num_players=3, seed=11, clans=("macdonald", None, "stewart")))
    return g, g.state.copy()


def _po(p):
    return L.S_PLAYERS + p * L.P_SIZE


def test_check_state_clean_start(state):
    g, s = state
    assert fuzz.check_state(s, g.tables) == fuzz.OK


@pytest.mark.parametrize("field,code", [
    (L.P_MONEY, fuzz.E_MONEY), (L.P_GOODS + 4, fuzz.E_GOODS), (L.P_MERCH, fuzz.E_MERCH)])
def test_check_state_catches_negative_values(state, field, code):
    """A deliberately broken state (negative money, goods or merchants) is caught."""
    g, s = state
    s[_po(1) + field] = -1
    assert fuzz.check_state(s, g.tables) == code


def test_check_state_catches_broken_conservation(state):
    g, s = state
    s[_po(0) + L.P_TRACK] += 1                          # an eighth merchant
    assert fuzz.check_state(s, g.tables) == fuzz.E_MERCH_TOTAL
    s[_po(0) + L.P_TRACK] -= 1
    s[_po(0) + L.P_MARKET] = 1                          # on both spaces of wool
    s[_po(0) + L.P_MARKET + 6] = 1
    s[_po(0) + L.P_MERCH] -= 2
    assert fuzz.check_state(s, g.tables) == fuzz.E_BUY_SELL


def test_check_state_catches_units_and_hexes(state):
    g, s = state
    b = g.board
    land = next(v for v in range(b.n_hex) if b.active[v] and b.terrain[v] & 1
                and not b.terrain[v] & TERRAIN_LOCH and s[L.S_OCC + v] == -1)
    s[L.S_OCC + land] = 2 * OCC_STRIDE + SHEEP         # a fifth sheep out of nowhere
    assert fuzz.check_state(s, g.tables) == fuzz.E_UNITS
    s[_po(2) + L.P_BOARD + SHEEP] -= 1
    assert fuzz.check_state(s, g.tables) == fuzz.OK
    loch = next(v for v in range(b.n_hex) if b.terrain[v] & TERRAIN_LOCH)
    s[L.S_OCC + land] = -1
    s[L.S_OCC + loch] = 2 * OCC_STRIDE + SHEEP         # a sheep on a loch
    assert fuzz.check_state(s, g.tables) == fuzz.E_HEX
    s[L.S_OCC + loch] = 7 * OCC_STRIDE + SHEEP         # a player that does not exist
    assert fuzz.check_state(s, g.tables) == fuzz.E_OCC


def test_check_state_catches_price_and_round(state):
    g, s = state
    s[L.S_PRICE_STEP] = g.tables[L.T_STEP_HI] + 1
    assert fuzz.check_state(s, g.tables) == fuzz.E_PRICE
    s[L.S_PRICE_STEP] = g.tables[L.T_STEP_LO] - 1
    assert fuzz.check_state(s, g.tables) == fuzz.E_PRICE
    s[L.S_PRICE_STEP] = g.tables[L.T_STEP_HI]
    s[L.S_ROUND] = int(g.ruleset.setup.rounds) + 1
    assert fuzz.check_state(s, g.tables) == fuzz.E_ROUND


def test_check_state_catches_a_game_over_mirror_out_of_step(state):
    """game_over (the decision context) is the one test; the phase and S_DONE must follow it."""
    g, s = state
    assert not L.game_over(s) and fuzz.check_state(s, g.tables) == fuzz.OK
    s[L.S_DONE] = 1
    assert fuzz.check_state(s, g.tables) == fuzz.E_OVER
    s[L.S_DONE] = 0
    s[L.S_PHASE] = PH_OVER
    assert fuzz.check_state(s, g.tables) == fuzz.E_OVER


def test_failure_reports_step_and_replays_through_game():
    """A game cut at 5 steps is reported as not ending, at step 5; the same actions replay
    through Game to the identical state."""
    c = fuzz.case(5, 17)
    g = Game(c.config)
    actions = np.zeros(5, np.int32)
    code, steps = fuzz.fuzz_game(g.state, g.tables, c.action_seed, 5, actions,
                                  g.static.automa_switch)
    assert (code, steps) == (fuzz.E_STEPS, 5)
    r = Game(c.config)
    r.apply_sequence(int(a) for a in actions)
    assert np.array_equal(r.state, g.state)


def test_replay_full_game_matches():
    code, steps, actions = fuzz.run_case(fuzz.case(9, 3))
    assert code == fuzz.OK
    g, check = fuzz.replay(9, 3)
    assert g.is_terminal and check == fuzz.OK and g.history == [int(a) for a in actions]


def test_interpretation_switches_reach_the_tables():
    cfg = GameConfig(num_players=2, seed=1, interp_price_shift_exact=True, interp_retrieve_buy_side=False,
                     interp_export_min_contracts=0)
    T = Game(cfg).tables
    assert (T[L.T_PRICE_SHIFT_EXACT], T[L.T_RETRIEVE_BUY], T[L.T_EXPORT_MIN]) == (1, 0, 0)
