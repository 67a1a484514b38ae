"""What ruleset data the engine can honour: array capacities, action-id ranges and the
effects it implements one way only; :func:`check_engine_support` refuses anything else
before the tables are built (docs/ruleset.md).
"""
from caledonia_env.data import names as R
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import PRICE_DELTAS
from caledonia_env.engine.constants import (MAX_BID, MAX_BOXES, MAX_BREW, MAX_CONTRACTS, MAX_DRAW, MAX_MERCHANTS,
                        MAX_NB_BUY, MAX_PLAYERS, MAX_PROCESS, MAX_SLOTS, MAX_START_PICKS,
                        N_ROUNDS_MAX)


# Engine capacities (array sizes and action-id ranges) the ruleset data must fit:
# (table, JSON path, lowest, highest, why, check the length instead of the value).
CAPACITY_LIMITS = (
    ("setup", "rounds", 1, N_ROUNDS_MAX, f"round tables hold N_ROUNDS_MAX = {N_ROUNDS_MAX}", False),
    ("setup", "max_players", 1, MAX_PLAYERS, f"MAX_PLAYERS = {MAX_PLAYERS} seats", False),
    ("setup", "auction_max_bid", 0, MAX_BID, f"bid action ids reach MAX_BID = {MAX_BID}", False),
    ("setup", "player_start.export_boxes", 0, MAX_BOXES, f"MAX_BOXES = {MAX_BOXES}", False),
    ("clans", "*.export_boxes", 0, MAX_BOXES, f"MAX_BOXES = {MAX_BOXES}", False),
    *((("units", f"{b}.count", 0, MAX_PROCESS,
        f"production ids process up to MAX_PROCESS = {MAX_PROCESS} buildings of a type", False)
       for b in R.BUILDINGS)),
    ("economy", "merchants.total", 0, MAX_MERCHANTS,
     f"trade action ids encode up to MAX_MERCHANTS = {MAX_MERCHANTS} merchants", False),
    ("economy", "shipping.max_level", 1, L.MAX_LEVEL - 1,
     f"reach tables hold levels below MAX_LEVEL = {L.MAX_LEVEL}", False),
    ("economy", "neighborhood.limit_by_players.*", 0, MAX_NB_BUY,
     f"purchase action ids encode up to MAX_NB_BUY = {MAX_NB_BUY} goods", False),
    ("export_board", "slots_by_players.*", 1, MAX_SLOTS, f"MAX_SLOTS = {MAX_SLOTS} slots", False),
    ("export_board", "structure_bonus.draw", 0, MAX_DRAW,
     f"keep action ids cover MAX_DRAW = {MAX_DRAW} drawn contracts", False),
    ("export_board", "structure_bonus.keep", 0, MAX_BOXES, f"MAX_BOXES = {MAX_BOXES}", False),
    ("export_board", "import_track.length", 1, L.MAX_TRACK - 1,
     f"the track table holds MAX_TRACK = {L.MAX_TRACK} spaces", False),
    ("market", "*.track", 1, L.MAX_MARKET_STEPS,
     f"the track table holds MAX_MARKET_STEPS = {L.MAX_MARKET_STEPS} steps", True),
    ("ports", "P6.steps", 1, max(PRICE_DELTAS),
     f"price action ids encode steps {PRICE_DELTAS}", False),
    ("clans", "buchanan.structure_draw", 0, MAX_DRAW,
     f"keep action ids cover MAX_DRAW = {MAX_DRAW} drawn contracts", False),
    ("clans", "buchanan.structure_keep", 0, MAX_BOXES, f"MAX_BOXES = {MAX_BOXES}", False),
    ("clans", "brewer.beer_max_per_contract", 0, MAX_BREW,
     f"brew action ids reach MAX_BREW = {MAX_BREW}", False),
    ("clans", "campbell.building_discount", 1, MAX_PROCESS,
     f"one discount per building, MAX_PROCESS = {MAX_PROCESS}", True),
    ("solo", "goods_die", 1, L.MAX_DIE, f"dice have at most MAX_DIE = {L.MAX_DIE} faces", True),
    ("solo", "price_die", 1, L.MAX_DIE, f"dice have at most MAX_DIE = {L.MAX_DIE} faces", True),
    ("solo", "export_vp", 0, L.MAX_THRESH, f"MAX_THRESH = {L.MAX_THRESH} thresholds", True),
    ("solo", "settlement_vp", 0, L.MAX_THRESH, f"MAX_THRESH = {L.MAX_THRESH} thresholds", True),
    ("contracts", "", 1, MAX_CONTRACTS, f"the deck holds MAX_CONTRACTS = {MAX_CONTRACTS}", True),
)
# Effects the engine implements one way only (the printed tiles, R-5 and R-8).
BEHAVIOUR_LIMITS = (
    ("ports", "P1.animals", 1, 1, "P1 spares exactly one animal", False),
    ("ports", "P2.discard", 1, 1, "P2 discards exactly one good", False),
    ("ports", "P3.discard", 1, 1, "P3 discards exactly one good", False),
    ("ports", "P7.units", 1, 2, "P7 swaps one or two units", False),
    ("clans", "buchanan.contracts_per_action", 1, 2, "one second-contract decision (R-8.1)",
     False),
    ("clans", "buchanan.fulfill_per_action", 1, 2, "one second fulfilment (R-8.1)", False),
    ("clans", "mackenzie.cellar_money", 2, 2, "two aging spaces (R-8.6)", True),
    ("clans", "mackenzie.cellar_in_per_production", 0, 1, "one barrel per production (R-8.6)",
     False),
    ("setup", "extra_clans_drawn", 1, MAX_START_PICKS - MAX_PLAYERS,
     "a draft offers players + 1 starting picks (R-1.7)", False),
    ("setup", "player_start.workers_to_place", 0, 8, "eight placement passes (R-1.8)", False),
    ("clans", "*.workers_to_place", 0, 8, "eight placement passes (R-1.8)", False),
)


def check_engine_support(rs):
    """Refuse ruleset data the engine cannot honour: a :class:`RulesetError` names
    the file, table, field and the allowed range."""
    for limit in CAPACITY_LIMITS + BEHAVIOUR_LIMITS:
        rs.require(*limit[:5], length=limit[5])
    for i, name in enumerate(R.PORTS):
        if rs.ports.kind[i] != i:
            printed = ", ".join(f"{n} {k}" for n, k in sorted(zip(R.PORTS, R.PORT_KINDS)))
            raise rs.error("ports", f"{name}.kind", f"{R.PORT_KINDS[rs.ports.kind[i]]!r}; the "
                           f"engine implements port {name} as {R.PORT_KINDS[i]!r} only (keys "
                           f"are the printed tile numbers: {printed})")
    for name in R.BUILDINGS:
        u = R.UNITS.index(name)
        if rs.units.count[u] * rs.units.output[u] > MAX_PROCESS:
            raise rs.error("units", f"{name}.output", f"count x output = {rs.units.count[u]} x "
                           f"{rs.units.output[u]}; production ids process at most MAX_PROCESS = "
                           f"{MAX_PROCESS} per building type (R-6.3)")
    if not rs.clans.params["fergusson"]["last_worker_after_all"]:
        raise rs.error("clans", "fergusson.last_worker_after_all", "false; the engine places "
                       "workers beyond the second after everyone's second (true only)")
