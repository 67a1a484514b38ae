"""The rating ladder with a cost axis as a result file (train/ladder.py, docs/ladder.md).

    python benchmarks/ladder.py --players 2 --games 900 --seed 20261210 --workers 2 \\
        --plot docs/img/ladder_2p.png --save

Plays ``caledonia ladder``'s schedule (mixed tables, every pair of rungs equally often per
round, seats rotated on a shared setup, clans drafted) for one player count, prints the
ratings (Bradley-Terry, Elo, random = 0, 95% CI) beside each rung's thinking seconds a game
and with ``--save`` writes them to the result file ``ladder`` (one row per player count and
rung, merged with the day's file by (players, rung)); ``python benchmarks/report.py``
renders it. ``--seed`` is required: give one never used to choose or tune any rung.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

COLUMNS = [{"key": "players", "label": "players", "format": "d"},
           {"key": "rung", "label": "rung"},
           {"key": "elo", "label": "Elo (95% CI)", "format": ".0f"},
           {"key": "games", "label": "games", "format": ",d"},
           {"key": "cpu_s", "label": "CPU s a game", "format": ".4f"},
           {"key": "seed", "label": "seed of its ladder"}]
NOTES = ("One run per player count, merged: the command above is the latest run; the rows of "
         "another player count come from the same command with that --players, its rows' "
         "rungs as --rungs and its seed; the games of a run are the table's games column "
         "summed over its rungs, divided by the player count.")
TITLE = "Rating ladder: strength against cost"
MEANING = ("Bradley-Terry ratings on the Elo scale (random = 0, 95% CI) from mixed tables of "
           "different rungs, seats rotated, clans drafted, on a seed never used for selection; "
           "CPU s a game = the agent's mean thinking time a game (an Automa is played by the "
           "engine: 0).")


def parse(argv=None):
    from caledonia_env.train.ladder import DEFAULT_RUNGS
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--players", type=int, default=2, help="2-4 (default 2)")
    p.add_argument("--rungs", default=None, metavar="A,B[,...]",
                   help="default: " + "; ".join(f"{n}p {','.join(r)}"
                                                for n, r in DEFAULT_RUNGS.items()))
    p.add_argument("--games", type=int, default=900, help="ladder games (default 900)")
    p.add_argument("--seed", type=int, required=True, help="a fresh seed")
    p.add_argument("--workers", type=int, default=1, help="local processes (default 1)")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="the strength/cost chart")
    p.add_argument("--save", action="store_true",
                   help="write benchmarks/results/ladder-DATE.json")
    return p, p.parse_args(argv)


def result_rows(players: int, table: list[dict], seed: int) -> list[dict]:
    """The result file's rows of one ladder (played on ``seed``), best first."""
    return [{"players": players, "rung": r["agent"],
             "elo": [round(r["elo"], 1), round(r["lo"], 1), round(r["hi"], 1)],
             "games": int(r["games"]), "cpu_s": round(r["cpu_s"], 5), "seed": seed}
            for r in table]


def main(argv=None):
    from caledonia_env import tournament as tn
    from caledonia_env.train import ladder
    p, a = parse(argv)
    try:
        rungs = ladder.check_rungs(a.rungs.split(",") if a.rungs else
                                   ladder.DEFAULT_RUNGS.get(a.players, ()), a.players)
        if a.plot:
            tn.check_output_file(a.plot, "--plot")
    except ValueError as e:
        p.error(str(e))
    games = ladder.schedule(rungs, a.players, a.games, a.seed)
    t0 = time.perf_counter()
    with tn.progress_bar(len(games), label="ladder") as bar:
        rows = ladder.play(games, seed=a.seed, workers=a.workers, progress=bar.update)
    table = ladder.rate(rows)
    print(ladder.format_ladder(table))
    print(f"{len(games)} games, seed {a.seed}, {time.perf_counter() - t0:.0f} s wall with "
          f"{a.workers} worker(s)")
    if a.plot:
        ladder.plot_ladder(table, a.plot, f"{a.players}-player ladder ({len(games)} games)")
    if a.save:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from results_io import write_result
        write_result("ladder", columns=COLUMNS, rows=result_rows(a.players, table, a.seed),
                     title=TITLE, meaning=MEANING, merge_key="players",
                     notes=NOTES)


if __name__ == "__main__":
    main()
