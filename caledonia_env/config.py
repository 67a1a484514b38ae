"""GameConfig: everything that defines a game before the first action."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional

MODULES = "ABCD"
PLAYER_COUNTS = (1, 2, 3, 4)
CLAN_NAMES = ("buchanan", "campbell", "cunningham", "fergusson", "macdonald", "mackenzie",
              "robertson", "stewart", "brewer")
CLAN_MODES = ("none", "draft", "auction", "fixed")


@dataclass(frozen=True)
class GameConfig:
    """A game's setup. ``map=None`` draws one side per module from ``seed`` (R-1.1).

    ``ruleset`` is a path to a ruleset directory or override file (see
    ``docs/ruleset.md``), or None for the bundled data.

    Clans (``docs/clans.md``): ``clans=None`` (or ``"none"``) plays without clans
    (R-1.9); ``clans="draft"`` draws players + 1 clan/starting-tile pairs that the
    players choose in reverse turn order (R-1.7); a sequence of clan names (one per
    player, ``None``/``"none"`` for no clan) fixes every player's clan.
    ``clan_auction=True`` auctions the clans instead (R-9.4). ``kickstarter_clan``
    adds the optional brewer to the clans drawn. ``solo=True`` with
    ``num_players=1`` is the solo game (R-9.2); ``smaller_map`` covers four land
    hexes (R-9.3), chosen from the seed or given as ``covered_hexes`` labels.
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
    clans: Optional[object] = None
    clan_auction: bool = False
    kickstarter_clan: bool = False
    solo: bool = False
    smaller_map: bool = False
    covered_hexes: Optional[tuple[str, ...]] = None
    # --- Automa seats (docs/automa.md, A-0): {seat: difficulty 1-5}; its [interp] switches
    # --- are data (caledonia_env/data/automa/automa.json, or automa.json in a ruleset dir)
    automa: Optional[dict] = None
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.num_players, int) or self.num_players not in PLAYER_COUNTS:
            raise ValueError(f"num_players must be one of {PLAYER_COUNTS} (1 = solo), "
                             f"got {self.num_players!r}")
        if (self.num_players == 1) != bool(self.solo):
            raise ValueError("num_players must be one of (2, 3, 4), or 1 with solo=True (the solo "
                             f"game, R-9.2); got num_players={self.num_players}, solo={self.solo!r}")
        self._check_clans()
        self._check_map_variant()
        self._check_automa()
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        if self.map is not None:
            sides = self.map.split(",") if isinstance(self.map, str) else list(self.map)
            sides = tuple(s.strip().upper() for s in sides)
            allowed = [f"{m}{i}" for m in MODULES for i in (1, 2)]
            if len(sides) != 4 or any(s[:1] != m or s not in allowed for s, m in zip(sides, MODULES)):
                raise ValueError(f"map must name one side of each module in order A,B,C,D "
                                 f"(e.g. 'A1,B2,C1,D2'); allowed sides: {allowed}; got {self.map!r}")
            object.__setattr__(self, "map", sides)
        if self.first_player is not None and not (0 <= self.first_player < self.num_players):
            raise ValueError(f"first_player must be in 0..{self.num_players - 1} or None")
        if self.extra:
            raise ValueError(f"unknown GameConfig options: {sorted(self.extra)}")

    def _check_clans(self):
        c = self.clans
        if c is None or (isinstance(c, str) and c.strip().lower() in ("none", "")):
            c = None
        elif isinstance(c, str):
            c = c.strip().lower()
            if c != "draft":
                raise ValueError(f"clans must be None/'none' (R-1.9), 'draft' (R-1.7) or one clan "
                                 f"name per player from {CLAN_NAMES}; got {self.clans!r}")
        else:
            try:
                names = list(c)
            except TypeError:
                raise ValueError(f"clans must be None, 'draft' or a sequence of clan names, "
                                 f"got {self.clans!r}") from None
            if len(names) != self.num_players:
                raise ValueError(f"clans lists one clan per player ({self.num_players}), "
                                 f"got {len(names)}: {self.clans!r}")
            out = []
            for x in names:
                key = "none" if x is None else str(x).strip().lower()
                if key != "none" and key not in CLAN_NAMES:
                    raise ValueError(f"unknown clan {x!r}; allowed: {CLAN_NAMES} or None")
                out.append(None if key == "none" else key)
            c = tuple(out)
        if self.clan_auction:
            if isinstance(c, tuple):
                raise ValueError("clan_auction=True auctions drawn clans (R-9.4); it cannot be "
                                 "combined with a fixed clan list")
            c = "draft" if c is None else c
        if self.kickstarter_clan and not isinstance(c, str):
            raise ValueError("kickstarter_clan adds the brewer to the drawn clans: use it with "
                             "clans='draft' or clan_auction=True (or name 'brewer' in a clan list)")
        object.__setattr__(self, "clans", c)

    def _check_map_variant(self):
        if self.covered_hexes is not None:
            if not self.smaller_map:
                raise ValueError("covered_hexes needs smaller_map=True (R-9.3)")
            hexes = self.covered_hexes
            if isinstance(hexes, str):
                hexes = hexes.split(",")
            hexes = tuple(str(h).strip().upper() for h in hexes)
            if len(hexes) != 4 or len(set(hexes)) != 4:
                raise ValueError(f"covered_hexes names four different land hexes (R-9.3), "
                                 f"got {self.covered_hexes!r}")
            object.__setattr__(self, "covered_hexes", hexes)
        if self.smaller_map and self.num_players not in (2, 3):
            raise ValueError("the smaller map variant (R-9.3) is for 2-3 player games; "
                             f"got num_players={self.num_players}")

    def _check_automa(self):
        """A-0: 1-3 Automa seats of difficulty 1-5 in a 2-4 player game, one non-Automa seat."""
        a = self.automa
        if a is None or a == {}:
            object.__setattr__(self, "automa", None)
            return
        if not isinstance(a, dict):
            raise ValueError(f"automa must be a dict {{seat: level}} (levels 1-5) or None, got {a!r}")
        try:
            seats = {int(k): v for k, v in a.items()}
        except (TypeError, ValueError):
            raise ValueError(f"automa seats must be ints 0..{self.num_players - 1}, got {a!r}") from None
        if self.num_players < 2:
            raise ValueError("automa seats need num_players 2-4 (the solo game has no Automa)")
        for seat, level in seats.items():
            if not 0 <= seat < self.num_players:
                raise ValueError(f"automa seat {seat} must be in 0..{self.num_players - 1}")
            if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 5:
                raise ValueError(f"automa level of seat {seat} must be an int 1..5, got {level!r}")
        if len(seats) >= self.num_players:
            raise ValueError("at least one seat must not be an Automa (A-0.1)")
        if self.clan_auction:
            raise ValueError("automa seats cannot be combined with clan_auction=True")
        if isinstance(self.clans, tuple) and any(self.clans[s] is not None for s in seats):
            raise ValueError("an Automa seat takes no clan (A-1.3): give None for it in clans")
        object.__setattr__(self, "automa", dict(sorted(seats.items())))

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
        d = dict(d)
        known = set(cls.__dataclass_fields__) - {"extra"}
        unknown = {k: d.pop(k) for k in list(d) if k not in known}
        if d.get("map") is not None:
            d["map"] = tuple(d["map"])
        return cls(**d, extra=unknown)
