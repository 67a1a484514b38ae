"""Observation encoder (issue #5): layout, perspective, hidden information, shared vectors."""
import os

import gymnasium
import numpy as np
import pytest
from conftest import base_scenario

from caledonia_env import Game, GameConfig
from caledonia_env.data.names import CLANS
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.board import reach_mask
from caledonia_env.engine.constants import (
    GOOD_NAMES,
    MAX_NODES,
    MAX_PLAYERS,
    TERRAIN_MOUNTAIN,
    UNIT_NAMES,
)
from caledonia_env.envs.aec import raw_env
from caledonia_env.envs.observation import (
    CONTRACT_SCALE,
    LAYOUT,
    MAP_CHANNELS,
    MONEY_SCALE,
    OBS_HIGH,
    OBS_SIZE,
    PB,
    PRICE_SCALE,
    encode_obs,
)
from caledonia_env.envs.observation_text import (decode_observation, describe_observation,
                                                 layout_markdown)
from caledonia_env.envs.vector import CaledoniaVectorEnv

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CH = {c: k for k, c in enumerate(MAP_CHANNELS)}


def obs_of(game, player):
    out = np.empty(OBS_SIZE, np.float32)
    encode_obs(game.state, game.tables, player, out)
    return out


def random_game(n, seed, steps):
    g = Game(num_players=n, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if g.is_terminal:
            break
        g.step(rng.choice(g.legal_actions()))
    return g


def test_layout_is_contiguous_and_fixed():
    """Fields tile the vector exactly once; the size does not depend on map or player count."""
    covered = np.zeros(OBS_SIZE, int)
    for f in LAYOUT.fields:
        reps = MAX_PLAYERS if f.group == "player" else 1
        for r in range(reps):
            covered[f.offset + r * PB: f.offset + r * PB + f.size] += 1
    assert (covered == 1).all()
    for n in (2, 3, 4):
        assert obs_of(Game(num_players=n, seed=n), 0).shape == (OBS_SIZE,)


def test_docs_observation_md_matches_layout():
    """docs/observation.md embeds the generated offset table verbatim."""
    with open(os.path.join(ROOT, "docs", "observation.md"), encoding="utf-8") as fh:
        text = fh.read()
    assert layout_markdown() in text, "regenerate with: python -m caledonia_env.envs --write-docs"


def test_R_3_1_decode_reads_back_prices_money_goods():
    g = Game.from_scenario(base_scenario(2, market={"whisky": 12, "wool": 3}, players=[
        {"money": 37, "goods": {"cheese": 4, "wool": 1}},
        {"money": 5, "goods": {"bread": 2}}]))
    d = decode_observation(obs_of(g, 1))
    assert d["global.price"][GOOD_NAMES.index("whisky")] * PRICE_SCALE == pytest.approx(12)
    assert d["global.price"][GOOD_NAMES.index("wool")] * PRICE_SCALE == pytest.approx(3)
    # observer (player 1) first, then player 0
    assert d["player.money"][:, 0] * MONEY_SCALE == pytest.approx([5, 37, 0, 0])
    assert d["player.goods"][1, GOOD_NAMES.index("cheese")] == pytest.approx(0.4)
    assert d["player.goods"][0, GOOD_NAMES.index("bread")] == pytest.approx(0.2)
    assert d["player.present"][:, 0].tolist() == [1, 1, 0, 0]
    summary = describe_observation(obs_of(g, 1))
    assert summary["money"] == [5, 37] and summary["prices"]["whisky"] == 12


def test_R_3_3_map_occupant_is_relative_to_observer(hexes):
    a, b = hexes.land()[0], hexes.land(TERRAIN_MOUNTAIN)[0]     # a miner stands on a mountain
    g = Game.from_scenario(base_scenario(3, players=[
        {"units": {hexes.label(a): "sheep"}}, {"units": {hexes.label(b): "miner"}}, {}]))
    for observer in range(3):
        nodes = decode_observation(obs_of(g, observer))["map.nodes"]
        rel_a = (0 - observer) % 3
        rel_b = (1 - observer) % 3
        assert nodes[a, CH["occ_self"] + rel_a] == 1 and nodes[a, CH["unit_sheep"]] == 1
        assert nodes[b, CH["occ_self"] + rel_b] == 1 and nodes[b, CH["unit_miner"]] == 1
        occupied = nodes[:, CH["occ_self"]:CH["occ_neutral"] + 1].sum()
        assert occupied == 2


def test_R_4_reach_channel_matches_engine_reach():
    """reach_now is the engine's reach (neighbors + shipping range, R-4) of the observer."""
    g = random_game(4, 11, 120)
    for p in range(4):
        nodes = decode_observation(obs_of(g, p))["map.nodes"]
        want = np.zeros(MAX_NODES, np.int8)
        reach_mask(g.state, g.tables, p, want)
        assert (nodes[:, CH["reach_now"]] == want).all()
        # the level channel is never below the reach flag's meaning
        lvl = nodes[:g.board.n_nodes, CH["reach_level"]]
        assert ((lvl <= 1.0) & (lvl >= 0.0)).all()


def test_player_blocks_are_the_same_facts_from_every_seat():
    """Player p's block is identical in every observer's view, only its position rotates."""
    g = random_game(4, 5, 150)
    views = [decode_observation(obs_of(g, o)) for o in range(4)]
    for f in LAYOUT.fields:
        if f.group != "player":
            continue
        for p in range(4):
            own = views[p][f.key][0]
            for o in range(4):
                assert np.array_equal(views[o][f.key][(p - o) % 4], own), (f.key, p, o)


def test_absent_seats_are_zero_with_two_players():
    g = random_game(2, 3, 60)
    vec = obs_of(g, 0)
    start = LAYOUT.fields[[f.key for f in LAYOUT.fields].index("player.present")].offset
    assert not vec[start + 2 * PB:start + 4 * PB].any()


def test_R_1_4_face_down_pile_is_hidden():
    """Reordering the face-down contract pile does not change any observation."""
    g = random_game(3, 8, 40)
    h = g.clone()
    head, count = int(h.state[L.S_DECK_HEAD]), int(h.state[L.S_DECK_COUNT])
    idx = [L.S_DECK + (head + i) % L.MAX_CONTRACTS for i in range(count)]
    h.state[idx] = h.state[idx][::-1].copy()
    assert not np.array_equal(g.state, h.state)
    for p in range(3):
        assert np.array_equal(obs_of(g, p), obs_of(h, p))


def test_R_3_2_contract_features_of_slots():
    g = Game(num_players=4, seed=2)
    d = decode_observation(obs_of(g, 0))
    for i in range(L.MAX_SLOTS):
        c = int(g.state[L.S_SLOTS + i])
        row = d["global.slots"][i]
        if c < 0:
            assert not row.any()
            continue
        raw = g.tables[L.T_CONTRACTS + c * L.C_WIDTH: L.T_CONTRACTS + (c + 1) * L.C_WIDTH]
        assert row[0] == 1
        assert row[1:] == pytest.approx(raw / CONTRACT_SCALE)


def test_values_stay_in_the_declared_box_over_random_games():
    for n in (2, 3, 4):
        g = Game(num_players=n, seed=40 + n)
        rng = np.random.default_rng(n)
        while not g.is_terminal:
            for p in range(n):
                v = obs_of(g, p)
                assert v.min() >= 0.0 and v.max() <= OBS_HIGH and np.isfinite(v).all()
            g.step(rng.choice(g.legal_actions()))
        d = decode_observation(obs_of(g, 0))
        assert d["decision.context"][0] == 1      # game over
        assert not d["decision.actor"].any()


def test_decision_context_and_actor_one_hot():
    g = random_game(3, 21, 30)
    for o in range(3):
        d = decode_observation(obs_of(g, o))
        assert d["decision.context"].sum() == 1
        assert d["decision.context"][int(g.state[L.S_CTX])] == 1
        assert d["decision.actor"][(g.current_player - o) % 3] == 1


def test_decode_rejects_a_wrong_shape():
    with pytest.raises(ValueError, match="shape"):
        decode_observation(np.zeros(OBS_SIZE + 1))


def test_aec_gym_and_vector_env_give_identical_vectors():
    """One numba encoder serves all three envs: same position -> same vector and mask."""
    gym_env = gymnasium.make("Caledonia-v0", num_players=3, seat=1).unwrapped
    obs, _ = gym_env.reset(seed=9)
    for _ in range(25):
        legal = np.flatnonzero(gym_env.action_masks())
        obs, r, term, trunc, info = gym_env.step(int(legal[len(legal) // 2]))
        if term:
            break
    game = gym_env.game
    aec = raw_env(num_players=3, map=",".join(game.map))
    aec.reset(seed=9)
    aec.game = game.clone()
    aec_obs = aec.observe("player_1")
    vec = CaledoniaVectorEnv(1, num_players=3, map=",".join(game.map), seed=0)
    vec.reset()
    vec.set_state(0, game, seat=1)
    assert np.array_equal(obs, aec_obs["observation"])
    assert np.array_equal(obs, vec.observations[0])
    assert np.array_equal(gym_env.action_masks(), aec_obs["action_mask"].astype(bool))
    assert np.array_equal(gym_env.action_masks(), vec.action_masks()[0])
    assert aec_obs["action_mask"].shape == (N_ACTIONS,)


def test_unit_channels_follow_unit_names():
    assert [c[5:] for c in MAP_CHANNELS if c.startswith("unit_")] == list(UNIT_NAMES)


def test_R_8_clans_in_start_picks_and_player_blocks():
    """Drafted clans (R-1.7): the offered pairs show their clan, then each player's clan."""
    g = Game(num_players=3, seed=2, clans="draft")
    d = decode_observation(obs_of(g, g.current_player))
    clan_cols = slice(2 + len(GOOD_NAMES), None)
    for i in range(L.MAX_START_PICKS):
        clan = int(g.state[L.S_PICK_CLANS + i])
        row = d["decision.start_picks"][i]
        if int(g.state[L.S_PICKS + i]) >= 0 and clan >= 0:
            assert row[0] == 1 and row[clan_cols][clan] == 1 and row[clan_cols].sum() == 1
    rng = np.random.default_rng(0)
    while g.context in ("starting pick", "starting worker"):
        g.step(rng.choice(g.legal_actions()))
    for o in range(3):
        d = decode_observation(obs_of(g, o))
        for p in range(3):
            clan = int(g.state[L.S_PLAYERS + p * L.P_SIZE + L.P_CLAN])
            assert d["player.clan"][(p - o) % 3].tolist() == np.eye(len(CLANS))[clan].tolist()


def test_R_9_4_auction_parameters():
    g = Game(num_players=3, seed=2, clan_auction=True)
    rng = np.random.default_rng(0)
    seen = 0
    while not g.is_terminal and g.round == 1:
        if g.context == "clan auction":
            d = decode_observation(obs_of(g, g.current_player))
            auction = d["decision.auction"]
            stage = int(g.state[L.S_AUC_STAGE])
            assert auction[stage] == 1 and auction[:3].sum() == 1
            high = int(g.state[L.S_AUC_HIGH])
            assert auction[3] == (1 if high >= 0 else 0)
            if high >= 0:
                assert auction[4] == pytest.approx(high / 30)
                leader = int(g.state[L.S_AUC_LEADER])
                assert auction[5 + (leader - g.current_player) % 3] == 1
            seen += 1
        else:
            assert not decode_observation(obs_of(g, 0))["decision.auction"].any()
        g.step(rng.choice(g.legal_actions()))
    assert seen > 0


def test_clan_games_stay_in_bounds_to_the_end():
    for kw in ({"clans": "draft"}, {"clans": "draft", "clan_auction": True}):
        g = Game(num_players=4, seed=5, **kw)
        rng = np.random.default_rng(1)
        while not g.is_terminal:
            v = obs_of(g, g.current_player)
            assert v.min() >= 0.0 and v.max() <= OBS_HIGH
            g.step(rng.choice(g.legal_actions()))


# sha256 of every observation (each seat, before every decision) of the six games below,
# recorded with the encoder before its speed-ups: the shipped policies were trained on these
# vectors, so a faster encoder must write the very same floats.
OBS_TRACE_SHA256 = "705648933171163532088676437744201b73c59e6d6507cedbc796c5b6b359ed"


def test_observation_trace_is_unchanged():
    import hashlib
    from caledonia_env import agents
    from caledonia_env.config import RULES_2026_11
    from caledonia_env.envs.observation import OBS_SIZE, encode_obs
    configs = [dict(num_players=4, seed=1), dict(num_players=3, seed=2),
               dict(num_players=2, seed=3, clans=None), dict(num_players=2, seed=4, smaller_map=True),
               dict(num_players=1, seed=5, solo=True, clans=None),
               dict(num_players=2, seed=6, automa={1: 3})]
    h = hashlib.sha256()
    out = np.empty(OBS_SIZE, np.float32)
    for k, cfg in enumerate(configs):
        game = Game(GameConfig(**cfg, **RULES_2026_11))   # pins the encoder, not the ruleset
        bot = agents.make("random", seed=k)
        while not game.is_terminal:
            for p in range(game.config.num_players):
                encode_obs(game.state, game.tables, p, out)
                h.update(out.tobytes())
            game.step(bot.act(game))
    assert h.hexdigest() == OBS_TRACE_SHA256
