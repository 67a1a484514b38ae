"""The numba engine: pure functions over a flat int32 state and static tables.

Importing this package points numba's on-disk cache at a folder keyed by a
hash of the engine's sources, so a changed engine never reuses stale machine
code compiled from another module's old constants (numba only tracks the
timestamp of the decorated function's own file).
"""
import hashlib
import os
from pathlib import Path

import numba


def _engine_cache_dir():
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(here.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    digest.update(numba.__version__.encode())
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "caledonia_env", "numba", digest.hexdigest()[:16])


if not os.environ.get("NUMBA_CACHE_DIR"):
    numba.config.CACHE_DIR = _engine_cache_dir()
