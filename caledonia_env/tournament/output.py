"""Output paths: checked before a long run, written atomically (docs/cli.md, "Output files").

An output file is refused, before any game is played, when its folder is missing or not
writable, when the path is not a regular file (a folder, a symbolic link, a device, a FIFO)
or when the file is write-protected (no write bit for its owner; checked on the mode bits,
so the check holds for root too).

A run that writes an output file holds :func:`lock_output` on it for its whole life: a
second run on the same file fails at once, naming the first one's process.
"""
from __future__ import annotations

import contextlib
import csv
import fcntl
import io
import os
import sys

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


class OutputBusy(ValueError):
    """The output file is locked by another run (:func:`lock_output`)."""


_HELD: dict = {}                       # lock path -> [fd, depth] held by this process


def lock_path(path: str) -> str:
    """The lock file of output ``path``: ``<path>.lock`` beside it."""
    return os.path.abspath(os.fspath(path)) + ".lock"


def _holder(fd: int) -> str:
    """Who holds a lock file, as written by its holder: ``pid N: command``."""
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    pid, _, cmd = text.partition("\n")
    return f"pid {pid}: {cmd}" if pid else "a process that has not written its pid yet"


@contextlib.contextmanager
def lock_output(path: str, what: str = "output", folder: bool = False):
    """Hold an exclusive lock on output ``path`` (``fcntl.flock`` on ``<path>.lock``, which
    holds this process's pid and command) while the block runs; ValueError for a path that
    cannot be written (:func:`check_output_file`), OutputBusy (a ValueError) at once if
    another process holds it. Re-entrant within a process. The lock file is
    removed on release; a lock file left by a killed process does not block (the kernel
    drops a dead process's lock)."""
    lock = lock_path(path.rstrip("/") if folder else path)
    # a missing folder is named, not a lock-file error; an output folder (``folder``, e.g. a
    # record folder) is locked through ``<folder>.lock`` beside it
    (check_output_folder if folder else check_output_file)(path, what)
    if lock in _HELD:
        _HELD[lock][1] += 1
        try:
            yield
        finally:
            _HELD[lock][1] -= 1
        return
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise OutputBusy(f"{what} {path} is being written by another run ({holder}); "
                             f"wait for it to finish or give another file name (two runs "
                             f"on one file would lose games)") from None
        try:                             # the holder before us may have removed the file
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n{' '.join(['caledonia'] + sys.argv[1:])}\n".encode(), 0)
    _HELD[lock] = [fd, 1]
    try:
        yield
    finally:
        del _HELD[lock]
        try:
            os.unlink(lock)              # while still locked: no one else has it open locked
        finally:
            os.close(fd)
