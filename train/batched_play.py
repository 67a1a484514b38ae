"""Batched policy players and many-game evaluation.

:class:`PolicyPlayer` plays a checkpoint's actor for many positions at once
(one torch forward per batch). :func:`play_games` runs a set of games between
any players — policy players (batched across the games in flight) and
ordinary bots from ``agents.make`` — and returns one row per player per game
in the format of :mod:`caledonia_env.tournament` (so its ``report`` prints
the same tables as ``caledonia play``).
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from caledonia_env.config import GameConfig
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.mask import legal_mask
from caledonia_env.envs.observation import OBS_SIZE, encode_obs
from caledonia_env.game import Game

from caledonia_env import agents
from caledonia_env.agents import checkpoint as ckpt
from caledonia_env.agents.policy import PolicyPlayer, checkpoint_path, is_pretrained
from caledonia_env.tournament import game_seeds, result_rows, rule_fields, wilson

_POLICIES: dict = {}


def load_policy(param: str, deterministic: bool = True, name: str | None = None,
                sha256: str | None = None, num_players: int = 2) -> PolicyPlayer:
    """The PolicyPlayer of checkpoint ``ppo:PARAM``, loaded once per process: cached by the
    file's absolute path and content hash, so a rewritten file is loaded again.
    ``sha256``: the hash the file must have (ValueError otherwise, e.g. a cluster node
    holding another file at that path). ``pretrained`` is the shipped policies, picked per
    game by its player count; its hash is that of the file for ``num_players``."""
    path = os.path.abspath(checkpoint_path(param, num_players))
    digest = ckpt.file_sha256(path)   # within the loader's limits; CheckpointError if unsafe
    if sha256 is not None and digest != sha256:
        raise ValueError(f"checkpoint {path} has sha256 {digest[:12]}..., expected "
                         f"{sha256[:12]}... (another file at that path on this machine?)")
    key = (path, digest, bool(deterministic), name, is_pretrained(param))
    if key not in _POLICIES:
        _POLICIES[key] = (PolicyPlayer.pretrained(deterministic, name=name or "ppo:pretrained")
                          if is_pretrained(param) else
                          PolicyPlayer.from_checkpoint(path, deterministic, name=name))
    return _POLICIES[key]


def checkpoint_sha256(spec: str, num_players: int = 2) -> str:
    """Content hash of the checkpoint of a ``ppo:PARAM`` spec ('' for other specs); for
    ``ppo:pretrained`` the file shipped for ``num_players``."""
    if not spec.startswith("ppo:"):
        return ""
    return ckpt.file_sha256(checkpoint_path(spec[4:], num_players))


def resolve(spec, deterministic: bool = True, sha256: str | None = None, num_players: int = 2):
    """A player from a spec: ``ppo:PATH`` / a PolicyPlayer (batched; a checkpoint is loaded
    once per process, see :func:`load_policy`), or a bot name / agent object (one instance
    per game slot, made by the returned factory)."""
    if isinstance(spec, str):
        kind, sep, param = spec.strip().partition(":")
        if kind == "ppo":
            if not param:
                raise ValueError("ppo needs a checkpoint: ppo:PATH.zip or ppo:pretrained")
            return load_policy(param, deterministic, name=spec.strip(), sha256=sha256,
                               num_players=num_players)
        agents.make(spec, seed=0)           # validate the name now (clear error)
        return _BotFactory(spec.strip())
    if getattr(spec, "batched", False) or hasattr(spec, "act"):
        return spec
    raise TypeError(f"a player is an agent name, 'ppo:PATH' or an object with act(game); "
                    f"got {spec!r}")


class _BotFactory:
    """Makes one bot per game slot (bots keep a random stream; slots must not share it)."""
    batched = False

    def __init__(self, name):
        self.name = name

    def make(self, seed):
        return agents.make(self.name, seed=seed)


def _label(player) -> str:
    return getattr(player, "name", None) or repr(player)


def play_games(players: list, games: int | None, num_players: int | None = None, seed: int = 0,
               rotate: bool = True, batch: int = 64, map=None, labels=None,
               progress: Callable[[int], None] | None = None, game_kw: dict | None = None,
               deterministic: bool = True, game_ids: Sequence[int] | None = None) -> list[dict]:
    """Play games ``0 .. games-1``, or exactly the games numbered ``game_ids`` (then
    ``games`` is None); ``players[r]`` plays role r. With ``rotate``, role r sits at player
    index (r + g) mod n in game g, so every role plays every index equally often.

    Game g's setup, the bots' seeds and a sampling policy's random stream come from
    ``(seed, g)`` as in :func:`caledonia_env.tournament.game_seeds`, so a game's row does not
    depend on ``batch`` nor on which other games are played with it.
    Returns tournament CSV rows (one per player per game), sorted by (game, player);
    ``agent`` is the role's label; ``deterministic=False`` makes ``ppo:`` players sample.
    """
    n = num_players or len(players)
    if len(players) != n:
        raise ValueError(f"need one player per seat: {n} players, got {len(players)}")
    if game_ids is None:
        if games is None or games < 1:
            raise ValueError(f"games must be >= 1, got {games}")
        ids = list(range(games))
    else:
        if games is not None:
            raise ValueError("give games or game_ids, not both")
        ids = [int(g) for g in game_ids]
        if any(g < 0 for g in ids) or len(set(ids)) != len(ids):
            raise ValueError(f"game_ids must be distinct numbers >= 0, got {ids}")
    roles = [resolve(p, deterministic, num_players=n) for p in players]
    labels = list(labels) if labels else [_label(p) for p in roles]
    rows: list[dict] = []
    active: dict[int, dict] = {}
    queue = iter(ids)
    left = len(ids)
    obs_buf = np.zeros((batch, OBS_SIZE), np.float32)
    mask_buf = np.zeros((batch, N_ACTIONS), np.int8)
    while active or left:
        while len(active) < batch and left:
            g = next(queue)
            left -= 1
            game_seed, agent_seeds = game_seeds(seed, g, n)
            game = Game(GameConfig(num_players=n, seed=game_seed, map=map, **(game_kw or {})))
            seat_role = [((p - g) % n) if rotate else p for p in range(n)]
            ctrl = []
            for p in range(n):
                role = roles[seat_role[p]]
                if isinstance(role, _BotFactory):
                    bot = role.make(agent_seeds[p])
                else:
                    bot = role
                    if not getattr(bot, "batched", False) and hasattr(bot, "reset"):
                        bot.reset(agent_seeds[p])
                ctrl.append(bot)
            order = [int(x) for x in game.state[L.S_ORDER:L.S_ORDER + n]]
            active[g] = {"game": game, "ctrl": ctrl, "roles": seat_role, "order": order,
                         "think": [0.0] * n, "dec": [0] * n, "seed": game_seed,
                         "rng": [np.random.default_rng(s) for s in agent_seeds]}
        groups: dict[int, list] = {}
        for g, st in active.items():
            game = st["game"]
            p = game.current_player
            c = st["ctrl"][p]
            if getattr(c, "batched", False):
                groups.setdefault(id(c), [c, []])[1].append(g)
            else:
                t0 = time.process_time()
                a = c.act(game)
                st["think"][p] += time.process_time() - t0
                st["dec"][p] += 1
                game.step(a)
        for c, gs in groups.values():
            t0 = time.process_time()
            k = len(gs)
            for j, g in enumerate(gs):
                game = active[g]["game"]
                encode_obs(game.state, game.tables, game.current_player, obs_buf[j])
                legal_mask(game.state, game.tables, mask_buf[j])
            rngs = [active[g]["rng"][active[g]["game"].current_player] for g in gs]
            acts = c.act_batch(obs_buf[:k], mask_buf[:k], rngs=rngs)
            dt = (time.process_time() - t0) / k
            for j, g in enumerate(gs):
                st = active[g]
                p = st["game"].current_player
                st["think"][p] += dt
                st["dec"][p] += 1
                st["game"].step(int(acts[j]))
        for g in [g for g, st in active.items() if st["game"].is_terminal]:
            st = active.pop(g)
            game = st["game"]
            rows.extend(_rows(g, st, game, labels))
            if progress:
                progress(1)
    rows.sort(key=lambda r: (r["game"], r["player"]))
    return rows


def _rows(g, st, game, labels):
    rows = result_rows(game, g, st["seed"], st["order"], [labels[r] for r in st["roles"]],
                       st["dec"], st["think"])
    for p, row in enumerate(rows):
        row["role"] = st["roles"][p]
    return rows


@dataclass(frozen=True)
class EvalStudy:
    """The matches of ``caledonia evaluate`` as a :mod:`caledonia_env.scale` study.

    Match m is ``matches[m]`` (one agent spec per role; role 0 is the evaluated checkpoint)
    played for ``per_match`` games with :func:`play_games` (seats rotated, game g set up
    from ``(seed, g)``). The study's game ``m * per_match + g`` is match m's game g, so
    every match meets the same setups and a chunk of any games gives the rows the whole
    match would. ``sha256``: the content hash of each ``ppo:`` spec's checkpoint, checked
    where it is loaded (once per process). In a worker process (not the one that made the
    study) torch is set to one thread.
    """
    matches: tuple
    per_match: int
    seed: int = 0
    map: tuple | None = None
    game_kw: dict = field(default_factory=dict)
    deterministic: bool = True
    sha256: dict = field(default_factory=dict)
    origin_pid: int = field(default_factory=os.getpid)

    @property
    def games(self) -> int:
        return len(self.matches) * self.per_match

    @property
    def num_players(self) -> int:
        return len(self.matches[0])

    @property
    def warm_key(self) -> tuple:
        return ("evaluate", tuple(tuple(m) for m in self.matches),
                tuple(sorted(self.sha256.items())), self.deterministic)

    def validate(self) -> None:
        if not self.matches or len({len(m) for m in self.matches}) != 1:
            raise ValueError(f"matches must be agent lists of one length, got {self.matches!r}")
        if not isinstance(self.per_match, int) or self.per_match < 1:
            raise ValueError(f"games per match must be >= 1, got {self.per_match!r}")
        for spec in {s for m in self.matches for s in m}:
            if spec.startswith("ppo:"):
                if not self.sha256.get(spec):
                    raise ValueError(f"no checkpoint hash for {spec} (EvalStudy.sha256)")
            else:
                agents.make(spec, seed=0)

    def match_game(self, game: int) -> tuple[int, int]:
        """(match, game within the match) of the study's game number."""
        return divmod(int(game), self.per_match)

    def role(self, row: dict) -> int:
        """The role (index in the match's agent list) that played this row."""
        return (int(row["player"]) - self.match_game(row["game"])[1]) % self.num_players

    def belongs(self, row: dict) -> bool:
        return self.mismatch([row]) is None

    def mismatch(self, rows: list[dict]) -> str | None:
        """None if ``rows`` (one game's rows from a results file) are what this study plays
        in that game, else the first difference, named: the game seed (another --seed), an
        agent, or a rules column (clan mode, variants, ruleset and its fingerprint), so
        ``--resume`` never mixes evaluations under other rules (scale.check_resume)."""
        G = rows[0]["game"]
        m, g = self.match_game(G)
        seed = game_seeds(self.seed, g, self.num_players)[0]
        if not 0 <= G < self.games:
            return f"game {G} is not one of this study's {self.games} games"
        if rows[0]["game_seed"] != seed:
            return f"game {G} has game seed {rows[0]['game_seed']}, this study's is {seed} (another --seed?)"
        want = dict(self.rule_fields)
        for r in rows:
            want["agent"] = self.matches[m][self.role(r)]
            for k, v in want.items():
                if k in r and r[k] != v:
                    return f"game {G}, player {r['player']}: {k} is {r[k]!r}, this study's is {v!r}"
        return None

    @cached_property
    def rule_fields(self) -> dict:
        """The rules columns every game of this study is played under (no seed enters them)."""
        return rule_fields(GameConfig(num_players=self.num_players, seed=0, map=self.map,
                                      **self.game_kw))

    def _player(self, spec: str):
        """The cached PolicyPlayer of a ``ppo:`` spec (hash checked), else the bot name."""
        if spec.startswith("ppo:"):
            return resolve(spec, self.deterministic, sha256=self.sha256[spec],
                           num_players=self.num_players)
        return spec

    def warm_up(self) -> None:
        """One torch thread in a worker process; load the checkpoints; compile (or load
        from numba's cache) the engine, the observation encoder and each bot: one move each."""
        if os.getpid() != self.origin_pid:
            import torch                # optional extra (train): only with policy players
            torch.set_num_threads(1)
        game = Game(GameConfig(num_players=self.num_players, seed=0, map=self.map,
                               **self.game_kw))
        for spec in sorted({s for m in self.matches for s in m}):
            player = self._player(spec)
            if isinstance(player, str):
                agents.make(player, seed=0).act(game.clone())
            else:
                player.act(game)

    def play(self, games: list[int], progress: Callable[[int], None] | None = None,
             ) -> list[dict]:
        """Rows of the study's games ``games`` (batched per match with :func:`play_games`)."""
        by_match: dict[int, list[int]] = {}
        for G in games:
            m, g = self.match_game(G)
            by_match.setdefault(m, []).append(g)
        rows = []
        for m, gs in sorted(by_match.items()):
            specs = list(self.matches[m])
            for r in play_games([self._player(s) for s in specs], None, num_players=len(specs),
                                seed=self.seed, map=self.map, labels=specs, progress=progress,
                                game_kw=self.game_kw, deterministic=self.deterministic,
                                game_ids=gs):
                r["game"] += m * self.per_match
                rows.append(r)
        return rows


def summarize(rows: list[dict], role: int = 0) -> dict:
    """Win share of ``role`` with its Wilson 95% CI, mean VP (own and the others')."""
    mine = [r for r in rows if r["role"] == role]
    others = [r for r in rows if r["role"] != role]
    n = len(mine)
    if n == 0:
        raise ValueError(f"no games for role {role}")
    wins = float(sum(r["win"] for r in mine))
    lo, hi = wilson(wins, n)
    return {"games": n, "wins": wins, "win_rate": wins / n, "ci_low": lo, "ci_high": hi,
            "vp": float(np.mean([r["total"] for r in mine])),
            "opp_vp": float(np.mean([r["total"] for r in others])) if others else float("nan")}

