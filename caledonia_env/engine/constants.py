"""Index constants of the engine's encoding (orders of goods, units, contexts).

These are *encoding* constants (which slot of an array holds what), not rule
numbers: every printed game value comes from the ruleset data
(:mod:`caledonia_env.data`) through :mod:`caledonia_env.engine.tables.build`. Names
and sizes the lower layers already define (clan, good and import names from
:mod:`caledonia_env.data.names`; terrain bits, ``MAX_NODES`` and ``UNREACHABLE``
from :mod:`caledonia_env.map`) are imported from there, not repeated.
"""
from caledonia_env.data.names import CLANS as CLAN_NAMES
from caledonia_env.data.names import GOODS as GOOD_NAMES
from caledonia_env.data.names import IMPORT_GOODS as IMPORT_NAMES
from caledonia_env.data.names import PORT_KINDS
from caledonia_env.data.names import UNITS as DATA_UNITS
from caledonia_env.map.board import MAX_NODES
from caledonia_env.map.format import (TERRAIN_FOREST, TERRAIN_LOCH, TERRAIN_MOUNTAIN, TERRAIN_PASTURE,
                          TERRAIN_PORT)
from caledonia_env.map.reach import UNREACHABLE

# Goods. Basic goods first, then processed goods; processed = basic + 3.
WOOL, GRAIN, MILK, BREAD, CHEESE, WHISKY = range(6)
N_GOODS = 6

# Import goods. Cotton/tobacco/sugar cane are tracked, hops are not.
COTTON, TOBACCO, SUGAR, HOPS = range(4)
N_IMPORTS = 4
N_TRACKED = 3

# Unit types. Index order is also the player-board order.
SHEEP, COW, FIELD, DAIRY, BAKERY, DISTILLERY, LUMBERJACK, MINER, FISHERMAN = range(9)
N_UNITS = 9
UNIT_NAMES = DATA_UNITS + ("fisherman",)   # the ruleset's units, then MacDonald's fisherman
N_BUILDING_KINDS = 3          # dairy, bakery, distillery: units DAIRY + k
FIRST_BUILDING = DAIRY
PROCESS_IN = (MILK, GRAIN, GRAIN)        # dairy, bakery, distillery inputs
PROCESS_OUT = (CHEESE, BREAD, WHISKY)

# Terrain bits of a map node: TERRAIN_* of caledonia_env.map.format (imported above).

# Scoring tiles T1..T9 (ids 0..8). Port tiles, ids 0..8 in the order of
# caledonia_env.data.names.PORT_KINDS, named by what they do (not by a printed number).
N_SCORING_TILES = 9
(PORT_MEAT_REDUCTION, PORT_MONEY, PORT_BASIC_EXCHANGE, PORT_PRICE_SHIFT, PORT_PROCESSED_EXCHANGE,
 PORT_SWAP_UNITS, PORT_UPGRADE_GLORY, PORT_MONEY_STRUCTURE, PORT_COPY) = range(9)
N_PORT_TILES = len(PORT_KINDS)

# Padding sizes of the encoding (array capacities, not rules).
MAX_PLAYERS = 4
MAX_CONTRACTS = 64
MAX_SLOTS = 6
MAX_BOXES = 2
MAX_MERCHANTS = 8            # largest k in one trade action
MAX_NB_BUY = 4               # largest neighborhood purchase of one good
MAX_DRAW = 6                 # structure bonus draw (Buchanan draws 6)
MAX_START_PICKS = 5          # players + 1 starting-tile/clan pairs
MAX_PROCESS = 4              # buildings of one kind
N_CORNERS = 4
N_ROUNDS_MAX = 5

# Map occupant encoding: EMPTY, or player * OCC_STRIDE + unit; NEUTRAL blocker.
EMPTY = -1
OCC_STRIDE = 16
OCC_SHIFT = 4                # occupant >> OCC_SHIFT == occupant // OCC_STRIDE (also for EMPTY)
assert OCC_STRIDE == 1 << OCC_SHIFT
NEUTRAL = 99

# Decision contexts (what the current decision is about).
CTX_GAME_OVER = 0
CTX_START_PICK = 1        # choose a starting tile (clan pair)
CTX_START_WORKER = 2      # place a starting worker
CTX_MAIN = 3              # main action (ports allowed before it)
CTX_AFTER_MAIN = 4        # ports after the main action, or end the turn
CTX_NEIGHBOR = 5          # neighborhood purchases
CTX_STRUCTURE = 6         # R-3.3.2 / money-structure port: keep 0-1 of the drawn contracts
CTX_SLAUGHTER = 7         # choose animals to slaughter (meat-reduction port usable)
CTX_BONUS = 8             # R-3.7.2 / upgrade-glory port: free hexes and upgrade bonuses
CTX_PORT_DISCARD = 9      # basic / processed exchange: which good to discard
CTX_PORT_GAIN = 10        # basic / processed exchange: which goods to gain, one at a time
CTX_PORT_PRICE = 11       # price shift: which good and how many steps
CTX_PORT_SWAP = 12        # unit swap: swap units, one at a time
CTX_PORT_COPY = 13        # copy: which other port tile to copy
CTX_PROCESS = 14          # how many of one building kind to process
CTX_SECOND_CONTRACT = 15  # Buchanan: a second contract in the same Obtain action
CTX_ROW = 16              # MacDonald: where the selected fisherman rows to
CTX_CELLAR = 17           # MacKenzie: put a fresh whisky into the cellar
CTX_BUTTER = 18           # Cunningham: milk turned into butter money
CTX_BREW = 19             # brewer: beer brewed for a contract's hops
CTX_AUCTION = 20          # clan auction: bid or decline
N_CONTEXTS = 21
CONTEXT_NAMES = ("game over", "starting pick", "starting worker", "main action",
                 "after main action", "neighborhood purchase", "structure bonus",
                 "slaughter", "export bonus", "port discard", "port gain",
                 "port price", "port swap", "port copy", "production",
                 "second contract", "fisherman rowing", "cellar", "butter", "brewing",
                 "clan auction")

# Clans, in the order of CLAN_NAMES (data.names.CLANS); row N_CLANS of the
# per-clan tables holds the no-clan values.
(BUCHANAN, CAMPBELL, CUNNINGHAM, FERGUSSON, MACDONALD, MACKENZIE, ROBERTSON, STEWART,
 BREWER) = range(len(CLAN_NAMES))
N_CLANS = len(CLAN_NAMES)
NO_CLAN = N_CLANS
CLAN_NONE, CLAN_DRAFT, CLAN_AUCTION, CLAN_FIXED = range(4)   # how clans are assigned
# contract cost of a further contract in one turn: paid each time, paid once for two
# from the same source (interp_buchanan "same-source"), paid once per turn ("any-second")
PAY_EACH, PAY_ONCE_SOURCE, PAY_ONCE_TURN = range(3)
MAX_BUTTER = 12              # largest milk batch in one butter choice (the choice repeats)
MAX_BREW = 3                 # largest beer batch of one contract (ids; the ruleset caps it)
MAX_BID = 30                 # largest auction bid id (the ruleset caps it)
MAX_COVER = 8                # covered hexes of the smaller-map variant

# Phases.
PH_SETUP_PICK, PH_SETUP_WORKERS, PH_ACTIONS, PH_PRODUCTION, PH_OVER = range(5)
