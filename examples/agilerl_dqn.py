"""AgileRL: DQN with action masking through AgileRL's off-policy trainer, on the Gymnasium
env (one learning seat; the opponents play their turns inside ``step``). AgileRL's trainer
reads the mask from ``info["action_mask"]``, which the env provides. ``pip install agilerl``
(see docs/libraries.md); run ``python examples/agilerl_dqn.py --steps 5000``.
"""
import argparse

import gymnasium
from agilerl.algorithms import DQN
from agilerl.components.replay_buffer import ReplayBuffer
from agilerl.training.train_off_policy import train_off_policy

from caledonia_env.envs import CaledoniaEnv


def main(steps: int, num_envs: int = 2):
    env = gymnasium.vector.SyncVectorEnv(
        [lambda: CaledoniaEnv(num_players=2, opponents="random") for _ in range(num_envs)])
    agent = DQN(observation_space=env.single_observation_space,
                action_space=env.single_action_space,
                net_config={"encoder_config": {"hidden_size": [128]}},
                batch_size=32, lr=1e-4, learn_step=num_envs, gamma=0.99, tau=1e-3)
    train_off_policy(env, "Caledonia-v0", "DQN", [agent], memory=ReplayBuffer(max_size=10_000),
                     max_steps=steps, evo_steps=steps, eval_steps=None, eval_loop=1,
                     learning_delay=64, verbose=False, wb=False)
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=5000)
    main(p.parse_args().steps)
