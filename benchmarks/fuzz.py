"""Fuzz the engine: N random legal games over every configuration, invariants after every step.

Game i of a run is ``caledonia_env.fuzz.case(SEED, i)`` (players, clans, variants,
interpretation switches, map, seeds). A failure is printed with its config, index and
step; ``--replay I`` re-plays game I through ``Game`` and prints the failing position.

    python benchmarks/fuzz.py --games 100000 --seed 0 --workers 2
    python benchmarks/fuzz.py --seed 0 --replay 4711
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHUNK = 2000
COLUMNS = [{"key": "games", "label": "games", "format": ",d"},       # of the result file
           {"key": "steps", "label": "steps", "format": ".1f", "unit": " M"},
           {"key": "failures", "label": "failures", "format": "d"},
           {"key": "games_per_s", "label": "games/s", "format": ",.0f"},
           {"key": "steps_per_s", "label": "steps/s (all checks)", "format": ",.0f"}]


def _chunk(args):
    from caledonia_env import fuzz
    seed, start, count = args
    return fuzz.run(seed, start, count)


def _progress(total):
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="game", file=sys.stderr)


def fuzz_games(games: int, seed: int, workers: int, start: int = 0):
    """Run games start.. in chunks (``workers`` processes); returns (games, steps, failures, s)."""
    jobs = [(seed, start + s, min(CHUNK, games - s)) for s in range(0, games, CHUNK)]
    bar = _progress(games)
    done = steps = 0
    failures = []
    t0 = time.perf_counter()
    if workers <= 1:
        results = (_chunk(j) for j in jobs)
    else:
        pool = ProcessPoolExecutor(workers)
        results = (f.result() for f in as_completed([pool.submit(_chunk, j) for j in jobs]))
    for n, st, fails in results:
        done += n
        steps += st
        failures += fails
        if bar is not None:
            bar.update(n)
        elif sys.stderr.isatty():
            print(f"\r{done}/{games} games", end="", file=sys.stderr)
    if bar is not None:
        bar.close()
    if workers > 1:
        pool.shutdown()
    return done, steps, sorted(failures), time.perf_counter() - t0


def replay(seed: int, index: int) -> int:
    from caledonia_env import fuzz
    c = fuzz.case(seed, index)
    game, code = fuzz.replay(seed, index)
    print(f"config: {c.config}\naction seed: {c.action_seed}\nsteps: {len(game.history)}")
    print(f"check: {fuzz.FAILURES[code]}\n")
    print(game.render_text())
    return 1 if code else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=10_000, help="games to play (default 10000)")
    ap.add_argument("--seed", type=int, default=0, help="run seed (default 0)")
    ap.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    ap.add_argument("--start", type=int, default=0, help="index of the first game (default 0)")
    ap.add_argument("--replay", type=int, metavar="I", help="re-play game I of this seed")
    ap.add_argument("--save", action="store_true",
                    help="also write the figures to benchmarks/results/fuzz-DATE.json "
                         "(benchmarks/report.py renders them)")
    a = ap.parse_args(argv)
    if a.games < 1 or a.workers < 1 or a.seed < 0 or a.start < 0:
        ap.error("--games and --workers must be >= 1, --seed and --start >= 0")
    if a.replay is not None:
        return replay(a.seed, a.replay)
    from caledonia_env import fuzz
    fuzz.run(a.seed, 0, 1)                       # compile / load the numba cache first
    n, steps, failures, dt = fuzz_games(a.games, a.seed, a.workers, a.start)
    print(f"{n} games ({a.start}..{a.start + n - 1}), {steps} steps in {dt:.1f} s: "
          f"{n / dt:.0f} games/s, {steps / dt:.0f} steps/s ({a.workers} worker(s), seed {a.seed})")
    for i, code, step in failures[:20]:
        print(f"FAIL game {i} at step {step}: {fuzz.FAILURES[code]} — {fuzz.case(a.seed, i).config}"
              f"\n     replay: python benchmarks/fuzz.py --seed {a.seed} --replay {i}")
    print("clean" if not failures else f"{len(failures)} failing game(s)")
    if a.save:
        from results_io import write_result
        write_result("fuzz", columns=COLUMNS, rows=[{
            "games": n, "steps": round(steps / 1e6, 1), "failures": len(failures),
            "games_per_s": round(n / dt), "steps_per_s": round(steps / dt)}])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
