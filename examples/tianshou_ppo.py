"""Tianshou 2.0: masked PPO on the Gymnasium env (one learning seat against random opponents).

Tianshou's single-agent on-policy route (``PPO`` + ``OnPolicyTrainerParams`` over a
``DummyVectorEnv`` of ``gymnasium.make(...)`` envs) with the env swapped for
``Caledonia-v0`` (the opponents play their turns inside ``step``). Tianshou reads an action
mask from ``obs.mask`` when an observation is a dict with the keys ``obs`` and ``mask``
(its convention, as in its PettingZoo wrapper); :class:`TianshouMask` gives the env's
observation that form from ``info["action_mask"]``. Tianshou's DQN applies such a mask
itself; its policy-gradient algorithms hand ``obs`` to the actor network, so
:class:`MaskedActor` sets the logits of illegal actions to -1e9 before the categorical
distribution is built. Prints the policy's win rate against ``random`` (seats rotated, its
most likely legal action) before and after training.
``pip install tianshou`` (see docs/libraries.md); run ``python examples/tianshou_ppo.py``.
The multi-agent route of Tianshou's ``tic_tac_toe`` tutorial is ``examples/tianshou_dqn.py``.
"""
import argparse

import gymnasium
import numpy as np
import torch
from gymnasium import spaces
from tianshou.algorithm import PPO
from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.trainer import OnPolicyTrainerParams

import caledonia_env  # noqa: F401  (registers Caledonia-v0)
from caledonia_env.train.library_policies import format_rate, win_rate_vs


class TianshouMask(gymnasium.Wrapper):
    """The observation as ``{"obs": float32[5019], "mask": bool[2039]}`` (Tianshou's keys),
    the mask taken from ``info["action_mask"]`` (all False once the game is over)."""

    def __init__(self, env):
        super().__init__(env)
        self.observation_space = spaces.Dict({
            "obs": env.observation_space,
            "mask": spaces.MultiBinary(int(env.action_space.n))})

    def _wrap(self, obs, info):
        return {"obs": obs, "mask": info["action_mask"].astype(bool)}

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._wrap(obs, info), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._wrap(obs, info), reward, terminated, truncated, info


def mlp(n_in, n_out, hidden=128):
    return torch.nn.Sequential(torch.nn.Linear(n_in, hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                               torch.nn.Linear(hidden, n_out))


class MaskedActor(torch.nn.Module):
    """Logits of the legal actions; -1e9 for the others (a finite value: the terminal
    observation, whose mask is empty, gives a uniform distribution instead of NaN)."""

    def __init__(self, n_obs, n_actions):
        super().__init__()
        self.net = mlp(n_obs, n_actions)

    def forward(self, obs, state=None, info=None):
        logits = self.net(torch.as_tensor(obs.obs, dtype=torch.float32))
        legal = torch.as_tensor(obs.mask, dtype=torch.bool)
        return logits.masked_fill(~legal, -1e9), state


class Critic(torch.nn.Module):
    def __init__(self, n_obs):
        super().__init__()
        self.net = mlp(n_obs, 1)

    def forward(self, obs, **kwargs):
        return self.net(torch.as_tensor(obs.obs, dtype=torch.float32))


def make_env():
    return TianshouMask(gymnasium.make("Caledonia-v0", num_players=2, opponents="random",
                                       reward="score_diff"))


def greedy(actor):
    """The actor's most likely legal action as ``policy(obs, masks)``."""
    def policy(obs, masks):
        with torch.no_grad():
            logits = actor.net(torch.as_tensor(obs)).numpy()
        return np.where(masks > 0, logits, -np.inf).argmax(axis=1)
    return policy


def main(steps: int, games: int, seed: int, envs: int = 8):
    torch.set_num_threads(1)
    np.random.seed(seed)
    torch.manual_seed(seed)
    env = make_env()
    n_obs = env.observation_space["obs"].shape[0]
    actor, critic = MaskedActor(n_obs, env.action_space.n), Critic(n_obs)
    algo = PPO(policy=DiscreteActorPolicy(actor=actor, action_space=env.action_space,
                                          deterministic_eval=True),
               critic=critic, optim=AdamOptimizerFactory(lr=3e-4), gamma=0.99,
               gae_lambda=0.95, ent_coef=0.01, max_grad_norm=0.5)
    train_envs = DummyVectorEnv([make_env for _ in range(envs)])
    train_envs.seed(seed)
    collector = Collector[CollectStats](algo, train_envs, VectorReplayBuffer(2048, envs))
    print(format_rate("before training", win_rate_vs(greedy(actor), games, seed=seed)))
    collector.reset()
    result = algo.run_training(OnPolicyTrainerParams(
        training_collector=collector, max_epochs=1, epoch_num_steps=steps,
        collection_step_num_env_steps=2048, batch_size=256, update_step_num_repetitions=10,
        test_in_training=False, show_progress=False))
    print(result)
    print(format_rate("after training", win_rate_vs(greedy(actor), games, seed=seed)))
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=60_000, help="env steps of the training epoch")
    p.add_argument("--games", type=int, default=200, help="games against random, before and after")
    p.add_argument("--seed", type=int, default=1, help="training and evaluation seed")
    a = p.parse_args()
    main(a.steps, a.games, a.seed)
