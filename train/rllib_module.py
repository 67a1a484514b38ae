"""A small action-masking RLModule (torch) for RLlib's new API stack, reading PettingZoo's keys.

``PettingZooEnv(caledonia_env.env())`` hands RLlib the env's own Dict observation
``{"observation": float32[OBS_SIZE], "action_mask": int8[N_ACTIONS]}``. RLlib has no
default encoder for a Dict space, and the masking module in its examples folder expects
the key ``"observations"``; this module reads the PettingZoo keys as they are, so the env
goes into RLlib unchanged, as RLlib's docs show for PettingZoo games::

    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env
    from caledonia_env.train.rllib_module import masked_module_spec
    register_env("caledonia", lambda cfg: PettingZooEnv(caledonia_env.env(**cfg)))
    config = (PPOConfig().environment("caledonia")
              .multi_agent(policies={"shared"}, policy_mapping_fn=lambda aid, *a, **k: "shared")
              .rl_module(rl_module_spec=MultiRLModuleSpec(
                  rl_module_specs={"shared": masked_module_spec()})))

The module: an MLP trunk on the observation, a policy head whose logits of illegal actions
are set to the float32 minimum (never sampled, no NaN when a terminated agent's mask is all
zeros), and a value head on the same trunk (``ValueFunctionAPI``, for PPO). ``ray[rllib]``
and torch are optional extras: they load when the class is first asked for
(``MaskedTorchRLModule`` is built on first attribute access). See ``docs/libraries.md``.
"""
from __future__ import annotations

OBS_KEY = "observation"       # PettingZoo's keys, as caledonia_env.env() names them
MASK_KEY = "action_mask"

_CLASS = None


def _build_class():
    """The RLModule class (inside: ray[rllib] and torch are optional extras)."""
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch.torch_rl_module import TorchRLModule
    from torch import nn

    float_min = torch.finfo(torch.float32).min

    class MaskedTorchRLModule(TorchRLModule, ValueFunctionAPI):
        """Masked policy + value MLP on ``{"observation", "action_mask"}`` observations.
        ``model_config``: ``hidden`` (list of layer widths, default [256, 256])."""

        def setup(self):
            space = self.observation_space
            if not hasattr(space, "spaces") or {OBS_KEY, MASK_KEY} - set(space.spaces):
                raise ValueError(f"MaskedTorchRLModule needs a Dict observation space with the "
                                 f"keys {OBS_KEY!r} and {MASK_KEY!r} (caledonia_env.env()), "
                                 f"got {space!r}")
            hidden = list((self.model_config or {}).get("hidden", [256, 256]))
            layers, width = [], int(space[OBS_KEY].shape[0])
            for h in hidden:
                layers += [nn.Linear(width, int(h)), nn.Tanh()]
                width = int(h)
            self.trunk = nn.Sequential(*layers)
            self.pi = nn.Linear(width, int(self.action_space.n))
            self.vf = nn.Linear(width, 1)

        def _forward(self, batch, **kwargs):
            obs = batch[Columns.OBS]
            features = self.trunk(obs[OBS_KEY].float())
            logits = self.pi(features)
            legal = obs[MASK_KEY] > 0
            masked = torch.where(legal, logits, torch.full_like(logits, float_min))
            return {Columns.ACTION_DIST_INPUTS: masked, Columns.EMBEDDINGS: features}

        def compute_values(self, batch, embeddings=None):
            if embeddings is None:
                embeddings = self.trunk(batch[Columns.OBS][OBS_KEY].float())
            return self.vf(embeddings).squeeze(-1)

    # importable by name (module __getattr__), so RLlib pickles and checkpoints it by reference
    MaskedTorchRLModule.__qualname__ = "MaskedTorchRLModule"
    return MaskedTorchRLModule


def masked_module_spec(hidden=(256, 256)):
    """An ``RLModuleSpec`` of :class:`MaskedTorchRLModule` (spaces filled in by RLlib)."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec   # optional extra (rllib)
    return RLModuleSpec(module_class=__getattr__("MaskedTorchRLModule"),
                        model_config={"hidden": [int(h) for h in hidden]})


def __getattr__(name):
    """``MaskedTorchRLModule``: the class, built on first use (ray and torch load then)."""
    global _CLASS
    if name == "MaskedTorchRLModule":
        if _CLASS is None:
            _CLASS = _build_class()
        return _CLASS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def module_policy(module):
    """The module's greedy masked policy as ``policy(obs, masks) -> actions`` on numpy
    batches (for :func:`caledonia_env.train.library_policies.win_rate_vs`)."""
    import torch                     # inside: torch is an optional extra
    from ray.rllib.core.columns import Columns   # optional extra (rllib)

    def policy(obs, masks):
        batch = {Columns.OBS: {OBS_KEY: torch.as_tensor(obs), MASK_KEY: torch.as_tensor(masks)}}
        with torch.no_grad():
            out = module.forward_inference(batch)
        return out[Columns.ACTION_DIST_INPUTS].argmax(dim=-1).cpu().numpy()

    return policy
