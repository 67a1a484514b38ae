"""Games kept in server memory for the web app: a timeline of positions per game.

A :class:`Session` holds the starting position, every action taken (with who took it
and its name at the time) and the engine state after each one, so stepping back and
forth is a lookup. Seats are agent names (bots built by the server's
:class:`~caledonia_env.web.seats.AgentMenu`, ``automa:LEVEL`` seats played by the engine,
A-0) or ``"human"``. Bot play within one request stops at the first decision that ends past
the menu's ``step_seconds`` or when the server stops (``Session.notice`` says so); a
request's first bot move takes a slot of the server's bot work
(:class:`~caledonia_env.web.capacity.Work`), before anything of the game changes.
:class:`Store` keeps at most ``limit`` sessions; past it the least recently used game of
the client holding the most games is evicted (a client: the remote address).
"""
from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from caledonia_env.agents import automa_seats
from caledonia_env.config import CLAN_CHOICES, clan_options
from caledonia_env.game import Game, GameConfig
from caledonia_env.web.guards import shown
from caledonia_env.web.seats import AgentMenu
from caledonia_env.web.uploads import parse_upload

HUMAN = "human"
#: Bot moves played in one request at most (guards a runaway loop; a game is a few hundred).
MAX_BOT_MOVES = 5000


@dataclass(frozen=True)
class Entry:
    """One decision of the timeline."""
    action: int
    player: int
    name: str
    round: int
    context: str


class Session:
    """One game: its seats, its timeline and the position being viewed (``pos``)."""

    def __init__(self, sid: str, start: Game, seats: list, mode: str, agents=None,
                 label: str = "", step_seconds: float = 10.0, warnings=()):
        self.id = sid
        self.mode = mode                  # "watch", "play" or "replay"
        self.label = label
        self.seats = list(seats)          # agent name per seat, "human" for a person
        self.agents = dict(agents or {})  # seat -> Agent for the seats bots play
        self.start = start.clone()
        self.states = [start.state.copy()]
        self.entries: list[Entry] = []
        self.events = [_event(e, 0) for e in start.automa_events]    # Automa turns
        self.pos = 0
        self.lock = threading.Lock()
        self.step_seconds = float(step_seconds)
        self.warnings = list(warnings)    # shown with every view (a record without checksum)
        self.notice = None                # what stopped the last request's bot play early
        self._deadline = None
        self._moves = 0
        self._work = None
        self.client = ""                  # who started it (the Store's per-client share)

    # ------------------------------------------------------------- time budget
    def begin_request(self, work=None) -> None:
        """Start the bot-play budget of one request (``step_seconds``); ``work``: the
        request's :class:`~caledonia_env.web.capacity.Work` (None: no cap, no stop flag)."""
        self.notice = None
        self._deadline = time.monotonic() + self.step_seconds
        self._moves = 0
        self._work = work

    def end_request(self) -> None:
        """Forget the request's bot work (its slot is given back by its owner)."""
        self._work = None

    def out_of_time(self) -> bool:
        """True (and ``notice`` set) once this request's bots played past its budget or
        the server stops; never before one bot move, so every request makes progress."""
        if self._moves and self._work is not None and self._work.stopping:
            self.notice = (f"the bots played {self._moves} decision(s); the server is "
                           f"shutting down")
            return True
        if self._deadline is None or not self._moves or time.monotonic() <= self._deadline:
            return False
        self.notice = (f"the bots played {self._moves} decision(s) and used this request's "
                       f"{self.step_seconds:g} s budget: step again to go on")
        return True

    # ------------------------------------------------------------- positions
    @property
    def end(self) -> int:
        return len(self.entries)

    def game_at(self, i: int | None = None) -> Game:
        i = self.pos if i is None else i
        g = self.start.clone()
        g.state[:] = self.states[i]
        g.history = list(self.start.history) + [e.action for e in self.entries[:i]]
        return g

    def append(self, game: Game, action: int) -> None:
        """Apply ``action`` to ``game`` (the position at the end) and record it."""
        entry = Entry(int(action), game.current_player, game.describe_action(action),
                      game.round, game.context)
        seen = len(game.automa_events)
        game.step(action)                 # raises IllegalActionError, state unchanged
        self.entries.append(entry)
        self.states.append(game.state.copy())
        self.events += [_event(e, len(self.entries)) for e in game.automa_events[seen:]]

    def is_human_turn(self, game: Game) -> bool:
        return not game.is_terminal and self.seats[game.current_player] == HUMAN

    # ------------------------------------------------------------- moves
    def need_bot_slot(self) -> None:
        """Take this request's slot of bot work (Busy when none is free)."""
        if self._work is not None:
            self._work.need()

    def bot_move(self, game: Game) -> None:
        self.need_bot_slot()
        self.append(game, self.agents[game.current_player].act(game))
        self._moves += 1

    def bots_reply(self) -> None:
        """Bots play until a human decides, the game ends or the request's time is up."""
        game = self.game_at(self.end)
        for _ in range(MAX_BOT_MOVES):
            if game.is_terminal or self.is_human_turn(game) or self.out_of_time():
                break
            self.bot_move(game)
        self.pos = self.end

    def step(self, delta: int) -> None:
        """Move ``delta`` decisions; past the end of a bot game the bots play on. Stops at
        the end (game over, end of a record, a human's decision); an error if it cannot move."""
        target = self.pos + int(delta)
        if target < 0:
            raise ValueError("already at the first position")
        reason = None
        while target > self.end and reason is None:
            game = self.game_at(self.end)
            if game.is_terminal:
                reason = "the game is over: no next decision"
            elif self.mode == "replay":
                reason = "end of the record: no next decision"
            elif self.is_human_turn(game):
                reason = f"player {game.current_player} (you) decides: choose an action"
            elif self.out_of_time():
                break
            else:
                self.bot_move(game)
        if reason is not None and self.pos == self.end:
            raise ValueError(reason)
        self.pos = min(target, self.end)

    def goto(self, position: int | None = None, round: int | None = None) -> None:
        """Jump to a position, or to the first decision of ``round`` (bots play on to reach it)."""
        if position is not None:
            if not 0 <= position <= self.end:
                raise ValueError(f"position must be in 0..{self.end}, got {position}")
            self.pos = position
            return
        for i in range(self.end + 1):
            if self.round_at(i) >= round:
                self.pos = i
                return
        game = self.game_at(self.end)
        for _ in range(MAX_BOT_MOVES):
            if game.round >= round or game.is_terminal or self.mode == "replay" \
                    or self.is_human_turn(game) or self.out_of_time():
                break
            self.bot_move(game)
        self.pos = self.end

    def round_at(self, i: int) -> int:
        return self.entries[i].round if i < self.end else self.game_at(i).round

    def act(self, action: int) -> None:
        """A human's action at the latest position; then the bots reply."""
        if self.mode == "replay":
            raise ValueError("a replay cannot be changed; start a game to play")
        if self.pos != self.end:
            raise ValueError(f"you are viewing decision {self.pos} of {self.end}: go to the "
                             f"latest position to act")
        game = self.game_at(self.end)
        if not self.is_human_turn(game):
            raise ValueError("it is not a human player's decision")
        if self.agents:
            self.need_bot_slot()          # before the action, so a refusal changes nothing
        self.append(game, action)
        self.bots_reply()

    def undo(self) -> None:
        """Take back the last human decision and the bot moves after it."""
        if self.mode == "replay":
            raise ValueError("a replay has no human decisions to undo")
        humans = [i for i, e in enumerate(self.entries) if self.seats[e.player] == HUMAN]
        if not humans:
            raise ValueError("nothing to undo: no human decision yet")
        cut = humans[-1]
        del self.entries[cut:]
        del self.states[cut + 1:]
        self.events = [e for e in self.events if e["after"] <= cut]
        self.pos = self.end

    def to_json(self) -> str:
        return self.game_at(self.end).to_json()


# ----------------------------------------------------------------- creating sessions
def _event(event: dict, after: int) -> dict:
    """An Automa turn for the view: after how many decisions of the timeline, who, what."""
    return {"after": after, "player": int(event["player"]), "text": event["text"]}


def new_session(sid: str, players, clans="draft", map=None, seed: int = 0,
                menu: AgentMenu | None = None, work=None) -> Session:
    """A bot game or a game against bots: ``players`` lists agent names of ``menu`` (the
    server's agents), ``"automa:LEVEL"`` or ``"human"``; ``work``: the request's bot work
    (the bots play up to the first human decision)."""
    menu = menu or AgentMenu()
    if not isinstance(players, list) or not 1 <= len(players) <= 4 or \
            not all(isinstance(p, str) and p.strip() for p in players):
        raise ValueError(f"players must list 1 to 4 agent names or 'human', got {shown(players)}")
    seats = [HUMAN if p.strip().lower() == HUMAN else menu.check(p) for p in players]
    if clans in (None, "", "none"):
        clans = None
    elif isinstance(clans, str) and clans not in CLAN_CHOICES:
        clans = [c.strip() for c in clans.split(",")]
    cfg = GameConfig(num_players=len(seats), seed=int(seed), map=map or None,
                     **clan_options(clans), solo=len(seats) == 1,
                     automa=automa_seats(seats) or None)
    bots = {p: menu.make(name, len(seats), seed=int(seed) + p) for p, name in enumerate(seats)
            if name != HUMAN and not (cfg.automa and p in cfg.automa)}
    mode = "play" if HUMAN in seats else "watch"
    s = Session(sid, Game(cfg), seats, mode, agents=bots,
                step_seconds=menu.limits.step_seconds)
    if mode == "play":
        s.begin_request(work)
        s.bots_reply()
    return s


def replay_session(sid: str, text: str, label: str = "", rulesets=()) -> Session:
    """A replay of a ``Game.to_json`` record; ValueError with a clear reason when it is
    bad (:func:`~caledonia_env.web.uploads.parse_upload`: no ruleset path, bounded nesting)."""
    record, warnings = parse_upload(text, rulesets)
    try:
        final = Game.from_json(record)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, OverflowError) as e:
        raise ValueError(f"invalid game record: {e}") from None
    start = Game.from_scenario(final.scenario) if final.scenario is not None else Game(final.config)
    names = record.get("agents") or record.get("players")
    n = start.num_players
    seats = [str(x) for x in names] if isinstance(names, list) and len(names) == n \
        else [f"player {p}" for p in range(n)]
    s = Session(sid, start, [HUMAN] * n, "replay", label=label, warnings=warnings)
    s.seats = seats
    game = start.clone()
    for a in final.history:
        s.append(game, a)
    return s


class Store:
    """Sessions by id, at most ``limit`` of them. Past the limit, the least recently used
    game of the client holding the most games goes (:meth:`add`): a client pushes out
    another's game only when that one holds at least as many as it does, so a client keeps
    its fair share of the limit whatever the others do; one client alone is plain LRU."""

    def __init__(self, limit: int = 32):
        if not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive int, got {limit!r}")
        self.limit = limit
        self._items: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()
        self._counter = itertools.count(1)

    def new_id(self) -> str:
        return f"g{next(self._counter)}-{secrets.token_hex(3)}"

    def add(self, session: Session, client: str = "") -> Session:
        """Keep ``session`` as a game of ``client`` (evicting as the class says)."""
        session.client = client
        with self._lock:
            self._items[session.id] = session
            while len(self._items) > self.limit:
                del self._items[self._victim()]
        return session

    def _victim(self) -> str:
        """The least recently used game of the client with the most games."""
        counts: dict[str, int] = {}
        for s in self._items.values():
            counts[s.client] = counts.get(s.client, 0) + 1
        most = max(counts.values())
        return next(sid for sid, s in self._items.items() if counts[s.client] == most)

    def held_by(self, client: str) -> int:
        with self._lock:
            return sum(s.client == client for s in self._items.values())

    def get(self, sid: str) -> Session:
        with self._lock:
            if sid not in self._items:
                raise KeyError(sid)
            self._items.move_to_end(sid)
            return self._items[sid]

    def remove(self, sid: str) -> None:
        with self._lock:
            self._items.pop(sid, None)

    def __len__(self):
        return len(self._items)

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._items)
