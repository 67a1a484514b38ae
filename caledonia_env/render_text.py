"""Human-readable text of a game state (``Game.render_text``)."""
from caledonia_env.data.names import PORTS
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import GOOD_NAMES, IMPORT_NAMES, NEUTRAL, OCC_STRIDE, UNIT_NAMES
from caledonia_env.engine.market import market_price

CORNERS = "ABCD"


def render_text(game) -> str:
    s, board, rs = game.state, game.board, game.ruleset
    ids = [int(x) for x in rs.contracts.ids]
    n = game.num_players
    out = [f"Clans of Caledonia — {n} players, map {','.join(game.map)}, round {game.round}, "
           f"{game.context}" + ("" if game.is_terminal else f", player {game.current_player} to act")]
    tiles = [f"T{t + 1}" if t >= 0 else "-" for t in s[L.S_TILES:L.S_TILES + 5]]
    ports = [f"{CORNERS[c]}:{PORTS[s[L.S_PORTS + c]]}" if s[L.S_PORTS + c] >= 0 else f"{CORNERS[c]}:-"
             for c in range(4)]
    out.append(f"scoring tiles {' '.join(tiles)} | ports {' '.join(ports)}")
    out.append("market  " + "  ".join(f"{g} £{market_price(s, game.tables, i)}" for i, g in enumerate(GOOD_NAMES)))
    slots = [f"#{ids[c]}" if c >= 0 else "-" for c in s[L.S_SLOTS:L.S_SLOTS + 6]]
    out.append(f"contracts on offer {' '.join(slots)} | pile {s[L.S_DECK_COUNT]}")
    out.append("imports " + "  ".join(f"{g} {s[L.S_IMPORT + i]}" for i, g in enumerate(IMPORT_NAMES[:3])))
    order = [int(x) for x in s[L.S_ORDER:L.S_ORDER + n]]
    out.append(f"turn order {order}")
    for p in range(n):
        poff = L.S_PLAYERS + p * L.P_SIZE
        goods = ", ".join(f"{s[poff + L.P_GOODS + i]} {g}" for i, g in enumerate(GOOD_NAMES)
                          if s[poff + L.P_GOODS + i])
        units = {}
        for m in range(board.n_nodes):
            o = int(s[L.S_OCC + m])
            if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
                units.setdefault(UNIT_NAMES[o % OCC_STRIDE], []).append(board.labels[m])
        box = [f"#{ids[c]}" for c in s[poff + L.P_BOX:poff + L.P_BOX + 2] if c >= 0]
        flags = " (passed)" if s[poff + L.P_PASSED] else ""
        clan = game.clan(p)
        flags = (f" [{clan}]" if clan else "") + flags
        out.append(f"player {p}{flags}: £{s[poff + L.P_MONEY]}, glory {s[poff + L.P_GLORY]}, "
                   f"merchants {s[poff + L.P_MERCH]} (+{s[poff + L.P_TRACK]} on track), "
                   f"shipping {s[poff + L.P_SHIP]}, tech {_tech(s, poff)}, "
                   f"box {box or '-'}, fulfilled {s[poff + L.P_N_FULFILLED]}")
        out.append(f"  goods: {goods or 'none'}")
        for u, where in units.items():
            out.append(f"  {u}: {' '.join(where)}")
    if game.is_terminal:
        for p, b in enumerate(game.score_breakdown()):
            out.append(f"player {p} final: " + ", ".join(f"{k} {v}" for k, v in b.items()))
        out.append(f"winner(s): {game.winners()}")
    return "\n".join(out)


def _tech(s, poff):
    """Upgraded technology tiles (R-3.5) as names, or 'none'."""
    names = [n for i, n in enumerate(("lumberjack", "miner")) if s[poff + L.P_TECH + i]]
    return "+".join(names) or "none"
