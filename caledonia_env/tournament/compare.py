"""Paired what-if studies (``caledonia balance --compare B``): what B changes (a ruleset, a
variant, ``TABLE.PATH=VALUE`` overrides of the ruleset's tables) and the statistics of the
same games played under A and under B (common random numbers: same seeds, map, clans,
seats and agent streams), per clan: win share under each, the paired difference with its
confidence interval, the VP components that moved most, rank changes and the variance
saving over two independent studies."""
from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import statistics
from dataclasses import dataclass, field

import numpy as np

from caledonia_env.config import GameConfig
from caledonia_env.data import RulesetError, bundled_rulesets, load_ruleset
from caledonia_env.data.automa import AUTOMA_FILES
from caledonia_env.data.named import ruleset_path
from caledonia_env.data.names import META
from caledonia_env.engine.tables.limits import check_engine_support
from caledonia_env.tournament.games import SCORE_FIELDS
from caledonia_env.tournament.output import write_text
from caledonia_env.tournament.variants import VARIANTS, variant_options

COMPONENTS = SCORE_FIELDS[:-1]              # the VP components (without the total)
_SEG = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


# ---------------------------------------------------------------- what B changes
@dataclass(frozen=True)
class Change:
    """What B plays instead of A: ``ruleset`` (a path or bundled name replacing A's, None to
    keep it), ``variants`` (GameConfig fields switched on), ``overrides`` (``(key, old,
    new)`` per ``TABLE.PATH=VALUE``) and ``tables``, B's whole ruleset with the overrides
    (``Ruleset.to_dict()`` form; None without overrides), to be written as a file."""
    items: tuple
    ruleset: str | None = None
    variants: dict = field(default_factory=dict)
    overrides: tuple = ()
    tables: dict | None = None

    def describe(self) -> str:
        """One line: what B changes, e.g. ``clans.mackenzie.whisky_money 3 -> 4``."""
        parts = [f"ruleset {self.ruleset}"] if self.ruleset else []
        parts += [f"variant {item}" for item in self.items
                  if "=" not in item and item.strip().lower() in VARIANTS]
        parts += [f"{k} {json.dumps(old)} -> {json.dumps(new)}" for k, old, new in self.overrides]
        return "; ".join(parts)

    def config(self, template: GameConfig, ruleset_file: str | None = None) -> GameConfig:
        """B's GameConfig: ``template`` (A's) with B's ruleset (``ruleset_file``, where
        :attr:`tables` was written, when there are overrides) and variants."""
        if self.tables is not None and ruleset_file is None:
            raise ValueError("B has overrides: give the file its ruleset was written to")
        ruleset = ruleset_file if self.tables is not None else (self.ruleset or template.ruleset)
        return dataclasses.replace(template, ruleset=ruleset, **self.variants)


def same_rules(a: GameConfig, b: GameConfig) -> bool:
    """Whether two setups play the same rules: equal but for the ruleset's name, and
    rulesets of one fingerprint (the same numbers)."""
    return (dataclasses.replace(a, ruleset=None) == dataclasses.replace(b, ruleset=None)
            and load_ruleset(a.ruleset).fingerprint() == load_ruleset(b.ruleset).fingerprint())


def _segments(key: str) -> list:
    keys = [m.group(1) if m.group(1) is not None else int(m.group(2))
            for m in _SEG.finditer(key)]
    if not keys or "".join(str(k) for k in keys) != re.sub(r"[.\[\]]", "", key):
        raise ValueError(f"{key!r} is not a TABLE.PATH key (dotted names, [i] for a list "
                         f"item), e.g. clans.mackenzie.whisky_money")
    return keys


def _locate(tables: dict, key: str):
    """(the object holding the value at ``key``, its key or index there); ValueError naming
    the first part of ``key`` that is not in the ruleset and what is allowed at that level."""
    keys = _segments(key)
    node, here = tables, ""
    for i, k in enumerate(keys):
        if isinstance(node, dict):
            allowed = [str(x) for x in node if x not in META]
            if k not in node or k in META:
                where = f"in table {here}" if here else "among the tables"
                raise ValueError(f"no key {k!r} {where}; allowed there: {', '.join(allowed)}")
        elif isinstance(node, list):
            if isinstance(k, str) and k.isdigit():
                k = keys[i] = int(k)
            if not isinstance(k, int) or not 0 <= k < len(node):
                raise ValueError(f"{here} is a list of {len(node)} items: give {here}[0] to "
                                 f"{here}[{len(node) - 1}], not {k!r}")
        else:
            raise ValueError(f"{here} is the value {json.dumps(node)}, not a table: {key} "
                             f"goes below it")
        if i < len(keys) - 1:
            node = node[k]
            here += f"[{k}]" if isinstance(k, int) else (f".{k}" if here else k)
    return node, keys[-1]


def _typed(text: str, old, key: str):
    """The value ``text`` (JSON, or a bare string) as the type of the value it replaces."""
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if isinstance(old, dict):
        keys = [k for k in old if k not in META]
        eg = next((k for k in keys if type(old[k]) is int), keys[0])
        raise ValueError(f"{key} is a table (keys: {', '.join(keys)}); set one of its "
                         f"values, e.g. {key}.{eg}={json.dumps(old[eg])}")
    if isinstance(old, bool):
        ok, what = isinstance(value, bool), "true or false"
    elif isinstance(old, int):
        ok, what = isinstance(value, int) and not isinstance(value, bool), "an integer"
    elif isinstance(old, float):
        ok, what = isinstance(value, (int, float)) and not isinstance(value, bool), "a number"
    elif isinstance(old, list):
        ok, what = isinstance(value, list), "a JSON list, e.g. [7,15]"
    elif isinstance(old, str):
        return text if not isinstance(value, str) else value
    else:
        ok, what = True, ""
    if not ok:
        raise ValueError(f"{key} takes {what} (now {json.dumps(old)}), got {text!r}")
    return value


def _validated(tables: dict) -> None:
    """RulesetError unless ``tables`` is a ruleset the engine can play."""
    check_engine_support(load_ruleset(tables))


def parse_change(items, base_ruleset: str | None = None) -> Change:
    """The :class:`Change` of ``--compare`` items, each a ``TABLE.PATH=VALUE`` override of
    the ruleset's tables (``clans.mackenzie.whisky_money=4``; VALUE is JSON: ``4``,
    ``true``, ``[7,15]``), a variant name or a ruleset (path or bundled name, at most one;
    the overrides apply to it, else to ``base_ruleset``, A's). ValueError naming the item:
    an unknown key (with the keys allowed at that level), a value of the wrong type (with
    the type taken) or out of range (the ruleset's check, with the range)."""
    items = tuple(str(x).strip() for x in items)
    if not items or any(not x for x in items):
        raise ValueError("give B as a ruleset (path or name), a variant name or "
                         "TABLE.PATH=VALUE overrides, e.g. clans.mackenzie.whisky_money=4")
    ruleset, variants, pending = None, {}, []
    for item in items:
        if "=" in item:
            pending.append(item)
        elif item.lower() in VARIANTS:
            variants.update(variant_options([item]))
        elif ruleset is not None:
            raise ValueError(f"{item}: B takes one ruleset, {ruleset} already")
        else:
            if not ruleset_path(item).exists():
                raise ValueError(f"{item}: not a TABLE.PATH=VALUE override, a variant "
                                 f"({', '.join(VARIANTS)}), a bundled ruleset "
                                 f"({', '.join(bundled_rulesets())}) nor a ruleset path")
            try:
                check_engine_support(load_ruleset(item))
            except (RulesetError, ValueError) as e:
                raise ValueError(f"{item}: {e}") from None
            ruleset = item
    if not pending:
        return Change(items, ruleset, variants)
    base = ruleset or base_ruleset
    if base is not None and ruleset_path(base).is_dir() and any(
            (ruleset_path(base) / f).exists() for f in AUTOMA_FILES):
        raise ValueError(f"overrides write B's ruleset as one .json file, which cannot carry "
                         f"the Automa data of the folder {base}: change a copy of the folder "
                         f"and give --compare COPY")
    tables = load_ruleset(base).to_dict()
    overrides = []
    for item in pending:
        key, _, text = item.partition("=")
        key = key.strip()
        try:
            node, k = _locate(tables, key)
            old = node[k]
            node[k] = _typed(text.strip(), old, key)
            _validated(tables)
        except (RulesetError, ValueError) as e:
            raise ValueError(f"{item}: {str(e).removeprefix('<override>: ')}") from None
        overrides.append((key, old, node[k]))
    return Change(items, ruleset, variants, tuple(overrides), tables)


def write_tables(tables: dict, path: str) -> str:
    """Write B's ruleset ``tables`` to ``path`` (atomically, then loaded as a check)."""
    write_text(path, json.dumps(tables))
    load_ruleset(path)
    return path


# ---------------------------------------------------------------- the paired statistics
def label(row: dict) -> str:
    """What a row is compared as: its clan, or an Automa seat's name (``automa:5``)."""
    return row["agent"] if row["agent"].startswith("automa:") else row["clan"]


def by_game(rows: list[dict]) -> dict:
    """``{game: {label: [rows]}}`` of one side's rows."""
    out: dict = {}
    for r in rows:
        out.setdefault(r["game"], {}).setdefault(label(r), []).append(r)
    return out


def _win(game: dict, c: str) -> float:
    return sum(r["win"] for r in game.get(c, ()))


def paired_streams(rows_a: list[dict], rows_b: list[dict], drafted: bool) -> dict:
    """Per label: ``(games, a, b)`` arrays, one entry per game the label is compared over,
    in game order: its win share under A and under B (ties split; 0 where it was not at the
    table). Assigned design: the games it plays (the same under both sides, else
    ValueError); drafted: every game (which games a clan plays can change with B)."""
    A, B = by_game(rows_a), by_game(rows_b)
    if sorted(A) != sorted(B):
        raise ValueError(f"A and B hold other games ({len(A)} and {len(B)}): not paired")
    games = sorted(A)
    out = {}
    for c in sorted({c for g in games for c in list(A[g]) + list(B[g])}):
        if drafted:
            gs = games
        else:
            gs = [g for g in games if c in A[g]]
            odd = [g for g in games if (c in A[g]) != (c in B[g])]
            if odd:
                raise ValueError(f"{c} plays game {odd[0]} under one side only: not paired")
        out[c] = (np.array(gs, int), np.array([_win(A[g], c) for g in gs], float),
                  np.array([_win(B[g], c) for g in gs], float))
    return out


def _ranks(values: dict) -> dict:
    """Rank of each key by value (1 = highest; ties share the better rank)."""
    ordered = sorted(values.values(), reverse=True)
    return {k: 1 + ordered.index(v) for k, v in values.items()}


def paired_stats(rows_a: list[dict], rows_b: list[dict], drafted: bool = False,
                 confidence: float = 0.95) -> list[dict]:
    """Per label (clans, then Automa seats), over the games of :func:`paired_streams`:
    ``n``, win share under A (``win_a``) and B (``win_b``), ``diff`` = mean of the per-game
    differences B - A of its win share with the paired normal ``confidence`` interval
    (``ci_low``, ``ci_high``; mean ± z·sd/√n, or ± z²/(n + z²) when B - A never varies,
    the Wilson bound on the share of games B changes), their variances and covariance, ``ratio``
    = games an independent two-study comparison needs per ruleset for the same interval
    width, per game of this one ((var A + var B) / var(B - A); inf when B - A never
    varies), the mean change of each VP component and of the total over the games the
    label plays under both (``delta``, by component), ``moved`` (the two components that
    moved most, largest first) and each clan's rank by win share under A and B."""
    z = statistics.NormalDist().inv_cdf(0.5 + confidence / 2)
    A, B = by_game(rows_a), by_game(rows_b)
    out = []
    for c, (gs, a, b) in paired_streams(rows_a, rows_b, drafted).items():
        n, d = len(gs), b - a
        var_a, var_b = (float(np.var(x, ddof=1)) if n > 1 else 0.0 for x in (a, b))
        var_d = float(np.var(d, ddof=1)) if n > 1 else 0.0
        cov = (var_a + var_b - var_d) / 2
        # B - A never varied: the normal interval would be [mean, mean]; instead the Wilson
        # bound on the share of its games in which B would differ, none seen in n
        half = (z * math.sqrt(var_d / n) if var_d > 0 else z * z / (n + z * z)) if n > 1 \
            else math.inf
        both = [g for g in gs if c in A[g] and c in B[g]]
        delta = {f: float(np.mean([np.mean([r[f] for r in B[g][c]])
                                   - np.mean([r[f] for r in A[g][c]]) for g in both]))
                 if both else 0.0 for f in SCORE_FIELDS}
        moved = sorted(COMPONENTS, key=lambda f: -abs(delta[f]))[:2]
        out.append({"clan": c, "n": n, "win_a": float(a.mean()), "win_b": float(b.mean()),
                    "diff": float(d.mean()), "ci_low": float(d.mean()) - half,
                    "ci_high": float(d.mean()) + half, "var_a": var_a, "var_b": var_b,
                    "var_diff": var_d, "cov": cov,
                    "ratio": (var_a + var_b) / var_d if var_d > 0 else math.inf,
                    "delta": delta, "moved": moved})
    clans = [s for s in out if not s["clan"].startswith("automa:")]
    ra = _ranks({s["clan"]: s["win_a"] for s in clans})
    rb = _ranks({s["clan"]: s["win_b"] for s in clans})
    for s in out:
        s["rank_a"], s["rank_b"] = ra.get(s["clan"]), rb.get(s["clan"])
    return out


def rank_changes(stats: list[dict]) -> list[str]:
    """``clan A-rank -> B-rank`` for each clan whose rank by win share changed."""
    return [f"{s['clan']} {s['rank_a']} -> {s['rank_b']}" for s in stats
            if s["rank_a"] is not None and s["rank_a"] != s["rank_b"]]


def saving(stats: list[dict], games: int) -> dict:
    """The variance saving of a paired study of ``games`` games per ruleset over the
    clans with a finite ratio: its range and median, and the games per ruleset an
    independent comparison needs for the median clan's interval width."""
    r = sorted(s["ratio"] for s in stats if math.isfinite(s["ratio"])
               and not s["clan"].startswith("automa:"))
    if not r:
        return {"ratio_min": math.inf, "ratio_median": math.inf, "ratio_max": math.inf,
                "independent_games": math.inf, "paired_games": games}
    med = float(np.median(r))
    return {"ratio_min": r[0], "ratio_median": med, "ratio_max": r[-1],
            "independent_games": int(math.ceil(games * med)), "paired_games": games}


def _moved(s: dict) -> str:
    return ", ".join(f"{f} {s['delta'][f]:+.1f}" for f in s["moved"])


def format_paired(stats: list[dict], title: str, verdicts: dict | None = None) -> str:
    """Text table of :func:`paired_stats` (win shares and differences in percentage points),
    with a verdict column from ``verdicts`` (label -> text) when given."""
    head = (f"{'clan':<12}{'n':>6}{'A %':>7}{'B %':>7}{'B-A pp':>8}{'95% CI (pp)':>15}"
            f"{'indep.x':>8}{'VP B-A':>8}  {'moved most (VP B-A)':<32}{'rank':>7}"
            + ("  verdict" if verdicts else ""))
    lines = [title, head, "-" * len(head)]
    for s in stats:
        ci = f"{100 * s['ci_low']:+.1f} {100 * s['ci_high']:+.1f}"
        ratio = "inf" if not math.isfinite(s["ratio"]) else f"{s['ratio']:.1f}"
        rank = "" if s["rank_a"] is None else f"{s['rank_a']}->{s['rank_b']}"
        lines.append(f"{s['clan']:<12}{s['n']:>6}{100 * s['win_a']:>7.1f}{100 * s['win_b']:>7.1f}"
                     f"{100 * s['diff']:>+8.1f}{ci:>15}{ratio:>8}{s['delta']['total']:>+8.1f}  "
                     f"{_moved(s):<32}{rank:>7}"
                     + (f"  {verdicts.get(s['clan'], '')}" if verdicts else ""))
    return "\n".join(lines)


def paired_figure(stats_by_agent: dict, margin: float, title: str):
    """Each clan's paired difference B - A of its win share (percentage points) with its
    interval, one colour per agent; the zero line and the ±margin band."""
    import matplotlib                 # inside: a slow import, needed only to draw
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    clans = sorted({s["clan"] for st in stats_by_agent.values() for s in st})
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(clans) + 2))
    k = len(stats_by_agent)
    for j, (agent, st) in enumerate(stats_by_agent.items()):
        at = {s["clan"]: s for s in st}
        ys = [i + (j - (k - 1) / 2) * 0.25 for i, c in enumerate(clans) if c in at]
        d = np.array([100 * at[c]["diff"] for c in clans if c in at])
        lo = d - [100 * at[c]["ci_low"] for c in clans if c in at]
        hi = np.array([100 * at[c]["ci_high"] for c in clans if c in at]) - d
        ax.errorbar(d, ys, xerr=[lo, hi], fmt="o", capsize=4, label=agent)
    ax.axvline(0, color="k", lw=1)
    ax.axvspan(-100 * margin, 100 * margin, color="0.9", label=f"±{100 * margin:g} pp")
    ax.set_yticks(range(len(clans)), clans)
    ax.invert_yaxis()
    ax.set_xlabel("win share B - A (percentage points), paired interval")
    ax.legend()
    ax.set_title(title)
    fig.tight_layout()
    return fig


def ruleset_file(folder: str) -> str:
    """Where B's ruleset (with its overrides) is written in a study's folder."""
    return os.path.join(folder, "ruleset_B.json")
