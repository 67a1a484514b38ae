"""The ``caledonia`` argument parser: every command, its options, help and examples
(the commands of training and the web app come from ``caledonia_env.train.cli`` and
``caledonia_env.web.cli``)."""
from __future__ import annotations

import argparse

from caledonia_env import agents
from caledonia_env.scale import add_backend_options
from caledonia_env.tournament import VARIANTS, add_rules_options
from caledonia_env.train.cli import (add_evaluate_parser, add_expert_parser, add_fit_qpolicy_parser,
                                     add_fit_value_parser,
                                     add_ladder_parser, add_plot_parser, add_train_parser,
                                     add_tune_parser)
from caledonia_env.web.cli import add_serve_parser
from caledonia_env.cli.balance import cmd_balance
from caledonia_env.cli.games import cmd_play
from caledonia_env.cli.pictures import cmd_demo, cmd_render, cmd_replay

EXAMPLES = """examples:
  caledonia play --players greedy,random,random,random --games 100 --workers 2
  caledonia balance --agent greedy:4p --games 20000 --workers 2   # the tuned evaluation alone
  caledonia replay game.json --all
  caledonia render --seed 3 --moves 40 -o board.png
  caledonia demo --players 2 --seed 7 --map A1,B2,C1,D2 -o board.png
  caledonia train --players 2 --timesteps 2_000_000 --out runs/x      # needs the train extra
  caledonia expert --players 2 --sims 32 --minutes 15 --workers 2 --out runs/ei
  caledonia evaluate runs/x/best.zip --vs random,greedy --games 400
  caledonia play --players ppo:pretrained,greedy --games 100
  caledonia ladder --players 2 --games 900 --seed 20261210 --workers 2 --plot ladder.png
  caledonia play --players greedy,random --clans none --variant no-ports,static-imports
  caledonia serve --port 8080                  # browser app (needs the web extra)
run 'caledonia COMMAND --help' for every option of a command.
"""

DEMO_EXAMPLES = """examples:
  caledonia demo                          # 4 players, random map from seed 0, map.png
  caledonia demo --players 2 --seed 7 --map A1,B2,C1,D2 -o board.png
"""

PLAY_EXAMPLES = """examples:
  caledonia play --players greedy,random,random,random --games 200
  caledonia play --players mcts:64,greedy --games 50 --workers 2 --out results.csv
  caledonia play --players greedy,greedy,random --games 1000 --map A1,B2,C1,D2 --seed 7 \\
      --record-dir records/
  caledonia play --players greedy,greedy --clans stewart,campbell --games 500
  caledonia play --players greedy,random,random --auction --ruleset my_rules.json
  caledonia play --players greedy --solo --games 100
variants (--variant NAME[,NAME]): {variants}
agent names (KIND or KIND:PARAM):
{agents}
"""

BALANCE_EXAMPLES = """examples:
  caledonia balance --agent greedy:4p --games 20000 --workers 2   # the tuned evaluation alone
  caledonia balance --players 2 --games 2800 --plot balance_2p.png --out balance_2p.csv
  caledonia balance --clans stewart,campbell,mackenzie,fergusson --games 400
  caledonia balance --players 3 --variant static-imports --ruleset my_rules/ --games 600
  caledonia balance --players 2 --automa 5 --games 800     # each clan against the Automa
  caledonia balance --agent ppo:pretrained --design drafted --games 2000 --workers 2
  caledonia balance --perturb 50 --games 700 --workers 2 --out ensemble.csv
  caledonia balance --players 3 --games 3000 --report reports/balance_3p   # HTML report
  caledonia balance --players 2 --agent greedy --games 400 \\
      --compare clans.mackenzie.whisky_money=2 --out whisky.csv   # paired what-if
  caledonia balance --players 3 --compare static-imports --games 600
  caledonia balance --players 2 --compare estimates-2026-11 --design drafted --games 800
  caledonia balance --players 2 --until resolved --max-games 5000 --margin 2
  caledonia balance --players 2 --compare clans.cunningham.milk_money=6 --until resolved \\
      --confidence 0.9 --batch 112 --max-games 4000
  caledonia balance --players 2 --agent greedy:2p,qpolicy --games 560   # does it hold?
"""

REPLAY_EXAMPLES = """examples:
  caledonia replay records/game_000000.json        # Enter = next decision, q = quit
  caledonia replay game.json --all                 # print the whole game
  caledonia replay game.json --all --brief         # one line per decision, final position
"""

RENDER_EXAMPLES = """examples:
  caledonia render --seed 3 -o board.png                  # the starting map of seed 3
  caledonia render --seed 3 --players 2 --moves 60 -o mid.png
  caledonia render --game records/game_000000.json -o final.png
  caledonia render --game game.json --moves 100 -o turn100.png
  caledonia render --solo --seed 2 --moves 80 -o solo.png
"""


def build_parser() -> argparse.ArgumentParser:
    """The parser of every ``caledonia`` command (each sets ``func``, its handler)."""
    fmt = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(
        prog="caledonia", description="Clans of Caledonia simulator for RL and balance research.",
        formatter_class=fmt, epilog=EXAMPLES)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser(
        "demo", help="play one game with random legal moves, print it and draw the final map",
        description="Play one game with random legal moves, print the final position and "
                    "draw the final map.", formatter_class=fmt, epilog=DEMO_EXAMPLES)
    demo.add_argument("--players", type=int, default=None,
                      help="number of players, 2-4 (default 4; 1 with --solo)")
    demo.add_argument("--seed", type=int, default=0, help="seed for map, tiles and moves (default 0)")
    demo.add_argument("--map", default=None,
                      help="module sides A,B,C,D e.g. A1,B2,C1,D2 (default: drawn from the seed)")
    demo.add_argument("-o", "--output", default="map.png",
                      help="PNG of the final map (default map.png; '' to skip)")
    add_rules_options(demo)
    demo.set_defaults(func=cmd_demo)

    play = sub.add_parser(
        "play", help="run many games between bots and print win rates and score breakdowns",
        description="Run games between bots in parallel processes; print wins, win rates with "
                    "95% Wilson intervals and mean VP by component, by agent and by seat; "
                    "optionally write one CSV row per player per game and every game's record.",
        formatter_class=fmt, epilog=PLAY_EXAMPLES.format(agents=agents.syntax(),
                                                         variants=", ".join(VARIANTS)))
    play.add_argument("--players", required=True, metavar="A,B[,C[,D]]",
                      help="one agent name per player, in player order, e.g. "
                           "greedy,random,mcts:64,random (2-4 players; one with --solo)")
    play.add_argument("--games", type=int, default=100, help="number of games (default 100)")
    play.add_argument("--map", default=None, metavar="A?,B?,C?,D?",
                      help="fixed module sides for every game, e.g. A1,B2,C1,D2 "
                           "(default: drawn from each game's seed)")
    play.add_argument("--seed", type=int, default=0,
                      help="tournament seed: game g is set up from (seed, g), so results do not "
                           "depend on --workers (default 0)")
    play.add_argument("--workers", type=int, default=1,
                      help="parallel worker processes (default 1), e.g. --workers 2")
    play.add_argument("--out", default=None, metavar="FILE.csv|FILE.parquet",
                      help="write one row per player per game (scores, win, rank, seat, agent, "
                           "thinking time, rules), e.g. --out results.csv or results.parquet; "
                           "its folder must exist; written as games finish (Ctrl-C keeps them "
                           "for --resume) and locked for the run")
    play.add_argument("--record-dir", default=None, metavar="DIR",
                      help="write every game's JSON record (Game.to_json, for 'caledonia "
                           "replay') as DIR/game_000000.json..., e.g. --record-dir records/ "
                           "(created if missing; its parent must exist)")
    play.add_argument("-q", "--quiet", action="store_true",
                      help="no progress bar on stderr (there is none when stderr is not a "
                           "terminal)")
    add_rules_options(play)
    add_backend_options(play)
    play.set_defaults(func=cmd_play)

    balance = sub.add_parser(
        "balance", help="every clan against every other under the same bots: win rates and a plot",
        description="Clan balance: play every combination of different clans (each in every seat "
                    "rotation, player 0 first), all players controlled by the same bot, in a "
                    "seeded order that keeps every prefix balanced; print the win rate of each "
                    "clan with its 95% Wilson interval, mean VP by component and a head-to-head "
                    "table, and draw them to a PNG.",
        formatter_class=fmt, epilog=BALANCE_EXAMPLES)
    balance.add_argument("--agent", default=None, metavar="NAME[,NAME...]",
                         help="the bot playing every seat (default qpolicy, the learned policy "
                              "over the evaluation tuned for the player count; "
                              "agents/pretrained/qpolicy_Np.md), e.g. --agent greedy:4p (the "
                              "tuned evaluation alone), --agent greedy (the default weights), "
                              "--agent mcts:16; several names play the same games under "
                              "each and mark the clan conclusions that change with the "
                              "agent, e.g. --agent greedy:4p,qpolicy")
    balance.add_argument("--players", type=int, default=4,
                         help="players per game, 2-4 (default 4), e.g. --players 2")
    balance.add_argument("--games", type=int, default=None,
                         help="number of games (default 2000; with --until resolved use "
                              "--max-games), e.g. --games 20000")
    balance.add_argument("--clans", default=None, metavar="C1,C2,...",
                         help="clans to compare (default the eight base clans; add brewer by "
                              "naming it), e.g. --clans stewart,campbell,mackenzie")
    balance.add_argument("--design", choices=("assigned", "drafted"), default="assigned",
                         help="assigned (default): every clan combination in every seat "
                              "rotation, so every clan plays as often; drafted: the agents "
                              "draft the clans as in the standard game (R-1.7), so the draft "
                              "shares show which clans they prefer")
    balance.add_argument("--automa", default=None, metavar="LEVEL[,LEVEL]",
                         help="Automa opponents (A-0), one seat per level 1-5, after the "
                              "agent's seats; the clans are compared on the other seats, e.g. "
                              "--players 2 --automa 5")
    balance.add_argument("--map", default=None, metavar="A?,B?,C?,D?",
                         help="fixed module sides, e.g. A1,B2,C1,D2 (default: drawn per game)")
    balance.add_argument("--seed", type=int, default=0, help="tournament seed (default 0)")
    balance.add_argument("--workers", type=int, default=1,
                         help="parallel worker processes (default 1), e.g. --workers 2")
    balance.add_argument("--out", default=None, metavar="FILE.csv|FILE.parquet",
                         help="one row per player per game, e.g. --out balance.csv or "
                              "balance.parquet")
    balance.add_argument("--plot", default="balance.png", metavar="FILE.png",
                         help="PNG with the win-rate bars and the head-to-head matrix "
                              "(default balance.png; '' to skip)")
    balance.add_argument("--report", default=None, metavar="DIR",
                         help="also write the study's report into DIR (created; its parent "
                              "must exist): index.html (conclusions, command, seeds, ruleset "
                              "fingerprint, plots and tables in one page), report.md, "
                              "report.json; e.g. --report reports/balance_4p, listed by "
                              "'caledonia serve'")
    balance.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    balance.add_argument("--perturb", type=int, default=0, metavar="N",
                         help="robustness study: play the same games under N rulesets whose "
                              "estimates are drawn (seeded by --seed) from their plausible "
                              "ranges; per clan its win share across the draws (mean, 5-95%%), "
                              "how often first / last; --out gets one row per (draw, clan), "
                              "--plot the spread per clan, FILE.csv.draws/ each draw's ruleset "
                              "and games (what --resume finishes from)")
    balance.add_argument("--ranges", default=None, metavar="FILE.json",
                         help="plausible ranges for --perturb (default: the bundled "
                              "caledonia_env/data/estimate_ranges.json)")
    what_if = balance.add_argument_group(
        "what if and stopping when the answer is known (docs/cli.md)")
    what_if.add_argument("--compare", nargs="+", default=None, metavar="B",
                         help="play every game twice, under the rules of --ruleset/--variant "
                              "(A) and under B (same seeds, map, clans, seats and agent "
                              "streams), and report per clan the paired difference of its "
                              "win share B - A with its interval, the VP components that "
                              "moved, rank changes and the games an independent comparison "
                              "would need. B: a ruleset (path or bundled name), a variant "
                              "name and/or TABLE.PATH=VALUE overrides of the ruleset tables "
                              "(JSON values), e.g. --compare clans.mackenzie.whisky_money=4 "
                              "or --compare static-imports; --out then gets a 'side' column")
    what_if.add_argument("--until", choices=("resolved",), default=None,
                         help="play in batches until every clan's verdict (above / at / "
                              "below par; with --compare: B raises / no change / B lowers) "
                              "is resolved by an anytime-valid confidence sequence, or "
                              "--max-games is reached, e.g. --until resolved --max-games 8000")
    what_if.add_argument("--confidence", type=float, default=None, metavar="LEVEL",
                         help="with --until: the chance that every verdict is right, "
                              "Bonferroni over clans and agents (default 0.95), e.g. "
                              "--confidence 0.9")
    what_if.add_argument("--max-games", type=int, default=None, metavar="N",
                         help="with --until: the most games per arm (agent and ruleset "
                              "side; default 20000), e.g. --max-games 5000")
    what_if.add_argument("--batch", type=int, default=None, metavar="N",
                         help="with --until: games per arm between two looks (default one "
                              "cycle of the balanced schedule, 56 / 168 / 280 games with the "
                              "eight clans for 2 / 3 / 4 players; 200 drafted), e.g. "
                              "--batch 112")
    what_if.add_argument("--margin", type=float, default=1.0, metavar="PP",
                         help="the indifference margin in percentage points: 'at par' / 'no "
                              "change' when the interval lies within par ± PP / 0 ± PP "
                              "(default 1), e.g. --margin 2")
    add_rules_options(balance, clans=False, auction=False, solo=False)
    add_backend_options(balance)
    balance.set_defaults(func=cmd_balance)

    replay = sub.add_parser(
        "replay", help="step through a recorded game in the terminal",
        description="Step through a game record (Game.to_json, 'caledonia play --record-dir'): "
                    "each decision's description and the position after it.",
        formatter_class=fmt, epilog=REPLAY_EXAMPLES)
    replay.add_argument("file", help="a game record, e.g. records/game_000000.json")
    replay.add_argument("--all", action="store_true",
                        help="print every decision without waiting for Enter "
                             "(the default when stdin is not a terminal)")
    replay.add_argument("--brief", action="store_true",
                        help="one line per decision; the position only at the start and the end")
    replay.set_defaults(func=cmd_replay)

    render = sub.add_parser(
        "render", help="draw a position (map, units, port tiles) to a PNG",
        description="Draw the map with every unit and port tile: a new game's setup (optionally "
                    "after N random legal moves) or a recorded game's position.",
        formatter_class=fmt, epilog=RENDER_EXAMPLES)
    render.add_argument("--seed", type=int, default=0,
                        help="game seed (map, tiles, random moves), default 0, e.g. --seed 3")
    render.add_argument("--players", type=int, default=None,
                        help="number of players, 2-4 (default 4; 1 with --solo)")
    render.add_argument("--map", default=None, metavar="A?,B?,C?,D?",
                        help="module sides, e.g. A1,B2,C1,D2 (default: drawn from the seed)")
    render.add_argument("--moves", type=int, default=None, metavar="N",
                        help="play N random legal moves first; with --game, draw the position "
                             "after the record's first N decisions (default: all of them)")
    render.add_argument("--game", default=None, metavar="FILE.json",
                        help="draw a recorded game instead of a new one, e.g. --game game.json")
    render.add_argument("-o", "--output", default="board.png",
                        help="PNG file to write (default board.png), e.g. -o board.png")
    render.add_argument("--text", action="store_true", help="also print the position as text")
    add_rules_options(render)
    render.set_defaults(func=cmd_render)

    add_train_parser(sub)
    add_expert_parser(sub)
    add_evaluate_parser(sub)
    add_tune_parser(sub)
    add_fit_value_parser(sub)
    add_fit_qpolicy_parser(sub)
    add_ladder_parser(sub)
    add_plot_parser(sub)
    add_serve_parser(sub)
    return parser
