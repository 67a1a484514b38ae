"""Environment speed: PettingZoo AEC, vector env (N = 1, 64, 1024) and the raw engine, one run.

Every figure plays random legal actions from fresh random setups (random maps).

* engine: ``caledonia_env.engine.playout.random_games`` on one thread (mask every
  step, no observation) — the reference for the ratios.
* AEC: ``caledonia_env.env(num_players=P)`` (the wrapped env) driven by the usual
  ``agent_iter`` / ``last`` / ``step`` loop; one step = one decision of any agent
  (observation + mask built by ``last()``, random legal pick in Python: the harness
  ``aec_loop`` of ``compare_peers.py``, the same for both scripts).
* vector: ``CaledoniaVectorEnv(N)`` with its built-in numba random opponents;
  each ``step`` applies one learner action per game, lets the opponents play,
  auto-resets, and writes N observations + masks. ``vector_steps_per_s`` counts
  learner transitions (N per call, what an RL trainer consumes);
  ``vector_game_steps_per_s`` counts every applied action (learner + opponents).
  The learner's actions come from ``env.sample_actions()`` (numba), timed too.

    python benchmarks/env_speed.py                 # table, 4 players
    python benchmarks/env_speed.py --players 2     # another player count
    python benchmarks/env_speed.py --json          # one JSON object
    python benchmarks/env_speed.py --scaling 5 --sizes 256,1024   # thread scaling

``--scaling PAIRS`` measures instead how the vector env scales over the cores: for
each N, PAIRS alternated measurements of the same env with 1 numba thread and with
all of them (prange both times), and, as the machine's own ceiling, the same N games
split over that many processes with serial envs started together (no shared memory).
It prints the ratios to the 1-thread rate: median and range over the pairs.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def engine_speed(players: int, seconds: float, seed: int) -> dict:
    from caledonia_env import Game
    from caledonia_env.engine.automa.deck import automa_switch
    from caledonia_env.engine.layout import STATE_SIZE
    from caledonia_env.engine.playout import random_games
    T = Game(num_players=players, seed=seed).tables
    automa = automa_switch(T)
    finals = np.zeros((1, STATE_SIZE), np.int32)
    random_games(T, 2, seed + 10_000, finals, automa)          # warm-up (compile or cache load)
    steps = games = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        k = random_games(T, 50, seed + games, finals, automa)
        if k < 0:
            raise RuntimeError("a random game reached a state with no legal action")
        steps += k
        games += 50
    dt = time.perf_counter() - t0
    return {"steps_per_s": steps / dt, "games_per_s": games / dt, "steps_per_game": steps / games}


def aec_speed(players: int, seconds: float, seed: int) -> dict:
    import caledonia_env
    from caledonia_env import GameConfig
    from caledonia_env.envs.vector import _map_options
    from caledonia_env.game import static_tables
    from compare_peers import aec_loop                  # one AEC harness for both scripts
    cfg = GameConfig(num_players=players)
    for sides in _map_options(None):                   # build the 16 maps' tables up front
        static_tables(cfg, sides)
    play = aec_loop(caledonia_env.env(num_players=players), seed)
    play()                                              # warm-up
    steps = games = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        k, g = play()
        steps += k
        games += g
    dt = time.perf_counter() - t0
    return {"steps_per_s": steps / dt, "games": games}


def vector_speed(players: int, n_envs: int, seconds: float, seed: int,
                 parallel: bool | None = None) -> dict:
    from caledonia_env.envs.vector import CaledoniaVectorEnv
    env = CaledoniaVectorEnv(n_envs, num_players=players, seed=seed, parallel=parallel)
    env.reset()
    for _ in range(max(3, 2000 // n_envs)):             # warm-up (compile or cache load)
        env.step(env.sample_actions())
    calls = 0
    moves0 = int(env.moves.sum())
    t0 = time.perf_counter()
    while True:
        for _ in range(max(1, 256 // n_envs)):
            env.step(env.sample_actions())
            calls += 1
        dt = time.perf_counter() - t0
        if dt >= seconds:
            break
    moves = int(env.moves.sum()) - moves0
    return {"steps_per_s": calls * n_envs / dt, "game_steps_per_s": moves / dt,
            "parallel": env.parallel}


def _proc_worker(players, n_envs, seconds, seed, barrier, results):
    import numba
    numba.set_num_threads(1)
    from caledonia_env.envs.vector import CaledoniaVectorEnv
    env = CaledoniaVectorEnv(n_envs, num_players=players, seed=seed, parallel=False)
    env.reset()
    for _ in range(max(3, 2000 // n_envs)):
        env.step(env.sample_actions())
    barrier.wait()
    t0, calls = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        env.step(env.sample_actions())
        calls += 1
    results.put(calls * n_envs / (time.perf_counter() - t0))


def processes_speed(players: int, n_envs: int, procs: int, seconds: float, seed: int) -> float:
    """Learner steps/s of ``procs`` processes, each a serial env of n_envs / procs games."""
    import multiprocessing as mp
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(procs), ctx.Queue()
    workers = [ctx.Process(target=_proc_worker, args=(players, n_envs // procs, seconds,
                                                      seed + k, barrier, results))
               for k in range(procs)]
    for w in workers:
        w.start()
    total = sum(results.get(timeout=600) for _ in workers)
    for w in workers:
        w.join()
    return total


def _spread(ratios) -> list:
    """[median, min, max] of the ratios, rounded to 0.01."""
    return [round(statistics.median(ratios), 2), round(min(ratios), 2), round(max(ratios), 2)]


def scaling(players: int, sizes, seconds: float, seed: int, pairs: int) -> dict:
    """Ratios to the 1-thread rate of all numba threads and of as many processes."""
    import numba
    threads = numba.config.NUMBA_NUM_THREADS
    out = {"threads": threads, "pairs": pairs, "sizes": {}}
    for n in sizes:
        one, many, procs = [], [], []
        for _ in range(pairs):
            numba.set_num_threads(1)
            one.append(vector_speed(players, n, seconds, seed, parallel=True)["steps_per_s"])
            numba.set_num_threads(threads)
            many.append(vector_speed(players, n, seconds, seed, parallel=True)["steps_per_s"])
            procs.append(processes_speed(players, n, threads, seconds, seed))
        rt = [b / a for a, b in zip(one, many)]
        rp = [b / a for a, b in zip(one, procs)]
        out["sizes"][n] = {
            "one_thread": round(statistics.median(one)),
            "threads": round(statistics.median(many)),
            "processes": round(statistics.median(procs)),
            "thread_ratio": _spread(rt),
            "process_ratio": _spread(rp),
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4),
                        help="players per game (default 4)")
    parser.add_argument("--sizes", default="1,64,1024",
                        help="vector env sizes N, comma separated (default 1,64,1024)")
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="wall time of each measurement (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None,
                        help="numba threads for the vector env (default: numba's, = cores)")
    parser.add_argument("--scaling", type=int, default=0, metavar="PAIRS",
                        help="measure the vector env's thread scaling instead: PAIRS "
                             "alternated 1-thread / all-threads runs per size, and the "
                             "same games over as many processes (default 0: off)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--save", action="store_true",
                        help="also write this player count's row to benchmarks/results/"
                             "env_speed-DATE.json (the day's other rows are kept; "
                             "benchmarks/report.py renders it)")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    if not sizes or min(sizes) < 1:
        parser.error(f"--sizes takes positive ints, got {args.sizes!r}")
    if args.scaling < 0:
        parser.error("--scaling takes a number of pairs >= 1")
    if args.scaling:
        return print_scaling(args, sizes)
    if args.threads:
        import numba
        numba.set_num_threads(args.threads)
    import numba

    engine = engine_speed(args.players, args.seconds, args.seed)
    aec = aec_speed(args.players, args.seconds, args.seed)
    vec = {n: vector_speed(args.players, n, args.seconds, args.seed) for n in sizes}
    eng = engine["steps_per_s"]
    result = {
        "players": args.players,
        "cores": os.cpu_count(),
        "numba_threads": numba.get_num_threads(),
        "engine_steps_per_s": round(eng),
        "engine_steps_per_game": round(engine["steps_per_game"], 1),
        "aec_steps_per_s": round(aec["steps_per_s"]),
        "aec_ratio_to_engine": round(aec["steps_per_s"] / eng, 3),
        "vector_steps_per_s": {n: round(v["steps_per_s"]) for n, v in vec.items()},
        "vector_game_steps_per_s": {n: round(v["game_steps_per_s"]) for n, v in vec.items()},
        "vector_ratio_to_engine": {n: round(v["game_steps_per_s"] / eng, 2)
                                   for n, v in vec.items()},
        "vector_parallel": {n: v["parallel"] for n, v in vec.items()},
    }
    if args.save:
        save(result, sizes)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{args.players} players, {result['cores']} cores, numba threads "
          f"{result['numba_threads']}, random legal actions, random maps")
    print(f"engine (1 thread, mask only)   {eng:>12,.0f} steps/s "
          f"({result['engine_steps_per_game']} steps/game)")
    print(f"PettingZoo AEC (wrapped)       {aec['steps_per_s']:>12,.0f} steps/s "
          f"(x{result['aec_ratio_to_engine']} of the engine)")
    for n, v in vec.items():
        print(f"vector env N={n:<5} learner {v['steps_per_s']:>12,.0f} steps/s, all moves "
              f"{v['game_steps_per_s']:>12,.0f}/s (x{result['vector_ratio_to_engine'][n]} of "
              f"the engine){' prange' if v['parallel'] else ''}")
    return 0


def save(result: dict, sizes) -> None:
    """One row of the env_speed result file (benchmarks/results_io.py)."""
    from results_io import write_result
    col = lambda key, label: {"key": key, "label": label, "format": ",.0f"}
    columns = [{"key": "players", "label": "players", "format": "d"},
               col("engine", "engine, 1 thread"), col("aec", "PettingZoo AEC")]
    row = {"players": result["players"], "engine": result["engine_steps_per_s"],
           "aec": result["aec_steps_per_s"]}
    for n in sizes:
        columns += [col(f"v{n}_learner", f"vector N={n} learner"),
                    col(f"v{n}_all", f"N={n} all moves")]
        row[f"v{n}_learner"] = result["vector_steps_per_s"][n]
        row[f"v{n}_all"] = result["vector_game_steps_per_s"][n]
    write_result("env_speed", columns=columns, rows=[row], merge_key="players")


def print_scaling(args, sizes) -> int:
    import numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        print("one core (or NUMBA_NUM_THREADS=1): nothing to scale", file=sys.stderr)
        return 1
    if min(sizes) < numba.config.NUMBA_NUM_THREADS:
        print(f"--scaling needs sizes >= the {numba.config.NUMBA_NUM_THREADS} threads "
              f"(one env per process at least), got {min(sizes)}", file=sys.stderr)
        return 2
    result = scaling(args.players, sizes, args.seconds, args.seed, args.scaling)
    if args.json:
        print(json.dumps(result))
        return 0
    t = result["threads"]
    print(f"{args.players} players, {os.cpu_count()} cores, {t} numba threads; "
          f"{args.scaling} alternated pairs of {args.seconds:g} s; learner steps/s (medians); "
          f"ratio to 1 thread: median (min-max)")
    for n, r in result["sizes"].items():
        print(f"N={n:<5} 1 thread {r['one_thread']:>9,}  {t} threads {r['threads']:>9,} "
              f"x{r['thread_ratio'][0]} ({r['thread_ratio'][1]}-{r['thread_ratio'][2]})  "
              f"{t} processes of N/{t} {r['processes']:>9,} x{r['process_ratio'][0]} "
              f"({r['process_ratio'][1]}-{r['process_ratio'][2]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
