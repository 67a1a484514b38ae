"""Throughput of a balance-style study (greedy bots, every clan combination in every seat
rotation) on local processes and on Ray: ``python benchmarks/scale_speed.py --games 2000``.

Prints one JSON line per backend: games/s, seconds, each worker's numba warm-up, and the CPU
seconds spent by this process and every process it started (workers, Ray's daemons), sampled
with psutil every 0.2 s: on a machine shared with other jobs, wall time depends on their load,
while CPU seconds per game show the backend's own overhead.
"""
import argparse
import json
import os
import tempfile
import threading

import psutil

from caledonia_env import scale
from caledonia_env import tournament as T
from caledonia_env.config import CLAN_NAMES


class CpuMeter:
    """CPU seconds (user + system) of this process and all its descendants while running;
    each process is sampled every ``interval`` s, so a process that exits between samples
    loses at most that much of its time."""

    def __init__(self, interval=0.2):
        self.interval = interval
        self.seen: dict = {}
        self._stop = threading.Event()
        self._me = psutil.Process()

    def _sample(self):
        for p in [self._me] + self._me.children(recursive=True):
            try:
                t = p.cpu_times()
                self.seen[(p.pid, p.create_time())] = t.user + t.system
            except psutil.Error:
                pass

    def _run(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        self._sample()
        self.start = dict(self.seen)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._sample()
        self._stop.set()
        self._thread.join()
        self.seconds = sum(v - self.start.get(k, 0.0) for k, v in self.seen.items())


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
            load0 = os.getloadavg()[0]
            with CpuMeter() as cpu:
                s = scale.run_study(spec, os.path.join(tmp, f"{backend}.parquet"),
                                    backend=backend, workers=a.workers, **kw)
            print(json.dumps({"backend": backend, "games": a.games, "players": a.players,
                              "workers": len(s["workers"]), "nodes": len(s["nodes"]),
                              "seconds": round(s["seconds"], 2),
                              "games_per_s": round(a.games / s["seconds"], 2),
                              "cpu_s": round(cpu.seconds, 1),
                              "cpu_ms_per_game": round(1000 * cpu.seconds / a.games, 2),
                              "load_avg_start_end": [round(load0, 2),
                                                     round(os.getloadavg()[0], 2)],
                              "warmup_s": sorted(round(w["warmup_s"], 2) for w in s["workers"])}),
                  flush=True)


if __name__ == "__main__":
    main()
