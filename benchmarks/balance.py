"""The clan-balance tables of docs/results.md, for each player count, as result files.

Runs ``caledonia balance --players P --agent A --games N --seed S --out <tmp>.csv`` for each
player count and summarises its rows: per clan the games, the win share (ties split) with its
95% Wilson interval and the mean VP; per seat the same (the first-player advantage). Par is
100 / P %. With ``--save`` the two tables are written as result files (``balance``, one row
per player count and clan; ``balance_seats``, one row per player count and seat), merged into
today's files by player count and agent, so one run per player count and agent fills one
file. ``--design drafted`` plays the standard game instead (the agents draft the clans,
R-1.7) and makes one table, ``balance_draft``: per clan its pick rate (the share of the games
it was drafted in) and its win share in those games.

    python benchmarks/balance.py --players 2 3 4 --games 4000 --save
    python benchmarks/balance.py --agent 'greedy:{players}p' --games 2000 --save  # tuned sets
    python benchmarks/balance.py --design drafted --agent 'greedy:{players}p' --players 2 --save
    python benchmarks/balance.py --from-csv study.csv        # summarise rows already played
"""
from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from caledonia_env.tournament.stats import clan_title, wilson


def play(players: int, agent: str, games: int, seed: int, workers: int, ruleset: str | None,
         folder: Path, design: str = "assigned") -> Path:
    """The rows of one balance study, played by the ``caledonia`` CLI into ``folder``."""
    out = folder / f"balance_{players}p.csv"
    cmd = [sys.executable, "-m", "caledonia_env", "balance", "--players", str(players),
           "--agent", agent, "--games", str(games), "--seed", str(seed), "--workers",
           str(workers), "--design", design, "--out", str(out),
           "--plot", str(folder / f"balance_{players}p.png")]
    if ruleset:
        cmd += ["--ruleset", ruleset]
    print("+ " + " ".join(cmd[2:]), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def summarise(path: Path) -> tuple[int, str, dict, dict]:
    """(players, agent, {clan: stats}, {seat: stats}) of a balance study's rows; stats are
    games, wins (ties split), the summed VP."""
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    if not rows:
        raise SystemExit(f"{path}: no rows")
    per_game = defaultdict(int)
    for r in rows:
        per_game[r["game"]] += 1
    players = max(per_game.values())
    agents = sorted({r["agent"] for r in rows})
    clans: dict = defaultdict(lambda: [0, 0.0, 0.0])
    seats: dict = defaultdict(lambda: [0, 0.0, 0.0])
    for r in rows:
        for key, table in ((r["clan"], clans), (int(r["seat"]), seats)):
            table[key][0] += 1
            table[key][1] += float(r["win"])
            table[key][2] += float(r["total"])
    return players, ",".join(agents), dict(clans), dict(seats)


def result_rows(players: int, agent: str, stats: dict, key: str, name) -> list[dict]:
    out = []
    for k in sorted(stats):
        n, wins, vp = stats[k]
        lo, hi = wilson(wins, n)
        out.append({"players": players, "agent": f"`{agent}`",
                    key: name(k), "games": n,
                    "win": [round(100 * wins / n, 1), round(100 * lo, 1), round(100 * hi, 1)],
                    "par": round(100 / players, 1), "vp": round(vp / n, 1)})
    return out


def draft_rows(players: int, agent: str, clans: dict, games: int) -> list[dict]:
    """One row per clan of a drafted study: its pick rate (games it was drafted in / games)
    and, as :func:`result_rows`, its win share and mean VP in those games."""
    rows = result_rows(players, agent, clans, "clan", clan_title)
    for r in rows:
        r.update(played=games, picked=round(100 * r["games"] / games, 1))
    return rows


def print_table(title: str, rows: list[dict], key: str) -> None:
    print(f"\n{title}")
    print(f"{'players':>7} {key:<11} {'games':>6} {'win %':>6} {'95% CI':>13} {'par':>5} {'VP':>6}")
    for r in rows:
        w = r["win"]
        print(f"{r['players']:>7} {r[key]!s:<11} {r['games']:>6} {w[0]:>6.1f} "
              f"{w[1]:>6.1f}-{w[2]:<6.1f} {r['par']:>5.1f} {r['vp']:>6.1f}")


TITLES = {
    "balance": ("Clan balance (2, 3 and 4 players)",
                "Win % (95% Wilson CI, ties split) and mean VP of each clan with the same agent "
                "in every seat, on a balanced schedule of clan combinations and seat rotations; "
                "par is 100 / players %. These describe clans as played by this agent on the "
                "project's original map with the bundled default (the printed market of source "
                "PHP, the text readings of Buchanan, MacKenzie's cellar and import rarity; the "
                "remaining estimates of docs/ruleset.md), not the printed game."),
    "balance_draft": ("Drafted clans: pick rates and win rates (2, 3 and 4 players)",
                      "The standard game (R-1.7: the agents draft the clans, the first player "
                      "drawn per game) with the same agent in every seat: per clan the share "
                      "of the games it was drafted in (its pick rate; the shares of a player "
                      "count sum to the player count x 100%), and its win % (95% Wilson CI, "
                      "ties split) and mean VP in those games; par is 100 / players %. A win "
                      "rate here counts only the games the agent chose the clan, so it mixes "
                      "the clan with the position that made the agent pick it."),
    "balance_seats": ("Seat balance (first-player advantage)",
                      "Win % (95% Wilson CI, ties split) and mean VP of each seat (seat 1 plays "
                      "first in round 1) in the same games as the clan balance table; par is "
                      "100 / players %."),
}

MERGED_NOTE = ("One run per agent, merged by player count and agent: the command above is the "
               "latest run; the rows of another agent come from the same command with that "
               "agent as --agent (greedy: --agent greedy; the tuned sets: --agent "
               "'greedy:{players}p').")

COLUMNS = [{"key": "players", "label": "players"}, {"key": "agent", "label": "agent"},
           None, {"key": "games", "label": "games", "format": "d"},
           {"key": "win", "label": "win % (95% CI)", "format": ".1f"},
           {"key": "par", "label": "par %", "format": ".1f"},
           {"key": "vp", "label": "mean VP", "format": ".1f"}]


DRAFT_COLUMNS = (COLUMNS[:2] + [{"key": "clan", "label": "clan"},
                                 {"key": "played", "label": "games played", "format": "d"},
                                 {"key": "picked", "label": "drafted in % of games",
                                  "format": ".1f"},
                                 {"key": "games", "label": "games drafted", "format": "d"}]
                 + COLUMNS[4:])
DRAFT_NOTE = ("One run per player count and agent, merged: the command above is the latest "
              "run; the rows of another player count come from the same command with that "
              "--players and its games played as --games.")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    p.add_argument("--players", type=int, nargs="+", default=[2, 3, 4],
                   help="player counts to study (default: 2 3 4)")
    p.add_argument("--agent", default="greedy",
                   help="the agent in every seat (default greedy); {players} is replaced by "
                        "the player count, e.g. greedy:{players}p plays each count's tuned set")
    p.add_argument("--games", type=int, default=4000, help="games per player count")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--ruleset", default=None, help="a ruleset path or bundled name")
    p.add_argument("--design", choices=("assigned", "drafted"), default="assigned",
                   help="assigned (default): the clan and seat tables of the balanced design; "
                        "drafted: the agents draft (R-1.7), the pick-rate table")
    p.add_argument("--from-csv", nargs="+", type=Path, default=None, metavar="CSV",
                   help="summarise the rows of earlier `caledonia balance --out` runs instead")
    p.add_argument("--save", action="store_true",
                   help="write the tables as result files (benchmarks/results/)")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        paths = a.from_csv or [play(n, a.agent.replace("{players}", str(n)), a.games, a.seed,
                                    a.workers, a.ruleset, Path(tmp), a.design)
                               for n in a.players]
        clan_rows, seat_rows, picked_rows = [], [], []
        for path in paths:
            players, agent, clans, seats = summarise(path)
            clan_rows += result_rows(players, agent, clans, "clan", clan_title)
            seat_rows += result_rows(players, agent, seats, "seat", lambda s: s + 1)
            if a.design == "drafted":
                picked_rows += draft_rows(players, agent, clans, seats[0][0])
    if a.design == "drafted":
        print("\npick rate by clan (games it was drafted in / games)")
        for r in picked_rows:
            print(f"{r['players']:>7} {r['clan']:<11} {r['picked']:>5.1f}%  win {r['win'][0]:.1f}% "
                  f"({r['win'][1]:.1f}-{r['win'][2]:.1f})  VP {r['vp']:.1f}")
        if a.save:
            save([("balance_draft", picked_rows, DRAFT_COLUMNS, DRAFT_NOTE)], a.ruleset)
        return 0
    print_table("win share by clan (every seat the same agent)", clan_rows, "clan")
    print_table("win share by seat (seat 1 plays first in round 1)", seat_rows, "seat")
    if a.save:
        save([(table, rows, [c if c else {"key": key, "label": key} for c in COLUMNS],
               MERGED_NOTE) for table, rows, key in (("balance", clan_rows, "clan"),
                                       ("balance_seats", seat_rows, "seat"))], a.ruleset)
    return 0


def save(tables, ruleset: str | None) -> None:
    """Write each ``(table, rows, columns, notes)`` as a result file, merged by player count
    and agent into today's file."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from results_io import write_result
    for table, rows, cols, notes in tables:
        title, meaning = TITLES[table]
        write_result(table, columns=cols, rows=rows, ruleset=ruleset or "default",
                     merge_key=("players", "agent"), title=title, meaning=meaning,
                     notes=notes)


if __name__ == "__main__":
    sys.exit(main())
