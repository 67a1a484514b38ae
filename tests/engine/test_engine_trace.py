"""The engine plays 320 random games from fixed seeds exactly as the reference engine did
(tests/engine/engine_trace.py: a hash of every state, mask, action and Automa event), and
the rules of 2026-11 (the named ruleset estimates-2026-11 with the first-edition P7 swap and
fixed solo imports) still play exactly as the default of that time did."""
import json
import os

import pytest

from engine_trace import CASES, HASHES, trace_hashes

from caledonia_env.config import RULES_2026_11

with open(HASHES) as _f:
    REFERENCE = json.load(_f)
#: hashes of three cases written by the engine of 2026-11-25 on its default rules
with open(os.path.join(os.path.dirname(HASHES), "engine_trace_hashes_2026_11.json")) as _f:
    REFERENCE_2026_11 = json.load(_f)


@pytest.mark.parametrize("name,config,n_games", CASES, ids=[c[0] for c in CASES])
def test_random_games_match_the_reference_trace(name, config, n_games):
    got = trace_hashes(config, n_games)
    want = REFERENCE[name]
    bad = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
    assert len(got) == len(want) and not bad, \
        f"{name}: games {bad[:10]} differ from the reference (first: {got[bad[0]] if bad else ''} " \
        f"vs {want[bad[0]] if bad else ''})"


@pytest.mark.parametrize("name", sorted(REFERENCE_2026_11))
def test_the_rules_of_2026_11_replay_the_traces_of_that_default(name):
    config, n_games = next((c, n) for case, c, n in CASES if case == name)
    assert trace_hashes({**config, **RULES_2026_11}, n_games) == REFERENCE_2026_11[name]
