"""Policy checkpoints: weights only, never pickled code, read within limits.

A checkpoint is a zip file with two members:

- ``caledonia_ppo.json``: metadata — format version, observation size and
  layout fingerprint, ``N_ACTIONS``, the ruleset fingerprint, the network
  architecture, player count, timesteps trained, evaluation results, the
  training settings;
- ``policy.pt``: the policy's ``state_dict`` (a flat dict of tensors) written
  with ``torch.save`` and read back with ``torch.load(weights_only=True)``,
  which refuses anything but tensors and plain containers.

Loading therefore never runs code from the file. Stable-Baselines3's own
``model.save`` zips are *not* accepted: their ``data`` member holds
cloudpickle objects, and loading them with ``MaskablePPO.load`` executes code
from the file — only do that with files you made yourself.

:func:`load` is the one loader every agent, command and trainer uses. Before it
reads a byte it requires a regular file (no device, FIFO or socket) of at most
:data:`MAX_ARCHIVE_BYTES` (:mod:`caledonia_env.data.safe_io`); it checks each member's
declared size against :data:`MAX_MEMBER_BYTES` (zip bombs) before inflating it, the
architecture's widths against :data:`MAX_LAYER_WIDTH`, the metadata's JSON nesting
(:data:`~caledonia_env.data.safe_io.MAX_JSON_DEPTH`), every tensor's name and shape against
the metadata before a network is built (a tensor it has no place for is refused, named),
and that every weight is finite. A checkpoint trained for another
player count loads with a :class:`PlayerCountWarning` (an error with
``strict_players=True``). Every refusal is one :class:`CheckpointError` line.

The networks themselves are in :mod:`agents.network` (re-exported here);
:func:`pretrained_path` picks the shipped checkpoint for a player count (the policy's, or
the searches' network where that is another file).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import warnings
import zipfile
from dataclasses import asdict, dataclass, field

import numpy as np

from caledonia_env.atomic import atomic_path
from caledonia_env.data import load_ruleset
from caledonia_env.data.safe_io import InputError, parse_json, read_bytes
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.envs.observation import LAYOUT, OBS_SIZE
from caledonia_env.agents.network import (actor_critic_state, actor_state, build_actor,  # noqa: F401  (re-exports)
                      build_actor_critic, expected_shapes, sb3_state)

FORMAT = "caledonia-ppo"
FORMAT_VERSION = 1
META_NAME = "caledonia_ppo.json"
WEIGHTS_NAME = "policy.pt"
ACTIVATIONS = ("relu", "tanh")
#: largest checkpoint file read (bytes); the shipped ones are about 6 MB
MAX_ARCHIVE_BYTES = 256 * 2**20
#: largest inflated size of the archive's members together, and of policy.pt's records
MAX_MEMBER_BYTES = 512 * 2**20
#: largest metadata member (bytes)
MAX_META_BYTES = 4 * 2**20
#: widest layer an architecture may have (features_dim, each policy / value layer)
MAX_LAYER_WIDTH = 16384


class CheckpointError(ValueError):
    """A checkpoint is missing, unreadable, unsafe, or does not fit this engine's spaces."""


class PlayerCountWarning(UserWarning):
    """A checkpoint trained for one player count is used for games of another."""


@dataclass(frozen=True)
class Arch:
    """Network shape: one shared feature layer, then separate policy / value layers."""
    features_dim: int = 256
    pi: tuple = (128,)
    vf: tuple = (128,)
    activation: str = "relu"

    def __post_init__(self):
        object.__setattr__(self, "features_dim", int(self.features_dim))
        object.__setattr__(self, "pi", tuple(int(x) for x in self.pi))
        object.__setattr__(self, "vf", tuple(int(x) for x in self.vf))
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        widths = (self.features_dim,) + self.pi + self.vf
        if any(not 1 <= x <= MAX_LAYER_WIDTH for x in widths):
            raise ValueError(f"layer sizes must be 1 to {MAX_LAYER_WIDTH}, got features "
                             f"{self.features_dim}, policy {list(self.pi)}, value {list(self.vf)}")

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
    h = hashlib.sha256()
    h.update(str(OBS_SIZE).encode())
    for f in LAYOUT.fields:
        h.update(f"{f.group}.{f.name}{tuple(f.shape)}@{f.offset};".encode())
    return h.hexdigest()[:16]


def spaces() -> tuple[int, int]:
    """(OBS_SIZE, N_ACTIONS) of the installed engine."""
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


# ------------------------------------------------------------------ reading within limits
def _missing(path: str) -> CheckpointError:
    hint = ""
    folder = os.path.dirname(path) or "."
    if os.path.isdir(folder):
        zips = sorted(f for f in os.listdir(folder) if f.endswith(".zip"))[:8]
        if zips:
            hint = f"; .zip files in {folder}: {', '.join(zips)}"
    return CheckpointError(f"checkpoint {path!r} does not exist{hint}")


def read_file(path, limit: int | None = None) -> bytes:
    """The bytes of a checkpoint file: a regular file (no device, FIFO or socket: checked
    before opening) of at most ``limit`` bytes (default :data:`MAX_ARCHIVE_BYTES`), read by
    :func:`caledonia_env.data.safe_io.read_bytes`; CheckpointError otherwise."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise CheckpointError(f"checkpoint {path!r} is a folder; give the .zip file "
                              f"(e.g. {os.path.join(path, 'best.zip')})")
    if not os.path.lexists(path):
        raise _missing(path)
    try:
        return read_bytes(path, MAX_ARCHIVE_BYTES if limit is None else limit)
    except InputError as e:
        raise CheckpointError(f"checkpoint {path!r}: {e} (checkpoint.MAX_ARCHIVE_BYTES "
                              f"bounds the size)") from None


def file_sha256(path) -> str:
    """Content hash of a checkpoint file, read within the same limits as :func:`load`."""
    return hashlib.sha256(read_file(path)).hexdigest()


def _check_sizes(zf: zipfile.ZipFile, path: str, what: str) -> None:
    """Refuse a zip whose members declare more than MAX_MEMBER_BYTES inflated (zip bombs)."""
    total = 0
    for info in zf.infolist():
        total += info.file_size
        if info.file_size > MAX_MEMBER_BYTES or total > MAX_MEMBER_BYTES:
            raise CheckpointError(f"{path}: {what} member {info.filename!r} inflates to "
                                  f"{total:,} bytes or more, over the limit of "
                                  f"{MAX_MEMBER_BYTES:,} (checkpoint.MAX_MEMBER_BYTES)")


def _read_member(zf: zipfile.ZipFile, name: str, limit: int, path: str) -> bytes:
    if zf.getinfo(name).file_size > limit:
        raise CheckpointError(f"{path}: member {name!r} declares {zf.getinfo(name).file_size:,}"
                              f" bytes, over the limit of {limit:,}")
    try:
        with zf.open(name) as f:
            data = f.read(limit + 1)
    # NotImplementedError: zipfile's answer to a compression method it cannot inflate
    except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError) as e:
        raise CheckpointError(f"{path}: member {name!r} is damaged ({e})") from None
    if len(data) > limit:
        raise CheckpointError(f"{path}: member {name!r} inflates past {limit:,} bytes")
    return data


def _check_member_names(names, path):
    if META_NAME in names and WEIGHTS_NAME in names:
        return
    if "data" in names and "policy.pth" in names:
        raise CheckpointError(
            f"{path}: this is a Stable-Baselines3 model zip (MaskablePPO.save), not a caledonia "
            f"checkpoint. Its 'data' member is cloudpickle: loading it runs code from the file, "
            f"so it is not loaded here. If you made it yourself, write its policy with "
            f"caledonia_env.agents.checkpoint.save('policy.zip', model.policy.state_dict(), "
            f"make_meta(arch, num_players, model.num_timesteps)).")
    raise CheckpointError(f"{path}: not a caledonia checkpoint (expected members {META_NAME} and "
                          f"{WEIGHTS_NAME}, found {sorted(names)[:6]})")


def _read_meta(zf: zipfile.ZipFile, path: str) -> dict:
    try:
        meta = parse_json(_read_member(zf, META_NAME, MAX_META_BYTES, path))
    except InputError as e:         # malformed, not UTF-8, or nested past MAX_JSON_DEPTH
        raise CheckpointError(f"{path}: unreadable metadata ({e})") from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path}: the metadata is not a JSON object")
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path}: metadata format {meta.get('format')!r}, "
                              f"expected {FORMAT!r}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path}: checkpoint format version {meta.get('format_version')!r}"
                              f", this code reads version {FORMAT_VERSION}")
    return meta


def _read_weights(zf: zipfile.ZipFile, path: str) -> dict:
    import torch                        # optional extra (train): only to read weights
    raw = _read_member(zf, WEIGHTS_NAME, MAX_MEMBER_BYTES, path)
    if not zipfile.is_zipfile(io.BytesIO(raw)):
        # torch's legacy format declares storage sizes before their data: not read
        raise CheckpointError(f"{path}: {WEIGHTS_NAME} is not in torch's zip format "
                              f"(torch.save since torch 1.6)")
    with zipfile.ZipFile(io.BytesIO(raw)) as inner:     # torch's format is a zip: its records
        _check_sizes(inner, path, WEIGHTS_NAME)
    try:
        sd = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as e:          # weights_only refuses pickled code: say so
        raise CheckpointError(f"{path}: the weights could not be read in weights-only mode "
                              f"({type(e).__name__}: {e})") from None
    if not isinstance(sd, dict) or not all(isinstance(v, torch.Tensor) for v in sd.values()):
        raise CheckpointError(f"{path}: {WEIGHTS_NAME} is not a state dict of tensors")
    return sd


def _check_tensors(sd: dict, arch: Arch, meta: dict, path: str) -> None:
    """Every tensor of the policy path (and of the value path, if the file has one) has the
    shape the metadata's architecture gives, and every weight is finite."""
    import torch                        # optional extra (train)
    try:
        obs_size, n_actions = int(meta["obs_size"]), int(meta["n_actions"])
    except (KeyError, TypeError, ValueError):
        raise CheckpointError(f"{path}: the metadata has no obs_size / n_actions") from None
    actor, critic = expected_shapes(arch, obs_size, n_actions)
    unknown = sorted(k for k in sd if k not in actor and k not in critic)
    if unknown:
        shown = ", ".join(repr(k) for k in unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise CheckpointError(f"{path}: {len(unknown)} tensor{'s' * (len(unknown) != 1)} "
                              f"the architecture in the metadata has no place for: {shown} "
                              f"(a checkpoint holds the policy's tensors under SB3's names "
                              f"only: features_extractor.*, mlp_extractor.*, action_net.*, "
                              f"value_net.*)")
    if any(k in sd for k in critic):
        actor = {**actor, **critic}
    for k, shape in actor.items():
        if k not in sd:
            if k.startswith(("pi_", "vf_")):    # aliases: files written outside SB3 omit them
                continue
            raise CheckpointError(f"{path}: weights do not match the architecture in the "
                                  f"metadata (tensor {k!r} is missing)")
        if tuple(sd[k].shape) != shape:
            raise CheckpointError(f"{path}: weights do not match the architecture in the "
                                  f"metadata ({k} has shape {tuple(sd[k].shape)}, the metadata "
                                  f"gives {shape})")
    for k, v in sd.items():
        if v.is_floating_point() and not bool(torch.isfinite(v).all()):
            raise CheckpointError(f"{path}: tensor {k!r} holds NaN or infinite weights")


def check_players(meta: dict, num_players: int, path: str = "checkpoint",
                  strict: bool = False) -> None:
    """A :class:`PlayerCountWarning` (CheckpointError with ``strict``) when the checkpoint
    was trained for another player count than ``num_players`` (1 = the solo game)."""
    trained = meta.get("num_players")
    if trained is None or int(trained) == int(num_players):
        return
    what = "the solo game" if int(trained) == 1 else f"{trained}-player games"
    msg = (f"{path} was trained for {what}, not for {num_players} player"
           f"{'s' * (int(num_players) != 1)}; it plays, likely worse")
    if strict:
        raise CheckpointError(msg)
    warnings.warn(msg, PlayerCountWarning, stacklevel=3)


def load(path, check_spaces: bool = True, num_players: int | None = None,
         strict_players: bool = False) -> Checkpoint:
    """Read a checkpoint (weights only, within the module's limits). Raises
    :class:`CheckpointError` with the reason when the file is missing, not a regular file,
    too large, not a checkpoint, inconsistent with its own metadata, holds non-finite
    weights, or its spaces differ from the engine's. ``num_players``: the games it is for
    (see :func:`check_players`)."""
    path = os.fspath(path)
    raw = read_file(path)
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile:
        raise CheckpointError(f"{path}: not a zip file, so not a caledonia checkpoint") from None
    with zf:
        _check_member_names(zf.namelist(), path)
        _check_sizes(zf, path, "archive")
        meta = _read_meta(zf, path)
        if check_spaces:
            check_meta_spaces(meta, path)
        try:
            arch = Arch(**meta["arch"])
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(f"{path}: bad architecture in metadata ({e})") from None
        sd = _read_weights(zf, path)
    _check_tensors(sd, arch, meta, path)
    if num_players is not None:
        check_players(meta, num_players, path, strict_players)
    return Checkpoint(meta, sd, path, hashlib.sha256(raw).hexdigest())


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


# ------------------------------------------------------------------ writing
def make_meta(arch: Arch, num_players: int, timesteps: int,
              ruleset_fingerprint: str | None = None, **extra) -> dict:
    """A checkpoint's metadata; ``ruleset_fingerprint`` defaults to the bundled ruleset's."""
    import torch                        # optional extra (train): its version is recorded
    obs_size, n_actions = spaces()
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "obs_size": obs_size,
            "n_actions": n_actions, "obs_fingerprint": observation_fingerprint(),
            "ruleset_fingerprint": ruleset_fingerprint or load_ruleset().fingerprint(),
            "arch": arch.to_dict(), "num_players": int(num_players),
            "timesteps": int(timesteps), "torch": torch.__version__}
    meta.update(extra)
    return meta


def save(path, state_dict: dict, meta: dict) -> None:
    """Write a checkpoint atomically (temporary file in the same folder, then rename)."""
    import torch                        # optional extra (train)
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


# ------------------------------------------------------------------ networks
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
                              f"policy's state_dict (checkpoint.save) to search with it")
    obs_size, n_actions = int(ck.meta["obs_size"]), int(ck.meta["n_actions"])
    return _load_into(build_actor_critic(ck.arch, obs_size, n_actions),
                      actor_critic_state(ck.state_dict), ck)


# ------------------------------------------------------------------ shipped checkpoints
PRETRAINED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained")
#: file of the shipped policy for each player count (1 = the solo game, R-9.2)
PRETRAINED_FILES = {1: "ppo_solo.zip", 2: "ppo_2p.zip", 3: "ppo_3p.zip", 4: "ppo_4p.zip"}
#: file of the network the searches (``puct``, ``nmcts``, ``nmctsg``) play for a player count
#: where it is not the policy's: a network that wins more often against the bots is not
#: always a better one to search with (docs/agents.md, "The searches' network")
SEARCH_FILES = {2: "search_2p.zip"}
_FALLBACK_WARNED: set = set()


class PretrainedFallbackWarning(UserWarning):
    """No shipped policy was trained for the game's player count; another one is used."""


def pretrained_path(num_players: int, folder: str | None = None, search: bool = False) -> str:
    """The shipped checkpoint for a game of ``num_players`` (1 = solo): ``PRETRAINED_FILES``
    in ``folder`` (default :data:`PRETRAINED_DIR`); with ``search``, the searches' network,
    ``SEARCH_FILES`` where that file is in ``folder``, else the policy's. When the policy's
    file is absent the nearest player count that has one is used (on a tie the larger count)
    and a :class:`PretrainedFallbackWarning` names it, once per folder and player count.
    CheckpointError when no shipped file exists at all."""
    if num_players not in PRETRAINED_FILES:
        raise ValueError(f"num_players must be one of {sorted(PRETRAINED_FILES)} (1 = solo), "
                         f"got {num_players!r}")
    folder = PRETRAINED_DIR if folder is None else os.fspath(folder)
    if search and num_players in SEARCH_FILES:
        path = os.path.join(folder, SEARCH_FILES[num_players])
        if os.path.isfile(path):
            return path
    have = [n for n, f in PRETRAINED_FILES.items() if os.path.isfile(os.path.join(folder, f))]
    if not have:
        raise CheckpointError(f"no shipped policy in {folder} (expected one of "
                              f"{', '.join(PRETRAINED_FILES.values())})")
    used = min(have, key=lambda n: (abs(n - num_players), -n))
    path = os.path.join(folder, PRETRAINED_FILES[used])
    if used != num_players and (folder, num_players) not in _FALLBACK_WARNED:
        _FALLBACK_WARNED.add((folder, num_players))
        what = "the solo game" if num_players == 1 else f"{num_players}-player games"
        warnings.warn(f"no pretrained policy for {what} ({PRETRAINED_FILES[num_players]} is not "
                      f"shipped); using {PRETRAINED_FILES[used]}, trained for "
                      f"{'the solo game' if used == 1 else f'{used} players'}",
                      PretrainedFallbackWarning, stacklevel=2)
    return path
