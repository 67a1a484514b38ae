"""Fuzzed scenario dicts (mutations of valid positions): each one is rejected with a
ValueError or gives a game whose random playout finishes with a legal action at every
decision and no negative money or goods (R-2 flow, R-3 costs, R-7 end)."""
import copy

import numpy as np
from conftest import base_scenario
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from caledonia_env import Game
from caledonia_env.engine import layout as L
from caledonia_env.scenario import PLAYER_KEYS, TOP_KEYS

MAX_STEPS = 4000
JUNK = st.one_of(
    st.integers(-3, 70), st.sampled_from([2 ** 31, -2 ** 31, 10 ** 12]),
    st.floats(-5, 70, allow_nan=False), st.text(max_size=5), st.none(), st.booleans(),
    st.sampled_from(["A1-05", "sheep", "miner", "T3", "P2", "S4", "stewart", "macdonald", "wool",
                     "main action", "production", "actions"]),
    st.lists(st.integers(-2, 60), max_size=8),
    st.dictionaries(st.sampled_from(["wool", "A", "buy", "x", "deck_head", "tobacco"]),
                    st.integers(-3, 9), max_size=3),
)


def _start(n, seed, steps, clans=None):
    """A valid scenario: a hand-written one, or a played position written back."""
    if steps < 0 and n > 1:
        return base_scenario(n, players=[{"money": 15, "goods": {"wool": 1}} for _ in range(n)])
    g = Game(num_players=n, seed=seed, solo=n == 1, clans=clans)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if g.is_terminal:
            break
        g.step(int(rng.choice(g.legal_actions())))
    return g.to_scenario()


SMALL = st.integers(-2, 12)


def _int_paths(obj, path=()):
    """Paths to every int inside a scenario (for small nudges deep in the dict)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _int_paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _int_paths(v, path + (i,))
    elif type(obj) is int:
        yield path


@st.composite
def mutated_scenarios(draw):
    d = _start(draw(st.sampled_from([1, 2, 3, 4])), draw(st.integers(0, 50)),
               draw(st.integers(-1, 90)), draw(st.sampled_from([None, "draft"])))
    for _ in range(draw(st.integers(1, 2))):
        paths = list(_int_paths(d))
        if paths and draw(st.booleans()):          # nudge any int: pending, goods, prices...
            *head, last = draw(st.sampled_from(paths))
            target = d
            for k in head:
                target = target[k]
            target[last] += draw(st.sampled_from([-2, -1, 1, 2, 3]))
            continue
        players = d.get("players")
        target, keys = d, TOP_KEYS
        if isinstance(players, list) and players and draw(st.booleans()):
            target, keys = players[draw(st.integers(0, len(players) - 1))], PLAYER_KEYS
            if not isinstance(target, dict):
                continue
        present = [k for k in keys if k in target]
        key = draw(st.sampled_from(present if present and draw(st.integers(0, 4)) else keys))
        old = target.get(key)
        how = draw(st.sampled_from(["junk", "small", "extra item", "duplicate item", "inner",
                                    "inner", "nudge", "nudge"]))
        if how == "extra item" and isinstance(old, list):
            extra = copy.deepcopy(old[-1]) if old and draw(st.booleans()) else draw(SMALL)
            target[key] = old + [extra]
        elif how == "duplicate item" and isinstance(old, list) and old:
            target[key] = old + [copy.deepcopy(old[0])]
        elif how == "inner" and isinstance(old, dict) and old:
            inner = draw(st.sampled_from(sorted(map(str, old))))
            value = old.get(inner)
            if type(value) is int and draw(st.booleans()):
                value += draw(st.sampled_from([-3, -1, 1, 2, 5]))
            else:
                value = draw(st.one_of(SMALL, JUNK))
            target[key] = dict(old, **{inner: value})
        elif how == "nudge" and type(old) is int:
            target[key] = old + draw(st.sampled_from([-100, -2, -1, 1, 2, 7, 100]))
        else:
            target[key] = draw(SMALL if how != "junk" else JUNK)
    return d


def _playout(game, seed):
    rng = np.random.default_rng(seed)
    n = game.num_players
    for _ in range(MAX_STEPS):
        s = game.state
        for p in range(n):
            poff = L.S_PLAYERS + p * L.P_SIZE
            assert s[poff + L.P_MONEY] >= 0 and (s[poff + L.P_GOODS:poff + L.P_GOODS + 6] >= 0).all()
        if game.is_terminal:
            game.scores()
            return
        legal = game.legal_actions()
        assert len(legal), f"no legal action in context {game.context!r}"
        game.step(int(rng.choice(legal)))
    raise AssertionError(f"the game did not finish in {MAX_STEPS} steps")


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(d=mutated_scenarios(), seed=st.integers(0, 2 ** 16))
def test_fuzzed_scenarios_are_rejected_or_play_to_the_end(d, seed):
    try:
        game = Game.from_scenario(d)
    except ValueError:
        return
    _playout(game, seed)
