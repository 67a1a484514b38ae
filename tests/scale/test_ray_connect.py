"""Joining Ray (caledonia_env.ray_connect, docs/scale.md): an address that refuses fails at
once, a silent one after --connect-timeout, each in one line and without touching --out;
SIGTERM while a local Ray plays exits cleanly (slow: it starts Ray)."""
import socket
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest

from caledonia_env import scale
from caledonia_env import tournament as T
from caledonia_env.cli import main
from caledonia_env.ray_connect import ClusterUnreachable, _host_port, _init_within
from signals import terminate_when

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")

ROOT = Path(__file__).resolve().parents[2]
SPEC = T.TournamentSpec(players=("random", "greedy"), games=8, seed=7)


@pytest.fixture(autouse=True)
def no_ray_session():
    """Each test starts without a Ray session in this process (run_study would reuse one)."""
    if ray.is_initialized():
        ray.shutdown()


def test_addresses_with_a_port_are_probed():
    assert _host_port("ray://10.0.0.5:10001") == ("10.0.0.5", 10001)
    assert _host_port("head:6379") == ("head", 6379)
    assert _host_port("[::1]:6379") == ("::1", 6379)
    assert _host_port("auto") is None and _host_port("ray://head") is None


# ------------------------------------------------------- a Ray that does not answer
def _closed_port() -> int:
    """A local port nothing listens on (connections are refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_address_that_refuses_fails_at_once_and_keeps_out(tmp_path, capsys, monkeypatch):
    """`--address ray://127.0.0.1:PORT` with nothing there: one line, exit 2, at once (the
    probe answers before Ray, which retries for minutes, is asked), and the results file is
    not touched (nothing is written before the first result)."""
    out = tmp_path / "valuable.csv"
    scale.run_study(T.TournamentSpec(players=("random", "random"), games=2), str(out),
                    backend="local", workers=1)
    before = out.read_bytes()
    asked = []
    monkeypatch.setattr(ray, "init", lambda *a, **k: asked.append(k.get("address")))
    for address in (f"ray://127.0.0.1:{_closed_port()}", f"127.0.0.1:{_closed_port()}"):
        with pytest.raises(ConnectionError, match="cannot reach the Ray cluster"):
            scale.run_study(SPEC, str(out), backend="ray", address=address)
        assert main(["play", "--players", "random,random", "--games", "2", "--backend",
                     "ray", "--address", address, "--out", str(out), "-q"]) == 2
        err = capsys.readouterr().err
        assert "Connection refused" in err and err.count("\n") == 1, err
        assert asked == []
        assert out.read_bytes() == before
    assert not ray.is_initialized()


def test_a_silent_address_is_given_up_after_connect_timeout(tmp_path):
    """A port that accepts connections but never speaks Ray (in a subprocess: the helper
    thread stuck in ray.init stays behind): exit 2 after --connect-timeout, one line."""
    out = tmp_path / "valuable.csv"
    out.write_text(",".join(T.CSV_FIELDS) + "\n")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "caledonia_env", "play", "--players", "random,random",
             "--games", "2", "--backend", "ray", "--address", f"127.0.0.1:{port}",
             "--connect-timeout", "2", "--out", str(out), "-q"],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"caledonia play: error: no Ray cluster answered at 127.0.0.1:{port} within 2 s "
        f"(--connect-timeout); is it running, and is the address right?"]
    assert out.read_text() == ",".join(T.CSV_FIELDS) + "\n"


def test_a_ray_init_that_does_not_return_is_left_behind_at_the_timeout():
    """``_init_within`` returns (ClusterUnreachable) while ``ray.init`` is still blocked:
    the timeout, not Ray, ends the wait (no clock asserted: the init is released after)."""
    release = threading.Event()
    started = threading.Event()

    def init(**kwargs):
        started.set()
        release.wait()
    fake = types.SimpleNamespace(init=init)
    try:
        with pytest.raises(ClusterUnreachable, match="within 0.05 s"):
            _init_within(fake, "127.0.0.1:1", 0.05)
        assert started.wait(60) and not release.is_set()
    finally:
        release.set()


def test_connect_timeout_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="connect_timeout must be > 0"):
        scale.run_study(SPEC, str(tmp_path / "x.csv"), backend="ray", address="auto",
                        connect_timeout=0)


@pytest.mark.slow
def test_sigterm_on_ray_exits_cleanly_and_keeps_the_finished_games(tmp_path):
    """SIGTERM while a local Ray plays: exit 143, one message naming the kept games and
    --resume, no stack dump (Ray's own SIGTERM handler would exit at once), and the file
    resumes."""
    out = tmp_path / "s.csv"
    argv = [sys.executable, "-m", "caledonia_env", "play", "--players", "greedy,greedy",
            "--games", "3000", "--backend", "ray", "--workers", "2", "--out", str(out), "-q"]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    err = terminate_when(proc, lambda: out.exists() and out.read_text().count("\n") > 5)
    assert proc.returncode == 143, err
    assert "terminated;" in err and "complete games kept in" in err and "--resume" in err
    assert "***" not in err and "Traceback" not in err and "SIGTERM received" not in err
    kept = scale.complete_games(scale.read_rows(str(out)), 2)
    assert kept


def test_evaluate_reports_an_unreachable_cluster_in_one_line(tmp_path, capsys):
    """`caledonia evaluate` (train/cli/evaluate.py) reports bad input that is a ValueError in one
    line: an unreachable cluster is one."""
    pytest.importorskip("torch")
    address = f"127.0.0.1:{_closed_port()}"
    assert main(["evaluate", "pretrained", "--vs", "greedy", "--games", "2", "-q",
                 "--league-file", "", "--backend", "ray", "--address", address,
                 "--out", str(tmp_path / "e.csv")]) == 2
    err = capsys.readouterr().err
    assert "cannot reach the Ray cluster" in err and err.count("\n") == 1, err
    assert not (tmp_path / "e.csv").exists()
