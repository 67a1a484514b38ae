"""This project next to well-known game simulators, one harness, one process, one machine.

Every row plays random legal moves through whole games (fresh game each time) and
reports the median of ``--repeats`` runs of ``--seconds`` each, with the min–max spread:

* engine loop inside numba: ``engine.playout.random_games`` (mask before every step),
  4 players, drafted clans — next to OpenSpiel's C++ ``maedn`` 4p played by C++ uniform
  random bots (``pyspiel.evaluate_bots``: the whole loop stays in C++).
* Python loop: ``legal_actions()`` + ``random.choice`` + ``step()`` — next to the same
  loop over OpenSpiel chess through pyspiel (``legal_actions()`` + ``apply_action()``).
* ``Game.clone()`` of a mid-game position — next to ``state.clone()`` of chess.
* PettingZoo AEC loop (``agent_iter`` / ``last()`` / mask / ``step()``), 4 players —
  next to PettingZoo's connect-four and chess (every int8 mask read as ``mask.view(bool)``).
* whole 4p games per thread — next to Catanatron 4p with random players.

Peers come from the optional extra ``bench`` (``pip install -e .[bench]``); a peer
that is not installed is skipped with a note. Prints a markdown table.

    python benchmarks/compare_peers.py               # 3 x 2 s per row
    python benchmarks/compare_peers.py --seconds 5   # longer runs
    python benchmarks/compare_peers.py --json        # one JSON object
"""
from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import platform
import random
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

PLAYERS = 4


def measure(play, seconds: float, repeats: int) -> dict:
    """``play()`` runs one unit (a game, a batch) and returns (steps, games); rates per run."""
    play()                                          # warm-up: compile, caches, imports
    steps_rates, games_rates = [], []
    for _ in range(repeats):
        steps = games = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            k, g = play()
            steps += k
            games += g
        dt = time.perf_counter() - t0
        steps_rates.append(steps / dt)
        games_rates.append(games / dt)
    return {"steps_per_s": statistics.median(steps_rates), "spread": [min(steps_rates),
            max(steps_rates)], "games_per_s": statistics.median(games_rates)}


# ------------------------------------------------------------------ this project
def ours_engine():
    import numpy as np

    from caledonia_env import Game, GameConfig
    from caledonia_env.engine.automa.deck import automa_switch
    from caledonia_env.engine.layout import STATE_SIZE
    from caledonia_env.engine.playout import random_games
    T = Game(GameConfig(num_players=PLAYERS, seed=0, clans="draft")).tables
    automa = automa_switch(T)
    finals = np.zeros((0, STATE_SIZE), np.int32)
    seed = [1]

    def play(n=20):
        k = random_games(T, n, seed[0], finals, automa)
        if k < 0:
            raise RuntimeError("a random game reached a state with no legal action")
        seed[0] += n
        return k, n
    return play


def prebuild():
    """Build the tables of all 16 maps once (Game() draws a map per seed and caches them)."""
    from caledonia_env import GameConfig
    from caledonia_env.envs.vector import _map_options
    from caledonia_env.game import static_tables
    cfg = GameConfig(num_players=PLAYERS)
    for sides in _map_options(None):
        static_tables(cfg, sides)


def ours_python_loop():
    from caledonia_env import Game, GameConfig
    prebuild()
    rng = random.Random(0)
    seed = [0]

    def play():
        g = Game(GameConfig(num_players=PLAYERS, seed=seed[0]))
        seed[0] += 1
        n = 0
        while not g.is_terminal:
            g.step(rng.choice(g.legal_actions()))
            n += 1
        return n, 1
    return play


def ours_midgame():
    from caledonia_env import Game, GameConfig
    g = Game(GameConfig(num_players=PLAYERS, seed=3))
    rng = random.Random(3)
    for _ in range(100):                            # about half of a 4p game
        g.step(rng.choice(g.legal_actions()))
    return g


def ours_aec():
    import caledonia_env
    prebuild()
    env = caledonia_env.env(num_players=PLAYERS)
    return aec_loop(env)


def aec_loop(env, seed: int = 0):
    """The standard PettingZoo loop with a uniformly random legal action (same for all);
    ``play()`` plays one game (reset seeds ``seed``, ``seed + 1``, …) and returns
    (steps, 1). ``env_speed.py`` times the AEC env with it too."""
    rng = random.Random(seed)
    seed = [seed]

    def play():
        env.reset(seed=seed[0])
        seed[0] += 1
        n = 0
        for _agent in env.agent_iter():
            obs, _reward, term, trunc, _info = env.last()
            if term or trunc:
                action = None
            else:
                mask = obs["action_mask"]             # int8 0/1: read it as bool,
                if mask.dtype.itemsize == 1:           # numpy's nonzero is 5x faster so
                    mask = mask.view(bool)
                action = rng.choice(mask.nonzero()[0])
            env.step(action)
            n += 1
        return n, 1
    return play


def clone_rate(state, seconds, repeats):
    def play(k=1000):
        for _ in range(k):
            state.clone()
        return k, 0
    return measure(play, seconds, repeats)


# ------------------------------------------------------------------ peers
def spiel_python_loop(name, **params):
    import pyspiel
    game = pyspiel.load_game(name, params)
    rng = random.Random(0)

    def play():
        state = game.new_initial_state()
        n = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            n += 1
        return n, 1
    return play


def spiel_cpp_bots(name, **params):
    """Whole games in C++: ``evaluate_bots`` with C++ uniform random bots (chance in C++)."""
    import pyspiel
    game = pyspiel.load_game(name, params)
    bots = [pyspiel.make_uniform_random_bot(p, 1234 + p) for p in range(game.num_players())]
    seed = [0]

    def play(n=20):
        for _ in range(n):
            pyspiel.evaluate_bots(game.new_initial_state(), bots, seed[0])
            seed[0] += 1
        return 0, n                                 # moves: see spiel_cpp_steps
    return play


def spiel_cpp_steps(name, games=50, **params):
    """Mean moves (chance included) of a random ``name`` game, from the Python loop."""
    play = spiel_python_loop(name, **params)
    return sum(play()[0] for _ in range(games)) / games


def spiel_midgame(name):
    import pyspiel
    state = pyspiel.load_game(name).new_initial_state()
    rng = random.Random(3)
    for _ in range(40):
        state.apply_action(rng.choice(state.legal_actions()))
    return state


def catan_games():
    from catanatron import Color, Game, RandomPlayer
    colors = [Color.RED, Color.BLUE, Color.WHITE, Color.ORANGE]

    def play():
        game = Game([RandomPlayer(c) for c in colors])
        game.play()
        return game.state.num_turns, 1
    return play


# ------------------------------------------------------------------ report
def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    versions = {"python": platform.python_version()}
    for pkg in ("caledonia-env", "numpy", "numba", "pettingzoo", "open_spiel", "catanatron"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    return {"cpu": cpu, "cores": os.cpu_count(), "load_start": list(os.getloadavg()),
            "versions": versions}


def have(module) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def run(seconds, repeats) -> dict:
    m = lambda play: measure(play, seconds, repeats)           # noqa: E731
    rows = {}
    rows["engine"] = {"ours": m(ours_engine())}
    rows["python"] = {"ours": m(ours_python_loop())}
    rows["clone"] = {"ours": clone_rate(ours_midgame(), seconds, repeats)}
    rows["aec"] = {"ours": m(ours_aec())}
    rows["games"] = {"ours": dict(rows["engine"]["ours"])}
    rows["games"]["ours_python"] = rows["python"]["ours"]
    if have("pyspiel"):
        eng = m(spiel_cpp_bots("maedn", players=PLAYERS))
        eng["steps_per_game"] = spiel_cpp_steps("maedn", players=PLAYERS)
        eng["steps_per_s"] = eng["games_per_s"] * eng["steps_per_game"]
        eng["spread"] = None
        rows["engine"]["peer"] = {"OpenSpiel C++ maedn 4p (evaluate_bots, C++ random bots)": eng}
        rows["python"]["peer"] = {"OpenSpiel chess via pyspiel": m(spiel_python_loop("chess"))}
        rows["clone"]["peer"] = {"OpenSpiel chess state.clone()":
                                 clone_rate(spiel_midgame("chess"), seconds, repeats)}
    if have("pettingzoo.classic"):
        from pettingzoo.classic import chess_v6, connect_four_v3
        rows["aec"]["peer"] = {"PettingZoo connect_four_v3": m(aec_loop(connect_four_v3.env())),
                               "PettingZoo chess_v6": m(aec_loop(chess_v6.env()))}
    if have("catanatron"):
        rows["games"]["peer"] = {"Catanatron 4p, random players": m(catan_games())}
    return rows


LABELS = {
    "engine": f"engine loop inside numba, {PLAYERS}p drafted clans (mask every step)",
    "python": f"Python loop: legal_actions() + random choice + step(), {PLAYERS}p",
    "clone": "Game.clone() (mid-game)",
    "aec": f"PettingZoo AEC loop (last() + mask + step()), {PLAYERS}p",
    "games": f"whole {PLAYERS}p games per thread",
}
MISSING = {"engine": "OpenSpiel not installed (extra `bench`)",
           "python": "OpenSpiel not installed", "clone": "OpenSpiel not installed",
           "aec": "pettingzoo[classic] not installed", "games": "catanatron not installed"}


def fmt(r, games=False) -> str:
    if games:
        return f"{r['games_per_s']:,.1f} games/s"
    text = f"{r['steps_per_s']:,.0f}/s"
    if r.get("spread"):
        text += f" ({r['spread'][0]:,.0f}–{r['spread'][1]:,.0f})"
    return text


def table(rows) -> str:
    out = ["| what | this project | peer on the same machine | ratio |", "|---|---|---|---|"]
    for key, label in LABELS.items():
        row = rows[key]
        games = key == "games"
        ours = fmt(row["ours"], games)
        if key == "engine":
            ours += f", {row['ours']['games_per_s']:,.0f} games/s"
        if games:
            ours = (f"{row['ours']['games_per_s']:,.1f} (numba engine), "
                    f"{row['ours_python']['games_per_s']:,.1f} (Python API loop)")
        peers = row.get("peer") or {}
        if not peers:
            out.append(f"| {label} | {ours} | {MISSING[key]} | – |")
            continue
        cells, ratios = [], []
        for name, r in peers.items():
            cell = f"{name}: {fmt(r, games)}"
            if key == "engine":
                cell += f", {r['games_per_s']:,.0f} games/s (~{r['steps_per_game']:.0f} moves/game)"
            cells.append(cell)
            q = "games_per_s" if games else "steps_per_s"
            base = row["ours_python"] if games else row["ours"]
            ratios.append(f"{base[q] / r[q]:.2f}")
        out.append(f"| {label} | {ours} | {'; '.join(cells)} | {' / '.join(ratios)} |")
    return "\n".join(out)


def save(rows: dict, info: dict) -> None:
    """The table as a result file (benchmarks/results_io.py): the same cells as :func:`table`."""
    from results_io import write_result
    keys = ("what", "ours", "peer", "ratio")
    cells = [dict(zip(keys, (c.strip() for c in line.strip("|").split(" | "))))
             for line in table(rows).splitlines()[2:]]
    v = info["versions"]
    write_result("compare_peers", rows=cells, columns=[
        {"key": "what", "label": "what"}, {"key": "ours", "label": "this project"},
        {"key": "peer", "label": "peer on the same machine"}, {"key": "ratio", "label": "ratio"}],
        notes=f"Load average {info['load_start'][0]:.2f} at start, {info['load_end'][0]:.2f} at "
              "end; versions: " + ", ".join(f"{k} {x}" for k, x in v.items() if x) + ".")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one run (s)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per row (median)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--save", action="store_true",
                        help="also write the table to benchmarks/results/compare_peers-DATE.json "
                             "(benchmarks/report.py renders it)")
    args = parser.parse_args()
    if args.seconds <= 0 or args.repeats < 1:
        parser.error("--seconds must be > 0 and --repeats >= 1")
    info = machine()
    rows = run(args.seconds, args.repeats)
    info["load_end"] = list(os.getloadavg())
    if args.save:
        save(rows, info)
    if args.json:
        print(json.dumps({"machine": info, "rows": rows}))
        return 0
    v = info["versions"]
    print(f"machine: {info['cpu']}, {info['cores']} cores, load average "
          f"{info['load_start'][0]:.2f} at start, {info['load_end'][0]:.2f} at end")
    print("versions: " + ", ".join(f"{k} {x}" for k, x in v.items() if x))
    print(f"median of {args.repeats} x {args.seconds:g} s per row (min–max of the runs); "
          f"ratio = this project / peer (games/s for the last row: Python API loop)\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
