"""Speed of games with an Automa seat (A-3), in CPU time: random legal play inside numba
(the Automa's turns resolved by the engine after each player step) and whole games of
greedy play (``agents.rollouts.greedy_rollout``: the rollouts of ``mcts`` and the
one-step lookahead of ``greedy``, where every candidate action that ends a turn also plays
the Automa's turn). The best of ``--repeats`` passes over the same games; ``--tree PATH``
times another checkout (an older commit, say) with the same harness:

    python benchmarks/automa_speed.py
    python benchmarks/automa_speed.py --tree /tmp/old-checkout --level 1
"""
from __future__ import annotations

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(players: int, level: int, games: int, repeats: int) -> dict:
    from caledonia_env import Game, GameConfig
    from search_speed import agents_module, rollouts_module
    DEFAULT_WEIGHTS = agents_module("greedy_value", "evaluation").DEFAULT_WEIGHTS
    greedy_rollout, seed_numba = rollouts_module().greedy_rollout, rollouts_module().seed_numba
    from caledonia_env.engine.playout import rollout

    starts = [Game(GameConfig(num_players=players, seed=i, automa={players - 1: level}))
              for i in range(games)]
    T = starts[0].tables
    automa = starts[0].static.automa_switch
    rollout(starts[0].state.copy(), T, 1, 100_000, automa)                       # compile or load
    greedy_rollout(starts[0].state.copy(), T, DEFAULT_WEIGHTS, 100_000, automa)
    best_random = best_greedy = 0.0
    for _ in range(repeats):
        t0, steps = time.thread_time(), 0
        for i, g in enumerate(starts):
            steps += rollout(g.state.copy(), T, i, 100_000, automa)
        best_random = max(best_random, steps / (time.thread_time() - t0))
        t0 = time.thread_time()
        for i, g in enumerate(starts):
            seed_numba(i)
            greedy_rollout(g.state.copy(), T, DEFAULT_WEIGHTS, 100_000, automa)
        best_greedy = max(best_greedy, games / (time.thread_time() - t0))
    return {"random_steps_per_s": best_random, "greedy_games_per_s": best_greedy}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4),
                        help="players, the last seat an Automa (default 2)")
    parser.add_argument("--level", type=int, default=5, choices=range(1, 6),
                        help="Automa level (default 5)")
    parser.add_argument("--games", type=int, default=40, help="games per pass (default 40)")
    parser.add_argument("--repeats", type=int, default=3, help="passes; the best is kept")
    parser.add_argument("--tree", default=os.path.dirname(HERE),
                        help="checkout of the project to time (default: this one)")
    args = parser.parse_args()
    from search_speed import use_tree      # the tree's engine and its agents
    use_tree(args.tree)
    r = measure(args.players, args.level, args.games, args.repeats)
    print(f"{os.path.abspath(args.tree)}: {args.players}p with automa:{args.level}, "
          f"random play {r['random_steps_per_s']:,.0f} player steps/s, "
          f"greedy games {r['greedy_games_per_s']:.1f}/s (CPU time, best of {args.repeats})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
