"""The first-run notice: when the engine's compiled code is not in numba's cache yet (a new
machine, a new version of the sources), say so at once on a terminal and show progress
while numba compiles, so that a newcomer can tell compiling from hanging.

    with CompileProgress(sys.stderr):      # the CLI wraps every command in this
        ...                                # the first compile of project code announces:
    # compiling the engine for this machine — once, about 25 s (cached for the next runs)
    #   compiling: 120 functions, 23 s

Nothing is written when the stream is not a terminal (pipes, logs, CI), when the engine is
cached already (small compiles, e.g. a bot's first use, pass silently) or under
``NUMBA_DISABLE_JIT=1``.
"""
from __future__ import annotations

import os
import threading
import time

from numba.core import event, types

from caledonia_env.engine.api import game_call
from caledonia_env.engine.setup import new_game_log

#: the Game entry points; their last argument ``automa`` (None, or True with Automa seats,
#: ``automa.deck.automa_switch``) makes numba compile one version of each kind of game
ENTRY_POINTS = (new_game_log, game_call)

#: the announced estimate: seconds of a cold start (import, tables, one 4-player game) on a
#: small machine, as benchmarks/cold_start.py measures it (docs/performance.md)
ESTIMATE_S = 25
#: seconds without a compile after which the progress line is closed
IDLE_S = 1.0
TICK_S = 0.5


def engine_cached(automa: bool | None = None) -> bool:
    """Whether numba's cache holds the compiled ``Game`` entry points (new game, step and
    legal actions) for these sources: for games without Automa seats (``automa=False``),
    with them (``True``), or either (``None``). True when there is nothing to compile (no
    JIT)."""
    for dispatcher in ENTRY_POINTS:
        signatures = cached_signatures(dispatcher)
        if signatures is None:
            continue
        if not signatures:
            return False
        if automa is not None and not any(_with_automa(sig) == automa for sig in signatures):
            return False
    return True


def cached_signatures(dispatcher) -> list | None:
    """The argument types numba's on-disk cache holds ``dispatcher`` compiled for (empty: no
    index, or one of other sources); None when there is no cache (``NUMBA_DISABLE_JIT``
    makes a plain function)."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is None:
        return None
    return [key[0] for key in cache_file._load_index()]


def _with_automa(signature) -> bool:
    """Whether an entry point's argument types are those of games with Automa seats."""
    return not isinstance(signature[-1], types.NoneType)


def _kind_compiled(ev):
    """The kind of game (``automa`` of :func:`engine_cached`) whose entry point the compile
    event ``ev`` compiles; None for any other function."""
    if ev.data.get("dispatcher") not in ENTRY_POINTS:
        return None
    return _with_automa(ev.data.get("args") or (None,))


def _project_function(ev) -> bool:
    func = getattr(ev.data.get("dispatcher"), "py_func", None)
    return (getattr(func, "__module__", "") or "").startswith("caledonia_env")


class CompileProgress:
    """Context manager: a numba compile listener that announces the engine's compilation on
    ``stream`` (a terminal) and keeps a line of progress (functions compiled, seconds) until
    the compiling stops; :meth:`finish` closes that line at once (before a progress bar).
    ``cached(automa)`` says whether the engine is compiled already for the kind of game
    being compiled (:func:`engine_cached`; ``automa`` None when the first compile is not
    an entry point)."""

    def __init__(self, stream, cached=engine_cached, estimate_s: int = ESTIMATE_S):
        self.stream = stream
        self.cached = cached
        self.estimate_s = estimate_s
        self.count = 0                  # project and numba functions compiled since the notice
        self.announced = False
        self._depth = 0
        self._last = 0.0
        self._start = 0.0
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = None
        self._listener = None

    # ----------------------------------------------------------------- context
    def __enter__(self):
        isatty = getattr(self.stream, "isatty", None)
        if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0") or not (isatty and isatty()):
            return self
        progress = self

        class Listener(event.Listener):
            def on_start(self, ev):
                progress._started(ev)

            def on_end(self, ev):
                progress._ended()

        self._listener = Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        self.finish()
        if self._listener is not None:
            event.unregister("numba:compile", self._listener)
            self._listener = None
        return False

    # ----------------------------------------------------------------- events
    def _started(self, ev) -> None:
        if os.getpid() != self._pid:    # a forked worker: the parent reports
            return
        with self._lock:
            self._depth += 1
            if self.announced or self._done.is_set() or not _project_function(ev):
                return
            if self.cached(_kind_compiled(ev)):
                self._done.set()        # compiled already: stay silent
                return
            self.announced = True
            self._start = self._last = time.perf_counter()
        self._write(f"compiling the engine for this machine \u2014 once, about "
                    f"{self.estimate_s} s (cached for the next runs)\n")
        self._thread = threading.Thread(target=self._tick, daemon=True)
        self._thread.start()

    def _ended(self) -> None:
        if os.getpid() != self._pid:
            return
        with self._lock:
            self._depth = max(0, self._depth - 1)
            if self.announced and not self._done.is_set():
                self.count += 1
                self._last = time.perf_counter()

    # ----------------------------------------------------------------- output
    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):   # a closed terminal: nothing to report to
            pass

    def _line(self) -> str:
        return f"  compiling: {self.count} functions, {time.perf_counter() - self._start:.0f} s"

    def _tick(self) -> None:
        while not self._done.wait(TICK_S):
            with self._lock:
                idle = self._depth == 0 and time.perf_counter() - self._last > IDLE_S
            if idle:
                self.finish()
                return
            self._write("\r" + self._line())

    def finish(self) -> None:
        """Close the progress line with the total (once; nothing if nothing was announced)."""
        with self._lock:
            if self._done.is_set():
                return
            self._done.set()
            if not self.announced:
                return
            took = self._last - self._start
        self._write(f"\r  compiled {self.count} functions in {took:.0f} s\033[K\n")
