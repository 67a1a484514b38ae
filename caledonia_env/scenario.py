"""Readable scenario dicts <-> game states (docs/scenarios.md).

``from_scenario`` builds a legal-looking mid-game position from a dict so
tests and users can set up any rulebook example; ``to_scenario`` writes the
same schema back, and the pair round-trips the state exactly.
"""
from __future__ import annotations


from .config import GameConfig
from .data.ruleset import CLAN_START_FIELDS
from .engine import layout as L
from .engine.constants import (CLAN_NAMES, CONTEXT_NAMES, EMPTY, GOOD_NAMES, IMPORT_NAMES,
                               MAX_DRAW, MAX_NODES, MAX_START_PICKS, NEUTRAL, OCC_STRIDE,
                               PH_ACTIONS, PH_OVER, PH_PRODUCTION, PH_SETUP_PICK,
                               PH_SETUP_WORKERS, UNIT_NAMES)

PHASES = {"setup_pick": PH_SETUP_PICK, "setup_workers": PH_SETUP_WORKERS,
          "actions": PH_ACTIONS, "production": PH_PRODUCTION, "over": PH_OVER}
CORNERS = "ABCD"
PORT_TILES = tuple(f"P{i}" for i in range(1, 10))
SCORING_TILES = tuple(f"T{i}" for i in range(1, 10))
TECH = ("lumberjack", "miner")
SIDES = ("buy", "sell")
# raw pending-work fields written under "pending" (name -> (offset, length))
PENDING = {
    "neighborhood_goods": (L.S_NB_PENDING, 1), "structure_pending": (L.S_STRUCT_PENDING, 1),
    "keep_left": (L.S_KEEP_LEFT, 1), "meat_left": (L.S_MEAT_REM, 2),
    "meat_ports": (L.S_MEAT_PORTS, 1), "free_hexes": (L.S_BONUS_HEX, 1),
    "upgrades": (L.S_BONUS_UPG, 1), "port_kind": (L.S_PORT_KIND, 1),
    "port_left": (L.S_PORT_LEFT, 1), "port_stage": (L.S_PORT_STAGE, 1),
    "swap_out": (L.S_SWAP_OUT, 1), "swap_in": (L.S_SWAP_IN, 1), "swap_node": (L.S_SWAP_NODE, 1),
    "p4_good": (L.S_P4_GOOD, 1), "main_done": (L.S_MAIN_DONE, 1),
    "production_seat": (L.S_PROC_SEAT, 1), "production_kind": (L.S_PROC_KIND, 1),
    "setup_step": (L.S_SETUP_PTR, 1), "turn_position": (L.S_TURN_POS, 1),
    "deck_head": (L.S_DECK_HEAD, 1), "turn_contracts": (L.S_TURN_CONTRACTS, 1), "second_contract": (L.S_SECOND_OBTAIN, 1),
    "rowed": (L.S_ROWED, 1), "row_from": (L.S_ROW_FROM, 1), "brew_left": (L.S_BREW_LEFT, 1),
    "auction_stage": (L.S_AUC_STAGE, 1), "auction_high": (L.S_AUC_HIGH, 1),
    "auction_leader": (L.S_AUC_LEADER, 1), "auction_out": (L.S_AUC_OUT, 1),
    "auction_seat": (L.S_AUC_SEAT, 1), "auction_bidder": (L.S_AUC_BIDDER, 1),
}
# defaults of pending fields that are not 0 (leave-out means "nothing pending")
PENDING_DEFAULTS = {"row_from": -1, "auction_leader": -1, "auction_high": -1, "port_kind": -1,
                    "swap_node": -1, "p4_good": -1}


class ScenarioError(ValueError):
    """A scenario dict that does not describe a position."""


def _lookup(table, name, what):
    key = str(name).strip().lower()
    for i, t in enumerate(table):
        if t.lower() == key:
            return i
    raise ScenarioError(f"unknown {what} {name!r}; allowed: {', '.join(table)}")


def _contract_index(rs, cid):
    ids = [int(x) for x in rs.contracts.ids]
    if int(cid) not in ids:
        raise ScenarioError(f"unknown contract id {cid!r}; contracts are numbered {ids[0]}..{ids[-1]}")
    return ids.index(int(cid))


def from_scenario(d: dict):
    """Build a :class:`~caledonia_env.Game` from a scenario dict (see docs/scenarios.md)."""
    from .game import Game
    d = dict(d)
    known = {"num_players", "map", "seed", "ruleset", "ports_enabled", "scoring_tiles_enabled",
             "variant_static_imports", "kickstarter_tiles", "round", "phase", "context",
             "current_player", "turn_order", "next_turn_order", "market", "slots", "pile",
             "scoring_tiles", "ports", "import_track", "players", "neutral", "drawn",
             "pending", "rng", "done", "solo", "clans", "clan_auction", "kickstarter_clan",
             "picks"}
    unknown = set(d) - known
    if unknown:
        raise ScenarioError(f"unknown scenario keys {sorted(unknown)}; allowed: {sorted(known)}")
    n = d.get("num_players", len(d.get("players", [])) or 2)
    clans = d.get("clans")
    if clans is None:
        named = [pd.get("clan") for pd in d.get("players", [])]
        named = [None if c in (None, -1, "none") else c for c in named]
        clans = tuple(CLAN_NAMES[c] if isinstance(c, int) else c for c in named) \
            if any(c is not None for c in named) else None
    try:
        cfg = GameConfig(num_players=n, seed=d.get("seed", 0), map=d.get("map", "A1,B1,C1,D1"),
                         ruleset=d.get("ruleset"), ports=d.get("ports_enabled", True),
                         scoring_tiles=d.get("scoring_tiles_enabled", True),
                         variant_static_imports=d.get("variant_static_imports", False),
                         kickstarter_tiles=d.get("kickstarter_tiles", False),
                         solo=d.get("solo", n == 1), clans=clans,
                         clan_auction=d.get("clan_auction", False),
                         kickstarter_clan=d.get("kickstarter_clan", False))
    except ValueError as e:
        raise ScenarioError(str(e)) from None
    game = Game(cfg)
    rs, board, s = game.ruleset, game.board, game.state
    s[L.S_ROUND] = d.get("round", 1)
    s[L.S_PHASE] = PHASES[d.get("phase", "actions")]
    s[L.S_CTX] = _lookup(CONTEXT_NAMES, d.get("context", "main action"), "context")
    order = list(d.get("turn_order", range(n)))
    if sorted(order) != list(range(n)):
        raise ScenarioError(f"turn_order must be a permutation of 0..{n - 1}, got {order}")
    s[L.S_ORDER:L.S_ORDER + 4] = -1
    s[L.S_ORDER:L.S_ORDER + n] = order
    nxt = list(d.get("next_turn_order", []))
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + 4] = -1
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + len(nxt)] = nxt
    s[L.S_N_PASSED] = len(nxt)
    cur = d.get("current_player", order[0])
    s[L.S_PLAYER] = cur
    s[L.S_TURN_POS] = order.index(cur) if cur in order else 0
    for g, price in d.get("market", {}).items():
        gi = _lookup(GOOD_NAMES, g, "good")
        lo, hi = rs.market.min[gi], rs.market.max[gi]
        if not lo <= price <= hi:
            raise ScenarioError(f"market price of {g} must be in {lo}..{hi}, got {price}")
        s[L.S_PRICE + gi] = price
    if "slots" in d:
        s[L.S_SLOTS:L.S_SLOTS + 6] = -1
        for i, cid in enumerate(d["slots"]):
            s[L.S_SLOTS + i] = -1 if cid is None else _contract_index(rs, cid)
    if "pile" in d:
        pile = [_contract_index(rs, c) for c in d["pile"]]
        head = int(d.get("pending", {}).get("deck_head", 0)) % 64
        s[L.S_DECK:L.S_DECK + 64] = -1
        for i, c in enumerate(pile):
            s[L.S_DECK + (head + i) % 64] = c
        s[L.S_DECK_HEAD] = head
        s[L.S_DECK_COUNT] = len(pile)
    if "drawn" in d:
        s[L.S_DRAWN:L.S_DRAWN + MAX_DRAW] = -1
        for i, cid in enumerate(d["drawn"]):
            s[L.S_DRAWN + i] = -1 if cid is None else _contract_index(rs, cid)
        s[L.S_N_DRAWN] = sum(1 for c in d["drawn"] if c is not None)
    if "scoring_tiles" in d:
        s[L.S_TILES:L.S_TILES + 5] = -1
        for r, t in enumerate(d["scoring_tiles"]):
            s[L.S_TILES + r] = -1 if t is None else _lookup(SCORING_TILES, t, "scoring tile")
    if "ports" in d:
        s[L.S_PORTS:L.S_PORTS + 4] = -1
        for c, t in d["ports"].items():
            s[L.S_PORTS + _lookup(CORNERS, c, "corner")] = -1 if t is None else _lookup(PORT_TILES, t, "port tile")
    for i, g in enumerate(IMPORT_NAMES[:3]):
        s[L.S_IMPORT + i] = d.get("import_track", {}).get(g, 0)
    s[L.S_OCC:L.S_OCC + MAX_NODES] = EMPTY
    for label in d.get("neutral", []):
        s[L.S_OCC + _node(board, label)] = NEUTRAL
    players = d.get("players", [])
    if len(players) != n:
        raise ScenarioError(f"'players' must list {n} players, got {len(players)}")
    for p, pd in enumerate(players):
        if cfg.clan_mode == "fixed" and "clan" not in pd:
            pd = dict(pd, clan=cfg.clans[p])
        _set_player(game, p, pd)
    if "picks" in d:
        s[L.S_PICKS:L.S_PICKS + MAX_START_PICKS] = -1
        s[L.S_PICK_CLANS:L.S_PICK_CLANS + MAX_START_PICKS] = -1
        for i, pick in enumerate(d["picks"]):
            if pick is None:
                continue
            s[L.S_PICKS + i] = _start_tile(pick.get("tile"))
            clan = pick.get("clan")
            s[L.S_PICK_CLANS + i] = -1 if clan is None else _lookup(CLAN_NAMES, clan, "clan")
    for name, (off, k) in PENDING.items():
        if name in PENDING_DEFAULTS and name not in d.get("pending", {}):
            s[off] = PENDING_DEFAULTS[name]
    for name, value in d.get("pending", {}).items():
        if name not in PENDING:
            raise ScenarioError(f"unknown pending field {name!r}; allowed: {sorted(PENDING)}")
        off, k = PENDING[name]
        s[off:off + k] = value
    if "rng" in d:
        s[L.S_RNG] = d["rng"]
    s[L.S_DONE] = int(d.get("done", False))
    game.history = []
    game.scenario = _jsonable(d)
    return game


def _start_tile(tile):
    if tile is None:
        return -1
    t = int(str(tile).lstrip("Ss")) - 1
    if not 0 <= t < 9:
        raise ScenarioError(f"unknown starting tile {tile!r}; allowed: S1..S9")
    return t


def _node(board, label):
    try:
        return board.node(label)
    except (KeyError, ValueError):
        raise ScenarioError(f"unknown hex {label!r} on map {','.join(board.config)}") from None


def _set_player(game, p, pd):
    rs, board, s = game.ruleset, game.board, game.state
    known = {"money", "goods", "merchants", "merchants_on_track", "market", "units", "shipping",
             "technology", "glory", "contracts", "fulfilled", "ports_used", "passed",
             "start_tile", "clan", "score", "cellar", "whisky_made", "bid", "beer"}
    unknown = set(pd) - known
    if unknown:
        raise ScenarioError(f"player {p}: unknown keys {sorted(unknown)}; allowed: {sorted(known)}")
    po = L.S_PLAYERS + p * L.P_SIZE
    s[po:po + L.P_SIZE] = 0
    s[po + L.P_MONEY] = pd.get("money", 0)
    for g, k in pd.get("goods", {}).items():
        s[po + L.P_GOODS + _lookup(GOOD_NAMES, g, "good")] = k
    clan = pd.get("clan")
    if isinstance(clan, int) and not isinstance(clan, bool):
        clan = CLAN_NAMES[clan] if clan >= 0 else None
    ci = -1 if clan in (None, "none") else _lookup(CLAN_NAMES, clan, "clan")
    start = dict(zip(CLAN_START_FIELDS, rs.setup.player_start if ci < 0 else rs.clans.start[ci]))
    s[po + L.P_MERCH] = pd.get("merchants", int(start["merchants_in_supply"]))
    s[po + L.P_TRACK] = pd.get("merchants_on_track",
                               int(rs.economy.merchants_total - start["merchants_in_supply"]))
    for side, goods in pd.get("market", {}).items():
        si = _lookup(SIDES, side, "market side")
        for g, k in goods.items():
            s[po + L.P_MARKET + si * 6 + _lookup(GOOD_NAMES, g, "good")] = k
    counts = list(int(x) for x in rs.units.count) + [0]
    pooled = ci >= 0 and bool(game.tables[L.T_CLAN_ANY_WORKER + ci])
    workers = [UNIT_NAMES.index(w) for w in ("lumberjack", "miner", "fisherman")]
    deployed = 0
    for label, unit in pd.get("units", {}).items():
        u = _lookup(UNIT_NAMES, unit, "unit")
        node = _node(board, label)
        if s[L.S_OCC + node] != EMPTY:
            raise ScenarioError(f"hex {label} holds two units")
        s[L.S_OCC + node] = p * OCC_STRIDE + u
        if pooled and u in workers:    # MacDonald's workers are one pool
            deployed += 1
            continue
        counts[u] -= 1
        if counts[u] < 0:
            raise ScenarioError(f"player {p} has more {unit} on the map than on a player board")
    if deployed:
        lj, mi = workers[0], workers[1]
        if deployed > counts[lj] + counts[mi]:
            raise ScenarioError(f"player {p} has more workers on the map than on a player board")
        from_lj = min(deployed, counts[lj])
        counts[lj] -= from_lj
        counts[mi] -= deployed - from_lj
    s[po + L.P_BOARD:po + L.P_BOARD + len(counts)] = counts
    s[po + L.P_SHIP] = pd.get("shipping", int(start["shipping_level_1_2" if game.num_players <= 2
                                                    else "shipping_level_3_4"]))
    tech = pd.get("technology", {})
    for t, name in enumerate(TECH):
        s[po + L.P_TECH + t] = int(bool(tech.get(name, False)))
    s[po + L.P_GLORY] = pd.get("glory", 0)
    boxes = list(pd.get("contracts", []))
    s[po + L.P_BOX] = s[po + L.P_BOX + 1] = -1
    for b, cid in enumerate(boxes):
        s[po + L.P_BOX + b] = -1 if cid is None else _contract_index(rs, cid)
    table = rs.contracts.table
    for cid in pd.get("fulfilled", []):
        c = _contract_index(rs, cid)
        s[po + L.P_N_FULFILLED] += 1
        s[po + L.P_FULFILLED + c // 31] |= 1 << (c % 31)
        s[po + L.P_IMPORTS:po + L.P_IMPORTS + 4] += table[c, 6:10]
        s[po + L.P_MEAT] += table[c, 4] + table[c, 5]
    used = 0
    for c in pd.get("ports_used", []):
        used |= 1 << _lookup(CORNERS, c, "corner")
    s[po + L.P_PORTS_USED] = used
    s[po + L.P_PASSED] = int(bool(pd.get("passed", False)))
    tile = pd.get("start_tile")
    s[po + L.P_START_TILE] = -1 if tile is None else int(str(tile).lstrip("Ss")) - 1
    s[po + L.P_CLAN] = ci
    cellar = list(pd.get("cellar", [0, 0]))
    s[po + L.P_CELLAR:po + L.P_CELLAR + 2] = cellar
    s[po + L.P_WHISKY_MADE] = pd.get("whisky_made", 0)
    s[po + L.P_BID] = pd.get("bid", 0)
    s[po + L.P_BEER] = pd.get("beer", 0)
    if "score" in pd:
        s[po + L.P_SCORE:po + L.P_SCORE + L.N_SCORE] = [pd["score"].get(k, 0) for k in L.SCORE_FIELDS]


def to_scenario(game) -> dict:
    """The position as a scenario dict (``from_scenario(to_scenario(g))`` equals ``g``)."""
    if game.config.automa:
        raise ValueError("scenarios do not store Automa seats (A-10 deck state) yet; save the "
                         "game with to_json() instead")
    rs, board, s = game.ruleset, game.board, game.state
    ids = [int(x) for x in rs.contracts.ids]
    n = game.num_players
    phase = {v: k for k, v in PHASES.items()}[int(s[L.S_PHASE])]

    def cid(c):
        return None if c < 0 else ids[c]

    d = {
        "num_players": n, "map": ",".join(game.map), "seed": game.config.seed,
        "ruleset": game.config.ruleset, "ports_enabled": game.config.ports,
        "scoring_tiles_enabled": game.config.scoring_tiles,
        "variant_static_imports": game.config.variant_static_imports,
        "kickstarter_tiles": game.config.kickstarter_tiles,
        "round": int(s[L.S_ROUND]), "phase": phase,
        "context": CONTEXT_NAMES[int(s[L.S_CTX])], "current_player": int(s[L.S_PLAYER]),
        "turn_order": [int(x) for x in s[L.S_ORDER:L.S_ORDER + n]],
        "next_turn_order": [int(x) for x in s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + n] if x >= 0],
        "market": {g: int(s[L.S_PRICE + i]) for i, g in enumerate(GOOD_NAMES)},
        "slots": [cid(int(c)) for c in s[L.S_SLOTS:L.S_SLOTS + 6]],
        "pile": [ids[int(s[L.S_DECK + (int(s[L.S_DECK_HEAD]) + i) % 64])]
                 for i in range(int(s[L.S_DECK_COUNT]))],
        "drawn": [cid(int(c)) for c in s[L.S_DRAWN:L.S_DRAWN + MAX_DRAW]],
        "scoring_tiles": [None if t < 0 else SCORING_TILES[t] for t in s[L.S_TILES:L.S_TILES + 5]],
        "ports": {CORNERS[c]: (None if s[L.S_PORTS + c] < 0 else PORT_TILES[s[L.S_PORTS + c]])
                  for c in range(4)},
        "import_track": {g: int(s[L.S_IMPORT + i]) for i, g in enumerate(IMPORT_NAMES[:3])},
        "neutral": [board.labels[m] for m in range(board.n_nodes) if s[L.S_OCC + m] == NEUTRAL],
        "players": [_get_player(game, p) for p in range(n)],
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
    po = L.S_PLAYERS + p * L.P_SIZE
    units = {}
    for m in range(board.n_nodes):
        o = int(s[L.S_OCC + m])
        if o >= 0 and o != NEUTRAL and o // OCC_STRIDE == p:
            units[board.labels[m]] = UNIT_NAMES[o % OCC_STRIDE]
    fulfilled = [ids[c] for c in range(len(ids)) if s[po + L.P_FULFILLED + c // 31] >> (c % 31) & 1]
    out = {
        "money": int(s[po + L.P_MONEY]),
        "goods": {g: int(s[po + L.P_GOODS + i]) for i, g in enumerate(GOOD_NAMES)},
        "merchants": int(s[po + L.P_MERCH]), "merchants_on_track": int(s[po + L.P_TRACK]),
        "market": {side: {g: int(s[po + L.P_MARKET + si * 6 + i]) for i, g in enumerate(GOOD_NAMES)
                          if s[po + L.P_MARKET + si * 6 + i]} for si, side in enumerate(SIDES)},
        "units": units, "shipping": int(s[po + L.P_SHIP]),
        "technology": {t: bool(s[po + L.P_TECH + i]) for i, t in enumerate(TECH)},
        "glory": int(s[po + L.P_GLORY]),
        "contracts": [None if c < 0 else ids[c] for c in s[po + L.P_BOX:po + L.P_BOX + 2]],
        "fulfilled": fulfilled,
        "ports_used": [CORNERS[c] for c in range(4) if s[po + L.P_PORTS_USED] >> c & 1],
        "passed": bool(s[po + L.P_PASSED]),
        "start_tile": None if s[po + L.P_START_TILE] < 0 else f"S{int(s[po + L.P_START_TILE]) + 1}",
        "clan": None if s[po + L.P_CLAN] < 0 else CLAN_NAMES[int(s[po + L.P_CLAN])],
        "cellar": [int(s[po + L.P_CELLAR]), int(s[po + L.P_CELLAR + 1])],
        "whisky_made": int(s[po + L.P_WHISKY_MADE]), "bid": int(s[po + L.P_BID]),
        "beer": int(s[po + L.P_BEER]),
        "score": {k: int(s[po + L.P_SCORE + i]) for i, k in enumerate(L.SCORE_FIELDS)},
    }
    return out


def _jsonable(d):
    import json
    return json.loads(json.dumps(d))
