"""The speed benchmarks run and print positive rates (never a timed assertion)."""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
