"""Cold and warm start of any checkout: what a new user waits for before the first game.

Each run is a fresh interpreter with an EMPTY numba cache (``NUMBA_CACHE_DIR`` set to a new
temporary folder, which ``caledonia_env.engine.compile.jit`` files the project's compiled code
under) that times, in wall and CPU seconds (its own, and its compile helper's,
``caledonia_env.engine.compile.helper``):

- ``import``: ``from caledonia_env import Game, GameConfig`` (numba's import included; the
  interpreter's own start, about 0.03 s, is not counted),
- ``setup``: ``Game(GameConfig(num_players=4, clans="draft"))`` (4-player tables and the
  game's setup, R-1),
- ``game``: that game played to the end with random legal actions (the Python API),

then the same again in a second interpreter with the cache the first one filled (warm).
``--vector N`` times the vector env instead: ``setup`` is ``CaledoniaVectorEnv(num_envs=N,
num_players=P)`` and its ``reset()``, ``game`` is 50 steps with random legal actions.
numba's compile events count the compiled functions; ``--by-function N`` lists the N that
took longest (time inside the function's own compile, without the callees it compiled).

    python benchmarks/cold_start.py                          # this checkout, one run
    python benchmarks/cold_start.py --tree /tmp/base --tree . --repeat 3   # A/B, alternated
    python benchmarks/cold_start.py --json                   # one JSON object
    python benchmarks/cold_start.py --by-function 20         # where the compile time goes
    python benchmarks/cold_start.py --no-helper              # one process compiles it all
    python benchmarks/cold_start.py --vector 8 --players 2   # the vector env's first use

A checkout given with ``--tree`` is imported from its own folder (the child runs there with
the folder first on ``PYTHONPATH``); the child checks that it timed that folder's package.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STAGES = ("import", "setup", "game")
#: steps of the vector env timed as its ``game`` stage (``--vector``)
VECTOR_STEPS = 50
#: wall time, this process's CPU time, and the CPU time of the compile helper it started
#: (``engine.compile.helper``), counted in the stage where it has ended (and in the total)
CLOCKS = ("wall", "cpu", "helper")


class CompileLog:
    """numba ``numba:compile`` events: how many functions compiled, and each one's own
    compile time (its callees, compiled while it is typed, are subtracted)."""

    def __init__(self):
        self.count = 0
        self.own: dict[str, float] = {}
        self._stack: list[list[float]] = []

    def start(self) -> None:
        from numba.core import event     # the child only: the parent never imports numba
        log = self

        class Listener(event.Listener):
            def on_start(self, ev):
                log._stack.append([time.perf_counter(), 0.0])

            def on_end(self, ev):
                began, inner = log._stack.pop()
                spent = time.perf_counter() - began
                if log._stack:
                    log._stack[-1][1] += spent
                func = ev.data["dispatcher"].py_func
                name = f"{func.__module__}.{func.__qualname__}"
                log.own[name] = log.own.get(name, 0.0) + spent - inner
                log.count += 1

        event.register("numba:compile", Listener())

    def top(self, n: int) -> list[tuple[str, float]]:
        return sorted(((k, round(v, 3)) for k, v in self.own.items()),
                      key=lambda kv: -kv[1])[:n]


def child(players: int, seed: int, by_function: int, vector: int = 0) -> dict:
    """Time the stages in this process (run with the cache folder already chosen); the vector
    env of ``vector`` games instead of a ``Game`` when ``vector`` > 0."""
    def children_cpu() -> float:       # processes this one started and waited for
        t = os.times()
        return t.children_user + t.children_system

    marks = [(time.perf_counter(), time.process_time(), 0, children_cpu())]
    log = CompileLog()
    log.start()                         # imports numba: counted in the import, as for a user

    def mark():
        marks.append((time.perf_counter(), time.process_time(), log.count, children_cpu()))

    if vector:
        from caledonia_env.envs.vector import CaledoniaVectorEnv
        mark()
        env = CaledoniaVectorEnv(num_envs=vector, num_players=players, seed=seed)
        env.reset()
        mark()
        for _ in range(VECTOR_STEPS):
            env.step(env.sample_actions())
        steps = VECTOR_STEPS
        mark()
    else:
        from caledonia_env import Game, GameConfig
        mark()
        game = Game(GameConfig(num_players=players, seed=seed, clans="draft"))
        mark()
        import random
        rng = random.Random(seed)
        steps = 0
        while not game.is_terminal:
            game.step(rng.choice(game.legal_actions().tolist()))
            steps += 1
        mark()
    import caledonia_env
    out = {"package": os.path.dirname(os.path.abspath(caledonia_env.__file__)),
           "steps": steps, "wall": {}, "cpu": {}, "helper": {}, "compiled": {}}
    for name, (w0, c0, n0, h0), (w1, c1, n1, h1) in zip(STAGES, marks, marks[1:]):
        out["wall"][name] = round(w1 - w0, 3)
        out["cpu"][name] = round(c1 - c0, 3)
        out["helper"][name] = round(h1 - h0, 3)
        out["compiled"][name] = n1 - n0
    out["wall"]["total"] = round(marks[-1][0] - marks[0][0], 3)
    out["cpu"]["total"] = round(marks[-1][1] - marks[0][1], 3)
    await_helpers()
    out["helper"]["total"] = round(children_cpu() - marks[0][3], 3)
    out["compiled"]["total"] = log.count
    if by_function:
        out["by_function"] = log.top(by_function)
    return out


def await_helpers(limit_s: float = 120.0) -> None:
    """Wait until the compile helpers this process started have ended (a thread reaps them),
    so that their CPU time is counted; nothing for trees without them."""
    try:
        from caledonia_env.engine.compile.helper import _started
    except ImportError:
        return
    end = time.perf_counter() + limit_s
    while any(h is not None and not h.finished for h in _started.values()):
        if time.perf_counter() > end:
            return
        time.sleep(0.01)


def run_child(tree: str, cache: str, players: int, seed: int, by_function: int,
              helper: bool = True, vector: int = 0) -> dict:
    """One fresh interpreter timing ``tree``'s package with the numba cache in ``cache``
    (``helper``: False sets ``CALEDONIA_COMPILE_HELPER=0``)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, CALEDONIA_COMPILE_HELPER="1" if helper else "0")
    env.pop("NUMBA_DISABLE_JIT", None)
    env["PYTHONPATH"] = tree + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--players", str(players),
           "--seed", str(seed), "--by-function", str(by_function), "--vector", str(vector)]
    out = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"the run of {tree} failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    want = os.path.realpath(os.path.join(tree, "caledonia_env"))
    if os.path.realpath(result["package"]) != want:
        raise RuntimeError(f"timed the package in {result['package']}, not the one in {want}")
    return result


def measure(tree: str, players: int, seed: int, by_function: int, helper: bool = True,
            vector: int = 0) -> dict:
    """A cold run with a new empty cache, then a warm run with the cache it filled."""
    with tempfile.TemporaryDirectory(prefix="cold_start_") as cache:
        cold = run_child(tree, cache, players, seed, by_function, helper, vector)
        warm = run_child(tree, cache, players, seed, 0, helper, vector)
    return {"cold": cold, "warm": warm}


def summary(runs: list[dict]) -> dict:
    """Median and range of each stage over the runs of one tree."""
    out = {}
    for kind in ("cold", "warm"):
        for clock in CLOCKS:
            for stage in STAGES + ("total",):
                values = [r[kind].get(clock, {}).get(stage, 0.0) for r in runs]
                out[f"{kind}_{clock}_{stage}"] = {"median": round(statistics.median(values), 3),
                                                  "min": min(values), "max": max(values)}
    out["compiled"] = runs[0]["cold"]["compiled"]
    out["compiled_warm"] = runs[0]["warm"]["compiled"]["total"]
    return out


def table(result: dict) -> str:
    """The text report: one block per tree, medians (min–max over the repeats)."""
    what = (f"a vector env of {result['vector']} games, {VECTOR_STEPS} steps" if result["vector"]
            else "clans drafted")
    lines = [f"cold start ({result['players']} players, {what}, fresh numba cache"
             f"{'' if result['helper'] else ', no compile helper'}), {result['repeat']} run(s) "
             f"per tree, trees alternated; seconds, median (min-max)"]
    head = f"{'':>14}" + "".join(f"{s:>22}" for s in STAGES + ("total",))
    for tree, s in result["trees"].items():
        lines += ["", f"tree {tree}", head]
        for kind in ("cold", "warm"):
            for clock in CLOCKS:
                cells = []
                for stage in STAGES + ("total",):
                    v = s[f"{kind}_{clock}_{stage}"]
                    cells.append(f"{v['median']:.2f} ({v['min']:.2f}-{v['max']:.2f})")
                lines.append(f"{kind + ' ' + clock:>14}" + "".join(f"{c:>22}" for c in cells))
        c = s["compiled"]
        lines.append(f"{'compiled':>14}" + "".join(f"{c[k]:>22}" for k in STAGES + ("total",))
                     + f"   (warm run: {s['compiled_warm']})")
        for name, sec in s.get("by_function", []):
            lines.append(f"{sec:>20.2f} s  {name}")
    return "\n".join(lines)


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", default=None,
                        help="checkout to time (repeat for an A/B; default: this one)")
    parser.add_argument("--repeat", type=positive, default=1, help="runs per tree (default 1)")
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--by-function", type=int, default=0, metavar="N",
                        help="list the N functions whose own compile took longest")
    parser.add_argument("--no-helper", action="store_true",
                        help="compile in one process (CALEDONIA_COMPILE_HELPER=0)")
    parser.add_argument("--vector", type=int, default=0, metavar="N",
                        help="time the vector env of N games (reset, then "
                             f"{VECTOR_STEPS} steps) instead of one Game")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.by_function < 0:
        parser.error(f"--by-function must be 0 or more, got {args.by_function}")
    if args.vector < 0:
        parser.error(f"--vector must be 0 or more, got {args.vector}")
    if args.child:
        print(json.dumps(child(args.players, args.seed, args.by_function, args.vector)))
        return 0
    trees = [os.path.abspath(t) for t in (args.tree or [ROOT])]
    for t in trees:
        if not os.path.isfile(os.path.join(t, "caledonia_env", "__init__.py")):
            parser.error(f"--tree {t} is not a checkout of the project (no caledonia_env/)")
    runs: dict[str, list[dict]] = {t: [] for t in trees}
    for _ in range(args.repeat):
        for t in trees:
            runs[t].append(measure(t, args.players, args.seed, args.by_function,
                                   not args.no_helper, args.vector))
    result = {"players": args.players, "repeat": args.repeat, "helper": not args.no_helper,
              "vector": args.vector,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "trees": {}}
    for t, rs in runs.items():
        result["trees"][t] = summary(rs)
        if args.by_function:
            result["trees"][t]["by_function"] = rs[0]["cold"]["by_function"]
    print(json.dumps(result) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
