"""AgileRL: DQN with action masking through AgileRL's off-policy trainer, on the Gymnasium
env (one learning seat; the opponents play their turns inside ``step``). AgileRL's trainer
reads the mask from ``info["action_mask"]``, which the env provides. Prints the policy's win
rate against ``random`` (seats rotated) before and after training. ``pip install agilerl
peft`` (see docs/libraries.md); run ``python examples/agilerl_dqn.py --steps 20000``.
The multi-agent route (MADDPG on the Parallel view) is ``examples/agilerl_maddpg.py``.

AgileRL's replay buffer keeps no action mask, so DQN's target takes its (double-DQN) argmax
over all 2039 ids of the next state, most of them illegal and never trained: an upward bias
that bootstrapping multiplies by up to 1/(1 - gamma). ``gamma=0.9`` keeps that factor at
10, and ``reward="score_diff"`` (own VP minus the other's, /100) grades every ending. Even
so 20,000 steps do not reliably improve the policy (docs/libraries.md, "Measured here").
"""
import argparse

import gymnasium
import numpy as np
import torch
from agilerl.algorithms import DQN
from agilerl.components.replay_buffer import ReplayBuffer
from agilerl.training.train_off_policy import train_off_policy

from caledonia_env.envs import CaledoniaEnv
from caledonia_env.train.policy_eval import format_rate, win_rate_vs


def greedy(agent):
    return lambda obs, masks: agent.get_action(obs, epsilon=0.0, action_mask=masks)


def main(steps: int, games: int, seed: int, num_envs: int = 2):
    torch.set_num_threads(1)
    np.random.seed(seed)
    torch.manual_seed(seed)
    env = gymnasium.vector.SyncVectorEnv(
        [lambda i=i: CaledoniaEnv(num_players=2, opponents="random", reward="score_diff",
                                  seed=seed * 1000 + i)
         for i in range(num_envs)])
    agent = DQN(observation_space=env.single_observation_space,
                action_space=env.single_action_space,
                net_config={"encoder_config": {"hidden_size": [128]}},
                batch_size=32, lr=1e-4, learn_step=num_envs, gamma=0.9, tau=1e-3)
    print(format_rate("before training", win_rate_vs(greedy(agent), games, seed=seed)))
    train_off_policy(env, "Caledonia-v0", "DQN", [agent], memory=ReplayBuffer(max_size=10_000),
                     max_steps=steps, evo_steps=steps, eval_steps=None, eval_loop=1,
                     learning_delay=64, verbose=False, wb=False)
    print(format_rate("after training", win_rate_vs(greedy(agent), games, seed=seed)))
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--games", type=int, default=200, help="games against random, before and after")
    p.add_argument("--seed", type=int, default=1, help="training and evaluation seed")
    a = p.parse_args()
    main(a.steps, a.games, a.seed)
