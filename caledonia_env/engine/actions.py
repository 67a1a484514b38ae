"""The flat action space: stable ids, readable names and the reverse parse.

One ``Discrete(N_ACTIONS)`` space covers every decision context (docs/actions.md).
Ids never depend on the player count or the map (nodes are padded to
``MAX_NODES``); names use the map's hex labels when a board is given.
"""
import re

from caledonia_env.engine.constants import (GOOD_NAMES, MAX_BID, MAX_BREW, MAX_BUTTER, MAX_DRAW, MAX_MERCHANTS,
                        MAX_NB_BUY, MAX_NODES, MAX_PROCESS, MAX_SLOTS, MAX_BOXES,
                        MAX_START_PICKS, N_CORNERS, N_GOODS, N_UNITS, N_BUILDING_KINDS,
                        UNIT_NAMES)

PRICE_DELTAS = (-3, -2, -1, 1, 2, 3)

A_PASS = 0
A_END_TURN = 1
A_TRADE = 2                                   # + (side * N_GOODS + good) * MAX_MERCHANTS + k - 1
A_OBTAIN = A_TRADE + 2 * N_GOODS * MAX_MERCHANTS   # + slot
A_PLACE = A_OBTAIN + MAX_SLOTS                # + unit * MAX_NODES + node
A_SHIP = A_PLACE + N_UNITS * MAX_NODES
A_TECH = A_SHIP + 1                           # + 0 lumberjack, + 1 miner
A_HIRE = A_TECH + 2
A_FULFILL = A_HIRE + 1                        # + box
A_PORT = A_FULFILL + MAX_BOXES                # + corner
A_NB_BUY = A_PORT + N_CORNERS                 # + good * MAX_NB_BUY + k - 1
A_NB_DONE = A_NB_BUY + N_GOODS * MAX_NB_BUY
A_KEEP = A_NB_DONE + 1                        # + index in the drawn contracts
A_KEEP_NONE = A_KEEP + MAX_DRAW
A_RETRIEVE = A_KEEP_NONE + 1                  # + side * N_GOODS + good
A_DECLINE_HEX = A_RETRIEVE + 2 * N_GOODS
A_DECLINE_UPGRADE = A_DECLINE_HEX + 1
A_SELECT = A_DECLINE_UPGRADE + 1              # + node
A_PICK_GOOD = A_SELECT + MAX_NODES            # + good
A_PRICE = A_PICK_GOOD + N_GOODS               # + good * 6 + delta index
A_PROCESS = A_PRICE + N_GOODS * len(PRICE_DELTAS)   # + kind * (MAX_PROCESS + 1) + k
A_START_PICK = A_PROCESS + N_BUILDING_KINDS * (MAX_PROCESS + 1)  # + pick index
# clans, solo and variants (appended so the ids above stay stable)
A_OBTAIN_DONE = A_START_PICK + MAX_START_PICKS    # no second contract
A_FULFILL_BOTH = A_OBTAIN_DONE + 1                # fulfill both boxes in one action
A_ROW = A_FULFILL_BOTH + 1                        # + node of the fisherman that rows
A_CELLAR_IN = A_ROW + MAX_NODES                   # put a fresh whisky into the cellar
A_CELLAR_SKIP = A_CELLAR_IN + 1
A_CELLAR_OUT = A_CELLAR_SKIP + 1                  # + 0 left space, + 1 right space
A_BUTTER = A_CELLAR_OUT + 2                       # + k - 1, k = 1..MAX_BUTTER milk
A_BUTTER_DONE = A_BUTTER + MAX_BUTTER
A_BREW = A_BUTTER_DONE + 1                        # + k, k = 0..MAX_BREW beer
A_BID = A_BREW + MAX_BREW + 1                     # + k, k = 0..MAX_BID VP
A_BID_DECLINE = A_BID + MAX_BID + 1
A_STRUCT_DRAW = A_BID_DECLINE + 1                 # R-3.3.2 / P8: draw the contracts (optional)
A_STRUCT_DECLINE = A_STRUCT_DRAW + 1              # R-3.3.2 / P8: no draw, the pile untouched
N_ACTIONS = A_STRUCT_DECLINE + 1
#: Width of a legal-action mask buffer (int8): N_ACTIONS rounded up to whole 8-byte words, so
#: jitted code can scan it a 64-bit word at a time (engine.api, envs.vector).
MASK_WIDTH = (N_ACTIONS + 7) // 8 * 8

SIDES = ("buy", "sell")
CORNER_NAMES = "ABCD"
BUILDING_GOODS = ("cheese", "bread", "whisky")


def trade_id(side, good, k):
    return A_TRADE + (side * N_GOODS + good) * MAX_MERCHANTS + k - 1


def place_id(unit, node):
    return A_PLACE + unit * MAX_NODES + node


def action_names(labels=None):
    """Names of all ids; ``labels`` are the board's node labels (else ``n017``)."""
    def lab(n):
        if labels is not None and n < len(labels):
            return labels[n]
        return f"n{n:03d}"

    names = [""] * N_ACTIONS
    names[A_PASS] = "pass"
    names[A_END_TURN] = "end turn"
    for side in range(2):
        for g in range(N_GOODS):
            for k in range(1, MAX_MERCHANTS + 1):
                names[trade_id(side, g, k)] = f"trade {SIDES[side]} {k} {GOOD_NAMES[g]}"
    for s in range(MAX_SLOTS):
        names[A_OBTAIN + s] = f"obtain contract slot {s}"
    for u in range(N_UNITS):
        for n in range(MAX_NODES):
            names[place_id(u, n)] = f"expand {UNIT_NAMES[u]} @ {lab(n)}"
    names[A_SHIP] = "shipping upgrade"
    names[A_TECH] = "technology upgrade lumberjack"
    names[A_TECH + 1] = "technology upgrade miner"
    names[A_HIRE] = "hire merchant"
    for b in range(MAX_BOXES):
        names[A_FULFILL + b] = f"fulfill contract box {b}"
    for c in range(N_CORNERS):
        names[A_PORT + c] = f"port {CORNER_NAMES[c]}"
    for g in range(N_GOODS):
        for k in range(1, MAX_NB_BUY + 1):
            names[A_NB_BUY + g * MAX_NB_BUY + k - 1] = f"neighborhood buy {k} {GOOD_NAMES[g]}"
    names[A_NB_DONE] = "neighborhood done"
    for i in range(MAX_DRAW):
        names[A_KEEP + i] = f"keep drawn contract {i}"
    names[A_KEEP_NONE] = "keep no contract"
    for side in range(2):
        for g in range(N_GOODS):
            names[A_RETRIEVE + side * N_GOODS + g] = f"retrieve merchant {SIDES[side]} {GOOD_NAMES[g]}"
    names[A_DECLINE_HEX] = "decline free hex"
    names[A_DECLINE_UPGRADE] = "decline upgrade"
    for n in range(MAX_NODES):
        names[A_SELECT + n] = f"select @ {lab(n)}"
    for g in range(N_GOODS):
        names[A_PICK_GOOD + g] = f"pick {GOOD_NAMES[g]}"
        for i, d in enumerate(PRICE_DELTAS):
            names[A_PRICE + g * len(PRICE_DELTAS) + i] = f"price {GOOD_NAMES[g]} {d:+d}"
    for b in range(N_BUILDING_KINDS):
        for k in range(MAX_PROCESS + 1):
            names[A_PROCESS + b * (MAX_PROCESS + 1) + k] = f"process {k} {BUILDING_GOODS[b]}"
    for i in range(MAX_START_PICKS):
        names[A_START_PICK + i] = f"starting pick {i}"
    names[A_OBTAIN_DONE] = "no second contract"
    names[A_FULFILL_BOTH] = "fulfill both contracts"
    for n in range(MAX_NODES):
        names[A_ROW + n] = f"row fisherman @ {lab(n)}"
    names[A_CELLAR_IN] = "cellar in whisky"
    names[A_CELLAR_SKIP] = "cellar skip"
    names[A_CELLAR_OUT] = "cellar out left"
    names[A_CELLAR_OUT + 1] = "cellar out right"
    for k in range(1, MAX_BUTTER + 1):
        names[A_BUTTER + k - 1] = f"butter {k} milk"
    names[A_BUTTER_DONE] = "butter done"
    for k in range(MAX_BREW + 1):
        names[A_BREW + k] = f"brew {k} beer"
    for k in range(MAX_BID + 1):
        names[A_BID + k] = f"bid {k}"
    names[A_BID_DECLINE] = "decline bid"
    names[A_STRUCT_DRAW] = "draw structure contracts"
    names[A_STRUCT_DECLINE] = "decline structure bonus"
    assert all(names), "every action id has a name"
    assert len(set(names)) == N_ACTIONS, "action names are unique"
    return names


_SUFFIX = re.compile(r"\s*\(.*\)\s*$")


def parse_name(text, index):
    """Id of ``text`` in ``index`` (a name -> id dict); ignores a ``(...)`` suffix."""
    key = " ".join(_SUFFIX.sub("", text).strip().lower().split())
    if key in index:
        return index[key]
    raise ValueError(f"unknown action name {text!r}; examples: 'pass', 'trade buy 2 whisky', "
                     f"'expand sheep @ A1-03', 'port B', 'process 2 cheese'")
