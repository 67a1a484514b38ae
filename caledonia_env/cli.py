"""The ``caledonia`` command (also ``python -m caledonia_env``).

Subcommands: ``play`` (tournaments between bots), ``balance`` (clan against
clan), ``replay`` (step through a recorded game), ``render`` (draw a
position), ``demo`` (one random game).
Bad input (unknown agent, map, player count, rules, unwritable output path)
prints one line naming what is allowed and exits with code 2 before any game is
played; output files are written atomically (temporary file, then rename), and
SIGTERM or Ctrl-C leaves no temporary file behind.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

import numpy as np

EXAMPLES = """examples:
  caledonia play --players greedy,random,random,random --games 100 --workers 2
  caledonia balance --agent greedy --games 20000 --workers 2
  caledonia replay game.json --all
  caledonia render --seed 3 --moves 40 -o board.png
  caledonia demo --players 2 --seed 7 --map A1,B2,C1,D2 -o board.png
  caledonia train --players 2 --timesteps 2_000_000 --out runs/x      # needs the train extra
  caledonia expert --players 2 --sims 32 --minutes 15 --workers 2 --out runs/ei
  caledonia evaluate runs/x/best.zip --vs random,greedy --games 400
  caledonia play --players ppo:pretrained,greedy --games 100
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
  caledonia balance --agent greedy --games 20000 --workers 2
  caledonia balance --players 2 --games 2800 --plot balance_2p.png --out balance_2p.csv
  caledonia balance --clans stewart,campbell,mackenzie,fergusson --games 400
  caledonia balance --players 3 --variant static-imports --ruleset my_rules/ --games 600
  caledonia balance --players 2 --automa 5 --games 800     # each clan against the Automa
  caledonia balance --agent ppo:pretrained --design drafted --games 2000 --workers 2
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


class UsageError(Exception):
    """Bad command-line input: printed as 'caledonia CMD: message', exit code 2."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main process so that every ``finally`` cleans up."""


_MAIN_PID = os.getpid()


def _on_sigterm(signum, frame):
    if os.getpid() != _MAIN_PID:      # a forked worker: leave at once, the parent cleans up
        os._exit(128 + signum)
    raise Terminated()


# ---------------------------------------------------------------- helpers
def _atomic_savefig(fig, path: str, dpi: int = 110) -> None:
    from .tournament import save_figure
    save_figure(fig, path, dpi)


def _check_output_path(path: str, what: str, folder: bool = False) -> None:
    """Fail early (before a long run) if ``path`` cannot be written: an output file needs
    an existing folder; an output ``folder`` is created, so its parent must exist."""
    from .tournament import check_output_file, check_output_folder
    try:
        (check_output_folder if folder else check_output_file)(path, what)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _read_record(path: str):
    """Load and verify a game record (docs/records.md): the starting position and its
    actions; UsageError if it is unreadable, invalid, or does not replay to its checksums
    (the message names the first diverging step)."""
    from .game import Game
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"cannot read game record {path!r}: {e.strerror or e}") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"{path!r} is not a JSON game record (written by Game.to_json / "
                         f"'caledonia play --record-dir'): {e}") from None
    if not isinstance(record, dict) or "actions" not in record or \
            ("config" not in record and "scenario" not in record):
        raise UsageError(f"{path!r} is not a game record: it needs 'config' (or 'scenario') "
                         f"and 'actions' (written by Game.to_json)")
    try:
        start = Game.record_start(record)
    except (ValueError, TypeError, KeyError) as e:
        raise UsageError(f"{path!r}: invalid game record: {e}") from None
    try:
        Game.from_json(record)                # replays and verifies every step
    except (ValueError, TypeError, KeyError) as e:
        raise UsageError(f"{path!r}: the record does not replay: {e}") from None
    return start, list(record["actions"])


def _board_picture(game, title=None):
    """Matplotlib figure of the map with every unit and the port tiles."""
    from .engine import layout as L
    from .engine.constants import NEUTRAL, OCC_STRIDE, UNIT_NAMES
    from .map.render import render_board
    s = game.state
    units = {}
    for m in range(game.board.n_nodes):
        o = int(s[L.S_OCC + m])
        if o == NEUTRAL:
            units[m] = (-1, "neutral")
        elif o >= 0:
            units[m] = (o // OCC_STRIDE, UNIT_NAMES[o % OCC_STRIDE])
    ports = {c: f"P{int(s[L.S_PORTS + c]) + 1}" for c in range(4) if s[L.S_PORTS + c] >= 0}
    labels = [game.clan(p) or "" for p in range(game.num_players)]
    return render_board(game.board, units=units, port_tiles=ports, title=title,
                        player_labels=labels)


def _position_title(game, what: str) -> str:
    """Title line: map sides, players and clans, and which position is drawn."""
    n = game.num_players
    who = "solo" if game.config.solo else f"{n} players"
    if game.is_terminal:
        when = "final position"
    else:
        when = f"round {game.round}, next: player {game.current_player} ({game.context})"
    return f"map {','.join(game.map)} · {who} · {what} · {when}"


def _rules(args, n_players: int, clans: bool = True) -> tuple[object, dict]:
    """(clans, further GameConfig options) from the rules options; UsageError if invalid."""
    from .tournament import rules_from_args
    try:
        return rules_from_args(args, n_players, clans)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _config(args, players: int):
    """GameConfig of demo / render from --seed, --map and the rules options."""
    from . import GameConfig
    from .config import clan_options
    clans, kw = _rules(args, players)
    kw.update(clan_options(clans))
    try:
        return GameConfig(num_players=players, seed=args.seed, map=args.map, **kw)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _players(args) -> int:
    """--players of demo / render: 1 with --solo, else the given count (default 4)."""
    if args.solo:
        if args.players not in (None, 1):
            raise UsageError(f"--solo is the one-player game (R-9.2); drop --players "
                             f"{args.players}")
        return 1
    return 4 if args.players is None else args.players


# ------------------------------------------------------------------- demo
def _cmd_demo(args) -> int:
    from . import Game
    config = _config(args, _players(args))
    if args.output:
        _check_output_path(args.output, "--output")
    t0 = time.perf_counter()
    game = Game(config)
    rng = np.random.default_rng(args.seed)
    while not game.is_terminal:
        game.step(rng.choice(game.legal_actions()))
    elapsed = time.perf_counter() - t0
    print(game.render_text())
    print(f"\n{game.move_number} decisions in {elapsed:.2f} s (includes numba compile on first run)")
    if args.output:
        _atomic_savefig(_board_picture(game, _position_title(
            game, f"seed {args.seed}, random moves")), args.output)
        print(f"final map written to {args.output}")
    return 0


# ------------------------------------------------------------------- play
def _spec_from_args(args):
    from .tournament import TournamentSpec, validate
    players = tuple(p.strip() for p in args.players.split(",")) if args.players else ()
    if any(not p for p in players):
        raise UsageError(f"--players: empty agent name in {args.players!r} "
                         f"(use commas between names, e.g. greedy,random)")
    clans, kw = _rules(args, len(players))
    ruleset = kw.pop("ruleset", None)
    spec = TournamentSpec(players=players, games=args.games, seed=args.seed, map=args.map,
                          clans=clans, ruleset=ruleset, game_kw=kw)
    try:
        validate(spec)
    except ValueError as e:
        raise UsageError(str(e)) from None
    return spec


def _run_games(args, spec, bar):
    """The rows of every game of ``spec``: through caledonia_env.scale (streamed to --out,
    resumable, CSV or Parquet) for --backend ray, --resume or a .parquet --out; else the
    local runner (rows written to --out afterwards)."""
    from . import tournament as tn
    out = args.out or ""
    if args.backend == "ray" or args.resume or out.endswith(".parquet"):
        if not out:
            raise UsageError("--backend ray, --resume and Parquet output need --out x.csv or "
                             "x.parquet (rows are streamed there as games finish)")
        if getattr(args, "record_dir", None):
            raise UsageError("--record-dir works with the local backend only")
        from . import scale
        try:
            summary = scale.run_study(spec, out, backend=args.backend, workers=args.workers,
                                      address=args.address, resume=args.resume,
                                      progress=bar.update)
        except (ValueError, ImportError) as e:
            raise UsageError(str(e)) from None
        if summary["skipped"]:
            print(f"--resume: {summary['skipped']} games already in {out}, "
                  f"{summary['games']} played now")
        return scale.read_rows(out), True
    if args.address:
        raise UsageError("--address needs --backend ray")
    return tn.run(spec, workers=args.workers, record_dir=getattr(args, "record_dir", None),
                  progress=bar.update), False


def _cmd_play(args) -> int:
    from . import tournament as tn
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    spec = _spec_from_args(args)
    if args.out:
        _check_output_path(args.out, "--out")
    if args.record_dir:
        _check_output_path(args.record_dir, "--record-dir", folder=True)
    t0 = time.perf_counter()
    with tn.progress_bar(spec.games, quiet=args.quiet) as bar:
        rows, written = _run_games(args, spec, bar)
    wall = time.perf_counter() - t0
    print(tn.report(rows))
    if spec.game_kw.get("solo"):
        kw = dict(spec.game_kw, ruleset=spec.ruleset) if spec.ruleset else spec.game_kw
        print("\n" + tn.format_solo(tn.solo_summary(rows, kw), rows[0]["agent"]))
    print(f"wall time {wall:.1f} s ({wall / spec.games:.3f} s per game with "
          f"{args.workers} worker{'s' if args.workers > 1 else ''})")
    if args.out:
        if not written:
            tn.write_csv(rows, args.out)
        print(f"{len(rows)} rows written to {args.out}")
    if args.record_dir:
        print(f"{spec.games} game records written to {args.record_dir}")
    return 0


# ---------------------------------------------------------------- balance
def _automa_levels(text, n_players: int) -> tuple[int, ...]:
    """--automa LEVEL[,LEVEL]: one Automa seat per level (1-5), at least one other seat."""
    if not text:
        return ()
    try:
        levels = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"--automa takes levels 1-5, comma separated, e.g. --automa 5 or "
                         f"--automa 3,4; got {text!r}") from None
    if any(not 1 <= lv <= 5 for lv in levels):
        raise UsageError(f"--automa levels are 1-5 (A-1.1), got {text!r}")
    if len(levels) >= n_players:
        raise UsageError(f"--automa {text} leaves no seat for the clans in a {n_players}-player "
                         f"game (at most {n_players - 1} Automa seats)")
    return levels


def _cmd_balance(args) -> int:
    from . import tournament as tn
    from .config import CLAN_NAMES
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    if args.players not in (2, 3, 4):
        raise UsageError(f"--players must be 2, 3 or 4, got {args.players}")
    if args.clans:
        clans = [c.strip().lower() for c in args.clans.split(",") if c.strip()]
        bad = [c for c in clans if c not in CLAN_NAMES]
        if bad:
            raise UsageError(f"unknown clan(s) {', '.join(bad)}; allowed: {', '.join(CLAN_NAMES)}")
    else:
        clans = [c for c in CLAN_NAMES if c != "brewer"]
    automa = _automa_levels(args.automa, args.players)
    humans = args.players - len(automa)
    drafted = args.design == "drafted"
    if drafted and args.clans:
        raise UsageError("--design drafted plays the standard draft of the eight base clans "
                         "(R-1.7); --clans is for --design assigned")
    _, kw = _rules(args, args.players, clans=False)
    ruleset = kw.pop("ruleset", None)
    players = (args.agent.strip(),) * humans + tuple(f"automa:{lv}" for lv in automa)
    if drafted:                                 # the agents draft, R-1.6 first player
        schedule = None
        spec = tn.TournamentSpec(players=players, games=args.games, seed=args.seed,
                                 map=args.map, clans="draft", ruleset=ruleset, game_kw=kw)
    else:
        try:
            schedule = tn.balance_schedule(clans, humans, seed=args.seed)
        except ValueError as e:
            raise UsageError(str(e)) from None
        if automa:                              # Automa seats take no clan
            schedule = tuple(tuple(c) + (None,) * len(automa) for c in schedule)
        spec = tn.TournamentSpec(players=players, games=args.games,
                                 seed=args.seed, map=args.map, clan_schedule=schedule,
                                 ruleset=ruleset, game_kw=dict(kw, first_player=0))
    try:
        tn.validate(spec)
    except ValueError as e:
        raise UsageError(str(e)) from None
    for path, what in ((args.out, "--out"), (args.plot, "--plot")):
        if path:
            _check_output_path(path, what)
    t0 = time.perf_counter()
    with tn.progress_bar(spec.games, quiet=args.quiet) as bar:
        rows, written = _run_games(args, spec, bar)
    wall = time.perf_counter() - t0
    # the Automa seats (no clan) appear under their name, e.g. automa:5
    table_rows = [dict(r, clan=r["agent"]) if r["agent"].startswith("automa:") else r
                  for r in rows]
    stats = tn.group_stats(table_rows, "clan")
    names, ahead, meet = tn.head_to_head(table_rows)
    who = (f"every player {args.agent}" if not automa else
           f"{humans} x {args.agent} with a clan against {', '.join(players[humans:])}")
    print(tn.format_table(stats, "clan", f"win rate by clan ({args.players} players, {who}; "
                                         f"par {100 / args.players:.1f}%)"))
    print()
    print(tn.format_head_to_head(names, ahead, meet))
    counts = [s["n"] for s in stats if not str(s["clan"]).startswith("automa:")]
    if drafted:
        print(f"\n{spec.games} games with the clans drafted by the players (R-1.7, first "
              f"player drawn per game); draft share (games with the clan / games): "
              + ", ".join(f"{s['clan']} {100 * s['n'] / spec.games:.0f}%" for s in stats
                          if not str(s["clan"]).startswith("automa:"))
              + f"; wall time {wall:.1f} s")
    else:
        combos = len(schedule) // humans
        print(f"\n{spec.games} games of a balanced schedule ({combos} clan combinations x "
              f"{humans} seat rotations, player 0 first, blocks in a seeded order); games "
              f"per clan {min(counts)}-{max(counts)}; wall time {wall:.1f} s")
    print(tn.describe_rules(rows))
    if args.out:
        if not written:
            tn.write_csv(rows, args.out)
        print(f"{len(rows)} rows written to {args.out}")
    if args.plot:
        fig = tn.balance_figure(stats, names, ahead, meet, args.players,
                                f"Clan balance: {spec.games} games, {args.players} players, "
                                f"{'all ' + args.agent if not automa else who}"
                                f"{', clans drafted' if drafted else ''}\n"
                                f"{tn.describe_rules(rows)}")
        tn.save_figure(fig, args.plot)
        print(f"plot written to {args.plot}")
    return 0


# ----------------------------------------------------------------- replay
def _cmd_replay(args) -> int:
    from .game import IllegalActionError
    game, actions = _read_record(args.file)
    interactive = not args.all and sys.stdin.isatty()
    print(game.render_text())
    for i, a in enumerate(actions):
        try:
            a = int(a)
            desc = game.describe_action(a)
            who, ctx, rnd = game.current_player, game.context, game.round
            game.step(a)
        except (IllegalActionError, ValueError, TypeError) as e:
            raise UsageError(f"{args.file!r}: action #{i} ({a!r}) does not replay: {e}") from None
        print(f"\n#{i + 1}/{len(actions)}  round {rnd}, player {who}, {ctx}: {desc}")
        if not args.brief:
            print(game.render_text())
        if interactive and i + 1 < len(actions):
            try:
                reply = input("[Enter] next, [a] all, [q] quit > ").strip().lower()
            except EOFError:
                reply = "a"
            if reply == "q":
                return 0
            if reply == "a":
                interactive = False
    if args.brief:
        print()
        print(game.render_text())
    if not game.is_terminal:
        print(f"\n(the record ends before the game is over: {len(actions)} decisions)")
    return 0


# ----------------------------------------------------------------- render
def _cmd_render(args) -> int:
    from . import Game
    if args.moves is not None and args.moves < 0:
        raise UsageError(f"--moves must be >= 0, got {args.moves}")
    _check_output_path(args.output, "--output")
    given = [o for o in ("ruleset", "variant") if getattr(args, o)] + \
        [o for o in ("auction", "solo") if getattr(args, o)] + \
        (["clans"] if args.clans != "draft" else [])
    if args.game and given:
        raise UsageError(f"--game draws a recorded game under its own rules; drop "
                         f"{', '.join('--' + o for o in given)}")
    if args.game:
        game, actions = _read_record(args.game)
        n = len(actions) if args.moves is None else min(args.moves, len(actions))
        try:
            game.apply_sequence(int(a) for a in actions[:n])
        except (ValueError, TypeError) as e:
            raise UsageError(f"{args.game!r}: the record does not replay: {e}") from None
        what = f"{args.game} after {n} decisions"
    else:
        game = Game(_config(args, _players(args)))
        rng = np.random.default_rng(args.seed)
        n = 0
        while n < (args.moves or 0) and not game.is_terminal:
            game.step(rng.choice(game.legal_actions()))
            n += 1
        what = f"seed {args.seed}, {n} random moves"
    _atomic_savefig(_board_picture(game, title=_position_title(game, what)), args.output)
    if args.text:
        print(game.render_text())
    print(f"{what}: map written to {args.output}")
    return 0


# ----------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    from .tournament import VARIANTS, add_rules_options
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
    demo.set_defaults(func=_cmd_demo)

    from caledonia_env import agents
    from caledonia_env.scale import add_backend_options

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
                           "its folder must exist")
    play.add_argument("--record-dir", default=None, metavar="DIR",
                      help="write every game's JSON record (Game.to_json, for 'caledonia "
                           "replay') as DIR/game_000000.json..., e.g. --record-dir records/ "
                           "(created if missing; its parent must exist)")
    play.add_argument("-q", "--quiet", action="store_true",
                      help="no progress bar on stderr (there is none when stderr is not a "
                           "terminal)")
    add_rules_options(play)
    add_backend_options(play)
    play.set_defaults(func=_cmd_play)

    balance = sub.add_parser(
        "balance", help="every clan against every other under the same bots: win rates and a plot",
        description="Clan balance: play every combination of different clans (each in every seat "
                    "rotation, player 0 first), all players controlled by the same bot, in a "
                    "seeded order that keeps every prefix balanced; print the win rate of each "
                    "clan with its 95% Wilson interval, mean VP by component and a head-to-head "
                    "table, and draw them to a PNG.",
        formatter_class=fmt, epilog=BALANCE_EXAMPLES)
    balance.add_argument("--agent", default="greedy",
                         help="the bot playing every seat (default greedy), e.g. --agent mcts:16")
    balance.add_argument("--players", type=int, default=4,
                         help="players per game, 2-4 (default 4), e.g. --players 2")
    balance.add_argument("--games", type=int, default=2000,
                         help="number of games (default 2000), e.g. --games 20000")
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
    balance.add_argument("-q", "--quiet", action="store_true", help="no progress bar on stderr")
    add_rules_options(balance, clans=False, auction=False, solo=False)
    add_backend_options(balance)
    balance.set_defaults(func=_cmd_balance)

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
    replay.set_defaults(func=_cmd_replay)

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
    render.set_defaults(func=_cmd_render)

    from caledonia_env.train.cli import (add_evaluate_parser, add_expert_parser, add_plot_parser,
                                         add_train_parser)
    from caledonia_env.web.cli import add_serve_parser
    add_train_parser(sub)
    add_expert_parser(sub)
    add_evaluate_parser(sub)
    add_plot_parser(sub)
    add_serve_parser(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:          # --help (0) or a usage error (2, message already printed)
        return int(e.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        old = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:               # not the main thread: leave SIGTERM alone
        old = None
    try:
        return args.func(args)
    except UsageError as e:
        print(f"caledonia {args.command}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        what = "terminated" if isinstance(e, Terminated) else "interrupted"
        print(f"\ncaledonia {args.command}: {what}; no partial output file was left",
              file=sys.stderr)
        return 143 if isinstance(e, Terminated) else 130
    except BrokenPipeError:          # e.g. 'caledonia replay g.json --all | head'
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
