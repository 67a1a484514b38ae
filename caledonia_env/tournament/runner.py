"""Every game of a tournament in this process or a process pool, with a progress bar.

Results do not depend on the number of worker processes or on the order in which games
finish: game ``g`` depends only on ``(spec.seed, g)``.
"""
from __future__ import annotations

import multiprocessing as mp
import sys
from collections.abc import Callable

from tqdm import tqdm

from caledonia_env.tournament.games import play_game
from caledonia_env.tournament.spec import TournamentSpec, validate


def progress_bar(total: int, label: str = "games", quiet: bool = False, unit: str = "game",
                 start: int = 0, scale: bool = False):
    """The project's progress bar (tqdm) on stderr, counting ``unit``s from ``start`` to
    ``total`` (games here; training steps, expert batches), in thousands and millions with
    ``scale``; silent with ``quiet`` or when stderr is not a terminal."""
    return tqdm(total=total, initial=start, desc=label, unit=unit, unit_scale=scale,
                file=sys.stderr, disable=True if quiet else None, dynamic_ncols=True,
                mininterval=0.5)


def pool_context():
    """The multiprocessing context for game workers: ``fork`` (fast, numba already loaded),
    except once torch is loaded (a ``ppo:`` agent): torch's thread pool does not survive a
    fork, so the workers then start from a fresh ``forkserver`` (or ``spawn``)."""
    methods = mp.get_all_start_methods()
    if "torch" not in sys.modules and "fork" in methods:
        return mp.get_context("fork")
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


def map_jobs(fn, jobs: list, workers: int = 1, chunksize: int = 1):
    """``fn`` of each job, in completion order: in this process (``workers`` <= 1) or in a
    pool of ``workers`` processes (:func:`pool_context`), terminated when the caller stops
    reading (an error, Ctrl+C) or when every job is done."""
    if workers <= 1:
        yield from map(fn, jobs)
        return
    pool = pool_context().Pool(workers)
    try:
        yield from pool.imap_unordered(fn, jobs, chunksize=chunksize)
    finally:
        pool.terminate()
        pool.join()


def _worker(args):
    spec, g = args
    return play_game(spec, g)


def run(spec: TournamentSpec, workers: int = 1,
        progress: Callable[[int], None] | None = None) -> list[dict]:
    """Play every game of ``spec``; return the CSV rows sorted by (game, player), kept in
    memory (``caledonia_env.scale.run_study`` streams them to a file, with game records)."""
    validate(spec)
    results = []
    jobs = [(spec, g) for g in range(spec.games)]
    chunk = max(1, min(16, spec.games // (max(workers, 1) * 8)))
    for res in map_jobs(_worker, jobs, workers, chunk):
        results.extend(res["rows"])
        if progress:
            progress(1)
    results.sort(key=lambda r: (r["game"], r["player"]))
    return results
