"""Balance studies over several *arms* played on the same games: each agent of
``caledonia balance --agent A,B`` and, with ``--compare``, each ruleset side (A, B) plays
the same seeds, maps, clans, seats and agent streams (common random numbers). Each arm's
games are streamed to its own study file (:func:`caledonia_env.scale.run_study`:
resumable, local processes or Ray), all at once or in batches until every verdict is
resolved (:mod:`~caledonia_env.tournament.sequential`); then the verdict per agent and
clan, whether it changes with the agent, and a :class:`BalanceSummary` (tables,
conclusions as sentences, games used) that prints and that a report can read."""
from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import math
import re
from dataclasses import dataclass, field

import numpy as np

from caledonia_env import ray_connect, scale
from caledonia_env.ray_connect import CONNECT_TIMEOUT
from caledonia_env.tournament.compare import (by_game, format_paired, label, paired_stats,
                                              paired_streams, rank_changes, saving)
from caledonia_env.tournament.games import CSV_FIELDS
from caledonia_env.tournament.output import write_text
from caledonia_env.tournament.sequential import (ABOVE, AT, BELOW, bonferroni,
                                                 confidence_sequence, first_verdict, verdicts)
from caledonia_env.tournament.spec import TournamentSpec
from caledonia_env.tournament.stats import format_table, group_stats, wilson

FIXED_CONFIDENCE = 0.95                      # the intervals of a study of a fixed game count


@dataclass(frozen=True)
class Arm:
    """One agent under one ruleset side: ``side`` 'A' (the base rules), 'B' (--compare)
    or '' (no comparison); ``spec`` is its study (its ``games`` replaced per batch)."""
    agent: str
    side: str
    spec: TournamentSpec

    def file_name(self, k: int) -> str:
        """Its study file in a study's folder: ``0-greedy_4p-A.csv``."""
        return f"{k}-{re.sub(r'[^A-Za-z0-9_.-]', '_', self.agent)}{'-' * bool(self.side)}{self.side}.csv"


def make_arms(spec: TournamentSpec, agents, humans: int, b_config=None) -> list[Arm]:
    """The arms of ``spec`` (A's rules; its first ``humans`` seats an agent, the others
    Automa seats) for each agent, each under A and, with ``b_config``, under B."""
    arms = []
    for agent in agents:
        s = dataclasses.replace(spec, players=(agent,) * humans + tuple(spec.players[humans:]))
        if b_config is None:
            arms.append(Arm(agent, "", s))
        else:
            arms += [Arm(agent, "A", s), Arm(agent, "B", dataclasses.replace(s, config=b_config))]
    return arms


@dataclass(frozen=True)
class Until:
    """``--until resolved``: batches of ``batch`` games per arm until every verdict is
    resolved at the study-wide ``confidence`` or ``max_games`` games per arm are played."""
    confidence: float = 0.95
    batch: int = 56
    max_games: int = 20000

    def __post_init__(self):
        bonferroni(self.confidence, 1)             # ValueError for a bad level
        for name in ("batch", "max_games"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")


class ArmFiles:
    """Plays games ``0 .. n-1`` of arm ``k`` into ``paths[k]`` (``scale.run_study`` with
    ``backend``; each call plays only the games the file lacks, so batches grow the file
    and ``resume`` finishes an interrupted study) and returns the file's rows. Used as a
    context: with Ray, one session for every call. ``kept``: games found in the files
    when they were first opened with ``resume``."""

    def __init__(self, paths, backend: str = "local", workers: int = 1,
                 address: str | None = None, connect_timeout: float = CONNECT_TIMEOUT,
                 resume: bool = False, progress=None):
        self.paths, self.backend, self.workers, self.address = list(paths), backend, workers, address
        self.connect_timeout, self.resume, self.progress = connect_timeout, resume, progress
        self.kept = 0
        self._opened: set = set()
        self._stack = contextlib.ExitStack()

    def __enter__(self):
        if self.backend == "ray":
            ray = ray_connect.import_ray()
            if ray_connect.connect(ray, self.address, self.workers, self.connect_timeout):
                self._stack.callback(ray_connect.disconnect, ray)
        return self

    def __exit__(self, *exc):
        self._stack.close()

    def present(self, k: int, arm: Arm) -> int:
        """Complete games in arm ``k``'s file (0 without ``resume``)."""
        if not self.resume:
            return 0
        return len(scale.complete_games(scale.read_rows(self.paths[k]), len(arm.spec.players)))

    def play(self, k: int, arm: Arm, n: int) -> list[dict]:
        first = k not in self._opened
        summary = scale.run_study(dataclasses.replace(arm.spec, games=n), self.paths[k],
                                  backend=self.backend, workers=self.workers,
                                  address=self.address, resume=self.resume or not first,
                                  progress=self.progress, connect_timeout=self.connect_timeout)
        self._opened.add(k)
        if first and self.resume:
            self.kept += summary["skipped"]
            if self.progress:
                self.progress(summary["skipped"])
        return scale.read_rows(self.paths[k])


def _groups(arms: list[Arm]) -> dict:
    """``{agent: (index of its A arm, index of its B arm or None)}``."""
    out: dict = {}
    for k, arm in enumerate(arms):
        a, b = out.get(arm.agent, (None, None))
        out[arm.agent] = (k, b) if arm.side in ("", "A") else (a, k)
    return out


@dataclass(frozen=True)
class Design:
    """What the verdicts of a study read: ``players`` (par = 1 / players), ``drafted``
    (which games a clan is compared over: see ``compare.paired_streams``) and ``margin``
    (the indifference margin, a share: 0.01 = ±1 percentage point)."""
    players: int
    drafted: bool = False
    margin: float = 0.01

    @property
    def par(self) -> float:
        return 1 / self.players


def _streams(rows_a, rows_b, design: Design) -> dict:
    """Per clan (Automa seats left out): ``(games, outcomes, lo, hi, centre)``: with B its
    per-game paired difference B - A of win share in [-1, 1] around 0, else its win share
    in each game it plays, in [0, 1] around par."""
    out = {}
    if rows_b is not None:
        for c, (gs, a, b) in paired_streams(rows_a, rows_b, design.drafted).items():
            out[c] = (gs, b - a, -1.0, 1.0, 0.0)
    else:
        games = by_game(rows_a)
        for c in sorted({label(r) for r in rows_a}):
            gs = np.array([g for g in sorted(games) if c in games[g]], int)
            x = np.array([sum(r["win"] for r in games[g][c]) for g in gs], float)
            out[c] = (gs, x, 0.0, 1.0, design.par)
    return {c: s for c, s in out.items() if not c.startswith("automa:")}


def verdict_text(v: str, compare: bool, margin: float) -> str:
    """A verdict in words: 'above par', 'at par (±1 pp)', 'B raises', 'unresolved', ..."""
    pp = f"(±{100 * margin:g} pp)"
    if compare:
        return {ABOVE: "B raises", BELOW: "B lowers", AT: f"no change {pp}"}.get(v, "unresolved")
    return {ABOVE: "above par", BELOW: "below par", AT: f"at par {pp}"}.get(v, "unresolved")


def study_verdicts(arms: list[Arm], rows: list[list[dict]], design: Design,
                   confidence: float | None = None) -> list[dict]:
    """One verdict per (agent, clan): with ``confidence`` read from the anytime-valid
    confidence sequence of its stream at that study-wide level (Bonferroni over every
    verdict), with ``games_needed`` = the games per arm after which it was resolved (None
    unresolved); without, from the fixed-n 95% interval (Wilson for a win share, paired
    normal for a difference). Each: agent, clan, n, estimate, low, high, verdict (ABOVE,
    AT, BELOW or ''), text, games_needed."""
    streams = {agent: _streams(rows[a], None if b is None else rows[b], design)
               for agent, (a, b) in _groups(arms).items()}
    k = sum(len(s) for s in streams.values())
    alpha = None if confidence is None else bonferroni(confidence, k)
    out = []
    for agent, per in streams.items():
        a, b = _groups(arms)[agent]
        fixed = ({s["clan"]: s for s in paired_stats(rows[a], rows[b], design.drafted,
                                                     FIXED_CONFIDENCE)}
                 if b is not None and alpha is None else None)
        for clan, (gs, x, lo, hi, centre) in per.items():
            needed = None
            if alpha is not None:
                low, high = confidence_sequence(x, alpha, lo, hi)
                v, i = first_verdict(low, high, centre, design.margin)
                needed = None if i is None else int(gs[i]) + 1
                low, high = float(low[-1]), float(high[-1])
            else:
                if fixed is not None:
                    low, high = fixed[clan]["ci_low"], fixed[clan]["ci_high"]
                else:
                    low, high = wilson(float(x.sum()), len(x))
                v = str(verdicts(low, high, centre, design.margin)[()])
            out.append({"agent": agent, "clan": clan, "n": len(x), "estimate": float(x.mean()),
                        "low": low, "high": high, "verdict": v,
                        "text": verdict_text(v, b is not None, design.margin),
                        "games_needed": needed})
    return out


def changes_with_agent(verdict_rows: list[dict]) -> dict:
    """Per clan: 'yes' when two agents reach different verdicts, 'no' when every agent
    reaches the same one, 'open' when the resolved ones agree but some are unresolved."""
    by: dict = {}
    for v in verdict_rows:
        by.setdefault(v["clan"], []).append(v["verdict"])
    out = {}
    for clan, vs in by.items():
        resolved = {v for v in vs if v}
        out[clan] = "yes" if len(resolved) > 1 else ("no" if all(vs) else "open")
    return out


@dataclass
class Played:
    """The rows of every arm (games ``0 .. games-1`` each), why the study stopped
    ('fixed': its game count; 'resolved'; 'cap': ``max_games``) and its verdicts."""
    rows: list
    games: int
    stopped: str
    verdicts: list = field(default_factory=list)


def run_arms(arms: list[Arm], files: ArmFiles, design: Design, games: int | None = None,
             until: Until | None = None) -> Played:
    """Play every arm: ``games`` games each, or with ``until`` batch after batch (the
    same batch for every arm, so the paired and agent comparisons stay on common games)
    until every verdict is resolved or the cap is reached. A resumed study starts from
    the batch its files reached."""
    if until is None:
        rows = [files.play(k, arm, games) for k, arm in enumerate(arms)]
        return Played(rows, games, "fixed", study_verdicts(arms, rows, design))
    there = max(files.present(k, arm) for k, arm in enumerate(arms))
    n = min(until.max_games, until.batch * max(1, math.ceil(there / until.batch)))
    while True:
        rows = [files.play(k, arm, n) for k, arm in enumerate(arms)]
        found = study_verdicts(arms, rows, design, until.confidence)
        if all(v["verdict"] for v in found):
            return Played(rows, n, "resolved", found)
        if n >= until.max_games:
            return Played(rows, n, "cap", found)
        n = min(until.max_games, n + until.batch)


# ---------------------------------------------------------------- the summary
@dataclass
class BalanceSummary:
    """A finished study, for printing (:func:`format_summary`) and for reports: its
    setting, ``tables`` (``by_clan``: per agent the :func:`group_stats` rows of each side;
    ``paired``: per agent :func:`paired_stats`; ``saving``: per agent the variance
    saving), ``verdicts`` (:func:`study_verdicts`), ``changes_with_agent`` (per clan),
    ``conclusions`` (sentences) and the games used."""
    players: int
    design: str
    agents: tuple
    compare: str | None
    margin: float
    confidence: float
    interval: str
    games: int
    games_played: int
    stopped: str
    max_games: int | None
    tables: dict
    verdicts: list
    changes_with_agent: dict
    conclusions: list

    def to_dict(self) -> dict:
        return json_safe(dataclasses.asdict(self))


def json_safe(x):
    """``x`` with infinities as the string 'inf' (JSON has none) and numpy scalars as floats."""
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else ("inf" if x > 0 else "-inf")
    return x


def _table_rows(rows):
    return [dict(r, clan=label(r)) for r in rows]


def _clause(items: list[str], word: str) -> str | None:
    return f"{word} {', '.join(items)}" if items else None


def summarize(arms: list[Arm], played: Played, design: Design, compare: str | None = None,
              until: Until | None = None) -> BalanceSummary:
    """The :class:`BalanceSummary` of a played study."""
    groups = _groups(arms)
    tables: dict = {"by_clan": {}, "paired": {}, "saving": {}}
    conclusions = []
    vs = played.verdicts
    for agent, (a, b) in groups.items():
        sides = {"A": played.rows[a]} if b is None else {"A": played.rows[a], "B": played.rows[b]}
        tables["by_clan"][agent] = {s: group_stats(_table_rows(r), "clan") for s, r in sides.items()}
        mine = [v for v in vs if v["agent"] == agent]
        parts = []
        for text in sorted(dict.fromkeys(v["text"] for v in mine), key=lambda t: t == "unresolved"):
            parts.append(_clause([f"{v['clan']} ({100 * v['estimate']:+.1f} pp)" if b is not None
                                  else f"{v['clan']} ({100 * v['estimate']:.1f}%)"
                                  for v in mine if v["text"] == text], text + ":"))
        conclusions.append(f"with {agent}: " + "; ".join(p for p in parts if p) + ".")
        if b is not None:
            st = paired_stats(played.rows[a], played.rows[b], design.drafted, FIXED_CONFIDENCE)
            tables["paired"][agent] = st
            moved = rank_changes(st)
            conclusions.append(f"with {agent}, B changes the rank of " + ", ".join(moved) + "."
                               if moved else f"with {agent}, B changes no clan's rank.")
            sav = tables["saving"][agent] = saving(st, played.games)
            if math.isfinite(sav["ratio_median"]):
                conclusions.append(
                    f"with {agent}, the paired design needs {played.games} games per ruleset "
                    f"where two independent studies would need about "
                    f"{sav['independent_games']} per ruleset for the same interval width "
                    f"(x{sav['ratio_median']:.1f}, median over clans; "
                    f"x{sav['ratio_min']:.1f} to x{sav['ratio_max']:.1f}).")
            else:
                conclusions.append(f"with {agent}, A and B gave every clan the same result "
                                   f"in every game (no variance to save).")
    changes = changes_with_agent(vs)
    if len(groups) > 1:
        moved = [c for c, x in changes.items() if x == "yes"]
        for c in moved:
            conclusions.append(f"{c}'s conclusion changes with the agent: " + ", ".join(
                f"{v['text']} with {v['agent']}" for v in vs if v["clan"] == c) + ".")
        if not moved:
            conclusions.append("no clan's conclusion changes with the agent"
                               + (" (some are unresolved)." if "open" in changes.values()
                                  else "."))
    if until is not None:
        needed = [v["games_needed"] for v in vs if v["games_needed"] is not None]
        span = ("" if not needed else f" (verdicts needed {min(needed)} games)"
                if min(needed) == max(needed) else
                f" (verdicts needed {min(needed)} to {max(needed)} games)")
        conclusions.append(
            f"every verdict resolved after {played.games} games per arm{span}."
            if played.stopped == "resolved" else
            f"stopped at the cap of {played.games} games per arm with "
            f"{len(vs) - len(needed)} of {len(vs)} verdicts unresolved{span}.")
    interval = (f"anytime-valid {100 * until.confidence:g}% confidence sequence, Bonferroni "
                f"over {len(vs)} verdicts" if until is not None else
                f"fixed-n {100 * FIXED_CONFIDENCE:g}% "
                + ("paired normal" if compare else "Wilson") + " interval")
    return BalanceSummary(
        players=design.players, design="drafted" if design.drafted else "assigned",
        agents=tuple(groups), compare=compare, margin=design.margin,
        confidence=until.confidence if until is not None else FIXED_CONFIDENCE,
        interval=interval, games=played.games, games_played=played.games * len(arms),
        stopped=played.stopped, max_games=until.max_games if until is not None else None,
        tables=tables, verdicts=vs, changes_with_agent=changes, conclusions=conclusions)


def format_summary(summary: BalanceSummary, who: str) -> str:
    """The printed study: per agent its table (paired with --compare, else by clan), the
    verdicts (:func:`format_verdicts`; in the paired table for one agent's fixed-n
    comparison) and the conclusions. ``who`` names the players, ``{agent}`` the agent."""
    s = summary
    par = f"par {100 / s.players:.1f}%"
    parts = []
    table = not (s.compare and len(s.agents) == 1 and s.stopped == "fixed")
    for agent in s.agents:
        if s.compare:
            text = None if table else {v["clan"]: v["text"] for v in s.verdicts}
            parts.append(format_paired(
                s.tables["paired"][agent],
                f"B - A by clan ({s.players} players, {who.format(agent=agent)}; B = "
                f"{s.compare}; {'wins per game' if s.design == 'drafted' else 'win share in its games'}, "
                f"{par}; CI = paired normal 95%; indep.x = games an independent comparison "
                f"needs per game of this one)", text))
        else:
            parts.append(format_table(s.tables["by_clan"][agent]["A"], "clan",
                                      f"win rate by clan ({s.players} players, "
                                      f"{who.format(agent=agent)}; {par})"))
    if table:
        parts.append(format_verdicts(s))
    parts.append("\n".join(s.conclusions))
    return "\n\n".join(parts)


def format_verdicts(s: BalanceSummary) -> str:
    """The verdicts as a table: a column per agent (the verdict, the estimate, its bounds,
    the games it needed), and 'changes with agent' for several agents."""
    unit = "pp" if s.compare else "%"
    w = 46
    head = f"{'clan':<12}" + "".join(f"{a[:w - 2]:<{w}}" for a in s.agents) + (
        "changes with agent" if len(s.agents) > 1 else "")
    lines = [f"verdicts ({s.interval}; margin ±{100 * s.margin:g} pp"
             + (", games needed after @" if s.stopped != "fixed" else "") + ")", head,
             "-" * len(head)]
    for clan in dict.fromkeys(v["clan"] for v in s.verdicts):
        cells = []
        for agent in s.agents:
            v = next(x for x in s.verdicts if x["agent"] == agent and x["clan"] == clan)
            sign = "+" if s.compare else ""
            cell = (f"{v['text']} {100 * v['estimate']:{sign}.1f}{unit} "
                    f"[{100 * v['low']:{sign}.1f}, {100 * v['high']:{sign}.1f}]"
                    + (f" @{v['games_needed']}" if v["games_needed"] is not None else ""))
            cells.append(f"{cell:<{w}}")
        lines.append(f"{clan:<12}" + "".join(cells)
                     + (s.changes_with_agent[clan] if len(s.agents) > 1 else ""))
    return "\n".join(lines)


def write_rows(arms: list[Arm], rows: list[list[dict]], path: str) -> int:
    """Every arm's rows to the CSV ``path`` (atomically), by agent, game, side and player;
    with a ruleset comparison a first column ``side`` (A or B). The count of rows."""
    compare = any(a.side for a in arms)
    fields = (("side",) if compare else ()) + CSV_FIELDS
    order = {a.agent: i for i, a in reversed(list(enumerate(arms)))}
    out = [dict(r, side=arm.side) for arm, rs in zip(arms, rows) for r in rs]
    out.sort(key=lambda r: (order[r["agent"]], r["game"], r["side"], r["player"]))
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(fields), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(out)
    write_text(path, buf.getvalue())
    return len(out)


def agents_figure(summary: BalanceSummary, title: str):
    """Each clan's win rate with its 95% Wilson interval, one colour per agent; par."""
    import matplotlib                 # inside: a slow import, needed only to draw
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(10, 5.5))
    k = len(summary.agents)
    for j, agent in enumerate(summary.agents):
        st = summary.tables["by_clan"][agent]["A"]
        x = np.arange(len(st)) + (j - (k - 1) / 2) * 0.2
        rate = np.array([100 * s["win_rate"] for s in st])
        err = [rate - [100 * s["ci_low"] for s in st], [100 * s["ci_high"] for s in st] - rate]
        ax.errorbar(x, rate, yerr=err, fmt="o", capsize=4, label=agent)
        ax.set_xticks(range(len(st)), [s["clan"] for s in st], rotation=35, ha="right")
    ax.axhline(100 / summary.players, color="k", ls="--", lw=1,
               label=f"par {100 / summary.players:.0f}%")
    ax.set_ylabel("win rate % (95% Wilson CI)")
    ax.legend()
    ax.set_title(title)
    fig.tight_layout()
    return fig
