"""Named offsets of the flat int32 game state and of the static tables.

State: one int32 row per game (a batch is a 2-D array). Tables: one int32
array per (ruleset, map, player count, variants), built by
:mod:`caledonia_env.engine.tables.build`. All offsets are module constants so numba
compiles them in. :func:`game_over` is the one test of a finished game.
"""
from numba.extending import register_jitable

from caledonia_env.data.automa import CARD_WIDTH as AM_CARD_W
from caledonia_env.engine.constants import (CTX_GAME_OVER, MAX_BOXES, MAX_CONTRACTS, MAX_COVER, MAX_DRAW, MAX_NODES,
                        MAX_PLAYERS, MAX_PROCESS, MAX_SLOTS, MAX_START_PICKS, N_CLANS, N_CORNERS,
                        N_GOODS, N_IMPORTS, N_PORT_TILES, N_ROUNDS_MAX, N_SCORING_TILES, N_TRACKED,
                        N_UNITS)


class _Alloc:
    def __init__(self):
        self.size = 0

    def __call__(self, n=1):
        off = self.size
        self.size += n
        return off


# ---------------------------------------------------------------- game state
_s = _Alloc()
S_NP = _s()              # number of players
S_ROUND = _s()           # 1..5
S_PHASE = _s()           # PH_*
S_CTX = _s()             # CTX_* of the pending decision
S_PLAYER = _s()          # who decides now
S_RNG = _s()             # minstd state (R-1 draws, solo dice)
S_TURN_POS = _s()        # index in S_ORDER of the active player
S_ORDER = _s(MAX_PLAYERS)        # this round's turn order (player ids)
S_NEXT_ORDER = _s(MAX_PLAYERS)   # next round's order, filled by passes
S_N_PASSED = _s()
S_MAIN_DONE = _s()       # main action taken this turn
S_PRICE_STEP = _s(N_GOODS)   # each good's price marker: a step number (engine.market, R-3.1)
S_SLOTS = _s(MAX_SLOTS)  # face-up contract per slot, -1 empty
S_DECK = _s(MAX_CONTRACTS)   # face-down pile, circular buffer
S_DECK_HEAD = _s()
S_DECK_COUNT = _s()
S_TILES = _s(N_ROUNDS_MAX)   # scoring tile of each round, -1 none
S_PORTS = _s(N_CORNERS)      # port tile at each corner, -1 none
S_IMPORT = _s(N_TRACKED)     # import token positions
S_OCC = _s(MAX_NODES)        # occupant: -1, player*16+unit, or NEUTRAL
# pending work of the current turn (resolved in a fixed priority order)
S_NB_PENDING = _s()      # bitmask of goods offered by the neighborhood bonus
S_STRUCT_PENDING = _s()  # a structure bonus draw is due
S_DRAWN = _s(MAX_DRAW)   # contracts drawn for the structure bonus (-1 none)
S_N_DRAWN = _s()
S_KEEP_LEFT = _s()       # how many drawn contracts may still be kept
S_MEAT_REM = _s(2)       # beef, mutton still to slaughter
S_MEAT_PORTS = _s()      # corners whose tile may replace one animal (meat reduction / copy)
S_BONUS_HEX = _s()       # free hexes still to place
S_BONUS_UPG = _s()       # upgrade bonuses still to take
S_PORT_KIND = _s()       # port effect in progress (PORT_* of constants) or -1
S_PORT_LEFT = _s()       # picks left in that effect
S_PORT_STAGE = _s()      # basic / processed exchange: 0 discard pending, 1 gaining
S_SWAP_OUT = _s()        # unit swap: bitmask of outgoing unit types
S_SWAP_IN = _s()         # unit swap: bitmask of incoming unit types
S_SWAP_NODE = _s()       # unit swap: node already swapped, -1
S_PRICE_SHIFT_GOOD = _s()  # price shift: the good this turn's trade must be, -1
S_PROC_SEAT = _s()       # production: seat (in next order) now processing
S_PROC_KIND = _s()       # production: building kind now deciding
S_SETUP_PTR = _s()       # setup: how many picks / placements are done
S_PICKS = _s(MAX_START_PICKS)    # starting tiles on offer, -1 taken
S_PICK_CLANS = _s(MAX_START_PICKS)
S_DONE = _s()            # 1 when the game is over: a mirror kept for the layout, read game_over(s)
S_TURN_CONTRACTS = _s()  # contracts taken this turn (R-8.1 Buchanan pays once per turn)
S_SECOND_OBTAIN = _s()   # a second contract may still be taken in this Obtain action
S_ROWED = _s()           # fishermen rowed this turn
S_ROW_FROM = _s()        # node of the fisherman chosen to row, -1
S_BREW_LEFT = _s()       # beer that may still be brewed for the last contract
S_AUC_STAGE = _s()       # 0 bidding, 1 the winner picks a clan
S_AUC_HIGH = _s()        # highest bid so far, -1 none
S_AUC_LEADER = _s()      # player holding the highest bid
S_AUC_OUT = _s()         # bitmask of players out of this auction
S_AUC_SEAT = _s()        # turn-order position being auctioned
S_AUC_BIDDER = _s()      # player whose bid decision it is
S_NB_BOUGHT = _s(N_GOODS)  # neighborhood purchases of each good this turn
S_AM_NLOG = _s()         # Automa events logged by the current engine call (new_game, apply_action)
S_HEADER_END = _s(0)

# per-player block
_p = _Alloc()
P_MONEY = _p()
P_GOODS = _p(N_GOODS)
P_MERCH = _p()           # merchants in personal supply
P_TRACK = _p()           # merchants still on the merchant track
P_MARKET = _p(2 * N_GOODS)   # own merchants on buy (0..5) / sell (6..11) spaces
P_BOARD = _p(N_UNITS)    # units left on the player board
P_SHIP = _p()            # shipping level
P_TECH = _p(2)           # lumberjack, miner technology upgraded
P_GLORY = _p()
P_BOX = _p(MAX_BOXES)    # contract in each export box, -1 empty
P_N_FULFILLED = _p()
P_IMPORTS = _p(N_IMPORTS)    # cotton, tobacco, sugar cane, hops on fulfilled contracts
P_MEAT = _p()            # meat units on fulfilled contracts (T7)
P_FULFILLED = _p(2)      # bitset of fulfilled contract ids
P_PORTS_USED = _p()      # bitmask of corners used
P_CLAN = _p()            # clan id, -1 no clan
P_START_TILE = _p()
P_PASSED = _p()
P_CELLAR = _p(2)         # MacKenzie: barrels on the left / right aging space
P_WHISKY_MADE = _p()     # whisky produced in this production phase
P_BID = _p()             # VP paid in the clan auction
P_BEER = _p()            # beer brewed so far (statistics)
P_SCORE = _p(9)          # final: SCORE_FIELDS
# Automa seats: deck state and preferred unit type
AM_MAX_CARDS = 31
P_AM_PILE = _p(AM_MAX_CARDS)  # pile of card rows, top = P_AM_PILE + P_AM_NPILE - 1
P_AM_NPILE = _p()
P_AM_DISCARD = _p()      # bitmask of card rows on the discard pile
P_AM_REMOVED = _p()      # bitmask of card rows out of the game
P_AM_ACTION = _p()       # current action card row, -1 none
P_AM_SUPPORT = _p()      # current support card row, -1 none
P_AM_PREF = _p()         # preferred unit type 0..6
P_SIZE = _p(0)

S_PLAYERS = S_HEADER_END
STATE_SIZE = S_PLAYERS + MAX_PLAYERS * P_SIZE



@register_jitable
def game_over(s):
    """The game is over: the one test every reader uses (jitted or plain Python). The source of
    truth is ``S_CTX == CTX_GAME_OVER``; ``S_PHASE = PH_OVER`` and ``S_DONE = 1`` are written
    with it by ``flow.end_game`` only."""
    return s[S_CTX] == CTX_GAME_OVER



@register_jitable
def copy_state(dst, src):
    """``dst[:] = src`` for two equal-length vectors (a state and its scratch copy), as a
    plain loop: numba's slice assignment first checks whether the two arrays overlap, which
    makes it about 7 times slower for one 717-cell state, and a lookahead copies the state
    once per legal action."""
    for i in range(src.shape[0]):
        dst[i] = src[i]

# Automa event log: not part of the state row but an int32[AM_LOG_SIZE] array
# passed next to it (``step.apply_action_log``, ``setup.new_game_log``): AM_LOG_CAP events
# of AM_EV_W ints, a ring indexed by the count S_AM_NLOG (which is in the state)
AM_LOG_CAP = 256
AM_EV_W = 4
AM_LOG_SIZE = AM_LOG_CAP * AM_EV_W

SCORE_FIELDS = ("glory", "goods", "money", "hops", "imports", "exports", "settlements",
                "auction", "total")
N_SCORE = len(SCORE_FIELDS)
SCORE_TOTAL = N_SCORE - 1            # index of the total in P_SCORE

# ------------------------------------------------------------ static tables
_t = _Alloc()
T_NP = _t()
T_N_HEX = _t()
T_N_NODES = _t()
T_ROUNDS = _t()
T_SOLO = _t()
T_NEIGHBOR_BONUS = _t()      # 0 disables R-3.3.1 (solo)
T_STATIC_IMPORTS = _t()
T_SCORING_TILES_ON = _t()
T_PORTS_ON = _t()
T_N_SLOTS = _t()
T_NB_DISC = _t(N_GOODS)      # neighborhood discount per good
T_NB_LIMIT = _t()
T_MERCH_SUPPLY = _t()
T_MERCH_TRACK = _t()
T_HIRE_COST = _t()
T_HIRE_BONUS_COST = _t()
T_SHIP_MAX = _t()
T_SHIP_COST = _t()
T_SHIP_BONUS_COST = _t()
T_TECH_COST = _t()
T_TECH_BONUS_COST = _t()
T_UNIT_COUNT = _t(N_UNITS)
T_UNIT_COST = _t(N_UNITS)
T_UNIT_TERRAIN = _t(N_UNITS)
T_UNIT_GOOD = _t(N_UNITS)     # good produced, -1 none
T_UNIT_YIELD = _t(N_UNITS)
T_WORKER_INCOME = _t(4)       # lumberjack base, upgraded, miner base, upgraded
MAX_MARKET_STEPS = 32                   # steps of a price track
T_STEP_LO = _t(N_GOODS)        # step number of each track's cheapest step (engine.market)
T_STEP_HI = _t(N_GOODS)        # step number of its dearest step
T_STEP_START = _t(N_GOODS)     # the start step of this player count's side
T_PRICE_START = _t(N_GOODS)    # the price there
T_TRACK = _t(N_GOODS * MAX_MARKET_STEPS)   # price of each step, cheapest first, per good
T_CONTRACT_COST = _t(N_ROUNDS_MAX)
T_PASS_BONUS = _t(MAX_PLAYERS)
MAX_TRACK = 64
T_IMPORT_MARKED = _t(MAX_TRACK)      # 1 if that import track space is marked
T_IMPORT_MARK_PAY = _t()
T_IMPORT_TRACK_LEN = _t()
T_N_CONTRACTS = _t()
C_NEED = 0                    # wool, bread, cheese, whisky, beef, mutton
C_GAIN_IMPORT = 6             # cotton, tobacco, sugar cane, hops
C_GAIN_MONEY = 10
C_GAIN_HEX = 11
C_GAIN_UPG = 12
C_WIDTH = 13
T_CONTRACTS = _t(MAX_CONTRACTS * C_WIDTH)
T_N_START_TILES = _t()
T_START_MONEY = _t(16)
T_START_GOODS = _t(16 * N_GOODS)
T_SEAT_MONEY = _t(MAX_PLAYERS)
T_TILE_POOL = _t(N_SCORING_TILES)     # 1 if the scoring tile is in the pool
T_TILE_KIND = _t(N_SCORING_TILES)     # index into data SCORING_KINDS
T_TILE_GLORY = _t(N_SCORING_TILES)
T_TILE_PER = _t(N_SCORING_TILES)
T_TILE_MIN_COST = _t(N_SCORING_TILES)
T_TILE_UNIT_GLORY = _t(N_SCORING_TILES * N_UNITS)
T_PORT_POOL = _t(N_PORT_TILES)
T_PORT_PARAM = _t(N_PORT_TILES * 2)
T_VP_BASIC = _t()
T_VP_PROCESSED = _t()
T_MONEY_PER_VP = _t()
T_VP_HOPS = _t()
T_IMPORT_VP = _t(N_TRACKED)          # most imported, second, least
T_IMPORT_RARITY = _t(N_TRACKED)      # tie order: 0 = counts as rarest
T_STATIC_IMPORT_VP = _t()
T_EXPORT_VP = _t(MAX_PLAYERS)        # by place, this player count
T_SETTLE_VP = _t(MAX_PLAYERS)
T_EXPORT_MIN = _t()                  # fulfilled contracts needed to rank
T_STRUCT_BUILDINGS = _t()            # the n-th building of a type triggers it
T_STRUCT_DRAW = _t()                 # structure bonus: contracts drawn
T_STRUCT_KEEP = _t()                 # structure bonus: contracts that may be kept
# map
T_TERRAIN = _t(MAX_NODES)
T_LAND_COST = _t(MAX_NODES)
T_ACTIVE = _t(MAX_NODES)
T_BORDER = _t(MAX_NODES)
T_DELTA = _t(MAX_NODES)
T_NEIGHBOR = _t(MAX_NODES * 6)
T_PORT_NODE = _t(4)
T_SHIP_REQ = _t(MAX_NODES * MAX_NODES)
T_REACH_LIST = _t(MAX_NODES * MAX_NODES)   # per node: targets sorted by ship_req
MAX_LEVEL = 8
T_REACH_CNT = _t(MAX_NODES * MAX_LEVEL)    # per node, level: targets with ship_req <= level
RB_WORDS = (MAX_NODES + 63) // 64          # 64-bit words of a node bitset
RB_LEN = 3 * RB_WORDS                      # board.reach_bits: reach, empty, own node bitsets
T_REACH_BITS = _t(MAX_NODES * MAX_LEVEL * RB_WORDS * 2)   # per node, level: those targets as a
#                                            bitset, each 64-bit word as two int32 (low, high)
T_UNIT_NODES = _t(N_UNITS * RB_WORDS * 2)  # per unit: bitset of the nodes of its terrain (R-3.3;
#                                            fisherman: lochs and ports, R-8.5), same word format
MAX_LAND_COST = 31                         # capacity: the largest land cost a map may print
T_LAND_MAX = _t(1)                         # the map's largest land cost
T_LAND_LE = _t((MAX_LAND_COST + 1) * RB_WORDS * 2)   # per cost c: bitset of the land nodes
#                                            whose land cost is <= c (same word format)
T_DELTA_BITS = _t(RB_WORDS * 2)            # bitset of the delta hexes
T_PORT_REACHERS = _t(4 * MAX_LEVEL * RB_WORDS * 2)   # per corner, level: the nodes from which
#                                            the corner's port node is in reach
T_ADJ = _t(MAX_NODES * 6)                  # adjacent nodes, river or not, -1 padded
T_MODULE = _t(MAX_NODES)                   # module 0..3 of each node
# clans: per-clan rows 0..N_CLANS-1, row N_CLANS = no clan
N_CROWS = N_CLANS + 1
T_CLAN_MODE = _t()                   # CLAN_NONE / CLAN_DRAFT / CLAN_AUCTION / CLAN_FIXED
T_CLAN_POOL = _t()                   # bitmask of clans that may be drawn
T_FIXED_CLAN = _t(MAX_PLAYERS)       # CLAN_FIXED: clan of each player, -1 none
T_AUCTION_MAX = _t()                 # highest bid
T_CLAN_MERCH_SUPPLY = _t(N_CROWS)
T_CLAN_MERCH_TRACK = _t(N_CROWS)
T_CLAN_SHIP = _t(N_CROWS)            # starting shipping level for this player count
T_CLAN_WORKERS = _t(N_CROWS)         # starting workers to place
T_CLAN_BOXES = _t(N_CROWS)           # export boxes (R-8.1)
T_CLAN_BORDER_START = _t(N_CROWS)    # starting workers only on border hexes
T_CLAN_UNIT_COST = _t(N_CROWS * N_UNITS)
T_CLAN_BUILD_DISC = _t(N_CROWS * MAX_PROCESS)  # by building ordinal
T_CLAN_DELTA_DISC = _t(N_CROWS)      # off the total cost on a delta hex
T_CLAN_INCOME = _t(N_CROWS * 5)      # lumberjack, upgraded, miner, upgraded, fisherman
T_CLAN_TECH_OK = _t(N_CROWS)         # technology upgrades allowed
T_CLAN_ANY_WORKER = _t(N_CROWS)      # workers interchangeable, fishermen allowed
T_CLAN_FISH_LAND = _t(N_CROWS)       # land cost of a fisherman's hex
T_CLAN_ROWS = _t(N_CROWS)            # rows per turn
T_CLAN_STRUCT_DRAW = _t(N_CROWS)     # structure bonus / money-structure port draw
T_CLAN_STRUCT_KEEP = _t(N_CROWS)
T_CLAN_OBTAIN_MAX = _t(N_CROWS)      # contracts per Obtain action
T_CLAN_PAY_ONCE = _t(N_CROWS)        # PAY_EACH, PAY_ONCE_SOURCE or PAY_ONCE_TURN
T_CLAN_FULFILL_MAX = _t(N_CROWS)     # contracts per Fulfill action
T_CLAN_MILK_MONEY = _t(N_CROWS)      # butter £ per milk, 0 none
T_CLAN_WHISKY_MONEY = _t(N_CROWS)    # £ per whisky produced
T_CLAN_CELLAR_MONEY = _t(N_CROWS * 3)    # £ for a barrel taken from the left / right space,
#                                          and for one leaving the right space at production
T_CLAN_CELLAR_IN = _t(N_CROWS)       # barrels put in per production, 0 no cellar
T_CLAN_MARKET_MONEY = _t(N_CROWS)    # £ per market transaction
T_CLAN_BEER_MONEY = _t(N_CROWS)      # 0 no brewer
T_CLAN_BEER_GRAIN = _t(N_CROWS)
T_CLAN_BEER_MAX = _t(N_CROWS)
# solo and the smaller map
T_SOLO_BLOCK_COST = _t()             # land cost of the hexes neutral pieces block, -1 none
T_SOLO_START_SLOTS = _t()            # contracts face up at the start
T_SOLO_MARKET_ROUNDS = _t()          # bitmask of rounds with the market phase
T_SOLO_N_CHANGE = _t()               # goods changed per market phase
MAX_DIE = 12
T_SOLO_GOODS_FACES = _t()
T_SOLO_GOODS_DIE = _t(MAX_DIE)
T_SOLO_PRICE_FACES = _t()
T_SOLO_PRICE_DIE = _t(MAX_DIE)
T_SOLO_REMOVE = _t(MAX_DIE)          # slot removed per last price-die face
T_SOLO_AVG_LO = _t(N_GOODS)          # step numbers of the solo 'average' bracket
T_SOLO_AVG_HI = _t(N_GOODS)
MAX_THRESH = 8
T_SOLO_N_EXPORT = _t()
T_SOLO_EXPORT = _t(MAX_THRESH * 2)   # (min fulfilled, VP), min decreasing
T_SOLO_N_SETTLE = _t()
T_SOLO_SETTLE = _t(MAX_THRESH * 2)
T_SMALL_MAP = _t()                   # cover one random land hex per module
T_N_COVER = _t()                     # given covered hexes
T_COVER = _t(MAX_COVER)
# switchable interpretations (docs/interpretations.md)
T_PRICE_SHIFT_EXACT = _t()           # the price shift moves exactly its steps, not up to them
T_RETRIEVE_BUY = _t()                # the upgrade bonus may take back a buy-side merchant
T_SWAP_NB_BONUS = _t()               # the port swap queues the neighborhood bonus (erratum)
T_SOLO_IMPORT_RARITY = _t()          # solo imports ranked by the player's own counts (FAQ)
T_IMPORT_RANK_GOODS = _t()           # R-7 rarity ranks the goods imported, not capped positions
# Automa (A-1 ... A-8): built from data/automa by engine.tables.build
T_AM_LEVEL = _t(MAX_PLAYERS)         # difficulty per seat, 0 = not an Automa
T_AM_MONEY = _t(6)                   # starting money by level
T_AM_GLORY = _t(6)                   # final glory by level
T_AM_N_CARDS = _t()
T_AM_CARDS = _t(AM_MAX_CARDS * AM_CARD_W)
T_AM_SHIP = _t()                     # starting shipping level
T_AM_START_ORDER = _t(4)             # modules of the starting workers
T_AM_START_EACH = _t()               # modules per target kind
T_AM_CHEAP_LAND = _t()               # key 2: land cost <= this
T_AM_DIST_PORT = _t(MAX_NODES)       # hex steps to the own module's port (A-1.4 [proposal])
T_AM_DIST_CENTRE = _t(MAX_NODES)     # hex steps to the central loch (A-1.4 [proposal])
T_AM_TECH_MIN = _t()                 # workers of a type needed for a tech upgrade
T_AM_TRADE_MAX = _t()
T_AM_TRADE_MONEY = _t()
T_AM_NB_MONEY = _t()
T_AM_NB_MAX = _t(3)                  # by bracket lower / medium / upper
T_AM_NB_BY_PRICE = _t()              # 1: lowest price, 0: lowest step [proposal]
T_AM_PORT_IN_MODULES = _t()          # port criterion: card's modules only [interp]
T_AM_FEE = _t(N_ROUNDS_MAX)          # money gained taking a contract
T_AM_RARITY_ROUND = _t()             # from this round on, contracts by rarest import
T_AM_C_COST = _t(6)                  # per wool, bread, cheese, whisky, beef, mutton
T_AM_HEX_MONEY = _t()
T_AM_UPG_MONEY = _t()
T_AM_PORT_MONEY = _t()
T_AM_PREP_MONEY = _t()
T_AM_PROD_MONEY = _t(N_UNITS)
T_AM_MONEY_PER_VP = _t()
T_AM_TWO_EXPORT = _t(4)              # most, tie, behind, behind_max
T_AM_TWO_SETTLE = _t(4)
TABLE_SIZE = _t(0)
