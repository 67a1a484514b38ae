"""Named alternative rulesets: override files in ``data/rulesets`` (docs/ruleset.md,
"Named rulesets"), e.g. ``estimates-2026-11``."""
from __future__ import annotations

import os
from pathlib import Path

#: named alternative rulesets: ``<name>.json`` override files layered on the default
RULESETS_DIR = Path(__file__).resolve().parent / "rulesets"


def bundled_rulesets() -> tuple[str, ...]:
    """The names ``load_ruleset`` (``--ruleset``, ``GameConfig(ruleset=…)``) accepts
    besides a path."""
    return tuple(sorted(p.stem for p in RULESETS_DIR.glob("*.json")))


def ruleset_path(ref: str | os.PathLike) -> Path:
    """The file or folder a ruleset reference names: a bundled name
    (:func:`bundled_rulesets`; it wins over a same-named path, write ``./NAME`` for that)
    or else the path itself."""
    if isinstance(ref, str) and ref in bundled_rulesets():
        return RULESETS_DIR / f"{ref}.json"
    return Path(ref)
