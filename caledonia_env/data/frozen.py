"""The immutable :class:`Ruleset`: one frozen view per table, read-only NumPy arrays."""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from caledonia_env.data.estimates import strip_provenance, walk_provenance
from caledonia_env.data.names import (BASIC_GOODS, CLAN_START_FIELDS, CLANS, CONTRACT_COLUMNS, GOODS, IMPORT_GOODS,
                    JSON_TABLES, LEGACY_PORTS, MAX_PLAYERS, META, MEATS, PLAYER_COUNT_KEYS, PORT_KINDS,
                    PORT_PARAMS, PORTS, SCORING_KINDS, SCORING_TILES, STARTING_TILES, TERRAINS, UNITS, RulesetError,
                    where)

#: the keys of a clan's row that are not its own parameters (``schema.CLAN_PARAMS``)
_CLAN_ROW_KEYS = ("optional", *CLAN_START_FIELDS, *META)


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
    """Price tracks (R-3.1): each good's step prices, cheapest first; a step is an index
    into its track (0 = cheapest). Consecutive steps may share a price."""
    tracks: tuple             # per good: int32[steps] price of each step, cheapest first
    min: np.ndarray           # int32[6] lowest price per good (its first step)
    max: np.ndarray           # int32[6] highest price per good (its last step)
    start_step: np.ndarray    # int32[5, 6] start step by [player count, good] (row 0 unused)
    solo_average_steps: np.ndarray  # int32[6, 2] first and last step of the solo 'average'
                                    # bracket, inclusive

    def start_steps(self, num_players: int) -> np.ndarray:
        return self.start_step[num_players]

    def start_prices(self, num_players: int) -> np.ndarray:
        return _arr([t[k] for t, k in zip(self.tracks, self.start_step[num_players])])

    def step_of(self, good: int, price: int) -> int | None:
        """The cheapest step of ``good``'s track priced ``price``; None if no step is."""
        hits = np.flatnonzero(self.tracks[good] == price)
        return int(hits[0]) if len(hits) else None


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

    def start_shipping(self, clan: int, num_players: int) -> int:
        col = "shipping_level_1_2" if num_players <= 2 else "shipping_level_3_4"
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
    files: Mapping[str, str]          # table -> the file (or override) it was read from
    _raw: Mapping[str, Any]
    _provenance: tuple[tuple[str, str, Any, str], ...]
    _fingerprint: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able tables (``contracts`` as a list of row objects).

        ``load_ruleset(rs.to_dict())`` rebuilds an equal ruleset.
        """
        return json.loads(json.dumps(_thaw(self._raw)))

    def fingerprint(self) -> str:
        """sha256 hex digest of the canonical JSON of :meth:`to_dict` without its provenance
        (``source``, ``sources``, ``note``, ``contracts_source``): the game's numbers only
        (port tiles keyed in engine tile order, whatever their labels), and the module sides
        it carries (:attr:`maps`, without their notes) when it carries any."""
        return self._fingerprint

    def matches_fingerprint(self, fingerprint: str) -> bool:
        """Whether ``fingerprint`` (e.g. from a game record) names this ruleset's numbers:
        its :meth:`fingerprint`, or an older fingerprint of the same numbers
        (``LEGACY_FINGERPRINTS``, from before provenance was left out)."""
        return fingerprint == self._fingerprint or \
            LEGACY_FINGERPRINTS.get(fingerprint) == self._fingerprint

    @property
    def maps(self) -> dict[str, Any]:
        """The module sides this ruleset carries (side name -> side in its JSON form,
        docs/map.md), played instead of the bundled sides of those names; ``{}`` for a
        ruleset without (every bundled ruleset). Part of the fingerprint when present."""
        return _thaw(self._raw.get("maps", {}))

    def provenance(self) -> list[tuple[str, str, Any, str]]:
        """``(table, path, value, source)`` for every value of every table (contracts:
        ``[row].column`` with the export board's ``contracts_source``)."""
        return [(t, p, copy.deepcopy(v), s) for t, p, v, s in self._provenance]

    def estimates(self) -> list[tuple[str, str, Any]]:
        """``(table, path, value)`` for every value whose source is ``estimate``."""
        return [(t, p, v) for t, p, v, s in self.provenance() if s == "estimate"]

    def error(self, table: str, path: str | list, msg: str) -> RulesetError:
        """A :class:`RulesetError` naming the file, ``table`` and JSON ``path`` (dotted or keys)."""
        keys = (path.split(".") if path else []) if isinstance(path, str) else list(path)
        from caledonia_env.data.schema import SCHEMAS, describe     # here: the models load for errors only
        segs = describe(table, keys) if table in SCHEMAS else [f"field '{k}'" for k in keys]
        return RulesetError(f"{where(self.files[table], table, segs)}: {msg}")

    def require(self, table: str, path: str, lo: int, hi: int, why: str,
                length: bool = False) -> None:
        """Raise :meth:`error` unless every value at ``path`` lies in ``lo..hi``.

        Used by layers above the data (the engine) to refuse data their fixed capacities
        cannot hold.  ``path`` is dotted JSON keys (``"neighborhood.limit_by_players.*"``);
        ``*`` matches every key of an object (provenance keys excepted) or item of a list;
        absent keys are skipped.  ``length`` checks the number of items instead (``""`` is
        the whole table, e.g. the contract rows).
        """
        def values(node, keys, done):
            if not keys:
                yield done, node
            elif keys[0] == "*":
                items = (node.items() if isinstance(node, Mapping) else enumerate(node))
                for k, v in items:
                    if k not in META:
                        yield from values(v, keys[1:], done + [k])
            elif isinstance(node, Mapping) and keys[0] in node:
                yield from values(node[keys[0]], keys[1:], done + [keys[0]])

        for keys, v in values(self._raw[table], path.split(".") if path else [], []):
            n = len(v) if length else v
            if not lo <= n <= hi:
                what = f"{n} items, outside the allowed length" if length else f"{n} is outside"
                raise self.error(table, keys, f"{what} {lo}..{hi} ({why})")

    def __eq__(self, other):
        return isinstance(other, Ruleset) and other._fingerprint == self._fingerprint

    def __hash__(self):
        return hash(self._fingerprint)

    def __repr__(self):
        n_est = sum(s == "estimate" for *_, s in self._provenance)
        return f"Ruleset(fingerprint={self._fingerprint[:12]}…, {n_est} estimated values)"


#: fingerprints of earlier bundled defaults (which hashed the provenance, and the solo rating
#: bands under their older names) -> the
#: fingerprint of the same numbers now; old game records of those rulesets still replay
LEGACY_FINGERPRINTS = {
    "0fca3a26a6a82a1882e4b299f5b68a114f42e430d49f8e8806bd0f8e34daa3fd": "81baf3f4d327e44d6610ec24f041f3a5b15e7141e2b804ca7b00cdac1355473e",
}


def _fingerprint_form(t: dict[str, Any]) -> dict[str, Any]:
    """What a fingerprint hashes: the numbers without provenance, the port tiles keyed in
    engine tile order by ``LEGACY_PORTS`` (their labels before the printed numbers), so that
    naming the tiles as printed (R-5) changed no fingerprint."""
    form = strip_provenance(t)
    form["ports"] = {LEGACY_PORTS[PORTS.index(k)] if k in PORTS else k: v
                     for k, v in form["ports"].items()}
    if form.get("maps"):            # carried module sides: their layout, not their notes
        form["maps"] = {k: {f: v for f, v in side.items() if f != "notes"}
                        for k, side in form["maps"].items()}
    return form


def _thaw(v):
    if isinstance(v, Mapping):
        return {k: _thaw(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_thaw(x) for x in v]
    return v


def build(t: dict[str, Any], files: Mapping[str, str]) -> Ruleset:
    """The :class:`Ruleset` of validated tables ``t`` read from ``files`` (table -> file)."""
    s = t["setup"]
    setup = SetupTable(
        rounds=s["rounds"], min_players=s["min_players"], max_players=s["max_players"],
        extra_clans_drawn=s["extra_clans_drawn"],
        player_start=_arr([s["player_start"][f] for f in CLAN_START_FIELDS]),
        no_clans_seat_money=_arr(s["no_clans_seat_money"]), auction_max_bid=s["auction_max_bid"])

    u = t["units"]
    idx = lambda names, x: -1 if x is None else names.index(x)  # noqa: E731
    col = lambda f: _arr([u[n][f] for n in UNITS])  # noqa: E731
    units = UnitTable(
        count=col("count"), cost=col("cost"),
        terrain=_arr([[tr in u[n]["terrain"] for tr in TERRAINS] for n in UNITS], bool),
        good=_arr([idx(GOODS, u[n]["good"]) for n in UNITS]), output=col("output"),
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
        neighborhood_limit=_arr([0] + [nb["limit_by_players"][n] for n in PLAYER_COUNT_KEYS]))

    m = t["market"]
    mcol = lambda f: [m[g][f] for g in GOODS]  # noqa: E731
    tracks = tuple(_arr(tr) for tr in mcol("track"))
    market = MarketTable(
        tracks=tracks, min=_arr([tr[0] for tr in tracks]), max=_arr([tr[-1] for tr in tracks]),
        start_step=_arr([[0] * len(GOODS)] + [mcol("start_step_1_2" if int(n) <= 2
                                                   else "start_step_3_4")
                                              for n in PLAYER_COUNT_KEYS]),
        solo_average_steps=_arr(mcol("solo_average_steps")))

    x = t["export_board"]
    pass_bonus = np.zeros((MAX_PLAYERS + 1, MAX_PLAYERS), np.int32)
    pass_bonus[1, 0] = t["solo"]["pass_money"]
    for n in PLAYER_COUNT_KEYS[1:]:
        lst = x["pass_bonus_by_players"][n]
        pass_bonus[int(n), :len(lst)] = lst
    tr = x["import_track"]
    marked = np.zeros(tr["length"] + 1, bool)
    marked[tr["marked_spaces"]] = True
    export_board = ExportBoardTable(
        contracts_source=x["contracts_source"],
        slots=_arr([0] + [x["slots_by_players"][n] for n in PLAYER_COUNT_KEYS]),
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
        for n in PLAYER_COUNT_KEYS[1:]:
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
        params=_freeze({k: {p: v for p, v in c[k].items() if p not in _CLAN_ROW_KEYS}
                        for k in CLANS}))

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

    sources = {k: t[k]["source"] for k in JSON_TABLES}
    sources["contracts"] = t["export_board"]["contracts_source"]
    provenance = tuple((k, p, v, src) for k in JSON_TABLES for p, v, src in walk_provenance(t[k]))
    provenance += tuple(("contracts", p, v, src) for p, v, src in
                        walk_provenance(t["contracts"], sources["contracts"]))
    canon = json.dumps(_fingerprint_form(t), sort_keys=True, separators=(",", ":"),
                       ensure_ascii=True)
    return Ruleset(
        setup=setup, units=units, economy=economy, market=market, export_board=export_board,
        starting_tiles=starting_tiles, scoring_tiles=scoring_tiles, ports=ports,
        final_scoring=final_scoring, clans=clans, solo=solo, contracts=contracts,
        sources=MappingProxyType(sources), files=MappingProxyType(dict(files)), _raw=_freeze(t), _provenance=provenance,
        _fingerprint=hashlib.sha256(canon.encode()).hexdigest())
