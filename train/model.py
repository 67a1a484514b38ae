"""The MaskablePPO model of a run: its network (one shared feature layer, then the policy
and value layers, :class:`agents.checkpoint.Arch`) and the checkpoint tensors it can start
from. Needs the train extra (torch, Stable-Baselines3, sb3-contrib)."""
from __future__ import annotations

import torch.nn as nn
from sb3_contrib import MaskablePPO
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from caledonia_env.agents import checkpoint as ckpt
from caledonia_env.agents.network import FEATURE_ALIASES, activation_class
from caledonia_env.train.config import TrainConfig


class CaledoniaExtractor(BaseFeaturesExtractor):
    """One dense layer shared by the policy and value heads (keeps checkpoints small: most
    weights sit on the 5019-wide input)."""

    def __init__(self, observation_space, features_dim: int = 256, activation: str = "relu"):
        super().__init__(observation_space, features_dim)
        self.net = nn.Sequential(nn.Linear(observation_space.shape[0], features_dim),
                                 activation_class(activation)())

    def forward(self, obs):
        return self.net(obs)


def policy_kwargs(arch: ckpt.Arch) -> dict:
    """MaskablePPO's ``policy_kwargs`` for an architecture."""
    return dict(features_extractor_class=CaledoniaExtractor,
                features_extractor_kwargs=dict(features_dim=arch.features_dim,
                                               activation=arch.activation),
                net_arch=dict(pi=list(arch.pi), vf=list(arch.vf)),
                activation_fn=activation_class(arch.activation))


def build_model(cfg: TrainConfig, env):
    """A MaskablePPO with the run's hyperparameters and network on ``env``."""
    arch = cfg.arch()
    model = MaskablePPO("MlpPolicy", env, learning_rate=cfg.learning_rate, n_steps=cfg.n_steps,
                        batch_size=cfg.batch_size, n_epochs=cfg.n_epochs, gamma=cfg.gamma,
                        gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_range,
                        ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef,
                        max_grad_norm=cfg.max_grad_norm, policy_kwargs=policy_kwargs(arch),
                        seed=cfg.seed, device="cpu", verbose=0)
    model.caledonia_arch = arch
    return model


def with_extractor_aliases(sd: dict) -> dict:
    """SB3 lists a shared features extractor three times (``features_extractor``,
    ``pi_features_extractor``, ``vf_features_extractor``); a file written outside SB3
    (``caledonia expert``) holds it once. Add the two aliases where they are missing."""
    out = dict(sd)
    for k, v in sd.items():
        if k.startswith("features_extractor.net."):
            for alias in FEATURE_ALIASES:
                out.setdefault(alias + k[len("features_extractor.net."):], v)
    return out
