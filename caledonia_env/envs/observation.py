"""The observation vector: one fixed layout for every map and player count.

``encode_obs(s, T, observer, out)`` (numba) writes what ``observer`` can see of
engine state ``s`` into ``out`` (float32[OBS_SIZE]). The PettingZoo, Gymnasium
and vector envs all call this one function, so their vectors are identical.
Players are relative to the observer (its own block first, then the others in
seat order after it); absent seats (2-3 player games) are all zeros. Nodes are
padded to ``MAX_NODES`` like the action ids. The face-down contract pile is
hidden (only its size is shown). The offset table of ``docs/observation.md`` is
generated from :data:`LAYOUT` (``python -m caledonia_env.envs --write-docs``), and
:func:`decode_observation` turns a vector back into named fields.
"""
from __future__ import annotations

import numpy as np

from caledonia_env.data.names import CLANS, PORTS
from caledonia_env.engine import layout as L
from caledonia_env.engine.board import ctz, node_words, pofs
from caledonia_env.engine.constants import (
    CONTEXT_NAMES,
    CTX_AUCTION,
    CTX_BREW,
    CTX_PROCESS,
    CTX_ROW,
    CTX_SECOND_CONTRACT,
    MAX_BID,
    MAX_BREW,
    GOOD_NAMES,
    IMPORT_NAMES,
    MAX_BOXES,
    MAX_DRAW,
    MAX_NODES,
    MAX_PLAYERS,
    MAX_SLOTS,
    MAX_START_PICKS,
    N_CONTEXTS,
    N_CORNERS,
    N_GOODS,
    N_IMPORTS,
    N_PORT_TILES,
    N_ROUNDS_MAX,
    N_SCORING_TILES,
    N_TRACKED,
    N_UNITS,
    NEUTRAL,
    OCC_STRIDE,
    PORT_SWAP_UNITS,
    TERRAIN_FOREST,
    TERRAIN_LOCH,
    TERRAIN_MOUNTAIN,
    TERRAIN_PASTURE,
    TERRAIN_PORT,
    UNIT_NAMES,
)
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.market import market_price
from caledonia_env.engine.scoring import import_values, tile_glory_of, units_by_player

N_PHASES = 5
N_CLANS = len(CLANS)
N_BUILDING_KINDS = 3
#: Values are clipped to [0, OBS_HIGH]; only unbounded counts (money, goods, glory…) can reach it.
OBS_HIGH = 10.0

# -------------------------------------------------------------- scales
MONEY_SCALE = 100.0
GOODS_SCALE = 10.0
PRICE_SCALE = 20.0
GLORY_SCALE = 50.0
COUNT_SCALE = 10.0        # fulfilled contracts, imports, meat
MARKET_SCALE = 5.0        # own merchants on one market space
COST_SCALE = 20.0         # contract cost of the round
LAND_SCALE = 10.0
TILE_GLORY_SCALE = 10.0
IMPORT_VP_SCALE = 10.0
SMALL_SCALE = 3.0         # pending bonus hexes / upgrades, port picks left
MEAT_SCALE = 5.0
START_GOODS_SCALE = 3.0
#: Contract columns (engine order, layout.C_*) and their divisors.
CONTRACT_COLUMNS = ("need_wool", "need_bread", "need_cheese", "need_whisky", "need_beef",
                    "need_mutton", "gain_cotton", "gain_tobacco", "gain_sugar_cane", "gain_hops",
                    "gain_money", "gain_hex", "gain_upgrade")
CONTRACT_SCALE = np.array([5.0] * 10 + [20.0, 2.0, 2.0])
CONTRACT_FEATURES = ("present",) + CONTRACT_COLUMNS
CF = len(CONTRACT_FEATURES)
assert len(CONTRACT_COLUMNS) == L.C_WIDTH

MAP_CHANNELS = ("pasture", "forest", "mountain", "loch", "port", "active", "land_cost",
                "border", "delta", "occ_self", "occ_next", "occ_next2", "occ_next3",
                "occ_neutral") + tuple(f"unit_{u}" for u in UNIT_NAMES) + (
                "reach_now", "reach_level", "marked")
MC = len(MAP_CHANNELS)
MC_OCC = MAP_CHANNELS.index("occ_self")
MC_NEUTRAL = MAP_CHANNELS.index("occ_neutral")
MC_UNIT = MAP_CHANNELS.index("unit_sheep")
MC_REACH = MAP_CHANNELS.index("reach_now")
MC_LEVEL = MAP_CHANNELS.index("reach_level")
MC_MARKED = MAP_CHANNELS.index("marked")
START_PICK_FEATURES = ("present", "money") + tuple(f"goods_{g}" for g in GOOD_NAMES) + tuple(
    f"clan_{c}" for c in CLANS)
SPF = len(START_PICK_FEATURES)
PORT_FEATURES = tuple(f"tile_{PORTS[i]}" for i in range(N_PORT_TILES)) + tuple(
    f"used_by_rel{r}" for r in range(MAX_PLAYERS)) + ("reachable",)
PF = len(PORT_FEATURES)
PORT_USED = N_PORT_TILES
N_AUC_STAGES = 3
AUCTION_FEATURES = N_AUC_STAGES + 2 + 3 * MAX_PLAYERS
AUC_HAS_BID = N_AUC_STAGES
AUC_LEADER = N_AUC_STAGES + 2
AUC_OUT = AUC_LEADER + MAX_PLAYERS
AUC_SEAT = AUC_OUT + MAX_PLAYERS
PORT_REACH = N_PORT_TILES + MAX_PLAYERS


class Field:
    """One named slice of the vector: ``offset`` (of player 0's copy for per-player fields)."""

    def __init__(self, group, name, shape, offset, meaning, scale):
        self.group, self.name, self.shape = group, name, tuple(shape)
        self.offset, self.meaning, self.scale = offset, meaning, scale
        self.size = int(np.prod(self.shape)) if self.shape else 1

    @property
    def key(self):
        return f"{self.group}.{self.name}"


class _Layout:
    def __init__(self):
        self.fields: list[Field] = []
        self.size = 0
        self._player = False
        self.player_size = 0

    def add(self, group, name, shape, meaning, scale="0/1"):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        n = int(np.prod(shape)) if shape else 1
        if self._player:
            off = self.player_size
            self.player_size += n
        else:
            off = self.size
            self.size += n
        self.fields.append(Field(group, name, shape, off, meaning, scale))
        return off


LAYOUT = _Layout()
_a = LAYOUT.add
# ---------------------------------------------------------------- global
O_NUM_PLAYERS = _a("global", "num_players", MAX_PLAYERS, "one-hot: number of players (index n-1)")
O_ROUND = _a("global", "round", N_ROUNDS_MAX, "one-hot: current round 1..5")
O_PHASE = _a("global", "phase", N_PHASES, "one-hot: setup picks, setup workers, actions, "
             "production, over")
O_PRICE = _a("global", "price", N_GOODS, f"market price of {', '.join(GOOD_NAMES)}",
             f"price / {PRICE_SCALE:g}")
O_COST = _a("global", "contract_cost", 2, "this round's contract cost: [pay, gain] "
            "(a negative cost is a gain)", f"£ / {COST_SCALE:g}")
O_SLOTS = _a("global", "slots", (MAX_SLOTS, CF), "face-up export contracts per slot "
             "(features: see 'contract features')", "contract features")
O_PILE = _a("global", "pile_size", 1, "face-down contracts left (their order is hidden)",
            "count / contracts in the ruleset")
O_TILES = _a("global", "scoring_tiles", (N_ROUNDS_MAX, N_SCORING_TILES),
             "one-hot per round: the scoring tile T1..T9 of that round (all rows empty "
             "without the variant)")
O_PORTS = _a("global", "ports", (N_CORNERS, PF), "per corner A..D: tile one-hot (engine tile "
             "order, see port features), used this game by relative player 0..3, reachable "
             "by the observer now")
O_IMPORT = _a("global", "import_track", N_TRACKED, "import token positions (cotton, tobacco, "
              "sugar cane)", "position / track length")
O_IMPORT_VP = _a("global", "import_vp", N_TRACKED, "VP each tracked import is worth now (R-7 "
                 "rarity, or the static value)", f"VP / {IMPORT_VP_SCALE:g}")
O_PASSED_N = _a("global", "n_passed", 1, "players who passed this round", "count / players")
# ----------------------------------------------------------- decision
O_CTX = _a("decision", "context", N_CONTEXTS, "one-hot decision context: "
           + ", ".join(CONTEXT_NAMES))
O_ACTOR = _a("decision", "actor", MAX_PLAYERS, "one-hot: relative seat of the deciding player "
             "(index 0 = the observer); all zeros once the game is over")
O_MAIN_DONE = _a("decision", "main_done", 1, "the acting player's main action is taken")
O_NB = _a("decision", "neighbor_goods", N_GOODS, "neighborhood purchase: goods on offer")
O_DRAWN = _a("decision", "drawn", (MAX_DRAW, CF), "structure bonus: the drawn contracts",
             "contract features")
O_KEEP_LEFT = _a("decision", "keep_left", 1, "structure bonus: contracts that may still be kept",
                 "count / 2")
O_MEAT = _a("decision", "meat_left", 2, "slaughter: cows, sheep still to slaughter",
            f"count / {MEAT_SCALE:g}")
O_MEAT_PORTS = _a("decision", "meat_ports", N_CORNERS, "slaughter: corners whose tile may spare "
                  "an animal")
O_BONUS = _a("decision", "bonus", 2, "export bonus: free hexes, upgrade bonuses still to take",
             f"count / {SMALL_SCALE:g}")
O_PORT_KIND = _a("decision", "port_effect", N_PORT_TILES, "one-hot: port effect in progress "
                 "(engine tile order, as the ports' tile one-hot)")
O_PORT_LEFT = _a("decision", "port_left", 2, "port effect: picks left, stage (P2/P3: 0 discard, "
                 "1 gain)", f"picks / {SMALL_SCALE:g}, stage 0/1")
O_SWAP = _a("decision", "swap_types", (2, N_UNITS), "P7: unit types already swapped out, in")
O_P4 = _a("decision", "p4_good", N_GOODS, "P6 price shift: the good this turn's trade must be")
O_PROC = _a("decision", "process_kind", N_BUILDING_KINDS, "production: building kind deciding "
            "(dairy, bakery, distillery)")
O_SECOND = _a("decision", "second_contract", 1, "R-8.1 Buchanan: a second contract may be "
              "taken in this Obtain action")
O_ROWED = _a("decision", "rowed", 1, "R-8.5 MacDonald: fishermen rowed this turn",
             f"count / {SMALL_SCALE:g}")
O_BREW = _a("decision", "brew_left", 1, "R-8.9 brewer: beer that may still be brewed",
            f"count / {MAX_BREW}")
O_AUCTION = _a("decision", "auction", AUCTION_FEATURES, "R-9.4 clan auction: stage one-hot "
               "(bidding, winner picks, between seats), has a bid, highest bid, leader (relative "
               "seat one-hot), players out (relative seats), turn-order position auctioned "
               "(one-hot)", f"bid / {MAX_BID}")
O_PICKS = _a("decision", "start_picks", (MAX_START_PICKS, SPF), "starting tiles on offer: "
             "present, money, goods, clan one-hot", f"money / {MONEY_SCALE:g}, goods / "
             f"{START_GOODS_SCALE:g}")
# ------------------------------------------------------------ players
O_PLAYERS = LAYOUT.size
LAYOUT._player = True
_a("player", "present", 1, "this seat is in the game")
P_ACTING = _a("player", "acting", 1, "this player decides now")
P_PASSED = _a("player", "passed", 1, "passed this round (R-3.8)")
P_MONEY = _a("player", "money", 1, "money", f"£ / {MONEY_SCALE:g}")
P_GOODS = _a("player", "goods", N_GOODS, f"goods: {', '.join(GOOD_NAMES)}",
             f"count / {GOODS_SCALE:g}")
P_MERCH = _a("player", "merchants", 2, "merchants in supply, on the merchant track",
             "count / merchants in the game")
P_MARKET = _a("player", "market", (2, N_GOODS), "own merchants on the buy / sell space of each "
              "good", f"count / {MARKET_SCALE:g}")
P_BOARD = _a("player", "units_left", N_UNITS, "units left on the player board: "
             + ", ".join(UNIT_NAMES), "count / starting count")
P_SHIP = _a("player", "shipping", 1, "shipping level", "level / max level")
P_TECH = _a("player", "technology", 2, "technology upgrades: lumberjack, miner")
P_GLORY = _a("player", "glory", 1, "glory points", f"glory / {GLORY_SCALE:g}")
P_BOX = _a("player", "boxes", (MAX_BOXES, CF), "contracts in the export boxes",
           "contract features")
P_NFUL = _a("player", "fulfilled", 1, "contracts fulfilled", f"count / {COUNT_SCALE:g}")
P_IMPORTS = _a("player", "imports", N_IMPORTS, f"import goods: {', '.join(IMPORT_NAMES)}",
               f"count / {COUNT_SCALE:g}")
P_MEATN = _a("player", "meat", 1, "meat units on fulfilled contracts", f"count / {COUNT_SCALE:g}")
P_CLAN = _a("player", "clan", N_CLANS, "one-hot clan: " + ", ".join(CLANS))
P_ORDER = _a("player", "order", MAX_PLAYERS, "one-hot: position in this round's turn order")
P_NEXT = _a("player", "next_order", MAX_PLAYERS, "one-hot: position in next round's order "
            "(taken by passing)")
P_CELLAR = _a("player", "cellar", 2, "R-8.6 MacKenzie: barrels on the left / right aging space",
              f"count / {MEAT_SCALE:g}")
P_WHISKY = _a("player", "whisky_made", 1, "R-8.6: whisky produced in this production phase",
              f"count / {GOODS_SCALE:g}")
P_BID = _a("player", "bid", 1, "R-9.4: VP paid in the clan auction", f"VP / {MAX_BID}")
P_BEER = _a("player", "beer", 1, "R-8.9: beer brewed so far", f"count / {COUNT_SCALE:g}")
P_TILE = _a("player", "round_tile_glory", 1, "glory this round's scoring tile would give now",
            f"glory / {TILE_GLORY_SCALE:g}")
LAYOUT._player = False
PB = LAYOUT.player_size
LAYOUT.size += MAX_PLAYERS * PB
# ---------------------------------------------------------------- map
O_MAP = _a("map", "nodes", (MAX_NODES, MC), "per node (hexes, then the 4 ports; padded): "
           "channels below", "see channels")
OBS_SIZE = LAYOUT.size
# per-player offsets become absolute for player block 0
for _f in LAYOUT.fields:
    if _f.group == "player":
        _f.offset += O_PLAYERS


# ====================================================================== numba
@njit(cache=True, inline="always")
def _clip(v):
    return v if v < OBS_HIGH else OBS_HIGH


@njit(cache=True)
def _contract(T, c, out, off):
    """Contract features of contract id ``c`` at out[off:off+CF] (zeros when c < 0)."""
    if c < 0:
        return
    out[off] = 1.0
    base = L.T_CONTRACTS + c * L.C_WIDTH
    for j in range(L.C_WIDTH):
        out[off + 1 + j] = T[base + j] / CONTRACT_SCALE[j]


@njit(cache=True)
def encode_obs(s, T, observer, out):
    """Write ``observer``'s view of state ``s`` into ``out`` (float32[OBS_SIZE])."""
    out[:] = 0.0
    n = s[L.S_NP]
    nn = T[L.T_N_NODES]
    ob = observer
    # relative seat of every player
    rel = np.empty(MAX_PLAYERS, np.int64)
    for p in range(MAX_PLAYERS):
        rel[p] = (p - ob + n) % n if p < n else -1
    # ------------------------------------------------------------ global
    out[O_NUM_PLAYERS + n - 1] = 1.0
    rnd = s[L.S_ROUND]
    if rnd >= 1 and rnd <= N_ROUNDS_MAX:
        out[O_ROUND + rnd - 1] = 1.0
    out[O_PHASE + s[L.S_PHASE]] = 1.0
    for g in range(N_GOODS):
        out[O_PRICE + g] = market_price(s, T, g) / PRICE_SCALE
    cost = T[L.T_CONTRACT_COST + rnd - 1] if rnd >= 1 else 0
    if cost >= 0:
        out[O_COST] = cost / COST_SCALE
    else:
        out[O_COST + 1] = -cost / COST_SCALE
    for i in range(MAX_SLOTS):
        _contract(T, s[L.S_SLOTS + i], out, O_SLOTS + i * CF)
    if T[L.T_N_CONTRACTS] > 0:
        out[O_PILE] = s[L.S_DECK_COUNT] / T[L.T_N_CONTRACTS]
    for r in range(N_ROUNDS_MAX):
        t = s[L.S_TILES + r]
        if t >= 0:
            out[O_TILES + r * N_SCORING_TILES + t] = 1.0
    for c in range(N_CORNERS):
        t = s[L.S_PORTS + c]
        if t >= 0:
            out[O_PORTS + c * PF + t] = 1.0
        for p in range(n):
            if s[pofs(p) + L.P_PORTS_USED] & (1 << c):
                out[O_PORTS + c * PF + PORT_USED + rel[p]] = 1.0
    track = T[L.T_IMPORT_TRACK_LEN]
    imp = np.zeros(N_TRACKED, np.int64)
    import_values(s, T, imp)
    for i in range(N_TRACKED):
        if track > 0:
            out[O_IMPORT + i] = s[L.S_IMPORT + i] / track
        out[O_IMPORT_VP + i] = imp[i] / IMPORT_VP_SCALE
    out[O_PASSED_N] = s[L.S_N_PASSED] / n
    # ---------------------------------------------------------- decision
    ctx = s[L.S_CTX]
    out[O_CTX + ctx] = 1.0
    actor = s[L.S_PLAYER]
    if actor >= 0:
        out[O_ACTOR + rel[actor]] = 1.0
    out[O_MAIN_DONE] = 1.0 if s[L.S_MAIN_DONE] else 0.0
    for g in range(N_GOODS):
        if s[L.S_NB_PENDING] & (1 << g):
            out[O_NB + g] = 1.0
        if s[L.S_PRICE_SHIFT_GOOD] == g:
            out[O_P4 + g] = 1.0
    for i in range(MAX_DRAW):
        _contract(T, s[L.S_DRAWN + i], out, O_DRAWN + i * CF)
    out[O_KEEP_LEFT] = s[L.S_KEEP_LEFT] / 2.0
    out[O_MEAT] = s[L.S_MEAT_REM] / MEAT_SCALE
    out[O_MEAT + 1] = s[L.S_MEAT_REM + 1] / MEAT_SCALE
    for c in range(N_CORNERS):
        if s[L.S_MEAT_PORTS] & (1 << c):
            out[O_MEAT_PORTS + c] = 1.0
    out[O_BONUS] = _clip(s[L.S_BONUS_HEX] / SMALL_SCALE)
    out[O_BONUS + 1] = _clip(s[L.S_BONUS_UPG] / SMALL_SCALE)
    kind = s[L.S_PORT_KIND]
    if kind >= 0:
        out[O_PORT_KIND + kind] = 1.0
        out[O_PORT_LEFT] = s[L.S_PORT_LEFT] / SMALL_SCALE
        out[O_PORT_LEFT + 1] = s[L.S_PORT_STAGE]
        for u in range(N_UNITS):
            if s[L.S_SWAP_OUT] & (1 << u):
                out[O_SWAP + u] = 1.0
            if s[L.S_SWAP_IN] & (1 << u):
                out[O_SWAP + N_UNITS + u] = 1.0
    if ctx == CTX_SECOND_CONTRACT and s[L.S_SECOND_OBTAIN]:
        out[O_SECOND] = 1.0
    out[O_ROWED] = _clip(s[L.S_ROWED] / SMALL_SCALE)
    if ctx == CTX_BREW:
        out[O_BREW] = s[L.S_BREW_LEFT] / MAX_BREW
    if ctx == CTX_AUCTION:
        stage = s[L.S_AUC_STAGE]
        if stage >= 0 and stage < N_AUC_STAGES:
            out[O_AUCTION + stage] = 1.0
        if s[L.S_AUC_HIGH] >= 0:
            out[O_AUCTION + AUC_HAS_BID] = 1.0
            out[O_AUCTION + AUC_HAS_BID + 1] = s[L.S_AUC_HIGH] / MAX_BID
        leader = s[L.S_AUC_LEADER]
        if leader >= 0 and leader < n:
            out[O_AUCTION + AUC_LEADER + rel[leader]] = 1.0
        for p in range(n):
            if (s[L.S_AUC_OUT] >> p) & 1:
                out[O_AUCTION + AUC_OUT + rel[p]] = 1.0
        seat = s[L.S_AUC_SEAT]
        if seat >= 0 and seat < MAX_PLAYERS:
            out[O_AUCTION + AUC_SEAT + seat] = 1.0
    if ctx == CTX_PROCESS:
        k = s[L.S_PROC_KIND]
        if k >= 0 and k < N_BUILDING_KINDS:
            out[O_PROC + k] = 1.0
    for i in range(MAX_START_PICKS):
        tile = s[L.S_PICKS + i]
        if tile < 0:
            continue
        o = O_PICKS + i * SPF
        out[o] = 1.0
        out[o + 1] = T[L.T_START_MONEY + tile] / MONEY_SCALE
        for g in range(N_GOODS):
            out[o + 2 + g] = T[L.T_START_GOODS + tile * N_GOODS + g] / START_GOODS_SCALE
        clan = s[L.S_PICK_CLANS + i]
        if clan >= 0 and clan < N_CLANS:
            out[o + 2 + N_GOODS + clan] = 1.0
    # ----------------------------------------------------------- players
    merch_total = T[L.T_MERCH_SUPPLY] + T[L.T_MERCH_TRACK]
    ship_max = T[L.T_SHIP_MAX]
    cur_tile = s[L.S_TILES + rnd - 1] if (rnd >= 1 and T[L.T_SCORING_TILES_ON]) else -1
    own = np.empty((MAX_PLAYERS, MAX_NODES), np.int64)
    units = np.zeros(MAX_PLAYERS, np.int64)
    if cur_tile >= 0:
        units_by_player(s, T, own, units)        # one pass for every player's tile
    for p in range(n):
        poff = pofs(p)
        o = O_PLAYERS + rel[p] * PB
        out[o] = 1.0
        if p == actor:
            out[o + P_ACTING] = 1.0
        out[o + P_PASSED] = 1.0 if s[poff + L.P_PASSED] else 0.0
        out[o + P_MONEY] = _clip(s[poff + L.P_MONEY] / MONEY_SCALE)
        for g in range(N_GOODS):
            out[o + P_GOODS + g] = _clip(s[poff + L.P_GOODS + g] / GOODS_SCALE)
        if merch_total > 0:
            out[o + P_MERCH] = s[poff + L.P_MERCH] / merch_total
            out[o + P_MERCH + 1] = s[poff + L.P_TRACK] / merch_total
        for i in range(2 * N_GOODS):
            out[o + P_MARKET + i] = _clip(s[poff + L.P_MARKET + i] / MARKET_SCALE)
        for u in range(N_UNITS):
            cnt = T[L.T_UNIT_COUNT + u]
            if cnt > 0:
                out[o + P_BOARD + u] = s[poff + L.P_BOARD + u] / cnt
        if ship_max > 0:
            out[o + P_SHIP] = s[poff + L.P_SHIP] / ship_max
        out[o + P_TECH] = s[poff + L.P_TECH]
        out[o + P_TECH + 1] = s[poff + L.P_TECH + 1]
        out[o + P_GLORY] = _clip(s[poff + L.P_GLORY] / GLORY_SCALE)
        for b in range(MAX_BOXES):
            _contract(T, s[poff + L.P_BOX + b], out, o + P_BOX + b * CF)
        out[o + P_NFUL] = _clip(s[poff + L.P_N_FULFILLED] / COUNT_SCALE)
        for i in range(N_IMPORTS):
            out[o + P_IMPORTS + i] = _clip(s[poff + L.P_IMPORTS + i] / COUNT_SCALE)
        out[o + P_MEATN] = _clip(s[poff + L.P_MEAT] / COUNT_SCALE)
        clan = s[poff + L.P_CLAN]
        if clan >= 0 and clan < N_CLANS:
            out[o + P_CLAN + clan] = 1.0
        for i in range(n):
            if s[L.S_ORDER + i] == p:
                out[o + P_ORDER + i] = 1.0
            if s[L.S_NEXT_ORDER + i] == p:
                out[o + P_NEXT + i] = 1.0
        out[o + P_CELLAR] = _clip(s[poff + L.P_CELLAR] / MEAT_SCALE)
        out[o + P_CELLAR + 1] = _clip(s[poff + L.P_CELLAR + 1] / MEAT_SCALE)
        out[o + P_WHISKY] = _clip(s[poff + L.P_WHISKY_MADE] / GOODS_SCALE)
        out[o + P_BID] = _clip(s[poff + L.P_BID] / MAX_BID)
        out[o + P_BEER] = _clip(s[poff + L.P_BEER] / COUNT_SCALE)
        if cur_tile >= 0:
            out[o + P_TILE] = _clip(tile_glory_of(s, T, p, cur_tile, own[p], units[p])
                                    / TILE_GLORY_SCALE)
    # --------------------------------------------------------------- map
    level = s[pofs(ob) + L.P_SHIP]
    beyond = ship_max + 1
    minreq = np.full(MAX_NODES, beyond, np.int32)
    for w in range(L.RB_WORDS):              # the observer's nodes, from their bitset
        _empty, mine = node_words(s, nn, ob, w)
        while mine:
            m = w * 64 + ctz(mine)
            mine &= mine - np.uint64(1)
            row = L.T_SHIP_REQ + m * MAX_NODES
            for v in range(nn):              # branch-free, vectorised min over the row
                minreq[v] = min(minreq[v], T[row + v])
    marked = -1
    if kind == PORT_SWAP_UNITS:
        marked = s[L.S_SWAP_NODE]
    elif ctx == CTX_ROW:
        marked = s[L.S_ROW_FROM]
    for v in range(nn):
        o = O_MAP + v * MC
        terr = T[L.T_TERRAIN + v]          # branch-free: terrain is random per node
        out[o] = np.float32((terr & TERRAIN_PASTURE) != 0)
        out[o + 1] = np.float32((terr & TERRAIN_FOREST) != 0)
        out[o + 2] = np.float32((terr & TERRAIN_MOUNTAIN) != 0)
        out[o + 3] = np.float32((terr & TERRAIN_LOCH) != 0)
        out[o + 4] = np.float32((terr & TERRAIN_PORT) != 0)
        out[o + 5] = np.float32(T[L.T_ACTIVE + v] != 0)
        out[o + 6] = T[L.T_LAND_COST + v] / LAND_SCALE
        out[o + 7] = np.float32(T[L.T_BORDER + v] != 0)
        out[o + 8] = np.float32(T[L.T_DELTA + v] != 0)
        occ = s[L.S_OCC + v]
        if occ == NEUTRAL:
            out[o + MC_NEUTRAL] = 1.0
        elif occ >= 0:
            out[o + MC_OCC + rel[occ // OCC_STRIDE]] = 1.0
            out[o + MC_UNIT + occ % OCC_STRIDE] = 1.0
        req = minreq[v]
        out[o + MC_REACH] = np.float32(req <= level)
        out[o + MC_LEVEL] = req / beyond
        if v == marked:
            out[o + MC_MARKED] = 1.0
    for c in range(N_CORNERS):
        if out[O_MAP + T[L.T_PORT_NODE + c] * MC + MC_REACH] > 0.0:
            out[O_PORTS + c * PF + PORT_REACH] = 1.0


__all__ = ["encode_obs", "OBS_SIZE", "OBS_HIGH", "LAYOUT", "MAP_CHANNELS", "CONTRACT_FEATURES"]
