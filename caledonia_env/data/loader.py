"""Reading ruleset files and overrides: ``load_ruleset``.

Every game number lives in the data files of ``DEFAULT_RULESET_DIR`` (one JSON
table per file plus ``contracts.csv``); see docs/ruleset.md for the tables,
their provenance and how to override them.  A bundled name (``data/named.py``) stands
for one of the named alternative rulesets.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any, Mapping

from caledonia_env.data.automa import AUTOMA_FILES, AutomaDataError, load_automa
from caledonia_env.data.checks import Ctx, check_contracts, cross_checks, parse_contracts_csv
from caledonia_env.data.frozen import Ruleset, build
from caledonia_env.data.named import bundled_rulesets, ruleset_path
from caledonia_env.data.names import JSON_TABLES, PLAYER_COUNT_KEYS, TABLES, RulesetError, show
from caledonia_env.data.safe_io import InputError, check_depth, parse_json, read_text
from caledonia_env.data.validated import stamped

DEFAULT_RULESET_DIR = Path(__file__).resolve().parent / "ruleset"

_FILES = {k: f"{k}.json" for k in JSON_TABLES} | {"contracts": "contracts.csv"}


def _parse_json(text: str, label: str, table: str) -> Any:
    try:
        return parse_json(text, unique_keys=True)
    except InputError as ex:
        raise RulesetError(f"{label}: table '{table}': {ex}") from None


def _read(path: Path, label: str, table: str) -> str:
    """A ruleset file as UTF-8 text; a missing or unreadable file, a symbolic link loop or
    bytes that are not UTF-8 are a :class:`RulesetError`."""
    try:
        return read_text(path)
    except InputError as ex:
        missing = " (" + str(path) + ")" if str(ex) == "missing file" else ""
        raise RulesetError(f"{label}: table '{table}': {ex}{missing}") from None


def _parse(text: str, label: str, table: str) -> Any:
    if table == "contracts":
        return parse_contracts_csv(text, Ctx(label, table))
    return _parse_json(text, label, table)


def _read_table(path: Path, label: str, table: str) -> Any:
    return _parse(_read(path, label, table), label, table)


def read_default() -> tuple[dict[str, str], dict[str, Any], dict[str, str]]:
    """The bundled default's files: ``(texts, parsed tables, labels)``, each by table."""
    labels = dict(_FILES)
    texts = {t: _read(DEFAULT_RULESET_DIR / f, f, t) for t, f in _FILES.items()}
    return texts, {t: _parse(texts[t], labels[t], t) for t in texts}, labels


def _deep_merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _deep_merge(base[k], v) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


#: the optional table of module sides a ruleset may carry (docs/map.md), in a JSON override
#: (``"maps": {"A1": {side}, ...}``) or as ``maps.json`` in a ruleset folder
MAPS_TABLE = "maps"
MAPS_FILE = "maps.json"


def check_maps(maps: Any, label: str) -> dict:
    """The ``maps`` table: side name (one of the bundled A1..D2) -> side in its JSON form,
    each valid (``parse_side``) on the bundled sides' grid. RulesetError naming the side and
    hex otherwise."""
    from caledonia_env.map.format import MODULE_SIDES, MapError, load_side, parse_side
    if not isinstance(maps, dict):
        raise RulesetError(f"{label}: table '{MAPS_TABLE}': expected an object of side name "
                           f"-> side, got {show(maps)[:40]}")
    for name, side in maps.items():
        where = f"{label}: table '{MAPS_TABLE}': side {name}"
        if name not in MODULE_SIDES:
            raise RulesetError(f"{where}: a ruleset carries sides of the bundled names only "
                               f"({', '.join(MODULE_SIDES)})")
        try:
            got = parse_side(side, source=where, expected_name=name)
            bundled = load_side(name)
        except MapError as ex:
            raise RulesetError(str(ex)) from None
        if (got.cols, got.rows) != (bundled.cols, bundled.rows):
            raise RulesetError(f"{where}: grid {got.cols}x{got.rows} differs from the bundled "
                               f"sides' {bundled.cols}x{bundled.rows}")
    return maps


def validate_and_build(tables: dict, labels: dict) -> Ruleset:
    """Validate the tables (schema, contracts, checks across tables, the module sides it
    carries) and build the ruleset."""
    from caledonia_env.data.schema import validate_table      # here: pydantic's models load when validating
    if MAPS_TABLE in tables:
        if tables[MAPS_TABLE] == {}:            # no sides carried: the ruleset without the table
            del tables[MAPS_TABLE]
            labels.pop(MAPS_TABLE, None)
        else:
            check_maps(tables[MAPS_TABLE], labels.get(MAPS_TABLE, "<override>"))
    ctxs = {k: Ctx(labels[k], k) for k in TABLES}
    for k in JSON_TABLES:
        validate_table(k, tables[k], labels[k])
    check_contracts(tables["contracts"], ctxs["contracts"],
                     max(tables["export_board"]["slots_by_players"][n] for n in PLAYER_COUNT_KEYS))
    cross_checks(tables, ctxs)
    return build(tables, labels)


_DEFAULT: Ruleset | None = None


def load_ruleset(override: str | os.PathLike | Mapping[str, Any] | Ruleset | None = None
                 ) -> Ruleset:
    """Load the bundled ruleset, optionally with user overrides.

    ``override`` may be:

    * ``None`` — the bundled default (cached; rulesets are immutable);
    * the name of a bundled alternative ruleset (:func:`bundled_rulesets`, e.g.
      ``"estimates-2026-11"``) — its override file in ``data/rulesets``;
    * a directory — each ``<table>.json`` / ``contracts.csv`` present there
      replaces the default file of that name; missing files fall back to the
      default; ``automa.json`` / ``automa_cards.csv`` replace the Automa's data
      (validated here, docs/automa.md); ``maps.json`` holds module sides the ruleset
      carries (the ``maps`` table below); other ``.json``/``.csv`` names are an error
      (typo protection);
    * a ``.json`` file — ``{"<table>": {...}, ...}`` merged recursively into the
      default tables (objects merge key by key; numbers, strings and lists
      replace); ``"contracts"`` may be given as a list of row objects; ``"maps"``
      (side name -> side in its JSON form, docs/map.md) carries module sides that games
      with this ruleset play instead of the bundled sides of those names;
    * a mapping with the same content as such a file (e.g. ``rs.to_dict()``).

    Raises :class:`RulesetError` naming the file, table and field at fault.
    """
    global _DEFAULT
    if isinstance(override, Ruleset):
        return override
    if override is None and _DEFAULT is not None:
        return _DEFAULT
    texts, tables, labels = read_default()
    if override is None:        # validated already unless its files or checks changed since
        _DEFAULT = build(tables, labels) if stamped(texts) else validate_and_build(tables, labels)
        return _DEFAULT

    if isinstance(override, Mapping):
        try:
            check_depth(override)
        except InputError as ex:
            raise RulesetError(f"<override>: {ex}") from None
        _merge_override(tables, labels, dict(override), "<override>")
        return validate_and_build(tables, labels)

    path = ruleset_path(override)
    if path.is_symlink() and not path.exists():
        raise RulesetError(f"{path}: broken symbolic link or symbolic link loop")
    if path.is_dir():
        known = (*_FILES.values(), MAPS_FILE, *AUTOMA_FILES)
        for p in sorted(path.iterdir()):
            if p.suffix in (".json", ".csv") and p.name not in known:
                raise RulesetError(f"{p}: unknown ruleset file '{p.name}' (known files: "
                                   f"{', '.join(known)})")
        if any((path / f).is_symlink() or (path / f).exists() for f in AUTOMA_FILES):
            try:
                load_automa(str(path))
            except AutomaDataError as ex:
                raise RulesetError(str(ex)) from None
        for table, fname in _FILES.items():
            p = path / fname
            if p.is_symlink() or p.exists():     # a link loop or a folder: an error, not skipped
                tables[table], labels[table] = _read_table(p, str(p), table), str(p)
        p = path / MAPS_FILE
        if p.is_symlink() or p.exists():
            text = _read(p, str(p), MAPS_TABLE)
            tables[MAPS_TABLE] = _parse_json(text, str(p), MAPS_TABLE)
            labels[MAPS_TABLE] = str(p)
        return validate_and_build(tables, labels)
    if path.is_file() and path.suffix == ".json":
        data = _parse_json(_read(path, str(path), "*"), str(path), "*")
        if not isinstance(data, dict):
            raise RulesetError(f"{path}: expected an object {{\"<table>\": {{...}}}}, "
                               f"got {show(data)[:40]}")
        _merge_override(tables, labels, data, str(path))
        return validate_and_build(tables, labels)
    if not path.exists():
        raise RulesetError(f"{path}: no such ruleset directory or file, nor a bundled ruleset "
                           f"name (bundled: {', '.join(bundled_rulesets())})")
    raise RulesetError(f"{path}: a ruleset override is a directory or a .json file")


def _merge_override(tables: dict, labels: dict, data: dict, label: str) -> None:
    for table, value in data.items():
        if table not in _FILES and table != MAPS_TABLE:
            raise RulesetError(f"{label}: unknown table '{table}' (known tables: "
                               f"{', '.join(TABLES)}, and the optional {MAPS_TABLE})")
        if table == MAPS_TABLE:               # whole sides replace sides of the same name
            if not isinstance(value, dict):
                raise RulesetError(f"{label}: table '{table}': expected an object of side "
                                   f"name -> side, got {show(value)[:40]}")
            tables[table] = {**tables.get(table, {}), **copy.deepcopy(value)}
        elif table == "contracts":
            tables[table] = copy.deepcopy(value)
        else:
            if not isinstance(value, dict):
                raise RulesetError(f"{label}: table '{table}': expected an object, "
                                   f"got {show(value)[:40]}")
            tables[table] = _deep_merge(tables[table], value)
        labels[table] = label
