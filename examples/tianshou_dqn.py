"""Tianshou 2.0: masked DQN for player_0 against Tianshou's masked random player, 2 players.

Tianshou's ``tic_tac_toe`` tutorial with only the env swapped: its ``PettingZooEnv`` reads
``obs["action_mask"]`` and keeps the infos in its replay buffer (so they must hold no None).
Prints the learner's greedy win rate against ``random`` (seats rotated) before and after
training. ``pip install tianshou`` (see docs/libraries.md);
run ``python examples/tianshou_dqn.py --steps 20000``.
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
from caledonia_env.train.policy_eval import format_rate, win_rate_vs


def make_env():
    return PettingZooEnv(caledonia_env.env(num_players=2))


def greedy(net):
    """The Q-network's best legal action as ``policy(obs, masks)``."""
    def policy(obs, masks):
        with torch.no_grad():
            q = net(torch.as_tensor(obs))[0].numpy()
        return np.where(masks > 0, q, -np.inf).argmax(axis=1)
    return policy


def main(steps: int, games: int, envs: int = 2, seed: int = 0):
    np.random.seed(seed)
    torch.manual_seed(seed)
    env = make_env()
    obs_space = env.observation_space["observation"]
    net = Net(state_shape=obs_space.shape, action_shape=env.action_space.n, hidden_sizes=[128, 128])
    learner = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                                 eps_training=0.1, eps_inference=0.05),
                  optim=AdamOptimizerFactory(lr=1e-4), gamma=0.99, n_step_return_horizon=1,
                  target_update_freq=100)
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algo = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)
    train_envs = DummyVectorEnv([make_env for _ in range(envs)])
    test_envs = DummyVectorEnv([make_env for _ in range(1)])
    train_envs.seed(seed)
    test_envs.seed(seed + 1)
    collector = Collector[CollectStats](algo, train_envs, VectorReplayBuffer(10_000, envs),
                                        exploration_noise=True)
    print(format_rate("before training", win_rate_vs(greedy(net), games, seed=seed)))
    collector.reset()
    collector.collect(n_step=64 * envs)
    result = algo.run_training(OffPolicyTrainerParams(
        training_collector=collector,
        test_collector=Collector[CollectStats](algo, test_envs, exploration_noise=True),
        max_epochs=1, epoch_num_steps=steps, collection_step_num_env_steps=10,
        test_step_num_episodes=1, batch_size=32, update_step_num_gradient_steps_per_sample=0.1,
        test_in_training=False, show_progress=False, multi_agent_return_reduction=lambda r: r[:, 0]))
    print(result)
    print(format_rate("after training", win_rate_vs(greedy(net), games, seed=seed)))
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=20_000, help="env steps of the training epoch")
    p.add_argument("--games", type=int, default=100, help="games against random, before and after")
    a = p.parse_args()
    main(a.steps, a.games)
