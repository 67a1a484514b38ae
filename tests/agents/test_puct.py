"""PUCT search agent (agents/puct.py), the critic rebuilt from checkpoints and the shipped
policy chosen by the game's player count (agents/checkpoint.py, agents/policy.py)."""
import contextlib
import os
import warnings

import numpy as np
import pytest
from invariants import play_checked

from caledonia_env import Game, GameConfig, agents
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import MAX_CONTRACTS

torch = pytest.importorskip("torch", reason="puct and ppo agents need the train extra (torch)")

from caledonia_env.agents import checkpoint as ck  # noqa: E402
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS  # noqa: E402
from caledonia_env.agents.rollouts import determinize, greedy_rollout, seed_numba  # noqa: E402
from caledonia_env.agents.search_values import (search_net, shaping_weight,  # noqa: E402
                                             terminal_mode)
from caledonia_env.agents.policy import PolicyPlayer, PretrainedActor  # noqa: E402
from caledonia_env.agents.puct import ROLLOUT_MIX, PUCTAgent  # noqa: E402
from caledonia_env.envs.observation import OBS_SIZE, encode_obs  # noqa: E402
from caledonia_env.envs.rewards import (R_SCORE_DIFF, R_VP, R_WIN,  # noqa: E402
                                        projected_score_diff, terminal_rewards)
from small_nets import save_small as _save_small  # noqa: E402

def _position(num_players=2, seed=3, moves=30, **kw):
    """A game after ``moves`` greedy decisions, at a decision with a real choice."""
    game = Game(GameConfig(num_players=num_players, seed=seed, **kw))
    bot = agents.make("greedy", seed=1)
    for _ in range(moves):
        game.step(bot.act(game))
    while len(game.legal_actions()) < 2:
        game.step(bot.act(game))
    return game




# ------------------------------------------------------------------ search agent
def test_puct_plays_only_legal_moves_to_the_end_of_a_2p_game():
    game = Game(GameConfig(num_players=2, seed=7))
    bot = agents.make("puct:4", seed=1)
    play_checked(game, [bot, agents.make("greedy", seed=2)])
    assert game.is_terminal and bot.name == "puct:4"
    assert bot.last_stats["sims"] in (0, 4)


@pytest.mark.parametrize("config", [dict(num_players=1, solo=True),
                                    dict(num_players=2, automa={1: 3}),
                                    dict(num_players=3)])
def test_puct_plays_solo_automa_and_3p_games_legally(config, recwarn):
    game = Game(GameConfig(seed=4, **config))
    bots = [agents.make("puct:3", seed=p) for p in range(game.num_players)]
    play_checked(game, bots, limit=60)


def test_puct_searches_every_real_choice_and_returns_forced_moves():
    game = _position()
    bot = agents.make("puct:16", seed=0)
    a = bot.act(game)
    st = bot.last_stats
    assert st["sims"] == 16 and sum(st["visits"].values()) == 16
    assert a == max(st["visits"], key=st["visits"].get)
    assert set(st["visits"]) <= set(int(x) for x in game.legal_actions())
    while len(game.legal_actions()) != 1:
        game.step(agents.make("greedy").act(game))
    assert bot.act(game) == game.legal_actions()[0] and bot.last_stats["sims"] == 0


def test_puct_is_deterministic_given_its_seed():
    game = _position(seed=5)
    first = agents.make("puct:12", seed=4)
    picks = [first.act(game) for _ in range(3)]
    visits = first.last_stats["visits"]
    first.reset(4)
    again = [first.act(game) for _ in range(3)]
    other = agents.make("puct:12", seed=4)
    assert picks == again == [other.act(game) for _ in range(3)]
    assert other.last_stats["visits"] == visits


def _shuffle_hidden(game, seed):
    """The same game with the true contract pile, the Automa piles and the state's random
    stream changed (what the searching player cannot know)."""
    g = game.clone()
    s = g.state
    rng = np.random.default_rng(seed)
    head, cnt = int(s[L.S_DECK_HEAD]), int(s[L.S_DECK_COUNT])
    idx = L.S_DECK + (head + np.arange(cnt)) % MAX_CONTRACTS
    s[idx] = s[idx][rng.permutation(cnt)]
    for p in range(g.num_players):
        poff = L.S_PLAYERS + p * L.P_SIZE
        pile = slice(poff + L.P_AM_PILE, poff + L.P_AM_PILE + int(s[poff + L.P_AM_NPILE]))
        s[pile] = rng.permutation(s[pile])
    s[L.S_RNG] = int(rng.integers(1, 2**31 - 2))
    return g


def test_determinize_ignores_the_true_pile_order_and_random_stream():
    game = _position(num_players=2, automa={1: 2}, moves=20)
    other = _shuffle_hidden(game, 1)
    assert not np.array_equal(game.state, other.state)
    a, b = game.state.copy(), other.state.copy()
    determinize(a, game.tables, 99)
    determinize(b, game.tables, 99)
    assert np.array_equal(a, b)
    c = game.state.copy()
    determinize(c, game.tables, 100)
    assert not np.array_equal(a, c)          # the seed draws the hidden order


@pytest.mark.parametrize("kind,config,moves,varies", [
    ("puct", dict(num_players=2, seed=5), 16, True),      # round 1, late: the
    ("puct", dict(num_players=1, solo=True), 4, False),   # search reaches draws from the pile
    ("puct", dict(num_players=2, automa={1: 4}), 4, True),
    ("puctr", dict(num_players=2, seed=5), 16, True),     # the rollouts too
    ("puctr", dict(num_players=1, solo=True), 4, False)])
def test_puct_never_reads_the_hidden_pile(kind, config, moves, varies, recwarn, tmp_path):
    """Shuffling the true pile, the Automa's pile and the dice stream leaves every decision
    and its visit counts unchanged for each agent seed. Where ``varies``, the visits depend
    on the seed, which draws the determinizations (the refilled contract slots, the
    Automa's cards and random picks come up within the tree), so there the test would see
    a search that read the true state; ``determinize`` itself is tested above. The network
    is a small random one, whose broad prior spreads the visits: with a trained network
    the search may be so sure that every seed gives the same visits, and the ``varies``
    check would then test the network instead of the search."""
    game = _position(moves=moves, **config)
    net = _save_small(tmp_path / "net.zip", max(2, config["num_players"]), seed=3)
    seen = set()
    for seed in range(4):
        bot = agents.make(f"{kind}:32:{net}", seed=seed)
        a = bot.act(game)
        visits = bot.last_stats["visits"]
        seen.add(tuple(sorted(visits.items())))
        for k in range(2):
            bot.reset(seed)
            assert bot.act(_shuffle_hidden(game, k)) == a
            assert bot.last_stats["visits"] == visits
    if varies:
        assert len(seen) > 1


def test_puct_root_noise_and_temperature():
    game = _position(seed=6)
    plain = [agents.make("puct:16", seed=s) for s in range(3)]
    noisy = [agents.make("puct:16", seed=s, noise_frac=0.5, dirichlet_alpha=0.3) for s in range(3)]
    for a, b in zip(plain, noisy):
        a.act(game)
        b.act(game)
    assert any(a.last_stats["visits"] != b.last_stats["visits"] for a, b in zip(plain, noisy))
    hot = agents.make("puct:8", seed=0, temperature=1.0)
    picks = {hot.act(game) for _ in range(12)}
    assert picks <= set(int(x) for x in game.legal_actions())


def test_terminal_values_use_the_checkpoints_reward_units():
    assert terminal_mode({}, 2) == (R_SCORE_DIFF, 1.0)
    assert terminal_mode({"train": {"reward": "win"}}, 3) == (R_WIN, 1.0)
    assert terminal_mode({"train": {"reward": "vp", "reward_scale": 0.02}}, 1) == (R_VP, 0.02)
    assert terminal_mode({"train": {"reward": "score_diff"}}, 1) == (R_VP, 0.01)
    with pytest.raises(ValueError, match="terminal reward"):
        terminal_mode({"train": {"reward": "round"}}, 1)


def test_leaf_values_add_back_the_shaping_potential(tmp_path):
    """A network trained with --shaping W estimates return - W * phi: the leaf adds
    W * scale * phi (each player's projected VP lead) to the same network's values."""
    game = _position(num_players=3, seed=4, moves=60)
    plain = _save_small(tmp_path / "plain.zip", 3, train={"reward": "score_diff"})
    shaped = _save_small(tmp_path / "shaped.zip", 3, train={"reward": "score_diff", "shaping": 0.5,
                                                            "reward_scale": 2.0})
    assert shaping_weight({}) == 0.0 and shaping_weight({"train": {"shaping": 0.5}}) == 0.5
    leaves = []
    for path in (plain, shaped):
        agent = PUCTAgent(2, path, seed=0)
        agent.act(game)                          # loads the network and its units
        leaves.append(agent.evaluator.evaluate(game.state, game.tables))
    phi = np.zeros(4)
    projected_score_diff(game.state, game.tables, np.empty_like(game.state), phi)
    assert np.abs(phi[:3]).max() > 0.01                  # a position with a lead to add back
    # same head value v: plain = (-v/2, ..., v, ...) in units of scale 1, shaped in scale 2
    np.testing.assert_allclose(leaves[1], 2.0 * 0.5 * phi[:3] + leaves[0], rtol=1e-6, atol=1e-9)
    assert abs(leaves[1].sum()) < 1e-6                   # still zero-sum, as score_diff


def test_puctr_leaf_mixes_the_value_head_and_a_greedy_rollout(tmp_path):
    """puctr's leaf: (1 - mix) * the network's values + mix * the terminal rewards of a
    greedy rollout from the (determinized) leaf, in the same units."""
    game = _position(num_players=3, seed=4, moves=60)
    net = _save_small(tmp_path / "net.zip", 3, train={"reward": "score_diff", "reward_scale": 2.0})
    leaves = {}
    for mix in (0.0, ROLLOUT_MIX, 1.0):
        agent = PUCTAgent(2, net, seed=0, rollout_mix=mix)
        agent.act(game)                          # loads the network and its units
        seed_numba(11)                           # the greedy rollout's tie noise
        leaves[mix] = agent.evaluator.evaluate(game.state, game.tables)
    end = game.state.copy()
    seed_numba(11)
    assert greedy_rollout(end, game.tables, DEFAULT_WEIGHTS, 100000, None) > 0
    z = np.zeros(4)
    terminal_rewards(end, game.tables, R_SCORE_DIFF, z)
    assert np.abs(z).max() > 0.01
    np.testing.assert_allclose(leaves[1.0], 2.0 * z[:3], rtol=1e-9)
    np.testing.assert_allclose(leaves[ROLLOUT_MIX],
                               (1 - ROLLOUT_MIX) * leaves[0.0] + ROLLOUT_MIX * leaves[1.0])
    assert not np.allclose(leaves[0.0], leaves[1.0])
    assert agents.make("puctr:4").rollout_mix == ROLLOUT_MIX
    assert agents.make("puct:4").rollout_mix == 0.0


@pytest.mark.parametrize("bad", ["puct", "puct:", "puct:0", "puct:abc", "puct:-3",
                                 "puctr", "puctr:0", "puctr:x:y"])
def test_puct_bad_names_raise_valueerror(bad):
    with pytest.raises(ValueError):
        agents.make(bad)


def test_puct_rejects_bad_options_and_checkpoints_without_value_head(tmp_path):
    for kw in (dict(c_puct=0), dict(temperature=-1), dict(noise_frac=2), dict(sims=0),
               dict(rollout_mix=1.5), dict(rollout_mix=-0.1)):
        with pytest.raises(ValueError):
            PUCTAgent(**{"sims": 4, **kw})
    with pytest.raises(ck.CheckpointError, match="does not exist"):
        agents.make(f"puct:4:{tmp_path / 'nope.zip'}")
    path = _save_small(tmp_path / "actor_only.zip", value_head=False)
    agents.make(f"ppo:{path}")                      # the actor alone still plays
    with pytest.raises(ck.CheckpointError, match="no value head"):
        agents.make(f"puct:4:{path}")


def test_puct_with_a_checkpoint_path_plays(tmp_path):
    path = _save_small(tmp_path / "small.zip")
    bot = agents.make(f"puct:4:{path}", seed=0)
    game = Game(GameConfig(num_players=2, seed=2))
    play_checked(game, [bot, bot], limit=40)


# ------------------------------------------------------------------ critic rebuild
def test_actor_critic_matches_the_sb3_policy_and_the_search_net(tmp_path):
    """Logits and values of the rebuilt ActorCritic equal MaskablePPO's own outputs (a
    model from the trainer's build_model, weights perturbed so values are not ~0), and
    the NumPy search network equals the ActorCritic."""
    pytest.importorskip("sb3_contrib")
    # the trainer and the SB3 vector env need the optional sb3_contrib (skipped without it)
    from caledonia_env.envs import make_sb3_vec_env
    from caledonia_env.train.trainer import TrainConfig, build_model
    cfg = TrainConfig(n_envs=4, n_steps=16, batch_size=32, net="32:16,8")
    env = make_sb3_vec_env(4, num_players=2, seed=1)
    model = build_model(cfg, env)
    with torch.no_grad():
        for prm in model.policy.parameters():
            prm.add_(0.2 * torch.randn_like(prm))
    obs = env.reset()
    for _ in range(15):
        obs, *_ = env.step(env.sample_actions())
    ck.save(tmp_path / "m.zip", model.policy.state_dict(),
            ck.make_meta(model.caledonia_arch, 2, model.num_timesteps))
    c = ck.load(tmp_path / "m.zip")
    net = ck.load_actor_critic(c)
    t = torch.as_tensor(obs)
    with torch.no_grad():
        logits, values = net(t)
        ref_logits = model.policy.get_distribution(t).distribution.logits.numpy()
        ref_values = model.policy.predict_values(t).numpy()[:, 0]
    assert np.abs(ref_values).max() > 1e-3
    assert np.allclose(values.numpy(), ref_values, atol=1e-5)
    lg = logits.numpy()
    assert np.allclose(lg - lg.max(1, keepdims=True), ref_logits - ref_logits.max(1, keepdims=True),
                       atol=1e-4)
    fast = search_net(net, c.meta)
    acts = np.arange(0, lg.shape[1], 7)
    for i in range(len(obs)):
        hidden, v = fast.evaluate(obs[i])
        assert abs(v - float(values[i])) < 1e-4
        assert np.allclose(fast.logits(hidden, acts), lg[i, acts], atol=1e-4)


# ------------------------------------------------------------------ selection by player count
def _fallback_expected(n):
    """A fallback warning for ``n`` players unless its file has been shipped since."""
    shipped = os.path.isfile(os.path.join(ck.PRETRAINED_DIR, ck.PRETRAINED_FILES[n]))
    return contextlib.nullcontext() if shipped else pytest.warns(ck.PretrainedFallbackWarning)


def _touch(folder, *names):
    folder.mkdir(exist_ok=True)
    for n in names:
        (folder / n).write_bytes(b"")
    return str(folder)


def test_pretrained_path_picks_the_count_or_the_nearest_with_one_warning(tmp_path, monkeypatch):
    monkeypatch.setattr(ck, "_FALLBACK_WARNED", set())
    only2 = _touch(tmp_path / "a", "ppo_2p.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ck.pretrained_path(2, only2).endswith("ppo_2p.zip")
    for n in (1, 3, 4):
        with pytest.warns(ck.PretrainedFallbackWarning, match="using ppo_2p.zip"):
            assert ck.pretrained_path(n, only2).endswith("ppo_2p.zip")
        with warnings.catch_warnings():          # once per folder and player count
            warnings.simplefilter("error")
            ck.pretrained_path(n, only2)
    full = _touch(tmp_path / "b", "ppo_solo.zip", "ppo_2p.zip", "ppo_3p.zip", "ppo_4p.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [ck.pretrained_path(n, full) for n in (1, 2, 3, 4)]
    assert [p.rsplit("/", 1)[1] for p in got] == ["ppo_solo.zip", "ppo_2p.zip", "ppo_3p.zip",
                                                  "ppo_4p.zip"]
    ends = _touch(tmp_path / "c", "ppo_2p.zip", "ppo_4p.zip")
    with pytest.warns(ck.PretrainedFallbackWarning, match="3-player games.*ppo_4p.zip"):
        assert ck.pretrained_path(3, ends).endswith("ppo_4p.zip")       # a tie: the larger
    with pytest.warns(ck.PretrainedFallbackWarning, match="solo game"):
        assert ck.pretrained_path(1, ends).endswith("ppo_2p.zip")
    with pytest.raises(ck.CheckpointError, match="no shipped policy"):
        ck.pretrained_path(2, _touch(tmp_path / "d"))
    with pytest.raises(ValueError, match="num_players"):
        ck.pretrained_path(5)


def test_the_searches_network_is_its_own_file_where_one_ships(tmp_path, monkeypatch):
    """``search=True`` (the searches' ``pretrained``) takes ``SEARCH_FILES`` where that file
    is in the folder, else the policy's file with its usual fallback."""
    monkeypatch.setattr(ck, "_FALLBACK_WARNED", set())
    folder = _touch(tmp_path / "a", "ppo_2p.zip", "ppo_4p.zip", ck.SEARCH_FILES[2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ck.pretrained_path(2, folder).endswith("/ppo_2p.zip")
        assert ck.pretrained_path(2, folder, search=True).endswith(f"/{ck.SEARCH_FILES[2]}")
        assert ck.pretrained_path(4, folder, search=True).endswith("/ppo_4p.zip")
    with pytest.warns(ck.PretrainedFallbackWarning, match="using ppo_4p.zip"):
        assert ck.pretrained_path(3, folder, search=True).endswith("/ppo_4p.zip")
    plain = _touch(tmp_path / "b", "ppo_2p.zip")
    assert ck.pretrained_path(2, plain, search=True).endswith("/ppo_2p.zip")


def test_searches_play_the_searches_network_and_ppo_the_policy():
    """``ppo:pretrained`` plays ``PRETRAINED_FILES``; ``nmcts``, ``nmctsg`` and ``puct`` with
    ``pretrained`` play the searches' network (``SEARCH_FILES`` where shipped)."""
    from caledonia_env.agents.policy import checkpoint_path

    def head(module):
        return module.action_net.weight.detach()

    searches = [agents.make(name) for name in ("nmcts:4", "nmctsg:4", "puct:4")]
    for n in (2, 3):
        policy, search = ck.pretrained_path(n), ck.pretrained_path(n, search=True)
        assert policy.endswith(ck.PRETRAINED_FILES[n])
        shipped = os.path.join(ck.PRETRAINED_DIR, ck.SEARCH_FILES.get(n, "-"))
        assert search == (shipped if os.path.isfile(shipped) else policy)
        assert (checkpoint_path("pretrained", n), checkpoint_path("pretrained", n, search=True)) \
            == (policy, search)
        want = head(ck.load_actor(ck.load(search)))
        for agent in searches:
            assert torch.equal(head(agent.network(n)[0]), want), agent.name
        ppo = head(PretrainedActor().network(n)[0])
        assert torch.equal(ppo, head(ck.load_actor(ck.load(policy))))


def test_shipped_folder_has_a_policy_for_every_player_count():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n, name in ((1, "ppo_solo"), (2, "ppo_2p"), (3, "ppo_3p"), (4, "ppo_4p")):
            assert ck.pretrained_path(n) == f"{ck.PRETRAINED_DIR}/{name}.zip"
            assert ck.load(ck.pretrained_path(n)).meta["train"]["players"] == n


def test_pretrained_actor_routes_each_row_by_its_player_count(tmp_path):
    folder = tmp_path / "pre"
    folder.mkdir()
    p2 = _save_small(folder / "ppo_2p.zip", 2, seed=1)
    p4 = _save_small(folder / "ppo_4p.zip", 4, seed=2)
    rows, want = [], []
    for n, path in ((2, p2), (4, p4), (2, p2)):
        game = _position(num_players=n, moves=5)
        o = np.zeros(OBS_SIZE, np.float32)
        encode_obs(game.state, game.tables, game.current_player, o)
        rows.append(o)
        with torch.no_grad():
            want.append(ck.load_actor(ck.load(path))(torch.from_numpy(o[None]))[0].numpy())
    actor = PretrainedActor(str(folder))
    with torch.no_grad():
        got = actor(torch.from_numpy(np.stack(rows))).numpy()
        single = actor(torch.from_numpy(rows[1][None])).numpy()
    assert np.allclose(got, np.stack(want), atol=1e-5)
    assert np.allclose(single[0], want[1], atol=1e-5)
    with pytest.raises(ValueError, match="player count"):
        actor(torch.zeros((1, OBS_SIZE)))


def test_ppo_pretrained_plays_games_of_every_size_with_one_agent(monkeypatch):
    monkeypatch.setattr(ck, "_FALLBACK_WARNED", set())
    bot = agents.make("ppo:pretrained", seed=0)
    assert bot.meta["num_players"] == 2
    for n, kw in ((2, {}), (3, {}), (1, dict(solo=True))):
        game = Game(GameConfig(num_players=n, seed=n, **kw))
        with _fallback_expected(n):
            play_checked(game, [bot] * n, limit=30)
    pl = PolicyPlayer.pretrained()
    obs = np.zeros((2, OBS_SIZE), np.float32)
    games = [_position(num_players=2, moves=3), _position(num_players=4, moves=3)]
    masks = np.stack([g.legal_mask() for g in games])
    for i, g in enumerate(games):
        encode_obs(g.state, g.tables, g.current_player, obs[i])
    with _fallback_expected(4):
        acts = pl.act_batch(obs, masks)
    assert all(masks[i, a] for i, a in enumerate(acts))


def test_play_games_batches_ppo_pretrained_in_3p_games(monkeypatch):
    pytest.importorskip("sb3_contrib")
    from caledonia_env.train.batched_play import play_games    # needs sb3_contrib (skipped without)
    monkeypatch.setattr(ck, "_FALLBACK_WARNED", set())
    with _fallback_expected(3):
        rows = play_games(["ppo:pretrained", "random", "random"], 2, seed=1)
    assert len(rows) == 6 and {r["agent"] for r in rows} == {"ppo:pretrained", "random"}
