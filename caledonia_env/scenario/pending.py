"""The ``pending`` part of a scenario: work left in the current decision (docs/scenarios.md)."""
from __future__ import annotations

from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (CONTEXT_NAMES, FISHERMAN, MAX_CONTRACTS, MAX_NB_BUY, NEUTRAL,
                                OCC_STRIDE, PH_ACTIONS, UNIT_NAMES)
from caledonia_env.engine.flow import resolve
from caledonia_env.scenario.fields import PENDING, PENDING_DEFAULTS, TURN_WORK, ScenarioError, read_int, read_list


# pending fields whose value is an index: (lowest, highest) given num_players players / nodes
def _pending_range(name, num_players, n_nodes):
    if name in ("row_from", "swap_node"):
        return -1, n_nodes - 1
    if name in ("auction_leader", "auction_bidder"):
        return -1, num_players - 1
    if name == "turn_position":
        return 0, num_players - 1
    if name == "production_kind":
        return 0, 4
    if name == "neighborhood_bought":
        return 0, MAX_NB_BUY
    if name in ("production_seat", "auction_seat"):     # num_players: every seat is done
        return 0, num_players
    return (-1 if name in PENDING_DEFAULTS else 0), 2 ** 20


def write_pending(s, num_players, board, pending):
    for name, (off, k) in PENDING.items():
        if name in PENDING_DEFAULTS and name not in pending:
            s[off] = PENDING_DEFAULTS[name]
    for name, value in pending.items():
        if name not in PENDING:
            raise ScenarioError(f"unknown pending field {name!r}; allowed: {sorted(PENDING)}")
        off, k = PENDING[name]
        lo, hi = _pending_range(name, num_players, board.n_nodes)
        if name == "deck_head":
            hi = MAX_CONTRACTS - 1
        values = read_list(f"pending.{name}", value, k) if k > 1 else [value]
        if len(values) != k:
            raise ScenarioError(f"pending.{name} lists {k} values, got {value!r}")
        s[off:off + k] = [read_int(f"pending.{name}", v, lo, hi) for v in values]


def check_pending(game, ctx, cur):
    """Pending work the player can finish: meat to slaughter within their animals and meat
    ports (R-3.7); a rowing fisherman that is theirs (R-8.5)."""
    s, board = game.state, game.board
    if s[L.S_PHASE] != PH_ACTIONS:
        # the engine notes the meat ports at every fulfilled contract; without meat left
        # to slaughter they are no work (a fulfilled contract without meat keeps them)
        inert = {"meat_ports"} if not s[L.S_MEAT_REM:L.S_MEAT_REM + 2].any() else set()
        busy = [k for k in TURN_WORK if k != "drawn" and k not in inert
                and (s[PENDING[k][0]:sum(PENDING[k])] != PENDING_DEFAULTS.get(k, 0)).any()]
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
        resolve(probe, game.tables, game.static.automa_switch)
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

