"""CPU time of the Python paths, robust to a loaded machine: ``Game.clone()``, the Python
API loop and the PettingZoo AEC loop (4 players), and the vector env's serial kernel
(``vector``: 2 players, N = 64, ``parallel=False``, 50 ``step()`` calls with
``sample_actions()`` from each seed's reset; learner steps), each the *minimum* CPU time
of a fixed unit of work over many repeats (other jobs only ever add time, so the minimum is the
least disturbed figure). ``--tree PATH`` times another checkout of the project (an
older commit, say) with the same harness, so two versions compare back to back:

    python benchmarks/python_paths.py
    python benchmarks/python_paths.py --tree /tmp/old-checkout
    python benchmarks/python_paths.py --only clone,aec --json

The clone row also times OpenSpiel chess ``state.clone()`` (40 moves in) when
``pyspiel`` is installed (extra ``bench``), in the same process.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = ("clone", "python", "aec", "vector")
SEEDS = range(6)                  # the same six 4-player games for every version


def per_game_min(play, passes):
    """Steps per CPU second: each seed's game timed ``passes`` times, its minimum kept."""
    best, steps = {}, {}
    play(SEEDS[0])                                  # warm-up: compile, caches
    for _ in range(passes):
        for sd in SEEDS:
            t0 = time.process_time()
            n = play(sd)
            dt = time.process_time() - t0
            best[sd] = min(best.get(sd, float("inf")), dt)
            steps[sd] = n
    return sum(steps.values()) / sum(best.values())


def clone_ns(clone, repeats):
    return min(timeit.repeat(clone, number=5000, repeat=repeats,
                             timer=time.process_time)) / 5000 * 1e9


def run(rows, passes) -> dict:
    import caledonia_env
    from caledonia_env import Game, GameConfig
    out = {"package": os.path.dirname(caledonia_env.__file__)}
    if "clone" in rows:
        g = Game(GameConfig(num_players=4, seed=3))
        rng = random.Random(3)
        for _ in range(100):
            g.step(rng.choice(g.legal_actions()))
        out["clone_ns"] = clone_ns(g.clone, 10 * passes)
        try:
            import pyspiel
        except ImportError:
            pyspiel = None
        if pyspiel is not None:
            st = pyspiel.load_game("chess").new_initial_state()
            rng = random.Random(3)
            for _ in range(40):
                st.apply_action(rng.choice(st.legal_actions()))
            out["chess_clone_ns"] = clone_ns(st.clone, 10 * passes)
            out["clone_ratio"] = out["chess_clone_ns"] / out["clone_ns"]
    if "python" in rows:
        def python_game(sd):
            rng = random.Random(sd)
            g = Game(GameConfig(num_players=4, seed=sd))
            n = 0
            while not g.is_terminal:
                g.step(rng.choice(g.legal_actions()))
                n += 1
            return n
        out["python_steps_per_s"] = per_game_min(python_game, passes)
    if "aec" in rows:
        env = caledonia_env.env(num_players=4)

        def aec_game(sd):
            rng = random.Random(sd)
            env.reset(seed=sd)
            n = 0
            for _agent in env.agent_iter():
                obs, _r, term, trunc, _info = env.last()
                action = None if term or trunc else \
                    rng.choice(obs["action_mask"].view(bool).nonzero()[0])
                env.step(action)
                n += 1
            return n
        out["aec_steps_per_s"] = per_game_min(aec_game, passes)
    if "vector" in rows:
        from caledonia_env.envs.vector import CaledoniaVectorEnv
        venv = CaledoniaVectorEnv(64, num_players=2, parallel=False)

        def vector_run(sd, calls=50):
            venv.reset(seed=sd)
            for _ in range(calls):
                venv.step(venv.sample_actions())
            return calls * venv.num_envs
        out["vector_steps_per_s"] = per_game_min(vector_run, passes)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", default=os.path.dirname(HERE),
                        help="checkout whose caledonia_env is timed (default: this one)")
    parser.add_argument("--only", default=",".join(ROWS), help=f"rows, from {ROWS}")
    parser.add_argument("--passes", type=int, default=12, help="repeats per unit of work")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    rows = [r for r in args.only.split(",") if r]
    if not rows or any(r not in ROWS for r in rows):
        parser.error(f"--only takes rows from {ROWS}")
    if args.passes < 1:
        parser.error("--passes must be >= 1")
    sys.path.insert(0, os.path.abspath(args.tree))
    out = run(rows, args.passes)
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"package: {out.pop('package')}")
    for k, v in out.items():
        print(f"{k}: {v:,.3f}" if v < 10 else f"{k}: {v:,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
