"""Throughput of a balance-style study (greedy bots, every clan combination in every seat
rotation) on local processes and on Ray: ``python benchmarks/scale_speed.py --games 2000``.

Prints one JSON line per backend: games/s, seconds, and each worker's numba warm-up.
"""
import argparse
import json
import os
import tempfile

from caledonia_env import scale
from caledonia_env import tournament as T
from caledonia_env.config import CLAN_NAMES


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--games", type=int, default=2000)
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--backends", default="local,ray", help="comma-separated: local, ray")
    p.add_argument("--address", default=None, help="Ray cluster address (default: local Ray)")
    a = p.parse_args()
    clans = [c for c in CLAN_NAMES if c != "brewer"]
    spec = T.TournamentSpec(players=("greedy",) * a.players, games=a.games, seed=0,
                            clan_schedule=T.balance_schedule(clans, a.players))
    with tempfile.TemporaryDirectory() as tmp:
        for backend in a.backends.split(","):
            kw = {"address": a.address} if backend == "ray" else {}
            s = scale.run_study(spec, os.path.join(tmp, f"{backend}.parquet"), backend=backend,
                                workers=a.workers, **kw)
            print(json.dumps({"backend": backend, "games": a.games, "players": a.players,
                              "workers": len(s["workers"]), "nodes": len(s["nodes"]),
                              "seconds": round(s["seconds"], 2),
                              "games_per_s": round(a.games / s["seconds"], 2),
                              "warmup_s": sorted(round(w["warmup_s"], 2) for w in s["workers"])}),
                  flush=True)


if __name__ == "__main__":
    main()
