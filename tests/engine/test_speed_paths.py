"""The fast paths (engine/api.py, Game.clone, the AEC wrapper) give the plain paths' results."""
import dataclasses
import random

import numpy as np
import pytest
from numba import njit
from numba.core import types
from numba.core.errors import TypingError

import caledonia_env
from caledonia_env import Game, GameConfig
from caledonia_env.agents import netroll, rollouts
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.board import pofs, reach_bits, reach_mask, reach_of
from caledonia_env.engine.constants import (EMPTY, FISHERMAN, MAX_NODES, MAX_PLAYERS, NEUTRAL,
                                           OCC_STRIDE)
from caledonia_env.engine.compile.jit import njit as plain_njit
from caledonia_env.engine.layout import (P_MONEY, P_SHIP, RB_LEN, S_OCC, S_PORTS,
                                         S_PRICE_SHIFT_GOOD, T_PORT_NODE, copy_state)
from caledonia_env.engine.mask import legal_mask
from caledonia_env.engine.playout import random_pick
from caledonia_env.engine.compile.scratch import scratch
from caledonia_env.engine.ports import (effect_applicable, port_reachable, ports_open,
                                        reachable_ports, usable_ports)
from caledonia_env.engine.step import apply_action
from caledonia_env.engine.tables.build import build_tables
from caledonia_env.envs import vector_kernels as vk
from caledonia_env.game import IllegalActionError, action_id


def plain_legal(game):
    mask = np.zeros(N_ACTIONS, np.int8)
    legal_mask(game.state, game.tables, mask)
    return mask


@pytest.mark.parametrize("players", [2, 3, 4])
def test_legal_actions_and_step_match_the_engine(players):
    """Along a whole random game: legal_actions() == flatnonzero(legal_mask), legal_mask()
    agrees, and Game.step leaves the same state as engine apply_action on a copy."""
    game = Game(GameConfig(num_players=players, seed=11 + players))
    shadow = game.state.copy()
    rng = random.Random(players)
    while not game.is_terminal:
        mask = plain_legal(game)
        ids = game.legal_actions()
        assert ids.dtype == np.int64
        np.testing.assert_array_equal(ids, np.flatnonzero(mask))
        np.testing.assert_array_equal(game.legal_mask(), mask.astype(bool))
        np.testing.assert_array_equal(game.legal_mask_int8(), mask)
        a = rng.choice(list(ids))
        game.step(a)
        apply_action(shadow, game.tables, a, game.static.automa_switch)
        np.testing.assert_array_equal(game.state, shadow)
    assert len(game.legal_actions()) == 0
    with pytest.raises(IllegalActionError, match="game is over"):
        game.step(0)


@pytest.mark.parametrize("players", [2, 4])
def test_step_mask_returns_the_next_mask_from_the_same_call(players):
    """Game.step_mask(a) == step(a) then legal_mask_int8(): a fresh int8 array each time
    (writing into it changes nothing), None once the game is over; a state written by hand
    after it still gets its own mask."""
    game = Game(GameConfig(num_players=players, seed=3 + players))
    twin = game.clone()
    rng = random.Random(players)
    while True:
        a = rng.choice(list(game.legal_actions()))
        mask = game.step_mask(a)
        twin.step(a)
        if twin.is_terminal:
            assert mask is None and game.is_terminal
            break
        assert mask.dtype == np.int8 and mask.shape == (N_ACTIONS,)
        np.testing.assert_array_equal(mask, plain_legal(twin))
        mask[:] = 1                                   # the caller's copy
        np.testing.assert_array_equal(game.legal_mask_int8(), plain_legal(twin))
    other = Game(GameConfig(num_players=players, seed=40))
    other.step_mask(int(other.legal_actions()[0]))
    other.state[:] = Game(GameConfig(num_players=players, seed=41)).state
    np.testing.assert_array_equal(other.legal_mask_int8(), plain_legal(other))


def test_mask_is_recomputed_after_the_state_is_written_by_hand():
    """The cached mask belongs to one state: writing game.state by hand must not reuse it."""
    a = Game(GameConfig(num_players=4, seed=5))
    b = a.clone()
    rng = random.Random(0)
    for _ in range(30):
        b.step(rng.choice(list(b.legal_actions())))
    old, new = set(a.legal_actions()), set(b.legal_actions())
    only_new = sorted(new - old)
    only_old = sorted(old - new)
    assert only_new and only_old
    a.state[:] = b.state                        # same position as b, cache still holds a's
    with pytest.raises(IllegalActionError):
        a.step(only_old[0])
    before = a.state.copy()
    np.testing.assert_array_equal(a.state, before)   # a rejected step changes nothing
    a.step(only_new[0])
    b.step(only_new[0])
    np.testing.assert_array_equal(a.state, b.state)


def test_illegal_and_out_of_range_ids_keep_their_errors():
    game = Game(GameConfig(num_players=2, seed=1))
    illegal = int(np.flatnonzero(plain_legal(game) == 0)[0])
    before = game.state.copy()
    with pytest.raises(IllegalActionError, match="is not legal"):
        game.step(illegal)
    with pytest.raises(IllegalActionError, match="outside"):
        game.step(N_ACTIONS)
    with pytest.raises(IllegalActionError, match="outside"):
        game.step(np.int64(-1))
    with pytest.raises(TypeError):
        game.step(True)
    np.testing.assert_array_equal(game.state, before)
    assert game.history == []
    for x in (3, np.int64(3), np.int32(3), np.array(3)):
        assert action_id(x) == 3 and type(action_id(x)) is int


def test_clone_is_independent_and_keeps_the_scenario():
    game = Game(GameConfig(num_players=3, seed=2))
    rng = random.Random(1)
    for _ in range(20):
        game.step(rng.choice(list(game.legal_actions())))
    twin = game.clone()
    np.testing.assert_array_equal(twin.legal_actions(), game.legal_actions())
    state, history = game.state.copy(), list(game.history)
    twin.step(int(twin.legal_actions()[0]))
    np.testing.assert_array_equal(game.state, state)
    assert game.history == history and len(twin.history) == len(history) + 1
    start = Game.from_scenario(game.to_scenario())
    assert start.clone().scenario == start.scenario is not None


def test_history_chain_is_shared_by_clones_and_reads_as_a_list():
    """clone() shares the immutable history chain: the parent, the clone and a clone of
    the clone each keep their own list as they go on; assigning a history validates it."""
    game = Game(GameConfig(num_players=2, seed=5))
    rng = random.Random(2)
    played = []
    for _ in range(30):
        a = int(rng.choice(list(game.legal_actions())))
        game.step(a)
        played.append(a)
    twin = game.clone()
    a, b = (int(x) for x in twin.legal_actions()[:2])
    twin.step(a)
    grandchild = twin.clone()
    game.step(b)
    grandchild.step(int(grandchild.legal_actions()[0]))
    assert game.history == played + [b] and game.move_number == 31
    assert twin.history == played + [a] and twin.move_number == 31
    assert grandchild.history[:31] == played + [a] and grandchild.move_number == 32
    h = game.history
    h.append(0)                         # a copy: the game's record is unchanged
    assert game.move_number == 31 and len(game.history) == 31
    replay = Game(GameConfig(num_players=2, seed=5))
    replay.apply_sequence(game.history)
    np.testing.assert_array_equal(replay.state, game.state)
    replay.history = [np.int64(4), 7]
    assert replay.history == [4, 7] and replay.move_number == 2
    with pytest.raises(IllegalActionError, match="outside"):
        replay.history = [N_ACTIONS]
    with pytest.raises(TypeError):
        replay.history = [1.5]
    assert replay.history == [4, 7]


def test_aec_fast_wrapper_matches_the_engine_and_keeps_the_order_checks():
    env = caledonia_env.env(num_players=3)
    with pytest.raises(AttributeError, match="before reset"):
        env.last()
    with pytest.raises(AttributeError, match="before reset"):
        env.agent_selection
    assert str(env) == str(env.unwrapped)
    env.reset(seed=4)
    rng = random.Random(2)
    game = env.unwrapped.game
    for agent in env.agent_iter():
        obs, _r, term, trunc, _info = env.last()
        if term or trunc:
            env.step(None)
            continue
        assert obs["action_mask"].dtype == np.int8
        np.testing.assert_array_equal(obs["action_mask"], plain_legal(game))
        other = env.observe(env.possible_agents[(env.possible_agents.index(agent) + 1) % 3])
        assert not other["action_mask"].any()
        env.step(int(rng.choice(list(np.flatnonzero(obs["action_mask"])))))
    assert game.is_terminal



@pytest.mark.parametrize("config", [dict(num_players=4, seed=3), dict(num_players=2, seed=6, clans=None,
                                                                      smaller_map=True)])
def test_reach_bits_match_reach_mask(config):
    """board.reach_bits (static bitsets, used by the mask) = board.reach_mask (reach lists) for
    every player along a random game; its empty-node and own-node bitsets = the empty nodes
    and the player's units (R-4)."""
    game = Game(GameConfig(**config))
    rng = random.Random(1)
    want = np.zeros(MAX_NODES, np.int8)
    rb = np.zeros(L.RB_LEN, np.uint64)
    checked = 0
    while not game.is_terminal:
        for p in range(game.config.num_players):
            reach_mask(game.state, game.tables, p, want)
            reach_bits(game.state, game.tables, p, rb)
            bits = np.unpackbits(rb.view(np.uint8), bitorder="little")
            half = L.RB_WORDS * 64
            assert (bits[:MAX_NODES] == want).all()
            empty = game.state[L.S_OCC:L.S_OCC + game.board.n_nodes] == EMPTY
            assert (bits[half:half + game.board.n_nodes] == empty).all()
            assert not bits[half + game.board.n_nodes:2 * half].any()
            occ = game.state[L.S_OCC:L.S_OCC + game.board.n_nodes]
            own = (occ >= 0) & (occ != NEUTRAL) & (occ // OCC_STRIDE == p)
            assert (bits[2 * half:2 * half + game.board.n_nodes] == own).all()
            assert not bits[2 * half + game.board.n_nodes:].any()
            checked += int(want.sum())
        game.step(rng.choice(list(game.legal_actions())))
    assert checked > 0


@njit   # no cache: numba's cache would not see a change to random_pick
def _seeded_pick(mask, seed):
    np.random.seed(seed)
    return random_pick(mask)


@njit
def _seeded_draw(k, seed):
    np.random.seed(seed)
    return np.random.randint(k)


def test_random_pick_is_the_rth_set_id():
    """playout.random_pick (block and word skipping) takes the r-th set id of the mask, r
    drawn from numba's stream, for sparse, dense, tail-only and empty masks."""
    rng = np.random.default_rng(0)
    for density in (0.0, 0.001, 0.01, 0.1, 0.5, 1.0):
        for seed in range(40):
            mask = (rng.random(N_ACTIONS) < density).astype(np.int8)
            if seed == 0 and density > 0:
                mask[:] = 0
                mask[N_ACTIONS - 1 - seed % 3] = 1      # the bytes after the last word
            ids = np.flatnonzero(mask)
            want = -1 if len(ids) == 0 else ids[_seeded_draw(len(ids), seed)]
            assert _seeded_pick(mask, seed) == want


from caledonia_env.engine.actions import A_PLACE  # noqa: E402
from caledonia_env.engine.board import placeable  # noqa: E402
from caledonia_env.engine.clans import board_avail, fisher_spot  # noqa: E402
from caledonia_env.engine.constants import N_UNITS  # noqa: E402
from caledonia_env.engine.layout import T_N_NODES, T_UNIT_TERRAIN  # noqa: E402
from caledonia_env.engine.legality import place_scan, unit_cost  # noqa: E402


@njit
def can_place(s, T, p, u, node, reach, free_land):
    """The per-node reference test of an expansion with unit u onto node (R-3.3); ``reach``
    is p's ``board.reach_mask``."""
    poff = pofs(p)
    if board_avail(s, T, poff, u) <= 0:
        return False
    if s[S_OCC + node] != EMPTY or reach[node] == 0:
        return False
    if u == FISHERMAN:
        if not fisher_spot(s, T, p, node, -1):
            return False
    elif not placeable(T, node, T[T_UNIT_TERRAIN + u]):
        return False
    return s[poff + P_MONEY] >= unit_cost(s, T, p, u, node, free_land)


@njit
def _scan_vs_reference(s, T, p, free_land):
    """place_scan's marks against can_place (the per-node reference test, R-3.3) for every
    unit and node; returns the number of disagreements and of legal placements."""
    mask = np.zeros(N_ACTIONS, np.int8)
    found = place_scan(s, T, p, free_land, mask, False, reach_of(s, T, p))
    first = place_scan(s, T, p, free_land, mask, True, reach_of(s, T, p))
    reach = np.zeros(MAX_NODES, np.int8)
    reach_mask(s, T, p, reach)
    bad = 0
    legal = 0
    for u in range(N_UNITS):
        for node in range(T[T_N_NODES]):
            want = can_place(s, T, p, u, node, reach, free_land)
            legal += want
            if want != (mask[A_PLACE + u * MAX_NODES + node] == 1):
                bad += 1
    if found != legal or first != min(legal, 1):
        bad += 1
    return bad, legal


@pytest.mark.parametrize("clans", [("robertson", "macdonald", "stewart", "buchanan"),
                                   ("campbell", "cunningham", "fergusson", "mackenzie")])
def test_place_scan_bitsets_match_can_place(clans):
    """R-3.3 / R-8.7: the expansion scan (reach & empty & terrain & affordable-land bitsets,
    Robertson's delta discount, free land of a bonus hex) marks exactly the placements the
    per-node reference check ``can_place`` above allows, for every player along random
    games, with money cut at random so that the land cost decides."""
    rng = random.Random(7)
    legal = 0
    for seed in range(2):
        game = Game(GameConfig(num_players=4, seed=seed, clans=clans))
        while not game.is_terminal:
            for p in range(4):
                s = game.state.copy()
                if rng.random() < 0.5:
                    s[pofs(p) + P_MONEY] = rng.randrange(0, 12)
                for free in (False, True):
                    bad, n = _scan_vs_reference(s, game.tables, p, free)
                    assert bad == 0
                    legal += n
            game.step(rng.choice(list(game.legal_actions())))
    assert legal > 1000


def test_land_cost_tables_and_their_capacity():
    """T_LAND_LE[c] holds the nodes of land cost <= c; a map beyond the engine's land-cost
    capacity is refused with a clear error instead of a wrong affordability test."""
    game = Game(GameConfig(num_players=3, seed=4))
    T, board = game.tables, game.board
    nn = board.n_nodes
    assert T[L.T_LAND_MAX] == board.land_cost[:nn].max()
    words = T[L.T_LAND_LE:L.T_LAND_LE + (L.MAX_LAND_COST + 1) * 2 * L.RB_WORDS]
    bits = np.unpackbits(words.view(np.uint8), bitorder="little").reshape(L.MAX_LAND_COST + 1, -1)
    for c in range(L.MAX_LAND_COST + 1):
        assert (bits[c, :nn] == (board.land_cost[:nn] <= c)).all() and not bits[c, nn:].any()
    cost = board.land_cost.copy()
    cost[0] = L.MAX_LAND_COST + 1
    with pytest.raises(ValueError, match="land costs up to"):
        build_tables(game.ruleset, dataclasses.replace(board, land_cost=cost), 3)


@pytest.mark.parametrize("config", [dict(num_players=4, seed=8, clans=("macdonald", "robertson",
                                                                       "stewart", "buchanan")),
                                    dict(num_players=2, seed=11, smaller_map=True)])
def test_reachable_ports_match_port_reachable(config):
    """R-5 / R-8.5: ``ports.reachable_ports`` (own nodes against the per-corner reacher
    bitsets, used after every main action) = ``ports.port_reachable`` with the full reach
    bitset, for every player, corner set and shipping level along random games."""
    game = Game(GameConfig(**config))
    rng = random.Random(3)
    hits = 0
    while not game.is_terminal:
        for p in range(game.config.num_players):
            s = game.state.copy()
            if rng.random() < 0.5:
                s[pofs(p) + P_SHIP] = rng.randrange(0, 6)
            open_ = ports_open(s, p)
            want = 0
            for c in range(4):
                if port_reachable(s, game.tables, p, c, reach_of(s, game.tables, p)):
                    want |= 1 << c
            assert reachable_ports(s, game.tables, p, open_) == want
            assert reachable_ports(s, game.tables, p, 0) == 0
            # the mask's usable ports: the reached corners whose effect applies now
            for before_main in (True, False):
                usable = 0
                for c in range(4):
                    if want & (1 << c) and effect_applicable(s, game.tables, p, s[S_PORTS + c],
                                                             before_main):
                        usable |= 1 << c
                if s[S_PRICE_SHIFT_GOOD] >= 0:
                    usable = 0
                reach = reach_of(s, game.tables, p)
                assert usable_ports(s, game.tables, p, before_main, reach) == usable
            hits += bin(want).count("1")
        game.step(rng.choice(list(game.legal_actions())))
    assert hits > 20
    # a fisherman alone on a port node: that port is usable, no other is in reach
    for c in range(4):
        s = game.state.copy()
        occ = s[S_OCC:S_OCC + game.board.n_nodes]
        occ[(occ >= 0) & (occ // OCC_STRIDE == 0)] = EMPTY
        s[S_OCC + game.tables[T_PORT_NODE + c]] = FISHERMAN
        assert reachable_ports(s, game.tables, 0, 0b1111) == 1 << c


def test_project_njit_compiles_one_specialization_for_constant_arguments():
    """engine.compile.jit.njit: calls with constants from jitted code reuse one plain signature,
    where numba's own njit compiles one specialization per constant (cold-start cost)."""


    def callee(x, flag):
        return x + 1 if flag else x - 1

    def make_caller(f):
        def caller(x):
            return f(x, True) + f(x, False) + f(3, True) + f(4, False)
        return caller

    ours = plain_njit(cache=False)(callee)
    theirs = njit(callee)
    assert plain_njit(make_caller(ours))(1) == njit(make_caller(theirs))(1) == 2 + 0 + 4 + 3
    assert len(ours.signatures) == 1
    assert not any(isinstance(t, types.Literal) for t in ours.signatures[0])
    assert len(theirs.signatures) > 1                  # what the wrapper avoids
    assert plain_njit(callee)(2, True) == 3            # the bare decorator form


def test_project_njit_compiles_one_specialization_for_int32_and_int64_arguments():
    """engine.compile.jit.njit: a call from jitted code with an int32 (a state cell) or int8 (a mask
    byte) argument reuses the int64 compilation, with the same result; unsigned integers,
    floats and bools keep their own types."""
    def callee(x, y):
        return x * 3 - y

    def make_caller(f):
        def caller(s, m, u):
            return f(s[0], 1) + f(2, s[1]) + f(m[0], m[1]) + f(u, np.uint64(1)) + f(1.5, 0.5)
        return caller

    ours = plain_njit(cache=False)(callee)
    s = np.array([-7, 2**30], np.int32)
    m = np.array([-3, 5], np.int8)
    u = np.uint64(4)
    want = (-7 * 3 - 1) + (6 - 2**30) + (-9 - 5) + (12 - 1) + (4.5 - 0.5)
    assert plain_njit(make_caller(ours))(s, m, u) == njit(make_caller(njit(callee)))(s, m, u) == want
    assert sorted(map(str, ours.signatures)) == ["(float64, float64)", "(int64, int64)",
                                                 "(uint64, uint64)"]


def test_project_njit_compiles_python_calls_with_numpy_int32_for_int64():
    """engine.compile.jit.njit: a Python call with a numpy int8/int16/int32 scalar (a state cell)
    compiles and runs the int64 specialization, in any order, with the same result; unsigned
    integers, floats and bools keep their own types."""
    def callee(x, y):
        return x * 3 - y

    ours = plain_njit(cache=False)(callee)
    assert ours(np.int32(-7), 1) == -22                # the first call compiles int64
    assert ours(np.int8(2), np.int32(5)) == 1
    assert ours(2, np.int16(3)) == 3
    assert ours(np.int32(2**30), np.int64(0)) == 3 * 2**30     # int64 arithmetic
    assert [str(s) for s in ours.signatures] == ["(int64, int64)"]
    assert ours(np.uint32(4), 1) == 11 and ours(1.5, 0.5) == 4.0 and ours(True, 1) == 2
    assert sorted(map(str, ours.signatures)) == ["(bool, int64)", "(float64, float64)",
                                                 "(int64, int64)", "(uint32, int64)"]


def test_a_prange_index_converted_to_int64_shares_the_serial_compilation():
    """numba counts a ``prange`` loop in uint64: the vector env's parallel kernel passes
    ``np.int64(j)`` on, so its callees (``_one`` and the engine below it) reuse the
    compilation of the serial kernel (int64) instead of compiling again for uint64."""
    import inspect

    from numba import prange

    from caledonia_env.envs.vector_kernels import step_parallel

    def callee(i, out):
        out[i] = i * 2

    def make_kernel(f, convert):
        def kernel(out):
            for j in prange(out.shape[0]):
                f(np.int64(j) if convert else j, out)
        return kernel

    for convert, want in ((True, ["int64"]), (False, ["int64", "uint64"])):
        f = plain_njit(cache=False)(callee)
        out = np.zeros(5, np.int64)
        plain_njit(cache=False)(make_kernel(f, True))(out)      # the serial kernel's call
        plain_njit(cache=False, parallel=True)(make_kernel(f, convert))(out)
        assert out.tolist() == [0, 2, 4, 6, 8]
        assert sorted(str(sig[0]) for sig in f.signatures) == want
    assert "i = np.int64(j)" in inspect.getsource(step_parallel.py_func)


def test_no_engine_function_is_compiled_for_a_literal_argument():
    """Every numba function of the engine, env and bots goes through engine.compile.jit.njit (its
    dispatcher resolves calls with plain types), and after games with clans, the Automa and
    the greedy bot no compiled signature has a literal. The structural check does not depend
    on numba's on-disk cache: a function loaded from it brings its callees' code along, so
    with a warm cache the callees' dispatchers compile nothing and have no signatures."""
    import importlib
    import pkgutil

    from numba.core import types
    from numba.core.registry import CPUDispatcher

    from caledonia_env import agents
    game = Game(GameConfig(num_players=3, seed=2, automa={2: 3}))
    bot = agents.make("greedy", seed=0)
    while not game.is_terminal:
        game.step(bot.act(game))
    dispatchers = 0
    for pkg in ("engine", "envs", "agents"):
        base = importlib.import_module(f"caledonia_env.{pkg}")
        for info in pkgutil.walk_packages(base.__path__, f"{base.__name__}."):
            try:
                mod = importlib.import_module(info.name)
            except ImportError:                           # an optional extra not installed
                continue
            for name, obj in vars(mod).items():
                if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == mod.__name__:
                    dispatchers += 1
                    assert "get_call_template" in vars(obj), f"{mod.__name__}.{name} uses numba's njit"
                    for sig in obj.signatures:
                        assert not any(isinstance(t, types.Literal) for t in sig), (mod, name, sig)
    assert dispatchers > 100


@njit
def _scratch_reaches(states, T, players):
    """Every (state, player) reach through two stack scratch buffers of one frame."""
    out = np.zeros((len(states), 2, L.RB_LEN), np.uint64)
    for i in range(len(states)):
        a = scratch(RB_LEN, np.uint64)
        b = scratch(RB_LEN, np.uint64)
        reach_bits(states[i], T, players[i], a)
        reach_bits(states[i], T, (players[i] + 1) % 2, b)
        copy_state(out[i, 0], a)    # a slice copy compiles numba's shape-error text
        copy_state(out[i, 1], b)
    return out


def test_scratch_on_the_stack_gives_reach_of():
    """``engine.compile.scratch.scratch`` (compiled: a stack buffer of the calling frame) holds what
    ``reach_of`` returns, two of them in one frame are distinct, and plain Python gets an
    array."""
    game = Game(GameConfig(num_players=2, seed=5))
    rng = random.Random(5)
    states, players = [], []
    while not game.is_terminal:
        states.append(game.state.copy())
        players.append(len(states) % 2)
        game.step(rng.choice(list(game.legal_actions())))
    got = _scratch_reaches(np.array(states), game.tables, np.array(players))
    for i, s in enumerate(states):
        assert np.array_equal(got[i, 0], reach_of(s, game.tables, players[i]))
        assert np.array_equal(got[i, 1], reach_of(s, game.tables, (players[i] + 1) % 2))
    assert any(not np.array_equal(g[0], g[1]) for g in got)
    assert scratch(RB_LEN, np.uint64).shape == (L.RB_LEN,)
    assert scratch(RB_LEN, np.uint64).dtype == np.uint64


@njit
def _scratch_kinds(x):
    """A scratch array of each dtype the engine uses, filled and summed in one frame."""
    f = scratch(5, np.float64)
    i = scratch(MAX_PLAYERS, np.int32)
    b = scratch(3, np.bool_)
    for k in range(5):
        f[k] = x * k
    for k in range(MAX_PLAYERS):
        i[k] = k
    b[:] = True
    return f.sum() + i.sum() + b.sum()


def test_scratch_types_and_a_variable_length_is_refused():
    """``scratch`` gives float, int and bool arrays of a constant length; a length that is
    not a compile-time constant is a clear typing error."""
    assert _scratch_kinds(2.0) == 2.0 * 10 + sum(range(MAX_PLAYERS)) + 3

    @njit
    def variable(n):
        return scratch(n, np.int32).size

    with pytest.raises(TypingError, match="constant length"):
        variable(4)



#: (inlined, compiled): functions only compiled code calls, and their compiled callers
INLINED = {
    "vector kernels": ((vk._advance, vk._new_episode, vk._settle, vk._one),
                       (vk.vector_call, vk.step_parallel)),
    "rollouts": ((rollouts.after, rollouts.reached, rollouts.greedy_rollout_to,
                  rollouts._action_values, rollouts.start_rollout, rollouts.rollout_value,
                  rollouts._rollout_margins, netroll.mixed_rollout_to,
                  netroll._policy_rollout_margins),
                 (rollouts.greedy_action, rollouts.greedy_call, netroll.policy_action,
                  netroll.policy_call)),
}


@pytest.mark.parametrize("group", sorted(INLINED))
def test_helpers_only_compiled_code_calls_are_inlined(group):
    """Issue #37: the vector kernels' per-env helpers and the rollouts' steps are typed inside
    their compiled callers (numba's ``inline="always"``), not compiled as functions of their
    own, each of which would link and generate the whole engine's code below it again; what
    Python calls stays a compiled function of its own."""
    inlined, compiled = INLINED[group]
    for f in inlined:
        assert f.targetoptions.get("inline") == "always", f.py_func.__name__
    for f in compiled:
        assert f.targetoptions.get("inline", "never") == "never", f.py_func.__name__


def _without_automa(dispatcher):
    """The signatures ``dispatcher`` has compiled or loaded for games without Automa seats."""
    return [sig for sig in dispatcher.signatures if sig[-1] == types.none]


def test_the_vector_envs_uses_of_the_engine_are_one_compiled_function():
    """Issue #37: reset, step, observe, ``set_state`` and the Python opponents' apply and
    settle all run ``vector_call``: one function linking the engine for a kind of game."""
    from caledonia_env.envs.vector import CaledoniaVectorEnv
    fast = CaledoniaVectorEnv(num_envs=2, num_players=2, seed=0, parallel=False)
    slow = CaledoniaVectorEnv(num_envs=2, num_players=2, opponents="greedy", seed=0,
                              illegal_action="penalize")
    for env in (fast, slow):
        env.reset()
        for _ in range(3):
            env.step(env.sample_actions())
    fast.set_state(0, slow.game(1), 1)
    assert len(_without_automa(vk.vector_call)) == 1


def test_the_greedy_searches_uses_of_the_engine_are_one_compiled_function():
    """Issue #37: ``action_values``, ``greedy_rollout`` and ``rollout_margins`` run
    ``greedy_call``: one function linking the engine for a kind of game."""
    game = Game(GameConfig(num_players=2, seed=0))
    s, T, w = game.state, game.tables, DEFAULT_WEIGHTS
    out = np.zeros(N_ACTIONS)
    rollouts.action_values(s, T, w, np.zeros(N_ACTIONS, np.int8), np.empty_like(s), out, None)
    assert np.isfinite(out).sum() == len(game.legal_actions())
    assert rollouts.greedy_rollout(s.copy(), T, w, 100000, None) > 0
    margins = np.full(2, np.nan)
    rollouts.rollout_margins(s, T, w, 0, np.array(game.legal_actions()[:2], np.int64),
                             np.arange(1, 3, dtype=np.int64), 1, np.empty_like(s), margins, None)
    assert (margins > -1e8).all()
    assert len(_without_automa(rollouts.greedy_call)) == 1
