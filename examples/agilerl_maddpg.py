"""AgileRL: multi-agent MADDPG through AgileRL's vectorised PettingZoo envs, on the Parallel view.

AgileRL's multi-agent tutorial route with only the env swapped: ``AsyncPettingZooVecEnv``
over ``caledonia_env.parallel_env(obs_type="flat")`` (a Box observation; AgileRL reads the
mask from ``info["action_mask"]`` and refuses it inside the observation), ``MADDPG``, a
``ReplayBuffer`` and ``train_multi_agent_off_policy``. The waiting seat's mask allows only
``WAIT``. (AgileRL 2.58's IPPO cannot read any numpy action mask: its
``extract_action_masks`` tests ``None in [masks]``, which raises "truth value of an array
... is ambiguous"; docs/libraries.md.) Prints the policy's win rate against ``random``
(seats rotated) before and after training, ``player_0``'s actor playing every seat.
``pip install agilerl peft`` (docs/libraries.md); run ``python examples/agilerl_maddpg.py``.
The route runs but does not learn: MADDPG's critic scores the actor's continuous
2040-long output, not the masked argmax the env applies. Neither a reward at every step
(``--shaping 1``) nor 100,000 steps changed that (docs/libraries.md, "Measured here").
"""
import argparse

import numpy as np
import torch
from agilerl.algorithms import MADDPG
from agilerl.components.replay_buffer import ReplayBuffer
from agilerl.training.train_multi_agent_off_policy import train_multi_agent_off_policy
from agilerl.vector.pz_async_vec_env import AsyncPettingZooVecEnv

import caledonia_env
from caledonia_env.train.library_policies import format_rate, win_rate_vs


def make_env(shaping=0.0):
    return caledonia_env.parallel_env(num_players=2, obs_type="flat", shaping=shaping)


def seat_policy(agent):
    """``player_0``'s actor as ``policy(obs, masks)`` (masks padded with WAIT = 0)."""
    def policy(obs, masks):
        wait = np.zeros((len(masks), 1), masks.dtype)
        agent.set_training_mode(False)
        action, _ = agent.get_action(obs={"player_0": obs},
                                     infos={"player_0": {"action_mask": np.hstack([masks, wait])}})
        return action["player_0"]
    return policy


def main(steps: int, games: int, seed: int, shaping: float, gamma: float, num_envs: int = 2):
    torch.set_num_threads(1)
    np.random.seed(seed)
    torch.manual_seed(seed)
    env = AsyncPettingZooVecEnv([lambda: make_env(shaping) for _ in range(num_envs)])
    env.reset(seed=seed)
    agent_ids = env.agents
    agent = MADDPG(observation_spaces=[env.single_observation_space(a) for a in agent_ids],
                   action_spaces=[env.single_action_space(a) for a in agent_ids],
                   agent_ids=agent_ids, net_config={"encoder_config": {"hidden_size": [128]}},
                   batch_size=64, lr_actor=1e-4, lr_critic=1e-3, learn_step=num_envs * 4,
                   gamma=gamma, tau=0.01, vect_noise_dim=num_envs)
    print(format_rate("before training", win_rate_vs(seat_policy(agent), games, seed=seed)))
    train_multi_agent_off_policy(env, "caledonia_parallel_v0", "MADDPG", [agent],
                                 memory=ReplayBuffer(max_size=20_000), max_steps=steps,
                                 evo_steps=steps, eval_steps=None, learning_delay=256,
                                 sum_scores=False, verbose=False, wb=False)
    print(format_rate("after training", win_rate_vs(seat_policy(agent), games, seed=seed)))
    env.close()
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=20_000, help="env steps of training")
    p.add_argument("--games", type=int, default=200, help="games against random, before and after")
    p.add_argument("--seed", type=int, default=1, help="training and evaluation seed")
    p.add_argument("--shaping", type=float, default=0.0,
                   help="the env's reward shaping weight (docs/envs.md)")
    p.add_argument("--gamma", type=float, default=0.99, help="MADDPG's discount")
    a = p.parse_args()
    main(a.steps, a.games, a.seed, a.shaping, a.gamma)
