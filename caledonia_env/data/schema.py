"""Pydantic models of the ruleset tables; their errors become :class:`RulesetError`.

Every model forbids unknown keys and validates strictly (``4.0`` and ``true`` are
not integers).  Any object may carry the provenance keys ``source``, ``sources``
and ``note`` (see docs/ruleset.md); each table requires ``source``.
:func:`validate_table` turns the first pydantic error into a message naming the
file, the table and the JSON path (``good 'whisky', field 'start_3_4'``).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, PlainValidator,
                      ValidationError, create_model, model_validator)
from pydantic_core import PydanticCustomError

from caledonia_env.data.names import (CLAN_START_FIELDS, CLANS, CONTRACT_COLUMNS, GOODS, MAX_PLAYERS, MAX_VALUE, META,
                    PLAYER_COUNT_KEYS, PORT_KIND_PARAMS, PORT_KINDS, PORTS, SCORING_KINDS,
                    SCORING_TILES, SOURCE_FORMS, STARTING_TILES, TERRAINS, TRACKED_IMPORTS, UNITS,
                    RulesetError, show, source_kind, where)


def _fail(msg: str, at: str | None = None):
    """A validation error with a ready message; ``at`` extends the error's path."""
    return PydanticCustomError("ruleset", "{msg}", {"msg": msg, **({"at": at} if at else {})})


# ---------------------------------------------------------------------------
# Field types
# ---------------------------------------------------------------------------
def Int(lo: int = 0, hi: int = MAX_VALUE):
    """An integer in ``lo..hi``; every ruleset integer lies in ``-MAX_VALUE..MAX_VALUE``."""
    return Annotated[int, Field(ge=max(lo, -MAX_VALUE), le=min(hi, MAX_VALUE))]


Nat, Pos, Bool = Int(), Int(1), bool
Str = Annotated[str, Field(min_length=1)]


def _nonzero(v):
    if v == 0:
        raise _fail("must not be 0")
    return v


NonZero = Annotated[Int(-MAX_VALUE), AfterValidator(_nonzero)]


def _choice_check(names: tuple[str, ...], what: str, nullable: bool, v: Any):
    if v is None and nullable:
        return v
    if not isinstance(v, str):
        raise _fail(f"expected a {what} name{' or null' if nullable else ''}, got {show(v)}")
    if v not in names:
        raise _fail(f"unknown {what} {show(v)} (known: {', '.join(names)})")
    return v


def Choice(names: tuple[str, ...], what: str, nullable: bool = False):
    """One of ``names`` (``what`` names the kind of name in errors)."""
    return Annotated[Any, PlainValidator(lambda v: _choice_check(names, what, nullable, v))]


def _distinct(v: list) -> list:
    seen = [json.dumps(x, sort_keys=True) for x in v]
    for i, s in enumerate(seen):
        if s in seen[:i]:
            raise _fail(f"duplicate item {s}")
    return v


def _length(n: int):
    def check(v: list) -> list:
        if len(v) != n:
            raise _fail(f"expected {n} items, got {len(v)}")
        return v
    return AfterValidator(check)


def List(item, min_len: int = 0, length: int | None = None, distinct: bool = False):
    t = Annotated[list[item], Field(min_length=min_len)]
    if length is not None:
        t = Annotated[t, _length(length)]
    return Annotated[t, AfterValidator(_distinct)] if distinct else t


def _source_check(v: Any):
    try:
        source_kind(v)
    except ValueError as ex:
        raise _fail(str(ex)) from None
    return v


Source = Annotated[Any, PlainValidator(_source_check)]


# ---------------------------------------------------------------------------
# Objects
# ---------------------------------------------------------------------------
class Node(BaseModel):
    """An object with fixed keys plus the optional provenance keys."""
    model_config = ConfigDict(extra="forbid", strict=True)
    ROW: ClassVar[str | None] = None   # Rows models: what the keys name ("good", "unit"…)
    FIELD: ClassVar[str] = "field"     # what a key is called in errors

    source: Source = None
    sources: Any = None
    note: Str = None

    @classmethod
    def key(cls, name: str) -> str:
        """``good 'wool'`` or ``field 'cost'``: a key of this object in an error path."""
        noun = cls.ROW if cls.ROW and name not in META else cls.FIELD
        return f"{noun} '{name}'"

    @classmethod
    def data_keys(cls) -> list[str]:
        return [f.alias or n for n, f in cls.model_fields.items() if n not in META]

    @model_validator(mode="after")
    def _check_sources(self):
        if self.sources is None:
            return self
        at = "field 'sources'"
        if not isinstance(self.sources, dict):
            raise _fail(f"expected an object {{field: source}}, got {show(self.sources)}", at)
        present = {f.alias or n: getattr(self, n) for n, f in type(self).model_fields.items()
                   if n not in META and n in self.model_fields_set}
        for k, s in self.sources.items():
            pk = f"{at}, key '{k}'"
            if k not in present:
                raise _fail(f"names no field of this object (fields: {', '.join(present)})", pk)
            items = s if isinstance(s, list) else [s]
            if isinstance(s, list):
                target = present[k]
                if not isinstance(target, list) or len(target) != len(s):
                    n = f"{len(target)} values" if isinstance(target, list) else "no list"
                    raise _fail(f"{len(s)} sources, but field '{k}' has {n} (a list of sources "
                                "must match its list field item by item)", pk)
            for i, x in enumerate(items):
                try:
                    _source_check(x)
                except PydanticCustomError as ex:
                    raise _fail(ex.context["msg"],
                                pk + (f", item {i + 1}" if isinstance(s, list) else "")) from None
        return self


class Table(Node):
    source: Source


def obj(name: str, fields: dict[str, Any], base: type[Node] = Node, optional=(),
        **classvars) -> type[Node]:
    """A model with JSON keys ``fields`` (all required but ``optional``, default None)."""
    spec = {}
    for k, t in fields.items():
        py = k if k.isidentifier() and not hasattr(BaseModel, k) and k not in META else f"f_{k}"
        spec[py] = (t, Field(None if k in optional else ..., alias=k))
    model = create_model(name, __base__=base, **spec)
    for attr, value in classvars.items():
        setattr(model, attr, value)
    return model


def rows(name: str, names: tuple[str, ...], row, label: str, exact: bool = True,
         base: type[Node] = Node) -> type[Node]:
    """An object keyed by ``names`` (all required when ``exact``); ``row`` is a type or a dict."""
    fields = {n: row[n] if isinstance(row, dict) else row for n in names}
    return obj(name, fields, base, optional=() if exact else names, ROW=label)


def players(name: str, item, counts: tuple[str, ...] = PLAYER_COUNT_KEYS) -> type[Node]:
    return rows(name, counts, item, "players")


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------
SCHEMAS: dict[str, type[Node]] = {}

SCHEMAS["setup"] = obj("Setup", {
    "rounds": Pos, "min_players": Int(1, MAX_PLAYERS), "max_players": Int(1, MAX_PLAYERS),
    "extra_clans_drawn": Nat,
    "player_start": obj("PlayerStart", {f: Nat for f in CLAN_START_FIELDS}),
    "no_clans_seat_money": List(Nat, min_len=1),
    "auction_max_bid": Nat,
}, Table)

SCHEMAS["units"] = rows("Units", UNITS, obj("Unit", {
    "count": Nat, "cost": Nat,
    "terrain": List(Choice(TERRAINS, "terrain"), min_len=1, distinct=True),
    "good": Choice(GOODS, "good", nullable=True),
    "output": Nat, "income_base": Nat, "income_upgraded": Nat,
}), "unit", base=Table)

SCHEMAS["economy"] = obj("Economy", {
    "merchants": obj("Merchants", {"total": Nat, "hire_cost": Nat, "bonus_cost": Nat}),
    "shipping": obj("Shipping", {"max_level": Pos, "cost": Nat, "bonus_cost": Nat}),
    "technology": obj("Technology", {"cost": Nat, "bonus_cost": Nat}),
    "neighborhood": obj("Neighborhood", {
        "discount_basic": Nat, "discount_processed": Nat,
        "limit_by_players": players("NeighborhoodLimit", Nat)}),
}, Table)

#: the market's keys before tracks became step lists (refused with a pointer to the new keys)
OLD_MARKET_KEYS = ("min", "max", "start_1_2", "start_3_4", "solo_avg_min", "solo_avg_max")


class TrackNode(Node):
    """A market track (R-3.1); the old min..max keys get one error naming the new keys."""

    @model_validator(mode="before")
    @classmethod
    def _old_keys(cls, v):
        old = [k for k in OLD_MARKET_KEYS if isinstance(v, dict) and k in v]
        if old:
            raise _fail(f"old market key(s) {', '.join(map(repr, old))}: a track is now 'track' (its step "
                        "prices, cheapest first), 'start_step_1_2', 'start_step_3_4' and "
                        "'solo_average_steps' [first, last] (steps count from 0; "
                        "docs/ruleset.md)")
        return v


SCHEMAS["market"] = rows("Market", GOODS, obj("Track", {
    "track": List(Nat, min_len=1),
    "start_step_1_2": Nat, "start_step_3_4": Nat,
    "solo_average_steps": List(Nat, length=2),
}, TrackNode), "good", base=Table)

SCHEMAS["export_board"] = obj("ExportBoard", {
    "contracts_source": Source,
    "slots_by_players": players("Slots", Pos),
    "contract_cost_by_round": List(Int(-MAX_VALUE), min_len=1),
    "pass_bonus_by_players": players("PassBonus", List(Nat, min_len=1), PLAYER_COUNT_KEYS[1:]),
    "import_track": obj("ImportTrack", {"length": Pos, "marked_spaces": List(Pos, distinct=True),
                                        "money_per_mark": Nat}),
    "structure_bonus": obj("StructureBonus", {"buildings": Pos, "draw": Nat, "keep": Nat}),
}, Table)

SCHEMAS["starting_tiles"] = rows("StartingTiles", STARTING_TILES, obj("StartingTile", {
    "money": Nat, "goods": rows("TileGoods", GOODS, Nat, "good", exact=False),
}), "tile", base=Table)


def _kinds(name: str, kinds: tuple[str, ...], what: str, extra) -> Any:
    """A row whose other fields depend on its ``kind`` (a discriminated union)."""
    members = tuple(obj(f"{name}_{k}", {"kind": Literal[k], "optional": Bool, **extra(k)},
                        KIND=what) for k in kinds)
    return Annotated[Union[members], Field(discriminator="kind")]


def _scoring_fields(kind: str) -> dict:
    f = {"glory": Nat, "per": Pos}
    if kind == "deployed_units":
        f["unit_glory"] = rows("UnitGlory", UNITS, Nat, "unit", exact=False)
    if kind == "expensive_hexes":
        f["min_land_cost"] = Nat
    return f


SCHEMAS["scoring_tiles"] = rows(
    "ScoringTiles", SCORING_TILES, _kinds("Scoring", SCORING_KINDS, "scoring kind",
                                          _scoring_fields), "tile", base=Table)
SCHEMAS["ports"] = rows("Ports", PORTS, _kinds(
    "Port", PORT_KINDS, "port kind", lambda k: {p: Nat for p in PORT_KIND_PARAMS[k]}),
    "port", base=Table)

SCHEMAS["final_scoring"] = obj("FinalScoring", {
    "vp_per_basic_good": Nat, "vp_per_processed_good": Nat, "money_per_vp": Pos,
    "vp_per_hops": Nat,
    "import_vp_by_rank": List(Nat, length=len(TRACKED_IMPORTS)),
    "import_rarity_order": List(Choice(TRACKED_IMPORTS, "import good"),
                                length=len(TRACKED_IMPORTS), distinct=True),
    "static_import_vp": Nat,
    "export_majority_vp": players("ExportMajority", List(Nat, min_len=1), PLAYER_COUNT_KEYS[1:]),
    "settlement_vp": players("Settlement", List(Nat, min_len=1), PLAYER_COUNT_KEYS[1:]),
    "export_majority_min_contracts": Nat,
    "tie_rule": Choice(("split_floor",), "tie rule"),
    "winner_tiebreak": Choice(("money",), "winner tie-break"),
}, Table)

# Each clan's own parameters (names and types only; the values are data).
CLAN_PARAMS: dict[str, dict[str, Any]] = {
    "buchanan": {"contracts_per_action": Pos, "pay_once_per_turn": Bool,
                 "structure_draw": Nat, "structure_keep": Nat, "fulfill_per_action": Pos},
    "campbell": {"building_discount": List(Nat, min_len=1)},
    "cunningham": {"milk_money": Nat},
    "fergusson": {"workers_on_border": Bool, "last_worker_after_all": Bool},
    "macdonald": {"worker_cost": Nat, "worker_income": Nat, "technology_allowed": Bool,
                  "fisherman_land_cost": Nat, "rows_per_turn": Nat},
    "mackenzie": {"whisky_money": Nat, "cellar_money": List(Nat, min_len=1),
                  "cellar_in_per_production": Nat},
    "robertson": {"delta_discount_1_2": Nat, "delta_discount_3_4": Nat},
    "stewart": {"market_money": Nat},
    "brewer": {"beer_money": Nat, "beer_grain": Nat, "beer_max_per_contract": Nat},
}

SCHEMAS["clans"] = rows("Clans", CLANS, {
    clan: obj(f"Clan_{clan}", {"optional": Bool, **params, **{f: Nat for f in CLAN_START_FIELDS}},
              optional=CLAN_START_FIELDS)
    for clan, params in CLAN_PARAMS.items()
}, "clan", base=Table)

_Threshold = obj("Threshold", {"min": Nat, "vp": Nat})
SCHEMAS["solo"] = obj("Solo", {
    "pass_money": Nat, "start_contracts": Nat, "blocked_land_cost": Nat,
    "track_imports": Bool, "import_vp": Nat,
    "market_phase_rounds": List(Pos, distinct=True),
    "goods_changed_per_round": Nat,
    "goods_die": List(Choice(GOODS, "good"), min_len=1),
    "price_die": List(NonZero, min_len=1),
    "removal_slot": List(Nat),
    "export_vp": List(_Threshold),
    "settlement_vp": List(_Threshold),
    "rating": List(obj("Rating", {"min": Nat, "name": Str}), min_len=1),
}, Table)

ContractRow = obj("ContractRow", {"id": Pos, **{c: Nat for c in CONTRACT_COLUMNS}},
                  FIELD="column")


# ---------------------------------------------------------------------------
# Errors: pydantic's first error -> RulesetError naming file, table and path
# ---------------------------------------------------------------------------
def _unwrap(t):
    while get_origin(t) is Annotated:
        t = get_args(t)[0]
    return t


def _is_model(t) -> bool:
    return isinstance(t, type) and issubclass(t, Node)


def _fields(cls) -> dict:
    return {f.alias or n: f for n, f in cls.model_fields.items()}


def walk(model, loc) -> tuple[list[str], Any]:
    """Path segments of ``loc`` inside ``model``, and the type found there."""
    segs, t = [], model
    for key in loc:
        t = _unwrap(t)
        if get_origin(t) is Union:           # a row by kind: pydantic puts the kind in ``loc``
            members = get_args(t)
            tagged = [m for m in members if get_args(_fields(m)["kind"].annotation) == (key,)]
            if tagged:
                t = tagged[0]
                continue
            t = next((m for m in members if key in _fields(m)), members[0])
        if isinstance(key, int):
            segs.append(f"item {key + 1}")
            args = get_args(t)
            t = args[0] if get_origin(t) is list and args else Any
        elif _is_model(t):
            segs.append(t.key(key))
            f = _fields(t).get(key)
            t = f.annotation if f is not None else Any
        else:
            segs.append(f"key '{key}'")
            t = Any
    return segs, _unwrap(t)


def _message(e: dict, model) -> tuple[list[str], str]:
    loc, typ, ctx, v = e["loc"], e["type"], e.get("ctx") or {}, e.get("input")
    if typ in ("missing", "extra_forbidden"):
        segs, cls = walk(model, loc[:-1])
        key = loc[-1]
        noun = cls.key(key).rsplit(" '", 1)[0]
        if typ == "missing":
            hint = f" (allowed: {SOURCE_FORMS})" if key == "source" else ""
            return segs, f"missing {noun} '{key}'{hint}"
        known = ", ".join(cls.data_keys())
        return segs, f"unknown {noun} '{key}' ({'known' if cls.ROW else 'expected'}: {known})"
    segs, t = walk(model, loc)
    if typ == "union_tag_not_found":
        return segs, "missing field 'kind'"
    if typ == "union_tag_invalid":
        members = get_args(t)
        tags = [get_args(_fields(m)["kind"].annotation)[0] for m in members]
        return segs + ["field 'kind'"], (f"unknown {members[0].KIND} {show(ctx['tag'])} "
                                         f"(known: {', '.join(tags)})")
    if "at" in ctx:
        segs.append(ctx["at"])
    if typ == "int_type":
        extra = " (booleans are not integers)" if isinstance(v, bool) else ""
        return segs, f"expected an integer, got {show(v)}{extra}"
    if typ == "greater_than_equal":
        lo = ctx["ge"]
        return segs, (f"must not be negative, got {v}" if lo == 0 else f"must be >= {lo}, got {v}"
                      + _SAFE_RANGE * (lo == -MAX_VALUE))
    if typ == "less_than_equal":
        return segs, f"must be <= {ctx['le']}, got {v}" + _SAFE_RANGE * (ctx["le"] == MAX_VALUE)
    if typ == "bool_type":
        return segs, f"expected true or false, got {show(v)}"
    if typ in ("string_type", "string_too_short"):
        return segs, f"expected a non-empty string, got {show(v)}"
    if typ == "list_type":
        return segs, f"expected a list, got {show(v)}"
    if typ == "too_short":
        return segs, f"expected at least {ctx['min_length']} item(s), got {ctx['actual_length']}"
    if typ in ("model_type", "model_attributes_type", "dict_type"):
        keyed = f" keyed by {t.ROW}" if _is_model(t) and t.ROW else ""
        return segs, f"expected an object{keyed}, got {show(v)}"
    if typ == "ruleset":
        return segs, ctx["msg"]
    return segs, e["msg"]


_SAFE_RANGE = (f" (ruleset integers lie in -{MAX_VALUE}..{MAX_VALUE}, far below the engine's "
               f"32-bit limits; docs/ruleset.md)")


def raise_first(ex: ValidationError, model, label: str, table: str, prefix=()) -> None:
    errors = ex.errors()   # an unknown key explains a missing one (a typo): report it first
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    segs, msg = _message(first, model)
    raise RulesetError(f"{where(label, table, [*prefix, *segs])}: {msg}") from None


def validate_table(table: str, data: Any, label: str) -> None:
    """Validate one JSON table against its model; raise :class:`RulesetError` on error."""
    try:
        SCHEMAS[table].model_validate(data)
    except ValidationError as ex:
        raise_first(ex, SCHEMAS[table], label, table)


def describe(table: str, keys) -> list[str]:
    """Path segments of the JSON keys ``keys`` inside ``table`` (for other checks' errors)."""
    return walk(SCHEMAS[table], tuple(keys))[0]
