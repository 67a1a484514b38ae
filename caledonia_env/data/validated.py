"""The bundled default ruleset's validation stamp.

Validating a ruleset loads pydantic and builds its models (``schema``), a noticeable part of
every process's start. The bundled default loads without it while its files and the
validation code (``schema.py``, ``checks.py``, ``names.py``) are byte for byte those the
stamp was written for; any other bytes (a file of the installed package edited in place, a
changed check) are validated as every override is. ``python -m caledonia_env.data.stamp``
validates the bundled default and writes the stamp; ``tests/data/test_validated.py`` fails
while the stamp is stale.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Mapping

HERE = Path(__file__).resolve().parent
#: the stamp: the sha256 of the bundled files and the validation code it was written for
STAMP = HERE / "validated.sha256"
#: the code that decides whether a ruleset is valid
CODE = ("schema.py", "checks.py", "names.py")


def digest(texts: Mapping[str, str]) -> str:
    """sha256 of the ruleset files' texts (table -> text) and of the validation code."""
    h = hashlib.sha256()
    for name in sorted(texts):
        h.update(f"{name}\0{texts[name]}\0".encode())
    for name in CODE:
        h.update(name.encode() + b"\0" + (HERE / name).read_bytes() + b"\0")
    return h.hexdigest()


def stamped(texts: Mapping[str, str]) -> bool:
    """Whether ``texts`` (the bundled default's files) are those the stamp was written for."""
    try:
        return STAMP.read_text().split()[0] == digest(texts)
    except (OSError, IndexError):
        return False
