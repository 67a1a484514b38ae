"""One tournament game played in this process, and its CSV rows (one per player)."""
from __future__ import annotations

import pickle
import time

from caledonia_env import agents
from caledonia_env.engine import layout as L
from caledonia_env.game import Game
from caledonia_env.tournament.spec import TournamentSpec, game_seeds
from caledonia_env.tournament.variants import RULE_FIELDS, rule_fields

SCORE_FIELDS = tuple(L.SCORE_FIELDS)
CSV_FIELDS = ("game", "game_seed", "map", "player", "seat", "agent", "clan") + SCORE_FIELDS + (
    "money_left", "win", "rank", "decisions", "think_seconds") + RULE_FIELDS

_AGENTS: dict = {}


def warm_agent(name: str, i: int, kw: dict, game):
    """This process's agent for seat i made with the keyword options ``kw``; the first use
    warms it up (numba compilation or cache loading) on a copy of ``game`` so it does not
    count as thinking time."""
    key = (name, i, pickle.dumps(sorted(kw.items())))
    if key not in _AGENTS:
        bot = agents.make(name, seed=0, **kw)
        bot.act(game.clone())
        _AGENTS[key] = bot
    return _AGENTS[key]


def play_game(spec: TournamentSpec, g: int, record: bool = False) -> dict:
    """Play game ``g`` of ``spec``; return its CSV rows and optionally its JSON record."""
    n = len(spec.players)
    game_seed, agent_seeds = game_seeds(spec.seed, g, n)
    game = Game(spec.game_config(game_seed, g))
    bots = []
    for i, name in enumerate(spec.players):
        bot = None if game.is_automa(i) else warm_agent(name, i, spec.agent_kw, game)
        if bot is not None:                  # an Automa seat is played by the engine
            bot.reset(agent_seeds[i])
        bots.append(bot)
    order = [int(x) for x in game.state[L.S_ORDER:L.S_ORDER + n]]
    think = [0.0] * n
    decisions = [0] * n
    while not game.is_terminal:
        p = game.current_player
        t0 = time.process_time()
        a = bots[p].act(game)
        think[p] += time.process_time() - t0
        decisions[p] += 1
        game.step(a)
    rows = result_rows(game, g, game_seed, order, list(spec.players), decisions, think)
    return {"game": g, "rows": rows,
            "record": game.to_json(agents=list(spec.players)) if record else None}


def result_rows(game, g: int, game_seed: int, order, agents, decisions, think) -> list[dict]:
    """One CSV row per player of a finished game: seat, agent, clan, VP by component,
    win share (ties split), rank, thinking time and the rules it was played under."""
    n = game.num_players
    scores = game.score_breakdown()
    winners = game.winners()
    per_vp = game.ruleset.final_scoring.money_per_vp
    money = [int(game.state[L.S_PLAYERS + p * L.P_SIZE + L.P_MONEY]) for p in range(n)]
    key = [(scores[p]["total"], money[p] % per_vp) for p in range(n)]
    clans = [game.clan(p) or "-" for p in range(n)]           # '-' without clans
    rules = rule_fields(game.config, game.ruleset)
    rows = []
    for p in range(n):
        row = {"game": g, "game_seed": game_seed, "map": ",".join(game.map), "player": p,
               "seat": list(order).index(p), "agent": agents[p], "clan": clans[p]}
        row.update(scores[p])
        row.update(money_left=money[p],
                   win=(1.0 / len(winners)) if p in winners else 0.0,
                   rank=1 + sum(k > key[p] for k in key),
                   decisions=decisions[p], think_seconds=round(think[p], 6))
        row.update(rules)
        rows.append(row)
    return rows
