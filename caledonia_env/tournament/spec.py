"""What a tournament plays: :class:`TournamentSpec`, its checks, each game's seeds, and the
balanced clan schedule of ``caledonia balance``.

Game ``g`` of a tournament with seed ``S`` is fully determined by ``(S, g)``: its
GameConfig seed and every agent's seed come from ``numpy.random.SeedSequence([S, g])``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from caledonia_env import agents
from caledonia_env.agents import automa_seats
from caledonia_env.config import GameConfig, clan_options
from caledonia_env.data import load_ruleset


@dataclass(frozen=True)
class TournamentSpec:
    """What to play: one agent name per player, how many games, the setup.

    ``clans``: "draft" (default, the standard game, R-1.7), None or "none" (no
    clans, R-1.9), "auction"
    (R-9.4), or one clan name per player (fixed clans, R-8). ``clan_schedule``:
    a sequence of such per-player clan tuples; game g uses entry
    ``g % len(clan_schedule)`` (what ``balance`` plays, see :func:`balance_schedule`).
    ``game_kw``: further GameConfig options (variants, ``solo=True`` with one
    player, ``first_player``).
    """
    players: tuple
    games: int
    seed: int = 0
    map: tuple | None = None
    clans: object | None = "draft"
    clan_schedule: tuple | None = None
    ruleset: str | None = None
    agent_kw: dict = field(default_factory=dict, compare=False)
    game_kw: dict = field(default_factory=dict)

    def config(self, game_seed: int, g: int = 0) -> GameConfig:
        """Game g's setup; ``automa:LEVEL`` players become Automa seats (A-0)."""
        kw = dict(num_players=len(self.players), seed=game_seed, map=self.map,
                  ruleset=self.ruleset, **self.game_kw)
        if automa_seats(self.players):
            kw["automa"] = automa_seats(self.players)
        kw.update(self.clan_options(g))
        return GameConfig(**kw)

    def clan_options(self, g: int = 0) -> dict:
        """Game g's GameConfig clan options: ``clans`` (from ``clans`` or the schedule) or
        ``clan_auction``."""
        clans = self.clans
        if self.clan_schedule:
            clans = tuple(self.clan_schedule[g % len(self.clan_schedule)])
        return clan_options(clans)


def validate(spec: TournamentSpec) -> None:
    """Raise ValueError with the allowed values for any bad part of ``spec``."""
    n = len(spec.players)
    solo = bool(spec.game_kw.get("solo"))
    if solo and n != 1:
        raise ValueError(f"--solo is the one-player game (R-9.2): give one agent, got {n}: "
                         f"{','.join(spec.players)}")
    if not solo and n not in (2, 3, 4):
        raise ValueError(f"--players needs 2 to 4 agent names separated by commas "
                         f"(e.g. greedy,random,random), or one with --solo; got {n}: "
                         f"{','.join(spec.players)}")
    for name in spec.players:
        agents.make(name, seed=0, **spec.agent_kw)     # checks the kind and its parameter
    if not isinstance(spec.games, int) or spec.games < 1:
        raise ValueError(f"--games must be a positive integer, got {spec.games!r}")
    if spec.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {spec.seed}")
    for g in range(len(spec.clan_schedule) if spec.clan_schedule else 1):
        spec.config(0, g)      # map / clans / variant errors
    if spec.ruleset is not None:
        load_ruleset(spec.ruleset)


def game_seeds(seed: int, g: int, num_players: int) -> tuple[int, list[int]]:
    """(GameConfig seed, agent seeds) of game ``g``."""
    st = np.random.SeedSequence([seed, g]).generate_state(1 + num_players)
    return int(st[0] >> 1), [int(x >> 1) for x in st[1:]]


def balance_schedule(clans, num_players: int, seed: int = 0) -> tuple:
    """Per-player clan tuples, a randomized balanced design: every combination of
    ``num_players`` different clans is a block of ``num_players`` games, one per seat
    rotation (with the first player fixed to player 0, every clan of the block plays every
    seat once). Blocks come in a seeded random order that keeps every prefix near-balanced:
    the next block is one whose clans have played least so far (ties drawn from
    ``seed``). After every block the clans' game counts differ by at most two blocks
    (``2 * num_players`` games); the whole schedule is exactly balanced."""
    clans = list(clans)
    if len(set(clans)) != len(clans):
        raise ValueError(f"clans must be different, got {clans}")
    if len(clans) < num_players:
        raise ValueError(f"{num_players} players need at least {num_players} clans, "
                         f"got {len(clans)}")
    rng = np.random.default_rng([seed, num_players, len(clans)])
    left = list(itertools.combinations(clans, num_players))
    played = dict.fromkeys(clans, 0)
    out = []
    while left:
        tie = rng.random(len(left))
        k = min(range(len(left)), key=lambda i: (sum(played[c] for c in left[i]), tie[i]))
        combo = left.pop(k)
        perm = list(rng.permutation(num_players))       # which clan sits at player 0 first
        combo = tuple(combo[i] for i in perm)
        out += [combo[r:] + combo[:r] for r in range(num_players)]
        for c in combo:
            played[c] += 1
    return tuple(out)
