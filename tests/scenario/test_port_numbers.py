"""Port bonus tiles by their printed numbers (R-5): P1 meat, P2 basic goods, P3 processed
goods, P4 upgrade + glory, P5 money, P6 price shift, P7 swap, P8 money + structure bonus,
P9 copy. Labels shown to users, the ruleset keys, and the old project labels still read
from scenarios of version 1 and records before version 4 (not from a config)."""
import json
import shutil
import warnings
from pathlib import Path

import pytest
from conftest import base_scenario

from caledonia_env import Game, GameConfig
from caledonia_env.config import ConfigError
from caledonia_env.data import (DEFAULT_RULESET_DIR, PORT_KINDS, PORTS, RulesetError,
                                load_ruleset)
from caledonia_env.data.names import LEGACY_PORTS, PORT_NUMBERS
from caledonia_env.engine import layout as L
from caledonia_env.records import RECORD_VERSION, upgrade_setup
from caledonia_env.scenario import PORT_LABELS_V1, SCENARIO_VERSION, ScenarioError, upgrade_scenario

PRINTED = {"P1": "meat_reduction", "P2": "basic_exchange", "P3": "processed_exchange",
           "P4": "upgrade_glory", "P5": "money", "P6": "price_shift", "P7": "swap_units",
           "P8": "money_structure", "P9": "copy_port"}
FIXTURE = Path(__file__).parents[1] / "fixtures" / "records_v2.json"
#: the bundled default's fingerprint before the tiles took their printed numbers
NUMBERS_2026_11 = "81baf3f4d327e44d6610ec24f041f3a5b15e7141e2b804ca7b00cdac1355473e"


def tile_at(game, corner):
    return PORTS[int(game.state[L.S_PORTS + "ABCD".index(corner)])]


def test_labels_are_the_printed_numbers():
    """Every engine tile carries the number printed on it; the old labels are a permutation."""
    assert {PORTS[i]: PORT_KINDS[i] for i in range(9)} == PRINTED
    assert sorted(PORT_NUMBERS) == list(range(1, 10))
    assert PORT_LABELS_V1 == {"P1": "P1", "P2": "P5", "P3": "P2", "P4": "P6", "P5": "P3",
                              "P6": "P7", "P7": "P4", "P8": "P8", "P9": "P9"}
    rs = load_ruleset()
    raw = rs.to_dict()["ports"]
    assert {k: v["kind"] for k, v in raw.items() if k in PORTS} == PRINTED
    assert rs.ports.params[PORTS.index("P5"), 1] == 10        # money column: the £10 tile


def test_a_ruleset_keyed_by_the_old_labels_is_refused_naming_the_printed_numbers(tmp_path):
    ruleset = tmp_path / "ruleset"
    shutil.copytree(DEFAULT_RULESET_DIR, ruleset)
    ports = json.loads((ruleset / "ports.json").read_text())
    old = {LEGACY_PORTS[PORTS.index(k)]: v for k, v in ports.items() if k in PORTS}
    (ruleset / "ports.json").write_text(json.dumps(dict(ports, **old)))
    with pytest.raises(RulesetError, match=r"port 'P5', field 'kind': 'processed_exchange'.*"
                                           r"printed tile numbers: P1 meat_reduction, P2 "
                                           r"basic_exchange, P3"):
        Game(GameConfig(num_players=2, ruleset=str(ruleset)))


def test_action_names_text_and_scenario_show_the_printed_number():
    d = base_scenario(2, ports={"A": "P5", "B": "P6", "C": None, "D": "P2"},
                      players=[{"money": 3, "units": {"A1-03": "sheep"}}, {"money": 0}])
    g = Game.from_scenario(d)
    assert tile_at(g, "A") == "P5" and tile_at(g, "D") == "P2"
    assert "port A (P5)" in [g.describe_action(a) for a in g.legal_actions()]
    assert "ports A:P5 B:P6 C:- D:P2" in g.render_text()
    out = g.to_scenario()
    assert out["version"] == SCENARIO_VERSION and out["ports"] == d["ports"]
    money = g.state[L.S_PLAYERS + L.P_MONEY]
    g.step(g.parse_action("port A"))
    assert g.state[L.S_PLAYERS + L.P_MONEY] == money + 10          # P5 is the £10 tile


def test_a_version_1_scenario_reads_the_old_labels():
    old = base_scenario(2, version=1, ports={"A": "P2", "B": "p4", "C": None, "D": "P7"},
                        pending={"p4_good": -1})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = Game.from_scenario(old)
    assert [tile_at(g, c) for c in "ABD"] == ["P5", "P6", "P4"]
    assert g.to_scenario()["ports"] == {"A": "P5", "B": "P6", "C": None, "D": "P4"}
    assert "p4_good" in old["pending"] and old["version"] == 1     # the input is unchanged
    new = upgrade_scenario(old)
    assert new["pending"] == {"price_shift_good": -1} and new["version"] == 2


def test_a_scenario_without_version_uses_the_printed_numbers_without_a_warning():
    """A new user's hand-written ``"A": "P5"`` is the tile printed 5, silently."""
    d = base_scenario(2, ports={"A": "P5", "B": None, "C": None, "D": "P2"})
    del d["version"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = Game.from_scenario(d)
    assert tile_at(g, "A") == "P5" and tile_at(g, "D") == "P2"
    assert upgrade_scenario(d) is d
    explicit = base_scenario(2, version=1, ports={"A": "P3", "B": None, "C": None, "D": None})
    assert tile_at(Game.from_scenario(explicit), "A") == "P2"
    assert tile_at(Game.from_scenario(dict(explicit, version=2)), "A") == "P3"


@pytest.mark.parametrize("bad", [3, 0, "2", True])
def test_unknown_scenario_version_is_a_clear_error(bad):
    with pytest.raises(ScenarioError, match=r"unsupported scenario version .*readable: \(1, 2\)"):
        Game.from_scenario(base_scenario(2, version=bad))


def test_new_records_use_the_printed_numbers_and_the_renamed_option():
    g = Game.from_scenario(base_scenario(2, ports={"A": "P6", "B": None, "C": None, "D": None}))
    rec = json.loads(g.to_json())
    assert rec["version"] == RECORD_VERSION == 6
    assert rec["scenario"]["version"] == 2 and rec["scenario"]["ports"]["A"] == "P6"
    assert rec["ruleset_fingerprint"] == g.ruleset.fingerprint()
    assert "interp_price_shift_exact" in Game(num_players=2).to_json()
    assert "interp_p4_exact" not in Game(num_players=2).to_json()


def test_old_records_map_labels_option_and_fingerprint():
    """Records before version 4: the embedded scenario is version 1, interp_p4_exact is the
    renamed option, and the fingerprint was taken over the old-labelled ports table."""
    d = json.loads(FIXTURE.read_text())[2]
    assert d["scenario"]["ports"] == {"A": "P7", "B": "P4", "C": "P3", "D": "P8"}
    rs = load_ruleset("estimates-2026-11")      # the default when the record was written
    assert rs.matches_fingerprint(d["ruleset_fingerprint"])
    setup = upgrade_setup(dict(d, config=dict(d["config"], interp_p4_exact=True)))
    assert setup["config"]["interp_price_shift_exact"] is True
    assert "interp_p4_exact" not in setup["config"] and setup["scenario"]["version"] == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = Game.record_start(d)
    assert [tile_at(g, c) for c in "ABCD"] == ["P4", "P6", "P2", "P8"]
    assert GameConfig.from_dict(setup["config"]).interp_price_shift_exact


def test_the_fingerprint_hashes_numbers_not_port_labels():
    """The tiles are hashed in engine order: the printed keys kept the 2026-11 fingerprint,
    and a changed port number still changes it."""
    rs = load_ruleset("estimates-2026-11")      # the default's numbers of 2026-11
    assert rs.fingerprint() == NUMBERS_2026_11
    d = rs.to_dict()
    d["ports"]["P5"]["money"] = 11
    assert load_ruleset(d).fingerprint() != rs.fingerprint()
    rec = json.loads(Game(num_players=2, seed=3).to_json())
    rec["ruleset_fingerprint"] = load_ruleset(d).fingerprint()
    with pytest.raises(ValueError, match="another ruleset"):
        Game.from_json(rec)


def test_the_old_option_name_is_refused_naming_the_current_one():
    """``interp_p4_exact`` (before version 4) lives on in old records only (read by
    :func:`upgrade_setup`); a config that names it is refused, the allowed names listed."""
    with pytest.raises(ConfigError, match=r"unknown GameConfig options: \['interp_p4_exact'\]"
                                          r".*interp_price_shift_exact"):
        GameConfig.from_dict(dict(GameConfig(num_players=2).to_dict(), interp_p4_exact=True))
    with pytest.raises(TypeError, match="interp_p4_exact"):
        GameConfig(num_players=2, interp_p4_exact=True)


def test_legacy_labels_are_the_old_order():
    assert LEGACY_PORTS == tuple(f"P{i}" for i in range(1, 10))
    assert [PORT_LABELS_V1[o] for o in LEGACY_PORTS] == list(PORTS)
