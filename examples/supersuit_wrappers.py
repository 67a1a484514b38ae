"""SuperSuit: its wrappers and vectorisation on the flat-observation envs, then SB3's PPO.

PettingZoo's SB3 + SuperSuit tutorial route with only the env swapped:
``caledonia_env.parallel_env(obs_type="flat")`` (a Box observation, the mask in
``infos``; every agent acts each step, the waiting ones with ``WAIT``) through
``pad_observations_v0``, ``flatten_v0``, ``pettingzoo_env_to_vec_env_v1`` and
``concat_vec_envs_v1(..., base_class="stable_baselines3")``, trained with sb3-contrib's
``MaskablePPO`` in place of the tutorial's ``PPO``: plain PPO ignores the mask and, with a
median 11 legal ids among 2040, mostly learns which ids are seldom illegal
(``--algo ppo`` keeps that route: an illegal choice ends the game with -1 for the decider).
MaskablePPO reads the masks that the env puts in ``infos`` through
``caledonia_env.train.sb3_masks.InfoActionMasks``, the one line added. SuperSuit's
observation wrappers work on the AEC env too
(``frame_stack_v1(caledonia_env.env(obs_type="flat"))``). Prints the policy's win rate
against ``random`` (greedy among the legal actions, seats rotated) before and after
training. ``pip install supersuit sb3-contrib``; run
``python examples/supersuit_wrappers.py``. Measured in docs/libraries.md ("Measured here").
"""
import argparse
import warnings

import numpy as np
import supersuit as ss
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO

import caledonia_env
from caledonia_env.train.library_policies import format_rate, win_rate_vs
from caledonia_env.train.sb3_masks import InfoActionMasks


def vec_env(num_envs: int, shaping: float = 0.0):
    env = caledonia_env.parallel_env(num_players=2, obs_type="flat", reward="score_diff",
                                     shaping=shaping)
    env = ss.flatten_v0(ss.pad_observations_v0(env))
    env = ss.pettingzoo_env_to_vec_env_v1(env)
    return ss.concat_vec_envs_v1(env, num_envs, num_cpus=1, base_class="stable_baselines3")


def masked_greedy(model):
    """The PPO policy's most likely legal action as ``policy(obs, masks)``."""
    def policy(obs, masks):
        with torch.no_grad():
            dist = model.policy.get_distribution(torch.as_tensor(obs))
            logits = dist.distribution.logits.numpy()[:, :masks.shape[1]]   # drop WAIT
        return np.where(masks > 0, logits, -np.inf).argmax(axis=1)
    return policy


def aec_wrappers_work():
    env = ss.frame_stack_v1(ss.clip_reward_v0(caledonia_env.env(num_players=2, obs_type="flat"),
                                              lower_bound=-0.5, upper_bound=0.5), 2)
    env.reset(seed=0)
    obs, *_ , info = env.last()
    print(f"frame_stack_v1 on the flat AEC env: observation {obs.shape}, "
          f"{int(info['action_mask'].sum())} legal actions in infos")


def main(steps: int, games: int, seed: int, algo: str, shaping: float, num_envs: int = 4):
    torch.set_num_threads(1)
    np.random.seed(seed)
    if algo == "ppo":   # plain PPO samples illegal ids until it learns: one warning each
        warnings.filterwarnings("ignore", message=".*illegal action by")
    aec_wrappers_work()
    torch.manual_seed(seed)
    env = vec_env(num_envs, shaping)  # no seed= for PPO: SuperSuit's ConcatVecEnv has no seed()
    if algo == "maskable":
        model = MaskablePPO("MlpPolicy", InfoActionMasks(env), n_steps=256, batch_size=256,
                            learning_rate=3e-4, verbose=0)
    else:
        model = PPO("MlpPolicy", env, n_steps=256, batch_size=256, learning_rate=3e-4, verbose=0)
    print(format_rate("before training", win_rate_vs(masked_greedy(model), games, seed=seed)))
    model.learn(steps)
    print(format_rate("after training", win_rate_vs(masked_greedy(model), games, seed=seed)))
    env.close()
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=50_000, help="agent steps of training")
    p.add_argument("--games", type=int, default=200, help="games against random, before and after")
    p.add_argument("--seed", type=int, default=1, help="training and evaluation seed")
    p.add_argument("--algo", choices=("maskable", "ppo"), default="maskable",
                   help="sb3-contrib's MaskablePPO (masks from infos) or the tutorial's plain PPO")
    p.add_argument("--shaping", type=float, default=0.0, help="the env's reward shaping weight")
    a = p.parse_args()
    main(a.steps, a.games, a.seed, a.algo, a.shaping)
