"""Vector env: N games stepped in one jitted call, one learning seat in each.

======================  =================================================================
Import                  ``from caledonia_env.envs.vector import CaledoniaVectorEnv``
                        (``make_sb3_vec_env`` for a Stable-Baselines3 ``VecEnv``)
Actions                 ``Discrete(2039)`` per game (``N_ACTIONS``, ``docs/actions.md``)
Parallel API            no: Stable-Baselines3 ``VecEnv`` conventions
Agents                  ``num_envs`` learners, one seat per game (``seat``, or drawn per
                        episode); opponents play inside the env
Observation             ``float32[num_envs, 5019]`` (``OBS_SIZE``), each row in
                        ``Box(0, OBS_HIGH)`` (``docs/observation.md``)
Action mask             ``action_masks()``: ``bool[num_envs, 2039]``;
                        ``infos[i]["action_mask"]`` (int8[2039], every step) and
                        ``reset_infos[i]["action_mask"]`` (after ``reset``) the same row
Reward                  terminal only, ``reward`` ``"win"`` / ``"rank"`` / ``"score_diff"``
                        (``"vp"`` for solo games), times ``reward_scale``; an illegal
                        action under ``illegal_action="penalize"``: ``illegal_reward``
Terminal condition      the game is over (R-7) or (``"penalize"``) an illegal action; the
                        game is reset in the same step (auto-reset)
Illegal action          ``"raise"`` (default): IllegalActionError, no env stepped
Options                 ``num_envs``, ``num_players`` (2-4 or a sequence; 1 with
                        ``solo=True``), ``opponents``, ``seat``, ``reward``,
                        ``reward_scale``, ``illegal_action``, ``illegal_reward``, ``seed``,
                        ``parallel``, ``copy``, ``render_mode``, GameConfig fields
======================  =================================================================

With the default opponents (``"random"``) or Automa seats (``"automa:LEVEL"``, A-0)
everything — the learner's action, the opponents' random legal moves, the terminal reward,
auto-reset, observation and mask — runs in one numba kernel (:mod:`.vector_kernels`;
``prange`` over the games for N >= 16). Other opponents (names from the ``agents``
package, agent objects, callables) take a slower path: the kernels apply actions, reset and
encode, and a Python loop asks the opponents for their moves through a :class:`Game` view
of each row.

API (Stable-Baselines3 ``VecEnv`` conventions): ``reset() -> obs``,
``step(actions) -> (obs, rewards, dones, infos)`` with auto-reset in the same step (the
last observation of a finished game is in ``infos[i]["terminal_observation"]``, its scores
in ``infos[i]["scores"]``), ``action_masks() -> bool[N, A]``. :func:`make_sb3_vec_env`
returns the same env as a real SB3 ``VecEnv`` subclass (for ``MaskablePPO``).
``env.moves[i]`` counts the actions applied in env ``i`` by its steps (learner and
opponents, over every episode).

Returned arrays are views of two alternating internal buffers: an observation stays valid
until the step after next (enough for SB3, which stores it at once). Pass ``copy=True`` to
get fresh arrays instead.
"""
from __future__ import annotations

import dataclasses
import time
from itertools import product

import numpy as np
from gymnasium import spaces

from caledonia_env.config import MODULES, GameConfig, check_seed
from caledonia_env.engine.compile import helper as pc
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine.actions import MASK_WIDTH
from caledonia_env.engine.constants import MAX_PLAYERS
from caledonia_env.engine.layout import S_PLAYER, STATE_SIZE, game_over
from caledonia_env.engine.mask import legal_mask
from caledonia_env.engine.step import apply_action
from caledonia_env.game import Game, IllegalActionError, action_ids, static_tables
from caledonia_env.envs.common import VecEnvMethods, make_config, render
from caledonia_env.envs.observation import OBS_HIGH, OBS_SIZE
from caledonia_env.envs.opponents import (automa_level, is_random_spec, make_opponent, opponent_specs,
                        reset_opponent)
from caledonia_env.envs.rewards import reward_mode
from caledonia_env.envs.vector_kernels import (CFG_ADVANCE, OP_APPLY, OP_OBSERVE, OP_RESET, OP_SETTLE, OP_STEP,
                             first_illegal, sample_legal_actions, step_parallel, vector_call)

PARALLEL_MIN_ENVS = 16


def _map_options(map_option):
    """The map(s) the vector env draws from: None -> all 16 module-side combinations."""
    if map_option is None:
        return [tuple(f"{m}{i}" for m, i in zip(MODULES, sides))
                for sides in product((1, 2), repeat=len(MODULES))]
    return [GameConfig(map=map_option).map]


def _automa_seats(opponents, counts, seat, automa):
    """(learner seat, {player count: automa dict or None}) for Automa opponents (A-0)."""
    out = {}
    for n in counts:
        levels = [automa_level(x) for x in opponent_specs(opponents, n - 1)]
        seats = dict(automa or {})
        if any(levels):
            s0 = 0 if seat is None else int(seat)
            seats.update({(s0 + 1 + i) % n: lv for i, lv in enumerate(levels) if lv})
        out[n] = seats or None
    if any(out.values()):
        taken = set().union(*(set(map(int, d)) for d in out.values() if d))
        if seat is None:
            seat = min(set(range(min(counts))) - taken)
        elif int(seat) in taken:
            raise ValueError(f"seat {seat} is an Automa seat; the learner needs a non-Automa seat")
    return seat, out


class CaledoniaVectorEnv(VecEnvMethods):
    """``num_envs`` games, one learning seat each (see module docstring).

    Options: ``num_players`` (2-4, or a sequence to draw from at every reset),
    ``opponents`` (``"random"`` = numba fast path; names / agents / callables =
    Python path, see :mod:`caledonia_env.envs.opponents`), ``seat`` (None: drawn
    per episode), ``reward`` (``"win"``, ``"rank"``, ``"score_diff"``),
    ``illegal_action`` (``"raise"`` or ``"penalize"``: that game ends with
    ``illegal_reward`` and restarts), ``reward_scale`` (multiplies every reward, the
    illegal one too; e.g. 0.01 for ``"vp"``), ``seed``, ``parallel`` (None: prange for
    N >= 16), ``copy`` (return fresh arrays), and the GameConfig fields: ``map``
    (None: a random map per episode), ``first_player``, and the rest (``ruleset``,
    variants, ``clans``…) as given. ``num_players=1, solo=True, reward="vp"``: N solo games
    (R-9.2), reward = final VP. ``"automa:LEVEL"`` opponents (or ``automa={seat: level}``)
    are Automa seats resolved inside the engine (A-0); the learner's seat is then fixed
    (``seat``, default the first non-Automa seat) and the Automa opponents sit after it.
    """

    def __init__(self, num_envs: int = 64, num_players=4, opponents="random", seat=None,
                 reward: str = "win", illegal_action: str = "raise",
                 illegal_reward: float = -1.0, seed: int = 0, parallel: bool | None = None,
                 copy: bool = False, render_mode: str | None = None, reward_scale: float = 1.0,
                 **config):
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if illegal_action not in ("raise", "penalize"):
            raise ValueError(f"illegal_action must be 'raise' or 'penalize', got {illegal_action!r}")
        self.num_envs = int(num_envs)
        counts = tuple(num_players) if isinstance(num_players, (list, tuple)) else (num_players,)
        map_option = config.pop("map", None)
        first = config.pop("first_player", None)
        if "seed" in config:
            raise TypeError("pass seed= once (the vector env's seed)")
        seat, automa_cfg = _automa_seats(opponents, counts, seat, config.pop("automa", None))
        base = [make_config(n, dict(config, map=map_option, first_player=None, automa=automa_cfg[n]))
                for n in counts]
        self.num_players = counts
        if (config.get("solo") or 1 in counts) and reward != "vp":
            raise ValueError("the solo game (num_players=1, solo=True, R-9.2) is scored by its "
                             f"final VP: pass reward='vp' (got reward={reward!r})")
        self.maps = _map_options(map_option)
        if seat is not None and not (0 <= int(seat) < min(counts)):
            raise ValueError(f"seat must be None or in 0..{min(counts) - 1}, got {seat!r}")
        if first is not None and not (0 <= int(first) < min(counts)):
            raise ValueError(f"first_player must be None or in 0..{min(counts) - 1}")
        self.fixed_seat = -1 if seat is None else int(seat)
        self.first_player = -1 if first is None else int(first)
        self.reward_mode = reward
        self._mode = reward_mode(reward)
        self.penalize = illegal_action == "penalize"
        self.illegal_reward = float(illegal_reward)
        if not (isinstance(reward_scale, (int, float, np.floating)) and np.isfinite(reward_scale)
                and reward_scale > 0) or isinstance(reward_scale, bool):
            raise ValueError(f"reward_scale must be a positive finite number, got {reward_scale!r}")
        self.reward_scale = float(reward_scale)
        self.copy = bool(copy)
        self.render_mode = render_mode
        # one static table per (player count, map); each game row points at one
        self.statics, self.configs = [], []
        for cfg in base:
            for sides in self.maps:
                self.statics.append(static_tables(cfg, sides))
                self.configs.append(dataclasses.replace(cfg, map=sides))
        self.tables = np.stack([st.tables for st in self.statics])
        self.automa = automa_switch(self.tables)      # the engine's ``automa`` argument
        self._templates = [None] * len(self.statics)
        self.fixed_table = 0 if len(self.statics) == 1 else -1
        n = self.num_envs
        self.states = np.zeros((n, STATE_SIZE), np.int32)
        self.table_index = np.zeros(n, np.int64)
        self.seats = np.zeros(n, np.int64)
        self.rng = np.zeros(n, np.int64)
        self._obs = np.zeros((2, n, OBS_SIZE), np.float32)
        self._masks = np.zeros((2, n, MASK_WIDTH), np.int8)   # rows padded to whole words
        self._cur = 0
        self.final_obs = np.zeros((n, OBS_SIZE), np.float32)
        self._rewards = np.zeros((2, n), np.float32)
        self._dones = np.zeros((2, n), np.bool_)
        self.scores = np.zeros((n, MAX_PLAYERS), np.int32)
        self.moves = np.zeros(n, np.int64)      # actions applied per env (learner + opponents)
        self._illegal = np.zeros(n, np.bool_)
        self._check_mask = np.zeros(MASK_WIDTH, np.int8)      # a Python opponent's move's check
        self._actions = np.zeros(n, np.int64)
        self._cfg = np.array([self.fixed_table, self.fixed_seat, self.first_player, self._mode,
                              int(self.penalize), 0], np.int64)
        self.parallel = (n >= PARALLEL_MIN_ENVS) if parallel is None else bool(parallel)
        self.observation_space = spaces.Box(0.0, OBS_HIGH, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        # Python opponents (slow path)
        self.fast = all(is_random_spec(x) or automa_level(x) is not None
                        for x in (opponents if isinstance(opponents, (list, tuple)) else [opponents]))
        self._cfg[CFG_ADVANCE] = int(self.fast)     # random / Automa opponents move in numba
        self.opponent_specs = opponents
        self._opponents = None
        self._views = None
        if not self.fast:
            k = max(counts) - 1
            specs = opponent_specs(opponents, k)
            self._opponents = [[make_opponent(spec, seed=i * MAX_PLAYERS + j)
                                for j, spec in enumerate(specs)] for i in range(n)]
            self._views = [None] * n
        self._seed = None if seed is None else check_seed(seed, "seed")
        self._pending_seeds = None
        self._needs_reset = True
        self._first_compile()

    def _args(self, actions, cur, nxt, rows=None):
        """The kernels' arguments after ``op``, for every env or (``rows``, a slice) for those
        rows' games, observations and masks."""
        S, tidx, seats, obs, masks = (self.states, self.table_index, self.seats,
                                      self._obs[nxt], self._masks[nxt])
        if rows is not None:
            S, tidx, seats, obs, masks = S[rows], tidx[rows], seats[rows], obs[rows], masks[rows]
        return (S, self.tables, tidx, seats, self.rng, actions, self._masks[cur], self._cfg, obs,
                masks, self.final_obs, self._rewards[nxt], self._dones[nxt], self.scores,
                self.moves, self._illegal, self.illegal_reward, self.automa)

    def _first_compile(self) -> None:
        """With numba's cache lacking this env's kernels, start the compile helper
        (``engine.compile.helper``) on the engine's part (and the parallel step kernel)
        while this process compiles :func:`vector_call` from ``reset()``; the random or
        Automa opponents' path only."""
        if not self.fast:
            return
        args = self._args(self._actions, self._cur, 1 - self._cur)
        jobs = [(step_parallel, args)] if self.parallel else []
        pc.first_compile(("vector", self.automa is not None, self.parallel),
                         lambda: (pc.cached(vector_call, (OP_RESET,) + args)
                                  and all(pc.cached(k, a) for k, a in jobs)),
                         lambda: pc.engine_jobs(self.tables[0], self.automa) + jobs)

    # ------------------------------------------------------------ reset
    def seed(self, seed: int | None = None):
        """Seed the next reset (SB3 convention)."""
        self._pending_seeds = None if seed is None else check_seed(seed, "seed(seed)")
        return [seed]

    def reset(self, seed: int | None = None):
        """Start a fresh game in every env; returns the observations (N, OBS_SIZE)."""
        if seed is None:
            seed = self._pending_seeds if self._pending_seeds is not None else self._seed
        self._pending_seeds = None
        if seed is not None:
            seed = check_seed(seed, "reset(seed=...)")
        self._seed = None if seed is None else seed + 1
        ss = np.random.SeedSequence(seed)
        self.rng[:] = ss.generate_state(self.num_envs, np.uint64).view(np.int64)
        nxt = 1 - self._cur
        args = self._args(self._actions, self._cur, nxt)
        vector_call(OP_RESET, *args)
        if not self.fast:
            for i in range(self.num_envs):
                self._reset_opponents(i)
                self._py_advance(i)
        vector_call(OP_OBSERVE, *args)
        self._cur = nxt
        self._needs_reset = False
        self._dones[nxt] = False
        self._rewards[nxt] = 0.0
        self.reset_infos = [{"action_mask": m} for m in self._mask_rows()]
        return self._out(self._obs[nxt])

    def _mask_rows(self):
        """The learner's int8 mask of every env now (views of the buffer, as ``_out``)."""
        return self._out(self._masks[self._cur][:, :N_ACTIONS])

    def _out(self, a):
        return a.copy() if self.copy else a

    # ------------------------------------------------------------- step
    def step(self, actions):
        """Apply one learner action per env; returns (obs, rewards, dones, infos)."""
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        actions = action_ids(actions, self.num_envs)
        cur, nxt = self._cur, 1 - self._cur
        if self.fast:
            args = self._args(actions, cur, nxt)
            bad = step_parallel(*args) if self.parallel else vector_call(OP_STEP, *args)
            if bad >= 0:
                self._raise_illegal(bad, int(actions[bad]))
        else:
            if not self.penalize:
                bad = first_illegal(self._masks[cur], actions)
                if bad >= 0:
                    self._raise_illegal(bad, int(actions[bad]))
            self._step_python(actions, cur, nxt)
        if self.reward_scale != 1.0:
            self._rewards[nxt] *= self.reward_scale
        self._cur = nxt
        return (self._out(self._obs[nxt]), self._out(self._rewards[nxt]),
                self._out(self._dones[nxt]), self._infos())

    def _step_python(self, actions, cur, nxt):
        m = self._masks[cur]
        a_ok = (actions >= 0) & (actions < N_ACTIONS)
        illegal = self._illegal
        illegal[:] = False
        if self.penalize:
            illegal[:] = ~a_ok
            illegal[a_ok] = m[np.flatnonzero(a_ok), actions[a_ok]] == 0
        args = self._args(actions, cur, nxt)
        vector_call(OP_APPLY, *args)
        for i in range(self.num_envs):
            if not illegal[i]:
                self.moves[i] += 1 + self._py_advance(i)
        vector_call(OP_SETTLE, *args)
        for i in np.flatnonzero(self._dones[nxt]):
            self._reset_opponents(i)
            self.moves[i] += self._py_advance(i)
        vector_call(OP_OBSERVE, *args)

    def _raise_illegal(self, i, a):
        view = self._game_view(i)
        if 0 <= a < N_ACTIONS:
            what = f"action {a} {view.describe_action(a)!r}"
        else:
            what = f"action id {a} (outside 0..{N_ACTIONS - 1})"
        legal = np.flatnonzero(self._masks[self._cur][i])
        shown = ", ".join(repr(view.describe_action(x)) for x in legal[:8])
        raise IllegalActionError(f"env {i}: {what} is not legal for seat {int(self.seats[i])} "
                                 f"in context {view.context!r}; legal: {shown}"
                                 f"{' …' if len(legal) > 8 else ''} (no env was stepped)")

    def _infos(self):
        """Each env's ``action_mask`` (the next decision's: the new game's after an
        auto-reset) and, at a game's end, its last observation and scores."""
        infos = [{"action_mask": m} for m in self._mask_rows()]
        dones = self._dones[self._cur]
        if not dones.any():
            return infos
        for i in np.flatnonzero(dones):
            infos[i].update({"terminal_observation": self.final_obs[i].copy(),
                             "scores": [int(x) for x in self.scores[i] if x >= 0],
                             "TimeLimit.truncated": False})
        return infos

    # --------------------------------------------------- python opponents
    def _game_view(self, i) -> Game:
        """A Game whose state is row i (shared memory; no history)."""
        k = int(self.table_index[i])
        g = self._views[i] if self._views is not None else None
        if g is None or g.static is not self.statics[k]:
            if self._templates[k] is None:
                self._templates[k] = Game(self.configs[k])
            g = self._templates[k].clone()
            if self._views is not None:
                self._views[i] = g
        g.state = self.states[i]
        g.history = []
        return g

    def _reset_opponents(self, i):
        base = int(self.rng[i]) & 0x3FFFFFFF
        for j, agent in enumerate(self._opponents[i]):
            reset_opponent(agent, base + j)

    def _py_advance(self, i):
        """Python opponents play env i until its learner decides; returns their moves."""
        g = self._game_view(i)
        k = 0
        seat = int(self.seats[i])
        s = g.state
        n = g.num_players
        while not game_over(s) and s[S_PLAYER] != seat:
            p = int(s[S_PLAYER])
            agent = self._opponents[i][(p - seat) % n - 1]
            a = int(agent.act(g))
            legal_mask(s, g.tables, self._check_mask)
            if not (0 <= a < N_ACTIONS and self._check_mask[a]):
                raise IllegalActionError(f"env {i}: opponent {agent!r} at seat {p} chose "
                                         f"illegal action {a} in context {g.context!r}")
            apply_action(s, g.tables, a, self.automa)
            k += 1
        return k

    # -------------------------------------------------------- accessors
    def action_masks(self) -> np.ndarray:
        """bool[N, N_ACTIONS]: the learner's legal actions in every env."""
        return self._masks[self._cur][:, :N_ACTIONS].astype(bool)

    @property
    def observations(self) -> np.ndarray:
        """The current observations (N, OBS_SIZE) (a view of the internal buffer)."""
        return self._obs[self._cur]

    @property
    def rewards(self) -> np.ndarray:
        """The rewards of the last step (N,)."""
        return self._rewards[self._cur]

    @property
    def dones(self) -> np.ndarray:
        """Which games ended in the last step (N,) (they are already reset)."""
        return self._dones[self._cur]

    def sample_actions(self, rng_state=None) -> np.ndarray:
        """A uniformly random legal action per env (numba; its own rng stream)."""
        if rng_state is None:
            if not hasattr(self, "_sample_rng"):
                self._sample_rng = np.random.SeedSequence(12345).generate_state(
                    self.num_envs, np.uint64).view(np.int64).copy()
            rng_state = self._sample_rng
        out = np.empty(self.num_envs, np.int64)
        sample_legal_actions(self._masks[self._cur], rng_state, out)
        return out

    def set_state(self, i: int, game: Game, seat: int) -> None:
        """Load a position into env i (e.g. a scenario start): ``game``'s state, learner ``seat``.

        The game's map and player count must be among this env's tables; the
        observation and mask of env i are recomputed in the current buffers.
        """
        key = (game.num_players, tuple(game.map))
        for k, cfg in enumerate(self.configs):
            if (cfg.num_players, tuple(cfg.map)) == key and \
                    np.array_equal(self.statics[k].tables, game.tables):
                break
        else:
            raise ValueError(f"no table of this env matches the game ({game.num_players} players, "
                             f"map {','.join(game.map)}, same ruleset and variants)")
        if not 0 <= seat < game.num_players:
            raise ValueError(f"seat must be in 0..{game.num_players - 1}")
        self.states[i] = game.state
        self.table_index[i] = k
        self.seats[i] = seat
        c = self._cur
        vector_call(OP_OBSERVE, *self._args(self._actions, c, c, slice(i, i + 1)))

    def game(self, i) -> Game:
        """A Game copy of env i's current game (for inspection / rendering)."""
        return self._game_view(i).clone()

    # ---------------------------------------------------- SB3 interface
    def step_async(self, actions):
        self._async_actions = actions

    def step_wait(self):
        return self.step(self._async_actions)

    def close(self):
        pass

    def get_images(self):
        return [render(self.game(i), "rgb_array") for i in range(self.num_envs)]

    def render(self, mode=None):
        return render(self.game(0), mode or self.render_mode or "ansi")


_SB3_CLASS = None


def make_sb3_vec_env(num_envs: int = 64, **options):
    """The vector env as a ``stable_baselines3`` ``VecEnv`` (needs the ``train`` extra).
    At each episode end ``infos[i]["episode"]`` holds ``{"r": return, "l": length in
    learner steps, "t": seconds since the env was made}``, as SB3's ``VecMonitor`` adds
    them, so SB3 logs ``rollout/ep_rew_mean`` and ``ep_len_mean``."""
    global _SB3_CLASS
    if _SB3_CLASS is None:
        from stable_baselines3.common.vec_env import VecEnv   # the optional train extra

        class CaledoniaSB3VecEnv(CaledoniaVectorEnv, VecEnv):
            """:class:`CaledoniaVectorEnv` registered as an SB3 VecEnv, with episode stats."""

            def __init__(self, num_envs=64, **kw):
                CaledoniaVectorEnv.__init__(self, num_envs, **kw)
                VecEnv.__init__(self, self.num_envs, self.observation_space, self.action_space)
                self._t_start = time.time()
                self._ep_returns = np.zeros(self.num_envs, np.float64)
                self._ep_lengths = np.zeros(self.num_envs, np.int64)

            def reset(self, seed=None):
                if seed is None and self._seeds[0] is not None:
                    seed = self._seeds[0]
                obs = CaledoniaVectorEnv.reset(self, seed)
                self._reset_seeds()
                self._ep_returns[:] = 0.0
                self._ep_lengths[:] = 0
                return obs

            def seed(self, seed=None):
                return VecEnv.seed(self, seed)

            def step(self, actions):
                obs, rewards, dones, infos = CaledoniaVectorEnv.step(self, actions)
                self._ep_returns += rewards
                self._ep_lengths += 1
                for i in np.flatnonzero(dones):
                    infos[i]["episode"] = {"r": round(float(self._ep_returns[i]), 6),
                                           "l": int(self._ep_lengths[i]),
                                           "t": round(time.time() - self._t_start, 6)}
                    self._ep_returns[i] = 0.0
                    self._ep_lengths[i] = 0
                return obs, rewards, dones, infos

            def render(self, mode=None):
                return CaledoniaVectorEnv.render(self, mode)

            def get_images(self):
                return CaledoniaVectorEnv.get_images(self)

        _SB3_CLASS = CaledoniaSB3VecEnv
    return _SB3_CLASS(num_envs, **options)
