"""Policy checkpoints: weights only, never pickled code.

A checkpoint is a zip file with two members:

- ``caledonia_ppo.json``: metadata — format version, observation size and
  layout fingerprint, ``N_ACTIONS``, the network architecture, player count,
  timesteps trained, evaluation results, the training settings;
- ``policy.pt``: the policy's ``state_dict`` (a flat dict of tensors) written
  with ``torch.save`` and read back with ``torch.load(weights_only=True)``,
  which refuses anything but tensors and plain containers.

Loading therefore never runs code from the file. Stable-Baselines3's own
``model.save`` zips are *not* accepted: their ``data`` member holds
cloudpickle objects, and loading them with ``MaskablePPO.load`` executes code
from the file — only do that with files you made yourself.

:class:`Actor` is the acting half of the policy (shared feature layer, policy
layers, action logits) as a plain torch module, so playing a checkpoint needs
torch but not Stable-Baselines3; ``ActorCritic`` adds the value layers and the
value head (the search agent ``puct`` evaluates positions with it).
:func:`pretrained_path` picks the shipped checkpoint for a player count.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from dataclasses import asdict, dataclass, field

import numpy as np

from ..atomic import atomic_path

FORMAT = "caledonia-ppo"
FORMAT_VERSION = 1
META_NAME = "caledonia_ppo.json"
WEIGHTS_NAME = "policy.pt"
ACTIVATIONS = ("relu", "tanh")


class CheckpointError(ValueError):
    """A checkpoint is missing, unreadable, or does not fit this engine's spaces."""


@dataclass(frozen=True)
class Arch:
    """Network shape: one shared feature layer, then separate policy / value layers."""
    features_dim: int = 256
    pi: tuple = (128,)
    vf: tuple = (128,)
    activation: str = "relu"

    def __post_init__(self):
        object.__setattr__(self, "pi", tuple(int(x) for x in self.pi))
        object.__setattr__(self, "vf", tuple(int(x) for x in self.vf))
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if self.features_dim < 1 or any(x < 1 for x in self.pi + self.vf):
            raise ValueError(f"layer sizes must be positive: {self}")

    @classmethod
    def parse(cls, text: str, features_dim: int = 256, activation: str = "relu") -> "Arch":
        """``"256:128"`` -> features 256, policy and value layers [128];
        ``"256:128,64"`` -> two layers each."""
        head, _, rest = text.partition(":")
        try:
            fd = int(head) if head else features_dim
            layers = tuple(int(x) for x in rest.split(",") if x.strip()) if rest else ()
        except ValueError:
            raise ValueError(f"--net must look like 256:128 (feature layer : policy/value "
                             f"layers), got {text!r}") from None
        return cls(fd, layers, layers, activation)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["pi"], d["vf"] = list(self.pi), list(self.vf)
        return d


def observation_fingerprint() -> str:
    """Hash of the observation layout (every field's name, shape, offset) and its size."""
    from caledonia_env.envs.observation import LAYOUT, OBS_SIZE
    h = hashlib.sha256()
    h.update(str(OBS_SIZE).encode())
    for f in LAYOUT.fields:
        h.update(f"{f.group}.{f.name}{tuple(f.shape)}@{f.offset};".encode())
    return h.hexdigest()[:16]


def spaces() -> tuple[int, int]:
    """(OBS_SIZE, N_ACTIONS) of the installed engine."""
    from caledonia_env.engine.actions import N_ACTIONS
    from caledonia_env.envs.observation import OBS_SIZE
    return int(OBS_SIZE), int(N_ACTIONS)


@dataclass
class Checkpoint:
    """A loaded checkpoint: metadata and the policy's state dict (tensors)."""
    meta: dict
    state_dict: dict
    path: str = ""
    sha256: str = ""
    arch: Arch = field(init=False)

    def __post_init__(self):
        self.arch = Arch(**self.meta["arch"])


def _check_member_names(names, path):
    if META_NAME in names and WEIGHTS_NAME in names:
        return
    if "data" in names and "policy.pth" in names:
        raise CheckpointError(
            f"{path}: this is a Stable-Baselines3 model zip (MaskablePPO.save), not a caledonia "
            f"checkpoint. Its 'data' member is cloudpickle: loading it runs code from the file, "
            f"so it is not loaded here. If you made it yourself, convert it with "
            f"caledonia_env.agents.checkpoint.save_model(MaskablePPO.load(path), 'policy.zip').")
    raise CheckpointError(f"{path}: not a caledonia checkpoint (expected members {META_NAME} and "
                          f"{WEIGHTS_NAME}, found {sorted(names)[:6]})")


def load(path, check_spaces: bool = True) -> Checkpoint:
    """Read a checkpoint (weights only). Raises :class:`CheckpointError` with the reason
    when the file is missing, is not a checkpoint, or its spaces differ from the engine's."""
    import torch
    path = os.fspath(path)
    if not os.path.exists(path):
        hint = ""
        folder = os.path.dirname(path) or "."
        if os.path.isdir(folder):
            zips = sorted(f for f in os.listdir(folder) if f.endswith(".zip"))[:8]
            if zips:
                hint = f"; .zip files in {folder}: {', '.join(zips)}"
        raise CheckpointError(f"checkpoint {path!r} does not exist{hint}")
    if os.path.isdir(path):
        raise CheckpointError(f"checkpoint {path!r} is a folder; give the .zip file "
                              f"(e.g. {os.path.join(path, 'best.zip')})")
    with open(path, "rb") as f:
        raw = f.read()
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile:
        raise CheckpointError(f"{path}: not a zip file, so not a caledonia checkpoint") from None
    with zf:
        _check_member_names(zf.namelist(), path)
        try:
            meta = json.loads(zf.read(META_NAME).decode())
        except (ValueError, UnicodeDecodeError) as e:
            raise CheckpointError(f"{path}: unreadable metadata ({e})") from None
        if meta.get("format") != FORMAT:
            raise CheckpointError(f"{path}: metadata format {meta.get('format')!r}, "
                                  f"expected {FORMAT!r}")
        if meta.get("format_version") != FORMAT_VERSION:
            raise CheckpointError(f"{path}: checkpoint format version {meta.get('format_version')!r}"
                                  f", this code reads version {FORMAT_VERSION}")
        try:
            sd = torch.load(io.BytesIO(zf.read(WEIGHTS_NAME)), map_location="cpu",
                            weights_only=True)
        except Exception as e:          # weights_only refuses pickled code: say so
            raise CheckpointError(f"{path}: the weights could not be read in weights-only mode "
                                  f"({type(e).__name__}: {e})") from None
    if not isinstance(sd, dict) or not all(isinstance(v, torch.Tensor) for v in sd.values()):
        raise CheckpointError(f"{path}: {WEIGHTS_NAME} is not a state dict of tensors")
    if check_spaces:
        check_meta_spaces(meta, path)
    try:
        ck = Checkpoint(meta, sd, path, hashlib.sha256(raw).hexdigest())
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: bad architecture in metadata ({e})") from None
    return ck


def check_meta_spaces(meta: dict, path: str = "checkpoint") -> None:
    """Observation size and action count of the checkpoint must equal the engine's."""
    obs_size, n_actions = spaces()
    if meta.get("obs_size") != obs_size or meta.get("n_actions") != n_actions:
        raise CheckpointError(
            f"{path}: trained for observation size {meta.get('obs_size')} and "
            f"{meta.get('n_actions')} actions, but this engine has observation size {obs_size} "
            f"and {n_actions} actions (N_ACTIONS); the observation layout or the action space "
            f"changed since it was trained — retrain with 'caledonia train'")
    fp = meta.get("obs_fingerprint")
    if fp is not None and fp != observation_fingerprint():
        raise CheckpointError(
            f"{path}: the observation layout changed since this checkpoint was trained (same size "
            f"{obs_size}, different fields: fingerprint {fp} vs {observation_fingerprint()}); "
            f"retrain with 'caledonia train'")


def make_meta(arch: Arch, num_players: int, timesteps: int, **extra) -> dict:
    import torch
    obs_size, n_actions = spaces()
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "obs_size": obs_size,
            "n_actions": n_actions, "obs_fingerprint": observation_fingerprint(),
            "arch": arch.to_dict(), "num_players": int(num_players),
            "timesteps": int(timesteps), "torch": torch.__version__}
    meta.update(extra)
    return meta


def save(path, state_dict: dict, meta: dict) -> None:
    """Write a checkpoint atomically (temporary file in the same folder, then rename)."""
    import torch
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    buf = io.BytesIO()
    torch.save({k: v.detach().cpu().contiguous() for k, v in state_dict.items()}, buf)
    with atomic_path(path, ".zip") as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(META_NAME, json.dumps(meta, indent=1, default=_json_default))
        zf.writestr(WEIGHTS_NAME, buf.getvalue())


def _json_default(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    if isinstance(x, (tuple, set)):
        return list(x)
    return str(x)


def save_model(model, path, num_players: int = 2, arch: Arch | None = None, **extra) -> None:
    """Save a MaskablePPO model's policy as a weights-only checkpoint. ``arch`` defaults to
    the one recorded on the model by :mod:`train.trainer` (``model.caledonia_arch``)."""
    arch = arch or getattr(model, "caledonia_arch", None)
    if arch is None:
        raise ValueError("pass arch= (the model was not built by train.trainer)")
    meta = make_meta(arch, num_players, int(model.num_timesteps), **extra)
    save(path, model.policy.state_dict(), meta)


# ------------------------------------------------------------------ networks
def _activation(name):
    import torch.nn as nn
    return {"relu": nn.ReLU, "tanh": nn.Tanh}[name]


def _layers(d: int, sizes, act):
    """Dense layers ``d -> sizes[0] -> ...`` with activations; (module, output width)."""
    import torch.nn as nn
    layers = []
    for h in sizes:
        layers += [nn.Linear(d, h), act()]
        d = h
    return nn.Sequential(*layers), d


def build_actor(arch: Arch, obs_size: int, n_actions: int):
    """The acting network: feature layer -> policy layers -> action logits (torch module)."""
    import torch.nn as nn
    act = _activation(arch.activation)

    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(obs_size, arch.features_dim), act())
            self.policy_net, d = _layers(arch.features_dim, arch.pi, act)
            self.action_net = nn.Linear(d, n_actions)

        def forward(self, obs):
            return self.action_net(self.policy_net(self.features(obs)))

    return Actor()


def build_actor_critic(arch: Arch, obs_size: int, n_actions: int):
    """The whole policy: the shared feature layer, then the policy layers -> action logits
    and the value layers -> one value. ``forward(obs)`` returns ``(logits, value)`` with
    value of shape (batch,): the learner's expected return (the training reward's units)
    for the player whose observation it is."""
    import torch.nn as nn
    act = _activation(arch.activation)

    class ActorCritic(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(obs_size, arch.features_dim), act())
            self.policy_net, d = _layers(arch.features_dim, arch.pi, act)
            self.action_net = nn.Linear(d, n_actions)
            self.value_layers, d = _layers(arch.features_dim, arch.vf, act)
            self.value_net = nn.Linear(d, 1)

        def forward(self, obs):
            f = self.features(obs)
            return (self.action_net(self.policy_net(f)),
                    self.value_net(self.value_layers(f)).squeeze(-1))

    return ActorCritic()


# SB3 MaskableActorCriticPolicy keys -> Actor / ActorCritic keys
_KEY_MAP = (("features_extractor.net.", "features."), ("mlp_extractor.policy_net.", "policy_net."),
            ("action_net.", "action_net."))
_VALUE_KEY_MAP = (("mlp_extractor.value_net.", "value_layers."), ("value_net.", "value_net."))


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


def _load_into(module, state: dict, ck: Checkpoint):
    try:
        module.load_state_dict(state, strict=True)
    except RuntimeError as e:
        raise CheckpointError(f"{ck.path}: weights do not match the architecture in the "
                              f"metadata ({str(e).splitlines()[0]} ...)") from None
    module.eval()
    return module


def load_actor(ck: Checkpoint):
    """An :class:`Actor` (eval mode) with the checkpoint's weights; CheckpointError if the
    tensors do not fit the recorded architecture."""
    obs_size, n_actions = int(ck.meta["obs_size"]), int(ck.meta["n_actions"])
    return _load_into(build_actor(ck.arch, obs_size, n_actions), actor_state(ck.state_dict), ck)


def load_actor_critic(ck: Checkpoint):
    """An ``ActorCritic`` (eval mode) with the checkpoint's policy and value weights;
    CheckpointError if the checkpoint has no value head or the tensors do not fit."""
    if not any(k.startswith("value_net.") for k in ck.state_dict):
        raise CheckpointError(f"{ck.path}: the checkpoint has no value head (no 'value_net.*' "
                              f"tensors), so it cannot evaluate positions; save the whole "
                              f"policy (checkpoint.save_model) to search with it")
    obs_size, n_actions = int(ck.meta["obs_size"]), int(ck.meta["n_actions"])
    return _load_into(build_actor_critic(ck.arch, obs_size, n_actions),
                      actor_critic_state(ck.state_dict), ck)


# ------------------------------------------------------------------ shipped checkpoints
PRETRAINED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained")
#: file of the shipped policy for each player count (1 = the solo game, R-9.2)
PRETRAINED_FILES = {1: "ppo_solo.zip", 2: "ppo_2p.zip", 3: "ppo_3p.zip", 4: "ppo_4p.zip"}
_FALLBACK_WARNED: set = set()


class PretrainedFallbackWarning(UserWarning):
    """No shipped policy was trained for the game's player count; another one is used."""


def pretrained_path(num_players: int, folder: str | None = None) -> str:
    """The shipped checkpoint for a game of ``num_players`` (1 = solo): ``PRETRAINED_FILES``
    in ``folder`` (default :data:`PRETRAINED_DIR`). When that file is absent the nearest
    player count that has one is used (on a tie the larger count) and a
    :class:`PretrainedFallbackWarning` names it, once per folder and player count.
    CheckpointError when no shipped file exists at all."""
    if num_players not in PRETRAINED_FILES:
        raise ValueError(f"num_players must be one of {sorted(PRETRAINED_FILES)} (1 = solo), "
                         f"got {num_players!r}")
    folder = PRETRAINED_DIR if folder is None else os.fspath(folder)
    have = [n for n, f in PRETRAINED_FILES.items() if os.path.isfile(os.path.join(folder, f))]
    if not have:
        raise CheckpointError(f"no shipped policy in {folder} (expected one of "
                              f"{', '.join(PRETRAINED_FILES.values())})")
    used = min(have, key=lambda n: (abs(n - num_players), -n))
    path = os.path.join(folder, PRETRAINED_FILES[used])
    if used != num_players and (folder, num_players) not in _FALLBACK_WARNED:
        _FALLBACK_WARNED.add((folder, num_players))
        import warnings
        what = "the solo game" if num_players == 1 else f"{num_players}-player games"
        warnings.warn(f"no pretrained policy for {what} ({PRETRAINED_FILES[num_players]} is not "
                      f"shipped); using {PRETRAINED_FILES[used]}, trained for "
                      f"{'the solo game' if used == 1 else f'{used} players'}",
                      PretrainedFallbackWarning, stacklevel=2)
    return path
