"""benchmarks/automa_speed.py runs and prints positive rates (never a timed assertion)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_automa_speed_benchmark_runs():
    run = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "automa_speed.py"),
                          "--games", "2", "--repeats", "1", "--level", "3"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-2000:]
    m = re.search(r"random play ([\d,]+) player steps/s, greedy games ([\d.]+)/s", run.stdout)
    assert m and int(m.group(1).replace(",", "")) > 0 and float(m.group(2)) > 0
