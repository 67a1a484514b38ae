"""Draw a Board (or a single module side) with matplotlib (Agg backend).

``render_board(board, units=..., port_tiles=...)`` returns a Figure; hexes are
coloured by terrain (mixed hexes split into sectors), with land costs, rivers
(thick blue edges), delta markers, mist (greyed and hatched when inactive), the
active-map border, ports (with their tile name) and hex ids. A legend below the
map explains every symbol drawn: terrain and map features, player colours and
the unit codes that appear (``Co`` cow, ``Lj`` lumberjack ...).
"""
from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import LineCollection, PolyCollection  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import FancyBboxPatch, Patch  # noqa: E402

from caledonia_env.map.board import Board, build_board, hex_xy  # noqa: E402
from caledonia_env.map.format import (MODULE_SIDES, MODULES, TERRAIN_FOREST, TERRAIN_LOCH,  # noqa: E402
                     TERRAIN_MOUNTAIN, TERRAIN_PASTURE, TERRAIN_PORT, odd_r_neighbors)

COLORS = {TERRAIN_PASTURE: "#b5d98a", TERRAIN_FOREST: "#3f7f3a", TERRAIN_MOUNTAIN: "#9a8c7e",
          TERRAIN_LOCH: "#7fb6e0", TERRAIN_PORT: "#c9a46b"}
TEXT_ON = {TERRAIN_PASTURE: "#1d2b12", TERRAIN_FOREST: "#ffffff", TERRAIN_MOUNTAIN: "#ffffff",
           TERRAIN_LOCH: "#0d3a63"}
RIVER_COLOR = "#1f5fbf"
PLAYER_COLORS = ["#d62728", "#1f77b4", "#f2c200", "#111111", "#8c564b", "#9467bd"]
UNIT_SHORT = {"sheep": "Sh", "cow": "Co", "field": "Fi", "cheese_dairy": "Da", "dairy": "Da",
              "bakery": "Ba", "distillery": "Di", "lumberjack": "Lj", "miner": "Mi",
              "fisherman": "Fs", "neutral": "X"}
UNIT_LABEL = {"cheese_dairy": "cheese dairy", "dairy": "cheese dairy",
              "neutral": "neutral piece (blocked)"}
NEUTRAL_COLOR = "#777777"
SQ3 = math.sqrt(3.0)


def _corners(x, y, r=1.0):
    """Pointy-top hexagon corners, counter-clockwise from the east-north-east one."""
    return [(x + r * math.cos(math.radians(30 + 60 * k)),
             y + r * math.sin(math.radians(30 + 60 * k))) for k in range(6)]


def _terrain_parts(t):
    return [bit for bit in (TERRAIN_PASTURE, TERRAIN_FOREST, TERRAIN_MOUNTAIN) if t & bit]


def _hex_polys(x, y, t, r=0.985):
    """Polygons and colours of one hex (mixed hexes: one sector per terrain)."""
    cs = _corners(x, y, r)
    parts = _terrain_parts(t) if not t & (TERRAIN_LOCH | TERRAIN_PORT) else [t]
    if len(parts) == 1:
        return [(cs, COLORS[parts[0]])]
    # split the hexagon into equal sectors of its 6 triangles (2 parts: halves, 3: thirds)
    per = 6 // len(parts)
    start = 1 if len(parts) == 2 else 0     # halves split vertically (left / right)
    out = []
    for i, bit in enumerate(parts):
        ks = [(start + i * per + j) % 6 for j in range(per + 1)]
        out.append(([(x, y)] + [cs[k] for k in ks], COLORS[bit]))
    return out


def _edge(xa, ya, xb, yb):
    mx, my = (xa + xb) / 2, (ya + yb) / 2
    dx, dy = xb - xa, yb - ya
    n = math.hypot(dx, dy)
    px, py = -dy / n * 0.5, dx / n * 0.5       # half a side (radius 1 hexes)
    return (mx + px, my + py), (mx - px, my - py)


def render_board(board: Board, ax=None, units=None, port_tiles=None, show_ids=True,
                 title=None, modules=None, extra_ports=None, show_border=True,
                 draw_ports=True, player_labels=None):
    """Draw ``board``; return the matplotlib Figure.

    ``units``: optional {node id: (player index, unit name)} drawn as coloured
    discs (e.g. ``{12: (0, "distillery")}``; player -1 or None with ``"neutral"``
    is a grey blocker). ``port_tiles``: optional {corner index 0..3 or port node
    id: tile name} shown on the ports. ``player_labels``: optional legend text per
    player index (e.g. clan names); players with units are always listed.
    ``modules``: draw only these module indices (0..3). ``extra_ports``: list of
    (x, y, text, [hex node ids]) drawn like ports (used for single-side images).
    """
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(11, 10))
    else:
        fig = ax.figure
    ax.set_aspect("equal")
    ax.axis("off")
    small = board.num_players <= 2
    units = {int(k): val for k, val in (units or {}).items()}
    keep = np.ones(board.n_nodes, bool)
    if modules is not None:
        keep = np.isin(board.module, list(modules))
    hexes = [v for v in range(board.n_hex) if keep[v]]
    xy = board.xy

    fills, fill_colors, outlines, hatched, dashed = [], [], [], [], []
    for v in hexes:
        t = int(board.terrain[v])
        x, y = xy[v]
        inactive = not board.active[v]
        for poly, col in _hex_polys(x, y, t):
            fills.append(poly)
            fill_colors.append(to_rgba(col, 0.35 if inactive else 1.0))
        outlines.append(_corners(x, y, 0.985))
        if board.mist[v]:
            (hatched if inactive else dashed).append(
                _corners(x, y, 0.985) if inactive else _corners(x, y, 0.80))
        tc = TEXT_ON.get(_terrain_parts(t)[0] if not t & TERRAIN_LOCH else TERRAIN_LOCH, "#000")
        if inactive:
            tc = "#333333"
        occupied = v in units
        if board.land_cost[v] > 0:
            ax.text(x, y - (0.45 if occupied else 0.18), f"£{int(board.land_cost[v])}",
                    ha="center", va="center", fontsize=7 if occupied else 9, fontweight="bold",
                    color=tc, zorder=6)
        if show_ids:
            ax.text(x, y + 0.55, board.labels[v], ha="center", va="center", fontsize=6,
                    color=tc, zorder=6)
        if t == TERRAIN_LOCH:
            ax.text(x, y - 0.12, "~", ha="center", va="center", fontsize=13, color="#2c6fa8",
                    zorder=5)
    ax.add_collection(PolyCollection(fills, facecolors=fill_colors, edgecolors="none", zorder=1))
    ax.add_collection(PolyCollection(outlines, facecolors="none", edgecolors="#5a5a5a",
                                     linewidths=0.6, zorder=2))
    if hatched:
        ax.add_collection(PolyCollection(hatched, facecolors=to_rgba("#8c8c8c", 0.55),
                                         edgecolors="none", hatch="///", zorder=3))
    if dashed:
        ax.add_collection(PolyCollection(dashed, facecolors="none", edgecolors="#ffffff",
                                         linewidths=1.0, linestyles=(0, (2, 2)), zorder=3))
    deltas = [xy[v] for v in hexes if board.delta[v]]
    if deltas:
        d = np.array(deltas)
        ax.plot(d[:, 0] + 0.48, d[:, 1] - 0.5, ls="none", marker="^", ms=6.5, color="#0b3d91",
                markeredgecolor="white", markeredgewidth=0.6, zorder=7)

    # rivers
    segs = [_edge(*xy[u], *xy[v]) for u, v in board.river_pairs if keep[u] and keep[v]]
    ax.add_collection(LineCollection(segs, colors=RIVER_COLOR, linewidths=4.2,
                                     capstyle="round", zorder=8))

    # module seams
    at_pos = {(int(c), int(r)): v for v, (c, r) in enumerate(board.coords[:board.n_hex])}
    segs = [_edge(*xy[v], *xy[w]) for v in hexes for w in board.adjacent[v]
            if v < w < board.n_hex and board.module[w] != board.module[v] and keep[w]]
    ax.add_collection(LineCollection(segs, colors="#404040", linewidths=1.4, zorder=2.5))

    # border of the active map: edges of active land hexes facing off-map / inactive positions
    if show_border:
        segs = []
        for v in hexes:
            if not board.border[v]:
                continue
            c, r = (int(a) for a in board.coords[v])
            for p in odd_r_neighbors(c, r):
                w = at_pos.get(p)
                if w is None or not board.active[w]:
                    segs.append(_edge(*xy[v], *hex_xy(*p)))
        ax.add_collection(LineCollection(segs, colors="#c0392b", linewidths=1.6, alpha=0.85,
                                         zorder=7))

    # ports
    ports = []
    for k, p in enumerate(range(board.n_hex, board.n_nodes)):
        if not keep[p] or not draw_ports:
            continue
        nbs = [int(w) for w in board.adjacent[p] if w >= 0]
        name = None
        if port_tiles:
            name = port_tiles.get(k, port_tiles.get(p))
        text = board.labels[p] + (f"\n{name}" if name else "")
        ports.append((xy[p][0], xy[p][1], text, nbs))
    for x, y, text, nbs in ports + list(extra_ports or []):
        ax.add_collection(LineCollection([[(x, y), tuple(xy[w])] for w in nbs],
                                         colors="#7a5a2a", linewidths=1.2,
                                         linestyles=(0, (3, 2)), zorder=4))
        ax.add_patch(FancyBboxPatch((x - 0.72, y - 0.42), 1.44, 0.84,
                                    boxstyle="round,pad=0.05,rounding_size=0.25",
                                    facecolor=COLORS[TERRAIN_PORT], edgecolor="#5a3d12", lw=1.2,
                                    zorder=9))
        ax.text(x, y, text, ha="center", va="center", fontsize=6.5, fontweight="bold",
                color="#3b2505", zorder=10)

    # units
    for v, (player, unit) in units.items():
        x, y = xy[int(v)]
        col = _player_color(player)
        ax.add_patch(plt.Circle((x, y + 0.08), 0.33, facecolor=col, edgecolor="white",
                                lw=1.2, zorder=11))
        short = UNIT_SHORT.get(str(unit), str(unit)[:2].title())
        ax.text(x, y + 0.08, short, ha="center", va="center", fontsize=6.5, fontweight="bold",
                color="white" if col not in ("#f2c200",) else "black", zorder=12)

    pts = [xy[v] for v in hexes] + [(p[0], p[1]) for p in ports + list(extra_ports or [])]
    pts = np.array(pts)
    ax.set_xlim(pts[:, 0].min() - 1.5, pts[:, 0].max() + 1.5)
    ax.set_ylim(pts[:, 1].min() - 1.5, pts[:, 1].max() + 1.5)
    if title is None:
        title = (f"Clans of Caledonia map {','.join(board.config)} — {board.num_players} "
                 f"player{'s' if board.num_players > 1 else ''}"
                 f" ({'small map: misted hexes inactive' if small else 'full map'})")
    if title:
        ax.set_title(title, fontsize=11)
    rows = _legend(fig if own else ax, units, player_labels, bool(hatched), bool(dashed),
                   bool(deltas), show_border, bool(ports or extra_ports), bool(port_tiles),
                   show_ids)
    if own:        # keep room below the map for the legend rows (figure coordinates)
        fig.tight_layout(rect=(0, 0.028 * rows + 0.01, 1, 0.985))
    else:
        fig.tight_layout()
    return fig


def _player_color(player) -> str:
    if player is None or int(player) < 0:
        return NEUTRAL_COLOR
    return PLAYER_COLORS[int(player) % len(PLAYER_COLORS)]


def _legend(where, units, player_labels, hatched, dashed, deltas, border, ports, port_tiles,
            ids) -> int:
    """Legends below the map (at the bottom of the figure, or below the axes ``where``): map
    symbols, then players and the unit codes drawn. Returns the number of legend rows."""
    grey = dict(ls="none", color="#333333")
    h = [Patch(facecolor=COLORS[TERRAIN_PASTURE], label="pasture"),
         Patch(facecolor=COLORS[TERRAIN_FOREST], label="forest"),
         Patch(facecolor=COLORS[TERRAIN_MOUNTAIN], label="mountain"),
         Patch(facecolor=COLORS[TERRAIN_LOCH], label="loch (~)"),
         Line2D([0], [0], marker="$£2$", ms=13, label="land cost (£)", **grey),
         Line2D([0], [0], color=RIVER_COLOR, lw=4, label="river"),
         Line2D([0], [0], color="#404040", lw=1.4, label="module edge")]
    if ids:
        h.append(Line2D([0], [0], marker="$A2$", ms=10, label="hex id (A2-07)", **grey))
    if deltas:
        h.append(Line2D([0], [0], marker="^", ls="none", color="#0b3d91", label="delta"))
    if hatched:
        h.append(Patch(facecolor="#8c8c8c", hatch="///", alpha=0.6, label="mist (inactive)"))
    if dashed:
        h.append(Patch(facecolor=COLORS[TERRAIN_PASTURE], edgecolor="white", ls=(0, (2, 2)),
                       label="mist hex (in play)"))
    if border:
        h.append(Line2D([0], [0], color="#c0392b", lw=1.6, label="active-map border"))
    if ports:
        h.append(Patch(facecolor=COLORS[TERRAIN_PORT], edgecolor="#5a3d12",
                       label="port (P1-P9: its printed tile number)" if port_tiles else "port"))
    players = sorted({int(p) for p, _ in units.values() if p is not None and int(p) >= 0}
                     | set(range(len(player_labels or ()))))
    kinds = []
    for _, unit in units.values():
        if str(unit) not in kinds:
            kinds.append(str(unit))
    h2 = [Line2D([0], [0], marker="o", ms=9, ls="none", color=_player_color(p),
                 label=f"player {p}" + (f": {player_labels[p]}" if player_labels and
                                       p < len(player_labels) and player_labels[p] else ""))
          for p in players]
    order = {u: i for i, u in enumerate(UNIT_SHORT)}
    for unit in sorted(kinds, key=lambda u: order.get(u, len(order))):
        code = UNIT_SHORT.get(unit, unit[:2].title())
        h2.append(Line2D([0], [0], marker=f"${code}$", ms=10, ls="none", color="#222222",
                         label=UNIT_LABEL.get(unit, unit.replace("_", " "))))
    fig_level = isinstance(where, Figure)
    rows = [(h, 6)] + ([(h2, 8)] if h2 else [])
    n_rows = sum(-(-len(hs) // ncol) for hs, ncol in rows)
    y = 0.0
    for k, (hs, ncol) in enumerate(reversed(rows)):    # bottom block first
        if fig_level:
            lg = where.legend(handles=hs, loc="lower center", bbox_to_anchor=(0.5, y),
                              ncol=min(len(hs), ncol), fontsize=7, frameon=False)
            y += 0.028 * -(-len(hs) // ncol)
        else:
            lg = where.legend(handles=hs, loc="upper center",
                              bbox_to_anchor=(0.5, -0.07 * (len(rows) - 1 - k)),
                              ncol=min(len(hs), ncol), fontsize=7, frameon=False)
            where.add_artist(lg)
    return n_rows


def render_side(side: str, ax=None, show_ids=True):
    """Draw one module side alone, with both of its port positions ('1-2' and '3-4')."""
    side = side.upper()
    if side not in MODULE_SIDES:
        raise ValueError(f"unknown side {side!r}; sides: {list(MODULE_SIDES)}")
    m = MODULES.index(side[0])
    config = tuple(side if i == m else f"{MODULES[i]}1" for i in range(4))
    board = build_board(config, num_players=4)
    small = build_board(config, num_players=2)
    p = board.n_hex + m
    extra = []
    for pc, b in (("3-4", board), ("1-2", small)):
        nbs = [int(w) for w in b.adjacent[p] if w >= 0]
        x, y = b.xy[p]
        extra.append((x, y, f"port {pc}\nplayers", nbs))
    fig = render_board(board, ax=ax, show_ids=show_ids, modules=[m], extra_ports=extra,
                       title=f"Module side {side} (misted hexes dashed; ports for 1-2 and 3-4 "
                             f"players)", show_border=False, draw_ports=False)
    # hide the board's own port (drawn again as extra ports)
    return fig


def board_to_rgb_array(board: Board, units=None, port_tiles=None, dpi=80) -> np.ndarray:
    """Render to an (H, W, 3) uint8 array (for ``render_mode="rgb_array"``)."""
    fig = render_board(board, units=units, port_tiles=port_tiles)
    fig.set_dpi(dpi)
    fig.canvas.draw()
    buf = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    plt.close(fig)
    return buf


__all__ = ["render_board", "render_side", "board_to_rgb_array"]
