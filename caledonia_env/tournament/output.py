"""Output paths: checked before a long run, written atomically (docs/cli.md, "Output files").

An output file is refused, before any game is played, when its folder is missing or not
writable, when the path is not a regular file (a folder, a symbolic link, a device, a FIFO)
or when the file is write-protected (no write bit for its owner; checked on the mode bits,
so the check holds for root too).
"""
from __future__ import annotations

import csv
import io
import os

from caledonia_env.atomic import atomic_path, refuse_replacing
from caledonia_env.tournament.games import CSV_FIELDS


def check_output_file(path: str, what: str) -> None:
    """ValueError unless ``path`` can be written as a file: its folder must exist (no folder
    is created for an output file) and be writable, and ``path`` must be absent or a
    regular file with its owner's write bit (see the module docstring)."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{what} {path}: folder {folder} does not exist (create it first)")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"{what} {path}: folder {folder} is not writable")
    if os.path.isdir(path) and not os.path.islink(path):
        raise ValueError(f"{what} {path} is a folder; give a file name")
    refuse_replacing(path, what)


def check_output_folder(path: str, what: str) -> None:
    """ValueError unless ``path`` is a writable folder or can be created as one: an output
    folder is created (one level), so its parent folder must exist and be writable."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{what} {path} exists and is not a folder")
    target = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(target):
        raise ValueError(f"{what} {path}: parent folder {target} does not exist (create it "
                         f"first)")
    if not os.access(target, os.W_OK):
        raise ValueError(f"{what} {path}: folder {target} is not writable")


def write_text(path: str, text: str) -> None:
    """Write a file atomically: a temporary file in the same folder, then rename."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        f.write(text)


def write_csv(rows: list[dict], path: str) -> None:
    """One row per player per game (CSV_FIELDS), written atomically."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(CSV_FIELDS), extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    write_text(path, buf.getvalue())
