"""Command line: draw a map, draw one module side, validate side files, or dump a board.

Run ``python -m caledonia_env.map --help``.
"""
from __future__ import annotations

import argparse
import json
import sys

import matplotlib.pyplot as plt

from caledonia_env.map.board import all_configs, build_board
from caledonia_env.map.format import (MODULE_SIDES, TERRAIN_FOREST, TERRAIN_LOCH, TERRAIN_MOUNTAIN,
                     TERRAIN_PASTURE, MapError, load_side)
from caledonia_env.map.render import render_board, render_side

EPILOG = """examples:
  python -m caledonia_env.map --config A1,B2,C1,D2 --players 4 -o map.png
  python -m caledonia_env.map --config A2,B1,C2,D1 --players 2 -o small.png --no-ids
  python -m caledonia_env.map --side C2 -o C2.png          # one module side, both port spots
  python -m caledonia_env.map --validate                    # check all eight bundled sides
  python -m caledonia_env.map --validate my_sides/A1.json   # check a typed-in side file
  python -m caledonia_env.map --config A1,B1,C1,D1 --info    # sizes and counts, no drawing
  python -m caledonia_env.map --config A1,B1,C1,D1 --json board.json

--config lists one side per module in order A,B,C,D (A top-left, B top-right,
C bottom-right, D bottom-left); an entry may be a path to a side JSON file.
With --players 1 or 2 the misted edge hexes are inactive and the ports sit at
their 1-2-player positions. See docs/map.md for the file format.
"""


def _info(board) -> str:
    t = board.terrain[:board.n_hex]
    land = (t & (TERRAIN_PASTURE | TERRAIN_FOREST | TERRAIN_MOUNTAIN)) > 0
    act = board.active[:board.n_hex] & land
    bits = [bin(int(x)).count("1") for x in t]
    lines = [
        f"map {','.join(board.config)}, {board.num_players} player(s)",
        f"  hexes {board.n_hex}, nodes {board.n_nodes} (4 ports)",
        f"  land {int(land.sum())} (active {int(act.sum())}), "
        f"lochs {int((t == TERRAIN_LOCH).sum())}",
        f"  pasture-only {int((t == TERRAIN_PASTURE).sum())}, forest-only "
        f"{int((t == TERRAIN_FOREST).sum())}, mountain-only {int((t == TERRAIN_MOUNTAIN).sum())}, "
        f"mixed {sum(1 for b, lnd in zip(bits, land) if lnd and b > 1)}",
        f"  £1 hexes (active) {int(((board.land_cost[:board.n_hex] == 1) & act).sum())}, "
        f"border hexes {int(board.border.sum())}, deltas {int(board.delta.sum())}, "
        f"rivers {len(board.river_pairs)}",
        "  ports: " + ", ".join(
            f"{board.labels[p]} next to " + "/".join(board.labels[w] for w in board.adjacent[p]
                                                     if w >= 0)
            for p in range(board.n_hex, board.n_nodes)),
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m caledonia_env.map",
        description="Draw or check Clans of Caledonia maps (module sides A1..D2).",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    parser.add_argument("--config", default="A1,B1,C1,D1",
                        help="sides for modules A,B,C,D, e.g. A1,B2,C1,D2 (default A1,B1,C1,D1)")
    parser.add_argument("--players", type=int, default=4, choices=[1, 2, 3, 4],
                        help="player count: 1-2 = small map (mist inactive), 3-4 = full map "
                             "(default 4)")
    parser.add_argument("-o", "--output", default=None,
                        help="PNG file to write (default map.png unless --info/--json/--validate)")
    parser.add_argument("--side", default=None, help="draw a single module side, e.g. C2")
    parser.add_argument("--no-ids", action="store_true", help="do not print hex labels")
    parser.add_argument("--dpi", type=int, default=110, help="PNG resolution (default 110)")
    parser.add_argument("--info", action="store_true", help="print sizes and counts")
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="write board.to_dict() as JSON ('-' for stdout)")
    parser.add_argument("--validate", nargs="*", metavar="SIDE",
                        help="validate side files (names or paths; default: all eight bundled "
                             "sides and all 16 configurations)")
    args = parser.parse_args(argv)

    try:
        if args.validate is not None:
            names = args.validate or list(MODULE_SIDES)
            for n in names:
                s = load_side(n)
                print(f"ok  {s.source}: side {s.name}, {len(s.hexes)} hexes, "
                      f"{len(s.rivers)} river edges")
            if not args.validate:
                for cfg in all_configs():
                    for n in (2, 4):
                        build_board(cfg, n)
                print("ok  all 16 configurations assemble for 2 and 4 players")
            return 0
        if args.side:
            fig = render_side(args.side, show_ids=not args.no_ids)
            out = args.output or f"{args.side.upper()}.png"
            fig.savefig(out, dpi=args.dpi)
            plt.close(fig)
            print(f"wrote {out}")
            return 0
        board = build_board(args.config, num_players=args.players)
        if args.info:
            print(_info(board))
        if args.json:
            text = json.dumps(board.to_dict())
            if args.json == "-":
                print(text)
            else:
                with open(args.json, "w") as f:
                    f.write(text)
                print(f"wrote {args.json}")
        if args.output or not (args.info or args.json):
            fig = render_board(board, show_ids=not args.no_ids)
            out = args.output or "map.png"
            fig.savefig(out, dpi=args.dpi)
            plt.close(fig)
            print(f"wrote {out}")
    except MapError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
