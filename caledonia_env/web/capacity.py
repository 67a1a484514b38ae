"""How much bot work the web app runs at once, and the server's stop flag.

Bot moves run in worker threads (FastAPI's thread pool); the search kernels release the
GIL (``nogil``), so the event loop keeps answering while they run. :class:`BotSlots` caps
the requests whose bots are playing at the same time (default: the usable cores): a request
that needs a bot move when every slot is taken is refused with :class:`Busy` (a ``429``),
before anything of its game changes. ``stopping`` is set when the server shuts down: bot
play ends at the next decision and no new bot play starts.
"""
from __future__ import annotations

import math
import os
import threading
import time


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:          # not Linux
        return max(1, os.cpu_count() or 1)


class Busy(Exception):
    """No bot slot is free (or the server is stopping): a 429 (503) with ``retry_after``."""

    def __init__(self, message: str, retry_after: int, status: int = 429):
        super().__init__(message)
        self.retry_after = int(retry_after)
        self.status = status


class BotSlots:
    """At most ``size`` requests play bot moves at once; ``budget`` (seconds: a request's
    bot-play budget) estimates when a slot frees for the ``Retry-After`` of a refusal."""

    def __init__(self, size: int | None = None, budget: float = 10.0):
        size = usable_cores() if size is None else size
        if type(size) is not int or size < 1:
            raise ValueError(f"the bot slots must be an int >= 1, got {size!r}")
        self.size = size
        self.budget = float(budget)
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._started: dict[int, float] = {}        # ticket -> when it took its slot
        self._tickets = 0

    def take(self) -> int:
        """A slot's ticket; :class:`Busy` when all are taken or the server is stopping."""
        if self.stopping.is_set():
            raise Busy("the server is shutting down: no new bot moves are played", 5, 503)
        with self._lock:
            if len(self._started) >= self.size:
                now = time.monotonic()
                oldest = min(self._started.values())
                wait = max(1, math.ceil(self.budget - (now - oldest)))
                raise Busy(f"busy: the server's {self.size} bot slot(s) are all playing "
                           f"other games' moves; retry in about {wait} s", wait)
            self._tickets += 1
            self._started[self._tickets] = time.monotonic()
            return self._tickets

    def give(self, ticket: int) -> None:
        with self._lock:
            self._started.pop(ticket, None)

    def in_use(self) -> int:
        with self._lock:
            return len(self._started)

    def work(self) -> "Work":
        return Work(self)


class Work:
    """One request's bot play: takes a slot at its first bot move (:meth:`need`), gives it
    back on exit; ``stopping`` tells the session to end bot play early."""

    def __init__(self, slots: BotSlots):
        self.slots = slots
        self._ticket = None

    def need(self) -> None:
        if self._ticket is None:
            self._ticket = self.slots.take()

    @property
    def stopping(self) -> bool:
        return self.slots.stopping.is_set()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._ticket is not None:
            self.slots.give(self._ticket)
            self._ticket = None
