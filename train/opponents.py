"""The self-play opponent mix (``--opponents NAME=WEIGHT,...``): pool entries (the current
policy, snapshots, the league's draw) and bots, drawn per episode and seat."""
from __future__ import annotations

import numpy as np

from caledonia_env import agents

POOL_KEYS = ("self", "snapshot", "latest", "league")


class OpponentMix:
    """Weighted opponent kinds, parsed from ``"self=0.3,greedy=0.2,random"`` (weight 1 when
    omitted; weights are normalized)."""

    def __init__(self, text_or_items):
        if isinstance(text_or_items, str):
            items = []
            for part in text_or_items.split(","):
                part = part.strip()
                if not part:
                    continue
                name, sep, w = part.rpartition("=") if "=" in part else (part, "", "1")
                name = name.strip()
                try:
                    weight = float(w)
                except ValueError:
                    raise ValueError(f"opponent mix entry {part!r}: weight {w!r} is not a "
                                     f"number (use NAME=WEIGHT, e.g. greedy=0.25)") from None
                items.append((name, weight))
        else:
            items = [(str(k), float(v)) for k, v in text_or_items]
        if not items:
            raise ValueError("the opponent mix is empty; e.g. self=0.4,snapshot=0.3,greedy=0.3")
        for name, w in items:
            if not w >= 0:
                raise ValueError(f"opponent weight of {name!r} must be >= 0, got {w}")
            if name not in POOL_KEYS:
                _check_agent_name(name)
        total = sum(w for _, w in items)
        if total <= 0:
            raise ValueError("opponent weights sum to 0")
        self.names = [n for n, _ in items]
        self.probs = np.array([w / total for _, w in items])

    def sample(self, rng) -> str:
        return self.names[int(rng.choice(len(self.names), p=self.probs))]

    def uses_pool(self) -> bool:
        return any(n in POOL_KEYS for n, p in zip(self.names, self.probs) if p > 0)

    def __str__(self):
        return ",".join(f"{n}={p:.3g}" for n, p in zip(self.names, self.probs))


def _check_agent_name(name):
    if name.startswith("ppo:"):
        return
    try:
        agents.make(name, seed=0)
    except ValueError as e:
        raise ValueError(f"opponent mix: {e}\n(pool entries: {', '.join(POOL_KEYS)})") from None
