"""Ruleset data: loading, validation and the immutable :class:`Ruleset`.

Every game number lives in the data files of ``DEFAULT_RULESET_DIR`` (one JSON
table per file plus ``contracts.csv``); this module only knows the *names*
(goods, units, clans, tiles…) and the shape of each table.  See
``docs/ruleset.md`` for the tables, their provenance and how to override them.

Provenance: every JSON object may carry ``"source"`` (one of ``SOURCES``; it
applies to everything inside the object unless overridden deeper),
``"sources"`` (per-field overrides: ``{"field": "estimate"}``, or a list of
sources aligned with a list field) and ``"note"`` (free text).  Each table
has a top-level ``"source"``.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping

import numpy as np

__all__ = [
    "DEFAULT_RULESET_DIR", "Ruleset", "RulesetError", "load_ruleset",
    "SOURCES", "GOODS", "BASIC_GOODS", "PROCESSED_GOODS", "IMPORT_GOODS",
    "TRACKED_IMPORTS", "MEATS", "UNITS", "BUILDINGS", "WORKERS", "TERRAINS",
    "CLANS", "PORTS", "SCORING_TILES", "STARTING_TILES", "SCORING_KINDS",
    "PORT_KINDS", "PORT_PARAMS", "PORT_KIND_PARAMS", "CLAN_START_FIELDS",
    "CONTRACT_COLUMNS", "TABLES",
]

DEFAULT_RULESET_DIR = Path(__file__).resolve().parent / "ruleset"

# ---------------------------------------------------------------------------
# Fixed name orders.  Every per-good / per-unit / per-clan array of a Ruleset
# is indexed in these orders.
# ---------------------------------------------------------------------------
SOURCES = ("rulebook", "community", "estimate")
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
PORTS = tuple(f"P{i}" for i in range(1, 10))
SCORING_TILES = tuple(f"T{i}" for i in range(1, 10))
STARTING_TILES = tuple(f"S{i}" for i in range(1, 10))
PLAYER_COUNTS = ("1", "2", "3", "4")        # keys of by-player-count JSON objects
MAX_PLAYERS = len(PLAYER_COUNTS)

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
_JSON_TABLES = TABLES[:-1]
_META = ("source", "sources", "note")


class RulesetError(ValueError):
    """A ruleset file is missing, malformed or inconsistent.

    The message names the file, the table, the field and the problem.
    """


# ---------------------------------------------------------------------------
# Validation machinery: tiny schema nodes with path-aware error messages.
# ---------------------------------------------------------------------------
def _show(v: Any) -> str:
    try:
        return json.dumps(v)
    except (TypeError, ValueError):
        return repr(v)


class _Ctx:
    def __init__(self, file: str, table: str):
        self.file, self.table = file, table

    def fail(self, path: tuple[str, ...], msg: str):
        where = "".join(", " + seg for seg in path)
        raise RulesetError(f"{self.file}: table '{self.table}'{where}: {msg}")


class _Node:
    def check(self, v: Any, ctx: _Ctx, path: tuple[str, ...]) -> None:  # pragma: no cover
        raise TypeError


class _Int(_Node):
    def __init__(self, lo: int | None = 0, hi: int | None = None, nonzero: bool = False):
        self.lo, self.hi, self.nonzero = lo, hi, nonzero

    def check(self, v, ctx, path):
        if type(v) is not int:
            extra = " (booleans are not integers)" if isinstance(v, bool) else ""
            ctx.fail(path, f"expected an integer, got {_show(v)}{extra}")
        if self.lo is not None and v < self.lo:
            ctx.fail(path, "must not be negative, got %d" % v if self.lo == 0
                     else f"must be >= {self.lo}, got {v}")
        if self.hi is not None and v > self.hi:
            ctx.fail(path, f"must be <= {self.hi}, got {v}")
        if self.nonzero and v == 0:
            ctx.fail(path, "must not be 0")


class _Bool(_Node):
    def check(self, v, ctx, path):
        if not isinstance(v, bool):
            ctx.fail(path, f"expected true or false, got {_show(v)}")


class _Str(_Node):
    def check(self, v, ctx, path):
        if not isinstance(v, str) or not v:
            ctx.fail(path, f"expected a non-empty string, got {_show(v)}")


class _Choice(_Node):
    def __init__(self, choices: tuple[str, ...], what: str, nullable: bool = False):
        self.choices, self.what, self.nullable = choices, what, nullable

    def check(self, v, ctx, path):
        if v is None and self.nullable:
            return
        if not isinstance(v, str):
            null = " or null" if self.nullable else ""
            ctx.fail(path, f"expected a {self.what} name{null}, got {_show(v)}")
        if v not in self.choices:
            ctx.fail(path, f"unknown {self.what} {_show(v)} (known: {', '.join(self.choices)})")


class _List(_Node):
    def __init__(self, item: _Node, length: int | None = None, min_len: int = 0,
                 distinct: bool = False):
        self.item, self.length, self.min_len, self.distinct = item, length, min_len, distinct

    def check(self, v, ctx, path):
        if not isinstance(v, list):
            ctx.fail(path, f"expected a list, got {_show(v)}")
        if self.length is not None and len(v) != self.length:
            ctx.fail(path, f"expected {self.length} items, got {len(v)}")
        if len(v) < self.min_len:
            ctx.fail(path, f"expected at least {self.min_len} item(s), got {len(v)}")
        for i, x in enumerate(v):
            self.item.check(x, ctx, path + (f"item {i + 1}",))
        if self.distinct:
            seen = [json.dumps(x, sort_keys=True) for x in v]
            for i, s in enumerate(seen):
                if s in seen[:i]:
                    ctx.fail(path, f"duplicate item {s}")


def _check_meta(obj: dict, ctx: _Ctx, path, data_keys) -> None:
    if "source" in obj:
        _Choice(SOURCES, "source").check(obj["source"], ctx, path + ("field 'source'",))
    if "note" in obj:
        _Str().check(obj["note"], ctx, path + ("field 'note'",))
    if "sources" in obj:
        srcs, p = obj["sources"], path + ("field 'sources'",)
        if not isinstance(srcs, dict):
            ctx.fail(p, f"expected an object {{field: source}}, got {_show(srcs)}")
        for k, s in srcs.items():
            pk = p + (f"key '{k}'",)
            if k not in data_keys:
                ctx.fail(pk, f"names no field of this object (fields: {', '.join(data_keys)})")
            if isinstance(s, list):
                target = obj[k]
                if not isinstance(target, list) or len(target) != len(s):
                    n = f"{len(target)} values" if isinstance(target, list) else "no list"
                    ctx.fail(pk, f"{len(s)} sources, but field '{k}' has {n} (a list of "
                             "sources must match its list field item by item)")
                for i, x in enumerate(s):
                    _Choice(SOURCES, "source").check(x, ctx, pk + (f"item {i + 1}",))
            else:
                _Choice(SOURCES, "source").check(s, ctx, pk)


class _Obj(_Node):
    """An object with fixed fields (all required unless listed in ``optional``)."""

    def __init__(self, fields: Mapping[str, _Node], optional: Mapping[str, _Node] | None = None,
                 require_source: bool = False):
        self.fields, self.optional = dict(fields), dict(optional or {})
        self.require_source = require_source

    def check(self, v, ctx, path):
        if not isinstance(v, dict):
            ctx.fail(path, f"expected an object, got {_show(v)}")
        allowed = {**self.fields, **self.optional}
        for k in v:
            if k not in allowed and k not in _META:
                ctx.fail(path, f"unknown field '{k}' (expected: {', '.join(allowed)})")
        for k in self.fields:
            if k not in v:
                ctx.fail(path, f"missing field '{k}'")
        if self.require_source and "source" not in v:
            ctx.fail(path, "missing field 'source' (one of: %s)" % ", ".join(SOURCES))
        _check_meta(v, ctx, path, [k for k in v if k not in _META])
        for k, node in allowed.items():
            if k in v:
                node.check(v[k], ctx, path + (f"field '{k}'",))


class _Any(_Node):
    def check(self, v, ctx, path):
        pass


class _Rows(_Node):
    """An object keyed by names: ``names`` required (or a subset if not ``exact``).

    ``row`` is the node for every row, or a dict giving each name its own node.
    """

    def __init__(self, names: tuple[str, ...], row: _Node | Mapping[str, _Node], label: str,
                 exact: bool = True, require_source: bool = False):
        self.names, self.row, self.label, self.exact = names, row, label, exact
        self.require_source = require_source

    def check(self, v, ctx, path):
        if not isinstance(v, dict):
            ctx.fail(path, f"expected an object keyed by {self.label}, got {_show(v)}")
        for k in v:
            if k not in self.names and k not in _META:
                ctx.fail(path, f"unknown {self.label} '{k}' (known: {', '.join(self.names)})")
        if self.exact:
            for k in self.names:
                if k not in v:
                    ctx.fail(path, f"missing {self.label} '{k}'")
        if self.require_source and "source" not in v:
            ctx.fail(path, "missing field 'source' (one of: %s)" % ", ".join(SOURCES))
        _check_meta(v, ctx, path, [k for k in v if k not in _META])
        for k in self.names:
            if k in v:
                node = self.row[k] if isinstance(self.row, Mapping) else self.row
                node.check(v[k], ctx, path + (f"{self.label} '{k}'",))


class _Fn(_Node):
    def __init__(self, fn: Callable[[Any, _Ctx, tuple], None]):
        self.fn = fn

    def check(self, v, ctx, path):
        self.fn(v, ctx, path)


def _players(item: _Node, counts: tuple[str, ...] = PLAYER_COUNTS) -> _Rows:
    return _Rows(counts, item, "players")


def _data(obj: dict) -> dict:
    """The object without its provenance keys."""
    return {k: v for k, v in obj.items() if k not in _META}


# ---------------------------------------------------------------------------
# Table schemas
# ---------------------------------------------------------------------------
_I = _Int  # non-negative integer by default

_SCHEMAS: dict[str, _Node] = {}

_SCHEMAS["setup"] = _Obj({
    "rounds": _I(1), "min_players": _I(1, MAX_PLAYERS), "max_players": _I(1, MAX_PLAYERS),
    "extra_clans_drawn": _I(), "ports_in_play": _I(0, len(PORTS)), "port_markers": _I(),
    "player_start": _Obj({f: _I() for f in CLAN_START_FIELDS}),
    "no_clans_seat_money": _List(_I(), min_len=1),
    "auction_max_bid": _I(),
}, require_source=True)

_SCHEMAS["units"] = _Rows(UNITS, _Obj({
    "count": _I(), "cost": _I(),
    "terrain": _List(_Choice(TERRAINS, "terrain"), min_len=1, distinct=True),
    "good": _Choice(GOODS, "good", nullable=True),
    "output": _I(),
    "input": _Choice(GOODS, "good", nullable=True),
    "meat": _Choice(MEATS, "meat", nullable=True),
    "income_base": _I(), "income_upgraded": _I(),
}), "unit", require_source=True)

_SCHEMAS["economy"] = _Obj({
    "merchants": _Obj({"total": _I(), "hire_cost": _I(), "bonus_cost": _I()}),
    "shipping": _Obj({"max_level": _I(1), "cost": _I(), "bonus_cost": _I()}),
    "technology": _Obj({"cost": _I(), "bonus_cost": _I()}),
    "neighborhood": _Obj({"discount_basic": _I(), "discount_processed": _I(),
                          "limit_by_players": _players(_I())}),
}, require_source=True)

_SCHEMAS["market"] = _Rows(GOODS, _Obj({
    f: _I() for f in ("min", "max", "start_1_2", "start_3_4", "solo_avg_min", "solo_avg_max")
}), "good", require_source=True)

_SCHEMAS["export_board"] = _Obj({
    "contracts_source": _Choice(SOURCES, "source"),
    "slots_by_players": _players(_I(1)),
    "contract_cost_by_round": _List(_Int(None), min_len=1),
    "pass_bonus_by_players": _players(_List(_I(), min_len=1), PLAYER_COUNTS[1:]),
    "import_track": _Obj({"length": _I(1), "marked_spaces": _List(_I(1), distinct=True),
                          "money_per_mark": _I()}),
    "structure_bonus": _Obj({"buildings": _I(1), "draw": _I(), "keep": _I()}),
}, require_source=True)

_SCHEMAS["starting_tiles"] = _Rows(STARTING_TILES, _Obj({
    "money": _I(), "goods": _Rows(GOODS, _I(), "good", exact=False),
}), "tile", require_source=True)


def _kind_of(v, ctx, path, kinds: tuple[str, ...], what: str) -> str:
    if not isinstance(v, dict):
        ctx.fail(path, f"expected an object, got {_show(v)}")
    if "kind" not in v:
        ctx.fail(path, "missing field 'kind'")
    _Choice(kinds, what).check(v["kind"], ctx, path + ("field 'kind'",))
    return v["kind"]


def _check_scoring_row(v, ctx, path):
    kind = _kind_of(v, ctx, path, SCORING_KINDS, "scoring kind")
    fields = {"kind": _Any(), "glory": _I(), "per": _I(1), "optional": _Bool()}
    if kind == "deployed_units":
        fields["unit_glory"] = _Rows(UNITS, _I(), "unit", exact=False)
    if kind == "expensive_hexes":
        fields["min_land_cost"] = _I()
    _Obj(fields).check(v, ctx, path)


_SCHEMAS["scoring_tiles"] = _Rows(SCORING_TILES, _Fn(_check_scoring_row), "tile",
                                  require_source=True)


def _check_port_row(v, ctx, path):
    kind = _kind_of(v, ctx, path, PORT_KINDS, "port kind")
    _Obj({"kind": _Any(), "optional": _Bool(), **{p: _I() for p in PORT_KIND_PARAMS[kind]}}
         ).check(v, ctx, path)


_SCHEMAS["ports"] = _Rows(PORTS, _Fn(_check_port_row), "port", require_source=True)

_SCHEMAS["final_scoring"] = _Obj({
    "vp_per_basic_good": _I(), "vp_per_processed_good": _I(), "money_per_vp": _I(1),
    "vp_per_hops": _I(),
    "import_vp_by_rank": _List(_I(), length=len(TRACKED_IMPORTS)),
    "import_rarity_order": _List(_Choice(TRACKED_IMPORTS, "import good"),
                                 length=len(TRACKED_IMPORTS), distinct=True),
    "static_import_vp": _I(),
    "export_majority_vp": _players(_List(_I(), min_len=1), PLAYER_COUNTS[1:]),
    "settlement_vp": _players(_List(_I(), min_len=1), PLAYER_COUNTS[1:]),
    "export_majority_min_contracts": _I(),
    "tie_rule": _Choice(("split_floor",), "tie rule"),
    "winner_tiebreak": _Choice(("money",), "winner tie-break"),
}, require_source=True)

# Each clan's own parameters (names and types only; the values are data).
_CLAN_PARAMS: dict[str, dict[str, _Node]] = {
    "buchanan": {"contracts_per_action": _I(1), "pay_once_per_turn": _Bool(),
                 "structure_draw": _I(), "structure_keep": _I(), "fulfill_per_action": _I(1)},
    "campbell": {"building_discount": _List(_I(), min_len=1)},
    "cunningham": {"milk_money": _I()},
    "fergusson": {"workers_on_border": _Bool(), "last_worker_after_all": _Bool()},
    "macdonald": {"worker_cost": _I(), "worker_income": _I(), "technology_allowed": _Bool(),
                  "fisherman_land_cost": _I(), "rows_per_turn": _I()},
    "mackenzie": {"whisky_money": _I(), "cellar_money": _List(_I(), min_len=1),
                  "cellar_in_per_production": _I()},
    "robertson": {"delta_discount_1_2": _I(), "delta_discount_3_4": _I()},
    "stewart": {"market_money": _I()},
    "brewer": {"beer_money": _I(), "beer_grain": _I(), "beer_max_per_contract": _I()},
}


_SCHEMAS["clans"] = _Rows(CLANS, {
    clan: _Obj({"optional": _Bool(), **params}, {f: _I() for f in CLAN_START_FIELDS})
    for clan, params in _CLAN_PARAMS.items()
}, "clan", require_source=True)

_THRESHOLD = _Obj({"min": _I(), "vp": _I()})
_SCHEMAS["solo"] = _Obj({
    "pass_money": _I(), "start_contracts": _I(), "blocked_land_cost": _I(),
    "track_imports": _Bool(), "import_vp": _I(),
    "market_phase_rounds": _List(_I(1), distinct=True),
    "goods_changed_per_round": _I(),
    "goods_die": _List(_Choice(GOODS, "good"), min_len=1),
    "price_die": _List(_Int(None, nonzero=True), min_len=1),
    "removal_slot": _List(_I()),
    "export_vp": _List(_THRESHOLD),
    "settlement_vp": _List(_THRESHOLD),
    "rating": _List(_Obj({"min": _I(), "name": _Str()}), min_len=1),
}, require_source=True)


# ---------------------------------------------------------------------------
# Cross-field checks (after the schema check of every table)
# ---------------------------------------------------------------------------
def _semantic_checks(t: dict[str, dict], ctxs: dict[str, _Ctx]) -> None:
    F = lambda name: f"field '{name}'"  # noqa: E731
    setup = t["setup"]
    c = ctxs["setup"]
    if setup["min_players"] > setup["max_players"]:
        c.fail((F("min_players"),), f"min_players {setup['min_players']} > max_players "
               f"{setup['max_players']}")
    if len(setup["no_clans_seat_money"]) != setup["max_players"]:
        c.fail((F("no_clans_seat_money"),), f"expected {setup['max_players']} values (one per "
               f"seat, setup.max_players), got {len(setup['no_clans_seat_money'])}")
    rounds = setup["rounds"]

    c = ctxs["units"]
    for u in UNITS:
        row = t["units"][u]
        if row["input"] is not None and row["good"] is None:
            c.fail((f"unit '{u}'", F("input")), "a unit with an input good needs a 'good' output")

    eco = t["economy"]
    merchants, max_ship = eco["merchants"]["total"], eco["shipping"]["max_level"]

    c = ctxs["market"]
    for g in GOODS:
        m, p = t["market"][g], (f"good '{g}'",)
        if m["min"] > m["max"]:
            c.fail(p + (F("min"),), f"min {m['min']} > max {m['max']}")
        for f in ("start_1_2", "start_3_4", "solo_avg_min", "solo_avg_max"):
            if not m["min"] <= m[f] <= m["max"]:
                c.fail(p + (F(f),), f"{m[f]} is outside the price track {m['min']}..{m['max']}")
        if m["solo_avg_min"] > m["solo_avg_max"]:
            c.fail(p + (F("solo_avg_min"),), f"solo_avg_min {m['solo_avg_min']} > solo_avg_max "
                   f"{m['solo_avg_max']}")

    ex, c = t["export_board"], ctxs["export_board"]
    if len(ex["contract_cost_by_round"]) != rounds:
        c.fail((F("contract_cost_by_round"),), f"expected {rounds} values (one per round, "
               f"setup.rounds = {rounds}), got {len(ex['contract_cost_by_round'])}")
    for n in PLAYER_COUNTS[1:]:
        lst = ex["pass_bonus_by_players"][n]
        if len(lst) != int(n):
            c.fail((F("pass_bonus_by_players"), f"players '{n}'"),
                   f"expected {n} values (one per passing position), got {len(lst)}")
    tr = ex["import_track"]
    marks = tr["marked_spaces"]
    if marks != sorted(marks) or (marks and marks[-1] > tr["length"]):
        c.fail((F("import_track"), F("marked_spaces")),
               f"must be increasing spaces within 1..length ({tr['length']})")
    sb = ex["structure_bonus"]
    if sb["keep"] > sb["draw"]:
        c.fail((F("structure_bonus"), F("keep")), f"keep {sb['keep']} > draw {sb['draw']}")

    fs, c = t["final_scoring"], ctxs["final_scoring"]
    for f in ("export_majority_vp", "settlement_vp"):
        for n in PLAYER_COUNTS[1:]:
            if len(fs[f][n]) > int(n):
                c.fail((F(f), f"players '{n}'"), f"{len(fs[f][n])} places for {n} players")

    cl, c = t["clans"], ctxs["clans"]
    start_fields = {**setup["player_start"]}
    for clan in CLANS:
        row = {**start_fields, **_data(cl[clan])}
        p = (f"clan '{clan}'",)
        if row["merchants_in_supply"] > merchants:
            c.fail(p + (F("merchants_in_supply"),), f"{row['merchants_in_supply']} > "
                   f"economy.merchants.total ({merchants})")
        for f in ("shipping_level_1_2", "shipping_level_3_4"):
            if row[f] > max_ship:
                c.fail(p + (F(f),), f"{row[f]} > economy.shipping.max_level ({max_ship})")
    n_build = max(t["units"][b]["count"] for b in BUILDINGS)
    if len(cl["campbell"]["building_discount"]) != n_build:
        c.fail(("clan 'campbell'", F("building_discount")), f"expected {n_build} values (one per "
               f"building of a type, units count), got {len(cl['campbell']['building_discount'])}")
    b = cl["buchanan"]
    if b["structure_keep"] > b["structure_draw"]:
        c.fail(("clan 'buchanan'", F("structure_keep")), "structure_keep > structure_draw")
    c = ctxs["setup"]
    ps = setup["player_start"]
    if ps["merchants_in_supply"] > merchants:
        c.fail((F("player_start"), F("merchants_in_supply")),
               f"{ps['merchants_in_supply']} > economy.merchants.total ({merchants})")
    for f in ("shipping_level_1_2", "shipping_level_3_4"):
        if ps[f] > max_ship:
            c.fail((F("player_start"), F(f)), f"{ps[f]} > economy.shipping.max_level ({max_ship})")

    so, c = t["solo"], ctxs["solo"]
    solo_slots = ex["slots_by_players"]["1"]
    if len(so["removal_slot"]) != len(so["price_die"]):
        c.fail((F("removal_slot"),), f"expected {len(so['price_die'])} values (one per price die "
               f"face), got {len(so['removal_slot'])}")
    for i, s in enumerate(so["removal_slot"]):
        if s >= solo_slots:
            c.fail((F("removal_slot"), f"item {i + 1}"), f"slot {s} does not exist "
                   f"(export_board.slots_by_players['1'] = {solo_slots}, slots are 0-based)")
    if so["start_contracts"] > solo_slots:
        c.fail((F("start_contracts"),), f"{so['start_contracts']} > solo slots ({solo_slots})")
    for r in so["market_phase_rounds"]:
        if r > rounds:
            c.fail((F("market_phase_rounds"),), f"round {r} > setup.rounds ({rounds})")
    if so["goods_changed_per_round"] > len(set(so["goods_die"])):
        c.fail((F("goods_changed_per_round"),), "more goods to change than distinct die faces")
    for f in ("export_vp", "settlement_vp"):
        mins = [r["min"] for r in so[f]]
        if any(a <= b for a, b in zip(mins, mins[1:])):
            c.fail((F(f),), "thresholds must be listed with strictly decreasing 'min'")
    mins = [r["min"] for r in so["rating"]]
    if mins[0] != 0 or any(a >= b for a, b in zip(mins, mins[1:])):
        c.fail((F("rating"),), "bands must start at min 0 and increase strictly")


# ---------------------------------------------------------------------------
# contracts.csv
# ---------------------------------------------------------------------------
def _parse_contracts_csv(text: str, ctx: _Ctx) -> list[dict]:
    reader = csv.reader(io.StringIO(text))
    lines = [(reader.line_num, r) for r in reader if any(cell.strip() for cell in r)]
    if not lines:
        ctx.fail((), "the file is empty (expected a header line)")
    header = [h.strip() for h in lines[0][1]]
    _check_contract_columns(header, ctx, "header")
    out = []
    for i, (line, r) in enumerate(lines[1:], start=1):
        where = f"row {i} (line {line})"
        if len(r) != len(header):
            ctx.fail((where,), f"expected {len(header)} cells, got {len(r)}")
        row = {}
        for col, cell in zip(header, r):
            cell = cell.strip()
            try:
                row[col] = int(cell)
            except ValueError:
                ctx.fail((where, f"column '{col}'"), f"expected an integer, got {_show(cell)}")
        out.append(row)
    return out


def _check_contract_columns(cols, ctx: _Ctx, where: str) -> None:
    expected = ("id",) + CONTRACT_COLUMNS
    for bad in ("need_grain", "need_milk"):
        if bad in cols:
            ctx.fail((where, f"column '{bad}'"), "contracts may not need grain or milk (R-3.7, "
                     "docs/rules.md)")
    unknown = [x for x in cols if x not in expected]
    missing = [x for x in expected if x not in cols]
    dup = [x for i, x in enumerate(cols) if x in list(cols)[:i]]
    if unknown or missing or dup:
        detail = (f"unknown column '{unknown[0]}'" if unknown else
                  f"missing column '{missing[0]}'" if missing else f"duplicate column '{dup[0]}'")
        ctx.fail((where,), f"{detail}; expected columns: {','.join(expected)}")


def _check_contracts(rows: Any, ctx: _Ctx, n_slots: int) -> None:
    if not isinstance(rows, list):
        ctx.fail((), f"expected a list of contract rows, got {_show(rows)}")
    seen: dict[int, int] = {}
    for i, row in enumerate(rows, start=1):
        p = (f"row {i}",)
        if not isinstance(row, dict):
            ctx.fail(p, f"expected an object, got {_show(row)}")
        _check_contract_columns(tuple(row), ctx, f"row {i}")
        _Int(1).check(row["id"], ctx, p + ("column 'id'",))
        cid = row["id"]
        p = (f"row {i} (id {cid})",)
        for col in CONTRACT_COLUMNS:
            _Int().check(row[col], ctx, p + (f"column '{col}'",))
        if cid in seen:
            ctx.fail(p + ("column 'id'",), f"duplicate contract id {cid} (also row {seen[cid]})")
        seen[cid] = i
        if not any(row[c] for c in CONTRACT_COLUMNS if c.startswith("need_")):
            ctx.fail(p, "the contract needs nothing (every contract needs goods or meat)")
    if len(rows) < n_slots:
        ctx.fail((), f"{len(rows)} contracts cannot fill {n_slots} export slots")


# ---------------------------------------------------------------------------
# The Ruleset and its table views
# ---------------------------------------------------------------------------
def _arr(x, dtype=np.int32) -> np.ndarray:
    a = np.array(x, dtype=dtype)
    a.setflags(write=False)
    return a


def _freeze(v):
    if isinstance(v, dict):
        return MappingProxyType({k: _freeze(x) for k, x in v.items()})
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    return v


@dataclass(frozen=True, eq=False)
class SetupTable:
    rounds: int
    min_players: int
    max_players: int
    extra_clans_drawn: int
    ports_in_play: int
    port_markers: int
    player_start: np.ndarray          # int32[len(CLAN_START_FIELDS)], the no-clan start
    no_clans_seat_money: np.ndarray   # int32[max_players], by seat 0..
    auction_max_bid: int


@dataclass(frozen=True, eq=False)
class UnitTable:
    count: np.ndarray            # int32[8]  units of each type on a player board
    cost: np.ndarray             # int32[8]  £
    terrain: np.ndarray          # bool[8, 3] over TERRAINS
    good: np.ndarray             # int32[8]  GOODS index produced (neighborhood good), -1 workers
    output: np.ndarray           # int32[8]  goods per production (buildings: max conversions)
    input: np.ndarray            # int32[8]  GOODS index consumed by a building, -1 otherwise
    meat: np.ndarray             # int32[8]  MEATS index when slaughtered, -1 otherwise
    income_base: np.ndarray      # int32[8]  £ per production (workers)
    income_upgraded: np.ndarray  # int32[8]


@dataclass(frozen=True, eq=False)
class EconomyTable:
    merchants_total: int
    hire_cost: int
    hire_bonus_cost: int
    shipping_max_level: int
    shipping_cost: int
    shipping_bonus_cost: int
    technology_cost: int
    technology_bonus_cost: int
    neighborhood_discount: np.ndarray  # int32[6] per good (basic / processed discount)
    neighborhood_limit: np.ndarray     # int32[5] indexed by player count (index 0 unused)


@dataclass(frozen=True, eq=False)
class MarketTable:
    min: np.ndarray           # int32[6] lowest price per good
    max: np.ndarray           # int32[6]
    start: np.ndarray         # int32[5, 6] start price by [player count, good] (row 0 unused)
    solo_avg_min: np.ndarray  # int32[6] solo 'average' bracket, inclusive
    solo_avg_max: np.ndarray  # int32[6]

    def start_prices(self, n_players: int) -> np.ndarray:
        return self.start[n_players]


@dataclass(frozen=True, eq=False)
class ExportBoardTable:
    contracts_source: str
    slots: np.ndarray           # int32[5] contract slots by player count (index 0 unused)
    contract_cost: np.ndarray   # int32[rounds] cost by round index (round 1 -> [0]); <0 = gain
    pass_bonus: np.ndarray      # int32[5, 4] £ by [player count, passing position 0..]; row 1 = solo
    import_track_length: int
    import_marked: np.ndarray   # bool[length + 1] marked spaces by position
    import_money_per_mark: int
    structure_buildings: int
    structure_draw: int
    structure_keep: int


@dataclass(frozen=True, eq=False)
class StartingTileTable:
    money: np.ndarray  # int32[9]
    goods: np.ndarray  # int32[9, 6]


@dataclass(frozen=True, eq=False)
class ScoringTileTable:
    kind: np.ndarray           # int32[9] index into SCORING_KINDS
    glory: np.ndarray          # int32[9] glory = glory * (count // per)
    per: np.ndarray            # int32[9]
    optional: np.ndarray       # bool[9] Kickstarter tiles
    unit_glory: np.ndarray     # int32[9, 8] weight per deployed unit (deployed_units kind)
    min_land_cost: np.ndarray  # int32[9] (expensive_hexes kind)


@dataclass(frozen=True, eq=False)
class PortTable:
    kind: np.ndarray      # int32[9] index into PORT_KINDS
    optional: np.ndarray  # bool[9]
    params: np.ndarray    # int32[9, len(PORT_PARAMS)], 0 where the kind has no such parameter


@dataclass(frozen=True, eq=False)
class FinalScoringTable:
    vp_per_basic_good: int
    vp_per_processed_good: int
    money_per_vp: int
    vp_per_hops: int
    import_vp_by_rank: np.ndarray    # int32[3] rank 0 = most imported (token furthest)
    import_rarity_order: np.ndarray  # int32[3] IMPORT_GOODS indices, rarest first (ties)
    static_import_vp: int
    export_majority_vp: np.ndarray   # int32[5, 4] VP by [player count, place 0..]
    settlement_vp: np.ndarray        # int32[5, 4]
    export_majority_min_contracts: int
    tie_rule: str
    winner_tiebreak: str


@dataclass(frozen=True, eq=False)
class ClanTable:
    optional: np.ndarray  # bool[9]
    start: np.ndarray     # int32[9, len(CLAN_START_FIELDS)] (no-clan values where not overridden)
    params: Mapping[str, Mapping[str, Any]]  # clan -> own parameters (lists as tuples)

    def start_shipping(self, clan: int, n_players: int) -> int:
        col = "shipping_level_1_2" if n_players <= 2 else "shipping_level_3_4"
        return int(self.start[clan, CLAN_START_FIELDS.index(col)])


@dataclass(frozen=True, eq=False)
class SoloTable:
    pass_money: int
    start_contracts: int
    blocked_land_cost: int
    track_imports: bool
    import_vp: int
    market_phase_rounds: tuple[int, ...]
    goods_changed_per_round: int
    goods_die: np.ndarray      # int32[faces] GOODS index per face
    price_die: np.ndarray      # int32[faces] signed steps per face
    removal_slot: np.ndarray   # int32[faces] export slot removed per price-die face
    export_vp: np.ndarray      # int32[k, 2] (min fulfilled, VP), min decreasing
    settlement_vp: np.ndarray  # int32[k, 2] (min settlements, VP)
    rating_min: np.ndarray     # int32[r] increasing
    rating_names: tuple[str, ...]

    @staticmethod
    def _threshold(table: np.ndarray, value: int) -> int:
        for lo, vp in table:
            if value >= lo:
                return int(vp)
        return 0

    def export_points(self, fulfilled: int) -> int:
        return self._threshold(self.export_vp, fulfilled)

    def settlement_points(self, settlements: int) -> int:
        return self._threshold(self.settlement_vp, settlements)

    def rating(self, score: int) -> str:
        return self.rating_names[int(np.searchsorted(self.rating_min, score, side="right")) - 1]


@dataclass(frozen=True, eq=False)
class ContractTable:
    ids: np.ndarray           # int32[N]
    table: np.ndarray         # int32[N, 13] columns CONTRACT_COLUMNS
    need_goods: np.ndarray    # int32[N, 6] GOODS order (grain, milk always 0)
    need_meat: np.ndarray     # int32[N, 2] MEATS order (beef, mutton)
    gain_imports: np.ndarray  # int32[N, 4] IMPORT_GOODS order
    gain_money: np.ndarray    # int32[N]
    gain_free_hex: np.ndarray  # int32[N]
    gain_upgrade: np.ndarray  # int32[N]
    columns: tuple[str, ...] = CONTRACT_COLUMNS

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, name: str) -> np.ndarray:
        return self.table[:, self.columns.index(name)]


@dataclass(frozen=True, eq=False)
class Ruleset:
    """All game numbers, as read-only NumPy arrays in the module's fixed name orders.

    Attributes are named after the tables (``rs.market``, ``rs.export_board``…).
    Two rulesets are equal iff their fingerprints are equal.
    """
    setup: SetupTable
    units: UnitTable
    economy: EconomyTable
    market: MarketTable
    export_board: ExportBoardTable
    starting_tiles: StartingTileTable
    scoring_tiles: ScoringTileTable
    ports: PortTable
    final_scoring: FinalScoringTable
    clans: ClanTable
    solo: SoloTable
    contracts: ContractTable
    sources: Mapping[str, str]
    _raw: Mapping[str, Any]
    _estimates: tuple[tuple[str, str, Any], ...]
    _fingerprint: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able tables (``contracts`` as a list of row objects).

        ``load_ruleset(rs.to_dict())`` rebuilds an equal ruleset.
        """
        return json.loads(json.dumps(_thaw(self._raw)))

    def fingerprint(self) -> str:
        """sha256 hex digest of the canonical JSON of :meth:`to_dict`."""
        return self._fingerprint

    def estimates(self) -> list[tuple[str, str, Any]]:
        """``(table, path, value)`` for every value whose source is ``estimate``."""
        return [(t, p, copy.deepcopy(v)) for t, p, v in self._estimates]

    def __eq__(self, other):
        return isinstance(other, Ruleset) and other._fingerprint == self._fingerprint

    def __hash__(self):
        return hash(self._fingerprint)

    def __repr__(self):
        n_est = len(self._estimates)
        return f"Ruleset(fingerprint={self._fingerprint[:12]}…, {n_est} estimated values)"


def _thaw(v):
    if isinstance(v, Mapping):
        return {k: _thaw(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_thaw(x) for x in v]
    return v


def _walk_estimates(obj: Any, src: str, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(obj, dict):
        src = obj.get("source", src)
        per = obj.get("sources", {})
        for k, v in obj.items():
            if k in _META:
                continue
            p = f"{path}.{k}" if path else k
            s = per.get(k, src)
            if isinstance(s, list):
                for i, (x, si) in enumerate(zip(v, s)):
                    yield from _walk_estimates(x, si, f"{p}[{i}]")
            else:
                yield from _walk_estimates(v, s, p)
    elif isinstance(obj, list) and any(isinstance(x, dict) for x in obj):
        for i, x in enumerate(obj):
            yield from _walk_estimates(x, src, f"{path}[{i}]")
    elif src == "estimate":
        yield path, obj


def _build(t: dict[str, Any]) -> Ruleset:
    s = t["setup"]
    setup = SetupTable(
        rounds=s["rounds"], min_players=s["min_players"], max_players=s["max_players"],
        extra_clans_drawn=s["extra_clans_drawn"], ports_in_play=s["ports_in_play"],
        port_markers=s["port_markers"],
        player_start=_arr([s["player_start"][f] for f in CLAN_START_FIELDS]),
        no_clans_seat_money=_arr(s["no_clans_seat_money"]), auction_max_bid=s["auction_max_bid"])

    u = t["units"]
    idx = lambda names, x: -1 if x is None else names.index(x)  # noqa: E731
    col = lambda f: _arr([u[n][f] for n in UNITS])  # noqa: E731
    units = UnitTable(
        count=col("count"), cost=col("cost"),
        terrain=_arr([[tr in u[n]["terrain"] for tr in TERRAINS] for n in UNITS], bool),
        good=_arr([idx(GOODS, u[n]["good"]) for n in UNITS]), output=col("output"),
        input=_arr([idx(GOODS, u[n]["input"]) for n in UNITS]),
        meat=_arr([idx(MEATS, u[n]["meat"]) for n in UNITS]),
        income_base=col("income_base"), income_upgraded=col("income_upgraded"))

    e = t["economy"]
    nb = e["neighborhood"]
    economy = EconomyTable(
        merchants_total=e["merchants"]["total"], hire_cost=e["merchants"]["hire_cost"],
        hire_bonus_cost=e["merchants"]["bonus_cost"],
        shipping_max_level=e["shipping"]["max_level"], shipping_cost=e["shipping"]["cost"],
        shipping_bonus_cost=e["shipping"]["bonus_cost"],
        technology_cost=e["technology"]["cost"], technology_bonus_cost=e["technology"]["bonus_cost"],
        neighborhood_discount=_arr([nb["discount_basic"] if g in BASIC_GOODS
                                    else nb["discount_processed"] for g in GOODS]),
        neighborhood_limit=_arr([0] + [nb["limit_by_players"][n] for n in PLAYER_COUNTS]))

    m = t["market"]
    mcol = lambda f: [m[g][f] for g in GOODS]  # noqa: E731
    market = MarketTable(
        min=_arr(mcol("min")), max=_arr(mcol("max")),
        start=_arr([[0] * len(GOODS)] + [mcol("start_1_2" if int(n) <= 2 else "start_3_4")
                                         for n in PLAYER_COUNTS]),
        solo_avg_min=_arr(mcol("solo_avg_min")), solo_avg_max=_arr(mcol("solo_avg_max")))

    x = t["export_board"]
    pass_bonus = np.zeros((MAX_PLAYERS + 1, MAX_PLAYERS), np.int32)
    pass_bonus[1, 0] = t["solo"]["pass_money"]
    for n in PLAYER_COUNTS[1:]:
        lst = x["pass_bonus_by_players"][n]
        pass_bonus[int(n), :len(lst)] = lst
    tr = x["import_track"]
    marked = np.zeros(tr["length"] + 1, bool)
    marked[tr["marked_spaces"]] = True
    export_board = ExportBoardTable(
        contracts_source=x["contracts_source"],
        slots=_arr([0] + [x["slots_by_players"][n] for n in PLAYER_COUNTS]),
        contract_cost=_arr(x["contract_cost_by_round"]), pass_bonus=_arr(pass_bonus),
        import_track_length=tr["length"], import_marked=_arr(marked, bool),
        import_money_per_mark=tr["money_per_mark"],
        structure_buildings=x["structure_bonus"]["buildings"],
        structure_draw=x["structure_bonus"]["draw"], structure_keep=x["structure_bonus"]["keep"])

    st = t["starting_tiles"]
    starting_tiles = StartingTileTable(
        money=_arr([st[k]["money"] for k in STARTING_TILES]),
        goods=_arr([[st[k]["goods"].get(g, 0) for g in GOODS] for k in STARTING_TILES]))

    sc = t["scoring_tiles"]
    scoring_tiles = ScoringTileTable(
        kind=_arr([SCORING_KINDS.index(sc[k]["kind"]) for k in SCORING_TILES]),
        glory=_arr([sc[k]["glory"] for k in SCORING_TILES]),
        per=_arr([sc[k]["per"] for k in SCORING_TILES]),
        optional=_arr([sc[k]["optional"] for k in SCORING_TILES], bool),
        unit_glory=_arr([[sc[k].get("unit_glory", {}).get(n, 0) for n in UNITS]
                         for k in SCORING_TILES]),
        min_land_cost=_arr([sc[k].get("min_land_cost", 0) for k in SCORING_TILES]))

    po = t["ports"]
    ports = PortTable(
        kind=_arr([PORT_KINDS.index(po[k]["kind"]) for k in PORTS]),
        optional=_arr([po[k]["optional"] for k in PORTS], bool),
        params=_arr([[po[k].get(p, 0) for p in PORT_PARAMS] for k in PORTS]))

    f = t["final_scoring"]

    def places(d):
        a = np.zeros((MAX_PLAYERS + 1, MAX_PLAYERS), np.int32)
        for n in PLAYER_COUNTS[1:]:
            a[int(n), :len(d[n])] = d[n]
        return _arr(a)

    final_scoring = FinalScoringTable(
        vp_per_basic_good=f["vp_per_basic_good"], vp_per_processed_good=f["vp_per_processed_good"],
        money_per_vp=f["money_per_vp"], vp_per_hops=f["vp_per_hops"],
        import_vp_by_rank=_arr(f["import_vp_by_rank"]),
        import_rarity_order=_arr([IMPORT_GOODS.index(g) for g in f["import_rarity_order"]]),
        static_import_vp=f["static_import_vp"],
        export_majority_vp=places(f["export_majority_vp"]), settlement_vp=places(f["settlement_vp"]),
        export_majority_min_contracts=f["export_majority_min_contracts"],
        tie_rule=f["tie_rule"], winner_tiebreak=f["winner_tiebreak"])

    c = t["clans"]
    clans = ClanTable(
        optional=_arr([c[k]["optional"] for k in CLANS], bool),
        start=_arr([[c[k].get(fld, s["player_start"][fld]) for fld in CLAN_START_FIELDS]
                    for k in CLANS]),
        params=_freeze({k: {p: c[k][p] for p in _CLAN_PARAMS[k]} for k in CLANS}))

    so = t["solo"]
    solo = SoloTable(
        pass_money=so["pass_money"], start_contracts=so["start_contracts"],
        blocked_land_cost=so["blocked_land_cost"], track_imports=so["track_imports"],
        import_vp=so["import_vp"], market_phase_rounds=tuple(so["market_phase_rounds"]),
        goods_changed_per_round=so["goods_changed_per_round"],
        goods_die=_arr([GOODS.index(g) for g in so["goods_die"]]),
        price_die=_arr(so["price_die"]), removal_slot=_arr(so["removal_slot"]),
        export_vp=_arr([[r["min"], r["vp"]] for r in so["export_vp"]]).reshape(-1, 2),
        settlement_vp=_arr([[r["min"], r["vp"]] for r in so["settlement_vp"]]).reshape(-1, 2),
        rating_min=_arr([r["min"] for r in so["rating"]]),
        rating_names=tuple(r["name"] for r in so["rating"]))

    rows = t["contracts"]
    table = np.array([[r[k] for k in CONTRACT_COLUMNS] for r in rows], np.int32)
    table = table.reshape(len(rows), len(CONTRACT_COLUMNS))
    cc = {k: table[:, i] for i, k in enumerate(CONTRACT_COLUMNS)}
    zero = np.zeros(len(rows), np.int32)
    contracts = ContractTable(
        ids=_arr([r["id"] for r in rows]), table=_arr(table),
        need_goods=_arr(np.stack([cc.get(f"need_{g}", zero) for g in GOODS], axis=1)),
        need_meat=_arr(np.stack([cc[f"need_{m}"] for m in MEATS], axis=1)),
        gain_imports=_arr(np.stack([cc[f"gain_{g}"] for g in IMPORT_GOODS], axis=1)),
        gain_money=_arr(cc["gain_money"]), gain_free_hex=_arr(cc["gain_free_hex"]),
        gain_upgrade=_arr(cc["gain_upgrade"]))

    sources = {k: t[k]["source"] for k in _JSON_TABLES}
    sources["contracts"] = t["export_board"]["contracts_source"]
    estimates = tuple((k, p, v) for k in _JSON_TABLES for p, v in _walk_estimates(t[k], "", ""))
    canon = json.dumps(t, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return Ruleset(
        setup=setup, units=units, economy=economy, market=market, export_board=export_board,
        starting_tiles=starting_tiles, scoring_tiles=scoring_tiles, ports=ports,
        final_scoring=final_scoring, clans=clans, solo=solo, contracts=contracts,
        sources=MappingProxyType(sources), _raw=_freeze(t), _estimates=estimates,
        _fingerprint=hashlib.sha256(canon.encode()).hexdigest())


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------
_FILES = {k: f"{k}.json" for k in _JSON_TABLES} | {"contracts": "contracts.csv"}


def _parse_json(text: str, label: str, table: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as ex:
        raise RulesetError(f"{label}: table '{table}': malformed JSON at line {ex.lineno}, "
                           f"column {ex.colno}: {ex.msg}") from None


def _read(path: Path, label: str, table: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RulesetError(f"{label}: table '{table}': missing file ({path})") from None
    except (OSError, UnicodeDecodeError) as ex:
        raise RulesetError(f"{label}: table '{table}': cannot read file: {ex}") from None


def _read_table(path: Path, label: str, table: str) -> Any:
    text = _read(path, label, table)
    if table == "contracts":
        return _parse_contracts_csv(text, _Ctx(label, table))
    return _parse_json(text, label, table)


def _deep_merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _deep_merge(base[k], v) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


def _validate_and_build(tables: dict, labels: dict) -> Ruleset:
    ctxs = {k: _Ctx(labels[k], k) for k in TABLES}
    for k in _JSON_TABLES:
        _SCHEMAS[k].check(tables[k], ctxs[k], ())
    _check_contracts(tables["contracts"], ctxs["contracts"],
                     max(tables["export_board"]["slots_by_players"][n] for n in PLAYER_COUNTS))
    _semantic_checks(tables, ctxs)
    return _build(tables)


_DEFAULT: Ruleset | None = None


def load_ruleset(override: str | os.PathLike | Mapping[str, Any] | Ruleset | None = None
                 ) -> Ruleset:
    """Load the bundled ruleset, optionally with user overrides.

    ``override`` may be:

    * ``None`` — the bundled default (cached; rulesets are immutable);
    * a directory — each ``<table>.json`` / ``contracts.csv`` present there
      replaces the default file of that name; missing files fall back to the
      default; other ``.json``/``.csv`` names are an error (typo protection);
    * a ``.json`` file — ``{"<table>": {...}, ...}`` merged recursively into the
      default tables (objects merge key by key; numbers, strings and lists
      replace); ``"contracts"`` may be given as a list of row objects;
    * a mapping with the same content as such a file (e.g. ``rs.to_dict()``).

    Raises :class:`RulesetError` naming the file, table and field at fault.
    """
    global _DEFAULT
    if isinstance(override, Ruleset):
        return override
    if override is None and _DEFAULT is not None:
        return _DEFAULT
    labels = dict(_FILES)
    tables = {t: _read_table(DEFAULT_RULESET_DIR / f, f, t) for t, f in _FILES.items()}
    if override is None:
        _DEFAULT = _validate_and_build(tables, labels)
        return _DEFAULT

    if isinstance(override, Mapping):
        _merge_override(tables, labels, dict(override), "<override>")
        return _validate_and_build(tables, labels)

    path = Path(override)
    if path.is_dir():
        known = set(_FILES.values())
        for p in sorted(path.iterdir()):
            if p.suffix in (".json", ".csv") and p.name not in known:
                raise RulesetError(f"{p}: unknown ruleset file '{p.name}' (known files: "
                                   f"{', '.join(_FILES.values())})")
        for table, fname in _FILES.items():
            p = path / fname
            if p.is_file():
                tables[table], labels[table] = _read_table(p, str(p), table), str(p)
        return _validate_and_build(tables, labels)
    if path.is_file() and path.suffix == ".json":
        data = _parse_json(_read(path, str(path), "*"), str(path), "*")
        if not isinstance(data, dict):
            raise RulesetError(f"{path}: expected an object {{\"<table>\": {{...}}}}, "
                               f"got {_show(data)[:40]}")
        _merge_override(tables, labels, data, str(path))
        return _validate_and_build(tables, labels)
    if not path.exists():
        raise RulesetError(f"{path}: no such ruleset directory or file")
    raise RulesetError(f"{path}: a ruleset override is a directory or a .json file")


def _merge_override(tables: dict, labels: dict, data: dict, label: str) -> None:
    for table, value in data.items():
        if table not in _FILES:
            raise RulesetError(f"{label}: unknown table '{table}' (known tables: "
                               f"{', '.join(TABLES)})")
        if table == "contracts":
            tables[table] = copy.deepcopy(value)
        else:
            if not isinstance(value, dict):
                raise RulesetError(f"{label}: table '{table}': expected an object, "
                                   f"got {_show(value)[:40]}")
            tables[table] = _deep_merge(tables[table], value)
        labels[table] = label
