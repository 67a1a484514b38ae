"""The Automa's data (A-1, A-2, A-4 … A-8): its 22 cards and its money/VP parameters.

``load_automa(path)`` reads ``automa_cards.csv`` and ``automa.json`` from ``path`` (a
directory; files missing there fall back to the bundled ones in ``data/automa/``) and
validates them. Every error names the file, the row or key, and the allowed values.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from caledonia_env.data.named import bundled_rulesets
from caledonia_env.data.names import MODULES, source_kind
from caledonia_env.data.safe_io import InputError, parse_json, read_text

AUTOMA_DIR = Path(__file__).resolve().parent / "automa"
#: the files a ruleset folder may carry to replace the bundled Automa data (docs/automa.md)
AUTOMA_FILES = ("automa.json", "automa_cards.csv")
ACTIONS = ("skip_turn", "technology_upgrade", "upgrade", "trade", "expand",
           "export_contract_fulfill", "export_contract_take")
CRITERIA = ("port", "costs", "settlements", "neighborhood")
UPGRADE_TYPES = ("merchant", "shipping")
#: A-1.6 preferred unit cycle (index 0-6); "worker" = lumberjack or miner.
UNIT_CYCLE = ("sheep", "cow", "cheese_dairy", "bakery", "field", "distillery", "worker")
MAX_ACTIONS = 7
#: columns of ``AutomaData.cards``
CARD_ROUND, CARD_REMOVE, CARD_N_ACTIONS, CARD_ACTIONS = 0, 1, 2, 3
CARD_CRITERIA = CARD_ACTIONS + MAX_ACTIONS
CARD_UPGRADE, CARD_STEPS, CARD_MODULES = CARD_CRITERIA + 4, CARD_CRITERIA + 5, CARD_CRITERIA + 6
CARD_WIDTH = CARD_MODULES + 1
PRODUCERS = ("sheep", "cow", "field", "cheese_dairy", "bakery", "distillery")
CONTRACT_GOODS = ("wool", "bread", "cheese", "whisky", "beef", "mutton")


class AutomaDataError(ValueError):
    """Invalid Automa data (names the file and field)."""


@dataclass(frozen=True, eq=False)
class AutomaData:
    cards: np.ndarray        # int32 (n_cards, CARD_WIDTH); card id = row + 1
    params: dict             # automa.json, validated

    def level(self, level: int) -> dict:
        return self.params["levels"][level - 1]


def _split(value, allowed, where, field, unique=True):
    items = [x.strip() for x in value.split("|") if x.strip()]
    for x in items:
        if x not in allowed:
            raise AutomaDataError(f"{where}: {field} {x!r} is not one of {allowed}")
    if unique and len(set(items)) != len(items):
        raise AutomaDataError(f"{where}: {field} repeats an entry: {value!r}")
    return items


def _read(path: Path) -> str:
    try:
        return read_text(path)
    except InputError as ex:
        raise AutomaDataError(f"{path}: {ex}") from None


def _cards(path: Path) -> np.ndarray:
    try:
        rows = list(csv.DictReader(io.StringIO(_read(path), newline="")))
    except csv.Error as ex:
        raise AutomaDataError(f"{path}: malformed CSV: {ex}") from None
    cols = ("id", "round", "actions", "remove_card", "expand_criteria", "upgrade_type",
            "choose_unit_steps", "map_modules")
    if not rows or set(cols) - set(rows[0]):
        raise AutomaDataError(f"{path}: columns must be {cols}")
    out = np.zeros((len(rows), CARD_WIDTH), np.int32)
    for i, r in enumerate(rows):
        where = f"{path} row {i + 2}"
        if r["id"].strip() != str(i + 1):
            raise AutomaDataError(f"{where}: id must be {i + 1} (ids are 1..n in order)")
        rnd = int(r["round"])
        if not 1 <= rnd <= 5:
            raise AutomaDataError(f"{where}: round must be 1..5, got {rnd}")
        acts = _split(r["actions"], ACTIONS, where, "action", unique=False)
        if not 1 <= len(acts) <= MAX_ACTIONS:
            raise AutomaDataError(f"{where}: 1..{MAX_ACTIONS} actions needed")
        crit = _split(r["expand_criteria"], CRITERIA, where, "expand criterion")
        if sorted(crit) != sorted(CRITERIA):
            raise AutomaDataError(f"{where}: expand_criteria must list all of {CRITERIA}")
        if r["remove_card"].strip() not in ("true", "false"):
            raise AutomaDataError(f"{where}: remove_card must be true or false")
        up = r["upgrade_type"].strip()
        if up not in UPGRADE_TYPES:
            raise AutomaDataError(f"{where}: upgrade_type must be one of {UPGRADE_TYPES}")
        steps = int(r["choose_unit_steps"])
        if not 1 <= steps <= 7:
            raise AutomaDataError(f"{where}: choose_unit_steps must be 1..7, got {steps}")
        mods = _split(r["map_modules"], tuple(MODULES), where, "map module")
        out[i, CARD_ROUND] = rnd
        out[i, CARD_REMOVE] = r["remove_card"].strip() == "true"
        out[i, CARD_N_ACTIONS] = len(acts)
        out[i, CARD_ACTIONS:CARD_ACTIONS + len(acts)] = [ACTIONS.index(a) for a in acts]
        out[i, CARD_CRITERIA:CARD_CRITERIA + 4] = [CRITERIA.index(c) for c in crit]
        out[i, CARD_UPGRADE] = UPGRADE_TYPES.index(up)
        out[i, CARD_STEPS] = steps
        out[i, CARD_MODULES] = sum(1 << MODULES.index(m) for m in mods)
    if len(rows) > 31:
        raise AutomaDataError(f"{path}: at most 31 cards (bitmask state)")
    return out


def _params(path: Path) -> dict:
    try:
        p = parse_json(_read(path), unique_keys=True)
    except InputError as ex:
        raise AutomaDataError(f"{path}: {ex}") from None
    levels = p.get("levels")
    if not isinstance(levels, list) or [x.get("level") for x in levels] != [1, 2, 3, 4, 5]:
        raise AutomaDataError(f"{path}: levels must list levels 1..5 in order")
    for x in levels:
        if x["money"] < 0 or x["glory"] < 0:
            raise AutomaDataError(f"{path}: levels[{x['level']}] money and glory must be >= 0")
    if len(p["take_contract_money_by_round"]) != 5:
        raise AutomaDataError(f"{path}: take_contract_money_by_round lists 5 rounds")
    if p["neighborhood_marker"] not in ("step", "price"):
        raise AutomaDataError(f"{path}: neighborhood_marker must be 'step' or 'price'")
    if sorted(p["start_module_order"]) != list(MODULES):
        raise AutomaDataError(f"{path}: start_module_order must be a permutation of ABCD")
    for key, names in (("production_money", PRODUCERS), ("contract_cost_per_good", CONTRACT_GOODS),
                       ("neighborhood_max", ("lower", "medium", "upper"))):
        if set(p[key]) != set(names):
            raise AutomaDataError(f"{path}: {key} must give exactly {names}")
    for key in ("two_seat_exports", "two_seat_settlements"):
        if set(p[key]) != {"most", "tie", "behind", "behind_max"}:
            raise AutomaDataError(f"{path}: {key} needs most, tie, behind, behind_max")
    if p["money_per_vp"] <= 0 or p["trade_max_merchants"] <= 0:
        raise AutomaDataError(f"{path}: money_per_vp and trade_max_merchants must be positive")
    sources = p.get("sources", {})
    if not isinstance(sources, dict):
        raise AutomaDataError(f"{path}: sources must map parameter names to provenances")
    for key, src in sources.items():
        if key in ("note", "sources") or key not in p:
            raise AutomaDataError(f"{path}: sources names {key!r}, not a parameter of the file")
        try:
            source_kind(src)
        except ValueError as ex:
            raise AutomaDataError(f"{path}: sources.{key}: {ex}") from None
    return p


@lru_cache(maxsize=None)
def load_automa(path: str | None = None) -> AutomaData:
    """The Automa cards and parameters, from ``path`` (a ruleset directory: its
    ``AUTOMA_FILES``) or the bundled data (``None``, a ruleset override file, a bundled
    ruleset name)."""
    base = Path(path) if path else AUTOMA_DIR
    if path and (not base.is_dir() or path in bundled_rulesets()):
        base = AUTOMA_DIR      # a ruleset override file: the Automa keeps the bundled data
    cards = base / "automa_cards.csv"
    params = base / "automa.json"
    # a file there (or a link loop, a folder: an error when read) replaces the bundled one
    present = lambda p: p.is_symlink() or p.exists()  # noqa: E731
    return AutomaData(cards=_cards(cards if present(cards) else AUTOMA_DIR / cards.name),
                      params=_params(params if present(params) else AUTOMA_DIR / params.name))
