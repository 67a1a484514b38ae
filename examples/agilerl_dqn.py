"""AgileRL: DQN with action masking through AgileRL's off-policy trainer, on the Gymnasium
env (one learning seat; the opponents play their turns inside ``step``). AgileRL's trainer
reads the mask from ``info["action_mask"]``, which the env provides. Prints the policy's win
rate against ``random`` (seats rotated) before and after training. ``pip install agilerl
peft`` (see docs/libraries.md); run ``python examples/agilerl_dqn.py --steps 20000``.
The multi-agent route (MADDPG on the Parallel view) is ``examples/agilerl_maddpg.py``.
"""
import argparse

import gymnasium
from agilerl.algorithms import DQN
from agilerl.components.replay_buffer import ReplayBuffer
from agilerl.training.train_off_policy import train_off_policy

from caledonia_env.envs import CaledoniaEnv
from caledonia_env.train.policy_eval import format_rate, win_rate_vs


def greedy(agent):
    return lambda obs, masks: agent.get_action(obs, epsilon=0.0, action_mask=masks)


def main(steps: int, games: int, num_envs: int = 2, seed: int = 0):
    env = gymnasium.vector.SyncVectorEnv(
        [lambda: CaledoniaEnv(num_players=2, opponents="random") for _ in range(num_envs)])
    agent = DQN(observation_space=env.single_observation_space,
                action_space=env.single_action_space,
                net_config={"encoder_config": {"hidden_size": [128]}},
                batch_size=32, lr=1e-4, learn_step=num_envs, gamma=0.99, tau=1e-3)
    print(format_rate("before training", win_rate_vs(greedy(agent), games, seed=seed)))
    train_off_policy(env, "Caledonia-v0", "DQN", [agent], memory=ReplayBuffer(max_size=10_000),
                     max_steps=steps, evo_steps=steps, eval_steps=None, eval_loop=1,
                     learning_delay=64, verbose=False, wb=False)
    print(format_rate("after training", win_rate_vs(greedy(agent), games, seed=seed)))
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=20_000)
    p.add_argument("--games", type=int, default=100, help="games against random, before and after")
    a = p.parse_args()
    main(a.steps, a.games)
