"""``caledonia serve``: run the web app (docs/web.md) with uvicorn.

Imports only the standard library and the engine at the top, so ``caledonia --help`` works
without the web extra; FastAPI and uvicorn are imported by :func:`cmd_serve`.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys

from caledonia_env.engine.compile.first_run import ESTIMATE_S, engine_cached

SERVE_EXAMPLES = """examples:
  caledonia serve                       # http://127.0.0.1:8000/
  caledonia serve --port 8080 --games 64
  caledonia serve --agent-dir runs/best # also offer ppo:NAME.zip, puct:64:NAME.zip, ...
  caledonia serve --reports studies     # http://127.0.0.1:8000/reports: the study reports
  caledonia serve --host 0.0.0.0 --allowed-host mybox.lan   # other machines (no authentication!)
"""
#: uvicorn's wait for running requests on Ctrl+C / SIGTERM (seconds); bot play ends at the
#: next decision, a request still running after this is answered 503 (guards.ShutdownGuard)
SHUTDOWN_SECONDS = 5


def add_serve_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``serve`` subcommand to an argparse ``subparsers`` object."""
    p = subparsers.add_parser(
        "serve", help="browser app: watch bot games, replay records, play against the bots",
        description="Serve the web app: watch bot games, replay game records and play "
                    "against the bots in a browser, and show the study reports of "
                    "--reports (needs the web extra: pip install "
                    "'caledonia-env[web]'). Security: docs/web.md.",
        epilog=SERVE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 = any free)")
    p.add_argument("--games", type=int, default=32,
                   help="games kept in memory; the least recently used is dropped (default 32)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="also answer requests for this Host name (repeatable); localhost, "
                        "127.0.0.1, ::1 and --host are always answered")
    p.add_argument("--agent-dir", default=None, metavar="DIR",
                   help="also offer the .zip checkpoints in DIR, by file name "
                        "(ppo:best.zip, puct:64:best.zip)")
    p.add_argument("--ruleset", action="append", default=[], metavar="PATH",
                   help="uploaded records may name this ruleset (as the record writes it; "
                        "repeatable); by default only the bundled one")
    p.add_argument("--reports", default="reports", metavar="DIR",
                   help="the folder whose reports ('caledonia balance --report DIR/NAME') "
                        "the page /reports lists and shows (default: reports, in the "
                        "working folder)")
    p.add_argument("--max-rollouts", type=int, default=512, metavar="N",
                   help="largest mcts / nmcts rollouts per decision (default 512)")
    p.add_argument("--max-sims", type=int, default=256, metavar="N",
                   help="largest puct / puctr simulations per decision (default 256)")
    p.add_argument("--max-seconds", type=float, default=5.0, metavar="S",
                   help="largest mcts:Xs seconds per decision (default 5)")
    p.add_argument("--step-seconds", type=float, default=10.0, metavar="S",
                   help="bot play of one request stops after S seconds (default 10)")
    p.add_argument("--bot-slots", type=int, default=None, metavar="N",
                   help="requests playing bot moves at once, each client its share; past "
                        "it a 429 busy (default: the usable CPU cores)")
    p.set_defaults(func=cmd_serve)
    return p


def _fail(message: str) -> int:
    print(f"caledonia serve: {message}", file=sys.stderr)
    return 2


def cmd_serve(args) -> int:
    """Start uvicorn; returns the exit code (2 for bad options or a missing extra)."""
    if not 0 <= args.port <= 65535:
        return _fail(f"--port must be in 0..65535, got {args.port}")
    if args.games < 1:
        return _fail(f"--games must be >= 1, got {args.games}")
    if args.bot_slots is not None and args.bot_slots < 1:
        return _fail(f"--bot-slots must be >= 1, got {args.bot_slots}")
    if os.path.exists(args.reports) and not os.path.isdir(args.reports):
        return _fail(f"--reports {args.reports} is not a folder")
    try:
        import uvicorn          # the optional web extra (the app needs fastapi; the agents
                                # it loads stay out of 'caledonia --help' this way)
        from caledonia_env.web.app import create_app
        from caledonia_env.web.protocol import HeaderTimeoutProtocol
        from caledonia_env.web.seats import AgentMenu, Limits, scan_agent_dir
    except ImportError as e:
        return _fail(f"needs the web extra ({e.name} is missing): pip install "
                     f"'caledonia-env[web]'")
    try:
        limits = Limits(max_rollouts=args.max_rollouts, max_sims=args.max_sims,
                        max_seconds=args.max_seconds, step_seconds=args.step_seconds)
        checkpoints = scan_agent_dir(args.agent_dir) if args.agent_dir else {}
        app = create_app(limit=args.games, menu=AgentMenu(limits, checkpoints),
                         host=args.host, allowed=args.allowed_host, rulesets=args.ruleset,
                         bot_slots=args.bot_slots, reports=args.reports)
    except ValueError as e:
        return _fail(str(e))
    # proxy_headers off: a client is the connection's address (the per-client share of the
    # games), never what an X-Forwarded-For header claims
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning",
                            http=HeaderTimeoutProtocol, proxy_headers=False,
                            timeout_graceful_shutdown=SHUTDOWN_SECONDS)
    server = uvicorn.Server(config)
    _announce(server, args.host)
    signals = _stop_bots_on_shutdown(server, app.state.slots)
    _first_run_note(sys.stderr)
    old = _sigterm_interrupts()
    try:
        server.run()
    except KeyboardInterrupt:     # uvicorn re-raises the signal it stopped on, once stopped
        pass
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    if signals:
        name = "SIGTERM" if signal.SIGTERM in signals else "Ctrl+C"
        print(f"caledonia serve: stopped ({name})", file=sys.stderr, flush=True)
        return 143 if signal.SIGTERM in signals else 130
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _sigterm_interrupts():
    """SIGTERM raises KeyboardInterrupt while uvicorn runs (it re-raises the signal after a
    graceful stop: caught, not a kill); the handler replaced, None off the main thread."""
    try:
        return signal.signal(signal.SIGTERM, _interrupt)
    except ValueError:
        return None


def _stop_bots_on_shutdown(server, slots) -> list:
    """When uvicorn starts shutting down, end bot play at the next decision (``slots.
    stopping``); returns the list the signals that stopped it are added to."""
    shutdown, handle_exit = server.shutdown, server.handle_exit
    signals: list = []

    async def stop_then_shutdown(sockets=None):
        slots.stopping.set()
        await shutdown(sockets=sockets)

    def note_signal(sig, frame):
        signals.append(sig)
        handle_exit(sig, frame)

    server.shutdown, server.handle_exit = stop_then_shutdown, note_signal
    return signals


def _first_run_note(stream) -> None:
    """On a terminal, when the engine is not compiled for this machine yet: say that the
    first game compiles it (its progress follows on this terminal, from the command's
    ``engine.compile.first_run.CompileProgress``)."""
    if stream.isatty() and not engine_cached():
        print(f"caledonia serve: the engine is not compiled for this machine yet; the first "
              f"game compiles it, once, about {ESTIMATE_S} s", file=stream, flush=True)


def _announce(server, host: str) -> None:
    """Print the URL once uvicorn is listening (the real port when --port 0)."""
    startup = server.startup

    async def startup_and_print(sockets=None):
        await startup(sockets=sockets)
        for s in server.servers:
            for sock in s.sockets:
                port = sock.getsockname()[1]
                shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
                print(f"caledonia serve: open http://{shown}:{port}/  (Ctrl+C stops)", flush=True)
                return
    server.startup = startup_and_print
