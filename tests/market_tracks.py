"""The default market's printed tracks (R-3.1, source PHP), which repeat prices on consecutive
steps, for the market tests of the rules, the observation and the agents: markers are read and
set as steps of their track (0 = the cheapest step)."""
from caledonia_env.data import GOODS, load_ruleset
from caledonia_env.engine import layout as L
from caledonia_env.engine.market import market_price

MARKET = load_ruleset().market
WOOL, MILK, WHISKY = (GOODS.index(g) for g in ("wool", "milk", "whisky"))
#: wool's step prices, cheapest first: 3, 3, 4, 4, 5, 5, 6, 6, 7, 8
WOOL_TRACK = [int(x) for x in MARKET.tracks[WOOL]]


def track(g) -> list[int]:
    return [int(x) for x in MARKET.tracks[g]]


def marker(s, T, g=WOOL) -> int:
    """Good g's marker as a step of its track."""
    return int(s[L.S_PRICE_STEP + g] - T[L.T_STEP_LO + g])


def put_marker(s, T, k, g=WOOL) -> None:
    s[L.S_PRICE_STEP + g] = T[L.T_STEP_LO + g] + k


def price(game, g) -> int:
    """Good g's market price in ``game``."""
    return int(market_price(game.state, game.tables, g))


def price_after(g, step, moved) -> int:
    """The price of good g once its marker on ``step`` moves ``moved`` steps, clamped."""
    t = track(g)
    return t[min(max(step + moved, 0), len(t) - 1)]
