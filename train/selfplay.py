"""Self-play vector env: the learner against a mix of its past snapshots and bots.

:class:`SelfPlayVecEnv` is a Stable-Baselines3 ``VecEnv`` (with
``action_masks()`` for MaskablePPO) of ``num_envs`` games, one learning seat
each. At every episode start each opponent seat draws its player from an
:class:`OpponentMix` such as ``self=0.3,snapshot=0.3,greedy=0.2,random=0.2``:

- ``self``: the current learner policy (weights synced at every rollout start);
- ``snapshot``: a past snapshot drawn uniformly from the :class:`SnapshotPool`
  (the ``pool_size`` most recent snapshots; one is added every
  ``snapshot_every`` steps by the trainer);
- ``latest``: the most recent snapshot;
- ``league``: a snapshot drawn by prioritized fictitious self-play from the ratings of
  the training games (:class:`.league.League`: the snapshots the learner beats least
  are drawn most);
- any other entry: a bot name for ``agents.make`` (``random``, ``greedy``,
  ``mcts:8``...) or ``ppo:PATH`` (a fixed checkpoint).

While the pool is empty, ``snapshot`` and ``latest`` play the current policy.
Policy opponents sample from their masked action distribution (not argmax) and
are evaluated in one batched forward pass per decision step across all games.

Games run through the Python :class:`caledonia_env.Game` API (the numba vector
env's fast path only has random opponents). Rewards are the envs' terminal
rewards (:func:`caledonia_env.envs.rewards.terminal_rewards`).
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from caledonia_env.config import GameConfig, check_player_count
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.constants import MAX_PLAYERS
from caledonia_env.engine.mask import legal_mask
from caledonia_env.envs.common import VecEnvMethods
from caledonia_env.envs.observation import OBS_HIGH, OBS_SIZE, encode_obs
from caledonia_env.envs.rewards import projected_score_diff, reward_mode, terminal_rewards
from caledonia_env.game import Game, IllegalActionError

from caledonia_env import agents
from caledonia_env.agents.checkpoint import build_actor
from caledonia_env.agents.policy import PolicyPlayer
from caledonia_env.train.league import LEARNER
from caledonia_env.train.opponents import POOL_KEYS, OpponentMix  # noqa: F401  (OpponentMix: re-exported)


class SnapshotPool:
    """The learner's current policy (``self``) and its last ``size`` snapshots."""

    def __init__(self, arch, size: int = 10, seed: int = 0):
        if size < 1:
            raise ValueError(f"pool size must be >= 1, got {size}")
        self.arch = arch
        self.size = int(size)
        self._build = lambda: build_actor(arch, OBS_SIZE, N_ACTIONS)
        self.current = PolicyPlayer(self._build().eval(), deterministic=False, seed=seed,
                                    name="self")
        self.snapshots: list[PolicyPlayer] = []
        self._seed = seed

    def sync(self, actor_state: dict) -> None:
        """Copy the learner's actor weights into the ``self`` player."""
        self.current.actor.load_state_dict(actor_state)

    def add(self, actor_state: dict, label: str) -> None:
        actor = self._build().eval()
        actor.load_state_dict(actor_state)
        self._seed += 1
        self.snapshots.append(PolicyPlayer(actor, deterministic=False, seed=self._seed,
                                           name=label))
        del self.snapshots[:-self.size]

    def pick(self, key: str, rng, league=None) -> PolicyPlayer:
        if key == "self" or not self.snapshots:
            return self.current
        if key == "latest":
            return self.snapshots[-1]
        if key == "league" and league is not None:
            return self.snapshots[league.pick([s.name for s in self.snapshots], rng)]
        return self.snapshots[int(rng.integers(len(self.snapshots)))]


class SelfPlayVecEnv(VecEnvMethods, VecEnv):
    """``num_envs`` games, one learning seat each, opponents drawn per episode from ``mix``.

    ``seat``: the learner's player index, None to draw it per episode; ``reward``: a
    terminal reward mode of the envs (``win``, ``rank``, ``score_diff``), times
    ``reward_scale``; ``map``: fixed
    module sides or None (drawn per game); ``game_kw``: other GameConfig fields;
    ``league``: a :class:`.league.League` that records every finished game and draws the
    ``league`` opponents (None: ``league`` draws uniformly, like ``snapshot``).

    ``shaping`` > 0 adds potential-based reward shaping (Ng, Harada & Russell, 1999) to
    every learner step: ``shaping * (gamma * phi(s') - phi(s))``, where ``phi`` is the
    learner's :func:`~caledonia_env.envs.rewards.projected_score_diff` (its VP lead if the
    game were scored now, R-7) and ``phi`` = 0 once the game is over. The shaping terms of an
    episode sum to ``-shaping * phi(s0)`` (with ``gamma`` = 1): a dense signal that leaves
    the optimal policy unchanged.
    """

    def __init__(self, num_envs: int, num_players: int, mix: OpponentMix, pool: SnapshotPool,
                 reward: str = "score_diff", seed: int = 0, seat: int | None = None,
                 map=None, game_kw: dict | None = None, reward_scale: float = 1.0,
                 league=None, shaping: float = 0.0, gamma: float = 1.0):
        check_player_count(num_players, solo_flag=None)
        self.num_players = num_players
        self.mix = mix
        self.pool = pool
        self.league = league
        self.reward_mode = reward
        self._mode = reward_mode(reward)
        self.reward_scale = float(reward_scale)
        if not (np.isfinite(shaping) and shaping >= 0):
            raise ValueError(f"shaping must be a finite number >= 0, got {shaping}")
        if not 0 < gamma <= 1:
            raise ValueError(f"gamma must be in (0, 1], got {gamma}")
        self.shaping = float(shaping)
        self.gamma = float(gamma)
        self.fixed_seat = seat
        self.map = map
        self.game_kw = dict(game_kw or {})
        GameConfig(num_players=num_players, map=map, **self.game_kw)      # validate now
        self.render_mode = None
        super().__init__(num_envs, spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32),
                         spaces.Discrete(N_ACTIONS))
        n = num_envs
        self.games: list[Game | None] = [None] * n
        self.seats = np.zeros(n, np.int64)
        self.opponents: list[list] = [[None] * num_players for _ in range(n)]
        self.opponent_names: list[list] = [[None] * num_players for _ in range(n)]
        self._bots: dict = {}
        self._obs = np.zeros((n, OBS_SIZE), np.float32)
        self._masks = np.zeros((n, N_ACTIONS), np.int8)
        self._rbuf = np.zeros(MAX_PLAYERS, np.float64)
        self._phi = np.zeros(n, np.float64)
        self._scratch = None
        self._obs_tmp = np.zeros((n, OBS_SIZE), np.float32)
        self._mask_tmp = np.zeros((n, N_ACTIONS), np.int8)
        self.rng = np.random.default_rng(seed)
        self._actions = None
        self.episodes = 0

    # ------------------------------------------------------------ episodes
    def _bot(self, i, p, name):
        key = (i, p, name)
        bot = self._bots.get(key)
        if bot is None:
            if name.startswith("ppo:"):
                bot = PolicyPlayer.from_param(name[4:], deterministic=False, name=name)
                self._bots[(None, None, name)] = bot
                for k in range(self.num_envs):
                    for q in range(self.num_players):
                        self._bots[(k, q, name)] = bot
            else:
                bot = agents.make(name, seed=0)
                self._bots[key] = bot
        return bot

    def _new_episode(self, i):
        game = Game(GameConfig(num_players=self.num_players, seed=int(self.rng.integers(2**31 - 1)),
                               map=self.map, **self.game_kw))
        self.games[i] = game
        seat = self.fixed_seat if self.fixed_seat is not None else int(
            self.rng.integers(self.num_players))
        self.seats[i] = seat
        for p in range(self.num_players):
            if p == seat:
                self.opponents[i][p] = self.opponent_names[i][p] = None
                continue
            key = self.mix.sample(self.rng)
            if key in POOL_KEYS:
                player = self.pool.pick(key, self.rng, self.league)
            else:
                player = self._bot(i, p, key)
                if not getattr(player, "batched", False):
                    player.reset(int(self.rng.integers(2**31 - 1)))
            self.opponents[i][p] = player
            self.opponent_names[i][p] = player.name if key in POOL_KEYS else key
        self.episodes += 1

    def _record(self, i, seat, game, winners):
        labels = [LEARNER if p == seat or self.opponents[i][p] is self.pool.current
                  else self.opponent_names[i][p] for p in range(self.num_players)]
        wins = [(1.0 / len(winners)) if p in winners else 0.0 for p in range(self.num_players)]
        self.league.record(labels, game.scores(), wins)

    def _waiting(self, i) -> bool:
        g = self.games[i]
        return not g.is_terminal and g.current_player != self.seats[i]

    def _advance(self, envs):
        """Opponents play in every env of ``envs`` until its learner decides or it ends;
        policy opponents are batched across envs."""
        pending = [i for i in envs if self._waiting(i)]
        while pending:
            groups: dict[int, list] = {}
            for i in pending:
                g = self.games[i]
                c = self.opponents[i][g.current_player]
                if getattr(c, "batched", False):
                    groups.setdefault(id(c), [c, []])[1].append(i)
                else:
                    g.step(c.act(g))
            for c, idx in groups.values():
                k = len(idx)
                for j, i in enumerate(idx):
                    g = self.games[i]
                    encode_obs(g.state, g.tables, g.current_player, self._obs_tmp[j])
                    legal_mask(g.state, g.tables, self._mask_tmp[j])
                for j, a in enumerate(c.act_batch(self._obs_tmp[:k], self._mask_tmp[:k])):
                    self.games[idx[j]].step(int(a))
            pending = [i for i in pending if self._waiting(i)]

    def _observe(self, i):
        g = self.games[i]
        encode_obs(g.state, g.tables, int(self.seats[i]), self._obs[i])
        legal_mask(g.state, g.tables, self._masks[i])
        if self.shaping:
            if self._scratch is None or self._scratch.shape != g.state.shape:
                self._scratch = np.empty_like(g.state)
            projected_score_diff(g.state, g.tables, self._scratch, self._rbuf)
            self._phi[i] = self._rbuf[int(self.seats[i])]

    # ------------------------------------------------------------ VecEnv API
    def reset(self):
        if self._seeds[0] is not None:
            self.rng = np.random.default_rng(self._seeds[0])
        self._reset_seeds()
        for i in range(self.num_envs):
            self._new_episode(i)
        self._advance(range(self.num_envs))
        self._restart_finished()
        for i in range(self.num_envs):
            self._observe(i)
        return self._obs.copy()

    def _restart_finished(self):
        """Games that ended before the learner's first decision are replaced."""
        for _ in range(100):
            bad = [i for i in range(self.num_envs) if self.games[i].is_terminal]
            if not bad:
                return
            for i in bad:
                self._new_episode(i)
            self._advance(bad)
        raise RuntimeError("games keep ending before the learner's first decision")

    def step_async(self, actions):
        self._actions = np.asarray(actions).reshape(-1)

    def step_wait(self):
        acts = self._actions
        if acts is None or acts.shape[0] != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions")
        for i in range(self.num_envs):
            a = int(acts[i])
            if not (0 <= a < N_ACTIONS and self._masks[i, a]):
                g = self.games[i]
                raise IllegalActionError(
                    f"env {i}: action {a} is not legal for the learner (seat {self.seats[i]}, "
                    f"context {g.context!r})"
                    f"; MaskablePPO must be used with action masks")
        phi_before = self._phi.copy()
        for i in range(self.num_envs):
            self.games[i].step(int(acts[i]))
        self._advance(range(self.num_envs))
        rewards = np.zeros(self.num_envs, np.float32)
        dones = np.zeros(self.num_envs, bool)
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        finished = []
        for i in range(self.num_envs):
            g = self.games[i]
            if not g.is_terminal:
                continue
            seat = int(self.seats[i])
            terminal_rewards(g.state, g.tables, self._mode, self._rbuf)
            rewards[i] = self._rbuf[seat] * self.reward_scale
            dones[i] = True
            last = np.empty(OBS_SIZE, np.float32)
            encode_obs(g.state, g.tables, seat, last)
            winners = g.winners()
            infos[i] = {"terminal_observation": last, "scores": [int(x) for x in g.scores()],
                        "win": (1.0 / len(winners)) if seat in winners else 0.0,
                        "opponents": [x for x in self.opponent_names[i] if x is not None],
                        "TimeLimit.truncated": False}
            finished.append(i)
            if self.league is not None:
                self._record(i, seat, g, winners)
        for i in finished:
            self._new_episode(i)
        self._advance(finished)
        if finished:
            self._restart_finished()
        for i in range(self.num_envs):
            self._observe(i)
        if self.shaping:        # phi = 0 after the last step; _observe set the next episode's
            phi_after = np.where(dones, 0.0, self._phi)
            rewards += (self.shaping * self.reward_scale
                        * (self.gamma * phi_after - phi_before)).astype(np.float32)
        return self._obs.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self._masks.astype(bool)

    def close(self):
        pass
