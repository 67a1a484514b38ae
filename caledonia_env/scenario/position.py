"""A scenario's position written into a fresh game's state (docs/scenarios.md)."""
from __future__ import annotations

import json

import numpy as np

from caledonia_env.config import CLAN_NAMES
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (CONTEXT_NAMES, EMPTY, IMPORT_NAMES, MAX_CONTRACTS, MAX_DRAW,
                                MAX_NODES, MAX_SLOTS, MAX_START_PICKS, N_CORNERS, N_ROUNDS_MAX,
                                NEUTRAL, GOOD_NAMES)
from caledonia_env.scenario.fields import (CORNERS, PHASE_CONTEXTS, PHASES, PORT_TILES, SCORING_TILES, Places,
                     ScenarioError, clan_name, contract_index, is_land, lookup, node_of,
                     read_bool, read_dict, read_int, read_list, start_tile)
from caledonia_env.scenario.pending import check_pending, write_pending
from caledonia_env.scenario.players import set_player
from caledonia_env.scenario.versions import upgrade_scenario


def market_step(track, g: str, v) -> int:
    """A scenario's marker of good ``g``: a price (the cheapest step of that price) or
    ``{"step": k}`` (k counts from the cheapest step, 0)."""
    if isinstance(v, dict):
        return read_int(f"market.{g}.step", read_dict(f"market.{g}", v, ("step",)).get("step"),
                        0, len(track) - 1)
    price = read_int(f"market price of {g}", v, int(track[0]), int(track[-1]))
    if price not in track:
        raise ScenarioError(f"market price of {g}: no step of its track is priced {price}; "
                            f"the steps are {', '.join(map(str, track))}")
    return int(np.flatnonzero(track == price)[0])


def write_scenario(game, d: dict) -> None:
    """Write scenario ``d`` into ``game`` (fresh, built from :func:`scenario_config`)."""
    d = upgrade_scenario(d)
    rs, board, s, T = game.ruleset, game.board, game.state, game.tables
    num_players, cfg = game.num_players, game.config
    places = Places()
    s[L.S_ROUND] = read_int("round", d.get("round", 1), 1, int(T[L.T_ROUNDS]))
    phase = d.get("phase", "actions")
    if phase not in PHASES:
        raise ScenarioError(f"unknown phase {phase!r}; allowed: {', '.join(PHASES)}")
    s[L.S_PHASE] = PHASES[phase]
    ctx = CONTEXT_NAMES[lookup(CONTEXT_NAMES, d.get("context", "main action"), "context")]
    if ctx not in PHASE_CONTEXTS[phase]:
        raise ScenarioError(f"context {ctx!r} does not occur in phase {phase!r}; allowed: "
                            f"{', '.join(PHASE_CONTEXTS[phase])}")
    s[L.S_CTX] = CONTEXT_NAMES.index(ctx)
    order = [read_int("turn_order[]", x, 0, num_players - 1) for x in read_list(
        "turn_order", d.get("turn_order", list(range(num_players))), num_players)]
    if sorted(order) != list(range(num_players)):
        raise ScenarioError(f"turn_order must be a permutation of 0..{num_players - 1}, "
                            f"got {order}")
    s[L.S_ORDER:L.S_ORDER + 4] = -1
    s[L.S_ORDER:L.S_ORDER + num_players] = order
    nxt = [read_int("next_turn_order[]", x, 0, num_players - 1)
           for x in read_list("next_turn_order", d.get("next_turn_order", []), num_players)]
    if len(set(nxt)) != len(nxt):
        raise ScenarioError(f"next_turn_order lists a player twice: {nxt}")
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + 4] = -1
    s[L.S_NEXT_ORDER:L.S_NEXT_ORDER + len(nxt)] = nxt
    s[L.S_N_PASSED] = len(nxt)
    lo = -1 if ctx == "game over" else 0
    cur = read_int("current_player", d.get("current_player", order[0] if lo == 0 else -1), lo,
                   num_players - 1)
    s[L.S_PLAYER] = cur
    s[L.S_TURN_POS] = order.index(cur) if cur in order else 0
    for g, v in read_dict("market", d.get("market", {}), GOOD_NAMES).items():
        gi = lookup(GOOD_NAMES, g, "good")
        s[L.S_PRICE_STEP + gi] = T[L.T_STEP_LO + gi] + market_step(rs.market.tracks[gi], g, v)
    if "slots" in d:
        n_slots = int(T[L.T_N_SLOTS])
        s[L.S_SLOTS:L.S_SLOTS + MAX_SLOTS] = -1
        for i, cid in enumerate(read_list("slots", d["slots"], MAX_SLOTS)):
            if cid is not None:
                if i >= n_slots:
                    raise ScenarioError(f"slots: this game has {n_slots} contract slots; "
                                        f"slot {i} must be null")
                s[L.S_SLOTS + i] = contract_index(rs, cid, f"slots[{i}]")
                places.put("contract", cid, "slots")
    if "pile" in d:
        pile = read_list("pile", d["pile"], MAX_CONTRACTS)
        pending = read_dict("pending", d.get("pending", {}))
        head = read_int("pending.deck_head", pending.get("deck_head", 0), 0, MAX_CONTRACTS - 1)
        s[L.S_DECK:L.S_DECK + MAX_CONTRACTS] = -1
        for i, cid in enumerate(pile):
            s[L.S_DECK + (head + i) % MAX_CONTRACTS] = contract_index(rs, cid, f"pile[{i}]")
            places.put("contract", cid, "pile")
        s[L.S_DECK_HEAD] = head
        s[L.S_DECK_COUNT] = len(pile)
    if "drawn" in d:
        drawn = read_list("drawn", d["drawn"], MAX_DRAW)
        s[L.S_DRAWN:L.S_DRAWN + MAX_DRAW] = -1
        for i, cid in enumerate(drawn):
            if cid is not None:
                s[L.S_DRAWN + i] = contract_index(rs, cid, f"drawn[{i}]")
                places.put("contract", cid, "drawn")
        s[L.S_N_DRAWN] = sum(1 for c in drawn if c is not None)
    if "scoring_tiles" in d:
        s[L.S_TILES:L.S_TILES + N_ROUNDS_MAX] = -1
        for r, t in enumerate(read_list("scoring_tiles", d["scoring_tiles"], N_ROUNDS_MAX)):
            if t is not None:
                s[L.S_TILES + r] = lookup(SCORING_TILES, t, "scoring tile")
    if "ports" in d:
        s[L.S_PORTS:L.S_PORTS + N_CORNERS] = -1
        for c, t in read_dict("ports", d["ports"], tuple(CORNERS.lower())).items():
            if t is not None:
                s[L.S_PORTS + lookup(CORNERS, c, "corner")] = lookup(PORT_TILES, t, "port tile")
    track = read_dict("import_track", d.get("import_track", {}), IMPORT_NAMES[:3])
    for i, g in enumerate(IMPORT_NAMES[:3]):
        s[L.S_IMPORT + i] = read_int(f"import_track.{g}", track.get(g, 0), 0,
                                 int(T[L.T_IMPORT_TRACK_LEN]))
    s[L.S_OCC:L.S_OCC + MAX_NODES] = EMPTY
    for label in read_list("neutral", d.get("neutral", []), MAX_NODES):
        node = node_of(board, label)
        if not is_land(T, node):
            raise ScenarioError(f"neutral: {label} is not an active land hex")
        if s[L.S_OCC + node] != EMPTY:
            raise ScenarioError(f"neutral: hex {label} is listed twice")
        s[L.S_OCC + node] = NEUTRAL
    clans = []
    for p, pd in enumerate(d["players"]):
        if cfg.clan_mode == "fixed":
            given = clan_name(f"players[{p}].clan", pd.get("clan", cfg.clans[p]))
            if given != cfg.clans[p]:
                raise ScenarioError(f"players[{p}].clan is {given!r} but clans[{p}] is "
                                    f"{cfg.clans[p]!r}")
            pd = dict(pd, clan=cfg.clans[p])
        set_player(game, p, pd, places)
        clans.append(int(s[L.S_PLAYERS + p * L.P_SIZE + L.P_CLAN]))
    taken = [c for c in clans if c >= 0]
    if len(set(taken)) != len(taken):
        raise ScenarioError(f"two players have the same clan: {[clan_name('', c) for c in clans]}")
    if "picks" in d:
        s[L.S_PICKS:L.S_PICKS + MAX_START_PICKS] = -1
        s[L.S_PICK_CLANS:L.S_PICK_CLANS + MAX_START_PICKS] = -1
        for i, pick in enumerate(read_list("picks", d["picks"], MAX_START_PICKS)):
            if pick is None:
                continue
            where = f"picks[{i}]"
            read_dict(where, pick, ("tile", "clan"))
            tile = start_tile(T, pick.get("tile"), where + ".tile")
            if tile < 0:
                raise ScenarioError(f"{where}.tile is required (S1..S9)")
            s[L.S_PICKS + i] = tile
            places.put("starting tile", f"S{tile + 1}", where)
            clan = clan_name(where + ".clan", pick.get("clan"))
            s[L.S_PICK_CLANS + i] = -1 if clan is None else CLAN_NAMES.index(clan)
            places.put("clan", clan, where)
    write_pending(s, num_players, board, read_dict("pending", d.get("pending", {})))
    check_pending(game, ctx, cur)
    if "rng" in d:
        s[L.S_RNG] = read_int("rng", d["rng"], 1, 2 ** 31 - 2)
    s[L.S_DONE] = int(read_bool("done", d.get("done", False)))
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

