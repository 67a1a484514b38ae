"""The scenario schema: its keys, names and pending fields; typed readers (docs/scenarios.md).

Every reader raises :class:`ScenarioError` naming the field and the allowed values.
"""
from __future__ import annotations

import numpy as np

from caledonia_env.config import CLAN_NAMES, MODULES
from caledonia_env.data.names import PORTS as PORT_TILES  # noqa: F401  (the scenario's names)
from caledonia_env.data.names import SCORING_TILES  # noqa: F401
from caledonia_env.data.names import WORKERS
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (N_GOODS, PH_ACTIONS, PH_OVER, PH_PRODUCTION, PH_SETUP_PICK,
                                PH_SETUP_WORKERS, TERRAIN_LOCH, TERRAIN_PORT)

PHASES = {"setup_pick": PH_SETUP_PICK, "setup_workers": PH_SETUP_WORKERS,
          "actions": PH_ACTIONS, "production": PH_PRODUCTION, "over": PH_OVER}
# decision contexts each phase can be waiting on
PHASE_CONTEXTS = {
    "setup_pick": ("starting pick", "clan auction"),
    "setup_workers": ("starting worker",),
    "actions": ("main action", "after main action", "neighborhood purchase", "structure bonus",
                "slaughter", "export bonus", "port discard", "port gain", "port price",
                "port swap", "port copy", "second contract", "fisherman rowing", "brewing"),
    "production": ("production", "cellar", "butter"),
    "over": ("game over",),
}
CORNERS = MODULES            # a port corner is named by its module
TECH = WORKERS               # one technology upgrade per worker type
SIDES = ("buy", "sell")
MAX_COUNT = 10 ** 6         # money, goods, glory, VP: far below int32 overflow
# raw pending-work fields written under "pending" (name -> (offset, length))
PENDING = {
    "neighborhood_goods": (L.S_NB_PENDING, 1), "structure_pending": (L.S_STRUCT_PENDING, 1),
    "neighborhood_bought": (L.S_NB_BOUGHT, N_GOODS),      # this turn, per good
    "keep_left": (L.S_KEEP_LEFT, 1), "meat_left": (L.S_MEAT_REM, 2),
    "meat_ports": (L.S_MEAT_PORTS, 1), "free_hexes": (L.S_BONUS_HEX, 1),
    "upgrades": (L.S_BONUS_UPG, 1), "port_kind": (L.S_PORT_KIND, 1),
    "port_left": (L.S_PORT_LEFT, 1), "port_stage": (L.S_PORT_STAGE, 1),
    "swap_out": (L.S_SWAP_OUT, 1), "swap_in": (L.S_SWAP_IN, 1), "swap_node": (L.S_SWAP_NODE, 1),
    "price_shift_good": (L.S_PRICE_SHIFT_GOOD, 1), "main_done": (L.S_MAIN_DONE, 1),
    "production_seat": (L.S_PROC_SEAT, 1), "production_kind": (L.S_PROC_KIND, 1),
    "setup_step": (L.S_SETUP_PTR, 1), "turn_position": (L.S_TURN_POS, 1),
    "deck_head": (L.S_DECK_HEAD, 1), "turn_contracts": (L.S_TURN_CONTRACTS, 1),
    "second_contract": (L.S_SECOND_OBTAIN, 1),
    "rowed": (L.S_ROWED, 1), "row_from": (L.S_ROW_FROM, 1), "brew_left": (L.S_BREW_LEFT, 1),
    "auction_stage": (L.S_AUC_STAGE, 1), "auction_high": (L.S_AUC_HIGH, 1),
    "auction_leader": (L.S_AUC_LEADER, 1), "auction_out": (L.S_AUC_OUT, 1),
    "auction_seat": (L.S_AUC_SEAT, 1), "auction_bidder": (L.S_AUC_BIDDER, 1),
}
# defaults of pending fields that are not 0 (leave-out means "nothing pending")
PENDING_DEFAULTS = {"row_from": -1, "auction_leader": -1, "auction_high": -1, "port_kind": -1,
                    "swap_node": -1, "price_shift_good": -1}
TOP_KEYS = ("version", "num_players", "map", "seed", "ruleset", "ports_enabled", "scoring_tiles_enabled",
            "variant_static_imports", "kickstarter_tiles", "round", "phase", "context",
            "current_player", "turn_order", "next_turn_order", "market", "slots", "pile",
            "scoring_tiles", "ports", "import_track", "players", "neutral", "drawn",
            "pending", "rng", "done", "solo", "clans", "clan_auction", "kickstarter_clan",
            "picks")
PLAYER_KEYS = ("money", "goods", "merchants", "merchants_on_track", "market", "units",
               "shipping", "technology", "glory", "contracts", "fulfilled", "ports_used",
               "passed", "start_tile", "clan", "score", "cellar", "whisky_made", "bid", "beer")


# pending fields that are work inside one player's turn (phase "actions" only)
TURN_WORK = ("neighborhood_goods", "neighborhood_bought", "structure_pending", "meat_left",
             "meat_ports", "free_hexes",
             "upgrades", "port_kind", "port_left", "row_from", "brew_left", "second_contract",
             "drawn")


class ScenarioError(ValueError):
    """A scenario dict that does not describe a position (names the field and what is allowed)."""


# ------------------------------------------------------------ typed readers
def read_int(where, v, lo, hi):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ScenarioError(f"{where} must be an int in {lo}..{hi}, got {type(v).__name__} {v!r}")
    if not lo <= v <= hi:
        raise ScenarioError(f"{where} must be in {lo}..{hi}, got {v}")
    return int(v)


def read_bool(where, v):
    if not isinstance(v, (bool, np.bool_)):
        raise ScenarioError(f"{where} must be true or false, got {type(v).__name__} {v!r}")
    return bool(v)


def read_list(where, v, max_len):
    if not isinstance(v, (list, tuple)):
        raise ScenarioError(f"{where} must be a list (at most {max_len} items), "
                            f"got {type(v).__name__} {v!r}")
    if len(v) > max_len:
        raise ScenarioError(f"{where} has {len(v)} items; at most {max_len} allowed")
    return list(v)


def read_dict(where, v, allowed=None):
    if not isinstance(v, dict):
        raise ScenarioError(f"{where} must be a dict, got {type(v).__name__} {v!r}")
    if allowed is not None:
        unknown = [k for k in v if not isinstance(k, str) or k.strip().lower() not in allowed]
        if unknown:
            raise ScenarioError(f"{where}: unknown keys {unknown}; allowed: {list(allowed)}")
    return v


def lookup(table, name, what):
    if isinstance(name, str):
        key = name.strip().lower()
        for i, t in enumerate(table):
            if t.lower() == key:
                return i
    raise ScenarioError(f"unknown {what} {name!r}; allowed: {', '.join(table)}")


def contract_index(rs, cid, where="contract"):
    ids = [int(x) for x in rs.contracts.ids]
    if isinstance(cid, bool) or not isinstance(cid, (int, np.integer)) or int(cid) not in ids:
        raise ScenarioError(f"{where}: unknown contract id {cid!r}; contracts are numbered "
                            f"{ids[0]}..{ids[-1]}")
    return ids.index(int(cid))


class Places:
    """Where each contract, starting tile and port tile is: one place only."""

    def __init__(self):
        self.seen = {}

    def put(self, kind, item, where):
        if item is None:
            return
        key = (kind, item)
        if key in self.seen:
            raise ScenarioError(f"{kind} {item} is both in {self.seen[key]} and in {where}; "
                                f"each {kind} is in one place only")
        self.seen[key] = where


# ------------------------------------------------------------ names of the game
def clan_name(where, c):
    """A clan given by name or id (-1/None/'none' = no clan) as its name, or None."""
    if c is None or (isinstance(c, str) and c.strip().lower() == "none"):
        return None
    if isinstance(c, (int, np.integer)) and not isinstance(c, bool):
        return None if c == -1 else CLAN_NAMES[read_int(where, c, -1, len(CLAN_NAMES) - 1)]
    return CLAN_NAMES[lookup(CLAN_NAMES, c, "clan")]



def is_land(T, node):
    """An active land hex (not a loch or a port) of the board."""
    return not T[L.T_TERRAIN + node] & (TERRAIN_LOCH | TERRAIN_PORT) and T[L.T_ACTIVE + node] != 0


def start_tile(T, tile, where):
    if tile is None:
        return -1
    allowed = [f"S{i}" for i in range(1, int(T[L.T_N_START_TILES]) + 1)]
    if not isinstance(tile, str) or tile.strip().upper() not in allowed:
        raise ScenarioError(f"{where}: unknown starting tile {tile!r}; allowed: "
                            f"{allowed[0]}..{allowed[-1]}")
    return allowed.index(tile.strip().upper())


def node_of(board, label):
    try:
        if not isinstance(label, str):
            raise KeyError(label)
        return board.node(label)
    except (KeyError, ValueError, IndexError):
        raise ScenarioError(f"unknown hex {label!r} on map {','.join(board.config)} "
                            f"(labels like 'A1-05')") from None

