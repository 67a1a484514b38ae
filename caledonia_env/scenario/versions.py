"""Scenario format versions: an older scenario dict read as the current one (docs/scenarios.md).

Version 1 (no ``"version"`` key) named the port tiles (R-5) by the project's own labels
and the pending price-shift good ``p4_good``; version 2 names the tiles by their printed
numbers and the field ``price_shift_good``. :data:`PORT_LABELS_V1` is the mapping.
"""
from __future__ import annotations

import warnings

from caledonia_env.data.names import LEGACY_PORTS, PORTS
from caledonia_env.scenario.fields import ScenarioError

SCENARIO_VERSION = 2
READABLE_VERSIONS = (1, 2)
#: version-1 port label -> the printed number of the same tile
PORT_LABELS_V1 = dict(zip(LEGACY_PORTS, PORTS))
#: version-1 pending field -> its current name
PENDING_NAMES_V1 = {"p4_good": "price_shift_good"}


class ScenarioWarning(UserWarning):
    """A scenario read in an older format whose meaning had to be guessed from its version."""


def scenario_version(d: dict) -> int:
    """The format version of scenario ``d`` (1 when it has no ``"version"`` key)."""
    v = d.get("version", 1)
    if isinstance(v, bool) or v not in READABLE_VERSIONS:
        raise ScenarioError(f"unsupported scenario version {v!r}; readable: {READABLE_VERSIONS}")
    return int(v)


def upgrade_scenario(d: dict, warn: bool = True) -> dict:
    """``d`` in the current format (a new dict; ``d`` itself is not changed).

    A version-1 scenario's port tiles are renamed by :data:`PORT_LABELS_V1`. When ``d``
    has no ``"version"`` key but names port tiles, a :class:`ScenarioWarning` (unless
    ``warn`` is False) says how they were read: write ``"version": 2`` to name them by
    their printed numbers.
    """
    if not isinstance(d, dict) or scenario_version(d) == SCENARIO_VERSION:
        return d
    out = dict(d, version=SCENARIO_VERSION)
    ports = d.get("ports")
    if isinstance(ports, dict):
        out["ports"] = {c: _printed(t) for c, t in ports.items()}
        renamed = {t: out["ports"][c] for c, t in ports.items() if isinstance(t, str)}
        if warn and renamed and "version" not in d:
            shown = ", ".join(f"{a}->{b}" for a, b in sorted(renamed.items()))
            warnings.warn(f"a scenario without \"version\" names port tiles by the old project "
                          f"labels (version 1): read as the printed tiles {shown}; write "
                          f"\"version\": {SCENARIO_VERSION} to use the printed numbers "
                          f"(docs/scenarios.md)", ScenarioWarning, stacklevel=3)
    pending = d.get("pending")
    if isinstance(pending, dict):
        out["pending"] = {PENDING_NAMES_V1.get(k, k): v for k, v in pending.items()}
    return out


def _printed(tile):
    """A version-1 tile label as its printed number (anything else unchanged, for the
    reader's own error message)."""
    if not isinstance(tile, str):
        return tile
    key = tile.strip().upper()
    return PORT_LABELS_V1.get(key, tile)
