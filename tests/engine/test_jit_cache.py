"""numba's on-disk cache of the project's functions (caledonia_env.engine.compile.jit): keyed by
every project numba source, numba's configuration left alone."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest

from caledonia_env.agents.rollouts import greedy_call
from caledonia_env.engine.compile import jit
from caledonia_env.engine.step import apply_action
from caledonia_env.envs.observation import encode_obs
from caledonia_env.envs.vector_kernels import vector_call

REPO = Path(__file__).resolve().parents[2]


def run_python(code, *args, env=None):
    """Run ``code`` in a fresh interpreter; its stdout (stripped)."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, **(env or {})))
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_importing_the_package_leaves_numba_config_alone():
    before_after = run_python("""
        import numba
        before = numba.config.CACHE_DIR
        import caledonia_env, caledonia_env.envs, caledonia_env.agents
        print(repr(before), repr(numba.config.CACHE_DIR))
    """, env={"NUMBA_CACHE_DIR": ""})
    assert before_after == "'' ''"


def test_project_functions_share_one_cache_keyed_by_all_numba_sources():
    """The engine, the env kernels, the encoder and an agent's kernel all use the project
    locator and one folder named by the hash of every project numba source."""
    sources = jit.project_sources()
    base = Path(jit.cache_base()) / sources.digest[:16]
    for f in (apply_action, encode_obs, vector_call, greedy_call):
        locator = f._cache._impl.locator
        assert isinstance(locator, jit.ProjectCacheLocator)
        assert locator.get_source_stamp()[1] == sources.digest
        package = f.py_func.__module__.rsplit(".", 1)[0]
        assert Path(f._cache.cache_path) == base.joinpath(*package.split("."))
    names = {(p.parent.name, p.name) for p in sources.files}
    for must in [("engine", "layout.py"), ("envs", "observation.py"), ("agents", "rollouts.py"),
                 ("caledonia_env", "fuzz.py")]:
        assert must in names


def test_the_cache_of_package_code_does_not_depend_on_where_the_file_lies(tmp_path):
    """An editable checkout and a pip install of the same sources share compiled code: a
    package function's cache folder and stamp come from its module name and file contents,
    so the same file elsewhere gets the same ones; a changed file gets another stamp."""
    src = Path(apply_action.py_func.__code__.co_filename)
    here = jit.ProjectCacheLocator(apply_action.py_func, str(src))
    copy = tmp_path / "site" / "caledonia_env" / "engine" / src.name
    copy.parent.mkdir(parents=True)
    copy.write_bytes(src.read_bytes())
    there = jit.ProjectCacheLocator(apply_action.py_func, str(copy))
    assert there.get_cache_path() == here.get_cache_path()
    assert there.get_source_stamp() == here.get_source_stamp()
    changed = tmp_path / "changed" / src.name
    changed.parent.mkdir()
    changed.write_bytes(src.read_bytes() + b"\n# edited\n")
    assert jit.ProjectCacheLocator(apply_action.py_func, str(changed)).get_source_stamp() \
        != here.get_source_stamp()


def test_every_file_with_project_numba_code_is_hashed():
    """A new module with numba code outside engine/, envs/ and agents/ must join the hash."""
    hashed = set(jit.project_sources().files)
    for folder in ("caledonia_env", "agents", "train"):
        for path in (REPO / folder).rglob("*.py"):
            text = path.read_text()
            if "njit" in text and "cache=True" in text:
                assert path.resolve() in hashed, path


def test_digest_changes_with_any_one_hashed_file(tmp_path):
    files = []
    for name in ("a.py", "b.py", "c.py"):
        files.append(tmp_path / name)
        files[-1].write_text(f"X = {name!r}\n")
    base = jit.sources_digest(files)
    assert jit.sources_digest(files) == base
    for f in files:
        old = f.read_text()
        f.write_text(old + "# edit\n")
        assert jit.sources_digest(files) != base, f.name
        f.write_text(old)
    assert jit.sources_digest(files) == base


def test_user_code_keeps_numbas_own_cache(tmp_path, monkeypatch):
    """A function outside the project is cached by numba's locators, not the project's."""
    (tmp_path / "user_kernel.py").write_text(textwrap.dedent("""
        import numba

        @numba.njit(cache=True)
        def twice(x):
            return 2 * x
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import user_kernel
    locator = user_kernel.twice._cache._impl.locator
    assert not isinstance(locator, jit.ProjectCacheLocator)
    assert not jit.project_sources().covers(str(tmp_path / "user_kernel.py"))
    assert not jit.project_sources().covers(str(REPO / ".venv" / "lib" / "x.py"))
    assert jit.project_sources().covers(str(REPO / "tests" / "engine" / "engine_trace.py"))


# a kernel in one file calling a jitted function of another, as the env kernels call the
# encoder; the child run points the project at tmp_path (or not: numba's own cache)
_KERNEL_FILES = {
    "dep.py": "from caledonia_env.engine.compile.jit import njit\n\nVALUE = {value}\n\n\n"
              "@njit(cache=True)\ndef value():\n    return VALUE\n",
    "kern.py": "from caledonia_env.engine.compile.jit import njit\nfrom dep import value\n\n\n"
               "@njit(cache=True)\ndef kernel():\n    return 10 * value()\n",
}
_CHILD = """
    import sys
    from pathlib import Path
    from caledonia_env.engine.compile import jit
    proj = Path(sys.argv[1]).resolve()
    if sys.argv[2] == "project":
        jit._sources = jit.ProjectSources((proj,), (proj / "dep.py", proj / "kern.py"))
    sys.path.insert(0, str(proj))
    import kern
    result = kern.kernel()
    print(result, sum(kern.kernel.stats.cache_hits.values()))
"""


@pytest.mark.parametrize("mode", ["project", "numba"])
def test_an_edit_to_a_callee_file_recompiles_the_kernel(tmp_path, mode):
    """numba alone reuses the cached kernel after an edit to its callee's file (stale: 10);
    the project locator recompiles it (20). A run without edits loads it from the cache."""
    proj = tmp_path / "proj"
    proj.mkdir()
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def write(value):
        for name, text in _KERNEL_FILES.items():
            (proj / name).write_text(text.format(value=value))

    write(1)
    assert run_python(_CHILD, proj, mode, env=env) == "10 0"       # compiled
    assert run_python(_CHILD, proj, mode, env=env) == "10 1"       # from the cache
    write(2)
    stale = run_python(_CHILD, proj, mode, env=env)
    assert stale == ("20 0" if mode == "project" else "10 1")
    if mode == "project":
        assert (tmp_path / "cache" / "caledonia_env").is_dir()      # NUMBA_CACHE_DIR respected
