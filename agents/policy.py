"""Play a checkpoint's policy: :class:`PolicyPlayer` (masked argmax or sample, batched).

Loading a policy for play lives here, in the agents layer, and needs torch but
not the trainer (Stable-Baselines3): checkpoints are read weights-only by
:mod:`caledonia_env.agents.checkpoint`. ``ppo:pretrained`` is the shipped
policy for the game's player count (:func:`checkpoint.pretrained_path`): a
:class:`PretrainedActor` reads the player count from each observation row, so
one player serves games of every size, batched. :func:`load_network` keeps the one cache of
loaded checkpoints, and with each its NumPy copy (:func:`network_arrays`) for the search
agents and the numba rollouts.
"""
from __future__ import annotations

import os

import numpy as np

from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.constants import MAX_PLAYERS
from caledonia_env.engine.mask import legal_mask
from caledonia_env.envs.observation import O_NUM_PLAYERS, OBS_SIZE, encode_obs
from caledonia_env.agents import checkpoint as ckpt
from caledonia_env.agents.network import NetArrays

PRETRAINED = "pretrained"


def is_pretrained(param: str) -> bool:
    """``ppo:pretrained`` / ``puct:N`` name the shipped networks (unless a file of that name
    exists)."""
    return param == PRETRAINED and not os.path.exists(param)


def checkpoint_path(param: str, num_players: int = 2, search: bool = False) -> str:
    """Path of ``ppo:PARAM``: ``pretrained`` is the shipped checkpoint for ``num_players``
    (:func:`checkpoint.pretrained_path`, with its fallback; ``search``: the searches')."""
    if is_pretrained(param):
        return ckpt.pretrained_path(num_players, search=search)
    return param


class _Loaded:
    """One cached checkpoint: its torch module, its metadata and (made on first use) its
    NumPy copy."""

    __slots__ = ("module", "meta", "arrays")

    def __init__(self, module, meta: dict):
        self.module, self.meta, self.arrays = module, meta, None


#: the one cache of loaded checkpoints: (path, mtime, size, critic) -> _Loaded
_NETWORKS: dict = {}


def load_network(path, critic: bool = False):
    """``(module, meta)`` of a checkpoint: its actor, or its ``ActorCritic`` with
    ``critic=True``; cached per file version (path, mtime, size), so many agents share
    one copy of the weights."""
    path = os.fspath(path)
    key = None
    if os.path.isfile(path):
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_mtime_ns, st.st_size, critic)
    if key in _NETWORKS:
        hit = _NETWORKS[key]
        return hit.module, hit.meta
    ck = ckpt.load(path)
    net = ckpt.load_actor_critic(ck) if critic else ckpt.load_actor(ck)
    meta = dict(ck.meta, sha256=ck.sha256, path=path)
    if key:
        _NETWORKS[key] = _Loaded(net, meta)
    return net, meta


def network_arrays(module, meta: dict) -> NetArrays:
    """The :class:`network.NetArrays` (NumPy copy) of a module: kept with the module's entry
    in the checkpoint cache when :func:`load_network` loaded it, else made afresh (a module
    built elsewhere, e.g. in training, may change between calls)."""
    for hit in _NETWORKS.values():
        if hit.module is module:
            if hit.arrays is None:
                hit.arrays = NetArrays(module, meta["arch"]["activation"])
            return hit.arrays
    return NetArrays(module, meta["arch"]["activation"])


def count_and_path(kind: str, param: str | None, count: str) -> tuple[int, str]:
    """``KIND:N[:PATH]`` of the network search agents: (N >= 1, PATH or ``pretrained``)."""
    text, _, path = (param or "").partition(":")
    try:
        n = int(text)
        if n < 1:
            raise ValueError
    except ValueError:
        raise ValueError(f"{kind} parameter must be {count} (>= 1) or {count}:PATH, e.g. "
                         f"{kind}:64 or {kind}:64:runs/x/best.zip; got {param!r}") from None
    return n, path or PRETRAINED


def players_of(obs: np.ndarray) -> np.ndarray:
    """Player count encoded in each observation row (``global.num_players`` one-hot)."""
    onehot = np.asarray(obs)[:, O_NUM_PLAYERS:O_NUM_PLAYERS + MAX_PLAYERS]
    if not (onehot.max(axis=1) > 0).all():
        raise ValueError("an observation row does not encode the player count "
                         "(global.num_players is all zero); encode it with encode_obs")
    return onehot.argmax(axis=1) + 1


class PretrainedActor:
    """The shipped policies as one actor: each observation row goes to the checkpoint of
    its game's player count (``pretrained_path``), loaded on first use; rows of one count
    share a forward pass. ``search``: the searches' networks (``SEARCH_FILES``) instead."""

    def __init__(self, folder: str | None = None, search: bool = False):
        self.folder = folder
        self.search = search

    def network(self, num_players: int, critic: bool = False):
        """``(module, meta)`` for games of ``num_players``."""
        return load_network(ckpt.pretrained_path(num_players, self.folder, self.search), critic)

    def __call__(self, obs):
        import torch                    # optional extra (train): only when a policy plays
        counts = players_of(obs.numpy())
        if (counts == counts[0]).all():
            return self.network(int(counts[0]))[0](obs)
        out = torch.empty((obs.shape[0], N_ACTIONS), dtype=torch.float32)
        for n in np.unique(counts):
            rows = torch.from_numpy(np.flatnonzero(counts == n))
            out[rows] = self.network(int(n))[0](obs[rows])
        return out


class PolicyPlayer:
    """Plays a policy network: masked argmax (``deterministic``) or a masked sample.

    ``act_batch(obs, masks)`` picks for many positions at once; ``act(game)`` is the
    single-game :class:`agents.Agent` interface.
    """

    batched = True

    def __init__(self, actor, deterministic: bool = True, seed: int = 0, name: str = "ppo",
                 meta: dict | None = None):
        import torch                    # optional extra (train): only when a policy plays
        self._torch = torch
        self.actor = actor
        self.deterministic = bool(deterministic)
        self.name = name
        self.meta = meta or {}
        self._obs = np.zeros((1, OBS_SIZE), np.float32)
        self._mask = np.zeros(N_ACTIONS, np.int8)
        self.reset(seed)

    @classmethod
    def from_checkpoint(cls, path, deterministic: bool = True, seed: int = 0, name=None):
        actor, meta = load_network(path)
        return cls(actor, deterministic, seed, name or f"ppo:{path}", meta=meta)

    @classmethod
    def pretrained(cls, deterministic: bool = True, seed: int = 0, name="ppo:pretrained",
                   folder: str | None = None):
        """The shipped policies, picked per position by the game's player count. ``meta``
        is the 2-player checkpoint's (or its fallback's)."""
        actor = PretrainedActor(folder)
        return cls(actor, deterministic, seed, name, meta=actor.network(2)[1])

    @classmethod
    def from_param(cls, param: str, deterministic: bool = True, seed: int = 0, name=None):
        """``ppo:PARAM``: ``pretrained`` (:meth:`pretrained`) or a checkpoint path."""
        name = name or f"ppo:{param}"
        if is_pretrained(param):
            return cls.pretrained(deterministic, seed, name)
        return cls.from_checkpoint(param, deterministic, seed, name)

    def reset(self, seed=None) -> None:
        self.seed = 0 if seed is None else int(seed)
        self.rng = np.random.default_rng(self.seed)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        with self._torch.inference_mode():
            return self.actor(self._torch.from_numpy(np.ascontiguousarray(obs))).numpy()

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, rngs=None) -> np.ndarray:
        """One legal action per row (``masks``: bool or 0/1, N x N_ACTIONS). When sampling,
        row j draws from ``rngs[j]`` if given (one generator per game, so a game's moves do
        not depend on the other games in the batch), else all rows from the player's own."""
        logits = self.logits(obs).astype(np.float64)
        legal = masks.astype(bool)
        if not legal.any(axis=1).all():
            raise ValueError("a position without legal actions was given to the policy")
        logits[~legal] = -np.inf
        if not self.deterministic:
            if rngs is None:
                logits += self.rng.gumbel(size=logits.shape)
            else:
                for j, rng in enumerate(rngs):
                    logits[j] += rng.gumbel(size=logits.shape[1])
        return logits.argmax(axis=1)

    def act(self, game) -> int:
        if game.is_terminal:
            raise ValueError(f"no legal action: the game is over ({game!r})")
        encode_obs(game.state, game.tables, game.current_player, self._obs[0])
        legal_mask(game.state, game.tables, self._mask)
        return int(self.act_batch(self._obs, self._mask[None, :])[0])

    def __repr__(self):
        return f"PolicyPlayer({self.name!r}, deterministic={self.deterministic})"
