"""Ruleset data: the game's numbers as data files, their loader and validation.

Modules: ``names`` (fixed name orders), ``schema`` (pydantic models), ``checks``
(cross-table checks, contracts), ``frozen`` (the immutable ``Ruleset``), ``estimates``
(provenance), ``named`` (bundled alternative rulesets), ``loader`` (files and overrides),
``validated`` (the stamp that lets the bundled default skip its validation), ``stamp``
(writes it). See docs/ruleset.md. ``load_ruleset()`` returns the bundled default ``Ruleset``.
"""

from caledonia_env.data.loader import DEFAULT_RULESET_DIR, load_ruleset  # noqa: F401  (re-exports)
from caledonia_env.data.named import RULESETS_DIR, bundled_rulesets  # noqa: F401  (re-exports)
from caledonia_env.data.names import (  # noqa: F401  (re-exports)
    BASIC_GOODS,
    BUILDINGS,
    CLAN_START_FIELDS,
    CLANS,
    CONTRACT_COLUMNS,
    GOODS,
    IMPORT_GOODS,
    MEATS,
    PORT_KIND_PARAMS,
    PORT_KINDS,
    PORT_PARAMS,
    PORTS,
    PROCESSED_GOODS,
    SCORING_KINDS,
    SCORING_TILES,
    SOURCE_IDS,
    SOURCES,
    STARTING_TILES,
    TABLES,
    TERRAINS,
    TRACKED_IMPORTS,
    UNITS,
    WORKERS,
    RulesetError,
)
from caledonia_env.data.frozen import Ruleset  # noqa: F401  (re-export)

__all__ = [
    "load_ruleset", "Ruleset", "RulesetError", "DEFAULT_RULESET_DIR", "RULESETS_DIR",
    "bundled_rulesets", "SOURCE_IDS",
    "SOURCES", "GOODS", "BASIC_GOODS", "PROCESSED_GOODS", "IMPORT_GOODS", "TRACKED_IMPORTS",
    "MEATS", "UNITS", "BUILDINGS", "WORKERS", "TERRAINS", "CLANS", "PORTS", "SCORING_TILES",
    "STARTING_TILES", "SCORING_KINDS", "PORT_KINDS", "PORT_PARAMS", "PORT_KIND_PARAMS",
    "CLAN_START_FIELDS", "CONTRACT_COLUMNS", "TABLES",
]
