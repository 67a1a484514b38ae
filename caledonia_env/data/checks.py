"""Checks across fields and tables (after the schema), and the contracts table."""

from __future__ import annotations

import csv
import io
from typing import Any

from caledonia_env.data.names import (BUILDINGS, CLANS, CONTRACT_COLUMNS, GOODS, META, PLAYER_COUNT_KEYS,
                    RulesetError, show, where)


class Ctx:
    """Where a table came from: ``fail`` raises a :class:`RulesetError` naming it."""

    def __init__(self, file: str, table: str):
        self.file, self.table = file, table

    def fail(self, path: tuple[str, ...], msg: str):
        raise RulesetError(f"{where(self.file, self.table, path)}: {msg}")


def cross_checks(t: dict[str, dict], ctxs: dict[str, Ctx]) -> None:
    """Checks across fields and tables, after every table passed its schema."""
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

    eco = t["economy"]
    merchants, max_ship = eco["merchants"]["total"], eco["shipping"]["max_level"]

    c = ctxs["market"]
    for g in GOODS:
        m, p = t["market"][g], (f"good '{g}'",)
        track, last = m["track"], len(m["track"]) - 1
        if any(a > b for a, b in zip(track, track[1:])):
            c.fail(p + (F("track"),), f"{track}: step prices must not fall (cheapest step first)")
        for f in ("start_step_1_2", "start_step_3_4"):
            if m[f] > last:
                c.fail(p + (F(f),), f"step {m[f]} is outside the track's steps 0..{last}")
        first, final = m["solo_average_steps"]
        if not first <= final <= last:
            c.fail(p + (F("solo_average_steps"),), f"[{first}, {final}] must be steps first <= "
                   f"last within the track's steps 0..{last}")

    ex, c = t["export_board"], ctxs["export_board"]
    if len(ex["contract_cost_by_round"]) != rounds:
        c.fail((F("contract_cost_by_round"),), f"expected {rounds} values (one per round, "
               f"setup.rounds = {rounds}), got {len(ex['contract_cost_by_round'])}")
    for n in PLAYER_COUNT_KEYS[1:]:
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
        for n in PLAYER_COUNT_KEYS[1:]:
            if len(fs[f][n]) > int(n):
                c.fail((F(f), f"players '{n}'"), f"{len(fs[f][n])} places for {n} players")

    cl, c = t["clans"], ctxs["clans"]
    start_fields = {**setup["player_start"]}
    for clan in CLANS:
        row = {**start_fields, **{k: v for k, v in cl[clan].items() if k not in META}}
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


def parse_contracts_csv(text: str, ctx: Ctx) -> list[dict]:
    reader = csv.reader(io.StringIO(text))
    try:
        lines = [(reader.line_num, r) for r in reader if any(cell.strip() for cell in r)]
    except csv.Error as ex:             # e.g. a cell over the csv module's size limit
        ctx.fail((f"line {reader.line_num}",), f"malformed CSV: {ex}")
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
                ctx.fail((where, f"column '{col}'"),
                         f"expected an integer, got {show(cell[:40])}{'...' * (len(cell) > 40)}")
        out.append(row)
    return out


def _check_contract_columns(cols, ctx: Ctx, where: str) -> None:
    expected = ("id",) + CONTRACT_COLUMNS
    for bad in ("need_grain", "need_milk"):
        if bad in cols:
            ctx.fail((where, f"column '{bad}'"), "contracts may not need grain or milk (R-3.7)")
    unknown = [x for x in cols if x not in expected]
    missing = [x for x in expected if x not in cols]
    dup = [x for i, x in enumerate(cols) if x in list(cols)[:i]]
    if unknown or missing or dup:
        detail = (f"unknown column '{unknown[0]}'" if unknown else
                  f"missing column '{missing[0]}'" if missing else f"duplicate column '{dup[0]}'")
        ctx.fail((where,), f"{detail}; expected columns: {','.join(expected)}")


def check_contracts(rows: Any, ctx: Ctx, n_slots: int) -> None:
    from pydantic import ValidationError        # here: validation loads the models
    from caledonia_env.data.schema import ContractRow, raise_first
    if not isinstance(rows, list):
        ctx.fail((), f"expected a list of contract rows, got {show(rows)}")
    seen: dict[int, int] = {}
    for i, row in enumerate(rows, start=1):
        p = (f"row {i}",)
        if not isinstance(row, dict):
            ctx.fail(p, f"expected an object, got {show(row)}")
        _check_contract_columns(tuple(row), ctx, f"row {i}")
        try:
            ContractRow.model_validate(row)
        except ValidationError as ex:
            bad_id = ex.errors()[0]["loc"][0] == "id"
            raise_first(ex, ContractRow, ctx.file, ctx.table,
                        p if bad_id else (f"row {i} (id {row['id']})",))
        cid = row["id"]
        p = (f"row {i} (id {cid})",)
        if cid in seen:
            ctx.fail(p + ("column 'id'",), f"duplicate contract id {cid} (also row {seen[cid]})")
        seen[cid] = i
        if not any(row[c] for c in CONTRACT_COLUMNS if c.startswith("need_")):
            ctx.fail(p, "the contract needs nothing (every contract needs goods or meat)")
    if len(rows) < n_slots:
        ctx.fail((), f"{len(rows)} contracts cannot fill {n_slots} export slots")
