"""The public Python API over the numba engine (OpenSpiel-like vocabulary)."""
from __future__ import annotations

import json
from functools import lru_cache

import numpy as np

from caledonia_env.config import GameConfig, MODULES
from caledonia_env.data import load_ruleset
from caledonia_env.data.names import PORTS
from caledonia_env.engine import layout as L
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine.automa.events import read_events
from caledonia_env.engine.actions import A_PORT, A_START_PICK, MASK_WIDTH, N_ACTIONS, action_names, parse_name
from caledonia_env.engine.api import APPLIED, GAME_OVER, LEGAL_IDS, LEGAL_MASK, game_call
from caledonia_env.engine.constants import (CLAN_NAMES, CONTEXT_NAMES, GOOD_NAMES, IMPORT_NAMES, MAX_START_PICKS,
                               N_CORNERS, UNIT_NAMES)
from caledonia_env.engine.compile.helper import engine_first_compile
from caledonia_env.engine.setup import new_game_log as _new_game
from caledonia_env.engine.step import apply_action as _apply_action
from caledonia_env.engine.tables.build import Variants, build_tables
from caledonia_env.map import build_board
from caledonia_env.records import (RecordError, Verifier, make_record, read_record, step_digest,
                      upgrade_setup)
from caledonia_env.render_text import render_text as _render_text
from caledonia_env.scenario import ScenarioError, scenario_config, to_scenario, write_scenario

_new = object.__new__
_S_AM_NLOG = L.S_AM_NLOG
PORT_TILE_NAMES = PORTS           # printed tile numbers, engine tile order
TILE_NAMES = tuple(f"T{i}" for i in range(1, 10))


class IllegalActionError(ValueError):
    """An action id that is not legal in the pending decision."""


def action_id(action) -> int:
    """One action id as an int, checked the same way by ``Game.step`` and every env.

    Accepts a Python ``int``, a NumPy integer scalar or a 0-d integer array (what
    ``model.predict`` returns for one observation). Rejects with a TypeError naming the
    type: ``bool``/``np.bool_``, floats, strings, None, lists and arrays with a
    dimension (even of size 1: a batch belongs to the vector env). An id outside
    ``0..N_ACTIONS-1`` raises :class:`IllegalActionError` (a ValueError).
    """
    t = type(action)
    if t is int or t is np.int64:                      # fast path, same checks
        a = int(action)
        if 0 <= a < N_ACTIONS:
            return a
        raise IllegalActionError(f"action id {a} is outside 0..{N_ACTIONS - 1}")
    if isinstance(action, np.ndarray) and action.ndim == 0 and action.dtype.kind in "iu":
        action = action[()]
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        shape = f" of shape {action.shape}" if isinstance(action, np.ndarray) else ""
        raise TypeError(f"an action id must be an int or a NumPy integer scalar, got "
                        f"{type(action).__name__}{shape} {action!r}")
    a = int(action)
    if not 0 <= a < N_ACTIONS:
        raise IllegalActionError(f"action id {a} is outside 0..{N_ACTIONS - 1}")
    return a


def action_ids(actions, num: int) -> np.ndarray:
    """A batch of ``num`` action ids (vector env) as int64, one per env: an integer array
    (or a list of ints) of shape ``(num,)``; bool, float, string or object arrays raise a
    TypeError (shape ``(num, 1)``, or a scalar when ``num == 1``, is accepted too).
    Range and legality are checked per env by the caller."""
    arr = np.asarray(actions)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"actions must be integer action ids (one per env), got an array of "
                        f"dtype {arr.dtype} from {type(actions).__name__}")
    if arr.ndim == 2 and arr.shape[1] == 1 or arr.ndim == 0 and num == 1:
        arr = arr.reshape(-1)
    if arr.shape != (num,):
        raise ValueError(f"expected {num} actions (shape ({num},)), got shape {arr.shape}")
    return arr.astype(np.int64, copy=False)


class Static:
    """Everything fixed for a game setup: ruleset, board, engine tables, action names."""

    def __init__(self, ruleset, board, num_players, variants):
        self.ruleset = ruleset
        self.board = board
        self.num_players = num_players
        self.variants = variants
        self.tables = build_tables(ruleset, board, num_players, variants)
        self.automa_switch = automa_switch(self.tables)     # the engine's ``automa`` argument
        self.names = action_names(board.labels)
        self.index = {n.lower(): i for i, n in enumerate(self.names)}


@lru_cache(maxsize=None)
def _ruleset(path):
    return load_ruleset(path)


@lru_cache(maxsize=128)
def _cached_static(ruleset_path, sides, num_players, variants) -> Static:
    rs = _ruleset(ruleset_path)
    board = build_board(sides, num_players=num_players, sides=rs.maps or None)
    return Static(rs, board, num_players, variants)


def static_tables(config: GameConfig, sides=None) -> Static:
    """The :class:`Static` of ``config`` (ruleset, board, engine tables, action names) on the
    module sides ``sides`` (labels such as ``("A1", "B2", "C1", "D2")``; default
    ``config.map``, required when the config draws its map from the seed; a side the
    ruleset carries, :attr:`Ruleset.maps`, replaces the bundled one). Every game of
    the same setup shares one, cached; the seed and the first player do not enter it."""
    sides = config.map if sides is None else tuple(sides)
    if sides is None:
        raise ValueError("static_tables: config.map is None (drawn per seed): give the sides")
    return _cached_static(config.ruleset, sides, config.num_players, _variants(config))


def _variants(config: GameConfig) -> Variants:
    return Variants(ports=config.ports, scoring_tiles=config.scoring_tiles,
                    static_imports=config.variant_static_imports,
                    kickstarter_tiles=config.kickstarter_tiles,
                    clan_mode=config.clan_mode,
                    fixed_clans=config.clans if isinstance(config.clans, tuple) else (),
                    kickstarter_clan=config.kickstarter_clan, solo=config.solo,
                    smaller_map=config.smaller_map,
                    covered_hexes=config.covered_hexes or (),
                    automa=config.automa_levels(),
                    automa_data=config.ruleset if config.automa else None,
                    price_shift_exact=config.interp_price_shift_exact,
                    retrieve_buy_side=config.interp_retrieve_buy_side,
                    export_min_contracts=config.interp_export_min_contracts,
                    swap_bonuses=config.interp_swap_bonuses,
                    solo_imports=config.interp_solo_imports,
                    buchanan=config.interp_buchanan, cellar=config.interp_cellar,
                    import_rarity=config.interp_import_rarity)


class Game:
    """One game of Clans of Caledonia. See README for the 30-second example."""

    scenario = None      # set by from_scenario: the starting position
    _mask = None         # scratch of legal_actions/step, made by _scratch()
    _log = None          # Automa event log of the last engine call (engine/layout.py)

    def __init__(self, config: GameConfig | None = None, **kwargs):
        if config is None:
            config = GameConfig(**kwargs)
        elif kwargs:
            raise TypeError("pass either a GameConfig or keyword options, not both")
        self.config = config
        rng = np.random.default_rng(config.seed)
        drawn = tuple(f"{m}{int(rng.integers(1, 3))}" for m in MODULES)
        self.map = config.map or drawn
        self.static = static_tables(config, self.map)
        self.state = np.zeros(L.STATE_SIZE, np.int32)
        self._log = np.zeros(L.AM_LOG_SIZE, np.int32)
        first = -1 if config.first_player is None else config.first_player
        engine_first_compile(self.tables, self.static.automa_switch)   # a cold cache: 2 cores
        _new_game(self.state, self.tables, int(rng.integers(1, 2**31 - 2)), first, self._log,
                  self.static.automa_switch)
        self._hist, self._nhist = None, 0
        #: Automa turns (A-3), each a dict with ``after`` (actions applied before it) and
        #: ``text``; a tuple, shared by clones until one of them adds an event
        self.automa_events: tuple[dict, ...] = tuple(
            read_events(self.state, self._log, self.board.labels, 0))

    # ------------------------------------------------------------ basics
    @property
    def history(self) -> list[int]:
        """The action ids applied so far, oldest first (a new list on every call).

        Kept as a chain of immutable ``(previous, action)`` pairs, so ``clone()`` and
        ``step()`` cost the same at any point of the game; ``move_number`` is its length.
        Assigning a list of ids replaces the record only, never the state."""
        out = [0] * self._nhist
        node, i = self._hist, self._nhist
        while node is not None:
            i -= 1
            node, out[i] = node
        return out

    @history.setter
    def history(self, actions) -> None:
        node, n = None, 0
        for a in actions:
            node, n = (node, action_id(a)), n + 1
        self._hist, self._nhist = node, n

    @property
    def move_number(self) -> int:
        """How many actions were applied (``len(history)``, without building the list)."""
        return self._nhist

    @property
    def tables(self) -> np.ndarray:
        return self.static.tables

    @property
    def board(self):
        return self.static.board

    @property
    def ruleset(self):
        return self.static.ruleset

    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def num_actions(self) -> int:
        return N_ACTIONS

    @property
    def current_player(self) -> int:
        """Whose decision it is (-1 once the game is over)."""
        return int(self.state[L.S_PLAYER])

    @property
    def context(self) -> str:
        """Name of the pending decision context."""
        return CONTEXT_NAMES[int(self.state[L.S_CTX])]

    @property
    def round(self) -> int:
        return int(self.state[L.S_ROUND])

    @property
    def is_terminal(self) -> bool:
        return bool(L.game_over(self.state))

    @property
    def static(self) -> Static:
        """Tables, board, ruleset and names of this game's setup (shared between games)."""
        return self._static

    @static.setter
    def static(self, value: Static) -> None:
        self._static = value
        if self._mask is not None:
            self._seen[-1] = 0           # the cached mask belongs to the old tables

    def _scratch(self):
        """The mask, the state it belongs to, an id buffer (see engine/api.py) and, in a
        clone, the Automa event log (a new game keeps the one its setup wrote)."""
        self._mask = np.zeros(MASK_WIDTH, np.int8)
        self._mask_n = self._mask[:N_ACTIONS]           # the part handed out
        self._seen = np.zeros(L.STATE_SIZE + 1, np.int32)
        self._ids = np.empty(N_ACTIONS, np.int64)
        if self._log is None:
            self._log = np.zeros(L.AM_LOG_SIZE, np.int32)
        return self._mask

    def legal_mask(self) -> np.ndarray:
        return self.legal_mask_int8().astype(bool)

    def legal_mask_int8(self) -> np.ndarray:
        """The legal-action mask as a fresh int8 array (what the envs hand out)."""
        mask = self._mask if self._mask is not None else self._scratch()
        game_call(self.state, self._static.tables, mask, self._seen, self._ids, self._log,
                  LEGAL_MASK, self._static.automa_switch)
        return self._mask_n.copy()

    def legal_actions(self) -> np.ndarray:
        """Legal action ids, ascending (int64)."""
        mask = self._mask
        if mask is None:
            mask = self._scratch()
        ids = self._ids
        return ids[:game_call(self.state, self._static.tables, mask, self._seen, ids,
                              self._log, LEGAL_IDS, self._static.automa_switch)].copy()

    def step(self, action) -> None:
        """Apply a legal action id (see :func:`action_id` for the accepted types); raises
        TypeError for a non-integer, IllegalActionError otherwise. A rejected call leaves
        the state unchanged."""
        a = int(action) if type(action) is np.int64 else action    # what legal_actions gives
        if type(a) is not int or not 0 <= a < N_ACTIONS:
            a = action_id(action)                                   # the checks and errors
        mask = self._mask
        if mask is None:
            mask = self._scratch()
        r = game_call(self.state, self._static.tables, mask, self._seen, self._ids, self._log, a,
                      self._static.automa_switch)
        if r != APPLIED:
            self._reject(a, r)
        self._hist = (self._hist, a)
        self._nhist += 1
        if self.state.item(_S_AM_NLOG):
            self.automa_events += tuple(read_events(self.state, self._log, self.board.labels,
                                                    self._nhist))

    def step_mask(self, action) -> np.ndarray | None:
        """:meth:`step`, then the next decision's legal mask as a fresh int8 array, or None
        once the game is over: what an env hands out after each move, read from the same
        engine call as the move (no second call as with ``legal_mask_int8()``)."""
        self.step(action)
        return None if L.game_over(self.state) else self._mask_n.copy()

    def _reject(self, a, r):
        if r == GAME_OVER:
            raise IllegalActionError("the game is over; no action is legal")
        legal = np.flatnonzero(self._mask)
        shown = ", ".join(repr(self.describe_action(x)) for x in legal[:8])
        more = f" … ({len(legal)} legal)" if len(legal) > 8 else ""
        raise IllegalActionError(
            f"action {a} {self.describe_action(a)!r} is not legal for player "
            f"{self.current_player} in context {self.context!r}; legal: {shown}{more}")

    def apply_sequence(self, actions) -> None:
        for a in actions:
            self.step(a)

    # ------------------------------------------------------------ names
    def describe_action(self, action) -> str:
        a = action_id(action)
        name = self.static.names[a]
        if A_PORT <= a < A_PORT + N_CORNERS:
            tile = int(self.state[L.S_PORTS + a - A_PORT])
            if tile >= 0:
                name += f" ({PORT_TILE_NAMES[tile]})"
        elif A_START_PICK <= a < A_START_PICK + MAX_START_PICKS:
            tile = int(self.state[L.S_PICKS + a - A_START_PICK])
            clan = int(self.state[L.S_PICK_CLANS + a - A_START_PICK])
            if tile >= 0:
                name += f" ({CLAN_NAMES[clan] + ', ' if clan >= 0 else ''}S{tile + 1})"
        return name

    def is_automa(self, player: int) -> bool:
        """True for an Automa seat (A-0), which the engine plays itself."""
        return bool(self.config.automa) and player in self.config.automa

    def history_text(self) -> list[str]:
        """Every action and Automa turn in order, as text (A-3 turns prefixed 'automa')."""
        replay = Game(self.config) if self.scenario is None else None
        if replay is None:
            return [str(a) for a in self.history]
        out = [e["text"] for e in replay.automa_events]
        for a in self.history:
            out.append(f"P{replay.current_player}: {replay.describe_action(a)}")
            n = len(replay.automa_events)
            replay.step(a)
            out += [e["text"] for e in replay.automa_events[n:]]
        return out

    def clan(self, player: int):
        """Player's clan name (R-8), or None."""
        c = int(self._player(player, L.P_CLAN)[0])
        return CLAN_NAMES[c] if c >= 0 else None

    def parse_action(self, text: str) -> int:
        return parse_name(text, self.static.index)

    # ------------------------------------------------------------ scores
    def _player(self, p, field, n=1):
        off = L.S_PLAYERS + p * L.P_SIZE + field
        return self.state[off:off + n]

    def score_breakdown(self) -> list[dict]:
        """Per player: glory, goods, money, hops, imports, exports, settlements, auction
        (VP bid, R-9.4, <= 0), total (R-7); solo adds the ``rating`` band (R-9.2)."""
        self._need_terminal()
        out = [dict(zip(L.SCORE_FIELDS, map(int, self._player(p, L.P_SCORE, L.N_SCORE))))
               for p in range(self.num_players)]
        if self.config.solo:
            for b in out:
                b["rating"] = self.ruleset.solo.rating(b["total"])
        return out

    def scores(self) -> np.ndarray:
        """Final VP per player (valid when terminal)."""
        self._need_terminal()
        return np.array([int(self._player(p, L.P_SCORE + L.SCORE_TOTAL)[0])
                         for p in range(self.num_players)])

    def winners(self) -> list[int]:
        """Most VP; ties broken by the money left after buying VP ([interp] R-7), then shared."""
        vp = self.scores()
        per = [int(self.tables[L.T_AM_MONEY_PER_VP]) if self.is_automa(p)
               else self.ruleset.final_scoring.money_per_vp for p in range(self.num_players)]
        key = [(int(vp[p]), int(self._player(p, L.P_MONEY)[0]) % per[p])
               for p in range(self.num_players)]
        best = max(key)
        return [p for p in range(self.num_players) if key[p] == best]

    def returns(self) -> np.ndarray:
        """+1 for a sole winner, ties share; -1 for the others (zero-sum-ish terminal reward)."""
        w = self.winners()
        out = -np.ones(self.num_players)
        out[w] = 1.0 if len(w) == 1 else 0.0
        return out

    def _need_terminal(self):
        if not self.is_terminal:
            raise RuntimeError("scores are final only when the game is over (game.is_terminal)")

    # ------------------------------------------------------------ copies
    def clone(self) -> "Game":
        g = _new(Game)                 # scratch buffers are made on first use
        g.config = self.config
        g.map = self.map
        g._static = self._static
        g.state = self.state.copy()
        g._hist = self._hist           # immutable: shared, never copied
        g._nhist = self._nhist
        if self.scenario is not None:
            g.scenario = self.scenario
        g.automa_events = self.automa_events
        return g

    # ------------------------------------------------------------ scenarios
    @classmethod
    def from_scenario(cls, d: dict) -> "Game":
        """A game at the position a scenario dict describes (docs/scenarios.md); every
        problem is a :class:`~caledonia_env.scenario.ScenarioError` naming the field."""
        game = cls(scenario_config(d))
        write_scenario(game, d)
        return game

    def to_scenario(self) -> dict:
        """The position as a scenario dict (``Game.from_scenario(g.to_scenario())`` equals g)."""
        return to_scenario(self)

    # ------------------------------------------------------------ records
    def to_json(self, agents=None) -> str:
        """The game record (docs/records.md): config (or starting scenario), map, actions,
        optional ``agents`` names (one per player), scores when the game is over, and
        sha256 checksums of the final state and of the state after every action."""
        if agents is not None and len(agents) != self.num_players:
            raise ValueError(f"agents names one agent per player ({self.num_players}), "
                             f"got {len(agents)}")
        replay = self._start()
        actions = self.history
        digests = []
        for a in actions:
            _apply_action(replay.state, replay.tables, a, replay.static.automa_switch)
            digests.append(step_digest(replay.state))
        return json.dumps(make_record(
            config=self.config.to_dict(), map=self.map, fingerprint=self.ruleset.fingerprint(),
            actions=actions, step_digests=digests, final_state=self.state,
            scores=[int(x) for x in self.scores()] if self.is_terminal else None,
            scenario=self.scenario, agents=agents))

    def _start(self) -> "Game":
        return Game(self.config) if self.scenario is None else Game.from_scenario(self.scenario)

    @classmethod
    def record_start(cls, record) -> "Game":
        """The starting position of a record (JSON text or dict, see :func:`read_record`),
        checked against its map and ruleset fingerprint; RecordError otherwise."""
        d = read_record(record)
        setup = upgrade_setup(d)
        try:
            if "scenario" in setup:
                game = cls.from_scenario(setup["scenario"])
            else:
                game = cls(GameConfig.from_dict(setup["config"]))
        except ValueError as e:
            raise RecordError(f"the record's setup is invalid: {e}") from None
        if list(game.map) != list(d["map"]):
            raise RecordError("the record's map does not match its config and seed")
        if not game.ruleset.matches_fingerprint(d.get("ruleset_fingerprint",
                                                      game.ruleset.fingerprint())):
            raise RecordError("the record was played with another ruleset (fingerprint differs)")
        return game

    @classmethod
    def from_json(cls, text, *, strict: bool = False) -> "Game":
        """Replay a record (JSON text or dict) and verify it: RecordError naming the first
        step whose action is illegal or whose state differs from the record's digest.
        Old records without checksum replay with a RecordWarning (RecordError if
        ``strict``)."""
        d = read_record(text)
        game = cls.record_start(d)
        check = Verifier(d, strict=strict)
        for k, a in enumerate(d["actions"]):
            try:
                game.step(a)
            except IllegalActionError as e:
                raise RecordError(f"step {k}: the record's action is illegal: {e}") from None
            check.step(k, a, game.state, game._log)
        check.final(game.state, game._log, game.scores() if game.is_terminal else None)
        return game

    # ------------------------------------------------------------ text
    def render_text(self) -> str:
        return _render_text(self)

    def __repr__(self):
        return (f"Game(players={self.num_players}, map={','.join(self.map)}, round={self.round}, "
                f"context={self.context!r}, player={self.current_player})")


__all__ = ["Game", "GameConfig", "IllegalActionError", "RecordError", "ScenarioError",
           "action_id", "action_ids", "GOOD_NAMES", "UNIT_NAMES",
           "IMPORT_NAMES", "TILE_NAMES", "PORT_TILE_NAMES"]
