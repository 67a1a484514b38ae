"""Fixed name orders of the ruleset tables.

Every per-good / per-unit / per-clan array of a :class:`~caledonia_env.data.Ruleset`
is indexed in these orders; the numbers themselves live in the data files.
"""

import json

#: provenance kinds (docs/ruleset.md): a ``source`` is one of these, some with a detail
SOURCES = ("rulebook", "erratum", "faq", "sourced", "community", "estimate")
#: the public sources a ``sourced:<ID>`` value names (docs/ruleset.md, "Provenance")
SOURCE_IDS = ("EN", "PB", "DA", "MP", "BGA", "PHP", "FAQ")
SOURCE_FORMS = ("rulebook, rulebook:<where> (e.g. rulebook:EN p.3), erratum[:<where>], "
                "faq[:<where>], sourced:<ID>[/<ID>...] with ID one of " + ", ".join(SOURCE_IDS)
                + ", community[:<where>], estimate")
GOODS = ("wool", "grain", "milk", "bread", "cheese", "whisky")
BASIC_GOODS = GOODS[:3]
PROCESSED_GOODS = GOODS[3:]
IMPORT_GOODS = ("cotton", "tobacco", "sugar_cane", "hops")
TRACKED_IMPORTS = IMPORT_GOODS[:3]          # moved on the export board's import track
MEATS = ("beef", "mutton")                  # beef = slaughtered cow, mutton = slaughtered sheep
UNITS = ("sheep", "cow", "field", "cheese_dairy", "bakery", "distillery", "lumberjack", "miner")
BUILDINGS = ("cheese_dairy", "bakery", "distillery")
WORKERS = ("lumberjack", "miner")
TERRAINS = ("pasture", "forest", "mountain")
CLANS = ("buchanan", "campbell", "cunningham", "fergusson", "macdonald",
         "mackenzie", "robertson", "stewart", "brewer")
#: printed number of each port bonus tile (R-5), in the engine's tile order (PORT_KINDS below)
PORT_NUMBERS = (1, 5, 2, 6, 3, 7, 4, 8, 9)
PORTS = tuple(f"P{n}" for n in PORT_NUMBERS)     # the tile labels, engine tile order
#: the project's own labels before it used the printed numbers (scenario version 1, game
#: record versions 1-3), engine tile order: LEGACY_PORTS[i] is today's PORTS[i]
LEGACY_PORTS = tuple(f"P{i}" for i in range(1, 10))
SCORING_TILES = tuple(f"T{i}" for i in range(1, 10))
STARTING_TILES = tuple(f"S{i}" for i in range(1, 10))
PLAYER_COUNTS = (1, 2, 3, 4)                # 1 = the solo game
#: the player counts of a game with opponents (R-1); the solo game has one player (R-9.2)
MULTIPLAYER_COUNTS = PLAYER_COUNTS[1:]
#: how the clans are assigned (GameConfig.clan_mode, the engine's T_CLAN_MODE index): no
#: clans (R-1.9), drawn and drafted (R-1.7), auctioned (R-9.4), one fixed clan per player
CLAN_MODES = ("none", "draft", "auction", "fixed")
#: the clan modes a user names (--clans, the web app); "fixed" is a list of clans
CLAN_CHOICES = CLAN_MODES[:3]
PLAYER_COUNT_KEYS = tuple(str(n) for n in PLAYER_COUNTS)   # keys of by-player-count objects
MAX_PLAYERS = len(PLAYER_COUNTS)
MODULES = "ABCD"                            # the four map modules, in board order
#: every ruleset integer lies in -MAX_VALUE..MAX_VALUE (docs/ruleset.md): sums of a game's
#: numbers then stay far below the engine's int32 state
MAX_VALUE = 10 ** 6

SCORING_KINDS = ("basic_goods", "processed_goods", "deployed_units", "deployed_workers",
                 "border_units", "tracked_imports", "meat", "upgrades", "expensive_hexes")
PORT_KINDS = ("meat_reduction", "money", "basic_exchange", "price_shift", "processed_exchange",
              "swap_units", "upgrade_glory", "money_structure", "copy_port")
PORT_PARAMS = ("animals", "money", "discard", "gain", "steps", "units", "upgrades", "glory", "cost")
PORT_KIND_PARAMS = {
    "meat_reduction": ("animals",),
    "money": ("money",),
    "basic_exchange": ("discard", "gain"),
    "price_shift": ("steps",),
    "processed_exchange": ("discard", "gain"),
    "swap_units": ("units",),
    "upgrade_glory": ("upgrades", "glory"),
    "money_structure": ("money",),
    "copy_port": ("cost",),
}
# Per-player starting material a clan may change (setup.player_start holds the no-clan values).
CLAN_START_FIELDS = ("workers_to_place", "export_boxes", "merchants_in_supply",
                     "shipping_level_1_2", "shipping_level_3_4")
CONTRACT_COLUMNS = ("need_wool", "need_bread", "need_cheese", "need_whisky", "need_beef",
                    "need_mutton", "gain_cotton", "gain_tobacco", "gain_sugar_cane", "gain_hops",
                    "gain_money", "gain_free_hex", "gain_upgrade")
TABLES = ("setup", "units", "economy", "market", "export_board", "starting_tiles",
          "scoring_tiles", "ports", "final_scoring", "clans", "solo", "contracts")
JSON_TABLES = TABLES[:-1]
META = ("source", "sources", "note")        # provenance keys of any JSON object


def source_kind(source) -> str:
    """The kind (an item of ``SOURCES``) of a provenance string; ``ValueError`` naming the
    allowed forms if it is none of them."""
    if isinstance(source, str):
        kind, sep, detail = source.partition(":")
        if kind in ("rulebook", "erratum", "faq", "community") and (not sep or detail.strip()):
            return kind
        if kind == "estimate" and not sep:
            return kind
        ids = detail.split("/")
        if kind == "sourced" and all(i in SOURCE_IDS for i in ids) and len(set(ids)) == len(ids):
            return kind
    raise ValueError(f"unknown source {show(source)} (allowed: {SOURCE_FORMS})")


class RulesetError(ValueError):
    """A ruleset file is missing, malformed or inconsistent, or the engine cannot honour it.

    The message names the file, the table, the field and the problem.
    """


def show(v) -> str:
    """A value as JSON (for error messages)."""
    try:
        return json.dumps(v)
    except (TypeError, ValueError):
        return repr(v)


def where(label: str, table: str, segs) -> str:
    """The place of an error: file ``label``, ``table`` and the path segments ``segs``."""
    return f"{label}: table '{table}'" + "".join(", " + s for s in segs)
