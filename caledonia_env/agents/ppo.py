"""``ppo:PATH``: a policy trained by ``caledonia train`` (MaskablePPO) playing as a bot.

``agents.make("ppo:runs/x/best.zip")`` or ``ppo:pretrained`` (the shipped
2-player checkpoint, ``caledonia_env/agents/pretrained/ppo_2p.zip``). The checkpoint is read
weights-only (no pickled code, see ``caledonia_env/agents/checkpoint.py``); torch is imported
only when such an agent is made, so ``agents`` works without the train extra.
By default the agent plays the most likely legal action (``deterministic=True``);
``agents.make("ppo:PATH", deterministic=False)`` samples from the policy instead.
"""
from __future__ import annotations

import os

from .base import Agent
from .policy import PolicyPlayer, checkpoint_path
from .registry import kinds, register

_ACTORS: dict = {}


def _policy(path: str, deterministic: bool):
    try:
        import torch  # noqa: F401
    except ImportError as e:
        raise ValueError(f"ppo agents need torch: pip install -e '.[train]' ({e})") from None
    full = checkpoint_path(path)
    key = None
    if os.path.isfile(full):
        st = os.stat(full)
        key = (os.path.abspath(full), st.st_mtime_ns, st.st_size)
    cached = _ACTORS.get(key) if key else None
    if cached is None:
        cached = PolicyPlayer.from_checkpoint(full, deterministic)
        if key:
            _ACTORS[key] = cached
    return PolicyPlayer(cached.actor, deterministic, name=f"ppo:{path}", meta=cached.meta)


class PPOAgent(Agent):
    """A trained policy: masked argmax over its action logits (or a sample)."""

    name = "ppo"

    def __init__(self, path: str, seed: int = 0, name: str | None = None,
                 deterministic: bool = True):
        self.path = path
        self.player = _policy(path, deterministic)
        self.meta = self.player.meta
        super().__init__(seed, name)

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self.player.reset(seed)

    def act(self, game) -> int:
        return self.player.act(game)


def _factory(param, seed, **kw):
    return PPOAgent(param, seed=seed, **kw)


if "ppo" not in {k.name for k in kinds()}:
    register("ppo", _factory,
             help="a MaskablePPO policy trained by 'caledonia train' (needs the train extra).",
             param="PATH of a checkpoint .zip, or 'pretrained' for the shipped 2-player policy",
             param_required=True, example="ppo:runs/x/best.zip, ppo:pretrained")
