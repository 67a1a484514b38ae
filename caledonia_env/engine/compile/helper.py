"""A first compile on two cores: while this process compiles the ``Game`` entry points, a
helper process compiles part of the engine below them into numba's on-disk cache, and this
process loads that part from the cache instead of compiling it (issue #37, cold start).

numba compiles a function when a caller first needs it, one function after another in one
process, so a cold start (the import, the tables and one 4-player game) uses one core
while the others wait (docs/performance.md). :func:`start` runs a helper
(``python -c …``, never a fork) that compiles each job, a function with example arguments,
in order and reports each one done; here each job's dispatcher gets a ``compile`` that, for
the job's argument types, first waits until the helper has reported that job, so numba then
finds it in the cache. Nothing else changes: compiled code, cache files and results are
those of a compile in one process. If the helper fails, stays silent for :data:`WAIT_S`
seconds, or runs other sources, this process compiles what it needs itself, as without one.

:func:`engine_first_compile` is the ``Game``'s use (:func:`engine_jobs`: the largest parts
of the engine below ``setup.new_game_log`` and ``api.game_call`` that do not depend on each
other); the vector env adds its step kernel (``envs/vector.py``). ``CALEDONIA_COMPILE_HELPER=0``
turns the helper off.
"""
from __future__ import annotations

import atexit
import importlib
import os
import pickle
import subprocess
import sys
import threading
import time

import numpy as np
from numba import typeof

from caledonia_env.engine.compile.first_run import cached_signatures, engine_cached
from caledonia_env.engine.compile.jit import plain_value, project_sources

#: the environment variable that turns the helper off ("0")
SWITCH = "CALEDONIA_COMPILE_HELPER"
#: seconds without the awaited report after which the helper is given up (far longer than
#: any one job takes on a slow, busy machine)
WAIT_S = 300.0


def job_types(args) -> tuple:
    """The argument types numba compiles a job for (those of a Python call with ``args``)."""
    return tuple(typeof(plain_value(a)) for a in args)


def light(arg):
    """``arg`` as the helper needs it, for its type only: an array as a one-element array of
    the same numba type (the tables are 265 kB), anything else as is."""
    if isinstance(arg, np.ndarray):
        small = np.zeros((1,) * arg.ndim, arg.dtype)
        small.flags.writeable = arg.flags.writeable
        if typeof(small) == typeof(arg):
            return small
    return arg


class Helper:
    """A running helper process and what it has reported: ``done`` (job indices, in the
    cache now; ``seconds`` each took), ``errors`` (job index → message) and ``finished``
    (it has exited, or was stopped). A thread reads its reports as they come."""

    def __init__(self, proc: subprocess.Popen, jobs, wait_s: float = WAIT_S):
        self.proc = proc
        self.jobs = jobs
        self.wait_s = wait_s
        self.done: set[int] = set()
        self.errors: dict[int, str] = {}
        self.seconds: dict[int, float] = {}     # job index -> seconds the helper spent on it
        self.finished = False
        self._pid = os.getpid()         # a forked child neither waits for it nor stops it
        self._changed = threading.Condition()
        self._hooked = []
        threading.Thread(target=self._read_reports, daemon=True).start()

    def wait(self, i: int) -> bool:
        """Block until job ``i`` is reported (True) or the helper ends without it (False).
        A helper silent for ``wait_s`` seconds is stopped: this process compiles the rest."""
        with self._changed:
            reported = self._changed.wait_for(
                lambda: i in self.done or i in self.errors or self.finished, self.wait_s)
        if not reported:
            self.stop()
        return i in self.done

    def join(self, timeout: float | None = None) -> bool:
        """Block until the helper has ended (True) or ``timeout`` seconds have passed."""
        with self._changed:
            return self._changed.wait_for(lambda: self.finished, timeout)

    def _read_reports(self) -> None:
        for line in self.proc.stdout:
            head, _, message = line.decode(errors="replace").strip().partition(" ")
            kind, _, index = head.partition(":")
            with self._changed:
                if kind == "done" and index.isdigit():
                    self.done.add(int(index))
                    self.seconds[int(index)] = float(message or "nan")
                elif kind == "error" and index.isdigit():
                    self.errors[int(index)] = message
                self._changed.notify_all()
        self.proc.stdout.close()
        self.proc.wait()
        with self._changed:
            self.finished = True
            self.unhook()
            self._changed.notify_all()

    def hook(self) -> None:
        """Make each job's dispatcher wait for the helper before compiling the job's types
        (nothing once it has finished)."""
        with self._changed:
            if not self.finished:
                self._hook()

    def _hook(self) -> None:
        for i, (dispatcher, args) in enumerate(self.jobs):
            if "compile" in vars(dispatcher):           # another helper's hook: leave it
                continue
            compile_ = dispatcher.compile
            types = job_types(args)

            def waiting_compile(sig, i=i, compile_=compile_, types=types):
                if not self.finished and tuple(sig) == types and os.getpid() == self._pid:
                    self.wait(i)
                return compile_(sig)

            dispatcher.compile = waiting_compile
            self._hooked.append(dispatcher)

    def unhook(self) -> None:
        """Give the dispatchers their own ``compile`` back."""
        hooked, self._hooked = self._hooked, []
        for dispatcher in hooked:
            vars(dispatcher).pop("compile", None)

    def stop(self) -> None:
        """End the helper now (what it wrote to the cache stays valid); the reading thread
        then marks it finished."""
        if not self.finished and os.getpid() == self._pid:
            self.unhook()
            self.proc.kill()


def enabled() -> bool:
    """Whether a helper may start: numba compiles (no ``NUMBA_DISABLE_JIT``), a Python
    interpreter to run it (``sys.executable`` named python…: not an embedding program's own
    binary) and not turned off with ``CALEDONIA_COMPILE_HELPER=0``."""
    from numba.core import config
    name = os.path.basename(sys.executable or "").lower()
    return (not config.DISABLE_JIT and name.startswith(("python", "pypy"))
            and os.environ.get(SWITCH, "1") != "0")


def start(jobs) -> Helper | None:
    """Start a helper compiling ``jobs`` ((dispatcher, example arguments), in order) and hook
    their dispatchers; None when no helper can start (nothing changes then)."""
    payload = pickle.dumps((project_sources().digest, [
        (d.py_func.__module__, d.py_func.__qualname__, tuple(map(light, args)))
        for d, args in jobs]))
    from numba.core import config
    env = dict(os.environ)
    if config.CACHE_DIR:
        env["NUMBA_CACHE_DIR"] = config.CACHE_DIR
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", f"from {__name__} import helper_main; helper_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return None
    try:
        proc.stdin.write(payload)
        proc.stdin.close()
    except OSError:                             # it has ended already (a broken pipe)
        proc.kill()                             # (closing stdin closed it even so)
        proc.wait()
        proc.stdout.close()
        return None
    helper = Helper(proc, list(jobs))
    helper.hook()
    atexit.register(helper.stop)
    return helper


def helper_main() -> None:
    """The helper process: compile each job read from stdin, report ``done:I`` or
    ``error:I message`` on stdout; nothing when this package's sources differ from the
    caller's (another checkout first on the path: its cache is another folder)."""
    digest, jobs = pickle.load(sys.stdin.buffer)
    if digest != project_sources().digest:
        return
    for i, (module, name, args) in enumerate(jobs):
        began = time.perf_counter()
        try:
            getattr(importlib.import_module(module), name).compile(job_types(args))
            print(f"done:{i} {time.perf_counter() - began:.3f}", flush=True)
        except Exception as e:                  # noqa: BLE001 -- reported, the caller compiles
            print(f"error:{i} {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)


# ================================================================== the engine's jobs
def engine_jobs(T, automa) -> list:
    """The helper's part of a ``Game``'s first compile for tables ``T`` and ``automa``
    (``automa.deck.automa_switch``), in the order this process needs them: while it compiles
    the turn flow below ``new_game_log``, the helper compiles production (R-2.2, R-7) and the
    port effects, then the legal-action mask and the step (below ``game_call``): parts of a
    size that keep both processes busy (``benchmarks/cold_start.py`` measures the split,
    docs/performance.md)."""
    from caledonia_env.engine.actions import MASK_WIDTH
    from caledonia_env.engine.flow import production_next
    from caledonia_env.engine.layout import AM_LOG_SIZE, STATE_SIZE
    from caledonia_env.engine.mask import legal_mask
    from caledonia_env.engine.ports import effect_applicable
    from caledonia_env.engine.step import apply_action_log
    s = np.zeros(STATE_SIZE, np.int32)
    return [(production_next, (s, T, automa)),
            (effect_applicable, (s, T, 0, 0, False)),
            (legal_mask, (s, T, np.zeros(MASK_WIDTH, np.int8))),
            (apply_action_log, (s, T, 0, np.zeros(AM_LOG_SIZE, np.int32), automa))]


_started: dict[tuple, Helper | None] = {}


def first_compile(kind: tuple, is_cached, jobs) -> Helper | None:
    """Start a helper on ``jobs()`` unless ``is_cached()`` says numba's cache holds what this
    ``kind`` of first use compiles. Once per kind and process; None when not started."""
    if kind in _started:
        return None
    _started[kind] = None
    if enabled() and not is_cached():
        _started[kind] = start(jobs())
    return _started[kind]


def cached(dispatcher, args) -> bool:
    """Whether numba's cache holds ``dispatcher`` compiled for ``args``' types (True without
    a cache: nothing for a helper to do)."""
    signatures = cached_signatures(dispatcher)
    return signatures is None or job_types(args) in signatures


def engine_first_compile(T, automa) -> Helper | None:
    """Before a ``Game``'s first engine call in this process: start the helper on
    :func:`engine_jobs` when numba's cache lacks the entry points for this kind of game
    (``first_run.engine_cached``)."""
    kind = automa is not None
    return first_compile(("game", kind), lambda: engine_cached(kind),
                         lambda: engine_jobs(T, automa))
