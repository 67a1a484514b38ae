"""GameConfig: everything that defines a game before the first action."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional

MODULES = "ABCD"
PLAYER_COUNTS = (2, 3, 4)


@dataclass(frozen=True)
class GameConfig:
    """A game's setup. ``map=None`` draws one side per module from ``seed`` (R-1.1).

    ``ruleset`` is a path to a ruleset directory or override file (see
    ``docs/ruleset.md``), or None for the bundled data.
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
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.num_players, int) or self.num_players not in PLAYER_COUNTS:
            raise ValueError(f"num_players must be one of {PLAYER_COUNTS} "
                             f"(solo and clans come with the clans issue), got {self.num_players!r}")
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

    def to_dict(self) -> dict:
        d = asdict(self)
        d.pop("extra")
        if d["map"] is not None:
            d["map"] = list(d["map"])
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "GameConfig":
        d = dict(d)
        known = set(cls.__dataclass_fields__) - {"extra"}
        unknown = {k: d.pop(k) for k in list(d) if k not in known}
        if d.get("map") is not None:
            d["map"] = tuple(d["map"])
        return cls(**d, extra=unknown)
