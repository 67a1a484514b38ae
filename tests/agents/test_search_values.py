"""The search agents' evaluators (agents/search_values.py): one interface, prior and values."""
import numpy as np
import pytest

from caledonia_env import agents
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS
from caledonia_env.agents.rollouts import (action_values, determinize, final_margin,
                                           greedy_action, seed_numba)
from caledonia_env.agents.search_values import (FAILED, Evaluator, GreedyRollouts,
                                             RolloutEvaluator)
from caledonia_env.agents.mcts import MCTSAgent
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.step import apply_action
from caledonia_env.envs.observation import OBS_SIZE, encode_obs
from caledonia_env.envs.rewards import terminal_rewards

torch = pytest.importorskip("torch", reason="the network evaluators need the train extra")

from caledonia_env.agents.search_values import NetworkValues, PolicyRollouts  # noqa: E402
from caledonia_env.agents.policy import load_network  # noqa: E402
from small_nets import save_small  # noqa: E402
from test_puct import _position  # noqa: E402


def _prepared(evaluator, game):
    evaluator.prepare(game)
    return evaluator


@pytest.fixture(scope="module")
def net3(tmp_path_factory):
    return save_small(tmp_path_factory.mktemp("ev") / "net.zip", 3, seed=4)


@pytest.mark.parametrize("make", [lambda p: GreedyRollouts(),
                                  lambda p: GreedyRollouts(rollout="random"),
                                  lambda p: PolicyRollouts(p),
                                  lambda p: PolicyRollouts(p, opponents="greedy"),
                                  lambda p: NetworkValues(p),
                                  lambda p: NetworkValues(p, rollout_mix=0.5)])
def test_every_evaluator_gives_a_prior_over_the_legal_actions_and_values_per_player(make, net3):
    game = _position(num_players=3, seed=2, moves=20)
    ev = _prepared(make(net3), game)
    assert isinstance(ev, Evaluator)
    before = game.state.copy()
    legal, scores = ev.prior(game.state, game.tables)
    values = ev.evaluate(game.state, game.tables)
    assert np.array_equal(game.state, before)             # s is never changed
    assert np.array_equal(legal, game.legal_actions()) and len(legal) >= 2
    assert scores.shape == legal.shape and np.isfinite(scores).all()
    assert values.shape == (3,) and np.isfinite(values).all() and (values != FAILED).all()


def test_greedy_prior_is_the_one_step_evaluation_and_its_action_the_greedy_bots():
    game = _position(seed=4)
    ev = GreedyRollouts()
    legal, scores = ev.prior(game.state, game.tables)
    ref = np.zeros(N_ACTIONS)
    action_values(game.state, game.tables, DEFAULT_WEIGHTS, np.zeros(N_ACTIONS, np.int8),
                  np.empty_like(game.state), ref, None)
    assert np.array_equal(scores, ref[legal])
    seed_numba(3)
    a = ev.action(game.state, game.tables)
    seed_numba(3)
    assert a == greedy_action(game.state, game.tables, DEFAULT_WEIGHTS,
                              np.zeros(N_ACTIONS, np.int8), np.empty_like(game.state), None)


@pytest.mark.parametrize("make", [lambda p: GreedyRollouts(), lambda p: PolicyRollouts(p)])
def test_playouts_are_evaluate_after_determinizing_and_applying_the_action(make, net3):
    """``playouts`` (numba, many at once) is ``evaluate`` of each determinized position after
    its action, seen from the searching player."""
    game = _position(num_players=3, seed=5, moves=40)
    ev = _prepared(make(net3), game)
    s, T = game.state, game.tables
    p = game.current_player
    legal = game.legal_actions()
    actions = np.array([legal[0], legal[-1], legal[0]], np.int64)
    seeds = np.array([11, 11, 12], np.int64)
    out = np.empty(3)
    ev.playouts(s, T, p, actions, seeds, out)
    for a, seed, got in zip(actions, seeds, out):
        buf = s.copy()
        determinize(buf, T, seed)               # seeds numba's stream as playouts does
        apply_action(buf, T, a, None)
        assert ev.evaluate(buf, T)[p] == got
    assert out[0] != out[2]                      # the determinization seed matters


def test_random_rollouts_finish_the_game_from_numbas_stream():
    game = _position(seed=6)
    ev = GreedyRollouts(rollout="random")
    ends = []
    for seed in (1, 1, 2):
        seed_numba(seed)
        end = game.state.copy()
        assert ev.finish(end, game.tables) and L.game_over(end)
        ends.append(end)
    assert np.array_equal(ends[0], ends[1]) and not np.array_equal(ends[0], ends[2])
    values = ev.evaluate(ends[2], game.tables)          # a finished game: its margins
    assert list(values) == [final_margin(ends[2], game.tables, q) for q in range(2)]


def test_network_values_are_the_value_head_and_the_prior_its_softmax(tmp_path):
    path = save_small(tmp_path / "net.zip", 2, seed=6, train={"reward": "score_diff"})
    module, _ = load_network(path, critic=True)
    game = _position(seed=7, moves=25)
    ev = _prepared(NetworkValues(path), game)
    s, T = game.state, game.tables
    p = game.current_player
    obs = np.zeros(OBS_SIZE, np.float32)
    encode_obs(s, T, p, obs)
    with torch.no_grad():
        logits, value = module(torch.as_tensor(obs[None]))
    legal, prior = ev.prior(s, T)
    ref = torch.softmax(logits[0, legal], 0).numpy()
    np.testing.assert_allclose(prior, ref, rtol=1e-4, atol=1e-6)
    values = ev.evaluate(s, T)
    np.testing.assert_allclose(values[p], float(value[0]), rtol=1e-4, atol=1e-6)
    assert values[1 - p] == -values[p]                  # zero-sum for two players
    end = game.state.copy()
    GreedyRollouts().finish(end, T)
    z = np.zeros(4)
    terminal_rewards(end, T, ev.mode, z)
    assert np.array_equal(ev.evaluate(end, T), z[:2] * ev.scale)     # game over: the rewards


def test_searches_take_their_evaluator(net3, tmp_path):
    """``mcts`` with an explicit evaluator is the registered agent; nmcts and puct are built on
    theirs; the flat search refuses an evaluator that cannot play rollouts."""
    game = _position(seed=8)
    made = agents.make("mcts:6", seed=2, rollout="random")
    mine = MCTSAgent(seed=2, rollouts=6, evaluator=GreedyRollouts(rollout="random"))
    assert [made.act(game) for _ in range(2)] == [mine.act(game) for _ in range(2)]
    assert made.last_stats == {**mine.last_stats, "seconds": made.last_stats["seconds"]}
    assert isinstance(agents.make(f"nmctsg:4:{net3}").evaluator, PolicyRollouts)
    assert isinstance(agents.make(f"puctr:4:{net3}").evaluator, NetworkValues)
    assert isinstance(agents.make("mcts").evaluator, RolloutEvaluator)
    with pytest.raises(TypeError, match="RolloutEvaluator"):
        MCTSAgent(evaluator=NetworkValues(net3))


@pytest.mark.parametrize("kw,match", [(dict(rollout="smart"), "rollout must be one of"),
                                      (dict(weights=[1.0, 2.0]), "weights must have")])
def test_greedy_rollouts_reject_bad_options(kw, match):
    with pytest.raises(ValueError, match=match):
        GreedyRollouts(**kw)


def test_network_evaluators_reject_bad_options(net3):
    with pytest.raises(ValueError, match="temperature"):
        PolicyRollouts(net3, temperature=-1)
    with pytest.raises(ValueError, match="opponents"):
        PolicyRollouts(net3, opponents="mcts")
    with pytest.raises(ValueError, match="rollout_mix"):
        NetworkValues(net3, rollout_mix=2)
