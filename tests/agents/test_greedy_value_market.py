"""The evaluation reads market prices, not the markers' step numbers (R-3.1: the default
printed tracks repeat prices): equal prices give equal values."""
from conftest import base_scenario
from market_tracks import WOOL, WOOL_TRACK, put_marker

from caledonia_env import Game
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS, evaluate
from caledonia_env.data import load_ruleset


def test_missing_contract_goods_cost_the_marker_price():
    rs = load_ruleset()
    col = list(rs.contracts.columns).index("need_wool")
    wool_only = [int(c) for c, row in zip(rs.contracts.ids, rs.contracts.table)
                 if row[col] > 0 and row[col] == row[:6].sum()]
    d = base_scenario()
    d["players"][0] = {"money": 10, "contracts": [wool_only[0]]}
    g = Game.from_scenario(d)
    values = []
    for k in range(len(WOOL_TRACK)):
        s = g.state.copy()
        put_marker(s, g.tables, k)
        values.append(evaluate(s, g.tables, 0, DEFAULT_WEIGHTS))
    by_price = {}
    for price, v in zip(WOOL_TRACK, values):
        by_price.setdefault(price, set()).add(v)
    assert all(len(vs) == 1 for vs in by_price.values()), by_price
    assert values[1] > values[2]                  # £3 -> £4: the missing wool costs more
