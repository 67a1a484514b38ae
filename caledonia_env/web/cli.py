"""``caledonia serve``: run the web app (docs/web.md) with uvicorn."""
from __future__ import annotations

import argparse

SERVE_EXAMPLES = """examples:
  caledonia serve                       # http://127.0.0.1:8000/
  caledonia serve --port 8080 --games 64
  caledonia serve --host 0.0.0.0        # reachable from other machines (no authentication!)
"""


def add_serve_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``serve`` subcommand to an argparse ``subparsers`` object."""
    p = subparsers.add_parser(
        "serve", help="browser app: watch bot games, replay records, play against the bots",
        description="Serve the web app: watch bot games, replay game records and play "
                    "against the bots in a browser (needs the web extra: pip install "
                    "'caledonia-env[web]').",
        epilog=SERVE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 = any free)")
    p.add_argument("--games", type=int, default=32,
                   help="games kept in memory; the least recently used is dropped (default 32)")
    p.set_defaults(func=cmd_serve)
    return p


def cmd_serve(args) -> int:
    """Start uvicorn; returns the exit code (2 for bad options or a missing extra)."""
    import sys
    if not 0 <= args.port <= 65535:
        print(f"caledonia serve: --port must be in 0..65535, got {args.port}", file=sys.stderr)
        return 2
    if args.games < 1:
        print(f"caledonia serve: --games must be >= 1, got {args.games}", file=sys.stderr)
        return 2
    try:
        import uvicorn

        from . import create_app
    except ImportError as e:
        print(f"caledonia serve: needs the web extra ({e.name} is missing): "
              f"pip install 'caledonia-env[web]'", file=sys.stderr)
        return 2
    config = uvicorn.Config(create_app(limit=args.games), host=args.host, port=args.port,
                            log_level="warning")
    server = uvicorn.Server(config)
    _announce(server, args.host)
    server.run()
    return 0


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
