"""A game state as a scenario dict: the inverse of :func:`~.position.write_scenario`."""
from __future__ import annotations

from caledonia_env.config import CLAN_NAMES
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (CONTEXT_NAMES, GOOD_NAMES, IMPORT_NAMES, MAX_DRAW, MAX_START_PICKS,
                                NEUTRAL, OCC_STRIDE, UNIT_NAMES)
from caledonia_env.engine.market import market_price
from caledonia_env.scenario.fields import CORNERS, PENDING, PHASES, PORT_TILES, SCORING_TILES, SIDES, TECH
from caledonia_env.scenario.versions import SCENARIO_VERSION


def _marker(game, g):
    """Good g's marker: its price, or ``{"step": k}`` where a cheaper step has that price."""
    price = int(market_price(game.state, game.tables, g))
    k = int(game.state[L.S_PRICE_STEP + g] - game.tables[L.T_STEP_LO + g])
    return price if game.ruleset.market.step_of(g, price) == k else {"step": k}


def to_scenario(game) -> dict:
    """The position as a scenario dict (``from_scenario(to_scenario(g))`` equals ``g``)."""
    if game.config.automa:
        raise ValueError("scenarios do not store Automa seats (A-10 deck state) yet; save the "
                         "game with to_json() instead")
    rs, board, s = game.ruleset, game.board, game.state
    ids = [int(x) for x in rs.contracts.ids]
    num_players = game.num_players
    phase = {v: k for k, v in PHASES.items()}[int(s[L.S_PHASE])]

    def cid(c):
        return None if c < 0 else ids[c]

    d = {
        "version": SCENARIO_VERSION, "num_players": num_players, "map": ",".join(game.map), "seed": game.config.seed,
        "ruleset": game.config.ruleset, "ports_enabled": game.config.ports,
        "scoring_tiles_enabled": game.config.scoring_tiles,
        "variant_static_imports": game.config.variant_static_imports,
        "kickstarter_tiles": game.config.kickstarter_tiles,
        "round": int(s[L.S_ROUND]), "phase": phase,
        "context": CONTEXT_NAMES[int(s[L.S_CTX])], "current_player": int(s[L.S_PLAYER]),
        "turn_order": [int(x) for x in s[L.S_ORDER:L.S_ORDER + num_players]],
        "next_turn_order": [int(x) for x in s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + num_players]
                            if x >= 0],
        "market": {g: _marker(game, i) for i, g in enumerate(GOOD_NAMES)},
        "slots": [cid(int(c)) for c in s[L.S_SLOTS:L.S_SLOTS + 6]],
        "pile": [ids[int(s[L.S_DECK + (int(s[L.S_DECK_HEAD]) + i) % 64])]
                 for i in range(int(s[L.S_DECK_COUNT]))],
        "drawn": [cid(int(c)) for c in s[L.S_DRAWN:L.S_DRAWN + MAX_DRAW]],
        "scoring_tiles": [None if t < 0 else SCORING_TILES[t] for t in s[L.S_TILES:L.S_TILES + 5]],
        "ports": {CORNERS[c]: (None if s[L.S_PORTS + c] < 0 else PORT_TILES[s[L.S_PORTS + c]])
                  for c in range(4)},
        "import_track": {g: int(s[L.S_IMPORT + i]) for i, g in enumerate(IMPORT_NAMES[:3])},
        "neutral": [board.labels[m] for m in range(board.n_nodes) if s[L.S_OCC + m] == NEUTRAL],
        "players": [_get_player(game, p) for p in range(num_players)],
        "pending": {k: (int(s[o]) if k_ == 1 else [int(x) for x in s[o:o + k_]])
                    for k, (o, k_) in PENDING.items()},
        "rng": int(s[L.S_RNG]), "done": bool(s[L.S_DONE]),
        "solo": game.config.solo,
        "clans": list(game.config.clans) if isinstance(game.config.clans, tuple)
        else game.config.clans,
        "clan_auction": game.config.clan_auction, "kickstarter_clan": game.config.kickstarter_clan,
        "picks": [None if s[L.S_PICKS + i] < 0 else
                  {"tile": f"S{int(s[L.S_PICKS + i]) + 1}",
                   "clan": None if s[L.S_PICK_CLANS + i] < 0
                   else CLAN_NAMES[int(s[L.S_PICK_CLANS + i])]}
                  for i in range(MAX_START_PICKS)],
    }
    return d


def _get_player(game, p):
    rs, board, s = game.ruleset, game.board, game.state
    ids = [int(x) for x in rs.contracts.ids]
    poff = L.S_PLAYERS + p * L.P_SIZE
    units = {}
    for m in range(board.n_nodes):
        o = int(s[L.S_OCC + m])
        if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
            units[board.labels[m]] = UNIT_NAMES[o % OCC_STRIDE]
    fulfilled = [ids[c] for c in range(len(ids)) if s[poff + L.P_FULFILLED + c // 31] >> (c % 31) & 1]
    out = {
        "money": int(s[poff + L.P_MONEY]),
        "goods": {g: int(s[poff + L.P_GOODS + i]) for i, g in enumerate(GOOD_NAMES)},
        "merchants": int(s[poff + L.P_MERCH]), "merchants_on_track": int(s[poff + L.P_TRACK]),
        "market": {side: {g: int(s[poff + L.P_MARKET + si * 6 + i]) for i, g in enumerate(GOOD_NAMES)
                          if s[poff + L.P_MARKET + si * 6 + i]} for si, side in enumerate(SIDES)},
        "units": units, "shipping": int(s[poff + L.P_SHIP]),
        "technology": {t: bool(s[poff + L.P_TECH + i]) for i, t in enumerate(TECH)},
        "glory": int(s[poff + L.P_GLORY]),
        "contracts": [None if c < 0 else ids[c] for c in s[poff + L.P_BOX:poff + L.P_BOX + 2]],
        "fulfilled": fulfilled,
        "ports_used": [CORNERS[c] for c in range(4) if s[poff + L.P_PORTS_USED] >> c & 1],
        "passed": bool(s[poff + L.P_PASSED]),
        "start_tile": None if s[poff + L.P_START_TILE] < 0 else f"S{int(s[poff + L.P_START_TILE]) + 1}",
        "clan": None if s[poff + L.P_CLAN] < 0 else CLAN_NAMES[int(s[poff + L.P_CLAN])],
        "cellar": [int(s[poff + L.P_CELLAR]), int(s[poff + L.P_CELLAR + 1])],
        "whisky_made": int(s[poff + L.P_WHISKY_MADE]), "bid": int(s[poff + L.P_BID]),
        "beer": int(s[poff + L.P_BEER]),
        "score": {k: int(s[poff + L.P_SCORE + i]) for i, k in enumerate(L.SCORE_FIELDS)},
    }
    return out

