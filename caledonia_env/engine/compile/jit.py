"""``njit`` for the whole project, and the on-disk cache of every project numba function.

One compilation per plain signature. When jitted code calls another jitted function with a
constant (``unit_cost(s, T, p, 6, ...)``, ``can_tech(s, T, p, t, True)``), numba types that
argument as ``Literal[int](6)`` or ``Literal[bool](True)`` and compiles a separate
specialization of the callee, and of everything it calls with that argument, for every
constant value, so a helper called with a few constants is compiled several times. The
functions made by :func:`njit` resolve every call from jitted code with the arguments' plain
types (:func:`plain_type`: no literal, and a signed integer narrower than 64 bits widened to
int64), so each function is compiled once per array/scalar signature, not once more for
every int32/int64 mix of its arguments. A Python caller's numpy int8/16/32 scalar
(``encode_obs(s, T, s[S_PLAYER], out)``) is widened the same way (:func:`plain_value`): it
runs on the int64 compilation instead of compiling its own. A function that needs a
literal argument (``numba.literally``) must use numba's own ``njit``.

No stale cached code. numba reuses a cached function after checking only the hash of the
function's own file, but a kernel has its callees and the global constants of other modules
compiled into it: an edit to ``engine/layout.py`` or ``envs/observation.py`` would leave
stale machine code in every kernel that uses them. :class:`ProjectCacheLocator`, put first
in numba's list of cache locators when this module loads, serves every function defined in
a file of this project (the package, ``agents/``, ``train/`` and, in a source checkout, the
repository's ``tests/`` and ``benchmarks/``) and adds to numba's check a hash of all the
project's numba sources (:data:`ProjectSources.files`: ``engine/`` and its subfolders,
``envs/``, ``agents/``, ``fuzz.py``) and numba's version: an edit to any of them recompiles
every project function.
The hash also names the cache folder, so two versions of the sources (two branches) keep
their own caches, and the package's functions are filed by module name and file contents, so
an editable checkout and a ``pip install`` of the same sources share one compiled copy:

- ``$NUMBA_CACHE_DIR/caledonia_env/<hash>/`` when ``NUMBA_CACHE_DIR`` is set,
- else ``$XDG_CACHE_HOME/caledonia_env/numba/<hash>/`` (``~/.cache`` without XDG_CACHE_HOME).

numba's configuration is never changed: functions of other files (the user's own numba
code) keep numba's own locators and ``NUMBA_CACHE_DIR``. A user who overrides numba's
locator list (``NUMBA_CACHE_LOCATOR_CLASSES``) should name
``caledonia_env.engine.compile.jit.ProjectCacheLocator`` first in it.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import os
from pathlib import Path

import numba
import numpy as np
from numba.core import caching, types


def plain_type(t):
    """The type a call from jitted code is compiled for: ``t`` without its literal value,
    and a signed integer narrower than 64 bits (a cell of an int32 state row, an int8 mask
    byte) as int64, the type of loop counters and constants, so that ``f(s[i])`` and
    ``f(i)`` share one compilation."""
    t = types.unliteral(t)
    if isinstance(t, types.Integer) and t.signed and t.bitwidth < 64:
        return types.int64
    return t


def plain_value(v):
    """A Python caller's argument as :func:`plain_type` types it: a numpy signed integer
    scalar narrower than 64 bits (``state[S_PLAYER]``) as ``np.int64``, anything else as is."""
    if isinstance(v, np.signedinteger) and v.itemsize < 8:
        return np.int64(v)
    return v


def _plain_calls(dispatcher):
    """Make calls to ``dispatcher`` from jitted code resolve with :func:`plain_type` types,
    and compile a Python call for :func:`plain_value` arguments (numba then runs an int32
    call on the int64 compilation, a safe conversion). With ``NUMBA_DISABLE_JIT=1`` numba
    returns the plain function: nothing to do."""
    resolve = getattr(dispatcher, "get_call_template", None)
    if resolve is None:
        return dispatcher
    compile_for_args = dispatcher._compile_for_args

    def get_call_template(args, kws):
        return resolve(tuple(plain_type(a) for a in args),
                       {k: plain_type(v) for k, v in kws.items()})

    def _compile_for_args(*args, **kws):
        return compile_for_args(*map(plain_value, args), **kws)

    dispatcher.get_call_template = get_call_template
    dispatcher._compile_for_args = _compile_for_args
    return dispatcher


def njit(*args, **options):
    """``numba.njit`` (same options, bare or called) whose dispatcher compiles one
    specialization per non-literal signature (see the module docstring). No C-callable
    wrapper is built (``no_cfunc_wrapper``): the project never uses its functions as
    first-class function values, and building the wrappers lengthens every cold start."""
    options.setdefault("no_cfunc_wrapper", True)
    if len(args) == 1 and callable(args[0]):
        return _plain_calls(numba.njit(**options)(args[0]))
    decorate = numba.njit(*args, **options)
    return lambda func: _plain_calls(decorate(func))


# ================================================================== the cache
#: folders below a project root whose files are not the project's (installed packages)
_FOREIGN_PARTS = ("site-packages", "dist-packages")


def sources_digest(files) -> str:
    """SHA-256 (hex) of the files' folder/name and contents, in the given order, and numba's
    version."""
    digest = hashlib.sha256(numba.__version__.encode())
    for path in map(Path, files):
        digest.update(f"{path.parent.name}/{path.name}\0".encode())
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True)
class ProjectSources:
    """The project as numba's cache sees it: functions defined in a file below one of
    ``roots`` are cached by :class:`ProjectCacheLocator`, keyed by the contents of ``files``."""

    roots: tuple[Path, ...]
    files: tuple[Path, ...]

    def covers(self, py_file: str) -> bool:
        """Whether a function defined in ``py_file`` is project code (not below an installed
        package's folder, e.g. a virtual environment inside the checkout)."""
        path = Path(os.path.realpath(py_file))
        for root in self.roots:
            if path.is_relative_to(root):
                inner = path.relative_to(root).parts[:-1]
                return not any(p in _FOREIGN_PARTS or p.startswith(".") for p in inner)
        return False

    @functools.cached_property
    def digest(self) -> str:
        return sources_digest(self.files)


def _package_folder(name: str) -> Path | None:
    """Folder of an installed subpackage, found without importing it (None if absent)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(os.path.realpath(spec.submodule_search_locations[0]))


def default_sources() -> ProjectSources:
    """This installation: the package, ``agents/`` and ``train/`` (top-level folders of a
    checkout, inside the package once installed) and a checkout's repository root; the
    numba sources are ``engine/`` (with its subfolders), ``envs/``, ``agents/`` and
    ``fuzz.py``."""
    package = Path(os.path.realpath(__file__)).parents[2]
    agents = _package_folder("caledonia_env.agents")
    train = _package_folder("caledonia_env.train")
    folders = [package / "engine", package / "envs"] + ([agents] if agents else [])
    files = [f for folder in folders for f in sorted(folder.rglob("*.py"))]
    files.append(package / "fuzz.py")
    roots = [package] + [f for f in (agents, train) if f is not None]
    if (package.parent / "pyproject.toml").is_file():    # a source checkout
        roots.append(package.parent)
    return ProjectSources(tuple(roots), tuple(files))


_sources: ProjectSources | None = None


def project_sources() -> ProjectSources:
    """The :class:`ProjectSources` the locator uses (made on first use)."""
    global _sources
    if _sources is None:
        _sources = default_sources()
    return _sources


def cache_base() -> str:
    """The folder holding one cache folder per sources hash (see the module docstring)."""
    if numba.config.CACHE_DIR:
        return os.path.join(numba.config.CACHE_DIR, "caledonia_env")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "caledonia_env", "numba")


class ProjectCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """numba cache locator of the project's functions: the function's own file plus the hash
    of every project numba source, in a folder named by the latter.

    A function of the package (module ``caledonia_env.…``) is cached by module name and file
    contents, not by where the file lies: an editable checkout and a ``pip install`` of the
    same sources share one compiled copy. Other project files (tests, benchmarks) keep numba's
    path-and-timestamp scheme."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._digest = project_sources().digest
        module = py_func.__module__ or ""
        self._by_module = module.startswith("caledonia_env.")
        sub = (os.path.join(*module.split(".")[:-1]) if self._by_module
               else self.get_suitable_cache_subpath(py_file))
        self._cache_path = os.path.join(cache_base(), self._digest[:16], sub)

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        if self._by_module:
            return file_digest(self._py_file), self._digest
        return super().get_source_stamp(), self._digest

    @classmethod
    def from_function(cls, py_func, py_file):
        if not project_sources().covers(py_file):
            return None                         # not project code: numba's own locators
        return super().from_function(py_func, py_file)


@functools.lru_cache(maxsize=None)
def file_digest(path: str) -> str:
    """SHA-256 (hex) of one source file's contents (read once per process)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _register(locator) -> None:
    """Put ``locator`` first in numba's locator list (once, also across module reloads)."""
    classes = caching.CacheImpl._locator_classes
    classes[:] = [c for c in classes if (c.__module__, c.__qualname__)
                  != (locator.__module__, locator.__qualname__)]
    classes.insert(0, locator)


_register(ProjectCacheLocator)
