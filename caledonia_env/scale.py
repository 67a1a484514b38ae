"""Large game studies on Ray (or local processes), streamed to a resumable CSV / Parquet file.

``run_study(study, out, backend="ray", address=None)`` plays every game of a study: a
:class:`~caledonia_env.tournament.TournamentSpec` (each game is ``tournament.play_game``;
game ``g`` depends only on ``(spec.seed, g)``) or any object with the study interface
below, so the rows are the same whatever the backend or the number of workers. Games go
out in chunks (Ray tasks, or a process pool for ``backend="local"``); each finished chunk
is appended to ``out`` at once, so an interrupted study restarts with ``resume=True`` and
plays only the missing games.

A study (picklable: it travels to the workers) has
- ``games`` (games ``0 .. games-1``) and ``n_players`` (rows per game);
- ``validate()``: ValueError for a bad study, before anything runs;
- ``play(games) -> rows``: the tournament CSV rows (``tournament.CSV_FIELDS``) of those
  games, ``game`` being the game's number; it must depend only on the numbers;
- ``warm_key`` and ``warm_up()``: run once per worker process and ``warm_key`` before the
  first chunk (numba compilation or cache load, loading models), timed as the warm-up;
- ``belongs(row)``: whether a row found in ``out`` (a game's player-0 row) is from this
  study, so that ``resume`` refuses the file of another study.
:class:`TournamentStudy` is the one for tournaments; ``caledonia_env.train.players.EvalStudy``
(``caledonia evaluate``) another.

- ``*.csv``: rows are appended as chunks arrive; at the end the file is rewritten sorted
  by (game, player), identical to ``tournament.write_csv`` of ``tournament.run``.
- ``*.parquet``: each chunk is an atomic part file under ``<out>.parts/``; at the end the
  parts are merged into ``out`` (sorted) and the folder removed. Needs ``pyarrow``.

``address=None`` starts a local Ray for the run (``num_cpus`` workers) and stops it after;
otherwise Ray connects to that cluster (``"auto"``, ``"ray://host:10001"`` or
``"host:6379"``), whose nodes must have ``caledonia_env`` installed. See ``docs/scale.md``.
"""
from __future__ import annotations

import csv
import os
import shutil
import time
from collections.abc import Callable

from . import tournament as T
from .atomic import atomic_path

BACKENDS = ("local", "ray")
FORMATS = (".csv", ".parquet")
INT_FIELDS = frozenset(("game", "game_seed", "player", "seat", "decisions", "money_left", "rank")
                       + T.SCORE_FIELDS)
FLOAT_FIELDS = frozenset(("win", "think_seconds"))


# ------------------------------------------------------------------- studies
class TournamentStudy:
    """A :class:`~caledonia_env.tournament.TournamentSpec` as a study: game ``g`` is
    ``tournament.play_game(spec, g)``, set up from ``(spec.seed, g)``."""

    def __init__(self, spec: T.TournamentSpec):
        self.spec = spec
        self.games = spec.games
        self.n_players = len(spec.players)
        self.warm_key = ("tournament", tuple(spec.players), repr(sorted(spec.agent_kw.items())))

    def validate(self) -> None:
        T.validate(self.spec)

    def belongs(self, row: dict) -> bool:
        return (row["game"] < self.games and row["game_seed"]
                == T.game_seeds(self.spec.seed, row["game"], self.n_players)[0])

    def warm_up(self) -> None:
        """Compile (or load) the engine and each agent's kernels: one move per agent."""
        from .game import Game
        game = Game(self.spec.config(0, 0))
        for i, name in enumerate(self.spec.players):
            T._agent(name, i, self.spec.agent_kw, game)

    def play(self, games: list[int]) -> list[dict]:
        rows = []
        for g in games:
            rows.extend(T.play_game(self.spec, g)["rows"])
        return rows


def as_study(study):
    """``study`` itself, or a TournamentSpec wrapped as a :class:`TournamentStudy`."""
    return TournamentStudy(study) if isinstance(study, T.TournamentSpec) else study


# ------------------------------------------------------------------- workers
_WARM: dict = {}


def play_chunk(study, games: list[int]) -> dict:
    """Play ``games`` of ``study`` in this process. The first chunk of a study kind
    (``study.warm_key``) in a process warms it up (``study.warm_up()``: numba compilation or
    cache load, each agent's first move, loading models) and reports how long that took in
    ``warmup_s`` (0 afterwards)."""
    study = as_study(study)
    warm = 0.0
    if study.warm_key not in _WARM:
        t0 = time.perf_counter()
        study.warm_up()
        warm = time.perf_counter() - t0
        _WARM[study.warm_key] = warm
    rows = study.play(list(games))
    return {"games": list(games), "rows": rows, "warmup_s": warm, "pid": os.getpid(),
            "node": _node_id()}


def _node_id() -> str:
    try:
        import ray
        if ray.is_initialized():
            return ray.get_runtime_context().get_node_id()
    except ImportError:
        pass
    return "local"


def _play_chunk_args(args):
    return play_chunk(*args)


# ----------------------------------------------------------------------- CLI
def add_backend_options(p, title: str = "scale-out") -> None:
    """--backend, --address, --resume of the commands that play studies (docs/scale.md)."""
    g = p.add_argument_group(f"{title} (docs/scale.md; --backend ray needs the ray extra)")
    g.add_argument("--backend", choices=BACKENDS, default="local",
                   help="local processes (default) or Ray tasks: a local Ray started for the "
                        "run, or the cluster of --address")
    g.add_argument("--address", default=None,
                   help="Ray cluster for --backend ray, e.g. 'auto' or 'host:6379'")
    g.add_argument("--resume", action="store_true",
                   help="keep the complete games already in --out and play only the rest")


# -------------------------------------------------------------------- output
def _format(out: str) -> str:
    ext = os.path.splitext(out)[1].lower()
    if ext not in FORMATS:
        raise ValueError(f"out must end with one of {FORMATS}, got {out!r}")
    return ext


def _typed(row: dict) -> dict:
    """A CSV row with the tournament's types (int / float / str)."""
    out = {}
    for k in T.CSV_FIELDS:
        v = row[k]
        out[k] = int(v) if k in INT_FIELDS else float(v) if k in FLOAT_FIELDS else v
    return out


def _parts_dir(out: str) -> str:
    return out + ".parts"


def read_rows(out: str) -> list[dict]:
    """Every row of a study file (CSV, Parquet, and a Parquet study's unmerged parts),
    typed as ``tournament.play_game`` returns them, sorted by (game, player)."""
    ext = _format(out)
    rows = []
    if ext == ".csv":
        if os.path.exists(out):
            with open(out, newline="") as f:
                for r in csv.DictReader(f):
                    try:
                        rows.append(_typed(r))
                    except (KeyError, TypeError, ValueError):
                        pass          # a line cut by an interruption
    else:
        import pyarrow.parquet as pq
        files = [out] if os.path.exists(out) else []
        parts = _parts_dir(out)
        if os.path.isdir(parts):
            files += [os.path.join(parts, f) for f in sorted(os.listdir(parts))
                      if f.endswith(".parquet")]
        for fn in files:
            rows.extend(pq.read_table(fn).to_pylist())
    rows.sort(key=lambda r: (r["game"], r["player"]))
    return rows


def complete_games(rows: list[dict], n_players: int) -> set[int]:
    """Games with all their player rows."""
    count: dict = {}
    for r in rows:
        count[r["game"]] = count.get(r["game"], 0) + 1
    return {g for g, c in count.items() if c == n_players}


def _table(rows: list[dict]):
    import pyarrow as pa
    return pa.Table.from_pylist([{k: r[k] for k in T.CSV_FIELDS} for r in rows])


def _write_parquet(rows: list[dict], path: str) -> None:
    """Write rows to ``path`` atomically (temporary file, then rename)."""
    import pyarrow.parquet as pq
    with atomic_path(path, ".parquet") as tmp:
        pq.write_table(_table(rows), tmp)


class _MemorySink:
    """Keeps the rows in memory (``run_study`` without ``out``)."""

    def __init__(self):
        self.rows: list[dict] = []
        self.done: set = set()

    def add(self, rows: list[dict]) -> None:
        self.rows.extend(rows)

    def close(self, finished: bool) -> None:
        self.rows.sort(key=lambda r: (r["game"], r["player"]))


class _Sink:
    """Appends finished chunks to the study file; ``close`` sorts / merges it."""

    def __init__(self, out: str, study, resume: bool):
        self.out, self.ext = out, _format(out)
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        n = study.n_players
        kept = read_rows(out) if resume else []
        firsts = {r["game"]: r for r in kept if r["player"] == 0}
        for r in list(firsts.values())[::max(1, len(firsts) // 100)]:     # a sample suffices
            if not study.belongs(r):
                raise ValueError(f"resume: {out} holds game {r['game']} of another study "
                                 f"(other seed, players or games); pass another out or resume=False")
        self.done = complete_games(kept, n)
        if self.ext == ".csv":
            T.write_csv([r for r in kept if r["game"] in self.done], out)         # drops a cut last line / incomplete games
            self.f = open(out, "a", newline="")
            self.w = csv.DictWriter(self.f, fieldnames=list(T.CSV_FIELDS), extrasaction="ignore")
        else:
            parts = _parts_dir(out)
            if not resume:
                shutil.rmtree(parts, ignore_errors=True)
            os.makedirs(parts, exist_ok=True)
            if os.path.exists(out):     # a finished study: its rows become a part
                if resume:
                    os.replace(out, os.path.join(parts, f"part-{time.time_ns()}-base.parquet"))
                else:
                    os.unlink(out)
        self.n_parts = 0

    def add(self, rows: list[dict]) -> None:
        if self.ext == ".csv":
            self.w.writerows(rows)
            self.f.flush()
            os.fsync(self.f.fileno())
        else:
            self.n_parts += 1
            _write_parquet(rows, os.path.join(_parts_dir(self.out),
                                              f"part-{time.time_ns()}-{self.n_parts:06d}.parquet"))

    def close(self, finished: bool) -> None:
        if self.ext == ".csv":
            self.f.close()
            if finished:
                T.write_csv(read_rows(self.out), self.out)
        elif finished:
            _write_parquet(read_rows(self.out), self.out)
            shutil.rmtree(_parts_dir(self.out), ignore_errors=True)


# -------------------------------------------------------------------- runner
def _chunks(games: list[int], size: int) -> list[list[int]]:
    return [games[i:i + size] for i in range(0, len(games), size)]


def run_study(study, out: str | None, backend: str = "ray", workers: int | None = None,
              address: str | None = None, resume: bool = False, chunk: int | None = None,
              progress: Callable[[int], None] | None = None,
              on_rows: Callable[[list[dict]], None] | None = None) -> dict:
    """Play every game of ``study`` (a TournamentSpec or a study object, see the module's
    docstring) not already in ``out`` (with ``resume``) and stream the rows into ``out``;
    ``out=None`` keeps them in memory and returns them as ``summary["rows"]`` (sorted).
    ``workers``: local processes, or the CPUs of the local Ray started when ``address`` is
    None (default: all cores). ``chunk``: games per task (default: about eight tasks per
    worker, at most 64 games). ``progress(n)`` and ``on_rows(rows)`` are called with each
    finished chunk (after it is written). Returns a summary: games played / skipped,
    seconds, and per worker process its node and warm-up time."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer or None, got {workers!r}")
    if chunk is not None and (not isinstance(chunk, int) or chunk < 1):
        raise ValueError(f"chunk must be a positive integer or None, got {chunk!r}")
    if address is not None and backend != "ray":
        raise ValueError("address is only for backend='ray'")
    if resume and out is None:
        raise ValueError("resume needs an out file to resume from")
    study = as_study(study)
    study.validate()
    sink = _MemorySink() if out is None else _Sink(out, study, resume)
    todo = [g for g in range(study.games) if g not in sink.done]
    t0 = time.perf_counter()
    finished = False
    summary = {"games": len(todo), "skipped": len(sink.done), "backend": backend, "workers": {}}
    try:
        if backend == "ray":
            results = _ray_results(study, todo, workers, address, chunk, summary)
        else:
            results = _local_results(study, todo, workers, chunk)
        for res in results:
            sink.add(res["rows"])
            if on_rows:
                on_rows(res["rows"])
            key = (res["node"], res["pid"])
            w = summary["workers"].setdefault(key, {"node": res["node"], "pid": res["pid"],
                                                    "warmup_s": 0.0, "games": 0})
            w["warmup_s"] = max(w["warmup_s"], res["warmup_s"])
            w["games"] += len(res["games"])
            if progress:
                progress(len(res["games"]))
        finished = True
    finally:
        sink.close(finished)
    summary["seconds"] = time.perf_counter() - t0
    summary["workers"] = list(summary["workers"].values())
    summary["nodes"] = sorted({w["node"] for w in summary["workers"]})
    if out is None:
        summary["rows"] = sink.rows
    return summary


def _chunk_size(n_games: int, n_workers: int, chunk: int | None) -> int:
    return chunk or max(1, min(64, n_games // max(1, n_workers * 8)))


def _local_results(study, todo, workers, chunk):
    workers = workers or os.cpu_count() or 1
    jobs = [(study, c) for c in _chunks(todo, _chunk_size(len(todo), workers, chunk))]
    if workers == 1:
        yield from map(_play_chunk_args, jobs)
        return
    ctx = T.pool_context()
    with ctx.Pool(workers) as pool:
        yield from pool.imap_unordered(_play_chunk_args, jobs)


def _ray_results(study, todo, workers, address, chunk, summary):
    try:
        import ray
    except ImportError:
        raise ImportError("backend='ray' needs Ray: pip install 'caledonia-env[ray]'") from None
    started = False
    if not ray.is_initialized():
        if address is None:
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            ray.init(address="local", num_cpus=workers, include_dashboard=False,
                     log_to_driver=False, _node_ip_address="127.0.0.1",
                     runtime_env={"env_vars": {"PYTHONPATH": root}})
        else:
            ray.init(address=address, log_to_driver=False)
        started = True
    try:
        n_cpus = int(ray.cluster_resources().get("CPU", 1))
        summary["cluster_cpus"] = n_cpus
        task = ray.remote(num_cpus=1, max_retries=2)(play_chunk)
        study_ref = ray.put(study)
        pending = [task.remote(study_ref, c)
                   for c in _chunks(todo, _chunk_size(len(todo), n_cpus, chunk))]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])
    finally:
        if started:
            ray.shutdown()
