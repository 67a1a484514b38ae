"""Large game studies on Ray (or local processes), streamed to a resumable CSV / Parquet file.

``run_study(study, out, backend="ray", address=None)`` plays every game of a study: a
:class:`~caledonia_env.tournament.TournamentSpec` (each game is ``tournament.play_game``;
game ``g`` depends only on ``(spec.seed, g)``) or any object with the study interface
below, so the rows are the same whatever the backend or the number of workers. Games go
out in chunks (Ray tasks, or a process pool for ``backend="local"``); each finished chunk
is appended to ``out`` at once, so an interrupted study restarts with ``resume=True`` and
plays only the missing games.

A study (picklable: it travels to the workers) has
- ``games`` (games ``0 .. games-1``) and ``num_players`` (rows per game);
- ``validate()``: ValueError for a bad study, before anything runs;
- ``play(games) -> rows``: the tournament CSV rows (``tournament.CSV_FIELDS``) of those
  games, ``game`` being the game's number; it must depend only on the numbers;
- ``warm_key`` and ``warm_up()``: run once per worker process and ``warm_key`` before the
  first chunk (numba compilation or cache load, loading models), timed as the warm-up;
- ``mismatch(rows) -> str | None``: what differs between one game's rows found in ``out``
  and what this study plays in that game (None: they match), so that ``resume`` refuses
  the file of another study with a message naming the difference; a study without it
  gives ``belongs(row) -> bool`` for the game's first row instead;
- for game records (``record_dir``, local backend): ``play_records(games) -> (rows,
  {game: record JSON})`` and ``record_mismatch(game, record dict) -> str | None``, the
  check of a resumed record folder (:class:`~caledonia_env.study_file.RecordFolder`).
:class:`TournamentStudy` is the one for tournaments; ``caledonia_env.train.batched_play.EvalStudy``
(``caledonia evaluate``) another.

``out`` is never touched before the first chunk is in (a backend that does not start
leaves it as it was), is never a symbolic link, device, FIFO or write-protected file
(``atomic.refuse_replacing``), and with ``resume`` must hold this study's games
(:func:`check_resume`). ``record_dir`` (local backend only) receives each game's record
as ``game_000042.json`` as its game finishes, before its rows go to ``out``; with
``resume`` a game whose rows are in ``out`` but whose record is missing is played again.

- ``*.csv``: rows are appended as chunks arrive; at the end the file is rewritten sorted
  by (game, player), identical to ``tournament.write_csv`` of ``tournament.run``.
- ``*.parquet``: each chunk is an atomic part file under ``<out>.parts/``; at the end the
  parts are merged into ``out`` (sorted) and the folder removed. Needs ``pyarrow``.

``address=None`` starts a local Ray for the run (``num_cpus`` workers) and stops it after;
otherwise Ray connects to that cluster (``"auto"``, ``"ray://host:10001"`` or
``"host:6379"``), whose nodes must have ``caledonia_env`` installed; a cluster that does
not answer within ``connect_timeout`` seconds is given up (:mod:`caledonia_env.ray_connect`).
The study file (reading, resume checks, streaming writes) is :mod:`caledonia_env.study_file`.
See ``docs/scale.md``.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

from caledonia_env import ray_connect
from caledonia_env import tournament as T
from caledonia_env.game import Game
from caledonia_env.ray_connect import CONNECT_TIMEOUT
from caledonia_env.study_file import (FORMATS, IncompleteStudy, MemorySink, RecordFolder,
                                     StudySink, check_complete, check_resume, complete_games,
                                     interrupt_note, num_players, read_rows, record_name,
                                     typed_row)

__all__ = ["BACKENDS", "FORMATS", "IncompleteStudy", "RecordFolder", "TournamentStudy",
           "add_backend_options", "as_study", "check_complete", "check_resume",
           "complete_games", "interrupt_note", "num_players", "play_chunk", "read_rows",
           "record_name", "run_study", "typed_row"]

BACKENDS = ("local", "ray")


# ------------------------------------------------------------------- studies
class TournamentStudy:
    """A :class:`~caledonia_env.tournament.TournamentSpec` as a study: game ``g`` is
    ``tournament.play_game(spec, g)``, set up from ``(spec.seed, g)``."""

    def __init__(self, spec: T.TournamentSpec):
        self.spec = spec
        self.games = spec.games
        self.num_players = len(spec.players)
        self.warm_key = ("tournament", tuple(spec.players), repr(sorted(spec.agent_kw.items())))
        self._rules: dict = {}

    def validate(self) -> None:
        T.validate(self.spec)

    def mismatch(self, rows: list[dict]) -> str | None:
        """None if ``rows`` (one game's rows from a file, by player) are what this study
        plays in that game, else the first difference, named: the seed (game seed), an
        agent, a fixed map, a fixed or scheduled clan, a seat under a fixed first player,
        or a rules column (clan mode, variants, ruleset and its fingerprint)."""
        g = rows[0]["game"]
        seed = T.game_seeds(self.spec.seed, g, self.num_players)[0]
        if rows[0]["game_seed"] != seed:
            return (f"game {g} has game seed {rows[0]['game_seed']}, this study's is {seed} "
                    f"(another --seed, or another design)")
        config = self.spec.game_config(seed, g)
        want = dict(self._rule_fields(config))
        if config.map is not None:
            want["map"] = ",".join(config.map)
        first = config.first_player
        for r in rows:
            p = r["player"]
            want["agent"] = self.spec.players[p]
            if config.clan_mode == "fixed":
                want["clan"] = config.clans[p] or "-"
            if first is not None:
                want["seat"] = (p - first) % self.num_players
            for k, v in want.items():
                if r[k] != v:
                    return f"game {g}, player {p}: {k} is {r[k]!r}, this study's is {v!r}"
        return None

    def record_mismatch(self, g: int, record: dict) -> str | None:
        """None if ``record`` (a game record read from a record folder) is game ``g`` of
        this study, finished, else the first difference, named: a config field (its seed,
        map, clans, rules), the agents, or the ruleset fingerprint."""
        seed = T.game_seeds(self.spec.seed, g, self.num_players)[0]
        config = self.spec.game_config(seed, g)
        theirs = record.get("config") if isinstance(record.get("config"), dict) else {}
        for k, v in json.loads(json.dumps(config.to_dict())).items():
            if theirs.get(k) != v:
                return (f"{record_name(g)} has {k} {theirs.get(k)!r}, this study's game {g} "
                        f"has {v!r}")
        want = {"agents": list(self.spec.players),
                "ruleset_fingerprint": self._rule_fields(config)["ruleset_fingerprint"]}
        for k, v in want.items():
            if record.get(k) != v:
                return f"{record_name(g)} has {k} {record.get(k)!r}, this study's is {v!r}"
        if record.get("scores") is None:
            return f"{record_name(g)} is not a finished game"
        return None

    def _rule_fields(self, config) -> dict:
        """The rules columns of a game with this config (cached per clan mode)."""
        if config.clan_mode not in self._rules:
            self._rules[config.clan_mode] = T.rule_fields(config)
        return self._rules[config.clan_mode]

    def warm_up(self) -> None:
        """Compile (or load) the engine and each agent's kernels: one move per agent (the
        Automa's seats are played by the engine)."""
        game = Game(self.spec.game_config(0, 0))
        for i, name in enumerate(self.spec.players):
            if not game.is_automa(i):
                T.warm_agent(name, i, self.spec.agent_kw, game)

    def play(self, games: list[int]) -> list[dict]:
        rows = []
        for g in games:
            rows.extend(T.play_game(self.spec, g)["rows"])
        return rows

    def play_records(self, games: list[int]) -> tuple[list[dict], dict[int, str]]:
        """The rows of ``games`` and each game's record (``Game.to_json``) by game."""
        rows, records = [], {}
        for g in games:
            res = T.play_game(self.spec, g, record=True)
            rows.extend(res["rows"])
            records[g] = res["record"]
        return rows, records


def as_study(study):
    """``study`` itself, or a TournamentSpec wrapped as a :class:`TournamentStudy`."""
    return TournamentStudy(study) if isinstance(study, T.TournamentSpec) else study


# ------------------------------------------------------------------- workers
_WARM: dict = {}


def play_chunk(study, games: list[int], record: bool = False) -> dict:
    """Play ``games`` of ``study`` in this process, with each game's record in
    ``records`` if ``record`` (``study.play_records``). The first chunk of a study kind
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
    games = list(games)
    rows, records = study.play_records(games) if record else (study.play(games), None)
    return {"games": games, "rows": rows, "records": records, "warmup_s": warm,
            "pid": os.getpid(), "node": _node_id()}


def _node_id() -> str:
    try:
        import ray                    # inside: ray is an optional extra
        if ray.is_initialized():
            return ray.get_runtime_context().get_node_id()
    except ImportError:
        pass
    return "local"


def _play_chunk_args(args):
    return play_chunk(*args)


# ----------------------------------------------------------------------- CLI
def add_backend_options(p, title: str = "scale-out") -> None:
    """--backend, --address, --connect-timeout, --resume of the commands that play studies
    (docs/scale.md)."""
    g = p.add_argument_group(f"{title} (docs/scale.md; --backend ray needs the ray extra)")
    g.add_argument("--backend", choices=BACKENDS, default="local",
                   help="local processes (default) or Ray tasks: a local Ray started for the "
                        "run, or the cluster of --address")
    g.add_argument("--address", default=None,
                   help="Ray cluster for --backend ray, e.g. 'auto', 'host:6379' or "
                        "'ray://host:10001'")
    g.add_argument("--connect-timeout", type=float, default=CONNECT_TIMEOUT, metavar="SECONDS",
                   help=f"give up on a Ray cluster (--address) that does not answer within "
                        f"this time (default {CONNECT_TIMEOUT:g})")
    g.add_argument("--resume", action="store_true",
                   help="keep the complete games already in --out and play only the rest; "
                        "the file must hold this same study (players, seed, rules, design), "
                        "else it is refused")


# -------------------------------------------------------------------- runner
def _chunks(games: list[int], size: int) -> list[list[int]]:
    return [games[i:i + size] for i in range(0, len(games), size)]


def run_study(study, out: str | None, backend: str = "ray", workers: int | None = None,
              address: str | None = None, resume: bool = False, chunk: int | None = None,
              progress: Callable[[int], None] | None = None,
              on_rows: Callable[[list[dict]], None] | None = None,
              connect_timeout: float = CONNECT_TIMEOUT, record_dir: str | None = None) -> dict:
    """Play every game of ``study`` (a TournamentSpec or a study object, see the module's
    docstring) not already in ``out`` (with ``resume``) and stream the rows into ``out``;
    ``out=None`` keeps them in memory and returns them as ``summary["rows"]`` (sorted).
    ``workers``: local processes, or the CPUs of the local Ray started when ``address`` is
    None (default: all cores). ``chunk``: games per task (default: about eight tasks per
    worker, at most 64 games; one game with ``record_dir``). ``progress(n)`` and
    ``on_rows(rows)`` are called with each finished chunk (after it is written).
    ``connect_timeout``: seconds to wait for the Ray cluster at ``address``
    (``ray_connect.ClusterUnreachable`` after). ``record_dir`` (local backend only): each
    game's record written there as its game finishes (:class:`RecordFolder`; with
    ``resume`` its records must be this study's, and a game of ``out`` without its record
    is played again: ``summary["replayed"]``). Returns a summary: games played / skipped,
    seconds, and per worker process its node and warm-up time.

    ``out`` is checked first (ValueError): it must be absent or a writable regular file
    (see ``atomic.refuse_replacing``), and with ``resume`` it must hold games of this very
    study (:func:`check_resume`). It is not touched until the first chunk is in. An
    interruption (KeyboardInterrupt) leaves the finished chunks in ``out`` for ``resume``
    and says so on the exception: ``e.study_output = (out, complete games in out)``, the
    count being None when ``out`` was not touched; with ``record_dir`` also
    ``e.study_records = (record_dir, records written this run)``.

    ``out`` is locked for the run (``tournament.lock_output``: OutputBusy, a ValueError, at
    once when another process writes it), and at the end it must hold every game of the
    study exactly once (``IncompleteStudy`` naming the missing games, else); ``summary
    ["cut_row"]``: a resumed CSV ended inside a row, dropped and its game played again.
    With ``record_dir`` every game must also have its record file at the end
    (``IncompleteStudy`` naming those without)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer or None, got {workers!r}")
    if chunk is not None and (not isinstance(chunk, int) or chunk < 1):
        raise ValueError(f"chunk must be a positive integer or None, got {chunk!r}")
    if address is not None and backend != "ray":
        raise ValueError("address is only for backend='ray'")
    if not connect_timeout > 0:
        raise ValueError(f"connect_timeout must be > 0 seconds, got {connect_timeout!r}")
    if resume and out is None:
        raise ValueError("resume needs an out file to resume from")
    if record_dir is not None and backend != "local":
        raise ValueError("record_dir is for backend='local' (Ray tasks send back no game "
                         "records)")
    study = as_study(study)
    study.validate()
    if out is None:
        records = RecordFolder(record_dir, study, False) if record_dir is not None else None
        return _run_study(study, None, MemorySink(), records, backend, workers, address,
                          chunk, progress, on_rows, connect_timeout)
    with T.lock_output(out, "out"):
        sink = StudySink(out, study, resume)
        records = RecordFolder(record_dir, study, resume) if record_dir is not None else None
        return _run_study(study, out, sink, records, backend, workers, address, chunk,
                          progress, on_rows, connect_timeout)


def _run_study(study, out, sink, records, backend, workers, address, chunk, progress,
               on_rows, connect_timeout) -> dict:
    """:func:`run_study` once ``out`` is locked and its sink (and record folder) made; the
    file (and folder) checked whole at the end (``IncompleteStudy``)."""
    replay = set() if records is None else sink.done - records.present
    if replay:
        sink.forget(replay)
    todo = [g for g in range(study.games) if g not in sink.done]
    t0 = time.perf_counter()
    finished = False
    summary = {"games": len(todo), "skipped": len(sink.done), "replayed": len(replay),
               "backend": backend, "workers": {}}
    try:
        if not todo:
            results = iter(())
        elif backend == "ray":
            results = _ray_results(study, todo, workers, address, chunk, summary,
                                   connect_timeout)
        else:
            record = records is not None
            results = _local_results(study, todo, workers, (chunk or 1) if record else chunk,
                                     record)
        for res in results:
            if records is not None:             # first the records: a row has its record
                records.add(res["records"])
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
    except KeyboardInterrupt as e:
        sink.close(False)                       # first: the count is of the file as left
        if out is not None:
            e.study_output = (out, sink.games_written())
        if records is not None:
            e.study_records = (records.folder, records.written)
        raise
    finally:
        sink.close(finished)
    if out is not None:
        rows = sink.rows if sink.rows is not None else read_rows(out)
        check_complete(rows, study.games, sink.num_players, out)
        summary["cut_row"] = sink.cut
    if records is not None:
        records.check_complete(study.games)
    summary["seconds"] = time.perf_counter() - t0
    summary["workers"] = list(summary["workers"].values())
    summary["nodes"] = sorted({w["node"] for w in summary["workers"]})
    if out is None:
        summary["rows"] = sink.rows
    return summary


def _chunk_size(n_games: int, n_workers: int, chunk: int | None) -> int:
    return chunk or max(1, min(64, n_games // max(1, n_workers * 8)))


def _local_results(study, todo, workers, chunk, record=False):
    workers = workers or os.cpu_count() or 1
    jobs = [(study, c, record) for c in _chunks(todo, _chunk_size(len(todo), workers, chunk))]
    if workers == 1:
        yield from map(_play_chunk_args, jobs)
        return
    ctx = T.pool_context()
    with ctx.Pool(workers) as pool:
        yield from pool.imap_unordered(_play_chunk_args, jobs)


def _ray_results(study, todo, workers, address, chunk, summary, connect_timeout):
    ray = ray_connect.import_ray()
    started = ray_connect.connect(ray, address, workers, connect_timeout)
    try:
        n_cpus = int(ray.cluster_resources().get("CPU", 1))
        summary["cluster_cpus"] = n_cpus
        task = ray.remote(num_cpus=1, max_retries=2)(play_chunk)
        study_ref = ray.put(study)
        pending = [task.remote(study_ref, c)
                   for c in _chunks(todo, _chunk_size(len(todo), n_cpus, chunk))]
        while pending:
            # a short timeout: Python signal handlers (Ctrl-C, SIGTERM) run between waits
            ready, pending = ray.wait(pending, num_returns=1, timeout=0.5)
            if ready:
                yield ray.get(ready[0])
    finally:
        if started:
            ray_connect.disconnect(ray)
