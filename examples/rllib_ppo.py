"""Ray RLlib: self-play PPO with action masking on the PettingZoo env (all seats share one
policy). The env goes through ``caledonia_env.envs.adapters.rllib_env`` (RLlib's
``observations`` key) and RLlib's ``PettingZooEnv``; the trainer is
``caledonia_env.train.rllib_selfplay``. ``pip install -e ".[rllib]"``; run
``python examples/rllib_ppo.py --iterations 5`` (add ``--address auto`` on a cluster).
"""
import argparse

from caledonia_env.train.rllib_selfplay import train

if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--iterations", type=int, default=5)
    p.add_argument("--address", default=None)
    p.add_argument("--num-env-runners", type=int, default=1)
    a = p.parse_args()
    train(a.iterations, address=a.address, num_players=2, num_env_runners=a.num_env_runners,
          train_batch=400, minibatch=100)
    print("done")
