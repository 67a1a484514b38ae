"""Limits on what a request may send the web app: its Host header, body size, JSON nesting
and the time its body takes; and a clean answer when the server stops mid-request.

:class:`BodyGuard` reads a request's body before the app does: a body over ``max_bytes``
is a 413, JSON nested deeper than ``max_depth`` a 400 (Python's parser would recurse and
fail with a 500), a body not all there within ``body_seconds`` a 408 (the connection is
closed). :class:`ShutdownGuard` answers a request that the server's shutdown cut short with
a 503 instead of a CancelledError traceback. :func:`allowed_hosts` is the Host-header
allow-list that keeps web pages of other sites out (DNS rebinding), for Starlette's
``TrustedHostMiddleware``.
"""
from __future__ import annotations

import asyncio
import json
import re

import anyio
import numpy as np

#: JSON nesting accepted (a game record nests 5 levels deep)
MAX_JSON_DEPTH = 32
#: Seconds a request's body may take to arrive, from the end of its headers.
BODY_SECONDS = 10.0
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[^\[\]{}]+")


def json_depth(data) -> int:
    """The deepest nesting of ``[`` / ``{`` in JSON text (str or bytes), strings skipped.
    Linear time and no recursion, so it can run before a parser that recurses."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    brackets = _BRACKETS.sub(b"", _STRING.sub(b"", data))
    if not brackets:
        return 0
    step = np.frombuffer(brackets, np.uint8)
    depth = np.cumsum(np.where((step == ord("[")) | (step == ord("{")), 1, -1))
    return int(depth.max())


def shown(value, limit: int = 60) -> str:
    """``repr(value)`` for an error message, cut to about ``limit`` characters (a string
    keeps its quotes)."""
    if isinstance(value, str):
        return repr(value if len(value) <= limit else value[:limit - 1] + "…")
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def check_depth(text, what: str, max_depth: int = MAX_JSON_DEPTH) -> None:
    """ValueError when ``text`` nests deeper than ``max_depth``."""
    depth = json_depth(text)
    if depth > max_depth:
        raise ValueError(f"{what} nests JSON {depth} levels deep; at most {max_depth} are "
                         f"accepted")


def allowed_hosts(bound: str | None = None, extra=()) -> list[str]:
    """Host names the server answers to: this machine's names, the address it binds
    (unless a wildcard such as 0.0.0.0) and ``extra`` (``--allowed-host``). IPv6
    literals are listed as Host headers carry them, in brackets."""
    names = list(LOCAL_HOSTS)
    if bound and bound not in ("0.0.0.0", "::", "[::]"):
        names.append(bound)
    for name in extra:
        if not isinstance(name, str) or not name.strip() or "/" in name or " " in name.strip():
            raise ValueError(f"an allowed host is a host name or address, got {name!r}")
        names.append(name.strip())
    out = []
    for name in names:
        name = name.lower()
        if ":" in name and not name.startswith("["):
            name = f"[{name}]"
        if name not in out:
            out.append(name)
    return out


async def _answer(send, status: int, detail: str, close: bool = False) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status,
                "headers": headers + ([(b"connection", b"close")] if close else [])})
    await send({"type": "http.response.body", "body": body})


class BodyGuard:
    """ASGI middleware: refuse bodies over ``max_bytes`` (413), JSON bodies nested
    deeper than ``max_depth`` (400) before the app parses them, and bodies that do not
    arrive within ``body_seconds`` (408, connection closed)."""

    def __init__(self, app, max_bytes: int, max_depth: int = MAX_JSON_DEPTH,
                 body_seconds: float = BODY_SECONDS):
        self.app = app
        self.max_bytes = int(max_bytes)
        self.max_depth = int(max_depth)
        self.body_seconds = float(body_seconds)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = f"the request body is larger than {self.max_bytes} bytes"
        length = dict(scope.get("headers", ())).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            await _answer(send, 413, too_big)
            return
        chunks, size, more = [], 0, True
        with anyio.move_on_after(self.body_seconds):
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > self.max_bytes:
                    await _answer(send, 413, too_big)
                    return
                chunks.append(chunk)
                more = message.get("more_body", False)
        if more:
            await _answer(send, 408, f"the request body did not arrive within "
                                     f"{self.body_seconds:g} s (got {size} bytes)", close=True)
            return
        body = b"".join(chunks)
        try:
            check_depth(body, "the request body", self.max_depth)
        except ValueError as e:
            await _answer(send, 400, str(e))
            return
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class ShutdownGuard:
    """ASGI middleware: a request the server's shutdown cancels (its graceful wait ran
    out) is answered ``503`` with a JSON reason, not a CancelledError traceback."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except asyncio.CancelledError:
            if not started:
                await _answer(send, 503, "the server is shutting down: this request was cut "
                                         "short (its game may have moved on)", close=True)
