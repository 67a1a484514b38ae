"""AgileRL: PPO with action masking through AgileRL's on-policy trainer, on the Gymnasium env.

AgileRL's single-agent on-policy route (``PPO`` + ``train_on_policy`` over a Gymnasium
vector env) with only the env swapped: ``CaledoniaEnv`` (one learning seat, the opponents
play their turns inside ``step``). AgileRL's rollout collector reads ``info["action_mask"]``
at every step and its rollout buffer keeps the masks for the PPO update, so this is masked
PPO, the route that learns on this action space (docs/libraries.md). Two settings differ
from AgileRL's defaults: ``rollout_buffer_config={"use_gae": False}`` (AgileRL 2.58's GAE
pairs each step with the *next* step's done flag, so the terminal reward of a game never
reaches the steps before its last one; its Monte-Carlo returns pair them right) and
``autoreset_mode=SAME_STEP`` for the Gymnasium vector env (the default ``NEXT_STEP``
inserts a step whose observation is the finished game's, with an all-zero mask). Prints the policy's win
rate against ``random`` (seats rotated, the policy's most likely legal action) before and
after training.
``pip install agilerl peft`` (see docs/libraries.md); run ``python examples/agilerl_ppo.py``.
AgileRL's multi-agent route (MADDPG on the Parallel view) is ``examples/agilerl_maddpg.py``;
AgileRL 2.58's multi-agent PPO (IPPO) cannot read numpy masks (docs/libraries.md).
"""
import argparse

import gymnasium
import numpy as np
import torch
from agilerl.algorithms import PPO
from agilerl.training.train_on_policy import train_on_policy

from caledonia_env.envs import CaledoniaEnv
from caledonia_env.train.library_policies import format_rate, win_rate_vs


def greedy(agent):
    """The policy's most likely legal action as ``policy(obs, masks)``: ``get_action`` with
    the mask, then the mode of the masked distribution it built (``actor.head_net.dist``)."""
    def policy(obs, masks):
        agent.set_training_mode(False)
        agent.get_action(obs, action_mask=masks)
        logits = agent.actor.head_net.dist.logits.detach().numpy()
        return np.where(masks > 0, logits, -np.inf).argmax(axis=1)
    return policy


def main(steps: int, games: int, seed: int, num_envs: int = 8):
    torch.set_num_threads(1)
    np.random.seed(seed)
    torch.manual_seed(seed)
    env = gymnasium.vector.SyncVectorEnv(
        [lambda i=i: CaledoniaEnv(num_players=2, opponents="random", reward="score_diff",
                                  seed=seed * 1000 + i)
         for i in range(num_envs)],
        autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    agent = PPO(observation_space=env.single_observation_space,
                action_space=env.single_action_space,
                net_config={"encoder_config": {"hidden_size": [128]}},
                num_envs=num_envs, learn_step=2048, batch_size=256, lr=3e-4,
                gamma=0.99, ent_coef=0.01, update_epochs=10,
                # Monte-Carlo returns: AgileRL 2.58's GAE reads the done flag of the step
                # after each step, one off from what its collector stores (docs/libraries.md)
                rollout_buffer_config={"use_gae": False})
    print(format_rate("before training", win_rate_vs(greedy(agent), games, seed=seed)))
    train_on_policy(env, "Caledonia-v0", "PPO", [agent], max_steps=steps, evo_steps=steps,
                    eval_steps=None, eval_loop=1, verbose=False, wb=False)
    print(format_rate("after training", win_rate_vs(greedy(agent), games, seed=seed)))
    env.close()
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=60_000, help="learner steps of training")
    p.add_argument("--games", type=int, default=200, help="games against random, before and after")
    p.add_argument("--seed", type=int, default=1, help="training and evaluation seed")
    a = p.parse_args()
    main(a.steps, a.games, a.seed)
