"""A ruleset whose wool track repeats prices, as the printed tracks do, for the
market tests of the rules, the observation and the agents."""
import json

from caledonia_env.engine import layout as L

WOOL = 0
#: wool's step prices, cheapest first; the circled start is the second £4 (step 2)
WOOL_TRACK = [3, 4, 4, 5, 5, 6, 6, 7]
WOOL_START = 2
#: the solo 'average' bracket, steps 3..5 (£5, £5, £6): step 6 (also £6) is high
WOOL_AVERAGE = [3, 5]


def repeated_ruleset(tmp_path) -> str:
    """The path of an override file giving wool the repeated-price track."""
    path = tmp_path / "repeated_wool.json"
    path.write_text(json.dumps({"market": {"wool": {
        "track": WOOL_TRACK, "start_step_1_2": WOOL_START, "start_step_3_4": WOOL_START,
        "solo_average_steps": WOOL_AVERAGE}}}))
    return str(path)


def marker(s, T, g=WOOL) -> int:
    """Good g's marker as a step of its track (0 = cheapest)."""
    return int(s[L.S_PRICE_STEP + g] - T[L.T_STEP_LO + g])


def put_marker(s, T, k, g=WOOL) -> None:
    s[L.S_PRICE_STEP + g] = T[L.T_STEP_LO + g] + k
