"""Game records uploaded to the web app, checked before the engine replays them.

A record is data (docs/records.md), but its ``config.ruleset`` (or ``scenario.ruleset``)
names a file the loader would read: an upload may only name the bundled ruleset
(``null``) or one the server was started with (``caledonia serve --ruleset``), compared
as text, so no path from a request reaches the loader. JSON nesting is bounded before
parsing. A record without checksum replays with a warning the page shows.
"""
from __future__ import annotations

import json

from caledonia_env.data.named import bundled_rulesets
from caledonia_env.web.guards import check_depth, shown

RECORD_HELP = ("written by Game.to_json or 'caledonia play --record-dir'")


def parse_upload(text: str, rulesets=()) -> tuple[dict, list[str]]:
    """``(record dict, warnings)``; ValueError with a one-line reason when the upload is
    not a record this server replays."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the record is empty")
    check_depth(text, "the record")
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"the record is not JSON: {e}") from None
    if not isinstance(record, dict) or "actions" not in record or \
            ("config" not in record and "scenario" not in record):
        raise ValueError(f"not a game record: it needs 'config' (or 'scenario') and 'actions' "
                         f"({RECORD_HELP})")
    for part in ("config", "scenario"):
        setup = record.get(part)
        if isinstance(setup, dict):
            check_ruleset(setup.get("ruleset"), f"{part}.ruleset", rulesets)
    warnings = []
    if record.get("checksum") is None:
        warnings.append(f"this record (version {shown(record.get('version'), 20)}) has no checksum: "
                        f"it was replayed without verification, so it may have been edited")
    return record, warnings


def check_ruleset(value, where: str, rulesets=()) -> None:
    """ValueError unless ``value`` is None (the default ruleset), the name of a bundled
    alternative ruleset (``load_ruleset`` resolves those names before any path, so no file
    named by the request is read) or one of ``rulesets``."""
    if value is None or (isinstance(value, str) and (value in rulesets
                                                     or value in bundled_rulesets())):
        return
    also = " or a ruleset this server was started with" if rulesets else ""
    raise ValueError(f"{where} must be null (the default ruleset), a bundled ruleset name "
                     f"({', '.join(bundled_rulesets())}){also}: an uploaded record "
                     f"cannot name a ruleset file, got {shown(value)}")
