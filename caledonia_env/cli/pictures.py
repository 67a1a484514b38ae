"""The commands that show one game: ``demo`` (a random game), ``replay`` (a recorded game,
step by step) and ``render`` (a position drawn to a PNG)."""
from __future__ import annotations

import sys
import time

import numpy as np

from caledonia_env.data.names import PORTS
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import NEUTRAL, OCC_STRIDE, UNIT_NAMES
from caledonia_env import records
from caledonia_env.game import Game, IllegalActionError
from caledonia_env.records import RecordError
from caledonia_env.tournament import save_figure
from caledonia_env.cli.common import UsageError, check_output_path, game_config, num_players


def read_record(path: str):
    """Load and verify a game record (docs/records.md): the starting position and its
    actions; UsageError if it is unreadable, invalid, or does not replay to its checksums
    (the message names the first diverging step)."""
    try:
        record = records.load(path)          # bounded, UTF-8, depth-checked JSON
    except RecordError as e:
        raise UsageError(f"{e} (game records are written by Game.to_json / "
                         f"'caledonia play --record-dir')") from None
    try:
        start = Game.record_start(record)
    except (ValueError, TypeError, KeyError) as e:
        raise UsageError(f"{path!r}: invalid game record: {e}") from None
    try:
        Game.from_json(record)                # replays and verifies every step
    except (ValueError, TypeError, KeyError) as e:
        raise UsageError(f"{path!r}: the record does not replay: {e}") from None
    return start, list(record["actions"])


def board_picture(game, title=None):
    """Matplotlib figure of the map with every unit and the port tiles."""
    from caledonia_env.map.render import render_board     # inside: matplotlib loads only to draw
    s = game.state
    units = {}
    for m in range(game.board.n_nodes):
        o = int(s[L.S_OCC + m])
        if o == NEUTRAL:
            units[m] = (-1, "neutral")
        elif o >= 0:
            units[m] = (o // OCC_STRIDE, UNIT_NAMES[o % OCC_STRIDE])
    ports = {c: PORTS[int(s[L.S_PORTS + c])] for c in range(4) if s[L.S_PORTS + c] >= 0}
    labels = [game.clan(p) or "" for p in range(game.num_players)]
    return render_board(game.board, units=units, port_tiles=ports, title=title,
                        player_labels=labels)


def position_title(game, what: str) -> str:
    """Title line: map sides, players and clans, and which position is drawn."""
    n = game.num_players
    who = "solo" if game.config.solo else f"{n} players"
    if game.is_terminal:
        when = "final position"
    else:
        when = f"round {game.round}, next: player {game.current_player} ({game.context})"
    return f"map {','.join(game.map)} · {who} · {what} · {when}"


# ------------------------------------------------------------------- demo
def cmd_demo(args) -> int:
    """``caledonia demo``: one game of random moves, printed; the final map drawn."""
    config = game_config(args, num_players(args), seed=args.seed)
    if args.output:
        check_output_path(args.output, "--output")
    t0 = time.perf_counter()
    game = Game(config)
    rng = np.random.default_rng(args.seed)
    while not game.is_terminal:
        game.step(rng.choice(game.legal_actions()))
    elapsed = time.perf_counter() - t0
    print(game.render_text())
    print(f"\n{game.move_number} decisions in {elapsed:.2f} s (includes numba compile on first run)")
    if args.output:
        save_figure(board_picture(game, position_title(
            game, f"seed {args.seed}, random moves")), args.output)
        print(f"final map written to {args.output}")
    return 0


# ----------------------------------------------------------------- replay
def cmd_replay(args) -> int:
    """``caledonia replay``: a game record, decision by decision."""
    game, actions = read_record(args.file)
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
def cmd_render(args) -> int:
    """``caledonia render``: a new or recorded game's position drawn to a PNG."""
    if args.moves is not None and args.moves < 0:
        raise UsageError(f"--moves must be >= 0, got {args.moves}")
    check_output_path(args.output, "--output")
    given = [o for o in ("ruleset", "variant") if getattr(args, o)] + \
        [o for o in ("auction", "solo") if getattr(args, o)] + \
        (["clans"] if args.clans != "draft" else [])
    if args.game and given:
        raise UsageError(f"--game draws a recorded game under its own rules; drop "
                         f"{', '.join('--' + o for o in given)}")
    if args.game:
        game, actions = read_record(args.game)
        n = len(actions) if args.moves is None else min(args.moves, len(actions))
        try:
            game.apply_sequence(int(a) for a in actions[:n])
        except (ValueError, TypeError) as e:
            raise UsageError(f"{args.game!r}: the record does not replay: {e}") from None
        what = f"{args.game} after {n} decisions"
    else:
        game = Game(game_config(args, num_players(args), seed=args.seed))
        rng = np.random.default_rng(args.seed)
        n = 0
        while n < (args.moves or 0) and not game.is_terminal:
            game.step(rng.choice(game.legal_actions()))
            n += 1
        what = f"seed {args.seed}, {n} random moves"
    save_figure(board_picture(game, title=position_title(game, what)), args.output)
    if args.text:
        print(game.render_text())
    print(f"{what}: map written to {args.output}")
    return 0
