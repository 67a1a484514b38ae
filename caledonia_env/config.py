"""GameConfig: everything that defines a game before the first action."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields
from typing import Optional

import numpy as np

from caledonia_env.data.names import CLANS as CLAN_NAMES
from caledonia_env.data.names import (CLAN_CHOICES, CLAN_MODES, MAX_VALUE, MODULES,  # noqa: F401
                                      MULTIPLAYER_COUNTS, PLAYER_COUNTS)
from caledonia_env.engine.tables.build import (BUCHANAN_READINGS, CELLAR_READINGS, IMPORT_RARITY_READINGS,
                                               SOLO_IMPORT_READINGS, SWAP_BONUS_READINGS, Variants)

#: the readings of R-8.1 Buchanan, R-8.6 MacKenzie's cellar and R-7 import rarity before they
#: followed the text (issue #76, docs/interpretations.md)
READINGS_2026_11_26 = {"interp_buchanan": "any-second", "interp_cellar": "left-pays",
                       "interp_import_rarity": "capped"}
#: the GameConfig options that play the bundled default of 2026-11-25, before the sourced
#: values and the publisher's erratum / FAQ readings became the default (docs/ruleset.md)
RULES_2026_11 = {"ruleset": "estimates-2026-11", "interp_swap_bonuses": "first-edition",
                 "interp_solo_imports": "fixed", **READINGS_2026_11_26}
#: the GameConfig options that play the default of 2026-11-26 until issue #76 (the game
#: records of version 5): the sourced values with the old market estimate, and the readings
#: before they followed the text
RULES_2026_11_26 = {"ruleset": "market-estimate-2026-11", **READINGS_2026_11_26}


def clan_options(clans) -> dict:
    """The GameConfig keywords of a clans choice as the CLI, web app and tournaments name it.

    ``"auction"`` (any case) is ``{"clans": "draft", "clan_auction": True}``: the drawn clans
    are auctioned (R-9.4); ``"none"``/``""``/None is ``{"clans": None}`` (R-1.9); any other
    value (``"draft"``, a clan list) is passed on as ``{"clans": clans}`` for GameConfig to
    check.
    """
    key = clans.strip().lower() if isinstance(clans, str) else None
    if key == "auction":
        return {"clans": "draft", "clan_auction": True}
    if clans is None or key in ("none", ""):
        return {"clans": None}
    return {"clans": clans}


class ConfigError(ValueError):
    """A GameConfig field with a value outside its allowed values."""


def check_seed(seed, what: str = "seed") -> int:
    """``seed`` as an int >= 0 (numpy's generators take no negative seed): ConfigTypeError
    for a non-integer, ConfigError for a negative one, both naming ``what``."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise ConfigTypeError(f"{what} must be a non-negative int, got "
                              f"{type(seed).__name__} {seed!r}")
    if seed < 0:
        raise ConfigError(f"{what} must be a non-negative int, got {seed!r}")
    return int(seed)


def check_player_count(num_players, solo: bool = False, what: str = "num_players",
                       solo_flag: str | None = "solo=True") -> None:
    """The one player-count check: 2 to 4 players (:data:`MULTIPLAYER_COUNTS`, R-1), or 1
    with ``solo`` (the solo game, R-9.2). ConfigError (a ValueError) naming ``what`` and
    the switch of the solo game ``solo_flag`` (None where there is no solo game)."""
    n = num_players
    is_int = isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))
    if solo:
        if not (is_int and n == 1):
            raise ConfigError(f"{what} must be 1 with {solo_flag}: the solo game has one "
                              f"player (R-9.2); got {n!r}")
    elif not (is_int and n in MULTIPLAYER_COUNTS):
        alt = f", or 1 with {solo_flag} (the solo game, R-9.2)" if solo_flag else ""
        raise ConfigError(f"{what} must be 2 to 4{alt}; got {n!r}")


class ConfigTypeError(ConfigError, TypeError):
    """A GameConfig field of the wrong type (a TypeError and a ValueError)."""


def _wrong_type(name, value, allowed):
    return ConfigTypeError(f"GameConfig.{name} must be {allowed}, got {type(value).__name__} "
                           f"{value!r}")


def _as_int(name, value):
    """``value`` as an int: Python or NumPy integers, never bools."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise _wrong_type(name, value, "an int")
    return int(value)


def _as_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise _wrong_type(name, value, "a bool (True or False)")
    return bool(value)


def _reading(name, value, allowed):
    """One of the ``allowed`` readings of a switchable interpretation (any case)."""
    if not isinstance(value, str):
        raise _wrong_type(name, value, f"a str, one of {allowed}")
    key = value.strip().lower()
    if key not in allowed:
        raise ConfigError(f"GameConfig.{name} must be one of {allowed}, got {value!r}")
    return key


def _labels(name, value):
    """A comma-separated string or a sequence of strings, as a tuple of stripped upper labels."""
    items = value.split(",") if isinstance(value, str) else value
    if isinstance(items, (bytes, dict, set)) or not hasattr(items, "__iter__"):
        raise _wrong_type(name, value, "a comma-separated string or a sequence of strings")
    items = list(items)
    if not all(isinstance(x, str) for x in items):
        raise _wrong_type(name, value, "a comma-separated string or a sequence of strings")
    return tuple(x.strip().upper() for x in items)


class SeatLevels(dict):
    """A read-only, hashable ``{seat: level}`` mapping (``GameConfig.automa``)."""

    def __hash__(self):
        return hash(tuple(sorted(self.items())))

    def __reduce__(self):             # pickled whole (a TournamentSpec's config travels to workers)
        return (SeatLevels, (dict(self),))

    def _read_only(self, *args, **kwargs):
        raise TypeError("GameConfig.automa is read-only: make a new GameConfig "
                        "(dataclasses.replace(config, automa={...}))")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _read_only


@dataclass(frozen=True)
class GameConfig:
    """A game's setup. ``map=None`` draws one side per module from ``seed`` (R-1.1).

    ``ruleset`` is a path (str or ``os.PathLike``) to a ruleset directory or override
    file (see ``docs/ruleset.md``), or None for the bundled data.

    Clans (``docs/clans.md``): the default ``clans="draft"`` is the standard game
    (also solo): players + 1 clan/starting-tile pairs are drawn and chosen in
    reverse turn order (R-1.7); ``clans=None`` (or ``"none"``) is the no-clans
    variant (R-1.9); a sequence of different clan names
    (one per player, ``None``/``"none"`` for no clan) fixes every player's clan.
    ``clan_auction=True`` auctions the clans instead (R-9.4). ``kickstarter_clan``
    adds the optional brewer to the clans drawn. ``solo=True`` with
    ``num_players=1`` is the solo game (R-9.2); ``smaller_map`` covers four land
    hexes (R-9.3), chosen from the seed or given as ``covered_hexes`` labels.

    Every field is checked: a wrong type raises :class:`ConfigTypeError` (a TypeError
    and a ValueError), a wrong value :class:`ConfigError` (a ValueError); fields
    annotated ``bool``/``int`` are type-checked from their annotation.
    """
    num_players: int = 4
    seed: int = 0
    map: Optional[tuple[str, str, str, str]] = None
    first_player: Optional[int] = None
    ruleset: Optional[str] = None
    ports: bool = True
    scoring_tiles: bool = True
    variant_static_imports: bool = False
    kickstarter_tiles: bool = False
    clans: Optional[object] = "draft"
    clan_auction: bool = False
    kickstarter_clan: bool = False
    solo: bool = False
    smaller_map: bool = False
    covered_hexes: Optional[tuple[str, ...]] = None
    # --- Automa seats (docs/automa.md, A-0): {seat: difficulty 1-5}; its [interp] switches
    # --- are data (caledonia_env/data/automa/automa.json, or automa.json in a ruleset dir)
    automa: Optional[dict] = None
    # switchable rule interpretations (docs/interpretations.md); defaults = the engine's reading
    interp_price_shift_exact: bool = False        # port P6 moves a price exactly 3 steps, not up to 3
    interp_retrieve_buy_side: bool = True         # upgrade bonus may take back a buy merchant
    interp_export_min_contracts: Optional[int] = None   # R-7 rank threshold; None = ruleset data
    interp_swap_bonuses: str = Variants.swap_bonuses   # port 7 swap: "erratum" (both bonuses) or "first-edition"
    interp_solo_imports: str = Variants.solo_imports   # solo imports: "rarity" (FAQ 3/4/5 VP) or "fixed"
    interp_buchanan: str = Variants.buchanan      # "same-source" (text) or "any-second" free
    interp_cellar: str = Variants.cellar          # "aged" barrels pay (text) or "left-pays"
    interp_import_rarity: str = Variants.import_rarity   # rank "goods" imported or "capped" tokens
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        for f in fields(self):
            check = {"bool": _as_bool, "int": _as_int}.get(f.type)
            if check is not None:
                object.__setattr__(self, f.name, check(f.name, getattr(self, f.name)))
        if self.extra:
            raise ConfigError(f"unknown GameConfig options: {sorted(self.extra)}; allowed: "
                              f"{sorted(f.name for f in fields(self) if f.name != 'extra')}")
        check_player_count(self.num_players, self.solo)
        check_seed(self.seed)
        self._check_ruleset()
        self._check_clans()
        self._check_map_variant()
        self._check_automa()
        if self.map is not None:
            sides = _labels("map", self.map)
            allowed = [f"{m}{i}" for m in MODULES for i in (1, 2)]
            if len(sides) != 4 or any(s[:1] != m or s not in allowed for s, m in zip(sides, MODULES)):
                raise ConfigError(f"map must name one side of each module in order A,B,C,D "
                                  f"(e.g. 'A1,B2,C1,D2'); allowed sides: {allowed}; "
                                  f"got {self.map!r}")
            object.__setattr__(self, "map", sides)
        if self.first_player is not None:
            first = _as_int("first_player", self.first_player)
            if not 0 <= first < self.num_players:
                raise ConfigError(f"first_player must be None or in 0..{self.num_players - 1}, "
                                  f"got {first}")
            object.__setattr__(self, "first_player", first)
        if self.interp_export_min_contracts is not None:
            k = _as_int("interp_export_min_contracts", self.interp_export_min_contracts)
            if not 0 <= k <= MAX_VALUE:
                raise ConfigError(f"interp_export_min_contracts must be None (ruleset data) or "
                                  f"an int in 0..{MAX_VALUE}, got {k}")
            object.__setattr__(self, "interp_export_min_contracts", k)
        for name, allowed in (("interp_swap_bonuses", SWAP_BONUS_READINGS),
                              ("interp_solo_imports", SOLO_IMPORT_READINGS),
                              ("interp_buchanan", BUCHANAN_READINGS),
                              ("interp_cellar", CELLAR_READINGS),
                              ("interp_import_rarity", IMPORT_RARITY_READINGS)):
            object.__setattr__(self, name, _reading(name, getattr(self, name), allowed))

    def _check_ruleset(self):
        r = self.ruleset
        if r is None:
            return
        if not isinstance(r, (str, os.PathLike)) or not isinstance(os.fspath(r), str):
            raise _wrong_type("ruleset", r, "None (bundled data) or the path (str or "
                              "os.PathLike) of a ruleset directory or override file")
        object.__setattr__(self, "ruleset", os.fspath(r))

    def _check_clans(self):
        c = self.clans
        if c is None or (isinstance(c, str) and c.strip().lower() in ("none", "")):
            c = None
        elif isinstance(c, str):
            c = c.strip().lower()
            if c != "draft":
                raise ConfigError(f"clans must be None/'none' (R-1.9), 'draft' (R-1.7) or one "
                                  f"clan name per player from {CLAN_NAMES}; got {self.clans!r}")
        else:
            if isinstance(c, (bytes, dict, set)) or not hasattr(c, "__iter__"):
                raise _wrong_type("clans", c, "None, 'draft' or a sequence of clan names")
            names = list(c)
            if len(names) != self.num_players:
                raise ConfigError(f"clans lists one clan per player ({self.num_players}), "
                                  f"got {len(names)}: {self.clans!r}")
            out = []
            for x in names:
                if x is not None and not isinstance(x, str):
                    raise _wrong_type("clans", c, f"a sequence of clan names from {CLAN_NAMES} "
                                      f"or None")
                key = "none" if x is None else x.strip().lower()
                if key != "none" and key not in CLAN_NAMES:
                    raise ConfigError(f"unknown clan {x!r}; allowed: {CLAN_NAMES} or None")
                if key != "none" and key in out:
                    raise ConfigError(f"clans names {key!r} twice; every clan is played by "
                                      f"one player at most (R-8): {self.clans!r}")
                out.append(None if key == "none" else key)
            c = tuple(out)
        if self.clan_auction:
            if isinstance(c, tuple):
                raise ConfigError("clan_auction=True auctions drawn clans (R-9.4); it cannot be "
                                  "combined with a fixed clan list")
            c = "draft" if c is None else c
        if self.kickstarter_clan and not isinstance(c, str):
            raise ConfigError("kickstarter_clan adds the brewer to the drawn clans: use it with "
                              "clans='draft' or clan_auction=True (or name 'brewer' in a clan "
                              "list)")
        object.__setattr__(self, "clans", c)

    def _check_map_variant(self):
        if self.covered_hexes is not None:
            if not self.smaller_map:
                raise ConfigError("covered_hexes needs smaller_map=True (R-9.3)")
            hexes = _labels("covered_hexes", self.covered_hexes)
            if len(hexes) != 4 or len(set(hexes)) != 4:
                raise ConfigError(f"covered_hexes names four different land hexes (R-9.3), "
                                  f"got {self.covered_hexes!r}")
            object.__setattr__(self, "covered_hexes", hexes)
        if self.smaller_map and self.num_players not in (2, 3):
            raise ConfigError("the smaller map variant (R-9.3) is for 2-3 player games; "
                              f"got num_players={self.num_players}")

    def _check_automa(self):
        """A-0: 1-3 Automa seats of difficulty 1-5 in a 2-4 player game, one non-Automa seat."""
        a = self.automa
        if a is None or a == {}:
            object.__setattr__(self, "automa", None)
            return
        if not isinstance(a, dict):
            raise ConfigError(f"automa must be a dict {{seat: level}} (levels 1-5) or None, got {a!r}")
        try:
            seats = {int(k): v for k, v in a.items()}
        except (TypeError, ValueError):
            raise ConfigError(f"automa seats must be ints 0..{self.num_players - 1}, got {a!r}") from None
        if self.num_players < 2:
            raise ConfigError("automa seats need num_players 2-4 (the solo game has no Automa)")
        for seat, level in seats.items():
            if not 0 <= seat < self.num_players:
                raise ConfigError(f"automa seat {seat} must be in 0..{self.num_players - 1}")
            if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 5:
                raise ConfigError(f"automa level of seat {seat} must be an int 1..5, got {level!r}")
        if len(seats) >= self.num_players:
            raise ConfigError("at least one seat must not be an Automa (A-0.1)")
        if self.clan_auction:
            raise ConfigError("automa seats cannot be combined with clan_auction=True")
        if isinstance(self.clans, tuple) and any(self.clans[s] is not None for s in seats):
            raise ConfigError("an Automa seat takes no clan (A-1.3): give None for it in clans")
        object.__setattr__(self, "automa", SeatLevels(sorted(seats.items())))

    def automa_levels(self) -> tuple:
        """Difficulty per seat, 0 for a non-Automa seat (empty without Automa seats)."""
        if not self.automa:
            return ()
        return tuple(self.automa.get(p, 0) for p in range(self.num_players))

    @property
    def clan_mode(self) -> str:
        """'none', 'draft', 'auction' or 'fixed' (how clans are assigned)."""
        if self.clans is None:
            return "none"
        if isinstance(self.clans, tuple):
            return "fixed"
        return "auction" if self.clan_auction else "draft"

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("extra")
        if d["map"] is not None:
            d["map"] = list(d["map"])
        for k in ("clans", "covered_hexes"):
            if isinstance(d[k], tuple):
                d[k] = list(d[k])
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "GameConfig":
        if not isinstance(d, dict):
            raise _wrong_type("from_dict argument", d, "a dict (GameConfig.to_dict())")
        d = dict(d)
        known = set(cls.__dataclass_fields__) - {"extra"}
        unknown = {k: d.pop(k) for k in list(d) if k not in known}
        return cls(**d, extra=unknown)
