"""engine.compile.first_run: the first run says at once, on a terminal only, that it compiles the
engine, with progress; nothing when the engine is cached or stderr is a pipe."""
import io
import os
import pty
import subprocess
import sys

import pytest

from numba.core import types

from caledonia_env import Game, GameConfig
from caledonia_env.engine.compile import first_run
from caledonia_env.engine.compile.first_run import CompileProgress, engine_cached
from caledonia_env.engine.compile.jit import njit

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOTICE = "compiling the engine for this machine"


class Terminal(io.StringIO):
    def isatty(self):
        return True


def fresh_function(module="caledonia_env.engine.fake"):
    """A new (never compiled, not cached) numba function of ``module``."""
    def twice(x, automa=None):
        return 2 * x
    twice.__module__ = module
    return njit(cache=False)(twice)


def test_a_compile_is_announced_with_progress_and_a_total():
    out = Terminal()
    with CompileProgress(out, cached=lambda automa: False, estimate_s=42) as progress:
        assert fresh_function()(3) == 6
        progress.finish()
        fresh_function()(4)                      # after finish: no second notice
    text = out.getvalue()
    assert text.count(NOTICE) == 1 and "about 42 s" in text
    assert progress.count == 1 and "compiled 1 functions in" in text
    assert text.endswith("\n")


@pytest.mark.parametrize("stream, cached, module", [
    (Terminal(), lambda automa: True, "caledonia_env.engine.fake"),     # engine cached already
    (io.StringIO(), lambda automa: False, "caledonia_env.engine.fake"),  # not a terminal
    (Terminal(), lambda automa: False, "someone_else"),                  # not project code
])
def test_nothing_is_written_when_there_is_nothing_to_announce(stream, cached, module):
    with CompileProgress(stream, cached=cached) as progress:
        fresh_function(module)(1)
    assert stream.getvalue() == "" and not progress.announced


def test_engine_cached_after_a_game_and_not_in_an_empty_cache(tmp_path):
    game = Game(GameConfig(num_players=2, seed=0))
    game.step(int(game.legal_actions()[0]))
    assert engine_cached()
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    run = subprocess.run([sys.executable, "-c", "from caledonia_env.engine.compile.first_run import "
                          "engine_cached; print(engine_cached())"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.stdout.strip() == "False", run.stderr[-2000:]


class FakeIndex:
    """A dispatcher whose numba cache index holds entries of the given argument types."""

    def __init__(self, *signatures):
        index = {(sig, ("cpu",), ("hash",)): f"f{i}.nbc" for i, sig in enumerate(signatures)}
        cache_file = type("CacheFile", (), {"_load_index": lambda self: index})()
        self._cache = type("Cache", (), {"_cache_file": cache_file})()


@pytest.mark.parametrize("kinds, expected", [
    ((), {None: False, False: False, True: False}),
    ((types.none,), {None: True, False: True, True: False}),
    ((types.boolean,), {None: True, False: False, True: True}),
    ((types.none, types.boolean), {None: True, False: True, True: True}),
])
def test_A_0_engine_cached_tells_the_two_kinds_of_game_apart(monkeypatch, kinds, expected):
    """Games with Automa seats (A-0) compile their own version of the entry points (last
    argument ``automa`` True instead of None): a cache holding only one kind must not keep
    the notice quiet when the other kind compiles."""
    fake = FakeIndex(*[(types.int32[:], k) for k in kinds])
    monkeypatch.setattr(first_run, "ENTRY_POINTS", (fake, fake))
    assert {k: engine_cached(k) for k in (None, False, True)} == expected


@pytest.mark.parametrize("automa, kind", [(None, False), (True, True)])
def test_A_0_the_notice_asks_about_the_kind_of_game_being_compiled(monkeypatch, automa, kind):
    entry = fresh_function()
    monkeypatch.setattr(first_run, "ENTRY_POINTS", (entry,))
    asked = []
    out = Terminal()
    with CompileProgress(out, cached=lambda k: asked.append(k) or True):
        entry(3, automa)
    assert asked == [kind] and out.getvalue() == ""
    asked.clear()
    with CompileProgress(Terminal(), cached=lambda k: asked.append(k) or True):
        fresh_function()(4, None)                  # not an entry point: either kind
    assert asked == [None]


def run_with_stderr(args, cache, terminal: bool) -> str:
    """Run ``args`` with an empty numba cache in ``cache``; what it wrote to stderr, a
    pseudo-terminal or a pipe."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    if not terminal:
        run = subprocess.run(args, env=env, capture_output=True, text=True, timeout=1200,
                             cwd=ROOT)
        assert run.returncode == 0, run.stderr[-2000:]
        return run.stderr
    main, side = pty.openpty()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=side, cwd=ROOT)
    os.close(side)
    chunks = []
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:                          # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    assert proc.wait(timeout=1200) == 0
    return b"".join(chunks).decode(errors="replace")


TINY = ("import sys, numpy as np\n"
        "from caledonia_env.engine.compile.first_run import CompileProgress\n"
        "from caledonia_env.engine.setup import _fill\n"
        "with CompileProgress(sys.stderr):\n"
        "    _fill(np.zeros(4, np.int32), 0, 4, -1)\n")


def test_a_cold_cache_is_announced_on_a_terminal_only(tmp_path):
    """A first compile with an empty cache (the real check of the cache) on a pseudo-terminal
    prints the notice and the total; through a pipe nothing."""
    args = [sys.executable, "-c", TINY]
    shown = run_with_stderr(args, tmp_path / "a", terminal=True)
    assert NOTICE in shown and "compiled" in shown
    assert run_with_stderr(args, tmp_path / "b", terminal=False) == ""


@pytest.mark.slow
def test_the_cli_announces_its_first_compile_on_a_terminal_only(tmp_path):
    """``caledonia play`` with an empty cache: the notice and progress on a terminal, before
    the games; nothing on a pipe."""
    args = [sys.executable, "-m", "caledonia_env", "play", "--players", "random,random",
            "--games", "2", "--workers", "2", "--quiet"]
    shown = run_with_stderr(args, tmp_path / "a", terminal=True)
    assert shown.count(NOTICE) == 1 and "compiling:" in shown
    assert "compiled" in shown.split(NOTICE)[1]
    assert NOTICE not in run_with_stderr(args, tmp_path / "b", terminal=False)
