"""What the search bots cost, in CPU time, and whether two checkouts play the same moves.

For each checkout (``--tree``, repeatable; trees alternated ``--repeat`` times, each
measurement in a fresh interpreter that imports that checkout's engine *and* its agents):

- ``greedy``: whole games of greedy play for every seat (``agents.rollouts.greedy_rollout``,
  the rollouts of ``mcts`` and the opponents of ``nmctsg``), µs per move;
- ``policy``: whole games with the shipped policy in seat 0 and greedy in the others
  (``agents.netroll.mixed_rollout``, the rollouts of ``nmctsg``), µs per move;
- one ``--agents`` bot per game against ``greedy`` (seat rotated), CPU seconds of its own
  thinking per game.

Every part is seeded, so a checkout that only makes the same computation faster gives the
same ``moves`` hash (the final states of the rollouts and every move of the agent games).

    python benchmarks/search_speed.py                               # this checkout
    python benchmarks/search_speed.py --tree /tmp/old --tree . --repeat 2   # A/B
    python benchmarks/search_speed.py --players 4 --agents mcts:32 --games 2
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def use_tree(tree: str) -> None:
    """Import ``caledonia_env`` and its ``agents`` / ``train`` subpackages from ``tree``
    (an editable install maps those two to its own checkout's top-level folders)."""
    tree = os.path.abspath(tree)
    sys.path.insert(0, tree)
    import caledonia_env
    if not caledonia_env.__file__.startswith(tree + os.sep):
        raise SystemExit(f"imported {caledonia_env.__file__}, not the package of {tree}")
    for sub in ("agents", "train"):
        init = os.path.join(tree, sub, "__init__.py")
        spec = importlib.util.spec_from_file_location(
            f"caledonia_env.{sub}", init, submodule_search_locations=[os.path.dirname(init)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        setattr(caledonia_env, sub, module)


def agents_module(*names):
    """The first of ``caledonia_env.agents.<name>`` for ``names`` that this checkout has:
    the current name first, then the names an older checkout (``--tree``) gave it."""
    import importlib

    import caledonia_env.agents as agents
    for name in names:
        if os.path.exists(os.path.join(agents.__path__[0], f"{name}.py")):
            return importlib.import_module(f"caledonia_env.agents.{name}")
    raise ImportError(f"none of caledonia_env.agents.{names} in {agents.__path__[0]}")


def rollouts_module():
    """``caledonia_env.agents.rollouts`` (the greedy play and its rollouts), or
    ``agents.evaluation`` for a checkout from before they moved there."""
    return agents_module("rollouts", "evaluation")


def child(players: int, games: int, rollouts: int, agent_specs: list[str], seed: int) -> dict:
    from caledonia_env import Game, GameConfig, agents
    DEFAULT_WEIGHTS = agents_module("greedy_value", "evaluation").DEFAULT_WEIGHTS
    PolicyRollouts = agents_module("search_values", "evaluators").PolicyRollouts
    from caledonia_env.agents.netroll import mixed_rollout
    greedy_rollout = rollouts_module().greedy_rollout
    seed_numba = rollouts_module().seed_numba
    moves = hashlib.sha256()

    def starts(n):
        return [Game(GameConfig(num_players=players, clans="draft", seed=seed + i))
                for i in range(n)]

    first = starts(1)[0]
    T0 = first.tables
    automa = first.static.automa_switch
    greedy_rollout(first.state.copy(), T0, DEFAULT_WEIGHTS, 100_000, automa)     # load / compile
    policy = PolicyRollouts("pretrained", opponents="greedy")
    policy.prepare(first)
    mixed_rollout(first.state.copy(), T0, *policy._net, 0.0, 0, DEFAULT_WEIGHTS, 100_000,
                  automa)
    out = {"tree": os.path.dirname(os.path.dirname(os.path.abspath(agents.__file__)))}
    for name, play in (("greedy", lambda s, T: greedy_rollout(s, T, DEFAULT_WEIGHTS, 100_000,
                                                              automa)),
                       ("policy", lambda s, T: mixed_rollout(s, T, *policy._net, 0.0, 0,
                                                             DEFAULT_WEIGHTS, 100_000, automa))):
        cpu = steps = 0.0
        for i, g in enumerate(starts(rollouts)):
            s = g.state.copy()
            seed_numba(i)
            t0 = time.thread_time()
            steps += play(s, g.tables)
            cpu += time.thread_time() - t0
            moves.update(s.tobytes())
        out[f"{name}_us_per_move"] = 1e6 * cpu / steps
    for spec in agent_specs:
        cpu = 0.0
        for i, g in enumerate(starts(games)):
            seat = i % players
            bots = [agents.make(spec if p == seat else "greedy", seed=100 * i + p)
                    for p in range(players)]
            while not g.is_terminal:
                p = g.current_player
                t0 = time.thread_time()
                a = int(bots[p].act(g))
                if p == seat:
                    cpu += time.thread_time() - t0
                moves.update(a.to_bytes(4, "little"))
                g.step(a)
        out[f"{spec}_s_per_game"] = cpu / games
    out["moves"] = moves.hexdigest()[:16]
    return out


def run_child(tree: str, args) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--tree", tree,
           "--players", str(args.players), "--games", str(args.games),
           "--rollouts", str(args.rollouts), "--seed", str(args.seed),
           "--agents", ",".join(args.agents)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the measurement failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: dict[str, list[dict]]) -> str:
    trees = list(results)
    keys = [k for k in results[trees[0]][0] if k not in ("tree", "moves")]
    lines = [f"{'':28}" + "".join(f"{os.path.basename(t.rstrip(os.sep)) or t:>18}" for t in trees)
             + ("      ratio" if len(trees) > 1 else "")]
    for k in keys:
        med = [statistics.median(r[k] for r in results[t]) for t in trees]
        row = f"{k:28}" + "".join(f"{m:18.2f}" for m in med)
        if len(trees) > 1:
            row += f"  {med[0] / med[-1]:8.2f}x"
        lines.append(row)
    lines.append(f"{'moves hash':28}" + "".join(f"{results[t][0]['moves']:>18}" for t in trees))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", help="a checkout to time (repeatable; "
                        "default: this one); the ratio is first / last")
    parser.add_argument("--repeat", type=int, default=1, help="alternated passes (median)")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--games", type=int, default=4, help="agent games per bot (default 4)")
    parser.add_argument("--rollouts", type=int, default=20,
                        help="whole greedy / policy games (default 20)")
    parser.add_argument("--agents", default="mcts:32,nmctsg:64",
                        help="comma-separated bots timed against greedy ('' for none)")
    parser.add_argument("--seed", type=int, default=3000)
    parser.add_argument("--json", action="store_true", help="one JSON object")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.agents = [a for a in args.agents.split(",") if a]
    trees = [os.path.abspath(t) for t in (args.tree or [ROOT])]
    if args.child:
        use_tree(trees[0])
        print(json.dumps(child(args.players, args.games, args.rollouts, args.agents,
                               args.seed)))
        return 0
    results: dict[str, list[dict]] = {t: [] for t in trees}
    for r in range(args.repeat):
        for t in trees:
            print(f"pass {r + 1}/{args.repeat}: {t}", file=sys.stderr, flush=True)
            results[t].append(run_child(t, args))
    if args.json:
        print(json.dumps(results))
    else:
        print(f"{args.players} players, clans drafted, CPU time (median of {args.repeat})")
        print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
