"""Self-play PPO with action masking on Ray RLlib: every seat of the PettingZoo env plays the
one shared policy (new API stack, :mod:`caledonia_env.train.rllib_module`'s masking module).

The env is ``caledonia_env.env()`` as it is (PettingZoo's ``observation`` / ``action_mask``
keys, illegal actions penalized so RLlib's env checker can step unmasked samples) in RLlib's
``PettingZooEnv``. Self-play returns sum to zero, so each iteration reports the episode
length, and ``eval_games`` adds the shared policy's win rate against ``random`` (seats
rotated) before and after training. Run on a cluster with::

    python -m caledonia_env.train.rllib_selfplay --address auto --num-env-runners 16 \\
        --iterations 200 --players 4 --checkpoint runs/rllib

Needs ``pip install -e ".[rllib]"``; the cluster's nodes need ``caledonia_env`` installed.
See ``docs/libraries.md`` and ``docs/scale.md``.
"""
from __future__ import annotations

import argparse
import os

from caledonia_env.config import MULTIPLAYER_COUNTS, check_player_count
from caledonia_env.envs.aec import env as aec_env
from caledonia_env.train.library_policies import format_rate, win_rate_vs
from caledonia_env.train.rllib_module import masked_module_spec, module_policy

ENV_NAME = "caledonia_v0"
POLICY = "shared"


def _make_env(env_config):
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv  # optional extra (rllib)
    return PettingZooEnv(aec_env(**dict(env_config)))


def build_config(num_players: int = 2, num_env_runners: int = 0, seed: int = 0,
                 hidden: tuple = (256, 256), train_batch: int = 4000, minibatch: int = 256,
                 **env_options):
    """A ``PPOConfig`` for self-play: all agents map to the policy ``"shared"``."""
    # inside: ray[rllib] is an optional extra (rllib)
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.tune.registry import register_env

    check_player_count(num_players, solo_flag=None)
    if num_env_runners < 0:
        raise ValueError(f"num_env_runners must be >= 0, got {num_env_runners!r}")
    register_env(ENV_NAME, _make_env)
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config=dict(env_options, num_players=num_players))
        .env_runners(num_env_runners=num_env_runners)
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, *a, **k: POLICY)
        .rl_module(rl_module_spec=MultiRLModuleSpec(
            rl_module_specs={POLICY: masked_module_spec(hidden)}))
        .training(train_batch_size_per_learner=train_batch, minibatch_size=minibatch,
                  num_epochs=4, lr=3e-4)
        .debugging(seed=seed)
    )


def shared_win_rate(algo, games: int, num_players: int, seed: int = 0) -> dict:
    """The shared policy (greedy) against ``random``, seats rotated (:func:`win_rate_vs`)."""
    return win_rate_vs(module_policy(algo.get_module(POLICY)), games=games,
                       num_players=num_players, seed=seed)


def train(iterations: int, address: str | None = None, checkpoint: str | None = None,
          eval_games: int = 0, **config_kw) -> list[dict]:
    """Run ``iterations`` PPO iterations (``address=None``: a local Ray for the run);
    returns per iteration the env steps sampled, the episodes and their mean length
    (self-play returns sum to zero: their mean says nothing). ``eval_games > 0`` prints
    the shared policy's win rate against ``random`` before and after training."""
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
        players = config_kw.get("num_players", 2)
        if eval_games:
            print(format_rate("before training", shared_win_rate(algo, eval_games, players)),
                  flush=True)
        history = []
        for i in range(iterations):
            res = algo.train()
            runners = res.get("env_runners", {})
            history.append({"iteration": i + 1,
                            "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
                            "episodes": int(runners.get("num_episodes_lifetime", 0)),
                            "episode_len_mean": float(runners.get("episode_len_mean", 0.0))})
            print(history[-1], flush=True)
        if eval_games:
            print(format_rate("after training", shared_win_rate(algo, eval_games, players)),
                  flush=True)
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
    p.add_argument("--players", type=int, default=2, choices=MULTIPLAYER_COUNTS)
    p.add_argument("--train-batch", type=int, default=4000, help="env steps per iteration")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", default=None, help="folder for the final checkpoint")
    p.add_argument("--eval-games", type=int, default=0,
                   help="games against random before and after training (0: none)")
    a = p.parse_args(argv)
    train(a.iterations, address=a.address, checkpoint=a.checkpoint, eval_games=a.eval_games,
          num_players=a.players,
          num_env_runners=a.num_env_runners, train_batch=a.train_batch,
          minibatch=min(256, a.train_batch), seed=a.seed)
    print("done")


if __name__ == "__main__":
    main()
