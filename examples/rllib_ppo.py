"""Ray RLlib: PPO with action masking on the PettingZoo env as RLlib's docs show it.

RLlib's PettingZoo route with only the env swapped: ``register_env`` of
``PettingZooEnv(caledonia_env.env())``, a ``PPOConfig`` mapping every seat to one shared
policy, whose RLModule is :mod:`caledonia_env.train.rllib_module` (RLlib has no default
encoder for the Dict observation; this module reads PettingZoo's ``observation`` /
``action_mask`` keys). Self-play returns sum to zero, so the script prints the shared
policy's win rate against ``random`` (seats rotated) before and after training.
``pip install -e ".[rllib]"``; run ``python examples/rllib_ppo.py``
(8 iterations: win rate 0.40 -> 0.85 measured;
``python -m caledonia_env.train.rllib_selfplay`` is the same run for a cluster).
"""
import argparse

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env

import caledonia_env
from caledonia_env.train.library_policies import format_rate, win_rate_vs
from caledonia_env.train.rllib_module import masked_module_spec, module_policy


def main(iterations: int, games: int, train_batch: int = 2000, seed: int = 0):
    # "local": a new Ray instance on this machine, never the cluster another program
    # started (Ray's default joins the one /tmp/ray/ray_current_cluster names, even a dead one)
    ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1")
    register_env("caledonia", lambda cfg: PettingZooEnv(caledonia_env.env(**cfg)))
    config = (
        PPOConfig()
        .environment("caledonia", env_config={"num_players": 2})
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, *a, **k: "shared")
        .rl_module(rl_module_spec=MultiRLModuleSpec(
            rl_module_specs={"shared": masked_module_spec(hidden=(128, 128))}))
        .training(train_batch_size_per_learner=train_batch, minibatch_size=min(250, train_batch),
                  num_epochs=4, lr=3e-4)
        .debugging(seed=seed)
    )
    algo = config.build_algo()
    policy = module_policy(algo.get_module("shared"))
    print(format_rate("before training", win_rate_vs(policy, games, seed=seed)))
    for i in range(iterations):
        runners = algo.train()["env_runners"]
        print(f"iteration {i + 1}: {int(runners['num_env_steps_sampled_lifetime'])} env steps, "
              f"episode length {runners['episode_len_mean']:.0f}")
    policy = module_policy(algo.get_module("shared"))       # the trained weights
    print(format_rate("after training", win_rate_vs(policy, games, seed=seed)))
    algo.stop()
    ray.shutdown()
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--iterations", type=int, default=8)
    p.add_argument("--games", type=int, default=100, help="games against random, before and after")
    p.add_argument("--train-batch", type=int, default=2000, help="env steps per iteration")
    a = p.parse_args()
    main(a.iterations, a.games, a.train_batch)
