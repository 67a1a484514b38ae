"""MaskablePPO self-play training (``caledonia train``).

Two phases over one model (same number of envs):

1. **fast** (the first ``fast_fraction`` of the timesteps): the numba vector env
   (:func:`caledonia_env.envs.make_sb3_vec_env`), uniformly random opponents,
   hundreds of thousands of env steps per second — the cheap way to learn the
   basics of the game;
2. **self-play** (the rest): :class:`train.selfplay.SelfPlayVecEnv`, each
   opponent seat drawn per episode from the ``opponents`` mix (current policy,
   past snapshots, bots).

Every ``eval_every`` steps the deterministic policy plays ``eval_games`` games
against each ``eval_vs`` bot (the same games every time); the win rates with
Wilson 95% intervals go to ``eval.csv`` and TensorBoard, and the checkpoint
with the best mean win rate is kept as ``best.zip``. ``checkpoint_every``
steps write ``checkpoints/step_N.zip``, ``last.zip`` and ``resume.pt``
(optimizer state; weights only) for ``--resume``.

**Solo** (``game={"solo": True}``, ``players=1``, R-9.2): the fast phase is the whole run (there
are no opponents), the reward is the final VP times ``reward_scale`` (default 0.01 from the CLI),
and each evaluation plays ``eval_games`` solo games: mean VP with a 95% CI, the share of each
rating band; ``best.zip`` is the checkpoint with the highest mean VP.

The run's parts: :mod:`train.config` (settings), :mod:`train.model` (the network),
:mod:`train.runstate` (init, resume, checkpoints, snapshots), :mod:`train.periodic_eval`
(evaluations, ``best.zip``), :mod:`train.runlog` (CSV logs); this module
runs the loop.

Run folder: ``config.json``, ``eval.csv``, ``train.csv``, ``tb/`` (TensorBoard),
``best.zip``, ``last.zip``, ``resume.pt``, ``checkpoints/``, ``pool/``,
``curve.png``.
"""
from __future__ import annotations

import json
import os
import time
from collections import deque
from dataclasses import asdict

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import configure

from caledonia_env.agents import checkpoint as ckpt
from caledonia_env.envs import make_sb3_vec_env
from caledonia_env.tournament import progress_bar
from caledonia_env.train.config import TrainConfig, load_config  # noqa: F401  (re-exported: documented here)
from caledonia_env.train.periodic_eval import EvaluationMixin
from caledonia_env.train.league import League
from caledonia_env.train.model import build_model
from caledonia_env.train.plot import plot_run
from caledonia_env.train.runlog import (EVAL_FIELDS, RUN_FILES, TRAIN_FIELDS,  # noqa: F401  (re-exported)
                     append_csv, read_csv)
from caledonia_env.train.runstate import CheckpointMixin
from caledonia_env.train.selfplay import OpponentMix, SelfPlayVecEnv, SnapshotPool


class TrainerCallback(BaseCallback):
    """SB3's hooks into the trainer: episode statistics, pool syncs, evaluations,
    checkpoints and the time limit (:meth:`Trainer._on_step`)."""

    def __init__(self, trainer: "Trainer"):
        super().__init__()
        self.trainer = trainer

    def _on_training_start(self):
        self._acc_r = np.zeros(self.trainer.cfg.n_envs)
        self._acc_l = np.zeros(self.trainer.cfg.n_envs, np.int64)

    def _on_rollout_start(self):
        if self.trainer.phase == "self-play":
            self.trainer.pool.sync(ckpt.actor_state(self.model.policy.state_dict()))

    def _on_step(self):
        return self.trainer._on_step(self)

    def _on_rollout_end(self):
        self.trainer._on_rollout_end()


class Trainer(CheckpointMixin, EvaluationMixin):
    """Runs (or resumes) one training run in ``cfg.out``."""

    def __init__(self, cfg: TrainConfig, resume: bool = False, progress: bool = True,
                 log=print):
        self.cfg = cfg
        self.out = cfg.out
        self._log = log
        self.bar = None
        self.resume = resume
        self.show_progress = progress
        self.model = None
        self.pool = None
        self.league = None
        self.selfplay_env = None
        self.best_score = -1.0
        self.wall_before = 0.0          # wall time of earlier sessions (resume)
        self.t0 = time.perf_counter()
        self.next = {}
        self.episodes = 0
        self.ep_rewards = deque(maxlen=200)
        self.ep_wins = deque(maxlen=200)
        self.ep_lens = deque(maxlen=200)
        self.last_eval: dict = {}
        self.phase = "fast"

    def log(self, msg):
        if self.bar is not None:
            self.bar.clear()
        self._log(msg)

    # ---------------------------------------------------------- paths
    def path(self, *parts):
        return os.path.join(self.out, *parts)

    def wall(self) -> float:
        return self.wall_before + time.perf_counter() - self.t0

    # ---------------------------------------------------------- setup
    def _make_fast_env(self):
        cfg = self.cfg
        return make_sb3_vec_env(cfg.n_envs, num_players=cfg.players, reward=cfg.reward,
                                reward_scale=cfg.reward_scale, seed=cfg.seed, map=cfg.map,
                                **cfg.game)

    def _make_selfplay_env(self):
        cfg = self.cfg
        if self.selfplay_env is None:
            self.league = League(cfg.league_window, cfg.pfsp_power, path=self.path("league.csv"))
            self.selfplay_env = SelfPlayVecEnv(cfg.n_envs, cfg.players, OpponentMix(cfg.opponents),
                                               self.pool, reward=cfg.reward,
                                               seed=cfg.seed + 1, map=cfg.map,
                                               game_kw=cfg.game, reward_scale=cfg.reward_scale,
                                               league=self.league, shaping=cfg.shaping,
                                               gamma=cfg.gamma)
        return self.selfplay_env

    def setup(self):
        cfg = self.cfg
        cfg.validate()
        if cfg.threads > 0:
            torch.set_num_threads(cfg.threads)
        torch.manual_seed(cfg.seed)
        os.makedirs(self.out, exist_ok=True)
        self.pool = SnapshotPool(cfg.arch(), cfg.pool_size, seed=cfg.seed)
        state = None
        if self.resume:
            state = self._load_resume()
        first_env = (self._make_fast_env() if cfg.fast_steps > (state or {}).get("num_timesteps", 0)
                     else self._make_selfplay_env())
        self.phase = "fast" if first_env is not self.selfplay_env else "self-play"
        self.model = build_model(cfg, first_env)
        self.model.set_logger(configure(self.path("tb"), ["tensorboard"]))
        if state is not None:
            self._apply_resume(state)
        else:
            if cfg.init:
                self._apply_init()
            for k in ("eval", "checkpoint", "snapshot"):
                self.next[k] = getattr(cfg, f"{k}_every")
        with open(self.path("config.json"), "w") as f:     # last: a failed --init leaves no run
            json.dump(asdict(cfg), f, indent=1)
        self.pool.sync(ckpt.actor_state(self.model.policy.state_dict()))

    # ---------------------------------------------------------- loop
    def _on_step(self, cb) -> bool:
        rewards = cb.locals["rewards"]
        dones = cb.locals["dones"]
        infos = cb.locals["infos"]
        cb._acc_r += rewards
        cb._acc_l += 1
        for i in np.flatnonzero(dones):
            self.episodes += 1
            self.ep_rewards.append(float(cb._acc_r[i]) / self.cfg.reward_scale)
            self.ep_lens.append(int(cb._acc_l[i]))
            win = infos[i].get("win")
            self.ep_wins.append(float(win) if win is not None else float(rewards[i] > 0))
            cb._acc_r[i] = 0.0
            cb._acc_l[i] = 0
        t = self.model.num_timesteps
        if t >= self.next["snapshot"]:
            self.next["snapshot"] = t + self.cfg.snapshot_every
            if self.phase == "self-play":
                self.snapshot()
        if t >= self.next["eval"]:
            self.next["eval"] = t + self.cfg.eval_every
            self.evaluate()
            self.write_league()
            self.bar.set_postfix_str(self._progress_note, refresh=False)
        if t >= self.next["checkpoint"]:
            self.next["checkpoint"] = t + self.cfg.checkpoint_every
            self.save_checkpoint()
        self.bar.update(t - self.bar.n)
        if self.cfg.max_minutes and self.wall() >= 60 * self.cfg.max_minutes:
            if not self.timed_out:
                self.log(f"\n--max-minutes {self.cfg.max_minutes:g} reached at {t:,} steps; "
                         f"stopping")
            self.timed_out = True
            return False
        return True

    def _on_rollout_end(self):
        t = int(self.model.num_timesteps)
        lg = self.model.logger
        if self.ep_rewards:
            ep_r = float(np.mean(self.ep_rewards))
            ep_w = float(np.mean(self.ep_wins))
            ep_l = float(np.mean(self.ep_lens))
            lg.record("rollout/ep_rew_mean", ep_r)
            lg.record("rollout/win_rate", ep_w)
            lg.record("rollout/ep_len_mean", ep_l)
            fps = (t - self._session_start) / max(time.perf_counter() - self.t0, 1e-9)
            append_csv(self.path("train.csv"), TRAIN_FIELDS,
                       dict(timesteps=t, wall_seconds=round(self.wall(), 1), phase=self.phase,
                            episodes=self.episodes, ep_reward=round(ep_r, 4),
                            win_rate=round(ep_w, 4), ep_len=round(ep_l, 1), fps=round(fps)))
        if self.phase == "self-play" and self.selfplay_env is not None:
            lg.record("selfplay/pool_size", len(self.pool.snapshots))
            for r in self.league.table():
                lg.record(f"league/elo_{r['agent']}", r["elo"])

    def run(self):
        """Train to ``cfg.timesteps`` (total, counting earlier sessions); returns the run dir."""
        if self.model is None:
            self.setup()
        cfg = self.cfg
        m = self.model
        self._session_start = int(m.num_timesteps)
        self._progress_note = ""
        self.bar = progress_bar(cfg.timesteps, "training", not self.show_progress, unit="step",
                                start=m.num_timesteps, scale=True)
        n_params = sum(p.numel() for p in m.policy.parameters())
        if cfg.solo:
            self.log(f"training solo (R-9.2) MaskablePPO to {cfg.timesteps:,} steps in "
                     f"{self.out} in the numba vector env, reward final VP x "
                     f"{cfg.reward_scale:g}; {n_params:,} parameters")
        else:
            self.log(f"training {cfg.players}-player MaskablePPO to {cfg.timesteps:,} steps in "
                     f"{self.out}: {cfg.fast_steps:,} vs numba random opponents, then self-play "
                     f"({cfg.opponents}); {n_params:,} parameters")
        cb = TrainerCallback(self)
        interrupted = False
        self.timed_out = False
        if m.num_timesteps == 0 and not read_csv(self.path("eval.csv")):
            self.evaluate()             # the untrained policy: the curve's first point
        try:
            if m.num_timesteps < cfg.fast_steps:
                self.phase = "fast"
                m.learn(cfg.fast_steps - m.num_timesteps, callback=cb, reset_num_timesteps=False)
            if m.num_timesteps < cfg.timesteps and not self.timed_out:
                if self.phase != "self-play":
                    self.phase = "self-play"
                    m.set_env(self._make_selfplay_env())
                    self.pool.sync(ckpt.actor_state(m.policy.state_dict()))
                    if not self.pool.snapshots:
                        self.snapshot()
                m.learn(cfg.timesteps - m.num_timesteps, callback=cb, reset_num_timesteps=False)
        except KeyboardInterrupt:
            interrupted = True
            self.log(f"\ninterrupted at {m.num_timesteps:,} steps; saving last.zip and "
                     f"resume.pt (continue with --resume)")
        finally:
            self.bar.close()
        if not interrupted and not any(int(r["timesteps"]) == m.num_timesteps
                                       for r in read_csv(self.path("eval.csv"))):
            self.evaluate()
        self.save_checkpoint(final=True)
        self.write_league()
        try:
            plot_run(self.out, self.path("curve.png"))
        except Exception as e:       # the curve is a convenience; never lose the run over it
            self.log(f"(learning curve not drawn: {e})")
        best = (f"best mean solo VP {self.best_score:.1f}" if cfg.solo else
                f"best mean eval win rate {100 * self.best_score:.1f}%")
        self.log(f"done: {m.num_timesteps:,} steps in {self.wall() / 60:.1f} min; {best} -> "
                 f"{self.path('best.zip')}")
        if interrupted:
            raise KeyboardInterrupt
        return self.out


def train(cfg: TrainConfig, resume: bool = False, progress: bool = True, log=print) -> str:
    """Train (or resume) a run; see :class:`Trainer`."""
    if not resume and os.path.exists(os.path.join(cfg.out, "config.json")):
        raise FileExistsError(f"{cfg.out} already holds a training run; pass --resume to "
                              f"continue it or choose another --out")
    return Trainer(cfg, resume=resume, progress=progress, log=log).run()
