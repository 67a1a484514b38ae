"""Game records (docs/records.md): checksums, agent names, scores, verification that names
the diverging step, old records without checksum, scenario starts."""
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import base_scenario

from caledonia_env import Game, GameConfig, RecordError, RecordWarning
from caledonia_env.config import READINGS_2026_11_26, RULES_2026_11, RULES_2026_11_26
from caledonia_env.records import (RECORD_VERSION, STEP_DIGEST_CHARS, load, read_record,
                                   state_digest, upgrade_setup)


def _played(n=2, seed=4, steps=None):
    g = Game(num_players=n, seed=seed)
    rng = np.random.default_rng(seed)
    while not g.is_terminal and (steps is None or len(g.history) < steps):
        g.step(int(rng.choice(g.legal_actions())))
    return g


@pytest.fixture(scope="module")
def finished():
    return _played()


def test_R_7_record_holds_config_agents_scores_and_checksums(finished):
    d = json.loads(finished.to_json(agents=["greedy", "random"]))
    assert d["version"] == RECORD_VERSION and d["config"]["seed"] == finished.config.seed
    assert d["agents"] == ["greedy", "random"] and d["actions"] == finished.history
    assert d["scores"] == [int(x) for x in finished.scores()]
    ck = d["checksum"]
    assert ck["algorithm"] == "sha256" and ck["final_state"] == state_digest(finished.state)
    assert len(ck["steps"]) == len(d["actions"])
    assert all(len(x) == STEP_DIGEST_CHARS for x in ck["steps"])
    replay = Game.from_json(json.dumps(d))
    assert np.array_equal(replay.state, finished.state)
    assert "agents" not in json.loads(finished.to_json())


def test_record_of_a_running_game_has_no_scores():
    g = _played(steps=30)
    d = json.loads(g.to_json())
    assert d["scores"] is None and len(d["checksum"]["steps"]) == 30
    assert np.array_equal(Game.from_json(d).state, g.state)


def test_replay_names_the_first_diverging_step(finished):
    d = json.loads(finished.to_json())
    k = 17
    d["checksum"]["steps"][k] = "0" * STEP_DIGEST_CHARS
    with pytest.raises(RecordError, match=f"diverges from the record at step {k} "):
        Game.from_json(json.dumps(d))
    d = json.loads(finished.to_json())
    d["checksum"]["final_state"] = "0" * 64
    with pytest.raises(RecordError, match="final state differs"):
        Game.from_json(d)
    d = json.loads(finished.to_json())
    d["scores"][0] += 1
    with pytest.raises(RecordError, match="scores"):
        Game.from_json(d)


def test_replay_names_the_step_of_an_illegal_action(finished):
    d = json.loads(finished.to_json())
    g = Game(num_players=2, seed=finished.config.seed)
    g.apply_sequence(d["actions"][:5])
    d["actions"][5] = int(np.flatnonzero(~g.legal_mask())[0])
    with pytest.raises(RecordError, match="step 5: the record's action is illegal"):
        Game.from_json(d)


#: the rules a record before version 5 played when it named no ruleset and no readings
THEN = RULES_2026_11


@pytest.fixture(scope="module")
def finished_then():
    g = Game(GameConfig(num_players=2, seed=4, **THEN))
    rng = np.random.default_rng(4)
    while not g.is_terminal:
        g.step(int(rng.choice(g.legal_actions())))
    return g


def _as_written_then(d: dict) -> dict:
    """A config as the bundled default of 2026-11 wrote it: no ruleset, no switch readings."""
    return {k: v for k, v in d.items() if k not in THEN} | {"ruleset": None}


def test_old_records_without_checksum_replay_with_a_warning(finished_then):
    d = json.loads(finished_then.to_json())
    config = {("interp_p4_exact" if k == "interp_price_shift_exact" else k): v     # R-5 labels
              for k, v in _as_written_then(d["config"]).items()}                 # of version 1
    old = {"version": 1, "config": config, "map": d["map"],
           "ruleset_fingerprint": _v2_records()[0]["ruleset_fingerprint"],   # of that time
           "actions": d["actions"]}
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = Game.from_json(json.dumps(old))
    assert np.array_equal(g.state, finished_then.state)
    assert any(issubclass(x.category, RecordWarning) for x in w)
    with pytest.raises(RecordError, match="no checksum"):
        Game.from_json(old, strict=True)


def test_version_4_records_replay_on_the_numbers_and_readings_of_their_time(finished_then):
    """Before version 5 the bundled default was today's estimates-2026-11 and the P7 swap and
    solo imports defaulted to the first-edition and fixed readings (docs/records.md)."""
    d = json.loads(finished_then.to_json())
    v4 = dict(d, version=4, config=_as_written_then(d["config"]))
    g = Game.from_json(json.dumps(v4))
    assert np.array_equal(g.state, finished_then.state)
    assert g.config.ruleset == "estimates-2026-11"
    assert (g.config.interp_swap_bonuses, g.config.interp_solo_imports) == ("first-edition", "fixed")
    assert (g.config.interp_buchanan, g.config.interp_cellar, g.config.interp_import_rarity) \
        == ("any-second", "left-pays", "capped")
    # the named ruleset that became the default of version 5 is read as that default
    setup = upgrade_setup(dict(v4, config=dict(v4["config"], ruleset="sourced-2026-11")))
    assert setup["config"]["ruleset"] == "market-estimate-2026-11"
    # a record of today's version without the readings plays today's defaults
    assert upgrade_setup(dict(d, version=RECORD_VERSION,
                              config=_as_written_then(d["config"])))["config"] \
        == _as_written_then(d["config"])
    with pytest.raises(RecordError, match="another ruleset"):
        Game.from_json(json.dumps(dict(v4, version=5)))


#: the rules a version-5 record played when it named no ruleset and none of the readings
#: that #76 made follow the text
THEN_V5 = RULES_2026_11_26


@pytest.fixture(scope="module")
def finished_v5():
    """A game played under RULES_2026_11_26 and its record as version 5 wrote it: no ruleset
    (the default held the old market then), no switch of #76."""
    g = Game(GameConfig(num_players=2, seed=5, clans=("buchanan", "mackenzie"), **THEN_V5))
    rng = np.random.default_rng(5)
    while not g.is_terminal:
        g.step(int(rng.choice(g.legal_actions())))
    d = json.loads(g.to_json())
    config = {k: v for k, v in d["config"].items() if k not in THEN_V5} | {"ruleset": None}
    return g, dict(d, version=5, config=config)


def test_version_5_records_replay_on_the_old_market_and_the_old_readings(finished_v5):
    g, v5 = finished_v5
    again = Game.from_json(json.dumps(v5))
    assert np.array_equal(again.state, g.state) and again.config == g.config
    assert again.config.ruleset == "market-estimate-2026-11"
    # the same record read as today's version plays today's default and diverges
    with pytest.raises(RecordError):
        Game.from_json(json.dumps(dict(v5, version=RECORD_VERSION)))


def test_version_5_records_naming_a_ruleset_path_keep_it_with_the_old_readings(finished_v5):
    _, v5 = finished_v5
    path = "my_rules/"
    setup = upgrade_setup(dict(v5, config=dict(v5["config"], ruleset=path)))
    assert setup["config"]["ruleset"] == path
    assert {k: setup["config"][k] for k in READINGS_2026_11_26} == READINGS_2026_11_26
    # a version-5 config naming a reading keeps it
    named = upgrade_setup(dict(v5, config=dict(v5["config"], interp_cellar="aged")))
    assert named["config"]["interp_cellar"] == "aged"


@pytest.mark.parametrize("text,match", [
    ("not json", "JSON"), ("[1, 2]", "JSON object"), ('{"version": 9}', "version 9"),
    ('{"version": 2, "actions": []}', "needs 'config'"),
    ('{"version": 2, "config": {}, "actions": [1.5]}', "integer action ids"),
    ('{"version": 2, "config": {}, "actions": [], "agents": "bob"}', "'agents'"),
    ('{"version": 2, "config": {}, "actions": [1], "checksum": {"algorithm": "md5"}}',
     "'checksum'"),
    ('{"version": 2, "config": {"num_players": 9}, "map": ["A2", "B2", "C2", "D2"], '
     '"actions": []}', "setup is invalid"),
    ('{"version": 2, "config": {}, "actions": []}', "this one has none"),
    ('{"version": 2, "config": {}, "map": ["A2", "B2", "C2", "D2"], "actions": []}',
     "map does not match"),
])
def test_bad_records_are_record_errors(text, match):
    with pytest.raises(RecordError, match=match):
        Game.from_json(text)


def test_read_record_and_record_start_for_tools(finished):
    text = finished.to_json(agents=["a", "b"])
    d = read_record(text)
    start = Game.record_start(d)
    assert start.history == [] and start.config == finished.config
    start.apply_sequence(d["actions"])
    assert np.array_equal(start.state, finished.state)
    with pytest.raises(ValueError, match="one agent per player"):
        finished.to_json(agents=["only one"])


def test_scenario_records_replay_and_verify():
    d = base_scenario(players=[{"money": 30}, {"money": 30}])
    g = Game.from_scenario(d)
    for _ in range(6):
        g.step(int(g.legal_actions()[-1]))
    rec = json.loads(g.to_json())
    assert rec["scenario"]["players"][0]["money"] == 30
    assert np.array_equal(Game.from_json(rec).state, g.state)


def test_an_edited_legal_action_diverges_at_its_step(finished):
    d = json.loads(finished.to_json())
    g = Game(num_players=2, seed=finished.config.seed)
    k = 0
    while len(g.legal_actions()) < 2:       # the first step with a choice
        g.step(d["actions"][k])
        k += 1
    d["actions"][k] = next(int(a) for a in g.legal_actions() if a != d["actions"][k])
    with pytest.raises(RecordError, match=f"at step {k} "):
        Game.from_json(d)


def test_a_score_mismatch_names_plain_ints(finished):
    """The message said ``[np.int64(33), ...]`` (numpy 2 reprs); it shows the numbers."""
    d = json.loads(finished.to_json())
    real = [int(x) for x in finished.scores()]
    d["scores"] = [real[0] + 1, real[1]]
    with pytest.raises(RecordError) as err:
        Game.from_json(d)
    assert str(err.value) == (f"the replay's scores {real} differ from the record's "
                              f"{d['scores']}")
    assert "np." not in str(err.value)


def _v2_records():
    """Version-2 records (two with Automa seats, one from a scenario) written by the engine
    whose state row still ended with the Automa event log."""
    with open(Path(__file__).parents[1] / "fixtures" / "records_v2.json") as f:
        return json.load(f)


@pytest.mark.parametrize("k", range(3))
def test_version_2_records_still_verify(k):
    d = _v2_records()[k]
    assert d["version"] == 2 and d["checksum"]["steps"]
    g = Game.from_json(d)                       # every step digest and the final one match
    assert g.history == d["actions"] and RECORD_VERSION > 2
    assert json.loads(g.to_json())["version"] == RECORD_VERSION
    d["checksum"]["steps"][-1] = "0" * STEP_DIGEST_CHARS
    with pytest.raises(RecordError, match=f"at step {len(d['actions']) - 1} "):
        Game.from_json(d)


# ------------------------------------------------------------ hostile record files
def test_load_reads_a_record_file(tmp_path, finished):
    path = tmp_path / "g.json"
    path.write_text(finished.to_json())
    d = load(path)
    assert d["actions"] == finished.history
    assert np.array_equal(Game.from_json(d).state, finished.state)


@pytest.mark.parametrize("content, message", [
    (b'{"version": 3, "note": "caf\xe9"}', "not UTF-8 text: byte 0xe9 at offset 27"),
    (b"[" * 100_000 + b"]" * 100_000, "JSON nested deeper than 32 levels"),
    (b'{"version": 3, "config": {"extra": ' + b"[" * 40 + b"]" * 40 + b"}}",
     "JSON nested deeper than 32 levels"),
    (b'{"version": 3, "config": {}, "actions": [' + b"9" * 5000 + b"]}", "invalid JSON number"),
    (b"{", "malformed JSON at line 1, column 2"),
])
def test_bad_record_file_is_one_record_error(tmp_path, content, message):
    path = tmp_path / "g.json"
    path.write_bytes(content)
    with pytest.raises(RecordError) as ex:
        load(path)
    assert str(ex.value).startswith(f"{path}: ") and message in str(ex.value)
    with pytest.raises(RecordError, match=message):
        read_record(content)


def test_record_file_that_is_a_link_loop_or_missing(tmp_path):
    os.symlink("g.json", tmp_path / "g.json")
    with pytest.raises(RecordError, match=r"g.json: cannot read the game record: symbolic link "
                                          r"loop"):
        load(tmp_path / "g.json")
    with pytest.raises(RecordError, match=r"none.json: cannot read the game record: missing"):
        load(tmp_path / "none.json")


def test_deep_record_dict_is_refused():
    deep: list = []
    for _ in range(40):
        deep = [deep]
    with pytest.raises(RecordError, match="nested deeper"):
        read_record({"version": 3, "config": {}, "actions": [], "agents": deep})


@pytest.mark.parametrize("part", ["config", "scenario"])
def test_records_may_be_refused_a_ruleset_path(tmp_path, finished, part):
    d = json.loads(finished.to_json())
    if part == "scenario":
        d["scenario"] = dict(base_scenario(), ruleset="/etc/rules")
        del d["config"]
    else:
        d["config"]["ruleset"] = "/etc/rules"
    assert read_record(json.dumps(d))[part]["ruleset"] == "/etc/rules"     # allowed by default
    with pytest.raises(RecordError, match=rf"records uploaded here may not name a ruleset path "
                                          rf"\({part}.ruleset = '/etc/rules'\); bundled "
                                          rf"rulesets: only the default"):
        read_record(json.dumps(d), allow_ruleset_paths=False)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(d))
    with pytest.raises(RecordError, match="may not name a ruleset path"):
        load(path, allow_ruleset_paths=False)


def test_bundled_ruleset_records_pass_when_paths_are_refused(finished):
    d = read_record(finished.to_json(), allow_ruleset_paths=False)
    assert d["config"]["ruleset"] is None


def test_a_record_without_its_map_is_refused_naming_it(finished):
    """A record names the map it was played on; without it the start is not checked, so it
    is refused (docs/records.md) rather than read with a map drawn from its seed."""
    d = json.loads(finished.to_json())
    del d["map"]
    for read in (read_record, Game.from_json, Game.record_start):
        with pytest.raises(RecordError, match=r"names the map it was played on \('map'"):
            read(d)
