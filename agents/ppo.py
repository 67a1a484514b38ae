"""``ppo:PATH``: a policy trained by ``caledonia train`` (MaskablePPO) playing as a bot.

``agents.make("ppo:runs/x/best.zip")`` or ``ppo:pretrained``: the shipped policy for the
game's player count (``agents/pretrained/ppo_2p.zip`` for 2 players, ``ppo_3p.zip``
for 3, ``ppo_4p.zip`` for 4, ``ppo_solo.zip`` for the solo game; the nearest shipped count when
a folder has none for a count, see
:func:`checkpoint.pretrained_path`). The same agent may play games of different sizes. The
checkpoint is read weights-only (no pickled code, see ``agents/checkpoint.py``);
torch is imported only when such an agent is made, so ``agents`` works without the train
extra. By default the agent plays the most likely legal action (``deterministic=True``);
``agents.make("ppo:PATH", deterministic=False)`` samples from the policy instead.
"""
from __future__ import annotations

from caledonia_env.agents.base import Agent
from caledonia_env.agents.policy import PolicyPlayer


def need_torch(kind: str) -> None:
    try:
        import torch  # noqa: F401  (optional extra: checked, not used, here)
    except ImportError as e:
        raise ValueError(f"{kind} agents need torch: pip install -e '.[train]' ({e})") from None


class PPOAgent(Agent):
    """A trained policy: masked argmax over its action logits (or a sample)."""

    name = "ppo"

    def __init__(self, path: str, seed: int = 0, name: str | None = None,
                 deterministic: bool = True):
        need_torch("ppo")
        self.path = path
        self.player = PolicyPlayer.from_param(path, deterministic, name=f"ppo:{path}")
        self.meta = self.player.meta
        super().__init__(seed, name)

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self.player.reset(seed)

    def act(self, game) -> int:
        return self.player.act(game)

