"""The settings of a training run: :class:`TrainConfig` (saved as ``config.json``) and
:func:`load_config` (``--resume`` reads it back)."""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass

import numpy as np

from caledonia_env import agents
from caledonia_env.agents import checkpoint as ckpt
from caledonia_env.config import GameConfig, check_player_count, check_seed
from caledonia_env.envs.rewards import REWARD_MODES
from caledonia_env.train.opponents import OpponentMix


@dataclass
class TrainConfig:
    """Every setting of a run (saved as ``config.json``; ``--resume`` reads it back)."""
    players: int = 2               # the count of players (the --players flag)
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
        check_player_count(self.players, self.solo, "--players", "--solo")
        check_seed(self.seed, "--seed")
        if self.solo:
            if self.reward != "vp":
                raise ValueError(f"the solo game is scored by its final VP: --reward vp "
                                 f"(got {self.reward!r})")
            if self.fast_fraction != 1.0:
                raise ValueError("the solo game has no opponents to self-play against: "
                                 "--fast-fraction must be 1")
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
        for n in names:
            if not n.startswith("ppo:"):
                agents.make(n, seed=0)
        return names

    @property
    def fast_steps(self) -> int:
        return int(round(self.fast_fraction * self.timesteps))


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
