"""CPU time of one ``qpolicy`` decision (the balance study's budget: <= 1 ms on one core).

Plays ``--games`` games of ``--players`` N (default 2; clans drafted, seed ``--seed``) of
``--agent`` against N-1 ``greedy:Np``, seats rotated, and times every decision of the agent with
``time.process_time`` (numba runs on one thread): mean, median, 99th percentile and the
largest, over all decisions and over those with a real choice (more than one legal action).
The first game is played once before timing (compilation).

    python benchmarks/qpolicy_speed.py --games 10
    python benchmarks/qpolicy_speed.py --agent qpolicy:my.npz --games 4
    python benchmarks/qpolicy_speed.py --players 3 --games 10
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def measure(agent: str, games: int, seed: int, players: int = 2) -> dict:
    from caledonia_env import Game, GameConfig, agents

    def play(g, times, choice):
        seats = [agents.make(agent, seed=seed + g)] + [
            agents.make(f"greedy:{players}p", seed=seed + g) for _ in range(players - 1)]
        seats = seats[g % players:] + seats[:g % players]
        game = Game(GameConfig(num_players=players, seed=seed + g, clans="draft"))
        while not game.is_terminal:
            bot = seats[game.current_player]
            if bot.name == agent:
                n = len(game.legal_actions())
                t = time.process_time()
                a = bot.act(game)
                times.append(time.process_time() - t)
                choice.append(n > 1)
            else:
                a = bot.act(game)
            game.step(a)

    play(0, [], [])                                 # compile
    times, choice = [], []
    for g in range(games):
        play(g + 1, times, choice)
    t = np.array(times) * 1e3
    c = t[np.array(choice)]
    row = lambda v: {"n": int(len(v)), "mean_ms": float(v.mean()),  # noqa: E731
                     "median_ms": float(np.median(v)), "p99_ms": float(np.percentile(v, 99)),
                     "max_ms": float(v.max())}
    return {"agent": agent, "games": games, "players": players, "all": row(t), "choice": row(c)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent", default="qpolicy", help="agent name (default qpolicy)")
    ap.add_argument("--games", type=int, default=10, help="games timed (default 10)")
    ap.add_argument("--seed", type=int, default=20261240, help="default 20261240")
    ap.add_argument("--players", type=int, default=2, choices=(2, 3, 4),
                    help="players; the others are greedy:Np (default 2)")
    args = ap.parse_args(argv)
    r = measure(args.agent, args.games, args.seed, args.players)
    for key, label in (("all", "every decision"), ("choice", "decisions with a choice")):
        v = r[key]
        print(f"{r['agent']}: {label}: {v['n']} decisions, CPU ms mean {v['mean_ms']:.3f}  "
              f"median {v['median_ms']:.3f}  p99 {v['p99_ms']:.3f}  max {v['max_ms']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
