"""Readable scenario dicts <-> game states (docs/scenarios.md).

The codec under ``Game``: :func:`scenario_config` reads the setup and
:func:`write_scenario` writes the position into a fresh game's state, after
checking every value, list length, terrain, occupancy and cross-field rule
(``ScenarioError`` names the field and the allowed values); :func:`to_scenario`
writes the same schema back, and the pair round-trips the state exactly.
``Game.from_scenario`` / ``Game.to_scenario`` are the public entry points.
"""
from __future__ import annotations

import json

import numpy as np

from .config import GameConfig
from .data.ruleset import CLAN_START_FIELDS
from .engine import layout as L
from .engine.flow import resolve
from .engine.constants import (CLAN_NAMES, CONTEXT_NAMES, EMPTY, FISHERMAN, GOOD_NAMES,
                               IMPORT_NAMES, MAX_BOXES, MAX_CONTRACTS, MAX_DRAW, MAX_NB_BUY, MAX_NODES,
                               MAX_SLOTS, N_GOODS,
                               MAX_START_PICKS, N_CORNERS, N_ROUNDS_MAX, NEUTRAL, NO_CLAN, OCC_STRIDE,
                               PH_ACTIONS, PH_OVER, PH_PRODUCTION, PH_SETUP_PICK,
                               PH_SETUP_WORKERS, TERRAIN_LOCH, TERRAIN_PORT, UNIT_NAMES)

PHASES = {"setup_pick": PH_SETUP_PICK, "setup_workers": PH_SETUP_WORKERS,
          "actions": PH_ACTIONS, "production": PH_PRODUCTION, "over": PH_OVER}
# decision contexts each phase can be waiting on
PHASE_CONTEXTS = {
    "setup_pick": ("starting pick", "clan auction"),
    "setup_workers": ("starting worker",),
    "actions": ("main action", "after main action", "neighborhood purchase", "structure bonus",
                "slaughter", "export bonus", "port discard", "port gain", "port price",
                "port swap", "port copy", "second contract", "fisherman rowing", "brewing"),
    "production": ("production", "cellar", "butter"),
    "over": ("game over",),
}
CORNERS = "ABCD"
PORT_TILES = tuple(f"P{i}" for i in range(1, 10))
SCORING_TILES = tuple(f"T{i}" for i in range(1, 10))
TECH = ("lumberjack", "miner")
SIDES = ("buy", "sell")
MAX_COUNT = 10 ** 6         # money, goods, glory, VP: far below int32 overflow
# raw pending-work fields written under "pending" (name -> (offset, length))
PENDING = {
    "neighborhood_goods": (L.S_NB_PENDING, 1), "structure_pending": (L.S_STRUCT_PENDING, 1),
    "neighborhood_bought": (L.S_NB_BOUGHT, N_GOODS),      # this turn, per good
    "keep_left": (L.S_KEEP_LEFT, 1), "meat_left": (L.S_MEAT_REM, 2),
    "meat_ports": (L.S_MEAT_PORTS, 1), "free_hexes": (L.S_BONUS_HEX, 1),
    "upgrades": (L.S_BONUS_UPG, 1), "port_kind": (L.S_PORT_KIND, 1),
    "port_left": (L.S_PORT_LEFT, 1), "port_stage": (L.S_PORT_STAGE, 1),
    "swap_out": (L.S_SWAP_OUT, 1), "swap_in": (L.S_SWAP_IN, 1), "swap_node": (L.S_SWAP_NODE, 1),
    "p4_good": (L.S_PRICE_SHIFT_GOOD, 1), "main_done": (L.S_MAIN_DONE, 1),
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
TOP_KEYS = ("num_players", "map", "seed", "ruleset", "ports_enabled", "scoring_tiles_enabled",
            "variant_static_imports", "kickstarter_tiles", "round", "phase", "context",
            "current_player", "turn_order", "next_turn_order", "market", "slots", "pile",
            "scoring_tiles", "ports", "import_track", "players", "neutral", "drawn",
            "pending", "rng", "done", "solo", "clans", "clan_auction", "kickstarter_clan",
            "picks")
PLAYER_KEYS = ("money", "goods", "merchants", "merchants_on_track", "market", "units",
               "shipping", "technology", "glory", "contracts", "fulfilled", "ports_used",
               "passed", "start_tile", "clan", "score", "cellar", "whisky_made", "bid", "beer")


# pending fields that are work inside one player's turn (phase "actions" only)
TURN_WORK = ("neighborhood_goods", "neighborhood_bought", "structure_pending", "meat_left", "meat_ports", "free_hexes",
             "upgrades", "port_kind", "port_left", "row_from", "brew_left", "second_contract",
             "drawn")


class ScenarioError(ValueError):
    """A scenario dict that does not describe a position (names the field and what is allowed)."""


# ------------------------------------------------------------ typed readers
def _int(where, v, lo, hi):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise ScenarioError(f"{where} must be an int in {lo}..{hi}, got {type(v).__name__} {v!r}")
    if not lo <= v <= hi:
        raise ScenarioError(f"{where} must be in {lo}..{hi}, got {v}")
    return int(v)


def _bool(where, v):
    if not isinstance(v, (bool, np.bool_)):
        raise ScenarioError(f"{where} must be true or false, got {type(v).__name__} {v!r}")
    return bool(v)


def _list(where, v, max_len):
    if not isinstance(v, (list, tuple)):
        raise ScenarioError(f"{where} must be a list (at most {max_len} items), "
                            f"got {type(v).__name__} {v!r}")
    if len(v) > max_len:
        raise ScenarioError(f"{where} has {len(v)} items; at most {max_len} allowed")
    return list(v)


def _dict(where, v, allowed=None):
    if not isinstance(v, dict):
        raise ScenarioError(f"{where} must be a dict, got {type(v).__name__} {v!r}")
    if allowed is not None:
        unknown = [k for k in v if not isinstance(k, str) or k.strip().lower() not in allowed]
        if unknown:
            raise ScenarioError(f"{where}: unknown keys {unknown}; allowed: {list(allowed)}")
    return v


def _lookup(table, name, what):
    if isinstance(name, str):
        key = name.strip().lower()
        for i, t in enumerate(table):
            if t.lower() == key:
                return i
    raise ScenarioError(f"unknown {what} {name!r}; allowed: {', '.join(table)}")


def _contract_index(rs, cid, where="contract"):
    ids = [int(x) for x in rs.contracts.ids]
    if isinstance(cid, bool) or not isinstance(cid, (int, np.integer)) or int(cid) not in ids:
        raise ScenarioError(f"{where}: unknown contract id {cid!r}; contracts are numbered "
                            f"{ids[0]}..{ids[-1]}")
    return ids.index(int(cid))


class _Places:
    """Where each contract, starting tile and port tile is: one place only."""

    def __init__(self):
        self.seen = {}

    def put(self, kind, item, where):
        if item is None:
            return
        key = (kind, item)
        if key in self.seen:
            raise ScenarioError(f"{kind} {item} is both in {self.seen[key]} and in {where}; "
                                f"each {kind} is in one place only")
        self.seen[key] = where


# ------------------------------------------------------------ setup
def scenario_config(d: dict) -> GameConfig:
    """The GameConfig of a scenario dict (checks its keys and setup fields)."""
    if not isinstance(d, dict):
        raise ScenarioError(f"a scenario is a dict (docs/scenarios.md), got {type(d).__name__}")
    unknown = [k for k in d if k not in TOP_KEYS]
    if unknown:
        raise ScenarioError(f"unknown scenario keys {sorted(map(str, unknown))}; allowed: "
                            f"{sorted(TOP_KEYS)}")
    if "players" not in d:
        raise ScenarioError("'players' is required: one dict per player")
    players = _list("players", d["players"], 4)
    for p, pd in enumerate(players):
        _dict(f"players[{p}]", pd, PLAYER_KEYS)
    n = _int("num_players", d.get("num_players", len(players) or 2), 1, 4)
    if len(players) != n:
        raise ScenarioError(f"'players' must list {n} players (num_players), got {len(players)}")
    clans = d.get("clans")
    if clans is None:
        named = [pd.get("clan") for pd in players]
        named = [None if c in (None, -1, "none") else c for c in named]
        if any(c is not None for c in named):
            clans = tuple(_clan_name(f"players[{p}].clan", c) for p, c in enumerate(named))
    try:
        return GameConfig(num_players=n, seed=d.get("seed", 0), map=d.get("map", "A1,B1,C1,D1"),
                          ruleset=d.get("ruleset"), ports=d.get("ports_enabled", True),
                          scoring_tiles=d.get("scoring_tiles_enabled", True),
                          variant_static_imports=d.get("variant_static_imports", False),
                          kickstarter_tiles=d.get("kickstarter_tiles", False),
                          solo=d.get("solo", n == 1), clans=clans,
                          clan_auction=d.get("clan_auction", False),
                          kickstarter_clan=d.get("kickstarter_clan", False))
    except ValueError as e:
        raise ScenarioError(str(e)) from None


def _clan_name(where, c):
    """A clan given by name or id (-1/None/'none' = no clan) as its name, or None."""
    if c is None or (isinstance(c, str) and c.strip().lower() == "none"):
        return None
    if isinstance(c, (int, np.integer)) and not isinstance(c, bool):
        return None if c == -1 else CLAN_NAMES[_int(where, c, -1, len(CLAN_NAMES) - 1)]
    return CLAN_NAMES[_lookup(CLAN_NAMES, c, "clan")]


# ------------------------------------------------------------ position
def write_scenario(game, d: dict) -> None:
    """Write scenario ``d`` into ``game`` (fresh, built from :func:`scenario_config`)."""
    rs, board, s, T = game.ruleset, game.board, game.state, game.tables
    n, cfg = game.num_players, game.config
    places = _Places()
    s[L.S_ROUND] = _int("round", d.get("round", 1), 1, int(T[L.T_ROUNDS]))
    phase = d.get("phase", "actions")
    if phase not in PHASES:
        raise ScenarioError(f"unknown phase {phase!r}; allowed: {', '.join(PHASES)}")
    s[L.S_PHASE] = PHASES[phase]
    ctx = CONTEXT_NAMES[_lookup(CONTEXT_NAMES, d.get("context", "main action"), "context")]
    if ctx not in PHASE_CONTEXTS[phase]:
        raise ScenarioError(f"context {ctx!r} does not occur in phase {phase!r}; allowed: "
                            f"{', '.join(PHASE_CONTEXTS[phase])}")
    s[L.S_CTX] = CONTEXT_NAMES.index(ctx)
    order = [_int("turn_order[]", x, 0, n - 1)
             for x in _list("turn_order", d.get("turn_order", list(range(n))), n)]
    if sorted(order) != list(range(n)):
        raise ScenarioError(f"turn_order must be a permutation of 0..{n - 1}, got {order}")
    s[L.S_ORDER:L.S_ORDER + 4] = -1
    s[L.S_ORDER:L.S_ORDER + n] = order
    nxt = [_int("next_turn_order[]", x, 0, n - 1)
           for x in _list("next_turn_order", d.get("next_turn_order", []), n)]
    if len(set(nxt)) != len(nxt):
        raise ScenarioError(f"next_turn_order lists a player twice: {nxt}")
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + 4] = -1
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + len(nxt)] = nxt
    s[L.S_N_PASSED] = len(nxt)
    lo = -1 if ctx == "game over" else 0
    cur = _int("current_player", d.get("current_player", order[0] if lo == 0 else -1), lo, n - 1)
    s[L.S_PLAYER] = cur
    s[L.S_TURN_POS] = order.index(cur) if cur in order else 0
    for g, price in _dict("market", d.get("market", {}), GOOD_NAMES).items():
        gi = _lookup(GOOD_NAMES, g, "good")
        s[L.S_PRICE + gi] = _int(f"market price of {g}", price, int(rs.market.min[gi]),
                                 int(rs.market.max[gi]))
    if "slots" in d:
        n_slots = int(T[L.T_N_SLOTS])
        s[L.S_SLOTS:L.S_SLOTS + MAX_SLOTS] = -1
        for i, cid in enumerate(_list("slots", d["slots"], MAX_SLOTS)):
            if cid is not None:
                if i >= n_slots:
                    raise ScenarioError(f"slots: this game has {n_slots} contract slots; "
                                        f"slot {i} must be null")
                s[L.S_SLOTS + i] = _contract_index(rs, cid, f"slots[{i}]")
                places.put("contract", cid, "slots")
    if "pile" in d:
        pile = _list("pile", d["pile"], MAX_CONTRACTS)
        head = _int("pending.deck_head", _dict("pending", d.get("pending", {})).get("deck_head", 0),
                    0, MAX_CONTRACTS - 1)
        s[L.S_DECK:L.S_DECK + MAX_CONTRACTS] = -1
        for i, cid in enumerate(pile):
            s[L.S_DECK + (head + i) % MAX_CONTRACTS] = _contract_index(rs, cid, f"pile[{i}]")
            places.put("contract", cid, "pile")
        s[L.S_DECK_HEAD] = head
        s[L.S_DECK_COUNT] = len(pile)
    if "drawn" in d:
        drawn = _list("drawn", d["drawn"], MAX_DRAW)
        s[L.S_DRAWN:L.S_DRAWN + MAX_DRAW] = -1
        for i, cid in enumerate(drawn):
            if cid is not None:
                s[L.S_DRAWN + i] = _contract_index(rs, cid, f"drawn[{i}]")
                places.put("contract", cid, "drawn")
        s[L.S_N_DRAWN] = sum(1 for c in drawn if c is not None)
    if "scoring_tiles" in d:
        s[L.S_TILES:L.S_TILES + N_ROUNDS_MAX] = -1
        for r, t in enumerate(_list("scoring_tiles", d["scoring_tiles"], N_ROUNDS_MAX)):
            if t is not None:
                s[L.S_TILES + r] = _lookup(SCORING_TILES, t, "scoring tile")
    if "ports" in d:
        s[L.S_PORTS:L.S_PORTS + N_CORNERS] = -1
        for c, t in _dict("ports", d["ports"], tuple(CORNERS.lower())).items():
            if t is not None:
                s[L.S_PORTS + _lookup(CORNERS, c, "corner")] = _lookup(PORT_TILES, t, "port tile")
    track = _dict("import_track", d.get("import_track", {}), IMPORT_NAMES[:3])
    for i, g in enumerate(IMPORT_NAMES[:3]):
        s[L.S_IMPORT + i] = _int(f"import_track.{g}", track.get(g, 0), 0,
                                 int(T[L.T_IMPORT_TRACK_LEN]))
    s[L.S_OCC:L.S_OCC + MAX_NODES] = EMPTY
    for label in _list("neutral", d.get("neutral", []), MAX_NODES):
        node = _node(board, label)
        if not _land(T, node):
            raise ScenarioError(f"neutral: {label} is not an active land hex")
        if s[L.S_OCC + node] != EMPTY:
            raise ScenarioError(f"neutral: hex {label} is listed twice")
        s[L.S_OCC + node] = NEUTRAL
    clans = []
    for p, pd in enumerate(d["players"]):
        if cfg.clan_mode == "fixed":
            given = _clan_name(f"players[{p}].clan", pd.get("clan", cfg.clans[p]))
            if given != cfg.clans[p]:
                raise ScenarioError(f"players[{p}].clan is {given!r} but clans[{p}] is "
                                    f"{cfg.clans[p]!r}")
            pd = dict(pd, clan=cfg.clans[p])
        _set_player(game, p, pd, places)
        clans.append(int(s[L.S_PLAYERS + p * L.P_SIZE + L.P_CLAN]))
    taken = [c for c in clans if c >= 0]
    if len(set(taken)) != len(taken):
        raise ScenarioError(f"two players have the same clan: {[_clan_name('', c) for c in clans]}")
    if "picks" in d:
        s[L.S_PICKS:L.S_PICKS + MAX_START_PICKS] = -1
        s[L.S_PICK_CLANS:L.S_PICK_CLANS + MAX_START_PICKS] = -1
        for i, pick in enumerate(_list("picks", d["picks"], MAX_START_PICKS)):
            if pick is None:
                continue
            where = f"picks[{i}]"
            _dict(where, pick, ("tile", "clan"))
            tile = _start_tile(T, pick.get("tile"), where + ".tile")
            if tile < 0:
                raise ScenarioError(f"{where}.tile is required (S1..S9)")
            s[L.S_PICKS + i] = tile
            places.put("starting tile", f"S{tile + 1}", where)
            clan = _clan_name(where + ".clan", pick.get("clan"))
            s[L.S_PICK_CLANS + i] = -1 if clan is None else CLAN_NAMES.index(clan)
            places.put("clan", clan, where)
    _write_pending(s, n, board, _dict("pending", d.get("pending", {})))
    _check_pending(game, ctx, cur)
    if "rng" in d:
        s[L.S_RNG] = _int("rng", d["rng"], 1, 2 ** 31 - 2)
    s[L.S_DONE] = int(_bool("done", d.get("done", False)))
    game.history = []
    game.scenario = json.loads(json.dumps(d, default=_json_default))
    if ctx != "game over" and len(game.legal_actions()) == 0:
        raise ScenarioError(f"no action is legal for player {cur} in context {ctx!r} of this "
                            f"position; check the context, pending work and the player's stock")


def _json_default(x):
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    raise ScenarioError(f"scenario values must be JSON data (numbers, strings, lists, dicts), "
                        f"got {type(x).__name__} {x!r}")


# pending fields whose value is an index: (lowest, highest) given n players / nodes
def _pending_range(name, n, n_nodes):
    if name in ("row_from", "swap_node"):
        return -1, n_nodes - 1
    if name in ("auction_leader", "auction_bidder"):
        return -1, n - 1
    if name == "turn_position":
        return 0, n - 1
    if name == "production_kind":
        return 0, 4
    if name == "neighborhood_bought":
        return 0, MAX_NB_BUY
    if name in ("production_seat", "auction_seat"):     # n: every seat is done
        return 0, n
    return (-1 if name in PENDING_DEFAULTS else 0), 2 ** 20


def _write_pending(s, n, board, pending):
    for name, (off, k) in PENDING.items():
        if name in PENDING_DEFAULTS and name not in pending:
            s[off] = PENDING_DEFAULTS[name]
    for name, value in pending.items():
        if name not in PENDING:
            raise ScenarioError(f"unknown pending field {name!r}; allowed: {sorted(PENDING)}")
        off, k = PENDING[name]
        lo, hi = _pending_range(name, n, board.n_nodes)
        if name == "deck_head":
            hi = MAX_CONTRACTS - 1
        values = _list(f"pending.{name}", value, k) if k > 1 else [value]
        if len(values) != k:
            raise ScenarioError(f"pending.{name} lists {k} values, got {value!r}")
        s[off:off + k] = [_int(f"pending.{name}", v, lo, hi) for v in values]


def _check_pending(game, ctx, cur):
    """Pending work the player can finish: meat to slaughter within their animals and meat
    ports (R-3.7); a rowing fisherman that is theirs (R-8.5)."""
    s, board = game.state, game.board
    if s[L.S_PHASE] != PH_ACTIONS:
        busy = [k for k in TURN_WORK if k != "drawn" and (s[PENDING[k][0]:sum(PENDING[k])]
                                                         != PENDING_DEFAULTS.get(k, 0)).any()]
        if busy or s[L.S_N_DRAWN]:
            raise ScenarioError(f"pending {busy or ['drawn']}: work of a turn is pending only "
                                f"in phase 'actions'")
        kinds = {"production": (0, 1, 2), "cellar": (3,), "butter": (4,)}.get(ctx)
        if kinds and (s[L.S_PROC_KIND] not in kinds or s[L.S_PROC_SEAT] >= game.num_players):
            raise ScenarioError(f"in context {ctx!r} pending.production_kind must be one of "
                                f"{kinds} (0-2 buildings, 3 cellar, 4 butter) and "
                                f"production_seat a seat (< {game.num_players})")
    elif cur >= 0:
        probe = s.copy()          # the engine's choice of the next decision (R-2.2 order)
        resolve(probe, game.tables)
        if probe[L.S_CTX] != s[L.S_CTX]:
            raise ScenarioError(f"context {ctx!r} disagrees with the pending work of the turn: "
                                f"the engine asks for {CONTEXT_NAMES[int(probe[L.S_CTX])]!r} "
                                f"next (set 'pending', e.g. main_done=1 after the main action)")
    if cur < 0:
        return
    units = [int(s[L.S_OCC + m]) for m in range(board.n_nodes)]
    mine = [o % OCC_STRIDE for o in units if 0 <= o != NEUTRAL and o // OCC_STRIDE == cur]
    beef, mutton = int(s[L.S_MEAT_REM]), int(s[L.S_MEAT_REM + 1])
    short = max(beef - mine.count(UNIT_NAMES.index("cow")), 0) \
        + max(mutton - mine.count(UNIT_NAMES.index("sheep")), 0)
    if (beef or mutton) and ctx not in ("slaughter", "port copy"):
        raise ScenarioError(f"pending.meat_left {[beef, mutton]}: meat is slaughtered right "
                            f"after a fulfilled contract, in context 'slaughter' (R-3.7; "
                            f"'port copy' for a P9 copying P1), not in {ctx!r}")
    if short > bin(int(s[L.S_MEAT_PORTS])).count("1"):
        raise ScenarioError(f"pending.meat_left {[beef, mutton]}: player {cur} lacks {short} "
                            f"cow(s)/sheep to slaughter and has not that many meat ports (R-3.7)")
    src = int(s[L.S_ROW_FROM])
    if (src >= 0 or ctx == "fisherman rowing") and \
            (src < 0 or units[src] != cur * OCC_STRIDE + FISHERMAN):
        raise ScenarioError(f"pending.row_from must be the hex of a fisherman of player {cur} "
                            f"in context 'fisherman rowing' (R-8.5), else -1; got {src}")


def _land(T, node):
    """An active land hex (not a loch or a port) of the board."""
    return not T[L.T_TERRAIN + node] & (TERRAIN_LOCH | TERRAIN_PORT) and T[L.T_ACTIVE + node] != 0


def _start_tile(T, tile, where):
    if tile is None:
        return -1
    allowed = [f"S{i}" for i in range(1, int(T[L.T_N_START_TILES]) + 1)]
    if not isinstance(tile, str) or tile.strip().upper() not in allowed:
        raise ScenarioError(f"{where}: unknown starting tile {tile!r}; allowed: "
                            f"{allowed[0]}..{allowed[-1]}")
    return allowed.index(tile.strip().upper())


def _node(board, label):
    try:
        if not isinstance(label, str):
            raise KeyError(label)
        return board.node(label)
    except (KeyError, ValueError, IndexError):
        raise ScenarioError(f"unknown hex {label!r} on map {','.join(board.config)} "
                            f"(labels like 'A1-05')") from None


def _set_player(game, p, pd, places):
    rs, board, s, T = game.ruleset, game.board, game.state, game.tables
    where = f"players[{p}]"
    po = L.S_PLAYERS + p * L.P_SIZE
    s[po:po + L.P_SIZE] = 0
    s[po + L.P_MONEY] = _int(f"{where}.money", pd.get("money", 0), 0, MAX_COUNT)
    for g, k in _dict(f"{where}.goods", pd.get("goods", {}), GOOD_NAMES).items():
        s[po + L.P_GOODS + _lookup(GOOD_NAMES, g, "good")] = _int(f"{where}.goods.{g}", k, 0,
                                                                 MAX_COUNT)
    clan = _clan_name(f"{where}.clan", pd.get("clan"))
    ci = -1 if clan is None else CLAN_NAMES.index(clan)
    row = NO_CLAN if ci < 0 else ci
    start = dict(zip(CLAN_START_FIELDS, rs.setup.player_start if ci < 0 else rs.clans.start[ci]))
    total = int(rs.economy.merchants_total)
    s[po + L.P_MERCH] = _int(f"{where}.merchants", pd.get("merchants",
                             int(start["merchants_in_supply"])), 0, total)
    for side, goods in _dict(f"{where}.market", pd.get("market", {}), SIDES).items():
        si = _lookup(SIDES, side, "market side")
        for g, k in _dict(f"{where}.market.{side}", goods, GOOD_NAMES).items():
            s[po + L.P_MARKET + si * 6 + _lookup(GOOD_NAMES, g, "good")] = _int(
                f"{where}.market.{side}.{g}", k, 0, total)
    # default: the clan's start, less what the supply and the market already hold
    rest = total - int(s[po + L.P_MERCH] + s[po + L.P_MARKET:po + L.P_MARKET + 12].sum())
    s[po + L.P_TRACK] = _int(f"{where}.merchants_on_track", pd.get(
        "merchants_on_track", max(0, min(total - int(start["merchants_in_supply"]), rest))),
        0, total)
    merchants = int(s[po + L.P_MERCH] + s[po + L.P_TRACK]
                    + s[po + L.P_MARKET:po + L.P_MARKET + 12].sum())
    if merchants > total:
        raise ScenarioError(f"{where}: merchants + merchants_on_track + market merchants = "
                            f"{merchants}; a player has {total} merchants")
    _set_units(game, p, pd, where, ci, row)
    s[po + L.P_SHIP] = _int(f"{where}.shipping", pd.get(
        "shipping", int(start["shipping_level_1_2" if game.num_players <= 2
                              else "shipping_level_3_4"])), 0, int(T[L.T_SHIP_MAX]))
    tech = _dict(f"{where}.technology", pd.get("technology", {}), TECH)
    for t, name in enumerate(TECH):
        s[po + L.P_TECH + t] = _bool(f"{where}.technology.{name}", tech.get(name, False))
        if s[po + L.P_TECH + t] and not T[L.T_CLAN_TECH_OK + row]:
            raise ScenarioError(f"{where}.technology: clan {clan} cannot upgrade (R-8.5)")
    s[po + L.P_GLORY] = _int(f"{where}.glory", pd.get("glory", 0), 0, MAX_COUNT)
    n_boxes = int(T[L.T_CLAN_BOXES + row])
    s[po + L.P_BOX:po + L.P_BOX + MAX_BOXES] = -1
    for b, cid in enumerate(_list(f"{where}.contracts", pd.get("contracts", []), MAX_BOXES)):
        if cid is not None:
            if b >= n_boxes:
                raise ScenarioError(f"{where}.contracts: {n_boxes} export box(es) for clan "
                                    f"{clan} (R-8.1); box {b} must be null")
            s[po + L.P_BOX + b] = _contract_index(rs, cid, f"{where}.contracts[{b}]")
            places.put("contract", cid, f"{where}.contracts")
    table = rs.contracts.table
    for cid in _list(f"{where}.fulfilled", pd.get("fulfilled", []), MAX_CONTRACTS):
        c = _contract_index(rs, cid, f"{where}.fulfilled")
        places.put("contract", cid, f"{where}.fulfilled")
        s[po + L.P_N_FULFILLED] += 1
        s[po + L.P_FULFILLED + c // 31] |= 1 << (c % 31)
        s[po + L.P_IMPORTS:po + L.P_IMPORTS + 4] += table[c, 6:10]
        s[po + L.P_MEAT] += table[c, 4] + table[c, 5]
    used = 0
    for c in _list(f"{where}.ports_used", pd.get("ports_used", []), N_CORNERS):
        bit = 1 << _lookup(CORNERS, c, "corner")
        if used & bit:
            raise ScenarioError(f"{where}.ports_used lists corner {c} twice")
        used |= bit
    s[po + L.P_PORTS_USED] = used
    s[po + L.P_PASSED] = _bool(f"{where}.passed", pd.get("passed", False))
    tile = _start_tile(T, pd.get("start_tile"), f"{where}.start_tile")
    s[po + L.P_START_TILE] = tile
    places.put("starting tile", None if tile < 0 else f"S{tile + 1}", f"{where}.start_tile")
    s[po + L.P_CLAN] = ci
    cellar = _list(f"{where}.cellar", pd.get("cellar", [0, 0]), 2)
    if len(cellar) != 2:
        raise ScenarioError(f"{where}.cellar is [left, right] barrels, got {cellar!r}")
    s[po + L.P_CELLAR:po + L.P_CELLAR + 2] = [_int(f"{where}.cellar", x, 0, MAX_COUNT)
                                              for x in cellar]
    if any(cellar) and not T[L.T_CLAN_CELLAR_IN + row]:
        raise ScenarioError(f"{where}.cellar: only a clan with a whisky cellar (MacKenzie, "
                            f"R-8.6) has barrels; clan here: {clan}")
    s[po + L.P_WHISKY_MADE] = _int(f"{where}.whisky_made", pd.get("whisky_made", 0), 0,
                                   MAX_COUNT)
    s[po + L.P_BID] = _int(f"{where}.bid", pd.get("bid", 0), 0, int(T[L.T_AUCTION_MAX]))
    s[po + L.P_BEER] = _int(f"{where}.beer", pd.get("beer", 0), 0, MAX_COUNT)
    if s[po + L.P_BEER] and not T[L.T_CLAN_BEER_MONEY + row]:
        raise ScenarioError(f"{where}.beer: only the brewer brews beer (R-8.9); clan here: {clan}")
    if "score" in pd:
        score = _dict(f"{where}.score", pd["score"], L.SCORE_FIELDS)
        s[po + L.P_SCORE:po + L.P_SCORE + L.N_SCORE] = [
            _int(f"{where}.score.{k}", score.get(k, 0), -MAX_COUNT, MAX_COUNT)
            for k in L.SCORE_FIELDS]


def _set_units(game, p, pd, where, ci, row):
    """Units on the map: right terrain (R-3.3; fishermen R-8.5), one per hex, within stock."""
    rs, board, s, T = game.ruleset, game.board, game.state, game.tables
    po = L.S_PLAYERS + p * L.P_SIZE
    counts = [int(x) for x in rs.units.count] + [0]
    pooled = bool(T[L.T_CLAN_ANY_WORKER + row])
    workers = [UNIT_NAMES.index(w) for w in ("lumberjack", "miner", "fisherman")]
    deployed = 0
    for label, unit in _dict(f"{where}.units", pd.get("units", {})).items():
        u = _lookup(UNIT_NAMES, unit, "unit")
        node = _node(board, label)
        if s[L.S_OCC + node] != EMPTY:
            raise ScenarioError(f"{where}.units: hex {label} already holds a unit (one unit "
                                f"per hex)")
        if u == FISHERMAN:
            _check_fisherman(game, p, node, label, where, pooled)
        elif not _land(T, node) or not T[L.T_TERRAIN + node] & T[L.T_UNIT_TERRAIN + u]:
            raise ScenarioError(f"{where}.units: a {unit} cannot stand on hex {label} (wrong "
                                f"terrain, a loch/port or an inactive hex, R-3.3)")
        s[L.S_OCC + node] = p * OCC_STRIDE + u
        if pooled and u in workers:    # MacDonald's workers are one pool
            deployed += 1
            continue
        counts[u] -= 1
        if counts[u] < 0:
            raise ScenarioError(f"{where}.units: more {unit} on the map than on a player board "
                                f"({int(rs.units.count[u])})")
    if deployed:
        lj, mi = workers[0], workers[1]
        if deployed > counts[lj] + counts[mi]:
            raise ScenarioError(f"{where}.units: more workers on the map than on a player "
                                f"board ({counts[lj] + counts[mi]})")
        from_lj = min(deployed, counts[lj])
        counts[lj] -= from_lj
        counts[mi] -= deployed - from_lj
    s[po + L.P_BOARD:po + L.P_BOARD + len(counts)] = counts


def _check_fisherman(game, p, node, label, where, pooled):
    """A fisherman (MacDonald only, R-8.5) stands on a loch or on a port with a tile in play,
    with no other fisherman of the same player adjacent."""
    s, T = game.state, game.tables
    if not pooled:
        raise ScenarioError(f"{where}.units: only a clan with fishermen (MacDonald, R-8.5) "
                            f"has fishermen")
    terr = T[L.T_TERRAIN + node]
    if terr & TERRAIN_PORT:
        if s[L.S_PORTS + node - T[L.T_PORT_NODE]] < 0:
            raise ScenarioError(f"{where}.units: a fisherman on port {label} needs a port tile "
                                f"there (R-8.5)")
    elif not terr & TERRAIN_LOCH:
        raise ScenarioError(f"{where}.units: a fisherman stands on a loch or a port, not on "
                            f"{label} (R-8.5)")
    mine = p * OCC_STRIDE + FISHERMAN
    for k in range(6):
        w = T[L.T_ADJ + node * 6 + k]
        if w >= 0 and s[L.S_OCC + w] == mine:
            raise ScenarioError(f"{where}.units: two fishermen of a player are adjacent at "
                                f"{label} (R-8.5)")
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

