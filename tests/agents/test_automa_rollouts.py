"""The searches' rollouts play an Automa seat by its own rules (A-0.1, A-3): the engine moves
it inside each step, so a rollout from the game's state is the game itself."""
import numpy as np
import pytest

from caledonia_env import Game, GameConfig
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS
from caledonia_env.agents.rollouts import greedy_action, greedy_rollout, seed_numba
from caledonia_env.engine.actions import N_ACTIONS


@pytest.mark.parametrize("level,seed", [(1, 3), (5, 8)])
def test_a_greedy_rollout_plays_the_automa_seat_as_the_game_does(level, seed):
    game = Game(GameConfig(num_players=2, seed=seed, clans="draft", automa={1: level}))
    start = game.state.copy()
    seed_numba(seed)
    steps = greedy_rollout(start, game.tables, DEFAULT_WEIGHTS, 100000, game.static.automa_switch)
    seed_numba(seed)
    mask, buf = np.zeros(N_ACTIONS, np.int8), np.empty_like(game.state)
    moves = 0
    while not game.is_terminal:
        assert game.current_player == 0          # the Automa never waits for a decision
        game.step(int(greedy_action(game.state, game.tables, DEFAULT_WEIGHTS, mask, buf,
                                    game.static.automa_switch)))
        moves += 1
    assert steps == moves
    assert np.array_equal(start, game.state)     # same Automa turns, same final state
    assert game.scores()[1] > 0
