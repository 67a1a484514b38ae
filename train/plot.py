"""Learning curve of a run: evaluation win rates (Wilson 95% bands) and training reward."""
from __future__ import annotations

import json
import os

from caledonia_env.config import GameConfig
from caledonia_env.game import Game
from caledonia_env.tournament import save_figure
from caledonia_env.train.runlog import read_csv


def plot_run(run_dir: str, path: str, title: str | None = None) -> str:
    """Draw ``run_dir``'s eval.csv / train.csv to ``path`` (PNG); returns ``path``."""
    import matplotlib               # heavy: imported only when a curve is drawn
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    evals = read_csv(os.path.join(run_dir, "eval.csv"))
    trains = read_csv(os.path.join(run_dir, "train.csv"))
    if not evals and not trains:
        raise ValueError(f"{run_dir}: no eval.csv or train.csv to plot")
    cfg = {}
    if os.path.exists(os.path.join(run_dir, "config.json")):
        with open(os.path.join(run_dir, "config.json")) as f:
            cfg = json.load(f)
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 7.5), sharex=True,
                                   gridspec_kw={"height_ratios": [3, 2]})
    solo = bool(cfg.get("game", {}).get("solo"))
    if solo:
        _solo_panel(ax1, evals, cfg)
    colors = {"random": "#2a9d8f", "greedy": "#e76f51"}
    for opp in ([] if solo else dict.fromkeys(r["opponent"] for r in evals)):
        rs = [r for r in evals if r["opponent"] == opp]
        x = [int(r["timesteps"]) for r in rs]
        y = [100 * float(r["win_rate"]) for r in rs]
        lo = [100 * float(r["ci_low"]) for r in rs]
        hi = [100 * float(r["ci_high"]) for r in rs]
        c = colors.get(opp)
        line, = ax1.plot(x, y, marker="o", ms=3, color=c,
                         label=f"vs {opp} ({rs[-1]['games']} games per point)")
        ax1.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
    if not solo:
        ax1.axhline(90, color="grey", ls=":", lw=1)
        ax1.set_ylabel("win rate % (deterministic policy)")
        ax1.set_ylim(-2, 102)
        ax1.legend(loc="center right")
    ax1.grid(alpha=0.3)
    if trains and solo:
        ax2.plot([int(r["timesteps"]) for r in trains], [float(r["ep_reward"]) for r in trains],
                 color="#264653", label="final VP of training episodes (sampling policy), "
                                        "last 200")
        ax2.legend(loc="lower right", fontsize=8)
    elif trains:
        x = [int(r["timesteps"]) for r in trains]
        ax2.plot(x, [float(r["ep_reward"]) for r in trains], color="#264653",
                 label=f"episode reward ({cfg.get('reward', 'reward')}), last 200 episodes")
        ax2b = ax2.twinx()
        ax2b.plot(x, [100 * float(r["win_rate"]) for r in trains], color="#f4a261", alpha=0.8,
                  label="training win rate % (vs the opponents of the moment)")
        ax2b.set_ylabel("training win rate %")
        ax2b.set_ylim(0, 100)
        h1, l1 = ax2.get_legend_handles_labels()
        h2, l2 = ax2b.get_legend_handles_labels()
        ax2.legend(h1 + h2, l1 + l2, loc="lower right", fontsize=8)
    ax2.set_ylabel("final VP" if solo else "episode reward")
    ax2.set_xlabel("timesteps (learner decisions)")
    ax2.grid(alpha=0.3)
    fast = int(round(cfg.get("fast_fraction", 0) * cfg.get("timesteps", 0)))
    if 0 < fast < cfg.get("timesteps", 0):
        for ax in (ax1, ax2):
            ax.axvline(fast, color="k", ls="--", lw=1)
        ax1.text(fast, 101, " self-play from here", va="top", fontsize=8)
    wall = max((float(r["wall_seconds"]) for r in evals + trains), default=0.0)
    who = "solo" if solo else f"{cfg.get('players', '?')}-player"
    ax1.set_title(title or f"{os.path.basename(os.path.normpath(run_dir))}: "
                  f"{who} MaskablePPO, {wall / 60:.0f} min wall time")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def _solo_panel(ax, evals, cfg):
    """Solo runs (R-9.2): mean evaluation VP with its 95% CI and the rating band edges."""
    rs = [r for r in evals if r["opponent"] == "solo"]
    if rs:
        x = [int(r["timesteps"]) for r in rs]
        line, = ax.plot(x, [float(r["vp"]) for r in rs], marker="o", ms=3, color="#e76f51",
                        label=f"mean final VP, deterministic policy ({rs[-1]['games']} games "
                              f"per point, 95% CI)")
        ax.fill_between(x, [float(r["vp_ci_low"]) for r in rs],
                        [float(r["vp_ci_high"]) for r in rs], color=line.get_color(), alpha=0.2)
    kw = {k: v for k, v in cfg.get("game", {}).items() if k != "solo"}
    solo = Game(GameConfig(num_players=1, solo=True, **kw)).ruleset.solo
    for lo, name in zip(solo.rating_min[1:], solo.rating_names[1:]):
        ax.axhline(int(lo), color="grey", ls=":", lw=1)
        ax.text(ax.get_xlim()[0], int(lo), f" {name} {int(lo)}+", va="bottom", fontsize=8,
                color="grey")
    ax.set_ylabel("final VP (solo)")
    ax.legend(loc="lower right")
