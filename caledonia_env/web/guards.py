"""Limits on what a request may send the web app: its Host header, body size and JSON nesting.

:class:`BodyGuard` reads a request's body before the app does: a body over ``max_bytes``
is a 413, JSON nested deeper than ``max_depth`` a 400 (Python's parser would recurse and
fail with a 500). :func:`allowed_hosts` is the Host-header allow-list that keeps web pages
of other sites out (DNS rebinding), for Starlette's ``TrustedHostMiddleware``.
"""
from __future__ import annotations

import json
import re

import numpy as np

#: JSON nesting accepted (a game record nests 5 levels deep)
MAX_JSON_DEPTH = 32
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


async def _answer(send, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class BodyGuard:
    """ASGI middleware: refuse bodies over ``max_bytes`` (413) and JSON bodies nested
    deeper than ``max_depth`` (400) before the app parses them."""

    def __init__(self, app, max_bytes: int, max_depth: int = MAX_JSON_DEPTH):
        self.app = app
        self.max_bytes = int(max_bytes)
        self.max_depth = int(max_depth)

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
