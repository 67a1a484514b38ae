"""Games kept in server memory for the web app: a timeline of positions per game.

A :class:`Session` holds the starting position, every action taken (with who took it
and its name at the time) and the engine state after each one, so stepping back and
forth is a lookup. Seats are agent names (bots, ``caledonia_env.agents.make``) or
``None`` for a human. :class:`Store` keeps at most ``limit`` sessions and evicts the
least recently used one.
"""
from __future__ import annotations

import itertools
import json
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

from ..agents import make as make_agent
from ..config import clan_options
from ..game import Game, GameConfig

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

    def __init__(self, sid: str, start: Game, seats: list, mode: str, seed: int = 0,
                 label: str = ""):
        self.id = sid
        self.mode = mode                  # "watch", "play" or "replay"
        self.label = label
        self.seats = list(seats)          # agent name per seat, "human" for a person
        self.agents = {p: make_agent(name, seed=seed + p) for p, name in enumerate(seats)
                       if name != HUMAN}
        self.start = start.clone()
        self.states = [start.state.copy()]
        self.entries: list[Entry] = []
        self.pos = 0
        self.lock = threading.Lock()

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
        game.step(action)                 # raises IllegalActionError, state unchanged
        self.entries.append(entry)
        self.states.append(game.state.copy())

    def is_human_turn(self, game: Game) -> bool:
        return not game.is_terminal and self.seats[game.current_player] == HUMAN

    # ------------------------------------------------------------- moves
    def bot_move(self, game: Game) -> None:
        self.append(game, self.agents[game.current_player].act(game))

    def bots_reply(self) -> None:
        """Bots play until a human decides or the game ends (play mode)."""
        game = self.game_at(self.end)
        for _ in range(MAX_BOT_MOVES):
            if game.is_terminal or self.is_human_turn(game):
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
        self.pos = self.end
        game = self.game_at(self.end)
        for _ in range(MAX_BOT_MOVES):
            if game.round >= round or game.is_terminal or self.mode == "replay" \
                    or self.is_human_turn(game):
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
        self.pos = self.end

    def to_json(self) -> str:
        return self.game_at(self.end).to_json()


# ----------------------------------------------------------------- creating sessions
def new_session(sid: str, players, clans="draft", map=None, seed: int = 0) -> Session:
    """A bot game or a game against bots: ``players`` lists agent names or ``"human"``."""
    if not isinstance(players, list) or not 1 <= len(players) <= 4 or \
            not all(isinstance(p, str) and p.strip() for p in players):
        raise ValueError(f"players must list 1 to 4 agent names or 'human', got {players!r}")
    seats = [HUMAN if p.strip().lower() == HUMAN else p.strip() for p in players]
    for name in seats:
        if name != HUMAN:
            make_agent(name)              # ValueError naming the allowed agents
    if clans in (None, "", "none"):
        clans = None
    elif isinstance(clans, str) and clans not in ("draft", "auction"):
        clans = [c.strip() for c in clans.split(",")]
    cfg = GameConfig(num_players=len(seats), seed=int(seed), map=map or None,
                     **clan_options(clans), solo=len(seats) == 1)
    mode = "play" if HUMAN in seats else "watch"
    s = Session(sid, Game(cfg), seats, mode, seed=int(seed))
    if mode == "play":
        s.bots_reply()
    return s


def replay_session(sid: str, text: str, label: str = "") -> Session:
    """A replay of a ``Game.to_json`` record; ValueError with a clear reason when it is bad."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the record is empty")
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"the record is not JSON: {e}") from None
    if not isinstance(record, dict) or "actions" not in record or \
            ("config" not in record and "scenario" not in record):
        raise ValueError("not a game record: it needs 'config' (or 'scenario') and 'actions' "
                         "(written by Game.to_json or 'caledonia play --record-dir')")
    try:
        final = Game.from_json(text)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise ValueError(f"invalid game record: {e}") from None
    start = Game.from_scenario(final.scenario) if final.scenario is not None else Game(final.config)
    names = record.get("agents") or record.get("players")
    n = start.num_players
    seats = [str(x) for x in names] if isinstance(names, list) and len(names) == n \
        else [f"player {p}" for p in range(n)]
    s = Session(sid, start, [HUMAN] * n, "replay", label=label)
    s.seats = seats
    game = start.clone()
    for a in final.history:
        s.append(game, a)
    return s


class Store:
    """Sessions by id, at most ``limit`` of them (least recently used evicted first)."""

    def __init__(self, limit: int = 32):
        if not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive int, got {limit!r}")
        self.limit = limit
        self._items: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()
        self._counter = itertools.count(1)

    def new_id(self) -> str:
        return f"g{next(self._counter)}-{secrets.token_hex(3)}"

    def add(self, session: Session) -> Session:
        with self._lock:
            self._items[session.id] = session
            while len(self._items) > self.limit:
                self._items.popitem(last=False)
        return session

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
