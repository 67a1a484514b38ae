"""The ``caledonia`` command (also ``python -m caledonia_env``)."""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

EXAMPLES = """examples:
  caledonia demo                          # 4 players, random map from seed 0, map.png
  caledonia demo --players 2 --seed 7 --map A1,B2,C1,D2 -o board.png
"""


def _cmd_demo(args) -> int:
    from . import Game, GameConfig
    from .map.render import render_board

    try:
        config = GameConfig(num_players=args.players, seed=args.seed, map=args.map)
    except ValueError as e:
        print(f"caledonia demo: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    game = Game(config)
    rng = np.random.default_rng(args.seed)
    while not game.is_terminal:
        game.step(rng.choice(game.legal_actions()))
    elapsed = time.perf_counter() - t0
    print(game.render_text())
    print(f"\n{len(game.history)} decisions in {elapsed:.2f} s (includes numba compile on first run)")
    if args.output:
        units = {}
        s = game.state
        from .engine import layout as L
        from .engine.constants import NEUTRAL, OCC_STRIDE, UNIT_NAMES
        for m in range(game.board.n_nodes):
            o = int(s[L.S_OCC + m])
            if o >= 0 and o != NEUTRAL:
                units[m] = (o // OCC_STRIDE, UNIT_NAMES[o % OCC_STRIDE])
        ports = {c: f"P{int(s[L.S_PORTS + c]) + 1}" for c in range(4) if s[L.S_PORTS + c] >= 0}
        fig = render_board(game.board, units=units, port_tiles=ports)
        fig.savefig(args.output, dpi=110)
        print(f"final map written to {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="caledonia", description="Clans of Caledonia simulator for RL and balance research.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo", help="play one game with random legal moves, print it and draw the final map",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES)
    demo.add_argument("--players", type=int, default=4, help="number of players, 2-4 (default 4)")
    demo.add_argument("--seed", type=int, default=0, help="seed for map, tiles and moves (default 0)")
    demo.add_argument("--map", default=None,
                      help="module sides A,B,C,D e.g. A1,B2,C1,D2 (default: drawn from the seed)")
    demo.add_argument("-o", "--output", default="map.png",
                      help="PNG of the final map (default map.png; '' to skip)")
    demo.set_defaults(func=_cmd_demo)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args)
