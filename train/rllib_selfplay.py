"""Self-play PPO with action masking on Ray RLlib: every seat of the PettingZoo env plays the
one shared policy (new API stack, ``ActionMaskingTorchRLModule``).

The env is :func:`caledonia_env.envs.adapters.rllib_env` (RLlib's ``observations`` key,
illegal actions penalized so RLlib's env checker can step unmasked samples) in RLlib's
``PettingZooEnv``. Run on a cluster with::

    python -m caledonia_env.train.rllib_selfplay --address auto --num-env-runners 16 \\
        --iterations 200 --players 4 --checkpoint runs/rllib

Needs ``pip install -e ".[rllib]"``; the cluster's nodes need ``caledonia_env`` installed.
See ``docs/libraries.md`` and ``docs/scale.md``.
"""
from __future__ import annotations

import argparse
import os

from ..envs.adapters import rllib_env

ENV_NAME = "caledonia_v0"
POLICY = "shared"


def _make_env(env_config):
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv  # optional extra (rllib)
    return PettingZooEnv(rllib_env(**dict(env_config)))


def build_config(num_players: int = 2, num_env_runners: int = 0, seed: int = 0,
                 hidden: tuple = (256, 256), train_batch: int = 4000, minibatch: int = 256,
                 **env_options):
    """A ``PPOConfig`` for self-play: all agents map to the policy ``"shared"``."""
    # inside: ray[rllib] is an optional extra (rllib)
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )
    from ray.tune.registry import register_env

    if num_players not in (2, 3, 4):
        raise ValueError(f"num_players must be 2, 3 or 4, got {num_players!r}")
    if num_env_runners < 0:
        raise ValueError(f"num_env_runners must be >= 0, got {num_env_runners!r}")
    register_env(ENV_NAME, _make_env)
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=dict(env_options, num_players=num_players))
        .env_runners(num_env_runners=num_env_runners)
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, *a, **k: POLICY)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY: RLModuleSpec(
            module_class=ActionMaskingTorchRLModule,
            model_config={"head_fcnet_hiddens": list(hidden)})}))
        .training(train_batch_size_per_learner=train_batch, minibatch_size=minibatch,
                  num_epochs=4, lr=3e-4)
        .debugging(seed=seed)
    )


def train(iterations: int, address: str | None = None, checkpoint: str | None = None,
          **config_kw) -> list[dict]:
    """Run ``iterations`` PPO iterations (``address=None``: a local Ray for the run);
    returns per iteration the env steps sampled and the mean episode return."""
    import ray                  # inside: ray is an optional extra (rllib)
    if iterations < 1:
        raise ValueError(f"iterations must be >= 1, got {iterations!r}")
    started = not ray.is_initialized()
    if started:
        if address is None:
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1",
                     runtime_env={"env_vars": {"PYTHONPATH": root}})
        else:
            ray.init(address=address)
    try:
        algo = build_config(**config_kw).build_algo()
        history = []
        for i in range(iterations):
            res = algo.train()
            runners = res.get("env_runners", {})
            history.append({"iteration": i + 1,
                            "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
                            "episodes": int(runners.get("num_episodes_lifetime", 0)),
                            "episode_return_mean": runners.get("episode_return_mean")})
            print(history[-1], flush=True)
        if checkpoint:
            algo.save_to_path(os.path.abspath(checkpoint))
        algo.stop()
        return history
    finally:
        if started:
            ray.shutdown()


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description="Self-play PPO with action masking on Ray RLlib.")
    p.add_argument("--address", default=None,
                   help="Ray cluster address ('auto', 'host:6379'); default: a local Ray")
    p.add_argument("--num-env-runners", type=int, default=0,
                   help="sampling workers (0: sample in the driver)")
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--train-batch", type=int, default=4000, help="env steps per iteration")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", default=None, help="folder for the final checkpoint")
    a = p.parse_args(argv)
    train(a.iterations, address=a.address, checkpoint=a.checkpoint, num_players=a.players,
          num_env_runners=a.num_env_runners, train_batch=a.train_batch,
          minibatch=min(256, a.train_batch), seed=a.seed)
    print("done")


if __name__ == "__main__":
    main()
