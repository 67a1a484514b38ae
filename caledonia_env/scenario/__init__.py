"""Readable scenario dicts <-> game states (docs/scenarios.md).

The codec under ``Game``: :func:`scenario_config` reads the setup and
:func:`write_scenario` writes the position into a fresh game's state, after
checking every value, list length, terrain, occupancy and cross-field rule
(``ScenarioError`` names the field and the allowed values); :func:`to_scenario`
writes the same schema back, and the pair round-trips the state exactly.
``Game.from_scenario`` / ``Game.to_scenario`` are the public entry points.

Modules: ``fields`` (keys, names, typed readers), ``setup`` (the GameConfig),
``position`` (the board and turn), ``players`` (one player's stock and units),
``pending`` (work left in the current decision), ``dump`` (state -> dict),
``versions`` (older scenario formats read as the current one).
"""
from caledonia_env.scenario.dump import to_scenario
from caledonia_env.scenario.fields import PENDING, PHASES, PLAYER_KEYS, TOP_KEYS, ScenarioError
from caledonia_env.scenario.position import write_scenario
from caledonia_env.scenario.setup import scenario_config
from caledonia_env.scenario.versions import PORT_LABELS_V1, SCENARIO_VERSION, upgrade_scenario

__all__ = ["ScenarioError", "SCENARIO_VERSION", "PORT_LABELS_V1",
           "upgrade_scenario", "scenario_config", "write_scenario", "to_scenario", "TOP_KEYS",
           "PLAYER_KEYS", "PHASES", "PENDING"]
