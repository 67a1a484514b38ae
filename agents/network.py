"""The policy network: its torch modules, its tensor names, and one NumPy copy.

:func:`build_actor` is the acting half of a trained policy (shared feature layer, policy
layers, action logits) as a plain torch module, so playing a checkpoint needs torch but
not Stable-Baselines3; :func:`build_actor_critic` adds the value layers and the value head.
:func:`expected_shapes` gives every tensor's shape under Stable-Baselines3's names (the
names a checkpoint stores), so a loader can check a file before building anything.

:class:`NetArrays` is the one NumPy copy of a loaded network: the search agents evaluate
positions with its NumPy forward pass (:meth:`NetArrays.evaluate`, :meth:`NetArrays.logits`)
and the numba rollouts (:mod:`agents.netroll`) read the same arrays
(:meth:`NetArrays.args`). Torch is imported only by the functions that build modules
(the ``train`` extra stays optional for the agents).
"""
from __future__ import annotations

import numpy as np
from numba.typed import List

# SB3 MaskableActorCriticPolicy keys -> Actor / ActorCritic keys
_KEY_MAP = (("features_extractor.net.", "features."), ("mlp_extractor.policy_net.", "policy_net."),
            ("action_net.", "action_net."))
_VALUE_KEY_MAP = (("mlp_extractor.value_net.", "value_layers."), ("value_net.", "value_net."))
#: SB3 lists the shared feature layer under these prefixes too (same tensors)
FEATURE_ALIASES = ("pi_features_extractor.net.", "vf_features_extractor.net.")


def activation_class(name: str):
    """The torch activation module class of an architecture's ``activation`` name."""
    import torch.nn as nn           # optional extra (train): only when a module is built
    return {"relu": nn.ReLU, "tanh": nn.Tanh}[name]


def _layers(d: int, sizes, act):
    """Dense layers ``d -> sizes[0] -> ...`` with activations; (module, output width)."""
    import torch.nn as nn           # optional extra (train)
    layers = []
    for h in sizes:
        layers += [nn.Linear(d, h), act()]
        d = h
    return nn.Sequential(*layers), d


def _add_policy_path(module, arch, obs_size: int, n_actions: int, act) -> None:
    """The shared feature layer, the policy layers and the action head, as attributes."""
    import torch.nn as nn           # optional extra (train)
    module.features = nn.Sequential(nn.Linear(obs_size, arch.features_dim), act())
    module.policy_net, d = _layers(arch.features_dim, arch.pi, act)
    module.action_net = nn.Linear(d, n_actions)


def build_actor(arch, obs_size: int, n_actions: int):
    """The acting network: feature layer -> policy layers -> action logits (torch module)."""
    import torch.nn as nn           # optional extra (train)
    act = activation_class(arch.activation)

    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            _add_policy_path(self, arch, obs_size, n_actions, act)

        def forward(self, obs):
            return self.action_net(self.policy_net(self.features(obs)))

    return Actor()


def build_actor_critic(arch, obs_size: int, n_actions: int):
    """The whole policy: the shared feature layer, then the policy layers -> action logits
    and the value layers -> one value. ``forward(obs)`` returns ``(logits, value)`` with
    value of shape (batch,): the learner's expected return (the training reward's units)
    for the player whose observation it is."""
    import torch.nn as nn           # optional extra (train)
    act = activation_class(arch.activation)

    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            _add_policy_path(self, arch, obs_size, n_actions, act)
            self.value_layers, d = _layers(arch.features_dim, arch.vf, act)
            self.value_net = nn.Linear(d, 1)

        def forward(self, obs):
            f = self.features(obs)
            return (self.action_net(self.policy_net(f)),
                    self.value_net(self.value_layers(f)).squeeze(-1))

    return ActorCritic()


def _renamed(sd: dict, key_map) -> dict:
    out = {}
    for k, v in sd.items():
        for src, dst in key_map:
            if k.startswith(src):
                out[dst + k[len(src):]] = v
    return out


def actor_state(sd: dict) -> dict:
    """The actor's tensors out of a full policy state dict (SB3 key names)."""
    return _renamed(sd, _KEY_MAP)


def actor_critic_state(sd: dict) -> dict:
    """The actor's and the critic's tensors out of a full policy state dict (SB3 names)."""
    return _renamed(sd, _KEY_MAP + _VALUE_KEY_MAP)


def sb3_state(sd: dict) -> dict:
    """An ``ActorCritic``'s (or ``Actor``'s) tensors under SB3's key names, the names a
    checkpoint stores (the inverse of :func:`actor_critic_state`)."""
    return _renamed(sd, tuple((ours, sb3) for sb3, ours in _KEY_MAP + _VALUE_KEY_MAP))


def _dense_shapes(prefix: str, d: int, sizes) -> tuple[dict, int]:
    shapes = {}
    for i, h in enumerate(sizes):
        shapes[f"{prefix}{2 * i}.weight"] = (h, d)
        shapes[f"{prefix}{2 * i}.bias"] = (h,)
        d = h
    return shapes, d


def expected_shapes(arch, obs_size: int, n_actions: int) -> tuple[dict, dict]:
    """``(actor, critic)``: the shape of every tensor of the policy path and of the value
    path under SB3's key names (the feature layer's aliases included in ``actor``)."""
    fd = arch.features_dim
    actor = {}
    for prefix in ("features_extractor.net.",) + FEATURE_ALIASES:
        actor[prefix + "0.weight"] = (fd, obs_size)
        actor[prefix + "0.bias"] = (fd,)
    pi, d = _dense_shapes("mlp_extractor.policy_net.", fd, arch.pi)
    actor.update(pi, **{"action_net.weight": (n_actions, d), "action_net.bias": (n_actions,)})
    critic, d = _dense_shapes("mlp_extractor.value_net.", fd, arch.vf)
    critic.update({"value_net.weight": (1, d), "value_net.bias": (1,)})
    return actor, critic


class NetArrays:
    """A loaded ``Actor`` or ``ActorCritic`` as float32 NumPy arrays, with a forward pass
    for one position at a time (cheaper than a torch call at batch size 1): the first layer
    reads only the weight rows of the observation's non-zero entries (about 730 of 5,019),
    and logits are computed only for the actions asked for. ``has_value``: False for an
    actor without the value head (then :meth:`evaluate` gives value 0)."""

    def __init__(self, module, activation: str):
        def np32(x):
            return np.ascontiguousarray(x.detach().cpu().numpy().astype(np.float32))

        def dense(seq):
            return [(np32(m.weight), np32(m.bias)) for m in seq if hasattr(m, "weight")]

        lin = module.features[0]
        self.w1t = np.ascontiguousarray(np32(lin.weight).T)      # obs_size x features
        self.b1 = np32(lin.bias)
        self.pi = dense(module.policy_net)
        self.wa, self.ba = np32(module.action_net.weight), np32(module.action_net.bias)
        self.has_value = hasattr(module, "value_net")
        self.vf = dense(module.value_layers) if self.has_value else []
        self.wv = np32(module.value_net.weight)[0] if self.has_value else None
        self.bv = float(np32(module.value_net.bias)[0]) if self.has_value else 0.0
        self.relu = activation == "relu"
        self.act = (lambda x: np.maximum(x, 0.0)) if self.relu else np.tanh
        self._numba = None

    def evaluate(self, obs: np.ndarray) -> tuple[np.ndarray, float]:
        """(policy hidden layer, value) of one observation."""
        nz = np.flatnonzero(obs)
        f = self.act(obs[nz] @ self.w1t[nz] + self.b1)
        h = f
        for w, b in self.pi:
            h = self.act(w @ h + b)
        if not self.has_value:
            return h, 0.0
        v = f
        for w, b in self.vf:
            v = self.act(w @ v + b)
        return h, float(self.wv @ v) + self.bv

    def logits(self, hidden: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Logits of ``actions`` from the policy hidden layer of :meth:`evaluate`."""
        return self.wa[actions] @ hidden + self.ba[actions]

    def args(self) -> tuple:
        """``(w1t, b1, pwt, pb, wa, ba, relu)``: the policy path for the numba kernels of
        :mod:`agents.netroll` (the same arrays, but the policy layers' weights transposed,
        input by output; the layer lists as numba typed lists, made on first use)."""
        if self._numba is None:
            self._numba = (self.w1t, self.b1,
                           List([np.ascontiguousarray(w.T) for w, _ in self.pi]),
                           List([b for _, b in self.pi]), self.wa, self.ba, self.relu)
        return self._numba
