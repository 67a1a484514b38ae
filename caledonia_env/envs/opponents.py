"""Opponents of the single-agent views: a built-in random agent, names and callables.

An opponent is anything with ``act(game) -> action id`` (and optionally
``reset(seed)``), a plain callable ``f(game) -> action id``, or a name. The
name ``"random"`` is built in (:class:`RandomOpponent`); any other name is made by
the factory in :data:`caledonia_env.plugins.opponent_factory`, which the package
root fills with ``caledonia_env.agents.make`` (imported only when such a name is
used): the env layer never imports the agents layer.
"""
from __future__ import annotations

import numpy as np

from caledonia_env import plugins
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.mask import legal_mask


class RandomOpponent:
    """Uniformly random legal action, from its own generator seeded by ``reset(seed)``: the
    one random policy (``caledonia_env.agents.RandomAgent`` is this class with the agents'
    interface)."""

    name = "random"

    def __init__(self, seed: int | None = 0):
        self._mask = np.zeros(N_ACTIONS, np.int8)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Restart the generator from ``seed`` (None: fresh entropy)."""
        self.seed = None if seed is None else int(seed)
        self.rng = np.random.default_rng(self.seed)

    def act(self, game) -> int:
        legal_mask(game.state, game.tables, self._mask)
        legal = np.flatnonzero(self._mask)
        if len(legal) == 0:
            raise ValueError(f"no legal action: the game is over ({game!r})")
        return int(legal[self.rng.integers(len(legal))])

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r}, seed={self.seed})"


class _CallableAgent:
    """Adapter for a plain function ``f(game) -> action id`` (no reset needed)."""

    def __init__(self, fn):
        self.fn = fn
        self.name = getattr(fn, "__name__", repr(fn))

    def reset(self, seed=None):
        pass

    def act(self, game) -> int:
        return self.fn(game)

    def __repr__(self):
        return f"CallableAgent({self.name})"


def automa_level(spec):
    """Difficulty of an Automa opponent spec (``"automa:LEVEL"`` or an agent named so), else
    None. Automa seats are played by the engine (A-0), never through ``act``."""
    name = spec if isinstance(spec, str) else getattr(spec, "name", None)
    if not isinstance(name, str) or name.strip().partition(":")[0] != "automa":
        return None
    level = name.strip().partition(":")[2]
    if level not in ("1", "2", "3", "4", "5"):
        raise ValueError(f"an Automa opponent is 'automa:LEVEL' with LEVEL 1-5, got {name!r}")
    return int(level)


def make_opponent(spec, seed: int = 0):
    """One opponent object from a name, an agent (``act`` method) or a callable
    (None for an Automa spec: the engine plays that seat)."""
    if automa_level(spec) is not None:
        return None
    if isinstance(spec, str):
        if spec == "random":
            return RandomOpponent(seed)
        if plugins.opponent_factory is None:
            raise ValueError(f"opponent {spec!r}: only 'random' is built in and no agent "
                             f"factory is set (caledonia_env.plugins.opponent_factory)")
        try:
            return plugins.opponent_factory(spec, seed=seed)
        except (KeyError, ValueError) as e:
            raise ValueError(f"opponent {spec!r}: {e} ('random' is built in)") from None
    if hasattr(spec, "act"):
        return spec
    if callable(spec):
        return _CallableAgent(spec)
    raise TypeError(f"an opponent is a name, an object with act(game) or a callable "
                    f"f(game) -> action id; got {spec!r}")


def opponent_specs(opponents, n_opponents: int) -> list:
    """Expand ``opponents`` (one spec for all, or a list in seat order after the learner)."""
    if isinstance(opponents, (list, tuple)):
        if len(opponents) < n_opponents:
            raise ValueError(f"need {n_opponents} opponents (seat order after the learner), "
                             f"got {len(opponents)}")
        return list(opponents[:n_opponents])
    return [opponents] * n_opponents


def reset_opponent(agent, seed: int) -> None:
    reset = getattr(agent, "reset", None)
    if reset is not None:
        reset(seed)


def is_random_spec(opponents) -> bool:
    """True when every opponent is the built-in random agent (vector env fast path)."""
    specs = opponents if isinstance(opponents, (list, tuple)) else [opponents]
    return all(isinstance(s, str) and s == "random" for s in specs)
