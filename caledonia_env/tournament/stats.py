"""Statistics of tournament rows: win rates with Wilson intervals, tables by agent, seat
or clan, the rules line, solo summaries (R-9.2) and the clan head-to-head matrix."""
from __future__ import annotations

import math

import numpy as np

from caledonia_env.config import GameConfig
from caledonia_env.game import Game
from caledonia_env.tournament.games import SCORE_FIELDS
from caledonia_env.tournament.variants import RULE_FIELDS


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (95% by default)."""
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def clan_title(clan: str) -> str:
    """A clan's printed name: ``mackenzie`` -> ``MacKenzie``, ``stewart`` -> ``Stewart``."""
    return "Mac" + clan[3:].capitalize() if clan.startswith("mac") else clan.capitalize()


def group_stats(rows: list[dict], key: str) -> list[dict]:
    """Per value of ``key`` (agent, seat, clan...): games, wins, win rate, CI, mean VP breakdown."""
    groups: dict = {}
    for r in rows:
        groups.setdefault(r[key], []).append(r)
    out = []
    for k in sorted(groups, key=lambda v: (str(type(v)), v)):
        rs = groups[k]
        n = len(rs)
        wins = sum(r["win"] for r in rs)
        lo, hi = wilson(wins, n)
        st = {key: k, "n": n, "wins": wins, "win_rate": wins / n, "ci_low": lo, "ci_high": hi}
        for f in SCORE_FIELDS:
            st[f] = sum(r[f] for r in rs) / n
        st["sec_per_game"] = sum(r["think_seconds"] for r in rs) / n
        out.append(st)
    return out


def format_table(stats: list[dict], key: str, title: str) -> str:
    """A text table of :func:`group_stats` rows: n, wins, win %, CI, mean VP by component."""
    head = (f"{key:<14}{'n':>7}{'wins':>9}{'win %':>8}{'95% CI':>15}{'VP':>8}"
            + "".join(f"{f[:7]:>8}" for f in SCORE_FIELDS[:-1]) + f"{'s/game':>9}")
    lines = [title, head, "-" * len(head)]
    for st in stats:
        wins = st["wins"]
        wins_s = f"{wins:.0f}" if float(wins).is_integer() else f"{wins:.1f}"
        ci = f"{100 * st['ci_low']:.1f}-{100 * st['ci_high']:.1f}"
        lines.append(f"{st[key]!s:<14}{st['n']:>7}{wins_s:>9}{100 * st['win_rate']:>7.1f}%"
                     f"{ci:>15}{st['total']:>8.1f}"
                     + "".join(f"{st[f]:>8.1f}" for f in SCORE_FIELDS[:-1])
                     + f"{st['sec_per_game']:>9.3f}")
    return "\n".join(lines)


def describe_rules(rows: list[dict]) -> str:
    """One line: the rules the rows were played under (their RULE_FIELDS values)."""
    seen = {tuple(r.get(f, "") for f in RULE_FIELDS) for r in rows}
    parts = []
    for mode, variants, ruleset, fp in sorted(seen):
        parts.append(f"clans {mode}; variants {variants.replace('+', ', ') or 'none'}; "
                     f"ruleset {ruleset} ({fp[:12]})")
    return "rules: " + " | ".join(parts)


def format_results(rows: list[dict], by_clan: bool = False) -> str:
    """Results tables by agent and by seat (round-1 turn order); ``by_clan`` adds a table by
    clan. It is off by default: in a tournament the clans are drafted or fixed per player,
    so a clan's numbers mix the clan with the agents that played it; clan against clan is
    what ``balance`` measures, with a balanced schedule (:func:`balance_schedule`)."""
    parts = [format_table(group_stats(rows, "agent"), "agent", "by agent"),
             format_table(group_stats(rows, "seat"), "seat", "by seat (round-1 turn order, 0 = first)")]
    if by_clan and any(r["clan"] != "-" for r in rows):
        parts.append(format_table(group_stats(rows, "clan"), "clan",
                                  "by clan (mixes each clan with the agents that played it)"))
    games = len({r["game"] for r in rows})
    parts.append(f"{games} games; win = share of the win (ties split); CI = Wilson 95%; "
                 f"s/game = the agent's CPU seconds thinking per game"
                 + (f"\n{describe_rules(rows)}" if all(f in rows[0] for f in RULE_FIELDS) else ""))
    return "\n\n".join(parts)


def solo_summary(rows: list[dict], ruleset: str | None = None) -> dict:
    """Solo games (R-9.2): mean final VP with a normal 95% CI, spread, and the number of
    games in each rating band of ``ruleset`` (GameConfig.ruleset: a path, None for the
    bundled data; every band listed, lowest first)."""
    solo = Game(GameConfig(num_players=1, solo=True, ruleset=ruleset)).ruleset.solo
    vp = np.array([r["total"] for r in rows], float)
    n = len(vp)
    if n == 0:
        raise ValueError("no solo games to summarize")
    sd = float(vp.std(ddof=1)) if n > 1 else float("nan")
    half = 1.96 * sd / np.sqrt(n)
    bands = {name: 0 for name in solo.rating_names}
    for v in vp:
        bands[solo.rating(int(v))] += 1
    return {"games": n, "vp": float(vp.mean()), "vp_ci_low": float(vp.mean() - half),
            "vp_ci_high": float(vp.mean() + half), "vp_sd": sd, "vp_min": float(vp.min()),
            "vp_max": float(vp.max()), "bands": bands,
            "band_min": dict(zip(solo.rating_names, (int(x) for x in solo.rating_min)))}


def format_solo(summary: dict, label: str) -> str:
    """One line per agent: mean VP [CI], SD, range, then each band's share."""
    s = summary
    bands = "  ".join(f"{k} {100 * v / s['games']:.1f}%" for k, v in s["bands"].items())
    return (f"{label}: mean VP {s['vp']:.1f} (95% CI {s['vp_ci_low']:.1f}-{s['vp_ci_high']:.1f}), "
            f"SD {s['vp_sd']:.1f}, range {s['vp_min']:.0f}-{s['vp_max']:.0f} over {s['games']} "
            f"games; rating bands (R-9.2): {bands}")


def head_to_head(rows: list[dict], key: str = "clan") -> tuple[list, np.ndarray, np.ndarray]:
    """(names, ahead, meetings): ahead[i, j] = games where i finished ahead of j (ties 1/2),
    meetings[i, j] = games where both played."""
    names = sorted({r[key] for r in rows})
    idx = {n: i for i, n in enumerate(names)}
    ahead = np.zeros((len(names), len(names)))
    meet = np.zeros((len(names), len(names)))
    games: dict = {}
    for r in rows:
        games.setdefault(r["game"], []).append(r)
    for rs in games.values():
        for a in rs:
            for b in rs:
                i, j = idx[a[key]], idx[b[key]]
                if a is b or i == j:
                    continue
                meet[i, j] += 1
                ahead[i, j] += 1.0 if a["rank"] < b["rank"] else (0.5 if a["rank"] == b["rank"] else 0.0)
    return names, ahead, meet


def format_head_to_head(names, ahead, meet) -> str:
    w = max(8, max(len(n) for n in names) + 1)
    lines = ["head to head: % of the games where the row clan finished ahead of the column clan",
             " " * w + "".join(f"{n[:w - 1]:>{w}}" for n in names)]
    for i, n in enumerate(names):
        cells = []
        for j in range(len(names)):
            cells.append(f"{'-':>{w}}" if meet[i, j] == 0 else f"{100 * ahead[i, j] / meet[i, j]:>{w}.1f}")
        lines.append(f"{n:<{w}}" + "".join(cells))
    return "\n".join(lines)
