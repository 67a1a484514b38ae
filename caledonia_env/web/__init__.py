"""``caledonia serve``: watch bot games, replay records and play against the bots in a browser.

Needs the ``web`` extra (FastAPI, uvicorn). ``create_app()`` returns the ASGI app;
``caledonia_env.web.cli`` holds the command. Endpoints: docs/web.md.
"""
from .app import create_app

__all__ = ["create_app"]
