"""Scenario format versions: an older scenario dict read as the current one (docs/scenarios.md).

Version 1 named the port tiles (R-5) by the project's own labels and the pending
price-shift good ``p4_good``; version 2 names the tiles by their printed numbers and the
field ``price_shift_good``. :data:`PORT_LABELS_V1` is the mapping. A scenario without a
``"version"`` key is read as the current version (the numbers printed on the tiles); one
in the old labels says ``"version": 1``.
"""
from __future__ import annotations

from caledonia_env.data.names import LEGACY_PORTS, PORTS
from caledonia_env.scenario.fields import ScenarioError

SCENARIO_VERSION = 2
READABLE_VERSIONS = (1, 2)
#: version-1 port label -> the printed number of the same tile
PORT_LABELS_V1 = dict(zip(LEGACY_PORTS, PORTS))
#: version-1 pending field -> its current name
PENDING_NAMES_V1 = {"p4_good": "price_shift_good"}


def scenario_version(d: dict) -> int:
    """The format version of scenario ``d`` (the current one when it has no ``"version"``
    key)."""
    v = d.get("version", SCENARIO_VERSION)
    if isinstance(v, bool) or v not in READABLE_VERSIONS:
        raise ScenarioError(f"unsupported scenario version {v!r}; readable: {READABLE_VERSIONS}")
    return int(v)


def upgrade_scenario(d: dict) -> dict:
    """``d`` in the current format (a new dict; ``d`` itself is not changed): a version-1
    scenario's port tiles are renamed by :data:`PORT_LABELS_V1` and its pending
    ``p4_good`` is ``price_shift_good``; a current one is returned as it is."""
    if not isinstance(d, dict) or scenario_version(d) == SCENARIO_VERSION:
        return d
    out = dict(d, version=SCENARIO_VERSION)
    ports = d.get("ports")
    if isinstance(ports, dict):
        out["ports"] = {c: _printed(t) for c, t in ports.items()}
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
