"""Figures of tournament results (matplotlib, an optional extra), saved atomically."""
from __future__ import annotations

import io
import os

import numpy as np

from caledonia_env.atomic import atomic_path


def balance_figure(stats: list[dict], names, ahead, meet, num_players: int, title: str):
    """Bar chart of win rates with 95% CIs (par = 1/players) and the head-to-head matrix."""
    import matplotlib                 # inside: a slow import, needed only to draw
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 6), gridspec_kw={"width_ratios": [1, 1.1]})
    clans = [s["clan"] for s in stats]
    rate = np.array([s["win_rate"] for s in stats])
    lo = rate - np.array([s["ci_low"] for s in stats])
    hi = np.array([s["ci_high"] for s in stats]) - rate
    ax1.bar(clans, 100 * rate, yerr=[100 * lo, 100 * hi], capsize=4, color="#5b8db8")
    ax1.axhline(100 / num_players, color="k", ls="--", lw=1, label=f"par {100 / num_players:.0f}%")
    ax1.set_ylabel("win rate % (95% Wilson CI)")
    ax1.set_title("win rate by clan")
    ax1.legend()
    ax1.tick_params(axis="x", rotation=35)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.where(meet > 0, 100 * ahead / np.maximum(meet, 1), np.nan)
    im = ax2.imshow(m, cmap="RdBu", vmin=0, vmax=100)
    ax2.set_xticks(range(len(names)), names, rotation=35, ha="right")
    ax2.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            if not np.isnan(m[i, j]):
                ax2.text(j, i, f"{m[i, j]:.0f}", ha="center", va="center", fontsize=8)
    ax2.set_title("row finished ahead of column (%)")
    fig.colorbar(im, ax=ax2, fraction=0.046)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def save_figure(fig, path: str, dpi: int = 110) -> None:
    """Save a matplotlib figure atomically (temporary file, then rename)."""
    with atomic_path(path, os.path.splitext(path)[1] or ".png") as tmp:
        fig.savefig(tmp, dpi=dpi)


def figure_png(fig, dpi: int = 110) -> bytes:
    """A matplotlib figure as PNG bytes (for a report page, which embeds them)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
