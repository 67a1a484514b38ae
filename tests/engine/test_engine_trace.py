"""The engine plays 300 random games from fixed seeds exactly as the reference engine did
(tests/engine/engine_trace.py: a hash of every state, mask, action and Automa event)."""
import json

import pytest

from engine_trace import CASES, HASHES, trace_hashes

with open(HASHES) as _f:
    REFERENCE = json.load(_f)


@pytest.mark.parametrize("name,config,n_games", CASES, ids=[c[0] for c in CASES])
def test_random_games_match_the_reference_trace(name, config, n_games):
    got = trace_hashes(config, n_games)
    want = REFERENCE[name]
    bad = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
    assert len(got) == len(want) and not bad, \
        f"{name}: games {bad[:10]} differ from the reference (first: {got[bad[0]] if bad else ''} " \
        f"vs {want[bad[0]] if bad else ''})"
