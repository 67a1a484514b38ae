"""Game studies on Ray (caledonia_env.scale, docs/scale.md): same rows as the local runner,
resume after an interruption, Parquet output, `caledonia evaluate --backend ray` with a
ppo checkpoint; a slow test runs a two-node Ray cluster."""
import contextlib
import csv
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from caledonia_env import scale
from caledonia_env import tournament as T
from caledonia_env.cli import main

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")

ROOT = Path(__file__).resolve().parents[2]
SPEC = T.TournamentSpec(players=("random", "greedy"), games=8, seed=7)


def same(rows):
    """Rows without the wall-clock column."""
    return [{k: v for k, v in r.items() if k != "think_seconds"} for r in rows]


@pytest.fixture(scope="module")
def local_rows():
    return T.run(SPEC)


@pytest.fixture(scope="module")
def ray_local():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             _node_ip_address="127.0.0.1",
             runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
    yield
    ray.shutdown()


def untimed(csv_text: str) -> list[list[str]]:
    """The CSV's rows without the think_seconds column (a wall-clock time)."""
    rows = list(csv.reader(io.StringIO(csv_text)))
    k = rows[0].index("think_seconds")
    return [r[:k] + r[k + 1:] for r in rows]


def test_ray_gives_the_local_runners_rows_whatever_the_chunking(ray_local, local_rows, tmp_path):
    out = tmp_path / "study.csv"
    summary = scale.run_study(SPEC, str(out), backend="ray", chunk=3)
    assert summary["games"] == 8 and summary["skipped"] == 0
    assert sum(w["games"] for w in summary["workers"]) == 8
    assert same(scale.read_rows(str(out))) == same(local_rows)
    ref = tmp_path / "ref.csv"
    T.write_csv(local_rows, str(ref))
    assert untimed(out.read_text()) == untimed(ref.read_text())
    scale.run_study(SPEC, str(out), backend="local", workers=2, chunk=1)
    assert same(scale.read_rows(str(out))) == same(local_rows)


def test_resume_plays_only_the_missing_games(ray_local, local_rows, tmp_path):
    out = tmp_path / "study.csv"
    part = T.TournamentSpec(players=SPEC.players, games=3, seed=SPEC.seed)
    scale.run_study(part, str(out), backend="local", workers=1)
    with open(out, "a") as f:                     # an interruption cut the last line
        f.write("3,123,A1")
    summary = scale.run_study(SPEC, str(out), backend="ray", resume=True, chunk=2)
    assert summary["skipped"] == 3 and summary["games"] == 5
    assert same(scale.read_rows(str(out))) == same(local_rows)
    assert scale.run_study(SPEC, str(out), backend="ray", resume=True)["games"] == 0
    other = T.TournamentSpec(players=SPEC.players, games=8, seed=SPEC.seed + 1)
    with pytest.raises(ValueError, match="another study"):
        scale.run_study(other, str(out), backend="local", resume=True)


def test_parquet_round_trip_and_resume(ray_local, local_rows, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "study.parquet"
    part = T.TournamentSpec(players=SPEC.players, games=5, seed=SPEC.seed)
    scale.run_study(part, str(out), backend="ray", chunk=2)
    assert out.exists() and not os.path.exists(str(out) + ".parts")
    summary = scale.run_study(SPEC, str(out), backend="ray", resume=True, chunk=2)
    assert summary["skipped"] == 5 and summary["games"] == 3
    table = pq.read_table(out)
    assert table.column_names == list(T.CSV_FIELDS)
    assert table.num_rows == 16 and str(table.schema.field("game").type) == "int64"
    assert same(table.to_pylist()) == same(local_rows)


def test_bad_arguments_name_the_allowed_values(tmp_path):
    with pytest.raises(ValueError, match="backend"):
        scale.run_study(SPEC, str(tmp_path / "x.csv"), backend="dask")
    with pytest.raises(ValueError, match="out must end"):
        scale.run_study(SPEC, str(tmp_path / "x.json"), backend="local")
    with pytest.raises(ValueError, match="workers"):
        scale.run_study(SPEC, str(tmp_path / "x.csv"), backend="local", workers=0)


def test_a_study_without_num_players_is_refused_by_name():
    class Study:
        games, n_players = 4, 2
    with pytest.raises(TypeError, match="num_players; Study has none"):
        scale.num_players(Study())


def _wait(cond, what, seconds=120):
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > seconds:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(1)


@pytest.mark.slow
def test_two_ray_nodes_on_this_machine_share_the_games(tmp_path):
    """A head node on 127.0.0.2 and a worker node on 127.0.0.3 (``ray start --block``,
    loopback only, so without token authentication; stopped by their process ids in the
    end); the study's tasks run on both. (Ray rewrites 127.0.0.1 as a bootstrap address to
    the machine's interface address, hence the other loopback addresses.)"""
    if ray.is_initialized():
        ray.shutdown()
    exe = str(Path(sys.executable).with_name("ray"))
    addr = "127.0.0.2:6391"
    env = dict(os.environ, PYTHONPATH=str(ROOT), RAY_AUTH_MODE="disabled")
    common = ["--block", "--num-cpus=1", "--disable-usage-stats"]
    procs = []
    try:
        procs.append(subprocess.Popen([exe, "start", "--head", "--port=6391",
                                       "--include-dashboard=false",
                                       "--node-ip-address=127.0.0.2", *common], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait(lambda: subprocess.run([exe, "health-check", "--address", addr],
                                     capture_output=True).returncode == 0, "the head node")
        procs.append(subprocess.Popen([exe, "start", f"--address={addr}",
                                       "--node-ip-address=127.0.0.3", *common], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        ray.init(address=addr, log_to_driver=False, _node_ip_address="127.0.0.2")
        _wait(lambda: ray.cluster_resources().get("CPU", 0) == 2, "the second node")
        spec = T.TournamentSpec(players=("random", "random"), games=40, seed=3)
        summary = scale.run_study(spec, str(tmp_path / "two.csv"), backend="ray", chunk=1)
        assert summary["cluster_cpus"] == 2
        assert len(summary["nodes"]) == 2, summary
        assert same(scale.read_rows(str(tmp_path / "two.csv"))) == same(T.run(spec))
    finally:
        ray.shutdown()
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        _forget_cluster(addr)


def _forget_cluster(addr: str) -> None:
    """``ray start --head`` names its cluster in Ray's temporary folder (``RAY_TMPDIR``, else
    the system's) for a later ``ray.init()`` without an address; a head stopped by its process
    id leaves that file, and every such ``ray.init()`` on the machine then waits minutes for
    the dead head. Remove it when it names this test's head (another cluster is left alone)."""
    path = Path(os.environ.get("RAY_TMPDIR") or tempfile.gettempdir()) / "ray" / \
        "ray_current_cluster"
    if path.exists() and path.read_text().strip() == addr:
        path.unlink()


def test_cli_backend_ray_resume_and_parquet(ray_local, tmp_path, capsys):
    """`caledonia play/balance --backend ray --resume --out x.parquet` (docs/scale.md)."""
    out = tmp_path / "p.csv"
    assert main(["play", "--players", "greedy,random", "--games", "6", "--backend", "ray",
                 "--out", str(out), "-q"]) == 0
    assert main(["play", "--players", "greedy,random", "--games", "9", "--resume",
                 "--out", str(out), "-q"]) == 0
    assert "6 games already in" in capsys.readouterr().out
    assert len(scale.read_rows(str(out))) == 18
    pq = tmp_path / "b.parquet"
    assert main(["balance", "--agent", "random", "--players", "2", "--games", "8",
                 "--out", str(pq), "--plot", str(tmp_path / "b.png"), "-q"]) == 0
    assert len(scale.read_rows(str(pq))) == 16
    assert main(["play", "--players", "greedy,random", "--games", "2",
                 "--address", "auto"]) == 2
    assert "--address needs --backend ray" in capsys.readouterr().err
    assert main(["play", "--players", "greedy,random", "--games", "2", "--resume"]) == 2
    assert "need --out" in capsys.readouterr().err


# ---------------------------------------------------------- caledonia evaluate
EVAL = ["evaluate", "pretrained", "--vs", "greedy", "--games", "6", "-q"]


@pytest.fixture(scope="module")
def eval_local(tmp_path_factory):
    """`caledonia evaluate pretrained --vs greedy --games 6` in one process: its --out CSV
    and its printed win-rate line."""
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("eval") / "local.csv"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(EVAL + ["--league-file", "", "--out", str(out)]) == 0
    return out.read_text(), _win_line(buf.getvalue())


def _win_line(text: str) -> str:
    line = next(x for x in text.splitlines() if " vs greedy: win rate " in x)
    return line.split("; ")[0] + "; " + line.split("; ")[1]    # without the wall time


def test_evaluate_on_ray_gives_the_local_rows(ray_local, eval_local, tmp_path, capsys):
    """Six games on the module's Ray (2 CPUs: one game per task) give the rows and the
    summary of the one-process run; Parquet too."""
    local_csv, local_line = eval_local
    out = tmp_path / "ray.csv"
    assert main(EVAL + ["--league-file", "", "--backend", "ray", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert untimed(out.read_text()) == untimed(local_csv)
    assert _win_line(printed) == local_line
    assert "6 games in" in printed and "backend ray" in printed
    pytest.importorskip("pyarrow")
    pq = tmp_path / "ray.parquet"
    assert main(EVAL + ["--league-file", "", "--backend", "ray", "--out", str(pq)]) == 0
    ref = list(csv.DictReader(io.StringIO(local_csv)))
    assert same(scale.read_rows(str(pq))) == same(scale.typed_row(r) for r in ref)


def test_evaluate_resume_plays_only_the_missing_games(ray_local, eval_local, tmp_path, capsys):
    """A file cut after three games (and half a line): --resume plays the other three, the
    league file gets only those, and the file ends as the one-process run's."""
    local_csv, _ = eval_local
    lines = local_csv.splitlines(keepends=True)
    out = tmp_path / "part.csv"
    out.write_text("".join(lines[:1 + 3 * 2]) + lines[7][:30])
    league = tmp_path / "league.csv"
    assert main(EVAL + ["--league-file", str(league), "--backend", "ray", "--resume",
                        "--out", str(out)]) == 0
    assert "--resume: 3 games already in" in capsys.readouterr().out
    assert untimed(out.read_text()) == untimed(local_csv)
    assert sorted({r["game"] for r in csv.DictReader(open(league))}) == ["3", "4", "5"]
    # another opponent is another study: refused, the file kept
    assert main(["evaluate", "pretrained", "--vs", "random", "--games", "6", "-q",
                 "--league-file", "", "--resume", "--out", str(out)]) == 2
    assert "another study" in capsys.readouterr().err
    assert untimed(out.read_text()) == untimed(local_csv)


def test_evaluate_scale_out_options_fail_clearly(tmp_path, capsys):
    pytest.importorskip("torch")
    for extra, needle in ((["--league", "--backend", "ray"], "--league plays in this process"),
                          (["--league", "--workers", "2"], "--league plays in this process"),
                          (["--resume"], "--resume needs --out"),
                          (["--address", "auto"], "--address needs --backend ray"),
                          (["--workers", "0"], "--workers must be >= 1")):
        assert main(EVAL + ["--league-file", ""] + extra) == 2, extra
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, (extra, err)


@pytest.mark.slow
def test_evaluate_on_local_processes_gives_the_local_rows(eval_local, tmp_path):
    """--workers 2 without Ray: a forkserver process pool (torch is loaded in the parent),
    each worker loading the checkpoint once."""
    pytest.importorskip("pyarrow")
    out = tmp_path / "pool.parquet"
    assert main(EVAL + ["--league-file", "", "--workers", "2", "--out", str(out)]) == 0
    ref = list(csv.DictReader(io.StringIO(eval_local[0])))
    assert same(scale.read_rows(str(out))) == same(scale.typed_row(r) for r in ref)
