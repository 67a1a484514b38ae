"""Environment speed: PettingZoo AEC, vector env (N = 1, 64, 1024) and the raw engine, one run.

Every figure plays random legal actions from fresh random setups (random maps).

* engine: ``caledonia_env.engine.playout.random_games`` on one thread (mask every
  step, no observation) — the reference for the ratios.
* AEC: ``caledonia_env.env(num_players=P)`` (the wrapped env) driven by the usual
  ``agent_iter`` / ``last`` / ``step`` loop; one step = one decision of any agent
  (observation + mask built by ``last()``, random legal pick in Python).
* vector: ``CaledoniaVectorEnv(N)`` with its built-in numba random opponents;
  each ``step`` applies one learner action per game, lets the opponents play,
  auto-resets, and writes N observations + masks. ``vector_steps_per_s`` counts
  learner transitions (N per call, what an RL trainer consumes);
  ``vector_game_steps_per_s`` counts every applied action (learner + opponents).
  The learner's actions come from ``env.sample_actions()`` (numba), timed too.

    python benchmarks/env_speed.py                 # table, 4 players
    python benchmarks/env_speed.py --players 2     # another player count
    python benchmarks/env_speed.py --json          # one JSON object
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def engine_speed(players: int, seconds: float, seed: int) -> dict:
    from caledonia_env import Game
    from caledonia_env.engine.layout import STATE_SIZE
    from caledonia_env.engine.playout import random_games
    T = Game(num_players=players, seed=seed).tables
    finals = np.zeros((1, STATE_SIZE), np.int32)
    random_games(T, 2, seed + 10_000, finals)          # warm-up (compile or cache load)
    steps = games = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        k = random_games(T, 50, seed + games, finals)
        if k < 0:
            raise RuntimeError("a random game reached a state with no legal action")
        steps += k
        games += 50
    dt = time.perf_counter() - t0
    return {"steps_per_s": steps / dt, "games_per_s": games / dt, "steps_per_game": steps / games}


def aec_speed(players: int, seconds: float, seed: int) -> dict:
    import caledonia_env
    from caledonia_env import GameConfig
    from caledonia_env.env.vector import _map_options
    from caledonia_env.game import _variants, get_static
    cfg = GameConfig(num_players=players)
    for sides in _map_options(None):                   # build the 16 maps' tables up front
        get_static(cfg.ruleset, sides, players, _variants(cfg))
    env = caledonia_env.env(num_players=players)
    rng = np.random.default_rng(seed)

    def play(game_seed):
        env.reset(seed=game_seed)
        n = 0
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
            n += 1
        return n

    play(seed)                                          # warm-up
    steps = games = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        steps += play(seed + 1 + games)
        games += 1
    dt = time.perf_counter() - t0
    return {"steps_per_s": steps / dt, "games": games}


def vector_speed(players: int, n_envs: int, seconds: float, seed: int) -> dict:
    from caledonia_env.env.vector import CaledoniaVectorEnv
    env = CaledoniaVectorEnv(n_envs, num_players=players, seed=seed)
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
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
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


if __name__ == "__main__":
    sys.exit(main())
