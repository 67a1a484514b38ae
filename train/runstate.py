"""The files that carry a training run on: ``--init`` (start from a checkpoint's weights),
``--resume`` (``last.zip`` and ``resume.pt``), the periodic checkpoints and the self-play
pool's snapshots. Needs the train extra (torch)."""
from __future__ import annotations

import io
import os
from dataclasses import asdict

import torch

from caledonia_env.agents import checkpoint as ckpt
from caledonia_env.atomic import atomic_path
from caledonia_env.config import GameConfig
from caledonia_env.data import load_ruleset
from caledonia_env.train.model import with_extractor_aliases


class CheckpointMixin:
    """The checkpoint half of :class:`train.trainer.Trainer` (its state lives there)."""

    def init_path(self) -> str:
        return (ckpt.pretrained_path(self.cfg.players) if self.cfg.init == "pretrained"
                else self.cfg.init)

    def _apply_init(self):
        """``--init``: the policy (and value head, if saved) of a checkpoint of the same
        architecture; the optimizer and the counters start fresh."""
        path = self.init_path()
        ck = ckpt.load(path, num_players=self.cfg.players)
        if ck.arch != self.model.caledonia_arch:
            raise ckpt.CheckpointError(
                f"--init {path}: its network is {ck.arch.to_dict()}, this run's --net / "
                f"--activation give {self.model.caledonia_arch.to_dict()}")
        own = self.model.policy.state_dict()
        theirs = with_extractor_aliases(ck.state_dict)
        missing = [k for k in own if k not in theirs]
        if any(not k.startswith("value_net.") and not k.startswith("mlp_extractor.value_net.")
               for k in missing):
            raise ckpt.CheckpointError(f"--init {path}: policy tensors missing: {missing[:4]}")
        own.update({k: v for k, v in theirs.items() if k in own})
        self.model.policy.load_state_dict(own)
        self.log(f"initialized from {path} ({ck.meta.get('timesteps', 0):,} steps"
                 f"{'; value head fresh' if missing else ''})")

    def _load_resume(self) -> dict:
        last, res = self.path("last.zip"), self.path("resume.pt")
        if not (os.path.exists(last) and os.path.exists(res)):
            raise ckpt.CheckpointError(f"--resume: {self.out} has no last.zip / resume.pt to "
                                       f"resume from (run without --resume to start it)")
        state = torch.load(io.BytesIO(ckpt.read_file(res)), map_location="cpu",
                           weights_only=True)
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

    def ruleset_fingerprint(self) -> str:
        """Fingerprint of the ruleset the run's games are played with."""
        cfg = self.cfg
        game = GameConfig(num_players=cfg.players, map=cfg.map, **cfg.game)
        return load_ruleset(game.ruleset).fingerprint()

    def meta(self, **extra) -> dict:
        return ckpt.make_meta(self.model.caledonia_arch, self.cfg.players,
                              int(self.model.num_timesteps), train=asdict(self.cfg),
                              ruleset_fingerprint=self.ruleset_fingerprint(),
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
