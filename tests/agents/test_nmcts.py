"""``nmcts``: mcts with the policy network as candidate ranking and rollout policy
(agents/nmcts.py), and the policy's forward pass inside numba (agents/netroll.py)."""
import numpy as np
import pytest
from invariants import play_checked
from numba.core import types

from caledonia_env import Game, GameConfig, agents
from caledonia_env.config import RULES_2026_11
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.envs.observation import OBS_SIZE, encode_obs
from caledonia_env.tournament import TournamentSpec, run, wilson

torch = pytest.importorskip("torch", reason="nmcts needs the train extra (torch)")

from caledonia_env.agents.nmcts import NetMCTSAgent  # noqa: E402
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS  # noqa: E402
from caledonia_env.agents.rollouts import greedy_action  # noqa: E402
from caledonia_env.agents.netroll import (mixed_rollout, policy_action,  # noqa: E402
                                          policy_call, policy_logits,
                                          policy_rollout_margins, policy_weights)
from caledonia_env.engine.step import apply_action  # noqa: E402
from caledonia_env.agents.policy import load_network  # noqa: E402
from small_nets import save_small  # noqa: E402
from test_puct import _position, _shuffle_hidden  # noqa: E402


@pytest.mark.parametrize("num_players", [2, 4])
def test_numba_policy_matches_the_torch_actor(num_players, tmp_path):
    """The numba forward pass gives the torch actor's logits on the legal actions, and its
    argmax is the ``ppo`` agent's move, along a whole game."""
    path = save_small(tmp_path / "net.zip", num_players, seed=num_players)
    module, meta = load_network(str(path))
    w = policy_weights(module, meta).args()
    ppo = agents.make(f"ppo:{path}", seed=0)
    game = Game(GameConfig(num_players=num_players, seed=11))
    mask, obs = np.zeros(N_ACTIONS, np.int8), np.zeros(OBS_SIZE, np.float32)
    logits = np.empty(N_ACTIONS, np.float32)
    checked = 0
    while not game.is_terminal:
        a = policy_action(game.state, game.tables, *w, 0.0, mask, obs, logits)
        assert a == ppo.act(game)
        legal = game.legal_actions()
        if len(legal) > 1 and checked < 25:
            policy_logits(game.state, game.tables, *w, mask, obs, logits)
            encode_obs(game.state, game.tables, game.current_player, obs)
            with torch.no_grad():
                ref = module(torch.as_tensor(obs[None]))[0].numpy()
            np.testing.assert_allclose(logits[legal], ref[legal], rtol=1e-4, atol=1e-4)
            assert np.isneginf(np.delete(logits, legal)).all()
            checked += 1
        game.step(a)
    assert checked == 25


def test_the_policy_in_every_seat_finishes_the_game_and_samples_at_a_temperature(tmp_path):
    path = save_small(tmp_path / "net.zip", 2, seed=1)
    w = policy_weights(*load_network(str(path))).args()
    game = _position(moves=10)
    ends = set()
    for temperature, seed in ((0.0, 1), (0.0, 2), (1.0, 1), (1.0, 2)):
        agents.rollouts.seed_numba(seed)
        s = game.state.copy()
        steps = mixed_rollout(s, game.tables, *w, temperature, -1, DEFAULT_WEIGHTS, 100000, None)
        assert steps > 0 and L.game_over(s)
        ends.add((temperature, s.tobytes()))
    argmax = {e for t, e in ends if t == 0.0}
    sampled = {e for t, e in ends if t == 1.0}
    assert len(argmax) == 1                  # argmax rollouts ignore numba's stream
    assert len(sampled) == 2                 # sampled ones follow it


@pytest.mark.parametrize("num_players,me", [(2, 0), (4, 2)])
def test_mixed_rollout_plays_the_policy_in_one_seat_and_greedy_in_the_others(num_players, me,
                                                                              tmp_path):
    """``mixed_rollout`` is the game played move by move with the policy's action in seat
    ``me`` and the greedy bot's in every other seat (numba's stream seeded alike); with
    ``me`` = -1 the policy plays every seat."""
    path = save_small(tmp_path / "net.zip", num_players, seed=num_players)
    w = policy_weights(*load_network(str(path))).args()
    game = _position(moves=6, num_players=num_players, seed=9)
    T = game.tables
    agents.rollouts.seed_numba(3)
    s = game.state.copy()
    steps = mixed_rollout(s, T, *w, 0.0, me, DEFAULT_WEIGHTS, 100000, None)
    assert steps > 0 and L.game_over(s)
    agents.rollouts.seed_numba(3)
    ref = game.state.copy()
    mask, obs = np.zeros(N_ACTIONS, np.int8), np.zeros(OBS_SIZE, np.float32)
    logits, buf = np.empty(N_ACTIONS, np.float32), np.empty_like(ref)
    seats = set()
    for _ in range(steps):
        if ref[L.S_PLAYER] == me:
            a = policy_action(ref, T, *w, 0.0, mask, obs, logits)
        else:
            a = greedy_action(ref, T, DEFAULT_WEIGHTS, mask, buf, None)
        seats.add(int(ref[L.S_PLAYER]))
        apply_action(ref, T, a, None)
    assert np.array_equal(s, ref) and seats == set(range(num_players))
    every = game.state.copy()
    assert mixed_rollout(every, T, *w, 0.0, -1, DEFAULT_WEIGHTS, 100000, None) > 0
    assert not np.array_equal(every, s)
    out = np.full(2, np.nan)
    policy_rollout_margins(game.state, T, *w, 0.0, True, DEFAULT_WEIGHTS, DEFAULT_WEIGHTS, me,
                           np.array(game.legal_actions()[:2], np.int64),
                           np.arange(1, 3, dtype=np.int64), 1, np.empty_like(ref), out, None)
    assert (out > -1e8).all()
    # issue #37: the three rollouts run one compiled function for a kind of game
    assert len([sig for sig in policy_call.signatures if sig[-1] == types.none]) == 1


def test_nmcts_plays_only_legal_moves_in_2p_3p_and_automa_games(tmp_path):
    path = save_small(tmp_path / "net.zip", 2, seed=2)
    game = Game(GameConfig(num_players=2, seed=7))
    bot = agents.make(f"nmcts:4:{path}", seed=1)
    play_checked(game, [bot, agents.make("greedy", seed=2)])
    assert game.is_terminal and bot.name == f"nmcts:4:{path}"
    for config in (dict(num_players=3), dict(num_players=2, automa={1: 3})):
        game = Game(GameConfig(seed=4, **config))
        bots = [agents.make(f"nmcts:3:{path}", seed=p) for p in range(game.num_players)]
        play_checked(game, bots, limit=80)
    game = Game(GameConfig(num_players=4, seed=6))
    bots = [agents.make(f"nmctsg:3:{path}", seed=p) for p in range(2)]
    play_checked(game, bots + [agents.make("greedy", seed=p) for p in (2, 3)], limit=60)
    assert bots[0].opponents == "greedy" and bots[0].name == f"nmctsg:3:{path}"


def test_nmcts_with_the_shipped_policies_plays_3p_and_4p(recwarn):
    for n in (3, 4):
        game = Game(GameConfig(num_players=n, seed=n))
        bots = [agents.make("nmcts:2", seed=p) for p in range(n)]
        play_checked(game, bots, limit=40)
        assert bots[0].network(n)[1]["num_players"] == n


def test_nmcts_searches_the_policys_candidates_and_is_deterministic(tmp_path):
    path = save_small(tmp_path / "net.zip", 2, seed=5)
    game = _position(seed=5)
    bot = agents.make(f"nmcts:16:{path}", seed=4)
    picks = [bot.act(game) for _ in range(3)]
    st = bot.last_stats
    assert st["rollouts"] <= 16 + st["candidates"] and 2 <= st["candidates"] <= 7
    assert st["choice"] == picks[-1]
    assert all(int(a) in game.legal_actions() for a in picks)
    bot.reset(4)
    assert [bot.act(game) for _ in range(3)] == picks
    assert [agents.make(f"nmcts:16:{path}", seed=4).act(game) for _ in range(3)] == picks


def test_flat_search_stats_are_empty_after_a_decision_it_did_not_search():
    """expert iteration reads ``last_stats`` as "this decision was searched": a decision
    left to the evaluator (a context outside ``contexts``) must not keep the last one's."""
    game = Game(GameConfig(num_players=2, seed=8))
    bot, greedy = agents.make("mcts:4", seed=1), agents.make("greedy")
    searched = skipped = 0
    while not game.is_terminal and not (searched and skipped):
        a = bot.act(game)
        if game.context in bot.contexts and len(game.legal_actions()) > 1:
            searched += 1
            assert bot.last_stats["choice"] == a
        elif game.context not in bot.contexts:
            skipped += 1
            assert bot.last_stats == {}
        game.step(a if game.current_player == 0 else greedy.act(game))
    assert searched and skipped


@pytest.mark.parametrize("kind", ["nmcts", "nmctsg"])
@pytest.mark.parametrize("config,moves", [(dict(num_players=2, seed=5), 20),
                                          (dict(num_players=2, automa={1: 4}), 4),
                                          (dict(num_players=3, seed=2), 34)])
def test_nmcts_never_reads_the_hidden_pile(kind, config, moves, tmp_path):
    """Shuffling the true contract pile, the Automa's pile and the state's random stream
    leaves the decision and the mean rollout margin of every agent seed unchanged; the
    margins do depend on the seed (it draws the determinizations), so a search that read
    the true state would be seen."""
    game = _position(moves=moves, **config)
    path = save_small(tmp_path / "net.zip", config["num_players"], seed=3)
    margins = set()
    for seed in range(4):
        bot = agents.make(f"{kind}:24:{path}", seed=seed, temperature=1.0)
        a = bot.act(game)
        m = bot.last_stats["mean_margin"]
        margins.add(m)
        for k in range(2):
            bot.reset(seed)
            assert bot.act(_shuffle_hidden(game, k)) == a
            assert bot.last_stats["mean_margin"] == m
    assert len(margins) > 1


@pytest.mark.parametrize("bad", ["nmcts", "nmcts:", "nmcts:0", "nmcts:abc", "nmcts:-3",
                                 "nmctsg", "nmctsg:0", "nmctsg:x"])
def test_nmcts_bad_names_raise_valueerror(bad):
    with pytest.raises(ValueError):
        agents.make(bad)


def test_nmcts_rejects_bad_options_and_missing_checkpoints(tmp_path):
    for kw in (dict(temperature=-1), dict(rollouts=0), dict(candidates=1),
               dict(opponents="mcts")):
        with pytest.raises(ValueError):
            NetMCTSAgent(**{"rollouts": 4, **kw})
    with pytest.raises(agents.checkpoint.CheckpointError, match="does not exist"):
        agents.make(f"nmcts:4:{tmp_path / 'nope.zip'}")


def _first_seat_win_share(players, games, seed):
    """(win share, Wilson lower bound) of the first agent over a tournament, printed. Played
    on the rules the shipped policies were trained on (``RULES_2026_11``: on the sourced
    default they are not retrained yet, README "Trained agents")."""
    spec = TournamentSpec(players=players, games=games, seed=seed,
                          config=GameConfig(num_players=len(players), **RULES_2026_11))
    rows = run(spec, workers=2)
    mine = [r for r in rows if r["player"] == 0]
    wins = sum(r["win"] for r in mine)
    lo, hi = wilson(wins, len(mine))
    print(f"{' vs '.join(players)}: {wins / len(mine):.3f} (95% CI {lo:.3f}-{hi:.3f})")
    return wins / len(mine), lo


@pytest.mark.slow
def test_nmcts_beats_greedy_in_60_percent_of_2p_games():
    """The search with the shipped 2-player policy against the greedy bot (clans drafted)."""
    share, lo = _first_seat_win_share(("nmcts:16", "greedy"), games=40, seed=203)
    assert share >= 0.60 and lo > 0.50


@pytest.mark.slow
def test_nmctsg_beats_three_greedy_bots_in_most_4p_games():
    """The opponent-model search with the shipped 4-player policy against 3 x greedy (clans
    drafted): par is 25%."""
    share, lo = _first_seat_win_share(("nmctsg:16", "greedy", "greedy", "greedy"), games=24,
                                      seed=204)
    assert share >= 0.50 and lo > 0.25
