"""The compile helper (engine/compile/helper.py, issue #37): a second process compiles
jobs into numba's cache while this one waits for exactly those, and a helper that fails
costs nothing but its start."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from numba import njit, typeof

from caledonia_env.engine.compile import helper as pc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODULE = """
import numba

@numba.njit(cache=True)
def inner(x):
    return x.sum() + 1.0

@numba.njit(cache=True)
def outer(x):
    return inner(x) * 2.0
"""

CHILD = """
import json, sys
import numpy as np
from numba.core import event
import mod
from caledonia_env.engine.compile import helper as pc

compiled = []

class Log(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        func = ev.data["dispatcher"].py_func
        if func.__module__ == "mod":
            compiled.append(func.__name__)

event.register("numba:compile", Log())
if sys.argv[1] == "silent":          # a helper that ends at once, reporting nothing
    pc.sys.executable = "/bin/true"
helper = pc.start([(mod.inner, (np.zeros(3),))])
value = mod.outer(np.ones(3))
if helper is not None:                # its end is read by a thread
    helper.join(5)
print(json.dumps({"value": value, "compiled": compiled, "hooked": "compile" in vars(mod.inner),
                  "cached": [pc.cached(mod.inner, (np.zeros(3),)),
                             pc.cached(mod.inner, (np.zeros(3, np.int32),))],
                  "done": None if helper is None else sorted(helper.done),
                  "finished": helper is None or helper.finished}))
"""


def run_child(tmp_path, mode):
    (tmp_path / "mod.py").write_text(MODULE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), ROOT]),
               NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop(pc.SWITCH, None)
    out = subprocess.run([sys.executable, "-c", CHILD, mode], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_caller_loads_the_helpers_job_from_the_cache_instead_of_compiling_it(tmp_path):
    r = run_child(tmp_path, "helper")
    assert r["value"] == 8.0
    assert r["compiled"] == ["outer"]            # inner: the helper's, loaded from the cache
    assert r["cached"] == [True, False]          # for float64 arrays, not for int32
    assert r["done"] == [0] and r["finished"] and not r["hooked"]


@pytest.mark.skipif(not os.path.exists("/bin/true"), reason="needs /bin/true")
def test_a_helper_that_reports_nothing_leaves_the_compile_to_the_caller(tmp_path):
    r = run_child(tmp_path, "silent")
    assert r["value"] == 8.0
    assert sorted(r["compiled"]) == ["inner", "outer"]
    assert r["done"] in ([], None) and r["finished"] and not r["hooked"]    # None: no pipe


@njit
def _plus_one(x):
    return x + 1.0


@pytest.mark.skipif(not os.path.exists("/bin/true"), reason="needs /bin/true")
def test_a_helper_that_ended_before_reading_its_jobs_is_given_up(monkeypatch):
    """Writing the job list to a helper that has already ended breaks the pipe: ``start``
    returns None and hooks nothing (the race the silent helper above may or may not hit)."""
    popen = subprocess.Popen

    def ended(args, **kw):
        proc = popen(["/bin/true"], **kw)
        proc.wait()
        return proc

    monkeypatch.setattr(pc.subprocess, "Popen", ended)
    assert pc.start([(_plus_one, (np.zeros(3),))]) is None
    assert "compile" not in vars(_plus_one)


class _Proc:
    """A helper's process as ``Helper`` uses it: its report lines, then its end."""

    def __init__(self, text=None):
        read, self._write = os.pipe()
        self.stdout = os.fdopen(read, "rb")
        self.killed = False
        if text is not None:
            os.write(self._write, text.encode())
            os.close(self._write)

    def kill(self):
        self.killed = True
        os.close(self._write)

    def wait(self):
        return 0


def test_reports_are_read_as_they_come_and_errors_kept():
    helper = pc.Helper(_Proc("done:0 1.25\nerror:1 TypingError: no\nnoise\n"),
                       [(None, ()), (None, ()), (None, ())])
    assert helper.wait(0) and helper.seconds == {0: 1.25}
    assert not helper.wait(1) and helper.errors == {1: "TypingError: no"}
    assert not helper.wait(2) and helper.join(5)        # it ended without job 2
    assert not helper.proc.killed


def test_a_silent_helper_is_given_up_after_the_wait_limit():
    proc = _Proc()
    helper = pc.Helper(proc, [(None, ())], wait_s=0.2)
    assert not helper.wait(0) and proc.killed and helper.join(5)


def test_light_arguments_keep_their_numba_types():
    tables = np.arange(70_000, dtype=np.int32)
    frozen = np.zeros((2, 3), np.int8)
    frozen.flags.writeable = False
    for arg in (tables, frozen, np.zeros(5, np.int64), 3, True, None):
        small = pc.light(arg)
        assert typeof(small) == typeof(arg)
        assert not isinstance(arg, np.ndarray) or small.size == 1
    view = tables[::2]                             # not contiguous: sent as it is
    assert pc.light(view) is view


def test_the_switch_and_the_interpreter_decide_whether_a_helper_may_start(monkeypatch):
    monkeypatch.setenv(pc.SWITCH, "0")
    assert not pc.enabled()
    monkeypatch.setenv(pc.SWITCH, "1")
    jit = not __import__("numba").config.DISABLE_JIT
    for executable, may in (("/venv/bin/python3.11", jit), ("/usr/bin/pypy3", jit),
                            ("/usr/bin/uwsgi", False), ("", False)):
        monkeypatch.setattr(pc.sys, "executable", executable)
        assert pc.enabled() == may, executable


def test_a_warm_cache_starts_no_helper(monkeypatch):
    """Once numba's cache holds the engine, a ``Game`` starts no helper (asked once per kind
    of game and process)."""
    from caledonia_env import Game, GameConfig
    Game(GameConfig(num_players=2, seed=0)).legal_actions()     # compiled and cached now
    monkeypatch.setattr(pc, "_started", {})
    monkeypatch.setattr(pc, "start", lambda jobs: pytest.fail("a helper was started"))
    Game(GameConfig(num_players=2, seed=0))
    assert pc._started == {("game", False): None}
    monkeypatch.setattr(pc, "engine_cached", lambda kind: pytest.fail("asked again"))
    Game(GameConfig(num_players=3, seed=1))


def test_a_warm_cache_starts_no_helper_for_the_vector_env(monkeypatch):
    from caledonia_env.envs.vector import CaledoniaVectorEnv
    monkeypatch.setenv(pc.SWITCH, "0")
    env = CaledoniaVectorEnv(num_envs=2, num_players=2, seed=0)
    env.reset()
    env.step(env.sample_actions())                  # compiled and cached now
    monkeypatch.setenv(pc.SWITCH, "1")
    monkeypatch.setattr(pc, "_started", {})
    monkeypatch.setattr(pc, "start", lambda jobs: pytest.fail("a helper was started"))
    CaledoniaVectorEnv(num_envs=2, num_players=2, seed=0)
    assert pc._started == {("vector", False, False): None}


VECTOR_CHILD = """
import json
from numba.core import event
from caledonia_env.engine.compile import helper as pc
from caledonia_env.envs.vector import CaledoniaVectorEnv

compiled = set()

class Log(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        compiled.add(ev.data["dispatcher"].py_func.__name__)

event.register("numba:compile", Log())
env = CaledoniaVectorEnv(num_envs=4, num_players=2, seed=0)
env.reset()
for _ in range(20):
    env.step(env.sample_actions())
(helper,) = [h for h in pc._started.values() if h is not None]
jobs = [d.py_func.__name__ for d, _ in helper.jobs]
print(json.dumps({"jobs": jobs, "done": sorted(helper.done), "errors": helper.errors,
                  "compiled_here": sorted(compiled & set(jobs)),
                  "vector_call": "vector_call" in compiled}))
"""


@pytest.mark.slow
def test_the_vector_envs_first_compile_loads_the_helpers_jobs(tmp_path):
    """From an empty cache (about 45 s on two cores): the helper compiles the engine's part
    with the argument types the env's kernel asks for, so this process compiles none of it
    and compiles the kernel (``vector_call``, reset and step in one) above it."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env.pop(pc.SWITCH, None)
    out = subprocess.run([sys.executable, "-c", VECTOR_CHILD], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["jobs"] == ["production_next", "effect_applicable", "legal_mask",
                         "apply_action_log"]
    assert r["done"] == [0, 1, 2, 3] and r["errors"] == {}
    assert r["compiled_here"] == [] and r["vector_call"]


def test_the_engine_jobs_are_engine_functions_with_example_arguments():
    from caledonia_env import Game, GameConfig
    game = Game(GameConfig(num_players=2, seed=0))
    jobs = pc.engine_jobs(game.tables, game.static.automa_switch)
    names = [d.py_func.__name__ for d, _ in jobs]
    assert names == ["production_next", "effect_applicable", "legal_mask", "apply_action_log"]
    for dispatcher, args in jobs:
        assert dispatcher.py_func.__module__.startswith("caledonia_env.engine.")
        assert len(pc.job_types(args)) == dispatcher.py_func.__code__.co_argcount
