"""JSON the page reads: board geometry (once per game) and the view of one position.

The position is ``game.to_scenario()`` (docs/scenarios.md) plus the legal actions with
their names, a group and, for placements, the node they target (R-3 actions on the map).
"""
from __future__ import annotations

import dataclasses
import math

from caledonia_env.data.names import PORT_KINDS, PORT_PARAMS, PORTS, SCORING_KINDS
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import A_PLACE, A_PORT, A_ROW, A_SELECT
from caledonia_env.engine.constants import GOOD_NAMES, IMPORT_NAMES, MAX_NODES, N_CORNERS, N_UNITS, UNIT_NAMES
from caledonia_env.engine.market import market_price
from caledonia_env.map.format import odd_r_neighbors
from caledonia_env.map.board import hex_xy
from caledonia_env.map.render import COLORS, PLAYER_COLORS, RIVER_COLOR, UNIT_SHORT
from caledonia_env.scenario import to_scenario

TERRAINS = ("pasture", "forest", "mountain", "loch", "port")


def _edge(a, b):
    """The shared side of two adjacent radius-1 hexes centred at ``a`` and ``b``."""
    (xa, ya), (xb, yb) = a, b
    mx, my, dx, dy = (xa + xb) / 2, (ya + yb) / 2, xb - xa, yb - ya
    n = math.hypot(dx, dy)
    px, py = -dy / n * 0.5, dx / n * 0.5
    return [round(mx + px, 4), round(my + py, 4), round(mx - px, 4), round(my - py, 4)]


def board_json(game) -> dict:
    """Geometry (y up, hex radius 1) and the static tables the page explains."""
    b, rs = game.board, game.ruleset
    xy = [(float(x), float(y)) for x, y in b.xy]
    hexes = [dict(b.node_dict(v), x=round(xy[v][0], 4), y=round(xy[v][1], 4))
             for v in range(b.n_hex)]
    for h in hexes:
        del h["neighbors"], h["across_river"]
    ports = [{"id": int(p), "label": b.labels[p], "corner": "ABCD"[k],
              "x": round(xy[p][0], 4), "y": round(xy[p][1], 4),
              "hexes": [int(w) for w in b.adjacent[p] if w >= 0]}
             for k, p in enumerate(range(b.n_hex, b.n_nodes))]
    rivers = [_edge(xy[u], xy[v]) for u, v in b.river_pairs]
    seams = [_edge(xy[v], xy[int(w)]) for v in range(b.n_hex) for w in b.adjacent[v]
             if v < w < b.n_hex and b.module[w] != b.module[v]]
    at = {(int(c), int(r)): v for v, (c, r) in enumerate(b.coords[:b.n_hex])}
    border = []
    for v in range(b.n_hex):
        if b.border[v]:
            for p in odd_r_neighbors(*(int(a) for a in b.coords[v])):
                w = at.get(p)
                if w is None or not b.active[w]:
                    border.append(_edge(xy[v], hex_xy(*p)))
    ids = [int(x) for x in rs.contracts.ids]
    cols = rs.contracts.columns
    contracts = {}
    for i, cid in enumerate(ids):
        row = [int(x) for x in rs.contracts.table[i]]
        need = {c[5:]: k for c, k in zip(cols, row) if c.startswith("need_") and k}
        gain = {c[5:]: k for c, k in zip(cols, row) if c.startswith("gain_") and k}
        contracts[cid] = {"need": need, "gain": gain}
    return {
        "map": list(game.map), "num_players": game.num_players,
        "hexes": hexes, "ports": ports, "rivers": rivers, "seams": seams, "border": border,
        "colors": {"terrain": {n: COLORS[1 << i] for i, n in enumerate(TERRAINS)},
                   "players": PLAYER_COLORS[:4], "river": RIVER_COLOR},
        "units": {u: UNIT_SHORT.get(u, u[:2].title()) for u in UNIT_NAMES},
        "goods": list(GOOD_NAMES), "imports": list(IMPORT_NAMES),
        "market": {"min": dict(zip(GOOD_NAMES, map(int, rs.market.min))),
                   "max": dict(zip(GOOD_NAMES, map(int, rs.market.max)))},
        "contracts": contracts,
        "scoring_tiles": _scoring_tiles(rs), "port_tiles": _port_tiles(rs),
    }


def _scoring_tiles(rs) -> dict:
    """Scoring tile name -> what it scores, from the ruleset (R-6.4)."""
    t, out = rs.scoring_tiles, {}
    for i, k in enumerate(t.kind):
        text = f"{int(t.glory[i])} glory per {int(t.per[i])} {SCORING_KINDS[int(k)].replace('_', ' ')}"
        if int(t.min_land_cost[i]):
            text += f" (land cost {int(t.min_land_cost[i])}+)"
        out[f"T{i + 1}"] = text
    return out


def _port_tiles(rs) -> dict:
    """Port tile name (its printed number) -> its kind and numbers, from the ruleset (R-5),
    in printed order."""
    t, out = rs.ports, {}
    for i in sorted(range(len(PORTS)), key=lambda i: int(PORTS[i][1:])):
        nums = ", ".join(f"{a} {int(v)}" for a, v in zip(PORT_PARAMS, t.params[i]) if v)
        out[PORTS[i]] = f"{PORT_KINDS[int(t.kind[i])].replace('_', ' ')} ({nums})"
    return out


def action_node(game, a: int):
    """Node id an action targets on the map (placements, selections, rowing, ports), or None."""
    if A_PLACE <= a < A_PLACE + N_UNITS * MAX_NODES:
        return (a - A_PLACE) % MAX_NODES
    if A_SELECT <= a < A_SELECT + MAX_NODES:
        return a - A_SELECT
    if A_ROW <= a < A_ROW + MAX_NODES:
        return a - A_ROW
    if A_PORT <= a < A_PORT + N_CORNERS:
        return game.board.n_hex + a - A_PORT
    return None


def action_group(name: str) -> str:
    """Heading of an action in the page's list: 'expand sheep', 'trade buy', 'price', …"""
    if " @ " in name:
        return name.split(" @ ")[0]
    words = name.split()
    if words[0] in ("trade", "neighborhood", "technology", "retrieve", "cellar", "fulfill"):
        return " ".join(words[:2])
    return words[0]


def legal_json(game) -> list[dict]:
    out = []
    for a in game.legal_actions():
        a = int(a)
        name = game.describe_action(a)
        node = action_node(game, a)
        out.append({"id": a, "name": name, "group": action_group(name),
                    "node": None if node is None else int(node)})
    return out


def position_json(session, pos: int | None = None) -> dict:
    """Everything the page shows for the position ``pos`` of ``session``."""
    pos = session.pos if pos is None else pos
    game = session.game_at(pos)
    latest = pos == session.end
    human = latest and session.mode == "play" and session.is_human_turn(game)
    view = {
        "id": session.id, "mode": session.mode, "label": session.label,
        "seats": session.seats, "position": pos, "length": session.end,
        "terminal": game.is_terminal, "round": game.round, "context": game.context,
        "current_player": game.current_player, "human_turn": human,
        "scenario": scenario_json(game),
        "prices": {g: int(market_price(game.state, game.tables, i))
                   for i, g in enumerate(GOOD_NAMES)},
        "last": _entry(session.entries[pos - 1]) if pos > 0 else None,
        "log": [_entry(e) for e in session.entries],
        "rounds": sorted({e.round for e in session.entries}),
        "automa": [e for e in session.events if e["after"] <= pos],
        "warnings": list(session.warnings),
        "notice": session.notice,
        "legal": legal_json(game) if not game.is_terminal else [],
        "units_left": [units_left(game, p) for p in range(game.num_players)],
        "score": None,
    }
    if game.is_terminal:
        view["score"] = {"breakdown": game.score_breakdown(), "winners": game.winners()}
    return view


def scenario_json(game) -> dict:
    """``game.to_scenario()``; a game with Automa seats (A-0), which scenarios do not
    store, is described as if every seat were a player's (the page only shows it)."""
    if game.config.automa:
        game = game.clone()
        game.config = dataclasses.replace(game.config, automa=None)
    return to_scenario(game)


def units_left(game, p: int) -> dict:
    """Units still on player ``p``'s board (not in the scenario dict, which lists the map)."""
    off = L.S_PLAYERS + p * L.P_SIZE + L.P_BOARD
    return {u: int(k) for u, k in zip(UNIT_NAMES, game.state[off:off + N_UNITS])}


def _entry(e) -> dict:
    return {"action": e.action, "player": e.player, "name": e.name, "round": e.round,
            "context": e.context}
