"""Compatibility module: the ruleset API, split into names, schema, checks, tables, loader.

``from caledonia_env.data.ruleset import CLAN_START_FIELDS`` and the like keep working;
new code imports from :mod:`caledonia_env.data`.
"""

from .loader import DEFAULT_RULESET_DIR, load_ruleset
from .names import (BASIC_GOODS, BUILDINGS, CLAN_START_FIELDS, CLANS, CONTRACT_COLUMNS, GOODS,
                    IMPORT_GOODS, MEATS, PORT_KIND_PARAMS, PORT_KINDS, PORT_PARAMS, PORTS,
                    PROCESSED_GOODS, SCORING_KINDS, SCORING_TILES, SOURCES, STARTING_TILES,
                    TABLES, TERRAINS, TRACKED_IMPORTS, UNITS, WORKERS, RulesetError)
from .tables import Ruleset

__all__ = [
    "DEFAULT_RULESET_DIR", "Ruleset", "RulesetError", "load_ruleset",
    "SOURCES", "GOODS", "BASIC_GOODS", "PROCESSED_GOODS", "IMPORT_GOODS",
    "TRACKED_IMPORTS", "MEATS", "UNITS", "BUILDINGS", "WORKERS", "TERRAINS",
    "CLANS", "PORTS", "SCORING_TILES", "STARTING_TILES", "SCORING_KINDS",
    "PORT_KINDS", "PORT_PARAMS", "PORT_KIND_PARAMS", "CLAN_START_FIELDS",
    "CONTRACT_COLUMNS", "TABLES",
]
