"""What a tournament plays: :class:`TournamentSpec`, its checks, each game's seeds, and the
balanced clan schedule of ``caledonia balance``.

Game ``g`` of a tournament with seed ``S`` is fully determined by ``(S, g)``: its
GameConfig seed and every agent's seed come from ``numpy.random.SeedSequence([S, g])``.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

import numpy as np

from caledonia_env import agents
from caledonia_env.agents import automa_seats
from caledonia_env.config import GameConfig, check_player_count, check_seed
from caledonia_env.data import load_ruleset


@dataclass(frozen=True)
class TournamentSpec:
    """What to play: one agent name per player, how many games, the setup.

    ``config``: the template of every game's GameConfig (map, clans, variants, ruleset,
    ``solo=True`` with one player, ``first_player``, ...); each game replaces its seed, and
    ``automa:LEVEL`` players become its Automa seats (A-0). None: the defaults for
    ``len(players)`` players. ``clan_schedule``: a sequence of
    per-player clan tuples (fixed clans, R-8; ``None`` for no clan); game g plays entry
    ``g % len(clan_schedule)`` in place of the template's clans (what ``balance`` plays,
    see :func:`balance_schedule`).
    """
    players: tuple
    games: int
    seed: int = 0
    config: GameConfig | None = None
    clan_schedule: tuple | None = None
    agent_kw: dict = field(default_factory=dict, compare=False)

    @property
    def template(self) -> GameConfig:
        """``config``, or the default GameConfig of ``len(players)`` players."""
        return GameConfig(num_players=len(self.players)) if self.config is None else self.config

    def game_config(self, game_seed: int, g: int = 0) -> GameConfig:
        """Game g's setup: the template with the game's seed, Automa seats and clans."""
        kw = {"seed": game_seed}
        if automa_seats(self.players):
            kw["automa"] = automa_seats(self.players)
        if self.clan_schedule:
            kw["clans"] = tuple(self.clan_schedule[g % len(self.clan_schedule)])
        return dataclasses.replace(self.template, **kw)


def validate(spec: TournamentSpec) -> None:
    """Raise ValueError with the allowed values for any bad part of ``spec``."""
    n = len(spec.players)
    if spec.config is not None and not isinstance(spec.config, GameConfig):
        raise ValueError(f"TournamentSpec.config must be a GameConfig or None, got "
                         f"{type(spec.config).__name__}")
    solo = spec.config is not None and spec.config.solo
    check_player_count(n, solo, f"--players: the count of agent names ({','.join(spec.players)})",
                       "--solo")
    if spec.template.num_players != n:
        raise ValueError(f"TournamentSpec.config is a {spec.template.num_players}-player "
                         f"game; players names {n} agents")
    for name in spec.players:
        agents.make(name, seed=0, **spec.agent_kw)     # checks the kind and its parameter
    if not isinstance(spec.games, int) or spec.games < 1:
        raise ValueError(f"--games must be a positive integer, got {spec.games!r}")
    check_seed(spec.seed, "--seed")
    for g in range(len(spec.clan_schedule) if spec.clan_schedule else 1):
        spec.game_config(0, g)      # Automa seats / scheduled clans errors
    if spec.template.ruleset is not None:
        load_ruleset(spec.template.ruleset)


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
