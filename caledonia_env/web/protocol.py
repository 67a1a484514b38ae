"""uvicorn's HTTP/1.1 protocol (h11) with a deadline on a request's headers.

uvicorn closes an idle keep-alive connection, but one that sends half its headers (or
nothing) stays open as long as the client likes. :class:`HeaderTimeoutProtocol` closes a
connection whose request headers are not complete ``header_seconds`` after the connection
opened or the previous response ended and its first byte arrived. The body's own deadline
is :class:`~caledonia_env.web.guards.BodyGuard`'s. Needs uvicorn (the web extra).
"""
from __future__ import annotations

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a client has to send a request's headers.
HEADER_SECONDS = 10.0


class HeaderTimeoutProtocol(H11Protocol):
    """``H11Protocol`` that closes a connection still waiting for request headers after
    ``header_seconds`` (class attribute; :func:`with_header_timeout` makes a variant)."""

    header_seconds = HEADER_SECONDS

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._header_timer = None
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self.conn.their_state is h11.IDLE:
            self._arm()               # a keep-alive connection's next request begins
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()            # headers complete

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_seconds, self._headers_late)

    def _disarm(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.logger.info("closing a connection whose request headers took over %g s",
                             self.header_seconds)
            self.transport.close()


def with_header_timeout(seconds: float) -> type:
    """A :class:`HeaderTimeoutProtocol` subclass with ``header_seconds = seconds``."""
    if not seconds > 0:
        raise ValueError(f"the header timeout must be > 0 seconds, got {seconds!r}")
    return type("HeaderTimeoutProtocol", (HeaderTimeoutProtocol,), {"header_seconds": seconds})
