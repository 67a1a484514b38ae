"""How much bot work the web app runs at once, and the server's stop flag.

Bot moves run in worker threads (FastAPI's thread pool); the search kernels release the
GIL (``nogil``), so the event loop keeps answering while they run. :class:`BotSlots` caps
the requests whose bots are playing at the same time (default: the usable cores), and
keeps free slots for the clients holding fewer of them: a request that needs a bot move
when every slot is taken, or when its client would take a slot another client holding
fewer still may ask for, is refused with :class:`Busy` (a ``429``), before anything of its
game changes. ``stopping`` is set when the server shuts down: bot play ends at the next
decision and no new bot play starts.
"""
from __future__ import annotations

import math
import os
import threading
import time
from collections import Counter


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
    bot-play budget) estimates when a slot frees for the ``Retry-After`` of a refusal.

    Each client (the web app's ``client_of``: the remote address, as for the share of the
    games) gets its share, in the spirit of the games' :class:`~caledonia_env.web.sessions.
    Store`: a client holding ``k`` slots takes a free one only if the free slots left still
    give one to every other client *using the bots* that holds fewer than ``k``. So the
    client holding the fewest slots always gets a free one, one client alone may use every
    slot (the usual case: every tab on the server's own machine is one client), and C
    clients asking at once end up with ``size / C`` each, give or take one. A client uses
    the bots while it holds a slot and for ``2 × budget`` (at least 2 s) after it last asked
    for or gave back one: a refused client, told to retry within one budget, finds its slot
    kept.
    ``clock``: the time source (seconds, monotonic)."""

    def __init__(self, size: int | None = None, budget: float = 10.0, clock=time.monotonic):
        size = usable_cores() if size is None else size
        if type(size) is not int or size < 1:
            raise ValueError(f"the bot slots must be an int >= 1, got {size!r}")
        self.size = size
        self.budget = float(budget)
        self.window = 2 * max(1.0, self.budget)    # a Retry-After is >= 1 s
        self.stopping = threading.Event()
        self._clock = clock
        self._lock = threading.Lock()
        self._started: dict[int, tuple[str, float]] = {}   # ticket -> (client, when taken)
        self._seen: dict[str, float] = {}                  # client -> when it last asked/gave
        self._tickets = 0

    def take(self, client: str = "") -> int:
        """A slot's ticket for ``client``; :class:`Busy` when all are taken, when the free
        ones are kept for clients holding fewer, or when the server is stopping."""
        if self.stopping.is_set():
            raise Busy("the server is shutting down: no new bot moves are played", 5, 503)
        with self._lock:
            now = self._clock()
            self._seen[client] = now
            self._seen = {c: t for c, t in self._seen.items() if now - t <= self.window}
            held = Counter(c for c, _ in self._started.values())
            free = self.size - len(self._started)
            if free == 0:
                wait = self._wait(now, self._started.values())
                raise Busy(f"busy: the server's {self.size} bot slot(s) are all playing "
                           f"other games' moves; retry in about {wait} s", wait)
            mine = held[client]
            behind = sum(held[c] < mine for c in set(self._seen) | set(held) if c != client)
            if free - 1 < behind:
                wait = self._wait(now, [v for v in self._started.values() if v[0] == client])
                raise Busy(f"busy: your requests already play bot moves in {mine} of the "
                           f"server's {self.size} bot slot(s), your share while other "
                           f"clients use the bots; the free one(s) are kept for them; "
                           f"retry in about {wait} s", wait)
            self._tickets += 1
            self._started[self._tickets] = (client, now)
            return self._tickets

    def _wait(self, now: float, running) -> int:
        """Seconds until the oldest of ``running`` (client, start) reaches its budget."""
        oldest = min(t for _, t in running)
        return max(1, math.ceil(self.budget - (now - oldest)))

    def give(self, ticket: int) -> None:
        with self._lock:
            taken = self._started.pop(ticket, None)
            if taken is not None:
                self._seen[taken[0]] = self._clock()

    def in_use(self) -> int:
        with self._lock:
            return len(self._started)

    def work(self, client: str = "") -> "Work":
        return Work(self, client)


class Work:
    """One request's bot play, for ``client``: takes a slot at its first bot move
    (:meth:`need`), gives it back on exit; ``stopping`` tells the session to end bot play
    early."""

    def __init__(self, slots: BotSlots, client: str = ""):
        self.slots = slots
        self.client = client
        self._ticket = None

    def need(self) -> None:
        if self._ticket is None:
            self._ticket = self.slots.take(self.client)

    @property
    def stopping(self) -> bool:
        return self.slots.stopping.is_set()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._ticket is not None:
            self.slots.give(self._ticket)
            self._ticket = None
