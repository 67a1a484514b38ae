"""The speed benchmarks run and print positive rates (never a timed assertion)."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_bench(name, *args):
    run = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", name), *args],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def test_automa_speed_benchmark_runs():
    out = run_bench("automa_speed.py", "--games", "2", "--repeats", "1", "--level", "3")
    m = re.search(r"random play ([\d,]+) player steps/s, greedy games ([\d.]+)/s", out)
    assert m and int(m.group(1).replace(",", "")) > 0 and float(m.group(2)) > 0


def test_engine_speed_benchmark_times_a_given_tree():
    out = run_bench("engine_speed.py", "--games", "3", "--nojit-games", "0", "--no-startup",
                    "--tree", ROOT, "--json")
    result = json.loads(out.strip().splitlines()[-1])
    assert result["tree"] == ROOT and result["state_bytes"] > 0
    for n in ("2", "3", "4"):
        assert result["steps_per_s"][n] > 0 and result["cpu_steps_per_s"][n] > 0
    assert result["nojit_ratio"] == {} and "cold_start_s" not in result


def test_engine_speed_startup_imports_the_given_tree(tmp_path, monkeypatch):
    """The cold/warm start of ``--tree DIR`` times DIR's package, never the one in the
    working directory (``python -c`` puts the working directory first on sys.path)."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import engine_speed
    finally:
        sys.path.pop(0)
    tree = tmp_path / "tree"
    pkg = tree / "caledonia_env"
    (pkg / "engine").mkdir(parents=True)
    marker = tmp_path / "imported.txt"
    (pkg / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').write(__file__)\n"
        "class GameConfig:\n    def __init__(self, **kw): pass\n"
        "class Game:\n    def __init__(self, config): self.tables = None\n")
    (pkg / "engine" / "__init__.py").write_text("")
    (pkg / "engine" / "layout.py").write_text("STATE_SIZE = 4\n")
    (pkg / "engine" / "playout.py").write_text("def random_games(T, n, seed, out): return 1\n")
    monkeypatch.chdir(ROOT)                      # where the real package would be found
    assert engine_speed.startup(str(tmp_path / "cache"), str(tree)) >= 0
    assert marker.read_text().startswith(str(pkg))


def test_env_speed_scaling_reports_thread_and_process_ratios():
    env = dict(os.environ, NUMBA_NUM_THREADS="2")
    run = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "env_speed.py"),
                          "--scaling", "1", "--sizes", "8", "--seconds", "0.2", "--json"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    r = result["sizes"]["8"]
    assert result["threads"] == 2 and result["pairs"] == 1
    assert r["one_thread"] > 0 and r["threads"] > 0 and r["processes"] > 0
    assert r["thread_ratio"][1] <= r["thread_ratio"][0] <= r["thread_ratio"][2]
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "env_speed.py"),
                          "--scaling", "-1"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "--scaling" in bad.stderr
    small = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "env_speed.py"),
                            "--scaling", "1", "--sizes", "1"], capture_output=True, text=True,
                           cwd=ROOT, env=env)
    assert small.returncode == 2 and "sizes >= the 2 threads" in small.stderr


def _fake_tree(tmp_path, steps=3):
    """A stand-in checkout whose ``Game`` plays ``steps`` moves with no numba code."""
    pkg = tmp_path / "tree" / "caledonia_env"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "import numpy as np\n"
        "class GameConfig:\n    def __init__(self, **kw): self.kw = kw\n"
        "class Game:\n"
        f"    def __init__(self, config): self.left = {steps}\n"
        "    @property\n    def is_terminal(self): return self.left == 0\n"
        "    def legal_actions(self): return np.arange(3)\n"
        "    def step(self, a): self.left -= 1\n")
    return pkg.parent


def test_cold_start_times_each_stage_of_a_given_tree(tmp_path):
    tree = _fake_tree(tmp_path)
    out = run_bench("cold_start.py", "--tree", str(tree), "--tree", str(tree), "--repeat", "2",
                    "--by-function", "3", "--json")
    result = json.loads(out.strip().splitlines()[-1])
    assert result["repeat"] == 2 and result["players"] == 4
    assert list(result["trees"]) == [str(tree)]          # the same tree twice: one entry
    s = result["trees"][str(tree)]
    for kind in ("cold", "warm"):
        for clock in ("wall", "cpu", "helper"):
            total = s[f"{kind}_{clock}_total"]
            assert 0 <= total["min"] <= total["median"] <= total["max"]
            assert s[f"{kind}_{clock}_import"]["median"] <= total["max"]
    assert s["compiled"] == {"import": 0, "setup": 0, "game": 0, "total": 0}
    assert s["by_function"] == []
    text = run_bench("cold_start.py", "--tree", str(tree))
    assert f"tree {tree}" in text and "cold wall" in text and "warm cpu" in text
    assert "cold helper" in text and "no compile helper" not in text


def test_cold_start_counts_the_cpu_of_a_helper_and_can_turn_it_off(tmp_path):
    """The ``helper`` clock is the CPU time of processes the timed code started and waited
    for; ``--no-helper`` sets ``CALEDONIA_COMPILE_HELPER=0`` for the timed code."""
    tree = _fake_tree(tmp_path)
    init = tree / "caledonia_env" / "__init__.py"
    init.write_text(init.read_text().replace(
        "    def __init__(self, config): self.left = 3\n",
        "    def __init__(self, config):\n"
        "        import os, subprocess, sys\n"
        "        self.left = 3\n"
        "        if os.environ['CALEDONIA_COMPILE_HELPER'] == '1':\n"
        "            subprocess.run([sys.executable, '-c', 'sum(range(10**7))'])\n"))
    result = json.loads(run_bench("cold_start.py", "--tree", str(tree), "--json"))
    s = result["trees"][str(tree)]
    assert result["helper"] and s["cold_helper_setup"]["median"] > 0
    assert s["cold_helper_game"]["median"] == 0
    result = json.loads(run_bench("cold_start.py", "--tree", str(tree), "--json", "--no-helper"))
    assert not result["helper"] and result["trees"][str(tree)]["cold_helper_total"]["max"] == 0
    assert "no compile helper" in run_bench("cold_start.py", "--tree", str(tree), "--no-helper")


def test_cold_start_times_the_vector_env_of_a_given_tree(tmp_path):
    """``--vector N``: the env of N games and its reset as ``setup``, 50 steps as ``game``."""
    tree = _fake_tree(tmp_path)
    envs = tree / "caledonia_env" / "envs"
    envs.mkdir()
    (envs / "__init__.py").write_text("")
    (envs / "vector.py").write_text(
        "import numpy as np\n"
        "class CaledoniaVectorEnv:\n"
        "    def __init__(self, num_envs, num_players, seed):\n"
        "        assert (num_envs, num_players) == (3, 2)\n"
        "        self.steps = 0\n"
        "    def reset(self): return np.zeros(3)\n"
        "    def sample_actions(self): return np.zeros(3, np.int64)\n"
        "    def step(self, actions): self.steps += 1\n")
    out = run_bench("cold_start.py", "--tree", str(tree), "--vector", "3", "--players", "2",
                    "--json")
    result = json.loads(out.strip().splitlines()[-1])
    assert result["vector"] == 3 and result["players"] == 2
    assert result["trees"][str(tree)]["compiled"]["total"] == 0
    text = run_bench("cold_start.py", "--tree", str(tree), "--vector", "3", "--players", "2")
    assert "a vector env of 3 games, 50 steps" in text


def test_cold_start_counts_compiles_by_function(tmp_path):
    """The compile log sees numba functions compiled by the timed tree."""
    tree = _fake_tree(tmp_path, steps=1)
    init = tree / "caledonia_env" / "__init__.py"
    init.write_text(init.read_text().replace(
        "def step(self, a): self.left -= 1",
        "def step(self, a): self.left -= _dec(1)\n"
        "import numba\n@numba.njit\ndef _dec(x): return x\n"))
    out = run_bench("cold_start.py", "--tree", str(tree), "--by-function", "5", "--json")
    s = json.loads(out.strip().splitlines()[-1])["trees"][str(tree)]
    assert s["compiled"]["game"] == 1 and s["compiled_warm"] == 1
    assert [name for name, _ in s["by_function"]] == ["caledonia_env._dec"]


def test_cold_start_rejects_bad_arguments(tmp_path):
    script = os.path.join(ROOT, "benchmarks", "cold_start.py")
    for args, said in ((["--repeat", "0"], "--repeat"), (["--tree", str(tmp_path)], "--tree"),
                       (["--by-function", "-1"], "--by-function"),
                       (["--vector", "-2"], "--vector")):
        bad = subprocess.run([sys.executable, script, *args], capture_output=True, text=True)
        assert bad.returncode == 2 and said in bad.stderr, bad.stderr


@pytest.mark.slow
def test_cold_start_of_this_checkout_compiles_once():
    """A real cold start compiles the engine; the warm run after it compiles nothing. The
    compile helper's jobs (engine/compile/helper.py) are compiled in the helper only: this
    process loads them from the cache (the helper's argument types are the engine's)."""
    out = run_bench("cold_start.py", "--json", "--by-function", "1000")
    s = json.loads(out.strip().splitlines()[-1])["trees"][ROOT]
    assert s["compiled"]["total"] > 0 and s["compiled_warm"] == 0
    assert s["warm_wall_total"]["max"] < s["cold_wall_total"]["min"]
    assert s["cold_helper_total"]["min"] > 0
    from caledonia_env.engine.compile.helper import engine_jobs
    jobs = {f"{d.py_func.__module__}.{d.py_func.__qualname__}"
            for d, _ in engine_jobs(np.zeros(1, np.int32), None)}
    compiled_here = {name for name, _ in s["by_function"]}
    assert len(jobs) == 4 and "caledonia_env.engine.api.game_call" in compiled_here
    assert not jobs & compiled_here


def test_search_speed_times_a_given_tree_and_hashes_its_moves():
    out = run_bench("search_speed.py", "--tree", ROOT, "--rollouts", "1", "--games", "1",
                    "--agents", "", "--json")
    (runs,) = json.loads(out.strip().splitlines()[-1]).values()
    (r,) = runs
    assert r["tree"] == ROOT and len(r["moves"]) == 16
    assert r["greedy_us_per_move"] > 0 and r["policy_us_per_move"] > 0


def test_search_speed_is_deterministic_so_equal_hashes_mean_equal_play():
    pytest.importorskip("torch", reason="the policy rollouts need the train extra")
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import search_speed
    finally:
        sys.path.pop(0)
    a = search_speed.child(2, 1, 2, ["greedy"], seed=5)
    b = search_speed.child(2, 1, 2, ["greedy"], seed=5)
    c = search_speed.child(2, 1, 2, ["greedy"], seed=6)
    assert a["moves"] == b["moves"] != c["moves"]


def test_python_paths_times_the_serial_vector_kernel_of_a_given_tree():
    out = run_bench("python_paths.py", "--tree", ROOT, "--only", "vector", "--passes", "1",
                    "--json")
    result = json.loads(out.strip().splitlines()[-1])
    assert result["package"] == os.path.join(ROOT, "caledonia_env")
    assert result["vector_steps_per_s"] > 0 and set(result) == {"package", "vector_steps_per_s"}


def test_fidelity_counts_the_estimates_the_map_sides_and_the_rule_readings():
    """benchmarks/fidelity.py: the ruleset's estimates, and outside the ruleset the eight
    module sides (the project's own) and every GameConfig interp_* switch (found on the
    dataclass, so a new reading is counted without editing the script)."""
    import dataclasses

    from caledonia_env.config import GameConfig
    from caledonia_env.data import load_ruleset
    out = run_bench("fidelity.py")
    n_est = len(load_ruleset().estimates())
    assert re.search(rf"^estimate\s+{n_est}\s", out, re.M), out
    readings = [f.name for f in dataclasses.fields(GameConfig) if f.name.startswith("interp_")]
    assert {"interp_price_shift_exact", "interp_export_min_contracts"} <= set(readings)
    line = next(x for x in out.splitlines() if x.startswith("unsourced outside the ruleset:"))
    assert "8 map sides (A1, A2, B1, B2, C1, C2, D1, D2)" in line
    assert f"{len(readings)} rule readings ({', '.join(readings)})" in line
