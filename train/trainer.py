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

Run folder: ``config.json``, ``eval.csv``, ``train.csv``, ``tb/`` (TensorBoard),
``best.zip``, ``last.zip``, ``resume.pt``, ``checkpoints/``, ``pool/``,
``curve.png``.
"""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import sys
import time
from collections import deque
from dataclasses import asdict, dataclass

import numpy as np

from ..agents import checkpoint as ckpt
from ..atomic import atomic_path

RUN_FILES = ("config.json", "eval.csv", "train.csv", "best.zip", "last.zip", "resume.pt")
EVAL_FIELDS = ("timesteps", "wall_seconds", "opponent", "games", "wins", "win_rate", "ci_low",
               "ci_high", "vp", "opp_vp", "vp_ci_low", "vp_ci_high", "bands")
TRAIN_FIELDS = ("timesteps", "wall_seconds", "phase", "episodes", "ep_reward", "win_rate",
                "ep_len", "fps")


@dataclass
class TrainConfig:
    """Every setting of a run (saved as ``config.json``; ``--resume`` reads it back)."""
    players: int = 2
    timesteps: int = 2_000_000
    out: str = "runs/ppo"
    seed: int = 0
    # PPO
    n_envs: int = 32
    n_steps: int = 128
    batch_size: int = 512
    n_epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 0.999
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net: str = "256:128"
    activation: str = "relu"
    reward: str = "score_diff"
    reward_scale: float = 1.0
    shaping: float = 0.0           # potential-based shaping weight (self-play phase only)
    # opponents
    fast_fraction: float = 0.3
    opponents: str = "self=0.25,snapshot=0.25,greedy=0.3,random=0.2"
    snapshot_every: int = 100_000
    pool_size: int = 10
    league_window: int = 2000
    pfsp_power: float = 2.0
    # evaluation / checkpoints
    eval_every: int = 100_000
    eval_games: int = 200
    eval_vs: str = "random,greedy"
    checkpoint_every: int = 100_000
    keep_checkpoints: int = 5
    # game and machine
    map: str | None = None
    game: dict = dataclasses.field(default_factory=dict)   # GameConfig options: clans, variants…
    threads: int = 0
    max_minutes: float = 0.0
    init: str | None = None        # a checkpoint to start from ("pretrained": the shipped one)

    def validate(self) -> None:
        from caledonia_env.envs.rewards import REWARD_MODES
        from .selfplay import OpponentMix
        if self.solo:
            if self.players != 1:
                raise ValueError(f"the solo game (R-9.2) has one player, got --players "
                                 f"{self.players}")
            if self.reward != "vp":
                raise ValueError(f"the solo game is scored by its final VP: --reward vp "
                                 f"(got {self.reward!r})")
            if self.fast_fraction != 1.0:
                raise ValueError("the solo game has no opponents to self-play against: "
                                 "--fast-fraction must be 1")
        elif self.players not in (2, 3, 4):
            raise ValueError(f"--players must be 2, 3 or 4 (1 with --solo), got {self.players}")
        if not (self.reward_scale > 0 and np.isfinite(self.reward_scale)):
            raise ValueError(f"--reward-scale must be a positive number, got {self.reward_scale}")
        for name in ("timesteps", "n_envs", "n_steps", "batch_size", "n_epochs", "eval_games",
                     "eval_every", "checkpoint_every", "snapshot_every", "pool_size",
                     "keep_checkpoints", "league_window"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got "
                                 f"{getattr(self, name)}")
        if self.max_minutes < 0:
            raise ValueError(f"--max-minutes must be >= 0 (0: no limit), got {self.max_minutes}")
        if not self.pfsp_power >= 0:
            raise ValueError(f"--pfsp-power must be >= 0, got {self.pfsp_power}")
        if not 0.0 <= self.fast_fraction <= 1.0:
            raise ValueError(f"--fast-fraction must be in [0, 1], got {self.fast_fraction}")
        if not (np.isfinite(self.shaping) and self.shaping >= 0):
            raise ValueError(f"--shaping must be a number >= 0, got {self.shaping}")
        if self.shaping and self.fast_fraction > 0:
            raise ValueError("--shaping shapes the self-play phase only (the numba fast phase "
                             "has terminal rewards): use it with --fast-fraction 0, e.g. with "
                             "--init from a fast-phase run")
        if self.reward not in REWARD_MODES:
            raise ValueError(f"--reward must be one of {REWARD_MODES}, got {self.reward!r}")
        if not (self.learning_rate > 0 and 0 < self.gamma <= 1 and 0 <= self.gae_lambda <= 1):
            raise ValueError("learning rate must be > 0, gamma in (0, 1], gae-lambda in [0, 1]")
        self.arch()
        if self.fast_fraction < 1.0:
            OpponentMix(self.opponents)
        self.eval_opponents()
        from caledonia_env.config import GameConfig
        GameConfig(num_players=self.players, map=self.map, **self.game)

    def arch(self) -> ckpt.Arch:
        return ckpt.Arch.parse(self.net, activation=self.activation)

    @property
    def solo(self) -> bool:
        return bool(self.game.get("solo"))

    def eval_opponents(self) -> list[str]:
        if self.solo:
            return []
        names = [x.strip() for x in self.eval_vs.split(",") if x.strip()]
        if names:
            from caledonia_env import agents
            for n in names:
                if not n.startswith("ppo:"):
                    agents.make(n, seed=0)
        return names

    @property
    def fast_steps(self) -> int:
        return int(round(self.fast_fraction * self.timesteps))


def _policy_kwargs(arch: ckpt.Arch):
    import torch.nn as nn
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    act = ckpt._activation(arch.activation)

    class CaledoniaExtractor(BaseFeaturesExtractor):
        """One dense layer shared by the policy and value heads (keeps checkpoints small:
        most weights sit on the 5019-wide input)."""

        def __init__(self, observation_space, features_dim=256):
            super().__init__(observation_space, features_dim)
            self.net = nn.Sequential(nn.Linear(observation_space.shape[0], features_dim), act())

        def forward(self, obs):
            return self.net(obs)

    return dict(features_extractor_class=CaledoniaExtractor,
                features_extractor_kwargs=dict(features_dim=arch.features_dim),
                net_arch=dict(pi=list(arch.pi), vf=list(arch.vf)), activation_fn=act)


def build_model(cfg: TrainConfig, env):
    """A MaskablePPO with the run's hyperparameters and network on ``env``."""
    from sb3_contrib import MaskablePPO
    arch = cfg.arch()
    model = MaskablePPO("MlpPolicy", env, learning_rate=cfg.learning_rate, n_steps=cfg.n_steps,
                        batch_size=cfg.batch_size, n_epochs=cfg.n_epochs, gamma=cfg.gamma,
                        gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_range,
                        ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef,
                        max_grad_norm=cfg.max_grad_norm, policy_kwargs=_policy_kwargs(arch),
                        seed=cfg.seed, device="cpu", verbose=0)
    model.caledonia_arch = arch
    return model


def _append_csv(path, fields, row):
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fields), extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow(row)


def read_csv(path) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------- progress
def progress_bar(total: int, start: int = 0, enabled: bool = True):
    """A tqdm bar of training steps on stderr; silent when disabled or when stderr is not a
    terminal (log files get the evaluation lines instead)."""
    from tqdm import tqdm
    return tqdm(total=total, initial=start, unit="step", unit_scale=True, file=sys.stderr,
                disable=None if enabled else True, dynamic_ncols=True, mininterval=0.5)


# ---------------------------------------------------------------- trainer
def _with_extractor_aliases(sd: dict) -> dict:
    """SB3 lists a shared features extractor three times (``features_extractor``,
    ``pi_features_extractor``, ``vf_features_extractor``); a file written outside SB3
    (``caledonia expert``) holds it once. Add the two aliases where they are missing."""
    out = dict(sd)
    for k, v in sd.items():
        if k.startswith("features_extractor."):
            for alias in ("pi_", "vf_"):
                out.setdefault(alias + k, v)
    return out


class Trainer:
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
        from caledonia_env.envs import make_sb3_vec_env
        cfg = self.cfg
        return make_sb3_vec_env(cfg.n_envs, num_players=cfg.players, reward=cfg.reward,
                                reward_scale=cfg.reward_scale, seed=cfg.seed, map=cfg.map,
                                **cfg.game)

    def _make_selfplay_env(self):
        from .league import League
        from .selfplay import OpponentMix, SelfPlayVecEnv
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
        import torch
        from .selfplay import SnapshotPool
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
        from stable_baselines3.common.logger import configure
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

    def init_path(self) -> str:
        return (ckpt.pretrained_path(self.cfg.players) if self.cfg.init == "pretrained"
                else self.cfg.init)

    def _apply_init(self):
        """``--init``: the policy (and value head, if saved) of a checkpoint of the same
        architecture; the optimizer and the counters start fresh."""
        path = self.init_path()
        ck = ckpt.load(path)
        if ck.arch != self.model.caledonia_arch:
            raise ckpt.CheckpointError(
                f"--init {path}: its network is {ck.arch.to_dict()}, this run's --net / "
                f"--activation give {self.model.caledonia_arch.to_dict()}")
        own = self.model.policy.state_dict()
        theirs = _with_extractor_aliases(ck.state_dict)
        missing = [k for k in own if k not in theirs]
        if any(not k.startswith("value_net.") and not k.startswith("mlp_extractor.value_net.")
               for k in missing):
            raise ckpt.CheckpointError(f"--init {path}: policy tensors missing: {missing[:4]}")
        own.update({k: v for k, v in theirs.items() if k in own})
        self.model.policy.load_state_dict(own)
        self.log(f"initialized from {path} ({ck.meta.get('timesteps', 0):,} steps"
                 f"{'; value head fresh' if missing else ''})")

    def _load_resume(self) -> dict:
        import torch
        last, res = self.path("last.zip"), self.path("resume.pt")
        if not (os.path.exists(last) and os.path.exists(res)):
            raise ckpt.CheckpointError(f"--resume: {self.out} has no last.zip / resume.pt to "
                                       f"resume from (run without --resume to start it)")
        state = torch.load(res, map_location="cpu", weights_only=True)
        state["last"] = ckpt.load(last)
        return state

    def _apply_resume(self, state):
        ck = state["last"]
        self.model.policy.load_state_dict(ck.state_dict)
        self.model.policy.optimizer.load_state_dict(state["optimizer"])
        self.model.num_timesteps = int(state["num_timesteps"])
        self.model._n_updates = int(state.get("n_updates", 0))
        self.best_score = float(state.get("best_score", -1.0))
        self.wall_before = float(state.get("wall_seconds", 0.0))
        self.episodes = int(state.get("episodes", 0))
        for k in ("eval", "checkpoint", "snapshot"):
            self.next[k] = int(state.get(f"next_{k}", self.model.num_timesteps))
        pool_dir = self.path("pool")
        if os.path.isdir(pool_dir):
            files = sorted(f for f in os.listdir(pool_dir) if f.endswith(".zip"))
            for f in files[-self.cfg.pool_size:]:
                snap = ckpt.load(os.path.join(pool_dir, f))
                self.pool.add(ckpt.actor_state(snap.state_dict), f[:-4])
        self.log(f"resuming {self.out} at {self.model.num_timesteps:,} steps "
                 f"({len(self.pool.snapshots)} snapshots in the pool)")

    # ---------------------------------------------------------- saving
    def meta(self, **extra) -> dict:
        return ckpt.make_meta(self.model.caledonia_arch, self.cfg.players,
                              int(self.model.num_timesteps), train=asdict(self.cfg),
                              wall_seconds=round(self.wall(), 1), **extra)

    def save_checkpoint(self, final=False):
        m = self.model
        sd = m.policy.state_dict()
        meta = self.meta(eval=self.last_eval)
        if not final:
            name = self.path("checkpoints", f"step_{m.num_timesteps:09d}.zip")
            ckpt.save(name, sd, meta)
            folder = self.path("checkpoints")
            old = sorted(f for f in os.listdir(folder) if f.startswith("step_"))
            for f in old[:-self.cfg.keep_checkpoints]:
                os.unlink(os.path.join(folder, f))
        ckpt.save(self.path("last.zip"), sd, meta)
        import torch
        state = {"num_timesteps": int(m.num_timesteps), "n_updates": int(m._n_updates),
                 "optimizer": m.policy.optimizer.state_dict(), "best_score": self.best_score,
                 "wall_seconds": self.wall(), "episodes": self.episodes,
                 **{f"next_{k}": int(v) for k, v in self.next.items()}}
        with atomic_path(self.path("resume.pt"), ".pt") as tmp:
            torch.save(state, tmp)

    def snapshot(self):
        sd = self.model.policy.state_dict()
        label = f"step_{self.model.num_timesteps:09d}"
        ckpt.save(self.path("pool", label + ".zip"), sd, self.meta())
        self.pool.add(ckpt.actor_state(sd), label)

    # ---------------------------------------------------------- evaluation
    def evaluate(self):
        from ..agents.policy import PolicyPlayer
        from .players import play_games, summarize
        cfg = self.cfg
        actor = ckpt.build_actor(self.model.caledonia_arch, *ckpt.spaces())
        actor.load_state_dict(ckpt.actor_state(self.model.policy.state_dict()))
        actor.eval()
        player = PolicyPlayer(actor, deterministic=True, name="learner")
        if cfg.solo:
            return self._evaluate_solo(player)
        results = {}
        t = int(self.model.num_timesteps)
        for opp in cfg.eval_opponents():
            rows = play_games([player] + [opp] * (cfg.players - 1), cfg.eval_games,
                              num_players=cfg.players, seed=cfg.seed + 7919,
                              map=cfg.map, game_kw=cfg.game)
            st = summarize(rows, role=0)
            results[opp] = st
            _append_csv(self.path("eval.csv"), EVAL_FIELDS,
                        dict(timesteps=t, wall_seconds=round(self.wall(), 1), opponent=opp,
                             **{k: (round(v, 4) if isinstance(v, float) else v)
                                for k, v in st.items()}))
            lg = self.model.logger
            lg.record(f"eval/win_rate_vs_{opp}", st["win_rate"])
            lg.record(f"eval/ci_low_vs_{opp}", st["ci_low"])
            lg.record(f"eval/vp_vs_{opp}", st["vp"])
            lg.record(f"eval/opp_vp_vs_{opp}", st["opp_vp"])
        self.model.logger.dump(step=t)
        self.last_eval = {k: {kk: round(vv, 4) for kk, vv in v.items()} for k, v in results.items()}
        text = "  ".join(f"{o} {100 * s['win_rate']:.1f}% [{100 * s['ci_low']:.0f}-"
                         f"{100 * s['ci_high']:.0f}] VP {s['vp']:.0f}:{s['opp_vp']:.0f}"
                         for o, s in results.items())
        score = float(np.mean([s["win_rate"] for s in results.values()])) if results else 0.0
        best = ""
        if results and score > self.best_score:
            self.best_score = score
            ckpt.save(self.path("best.zip"), self.model.policy.state_dict(),
                      self.meta(eval=self.last_eval))
            best = "  -> best.zip"
        self._progress_note = " ".join(f"{o} {100 * s['win_rate']:.0f}%" for o, s in results.items())
        self.log(f"eval @ {t:,} steps ({self.wall() / 60:.1f} min): {text}{best}")
        return results

    def _evaluate_solo(self, player):
        """R-9.2: mean final VP of ``eval_games`` solo games (95% CI) and the rating bands."""
        from caledonia_env.tournament import solo_summary
        from .players import play_games
        cfg = self.cfg
        t = int(self.model.num_timesteps)
        rows = play_games([player], cfg.eval_games, num_players=1, seed=cfg.seed + 7919,
                          map=cfg.map, game_kw=cfg.game)
        st = solo_summary(rows, cfg.game)
        bands = " ".join(f"{k}={v}" for k, v in st["bands"].items())
        _append_csv(self.path("eval.csv"), EVAL_FIELDS,
                    dict(timesteps=t, wall_seconds=round(self.wall(), 1), opponent="solo",
                         games=st["games"], vp=round(st["vp"], 2),
                         vp_ci_low=round(st["vp_ci_low"], 2),
                         vp_ci_high=round(st["vp_ci_high"], 2), bands=bands))
        lg = self.model.logger
        lg.record("eval/solo_vp", st["vp"])
        lg.record("eval/solo_vp_ci_low", st["vp_ci_low"])
        lg.dump(step=t)
        self.last_eval = {"solo": {"vp": round(st["vp"], 2), "games": st["games"],
                                   "bands": st["bands"]}}
        best = ""
        if st["vp"] > self.best_score:
            self.best_score = st["vp"]
            ckpt.save(self.path("best.zip"), self.model.policy.state_dict(),
                      self.meta(eval=self.last_eval))
            best = "  -> best.zip"
        self._progress_note = f"solo {st['vp']:.0f} VP"
        self.log(f"eval @ {t:,} steps ({self.wall() / 60:.1f} min): solo mean VP "
                 f"{st['vp']:.1f} [{st['vp_ci_low']:.1f}-{st['vp_ci_high']:.1f}] over "
                 f"{st['games']} games; {bands}{best}")
        return {"solo": st}

    # ---------------------------------------------------------- loop
    def _callback(self):
        from stable_baselines3.common.callbacks import BaseCallback
        trainer = self

        class _CB(BaseCallback):
            def _on_training_start(self):
                self._acc_r = np.zeros(trainer.cfg.n_envs)
                self._acc_l = np.zeros(trainer.cfg.n_envs, np.int64)

            def _on_rollout_start(self):
                if trainer.phase == "self-play":
                    trainer.pool.sync(ckpt.actor_state(self.model.policy.state_dict()))

            def _on_step(self):
                return trainer._on_step(self)

            def _on_rollout_end(self):
                trainer._on_rollout_end()

        return _CB()

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
            _append_csv(self.path("train.csv"), TRAIN_FIELDS,
                        dict(timesteps=t, wall_seconds=round(self.wall(), 1), phase=self.phase,
                             episodes=self.episodes, ep_reward=round(ep_r, 4),
                             win_rate=round(ep_w, 4), ep_len=round(ep_l, 1), fps=round(fps)))
        if self.phase == "self-play" and self.selfplay_env is not None:
            lg.record("selfplay/pool_size", len(self.pool.snapshots))
            for r in self.league.table():
                lg.record(f"league/elo_{r['agent']}", r["elo"])

    def write_league(self):
        """The league's current Bradley-Terry table to ``league.txt`` (self-play only)."""
        if self.league is None or not self.league.games:
            return
        from .rating import format_ratings
        self.league.refit()
        text = (f"{len(self.league.games)} most recent self-play games of "
                f"{self.league.recorded} (learner = the learning policy)\n"
                + format_ratings(self.league.table(), anchor=None))
        with open(self.path("league.txt"), "w") as f:
            f.write(text + "\n")

    def run(self):
        """Train to ``cfg.timesteps`` (total, counting earlier sessions); returns the run dir."""
        if self.model is None:
            self.setup()
        cfg = self.cfg
        m = self.model
        self._session_start = int(m.num_timesteps)
        self._progress_note = ""
        self.bar = progress_bar(cfg.timesteps, start=m.num_timesteps, enabled=self.show_progress)
        n_params = sum(p.numel() for p in m.policy.parameters())
        if cfg.solo:
            self.log(f"training solo (R-9.2) MaskablePPO to {cfg.timesteps:,} steps in "
                     f"{self.out} in the numba vector env, reward final VP x "
                     f"{cfg.reward_scale:g}; {n_params:,} parameters")
        else:
            self.log(f"training {cfg.players}-player MaskablePPO to {cfg.timesteps:,} steps in "
                     f"{self.out}: {cfg.fast_steps:,} vs numba random opponents, then self-play "
                     f"({cfg.opponents}); {n_params:,} parameters")
        cb = self._callback()
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
            from .plot import plot_run
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


def load_config(out: str, **overrides) -> TrainConfig:
    """The saved config of a run, with ``overrides`` (e.g. a larger ``timesteps``)."""
    path = os.path.join(out, "config.json")
    if not os.path.exists(path):
        raise ckpt.CheckpointError(f"--resume: {path} not found (is {out!r} a training run?)")
    with open(path) as f:
        data = json.load(f)
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    cfg = TrainConfig(**{k: v for k, v in data.items() if k in known})
    cfg.out = out                   # the folder given, also when the run was copied or moved
    fast = cfg.fast_steps
    for k, v in overrides.items():
        setattr(cfg, k, v)
    if cfg.timesteps != data.get("timesteps"):
        # a new total keeps the phase boundary where it was
        cfg.fast_fraction = min(1.0, fast / cfg.timesteps)
    return cfg


def train(cfg: TrainConfig, resume: bool = False, progress: bool = True, log=print) -> str:
    """Train (or resume) a run; see :class:`Trainer`."""
    if not resume and os.path.exists(os.path.join(cfg.out, "config.json")):
        raise FileExistsError(f"{cfg.out} already holds a training run; pass --resume to "
                              f"continue it or choose another --out")
    return Trainer(cfg, resume=resume, progress=progress, log=log).run()
