"""Slots a higher layer fills for a lower one, so dependencies point one way.

The env layer takes opponents by name (``opponents="greedy"``) but must not
import the agents layer above it. The package root (the facade, the top layer
with the CLI) fills :data:`opponent_factory` with a function that imports
``caledonia_env.agents`` on first use; a user can put any
``factory(name, seed=...) -> agent`` here instead.
"""
from __future__ import annotations

from collections.abc import Callable

opponent_factory: Callable | None = None
