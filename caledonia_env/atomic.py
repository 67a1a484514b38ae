"""Atomic file writes: the output appears whole or not at all (never a partial file).

Used by every writer of results, plots, records and checkpoints. A write never replaces
what is not a regular file (a symbolic link, a device, a FIFO, a socket, a folder) nor a
write-protected file (no write bit for its owner): the mode bits are read, so the rule
holds for root too, who may write anything. The lowest layer: it imports nothing from the
package.
"""
from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def refuse_replacing(path, what: str = "output") -> None:
    """ValueError if ``path`` exists and may not be replaced by a written file: it is not a
    regular file, or its owner has no write bit (mode 0444 and the like)."""
    path = os.fspath(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    for is_kind, kind in _KINDS:
        if is_kind(st.st_mode):
            raise ValueError(f"{what} {path} is {kind}, not a regular file; it is never "
                             f"replaced: give the name of a new or regular file")
    if not st.st_mode & stat.S_IWUSR:
        raise ValueError(f"{what} {path} is write-protected (mode {stat.S_IMODE(st.st_mode):04o}); "
                         f"it is never replaced: make it writable first (chmod u+w {path}) "
                         f"or give another file name")


@contextmanager
def atomic_path(path, suffix: str = ""):
    """Yield a temporary path in ``path``'s folder; on success it is renamed to ``path``
    with the usual permissions (0666 less the umask), on any error it is removed.
    ValueError, before anything is written, if ``path`` may not be replaced
    (:func:`refuse_replacing`)."""
    path = os.fspath(path)
    refuse_replacing(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=folder)
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        refuse_replacing(path)          # again: the path may have changed meanwhile
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
