"""Tianshou 2.0: masked DQN for player_0 against Tianshou's masked random player, 2 players.

Tianshou's ``tic_tac_toe`` tutorial with the env swapped: its ``PettingZooEnv`` reads
``obs["action_mask"]`` and keeps the infos in its replay buffer (so they must hold no None).
Prints the learner's greedy win rate against ``random`` (seats rotated) before and after
training. ``pip install tianshou`` (see docs/libraries.md); run
``python examples/tianshou_dqn.py`` (defaults: 40,000 env steps, seed 1).

What differs from the tutorial: the hyperparameters, the env's ``reward="score_diff"``
(own VP minus the other's, /100: the graded terminal reward) and one info key. In
``MultiAgentOffPolicyAlgorithm`` the learner's transition ends where the *next agent*
moves, so its one-step target ``Q(obs_next)`` is read from the opponent's observation and
mask (about 70% of the learner's steps here hand the turn over), states its Q-network is
never trained on; and when the opponent makes the game's last move (about 43% of the
games), the learner's last transition is not terminal and never sees the outcome. With the
tutorial's one-step targets the greedy policy collapsed. Here the n-step horizon
(``N_STEP`` = 128) exceeds the longest 2-player game (about 120 AEC steps, both agents), so
every finished game gives the learner a Monte-Carlo return: *its* reward column summed
over the following buffer steps, opponent steps included, to the end of the game. Tianshou
2.0.1's trainer scans the whole replay buffer for NaN after every collection step, hence
256 env steps per collection. The policy no longer
collapses, but 40,000 steps (about 6 CPU-minutes) do not clearly improve it, nor do 160,000
steps with a reward at every step (``--shaping 1``, docs/libraries.md, "Measured here").
"""
import argparse

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import caledonia_env
from caledonia_env.train.library_policies import format_rate, win_rate_vs

N_STEP = 128        # > the longest 2-player game in AEC steps: Monte-Carlo returns


def make_env(shaping=0.0):
    return PettingZooEnv(caledonia_env.env(num_players=2, reward="score_diff", shaping=shaping))


def greedy(net):
    """The Q-network's best legal action as ``policy(obs, masks)``."""
    def policy(obs, masks):
        with torch.no_grad():
            q = net(torch.as_tensor(obs))[0].numpy()
        return np.where(masks > 0, q, -np.inf).argmax(axis=1)
    return policy


def main(steps: int, games: int, seed: int, shaping: float, gamma: float, n_step: int,
         envs: int = 2):
    torch.set_num_threads(1)
    np.random.seed(seed)
    torch.manual_seed(seed)
    env = make_env(shaping)
    obs_space = env.observation_space["observation"]
    net = Net(state_shape=obs_space.shape, action_shape=env.action_space.n, hidden_sizes=[128, 128])
    learner = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                                 eps_training=0.1, eps_inference=0.05),
                  optim=AdamOptimizerFactory(lr=5e-4), gamma=gamma,
                  n_step_return_horizon=n_step, target_update_freq=500)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algo = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)
    train_envs = DummyVectorEnv([lambda: make_env(shaping) for _ in range(envs)])
    test_envs = DummyVectorEnv([lambda: make_env(shaping)])
    train_envs.seed(seed)
    test_envs.seed(seed + 1)
    collector = Collector[CollectStats](algo, train_envs, VectorReplayBuffer(10_000, envs),
                                        exploration_noise=True)
    print(format_rate("before training", win_rate_vs(greedy(net), games, seed=seed)))
    collector.reset()
    collector.collect(n_step=128 * envs)
    result = algo.run_training(OffPolicyTrainerParams(
        training_collector=collector,
        test_collector=Collector[CollectStats](algo, test_envs, exploration_noise=True),
        max_epochs=1, epoch_num_steps=steps, collection_step_num_env_steps=256,
        test_step_num_episodes=1, batch_size=64, update_step_num_gradient_steps_per_sample=0.25,
        test_in_training=False, show_progress=False, multi_agent_return_reduction=lambda r: r[:, 0]))
    print(result)
    print(format_rate("after training", win_rate_vs(greedy(net), games, seed=seed)))
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=40_000, help="env steps of the training epoch")
    p.add_argument("--games", type=int, default=200, help="games against random, before and after")
    p.add_argument("--seed", type=int, default=1, help="training and evaluation seed")
    p.add_argument("--shaping", type=float, default=0.0,
                   help="the env's reward shaping weight (docs/envs.md)")
    p.add_argument("--gamma", type=float, default=0.999, help="DQN's discount")
    p.add_argument("--n-step", type=int, default=N_STEP, help="DQN's n-step return horizon")
    a = p.parse_args()
    main(a.steps, a.games, a.seed, a.shaping, a.gamma, a.n_step)
