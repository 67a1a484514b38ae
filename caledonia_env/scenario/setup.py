"""The setup part of a scenario dict: its GameConfig (docs/scenarios.md)."""
from __future__ import annotations

from caledonia_env.config import GameConfig
from caledonia_env.scenario.fields import PLAYER_KEYS, TOP_KEYS, ScenarioError, clan_name, read_dict, read_int, read_list
from caledonia_env.scenario.versions import upgrade_scenario


def scenario_config(d: dict) -> GameConfig:
    """The GameConfig of a scenario dict (checks its keys and setup fields)."""
    if not isinstance(d, dict):
        raise ScenarioError(f"a scenario is a dict (docs/scenarios.md), got {type(d).__name__}")
    d = upgrade_scenario(d)
    unknown = [k for k in d if k not in TOP_KEYS]
    if unknown:
        raise ScenarioError(f"unknown scenario keys {sorted(map(str, unknown))}; allowed: "
                            f"{sorted(TOP_KEYS)}")
    if "players" not in d:
        raise ScenarioError("'players' is required: one dict per player")
    players = read_list("players", d["players"], 4)
    for p, pd in enumerate(players):
        read_dict(f"players[{p}]", pd, PLAYER_KEYS)
    num_players = read_int("num_players", d.get("num_players", len(players) or 2), 1, 4)
    if len(players) != num_players:
        raise ScenarioError(f"'players' must list {num_players} players (num_players), "
                            f"got {len(players)}")
    clans = d.get("clans")
    if clans is None:
        named = [pd.get("clan") for pd in players]
        named = [None if c in (None, -1, "none") else c for c in named]
        if any(c is not None for c in named):
            clans = tuple(clan_name(f"players[{p}].clan", c) for p, c in enumerate(named))
    try:
        return GameConfig(num_players=num_players, seed=d.get("seed", 0),
                          map=d.get("map", "A1,B1,C1,D1"),
                          ruleset=d.get("ruleset"), ports=d.get("ports_enabled", True),
                          scoring_tiles=d.get("scoring_tiles_enabled", True),
                          variant_static_imports=d.get("variant_static_imports", False),
                          kickstarter_tiles=d.get("kickstarter_tiles", False),
                          solo=d.get("solo", num_players == 1), clans=clans,
                          clan_auction=d.get("clan_auction", False),
                          kickstarter_clan=d.get("kickstarter_clan", False))
    except ValueError as e:
        raise ScenarioError(str(e)) from None

