"""Play a checkpoint's policy: :class:`PolicyPlayer` (masked argmax or sample, batched).

Loading a policy for play lives here, in the agents layer, and needs torch but
not the trainer (Stable-Baselines3): checkpoints are read weights-only by
:mod:`caledonia_env.agents.checkpoint`. ``ppo:pretrained`` names the shipped
checkpoint in ``caledonia_env/agents/pretrained/``.
"""
from __future__ import annotations

import os

import numpy as np

from ..engine.actions import N_ACTIONS
from ..engine.mask import legal_mask
from ..env.observation import OBS_SIZE, encode_obs
from . import checkpoint as ckpt

PRETRAINED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained")
PRETRAINED = {"pretrained": "ppo_2p.zip"}


def checkpoint_path(param: str) -> str:
    """Path of ``ppo:PARAM``: ``pretrained`` is the shipped 2-player checkpoint."""
    if param in PRETRAINED and not os.path.exists(param):
        return os.path.join(PRETRAINED_DIR, PRETRAINED[param])
    return param


class PolicyPlayer:
    """Plays a policy network: masked argmax (``deterministic``) or a masked sample.

    ``act_batch(obs, masks)`` picks for many positions at once; ``act(game)`` is the
    single-game :class:`agents.Agent` interface.
    """

    batched = True

    def __init__(self, actor, deterministic: bool = True, seed: int = 0, name: str = "ppo",
                 meta: dict | None = None):
        import torch
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
        ck = ckpt.load(path)
        return cls(ckpt.load_actor(ck), deterministic, seed,
                   name or f"ppo:{path}", meta=dict(ck.meta, sha256=ck.sha256))

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
