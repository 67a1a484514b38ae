"""The evaluations of a training run (every ``eval_every`` steps): the deterministic
policy against each ``eval_vs`` bot (win rates with Wilson 95% intervals), or solo games
(R-9.2: mean VP, rating bands); ``eval.csv``, TensorBoard, ``best.zip``; the league table."""
from __future__ import annotations

import numpy as np

from caledonia_env.agents import checkpoint as ckpt
from caledonia_env.agents.policy import PolicyPlayer
from caledonia_env.tournament import solo_summary
from caledonia_env.train.batched_play import play_games, summarize
from caledonia_env.train.rating import format_ratings
from caledonia_env.train.runlog import EVAL_FIELDS, append_csv


class EvaluationMixin:
    """The evaluation half of :class:`train.trainer.Trainer` (its state lives there)."""

    def evaluate(self):
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
            append_csv(self.path("eval.csv"), EVAL_FIELDS,
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
        cfg = self.cfg
        t = int(self.model.num_timesteps)
        rows = play_games([player], cfg.eval_games, num_players=1, seed=cfg.seed + 7919,
                          map=cfg.map, game_kw=cfg.game)
        st = solo_summary(rows, cfg.game.get("ruleset"))
        bands = " ".join(f"{k}={v}" for k, v in st["bands"].items())
        append_csv(self.path("eval.csv"), EVAL_FIELDS,
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

    def write_league(self):
        """The league's current Bradley-Terry table to ``league.txt`` (self-play only)."""
        if self.league is None or not self.league.games:
            return
        self.league.refit()
        text = (f"{len(self.league.games)} most recent self-play games of "
                f"{self.league.recorded} (learner = the learning policy)\n"
                + format_ratings(self.league.table(), anchor=None))
        with open(self.path("league.txt"), "w") as f:
            f.write(text + "\n")
