"""The agents' strength table: each match of the strength targets, seats rotated, clans drafted.

    python benchmarks/strength.py --workers 2 --seed 20261124 \\
        --match "ppo:pretrained greedy" --games 400 \\
        --match "ppo:pretrained greedy greedy" --games 300

Every ``--match`` is the agents of one game, the measured agent first (``--games`` after a
match sets its game count; the last one given applies to the matches after it). Each match
plays games 0..N-1 from ``(seed, g)`` with the agents rotating through the player indices (the
first player is drawn per game, R-1.6), in ``--workers`` processes; the rows are the same for
any worker count. Prints, per match: the first agent's win share (ties split, R-7) with its
95% Wilson interval against par (1 / players) and the ``--target``, mean VP, and the mean VP
of every scoring component (R-7) for the agent and for its opponents, as Markdown. Without
``--match`` it plays the five matches of the strength targets (docs/training.md). Use a seed
that was not used to pick the checkpoints. A progress bar of each match's games goes to stderr
when it is a terminal.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

TARGETS = (     # (agents, games, target win share): the strength targets; the search rows
                # play the best search agent against the search bots (nmctsg, docs/agents.md)
    ("ppo:pretrained greedy", 400, 0.70),
    ("nmctsg:64 mcts:32", 100, 0.60),
    ("ppo:pretrained greedy greedy", 300, 0.55),
    ("ppo:pretrained greedy greedy greedy", 300, 0.45),
    ("nmctsg:64 mcts:32 mcts:32 mcts:32", 20, 0.35),
)
COMPONENTS = ("glory", "goods", "money", "hops", "imports", "exports", "settlements")


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--match", action="append", default=[], metavar="'A B [C [D]]'",
                   help="the agents of one game, the measured one first (repeatable)")
    p.add_argument("--games", action="append", type=int, default=[],
                   help="games of the matches given so far without a count")
    p.add_argument("--target", action="append", type=float, default=[],
                   help="target win share of the matches given so far without one, e.g. 0.55")
    p.add_argument("--seed", type=int, default=20261124, help="match seed (default 20261124)")
    p.add_argument("--workers", type=int, default=1, help="local processes (default 1)")
    p.add_argument("--scale", type=float, default=1.0,
                   help="multiply the default game counts (e.g. 0.1 for a quick look)")
    p.add_argument("--out", default=None, metavar="FILE.md", help="also write the table here")
    p.add_argument("--save", default=None, metavar="TABLE",
                   help="also write the rows to benchmarks/results/TABLE-DATE.json (e.g. "
                        "strength_policies; benchmarks/report.py renders it)")
    p.add_argument("--title", default="", help="with --save: the table's title (default: that "
                   "of the table's newest file)")
    p.add_argument("--meaning", default="", help="with --save: what the table means (default: "
                   "that of the table's newest file)")
    return p, p.parse_known_args(argv)


def matches_from_argv(argv) -> list[tuple[list[str], int | None, float | None]]:
    """The --match / --games / --target sequence, in order: a count or a target applies to
    the matches before it that have none."""
    out: list[list] = []
    it = iter(argv)
    for tok in it:
        if tok == "--match":
            out.append([next(it).split(), None, None])
        elif tok in ("--games", "--target"):
            val = next(it)
            k = 1 if tok == "--games" else 2
            for m in out:
                if m[k] is None:
                    m[k] = int(val) if k == 1 else float(val)
    return [tuple(m) for m in out]


def play_automa(agents: list[str], games: int, seed: int, workers: int):
    """A match with ``automa:LEVEL`` seats (played by the engine, A-0): the tournament of
    ``caledonia play --players A,automa:L`` (fixed seats, the first player drawn per game)."""
    from caledonia_env import tournament as tn
    if len(set(agents)) != len(agents):
        raise SystemExit(f"--match {' '.join(agents)}: with an Automa seat each name once")
    spec = tn.TournamentSpec(players=tuple(agents), games=games, seed=seed)
    t0 = time.perf_counter()
    with tn.progress_bar(games, label=" ".join(agents)) as bar:
        rows = tn.run(spec, workers=workers, progress=bar.update)
    for r in rows:
        r["role"] = 0 if r["agent"] == agents[0] else 1
    return rows, time.perf_counter() - t0


def play(agents: list[str], games: int, seed: int, workers: int) -> tuple[list[dict], float]:
    from caledonia_env import scale
    from caledonia_env.tournament import progress_bar
    from caledonia_env.train.batched_play import EvalStudy, checkpoint_sha256
    if any(a.startswith("automa:") for a in agents):
        return play_automa(agents, games, seed, workers)
    n = len(agents)
    sha = {a: checkpoint_sha256(a, n) for a in set(agents) if a.startswith("ppo:")}
    study = EvalStudy(matches=(tuple(agents),), per_match=games, seed=seed, sha256=sha)
    t0 = time.perf_counter()
    with progress_bar(games, label=" ".join(agents)) as bar:
        rows = scale.run_study(study, None, backend="local", workers=workers,
                               progress=bar.update)["rows"]
    for r in rows:
        r["role"] = study.role(r)
    return rows, time.perf_counter() - t0


def summary(agents, rows, target) -> dict:
    """The first agent's figures of one match: win share and interval, par, target met, mean
    VP and VP by component (R-7), for it and for its opponents."""
    from caledonia_env.tournament import wilson
    mine = [r for r in rows if r["role"] == 0]
    other = [r for r in rows if r["role"] != 0]
    n = len(mine)
    wins = float(sum(r["win"] for r in mine))
    lo, hi = wilson(wins, n)
    met = "" if target is None else ("yes" if lo >= target else
                                     "no" if hi < target else "not shown")
    comp = lambda rs: [float(np.mean([r[c] for r in rs])) for c in COMPONENTS]
    return {"match": f"{len(agents)}p `{agents[0]}` vs " + " + ".join(f"`{a}`" for a in agents[1:]),
            "games": n, "win": [100 * wins / n, 100 * lo, 100 * hi], "par": 100 / len(agents),
            "target": "" if target is None else f"{100 * target:.0f}%", "met": met,
            "vp": (float(np.mean([r["total"] for r in mine])),
                   float(np.mean([r["total"] for r in other]))),
            "components": (comp(mine), comp(other))}


def summary_line(agents, rows, target, seconds) -> str:
    s = summary(agents, rows, target)
    comp = lambda xs: " / ".join(f"{x:.1f}" for x in xs)
    rate, lo, hi = s["win"]
    return (f"| {s['match']} | {s['games']} | {rate:.1f}% ({lo:.1f}–{hi:.1f}) "
            f"| {s['par']:.0f}% | {s['target']} "
            f"| {s['met']} | {s['vp'][0]:.1f} : {s['vp'][1]:.1f} | {comp(s['components'][0])} "
            f"| {comp(s['components'][1])} | {seconds:.0f} s |")


def result_row(agents, rows, target) -> dict:
    """One row of a result file (benchmarks/results_io.py), columns as ``RESULT_COLUMNS``."""
    s = summary(agents, rows, target)
    goods, imports = (s["components"][0][COMPONENTS.index(c)] for c in ("goods", "imports"))
    return {"match": s["match"], "games": s["games"], "win": [round(x, 1) for x in s["win"]],
            "par": round(s["par"]), "target": s["target"] + (f" ({VERDICTS[s['met']]})" if s["met"] else ""),
            "mean_vp": f"{s['vp'][0]:.1f} : {s['vp'][1]:.1f}",
            "goods_imports": f"{goods:.1f} / {imports:.1f}"}


VERDICTS = {"yes": "met", "no": "not met", "not shown": "inside the CI"}
RESULT_COLUMNS = [{"key": "match", "label": "match"},
                  {"key": "games", "label": "games", "format": ",d"},
                  {"key": "win", "label": "win share (95% CI)", "format": ".1f", "unit": "%"},
                  {"key": "par", "label": "par", "format": "d", "unit": "%"},
                  {"key": "target", "label": "target"},
                  {"key": "mean_vp", "label": "mean VP (agent : each opponent)"},
                  {"key": "goods_imports", "label": "agent's VP from goods / imports"}]


def check_checkpoints(p, todo) -> None:
    """Every ``ppo:`` agent names a readable checkpoint: a usage error (exit 2) saying what is
    wrong, before any game is played."""
    specs = {(a, len(ag)) for ag, _, _ in todo for a in ag if a.startswith("ppo:")}
    if not specs:
        return
    from caledonia_env.agents.checkpoint import CheckpointError, load
    from caledonia_env.agents.policy import checkpoint_path
    try:
        for spec, n in sorted(specs):
            load(checkpoint_path(spec[4:], n))
    except CheckpointError as e:
        p.error(str(e))
    except ImportError:
        p.error("ppo agents need torch: pip install -e '.[train]'")


def main(argv=None):
    import sys
    argv = sys.argv[1:] if argv is None else argv
    p, (a, _) = parse(argv)
    given = matches_from_argv(argv)
    todo = ([(m.split(), max(1, round(g * a.scale)), t) for m, g, t in TARGETS] if not given
            else [(ag, g or 100, t) for ag, g, t in given])
    for ag, _, _ in todo:
        if not 2 <= len(ag) <= 4:
            p.error(f"a match has 2-4 agents, got {ag}")
    check_checkpoints(p, todo)
    head = ("| match | games | win share (95% CI) | par | target | target met | mean VP (agent : "
            "others) | agent VP by component (" + " / ".join(COMPONENTS) + ") | opponents' VP "
            "by component | wall |\n|---|---:|---|---:|---:|---|---|---|---|---:|")
    lines, saved = [head], []
    print(head, flush=True)
    for agents, games, target in todo:
        rows, secs = play(agents, games, a.seed, a.workers)
        line = summary_line(agents, rows, target, secs)
        lines.append(line)
        saved.append(result_row(agents, rows, target))
        print(line, flush=True)
    print(f"\nseed {a.seed}; clans drafted (the standard game, R-1.7); seats rotated; "
          f"'target met' = the whole 95% interval is at or above the target ('no': entirely "
          f"below; 'not shown': the interval contains it)")
    if a.out:
        with open(a.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    if a.save:
        import os
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from results_io import write_result
        write_result(a.save, columns=RESULT_COLUMNS, rows=saved, title=a.title,
                     meaning=a.meaning)


if __name__ == "__main__":
    main()
