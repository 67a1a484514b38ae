"""Engine speed: random legal games, mask computed every step (issue: engine bar).

Reports steps/s and games/s for 2/3/4 players on one thread (clans drafted, R-1.7, unless
``--clans none``), the ratio against
the very same code run with NUMBA_DISABLE_JIT=1 (measured in this run), the
cold compile time (fresh numba cache) and the warm start (import + first game
with the cache filled), and the state size.

    python benchmarks/engine_speed.py            # table
    python benchmarks/engine_speed.py --json     # one JSON object
    python benchmarks/engine_speed.py --tree /tmp/old --nojit-games 0 --no-startup
                                                 # another checkout, same harness (A/B)

The timed loops also report their CPU time (``cpu_steps_per_s``), which other jobs on a
shared machine disturb less than wall time.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _tables(players, seed=0, clans="draft"):
    from caledonia_env import Game, GameConfig
    return Game(GameConfig(num_players=players, seed=seed,
                           clans=None if clans == "none" else "draft",
                           clan_auction=clans == "auction")).tables


def automa_args(random_games) -> tuple:
    """``random_games``' trailing ``automa`` argument: ``None``, as the games timed here have
    no Automa seats (their code is then not compiled); empty for trees whose engine predates
    the argument, so that ``--tree`` compares any checkout."""
    params = inspect.signature(getattr(random_games, "py_func", random_games)).parameters
    return (None,) * (len(params) - 4)


def worker(players: int, games: int, seed: int, clans: str = "draft") -> dict:
    """Time ``games`` random games in this process (JIT or not, per the environment)."""
    import numpy as np

    from caledonia_env.engine.layout import STATE_SIZE
    from caledonia_env.engine.playout import random_games
    T = _tables(players, clans=clans)
    finals = np.zeros((1, STATE_SIZE), np.int32)
    extra = automa_args(random_games)
    random_games(T, 1, seed + 10_000, finals, *extra)      # warm-up (compile or cache load)
    t0, c0 = time.perf_counter(), time.thread_time()
    steps = random_games(T, games, seed, finals, *extra)
    dt, cpu = time.perf_counter() - t0, time.thread_time() - c0
    if steps < 0:
        raise RuntimeError("a random game reached a state with no legal action")
    return {"players": players, "games": games, "steps": int(steps), "seconds": dt,
            "cpu_seconds": cpu, "state_bytes": STATE_SIZE * 4}


def _run_child(args: list[str], env_extra: dict, root: str = ROOT) -> dict:
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def startup(cache_dir: str, root: str = ROOT) -> float:
    """Wall time of a fresh interpreter: import + build tables + one full random game, of
    the package in ``root`` (run from there: ``python -c`` puts the working directory
    before PYTHONPATH, so from another checkout it would time that checkout instead)."""
    code = ("import time;t=time.perf_counter();import numpy as np;"
            "from caledonia_env import Game, GameConfig;"
            "from caledonia_env.engine.playout import random_games;"
            "from caledonia_env.engine.layout import STATE_SIZE;"
            "T=Game(GameConfig(num_players=4)).tables;"
            "import inspect;"
            "f=getattr(random_games,'py_func',random_games);"
            "x=(None,)*(len(inspect.signature(f).parameters)-4);"       # automa: none here
            "random_games(T,1,1,np.zeros((1,STATE_SIZE),np.int32),*x);"
            "print(time.perf_counter()-t)")
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=root)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=2000, help="JIT games per player count")
    parser.add_argument("--nojit-games", type=int, default=3, help="NUMBA_DISABLE_JIT games")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--clans", choices=("draft", "auction", "none"), default="draft",
                        help="how clans are assigned in the timed games (default: draft)")
    parser.add_argument("--tree", default=ROOT,
                        help="checkout of the project to time (default: this one)")
    parser.add_argument("--no-startup", action="store_true",
                        help="skip the cold/warm start timings (a cold start compiles for ~45 s)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--players", type=int, default=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.players, args.games, args.seed, args.clans)))
        return 0

    root = os.path.abspath(args.tree)
    result = {"tree": root, "clans": args.clans, "steps_per_s": {}, "cpu_steps_per_s": {},
              "games_per_s": {}, "nojit_steps_per_s": {}, "nojit_ratio": {}, "steps_per_game": {}}
    for n in (2, 3, 4):
        common = ["--worker", "--players", str(n), "--seed", str(args.seed), "--clans", args.clans]
        jit = _run_child(common + ["--games", str(args.games)], {}, root)
        sps = jit["steps"] / jit["seconds"]
        result["steps_per_s"][n] = round(sps)
        result["cpu_steps_per_s"][n] = round(jit["steps"] / jit["cpu_seconds"])
        result["games_per_s"][n] = round(jit["games"] / jit["seconds"], 1)
        result["steps_per_game"][n] = round(jit["steps"] / jit["games"], 1)
        if args.nojit_games > 0:
            nojit = _run_child(common + ["--games", str(args.nojit_games)],
                               {"NUMBA_DISABLE_JIT": "1"}, root)
            nsps = nojit["steps"] / nojit["seconds"]
            result["nojit_steps_per_s"][n] = round(nsps, 1)
            result["nojit_ratio"][n] = round(sps / nsps, 1)
    if not args.no_startup:
        with tempfile.TemporaryDirectory() as cache:
            result["cold_start_s"] = round(startup(cache, root), 2)
            result["warm_start_s"] = round(startup(cache, root), 2)
    result["state_bytes"] = jit["state_bytes"]
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"tree: {root}; clans: {result['clans']}")
    print(f"{'players':>8} {'steps/s':>10} {'CPU steps/s':>12} {'games/s':>9} {'steps/game':>11} "
          f"{'no-JIT steps/s':>15} {'ratio':>7}")
    for n in (2, 3, 4):
        print(f"{n:>8} {result['steps_per_s'][n]:>10,} {result['cpu_steps_per_s'][n]:>12,} "
              f"{result['games_per_s'][n]:>9} {result['steps_per_game'][n]:>11} "
              f"{result['nojit_steps_per_s'].get(n, '-'):>15} {result['nojit_ratio'].get(n, '-'):>6}x")
    if not args.no_startup:
        print(f"cold start (compile) {result['cold_start_s']} s, warm start (cached) "
              f"{result['warm_start_s']} s")
    print(f"state {result['state_bytes']} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
