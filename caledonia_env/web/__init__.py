"""``caledonia serve``: watch bot games, replay records and play against the bots in a browser;
the study reports of a folder (``web.reports``).

Needs the ``web`` extra (FastAPI, uvicorn), imported only when the app is made, so the
``caledonia`` command works without it. Endpoints: docs/web.md.
"""


def create_app(limit: int = 32, **options):
    """The ASGI app (FastAPI); ``limit`` games are kept in memory; ``options`` as
    :func:`caledonia_env.web.app.create_app` (agent menu, Host names, rulesets)."""
    from caledonia_env.web.app import create_app as _create_app     # fastapi: the optional web extra
    return _create_app(limit, **options)


__all__ = ["create_app"]
