"""Solo benchmark (R-9.2): score and rating-band distribution of agents on the same games.

    python benchmarks/solo_scores.py --games 1000 --seed 20261123 \\
        --agents random,greedy,ppo:pretrained --plot docs/img/solo_scores.png

Every agent plays games 0..N-1 set up from ``(seed, g)`` (the same maps, clans, contract piles
and dice for every agent; ``ppo:`` players are batched, deterministic). Prints a Markdown table
(mean VP with a 95% CI, SD, each rating band's share) and draws the VP histograms with the band
edges. Use a seed that was not used to pick the checkpoint.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=1000, help="games per agent (default 1000)")
    p.add_argument("--seed", type=int, default=20261123, help="match seed (default 20261123)")
    p.add_argument("--agents", default="random,greedy,ppo:pretrained",
                   help="comma-separated agent names (default random,greedy,ppo:pretrained)")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="histogram PNG")
    a = p.parse_args(argv)
    from caledonia_env import tournament as tn
    from caledonia_env.train.batched_play import play_games

    results = {}
    for name in [x.strip() for x in a.agents.split(",") if x.strip()]:
        t0 = time.perf_counter()
        with tn.progress_bar(a.games, quiet=False) as bar:
            rows = play_games([name], a.games, num_players=1, seed=a.seed,
                              game_kw={"solo": True}, progress=bar.update)
        st = tn.solo_summary(rows)
        st["seconds"] = time.perf_counter() - t0
        st["vps"] = [r["total"] for r in rows]
        results[name] = st
        print(tn.format_solo(st, name), f"({st['seconds']:.0f} s)", flush=True)

    bands = list(next(iter(results.values()))["bands"])
    mins = next(iter(results.values()))["band_min"]
    head = "| agent | mean VP (95% CI) | SD | " + " | ".join(
        f"{b} ({mins[b]}+)" for b in bands) + " |"
    print("\n" + head + "\n|" + "---|" * (3 + len(bands)))
    for name, st in results.items():
        shares = " | ".join(f"{100 * st['bands'][b] / st['games']:.1f}%" for b in bands)
        print(f"| `{name}` | {st['vp']:.1f} ({st['vp_ci_low']:.1f}–{st['vp_ci_high']:.1f}) | "
              f"{st['vp_sd']:.1f} | {shares} |")
    print(f"\n{a.games} solo games per agent, seed {a.seed} (same games for every agent)")

    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(9, 4.5))
        lo = min(min(st["vps"]) for st in results.values())
        hi = max(max(st["vps"]) for st in results.values())
        bins = np.arange(lo - lo % 5, hi + 10, 5)
        for name, st in results.items():
            ax.hist(st["vps"], bins=bins, alpha=0.5, label=f"{name} (mean {st['vp']:.0f})")
        top = ax.get_ylim()[1]
        for b in bands[1:]:
            ax.axvline(mins[b], color="grey", ls=":", lw=1)
            ax.text(mins[b], top * 0.98, f" {b} {mins[b]}+", fontsize=8, va="top",
                    rotation=90, color="grey")
        ax.set_xlabel("final VP (solo game, R-9.2)")
        ax.set_ylabel("games")
        ax.set_title(f"Solo scores: {a.games} games per agent on the same seeds")
        ax.legend(loc="upper left")
        tn.save_figure(fig, a.plot)
        print(f"plot written to {a.plot}")


if __name__ == "__main__":
    main()
