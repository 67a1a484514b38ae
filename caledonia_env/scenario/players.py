"""One player of a scenario written into a state: stock, units, contracts (docs/scenarios.md)."""
from __future__ import annotations

from caledonia_env.config import CLAN_NAMES
from caledonia_env.data.names import CLAN_START_FIELDS
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import (FISHERMAN, GOOD_NAMES, MAX_BOXES, MAX_CONTRACTS, N_CORNERS,
                                NO_CLAN, OCC_STRIDE, EMPTY, TERRAIN_LOCH, TERRAIN_PORT, UNIT_NAMES)
from caledonia_env.scenario.fields import (CORNERS, SIDES, TECH, MAX_COUNT, ScenarioError, clan_name, contract_index,
                     is_land, lookup, node_of, read_bool, read_dict, read_int, read_list,
                     start_tile)


def set_player(game, p, pd, places):
    rs, board, s, T = game.ruleset, game.board, game.state, game.tables
    where = f"players[{p}]"
    poff = L.S_PLAYERS + p * L.P_SIZE
    s[poff:poff + L.P_SIZE] = 0
    s[poff + L.P_MONEY] = read_int(f"{where}.money", pd.get("money", 0), 0, MAX_COUNT)
    for g, k in read_dict(f"{where}.goods", pd.get("goods", {}), GOOD_NAMES).items():
        s[poff + L.P_GOODS + lookup(GOOD_NAMES, g, "good")] = read_int(f"{where}.goods.{g}", k, 0,
                                                                 MAX_COUNT)
    clan = clan_name(f"{where}.clan", pd.get("clan"))
    ci = -1 if clan is None else CLAN_NAMES.index(clan)
    row = NO_CLAN if ci < 0 else ci
    start = dict(zip(CLAN_START_FIELDS, rs.setup.player_start if ci < 0 else rs.clans.start[ci]))
    total = int(rs.economy.merchants_total)
    s[poff + L.P_MERCH] = read_int(f"{where}.merchants", pd.get("merchants",
                             int(start["merchants_in_supply"])), 0, total)
    for side, goods in read_dict(f"{where}.market", pd.get("market", {}), SIDES).items():
        si = lookup(SIDES, side, "market side")
        for g, k in read_dict(f"{where}.market.{side}", goods, GOOD_NAMES).items():
            s[poff + L.P_MARKET + si * 6 + lookup(GOOD_NAMES, g, "good")] = read_int(
                f"{where}.market.{side}.{g}", k, 0, total)
    # default: the clan's start, less what the supply and the market already hold
    rest = total - int(s[poff + L.P_MERCH] + s[poff + L.P_MARKET:poff + L.P_MARKET + 12].sum())
    s[poff + L.P_TRACK] = read_int(f"{where}.merchants_on_track", pd.get(
        "merchants_on_track", max(0, min(total - int(start["merchants_in_supply"]), rest))),
        0, total)
    merchants = int(s[poff + L.P_MERCH] + s[poff + L.P_TRACK]
                    + s[poff + L.P_MARKET:poff + L.P_MARKET + 12].sum())
    if merchants > total:
        raise ScenarioError(f"{where}: merchants + merchants_on_track + market merchants = "
                            f"{merchants}; a player has {total} merchants")
    _set_units(game, p, pd, where, ci, row)
    s[poff + L.P_SHIP] = read_int(f"{where}.shipping", pd.get(
        "shipping", int(start["shipping_level_1_2" if game.num_players <= 2
                              else "shipping_level_3_4"])), 0, int(T[L.T_SHIP_MAX]))
    tech = read_dict(f"{where}.technology", pd.get("technology", {}), TECH)
    for t, name in enumerate(TECH):
        s[poff + L.P_TECH + t] = read_bool(f"{where}.technology.{name}", tech.get(name, False))
        if s[poff + L.P_TECH + t] and not T[L.T_CLAN_TECH_OK + row]:
            raise ScenarioError(f"{where}.technology: clan {clan} cannot upgrade (R-8.5)")
    s[poff + L.P_GLORY] = read_int(f"{where}.glory", pd.get("glory", 0), 0, MAX_COUNT)
    n_boxes = int(T[L.T_CLAN_BOXES + row])
    s[poff + L.P_BOX:poff + L.P_BOX + MAX_BOXES] = -1
    for b, cid in enumerate(read_list(f"{where}.contracts", pd.get("contracts", []), MAX_BOXES)):
        if cid is not None:
            if b >= n_boxes:
                raise ScenarioError(f"{where}.contracts: {n_boxes} export box(es) for clan "
                                    f"{clan} (R-8.1); box {b} must be null")
            s[poff + L.P_BOX + b] = contract_index(rs, cid, f"{where}.contracts[{b}]")
            places.put("contract", cid, f"{where}.contracts")
    table = rs.contracts.table
    for cid in read_list(f"{where}.fulfilled", pd.get("fulfilled", []), MAX_CONTRACTS):
        c = contract_index(rs, cid, f"{where}.fulfilled")
        places.put("contract", cid, f"{where}.fulfilled")
        s[poff + L.P_N_FULFILLED] += 1
        s[poff + L.P_FULFILLED + c // 31] |= 1 << (c % 31)
        s[poff + L.P_IMPORTS:poff + L.P_IMPORTS + 4] += table[c, 6:10]
        s[poff + L.P_MEAT] += table[c, 4] + table[c, 5]
    used = 0
    for c in read_list(f"{where}.ports_used", pd.get("ports_used", []), N_CORNERS):
        bit = 1 << lookup(CORNERS, c, "corner")
        if used & bit:
            raise ScenarioError(f"{where}.ports_used lists corner {c} twice")
        used |= bit
    s[poff + L.P_PORTS_USED] = used
    s[poff + L.P_PASSED] = read_bool(f"{where}.passed", pd.get("passed", False))
    tile = start_tile(T, pd.get("start_tile"), f"{where}.start_tile")
    s[poff + L.P_START_TILE] = tile
    places.put("starting tile", None if tile < 0 else f"S{tile + 1}", f"{where}.start_tile")
    s[poff + L.P_CLAN] = ci
    cellar = read_list(f"{where}.cellar", pd.get("cellar", [0, 0]), 2)
    if len(cellar) != 2:
        raise ScenarioError(f"{where}.cellar is [left, right] barrels, got {cellar!r}")
    s[poff + L.P_CELLAR:poff + L.P_CELLAR + 2] = [read_int(f"{where}.cellar", x, 0, MAX_COUNT)
                                              for x in cellar]
    if any(cellar) and not T[L.T_CLAN_CELLAR_IN + row]:
        raise ScenarioError(f"{where}.cellar: only a clan with a whisky cellar (MacKenzie, "
                            f"R-8.6) has barrels; clan here: {clan}")
    s[poff + L.P_WHISKY_MADE] = read_int(f"{where}.whisky_made", pd.get("whisky_made", 0), 0,
                                   MAX_COUNT)
    s[poff + L.P_BID] = read_int(f"{where}.bid", pd.get("bid", 0), 0, int(T[L.T_AUCTION_MAX]))
    s[poff + L.P_BEER] = read_int(f"{where}.beer", pd.get("beer", 0), 0, MAX_COUNT)
    if s[poff + L.P_BEER] and not T[L.T_CLAN_BEER_MONEY + row]:
        raise ScenarioError(f"{where}.beer: only the brewer brews beer (R-8.9); clan here: {clan}")
    if "score" in pd:
        score = read_dict(f"{where}.score", pd["score"], L.SCORE_FIELDS)
        s[poff + L.P_SCORE:poff + L.P_SCORE + L.N_SCORE] = [
            read_int(f"{where}.score.{k}", score.get(k, 0), -MAX_COUNT, MAX_COUNT)
            for k in L.SCORE_FIELDS]


def _set_units(game, p, pd, where, ci, row):
    """Units on the map: right terrain (R-3.3; fishermen R-8.5), one per hex, within stock."""
    rs, board, s, T = game.ruleset, game.board, game.state, game.tables
    poff = L.S_PLAYERS + p * L.P_SIZE
    counts = [int(x) for x in rs.units.count] + [0]
    pooled = bool(T[L.T_CLAN_ANY_WORKER + row])
    workers = [UNIT_NAMES.index(w) for w in ("lumberjack", "miner", "fisherman")]
    deployed = 0
    for label, unit in read_dict(f"{where}.units", pd.get("units", {})).items():
        u = lookup(UNIT_NAMES, unit, "unit")
        node = node_of(board, label)
        if s[L.S_OCC + node] != EMPTY:
            raise ScenarioError(f"{where}.units: hex {label} already holds a unit (one unit "
                                f"per hex)")
        if u == FISHERMAN:
            _check_fisherman(game, p, node, label, where, pooled)
        elif not is_land(T, node) or not T[L.T_TERRAIN + node] & T[L.T_UNIT_TERRAIN + u]:
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
    s[poff + L.P_BOARD:poff + L.P_BOARD + len(counts)] = counts


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
