"""Atomic file writes: the output appears whole or not at all (never a partial file).

Used by every writer of results, plots, records and checkpoints. The lowest layer: it
imports nothing from the package.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path, suffix: str = ""):
    """Yield a temporary path in ``path``'s folder; on success it is renamed to ``path``
    with the usual permissions (0666 less the umask), on any error it is removed."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=folder)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
