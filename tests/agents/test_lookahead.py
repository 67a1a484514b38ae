"""The one-step lookahead's shortcuts give exactly what the full computations give.

The greedy bot evaluates every legal action's result; ``map_memo`` / ``update_memo`` count
only the part of the map an action changed (settlements R-7, room to expand R-4), and the
policy's forward pass skips zero inputs. Each is checked against the plain computation on
the positions of whole games, 2 to 4 players with clans and with an Automa seat.
"""
import numpy as np
import pytest
from numba import njit
from numba.typed import List

from caledonia_env import Game, GameConfig
from caledonia_env.agents.greedy_value import (BASE, DEFAULT_WEIGHTS, MEMO_LEN, MEMO_ROOM,
                                             PLACED, evaluate, evaluate_known, expansion_room,
                                             lookahead_table, map_memo, update_memo)
from caledonia_env.agents.rollouts import action_values, greedy_action, seed_numba
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine.board import pofs, reach_mask
from caledonia_env.engine.constants import (EMPTY, FISHERMAN, LUMBERJACK, MAX_NODES, MAX_PLAYERS,
                                            MINER, N_UNITS, NEUTRAL, OCC_STRIDE,
                                            TERRAIN_LOCH, TERRAIN_PORT)
from caledonia_env.engine.layout import copy_state
from caledonia_env.engine.scoring import (K_BORDER, K_RICH, K_UNITS, K_WORKERS, own_units,
                                          recount_settlements, settlement_count,
                                          settlement_counts, tile_count_of, tile_glory,
                                          tile_glory_of, units_by_player)
from caledonia_env.engine.step import apply_action

CONFIGS = [dict(num_players=2, clans="draft"), dict(num_players=3, clans="draft"),
           dict(num_players=4, clans="draft"), dict(num_players=2, automa={1: 3})]


def _room(s, T, p):
    """Reachable empty land hexes of p, node by node (R-4)."""
    reach = np.zeros(MAX_NODES, np.int8)
    reach_mask(s, T, p, reach)
    return sum(1 for m in range(T[L.T_N_NODES])
               if reach[m] and s[L.S_OCC + m] == EMPTY and T[L.T_ACTIVE + m]
               and not T[L.T_TERRAIN + m] & (TERRAIN_LOCH | TERRAIN_PORT))


def _lookaheads(config, seed, every=3):
    """(state, tables, automa switch, legal actions) of every ``every``-th decision of a
    greedy game."""
    game = Game(GameConfig(seed=seed, **config))
    T, automa = game.tables, automa_switch(game.tables)
    mask = np.zeros(N_ACTIONS, np.int8)
    buf = np.empty_like(game.state)
    seed_numba(seed)
    k = 0
    while not game.is_terminal:
        if k % every == 0:
            yield game.state.copy(), T, automa, np.flatnonzero(game.legal_mask())
        game.step(int(greedy_action(game.state, T, DEFAULT_WEIGHTS, mask, buf, automa)))
        k += 1


@pytest.mark.parametrize("config", CONFIGS, ids=["2p", "3p", "4p", "automa"])
def test_R_7_R_4_the_updated_map_memo_equals_a_full_count_after_every_action(config):
    checked = moved = cached = 0
    for s, T, automa, legal in _lookaheads(config, seed=20261126):
        n = int(s[L.S_NP])
        p = int(s[L.S_PLAYER])
        table = lookahead_table(s, T, p)
        known = table[BASE]
        assert [known[q] for q in range(n)] == [settlement_count(s, T, q) for q in range(n)]
        assert known[MEMO_ROOM] == expansion_room(s, T, p) == _room(s, T, p)
        buf = np.empty_like(s)
        memo = np.empty(MEMO_LEN, np.int64)
        for a in legal:
            copy_state(buf, s)
            assert np.array_equal(buf, s)
            apply_action(buf, T, int(a), automa)
            update_memo(s, table, buf, T, p, memo)
            full = np.empty(MAX_PLAYERS, np.int64)
            settlement_counts(buf, T, full)
            assert list(memo[:n]) == list(full[:n])
            assert memo[MEMO_ROOM] == _room(buf, T, p)
            counts = np.empty(MAX_PLAYERS, np.int64)
            changed = recount_settlements(s, known, buf, T, counts)
            assert list(counts[:n]) == list(full[:n])
            same_map = (np.array_equal(buf[L.S_OCC:L.S_OCC + T[L.T_N_NODES]],
                                       s[L.S_OCC:L.S_OCC + T[L.T_N_NODES]])
                        and all(buf[pofs(q) + L.P_SHIP] == s[pofs(q) + L.P_SHIP]
                                for q in range(n)))
            assert changed == (not same_map)
            moved += changed
            checked += 1
        cached += int((table[:BASE, PLACED] > 0).sum())
    assert checked > 300 and 0 < moved < checked and cached > 0


def _map_tile_count(s, T, p, tile):
    """A map scoring tile's count node by node (R-6.4)."""
    kind = T[L.T_TILE_KIND + tile]
    count = 0
    for m in range(T[L.T_N_NODES]):
        o = s[L.S_OCC + m]
        if o < 0 or o == NEUTRAL or o // OCC_STRIDE != p:
            continue
        u = o % OCC_STRIDE
        if kind == K_UNITS:
            count += T[L.T_TILE_UNIT_GLORY + tile * N_UNITS + u]
        elif kind == K_WORKERS:
            count += u in (LUMBERJACK, MINER, FISHERMAN)
        elif kind == K_BORDER:
            count += T[L.T_BORDER + m]
        elif kind == K_RICH:
            count += T[L.T_LAND_COST + m] >= T[L.T_TILE_MIN_COST + tile]
    return count


def test_R_6_4_one_pass_over_the_map_counts_every_scoring_tile_as_node_by_node():
    kinds = set()
    own = np.empty(MAX_NODES, np.int64)
    every = np.empty((MAX_PLAYERS, MAX_NODES), np.int64)      # the observation's one pass
    counts = np.empty(MAX_PLAYERS, np.int64)
    for s, T, _, _ in _lookaheads(dict(num_players=4, clans="draft"), seed=20261128, every=7):
        units_by_player(s, T, every, counts)
        for p in range(int(s[L.S_NP])):
            k = own_units(s, T, p, own)
            assert counts[p] == k and np.array_equal(every[p, :k], own[:k])
            for r in range(T[L.T_ROUNDS]):
                tile = s[L.S_TILES + r]
                if tile < 0:
                    continue
                kinds.add(int(T[L.T_TILE_KIND + tile]))
                assert tile_glory_of(s, T, p, tile, own, k) == tile_glory(s, T, p, tile)
                if T[L.T_TILE_KIND + tile] in (K_UNITS, K_WORKERS, K_BORDER, K_RICH):
                    assert tile_count_of(s, T, p, tile, own, k) == _map_tile_count(s, T, p,
                                                                                   tile)
    assert kinds & {K_UNITS, K_WORKERS, K_BORDER, K_RICH}


@pytest.mark.parametrize("config", CONFIGS[1:3], ids=["3p", "4p"])
def test_lookahead_values_equal_the_full_evaluation_bit_for_bit(config):
    w = DEFAULT_WEIGHTS
    for s, T, automa, legal in _lookaheads(config, seed=20261127, every=5):
        p = int(s[L.S_PLAYER])
        mask = np.zeros(N_ACTIONS, np.int8)
        buf = np.empty_like(s)
        out = np.empty(N_ACTIONS)
        action_values(s, T, w, mask, buf, out, automa)
        for a in legal:
            copy_state(buf, s)
            apply_action(buf, T, int(a), automa)
            assert out[a] == evaluate(buf, T, p, w)
            memo = np.empty(MEMO_LEN, np.int64)
            if not L.game_over(buf):
                map_memo(buf, T, p, memo)
            assert evaluate_known(buf, T, p, w, memo) == out[a]
        assert np.isneginf(np.delete(out, legal)).all()


torch = pytest.importorskip("torch", reason="the policy network needs the train extra")

from caledonia_env.agents.netroll import (_act, policy_hidden, policy_logits,  # noqa: E402
                                          policy_weights)
from caledonia_env.agents.policy import load_network  # noqa: E402
from caledonia_env.envs.observation import OBS_SIZE, encode_obs  # noqa: E402
from small_nets import save_small  # noqa: E402


@njit
def _dense_in_order(obs, w1t, b1, pw, pb, wa, ba, relu, mask, out):
    """The forward pass written plainly: every term of every sum, in input order."""
    h = b1.copy()
    for i in range(obs.shape[0]):
        for j in range(h.shape[0]):
            h[j] += obs[i] * w1t[i, j]
    _act(h, relu)
    for k in range(len(pw)):
        w = pw[k]
        x = pb[k].copy()
        for j in range(w.shape[0]):
            acc = x[j]
            for i in range(w.shape[1]):
                acc += w[j, i] * h[i]
            x[j] = acc
        _act(x, relu)
        h = x
    for a in range(out.shape[0]):
        acc = ba[a]
        for i in range(h.shape[0]):
            acc += wa[a, i] * h[i]
        out[a] = acc if mask[a] else -np.inf
    return h


@pytest.mark.parametrize("arch", [(16, (8,), "relu"), (32, (24, 16), "relu"),
                                  (32, (24, 16), "tanh")], ids=["small", "deep", "tanh"])
def test_the_sparse_forward_pass_equals_the_dense_one_bit_for_bit(arch, tmp_path):
    from caledonia_env.agents.checkpoint import Arch
    features, pi, activation = arch
    path = save_small(tmp_path / "net.zip", 4, seed=5,
                      arch=Arch(features, pi, (8,), activation))
    module, meta = load_network(str(path))
    net = policy_weights(module, meta)
    w1t, b1, pwt, pb, wa, ba, relu = net.args()
    pw = List([w for w, _ in net.pi])
    obs = np.zeros(OBS_SIZE, np.float32)
    mask = np.zeros(N_ACTIONS, np.int8)
    fast, plain = np.empty(N_ACTIONS, np.float32), np.empty(N_ACTIONS, np.float32)
    checked = 0
    for s, T, automa, legal in _lookaheads(dict(num_players=4, clans="draft"), seed=3, every=4):
        encode_obs(s, T, s[L.S_PLAYER], obs)
        mask[:] = 0
        mask[legal] = 1
        policy_logits(s, T, w1t, b1, pwt, pb, wa, ba, relu, mask, obs, fast)
        h = _dense_in_order(obs, w1t, b1, pw, pb, wa, ba, relu, mask, plain)
        assert np.array_equal(policy_hidden(obs, w1t, b1, pwt, pb, relu), h)
        assert np.array_equal(fast, plain)
        checked += 1
    assert checked > 20
