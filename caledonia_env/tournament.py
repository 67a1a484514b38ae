"""Many games between bots, in parallel processes, with win rates and score breakdowns.

Game ``g`` of a tournament with seed ``S`` is fully determined by ``(S, g)``:
its GameConfig seed and every agent's seed come from
``numpy.random.SeedSequence([S, g])``, so results do not depend on the number
of worker processes or on the order in which games finish.
"""
from __future__ import annotations

import csv
import io
import itertools
import math
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .atomic import atomic_path
from .config import CLAN_NAMES, GameConfig, clan_options
from .engine import layout as L

SCORE_FIELDS = tuple(L.SCORE_FIELDS)
RULE_FIELDS = ("clan_mode", "variants", "ruleset", "ruleset_fingerprint")
CSV_FIELDS = ("game", "game_seed", "map", "player", "seat", "agent", "clan") + SCORE_FIELDS + (
    "money_left", "win", "rank", "decisions", "think_seconds") + RULE_FIELDS

# Rule variants by name (CLI --variant) -> the GameConfig option that switches them on.
VARIANTS = {
    "static-imports": ("variant_static_imports", True),
    "no-scoring-tiles": ("scoring_tiles", False),
    "no-ports": ("ports", False),
    "smaller-map": ("smaller_map", True),
    "kickstarter-tiles": ("kickstarter_tiles", True),
    "kickstarter-clan": ("kickstarter_clan", True),
}


def variant_options(names) -> dict:
    """GameConfig options of variant names (a list or a comma-separated string)."""
    if isinstance(names, str):
        names = [x for x in names.split(",")]
    out = {}
    for name in names or ():
        key = name.strip().lower()
        if key not in VARIANTS:
            raise ValueError(f"unknown variant {name.strip()!r}; variants: {', '.join(VARIANTS)}")
        field_name, value = VARIANTS[key]
        out[field_name] = value
    return out


# ------------------------------------------------------- command-line rules
def add_rules_options(p, clans: bool = True, auction: bool = True, solo: bool = True) -> None:
    """--clans, --auction, --solo, --variant, --ruleset (recorded in every output)."""
    g = p.add_argument_group("rules (recorded in the CSV columns clan_mode, variants, "
                             "ruleset, ruleset_fingerprint and in game records)")
    if clans:
        g.add_argument("--clans", default="draft", metavar="MODE|C1,C2,...",
                       help="'draft' (default: the standard game, R-1.7), 'none' (no-clans "
                            "variant, R-1.9), 'auction' (R-9.4), or one different clan per "
                            "player, e.g. --clans stewart,campbell,none; clans: "
                            + ", ".join(CLAN_NAMES))
    if auction:
        g.add_argument("--auction", action="store_true",
                       help="auction the clans instead of drafting them (R-9.4); the same as "
                            "--clans auction")
    if solo:
        g.add_argument("--solo", action="store_true",
                       help="the solo game (R-9.2): one player against the solo rules")
    g.add_argument("--variant", default=None, metavar="NAME[,NAME]",
                   help="rule variants, comma separated: " + ", ".join(VARIANTS)
                        + " (e.g. --variant no-ports,static-imports)")
    g.add_argument("--ruleset", default=None, metavar="PATH",
                   help="a ruleset folder or .json file of overrides of the bundled numbers "
                        "(docs/ruleset.md), e.g. --ruleset my_rules.json")


def rules_from_args(args, n_players: int, clans: bool = True) -> tuple[object, dict]:
    """(clans, further GameConfig options incl. ``ruleset``) from the options of
    :func:`add_rules_options` (``clans=False``: --clans means something else here and is
    not read); ValueError naming the option if invalid."""
    from .data import load_ruleset
    kw = {}
    clans = getattr(args, "clans", None) if clans else None
    if clans is not None:
        clans = parse_clans(clans, n_players)
    if getattr(args, "auction", False):
        if clans not in ("draft", "auction"):
            raise ValueError(f"--auction auctions drawn clans (R-9.4); it cannot be combined "
                             f"with --clans {args.clans}")
        clans = "auction"
    if getattr(args, "solo", False):
        kw["solo"] = True
    try:
        kw.update(variant_options(getattr(args, "variant", None) or ()))
    except ValueError as e:
        raise ValueError(f"--variant: {e}") from None
    if getattr(args, "ruleset", None):
        try:
            load_ruleset(args.ruleset)
        except (ValueError, OSError) as e:
            raise ValueError(f"--ruleset: {e}") from None
        kw["ruleset"] = args.ruleset
    return clans, kw


def parse_clans(text: str, n: int):
    """'none', 'draft', 'auction' or one different clan name per player (comma separated)."""
    t = text.strip().lower()
    if t in ("draft", "none", "auction"):
        return t
    names = tuple(c.strip().lower() for c in text.split(","))
    if len(names) != n:
        raise ValueError(f"--clans: give 'none', 'draft', 'auction' or one clan per player "
                         f"({n}, comma separated, 'none' for no clan) from {', '.join(CLAN_NAMES)}; "
                         f"got {len(names)}: {text!r}")
    bad = [c for c in names if c not in CLAN_NAMES and c != "none"]
    if bad:
        raise ValueError(f"--clans: unknown clan(s) {', '.join(bad)}; allowed: "
                         f"{', '.join(CLAN_NAMES)} or none")
    named = [c for c in names if c != "none"]
    if len(set(named)) != len(named):
        raise ValueError(f"--clans: clans must be different (each clan tile exists once), "
                         f"got {text!r}")
    return names


def rule_fields(config: GameConfig, ruleset=None) -> dict:
    """The CSV columns saying under which rules a game was played: clan mode, variant
    names joined by '+' ('' = none), ruleset path ('bundled') and its fingerprint
    (``ruleset``: the loaded Ruleset, if at hand)."""
    from .data import load_ruleset
    on = [k for k, (f, v) in VARIANTS.items() if getattr(config, f) == v]
    if config.solo:
        on.insert(0, "solo")
    return {"clan_mode": config.clan_mode, "variants": "+".join(on),
            "ruleset": config.ruleset or "bundled",
            "ruleset_fingerprint": (ruleset or load_ruleset(config.ruleset)).fingerprint()}


@dataclass(frozen=True)
class TournamentSpec:
    """What to play: one agent name per player, how many games, the setup.

    ``clans``: "draft" (default, the standard game, R-1.7), None or "none" (no
    clans, R-1.9), "auction"
    (R-9.4), or one clan name per player (fixed clans, R-8). ``clan_schedule``:
    a sequence of such per-player clan tuples; game g uses entry
    ``g % len(clan_schedule)`` (what ``balance`` plays, see :func:`balance_schedule`).
    ``game_kw``: further GameConfig options (variants, ``solo=True`` with one
    player, ``first_player``).
    """
    players: tuple
    games: int
    seed: int = 0
    map: tuple | None = None
    clans: object | None = "draft"
    clan_schedule: tuple | None = None
    ruleset: str | None = None
    agent_kw: dict = field(default_factory=dict, compare=False)
    game_kw: dict = field(default_factory=dict)

    def config(self, game_seed: int, g: int = 0) -> GameConfig:
        """Game g's setup; ``automa:LEVEL`` players become Automa seats (A-0)."""
        from .agents import automa_seats
        kw = dict(num_players=len(self.players), seed=game_seed, map=self.map,
                  ruleset=self.ruleset, **self.game_kw)
        if automa_seats(self.players):
            kw["automa"] = automa_seats(self.players)
        clans = self.clans
        if self.clan_schedule:
            clans = tuple(self.clan_schedule[g % len(self.clan_schedule)])
        return GameConfig(**{**kw, **clan_options(clans)})


def validate(spec: TournamentSpec) -> None:
    """Raise ValueError with the allowed values for any bad part of ``spec``."""
    from caledonia_env import agents
    n = len(spec.players)
    solo = bool(spec.game_kw.get("solo"))
    if solo and n != 1:
        raise ValueError(f"--solo is the one-player game (R-9.2): give one agent, got {n}: "
                         f"{','.join(spec.players)}")
    if not solo and n not in (2, 3, 4):
        raise ValueError(f"--players needs 2 to 4 agent names separated by commas "
                         f"(e.g. greedy,random,random), or one with --solo; got {n}: "
                         f"{','.join(spec.players)}")
    for name in spec.players:
        agents.make(name, seed=0, **spec.agent_kw)     # checks the kind and its parameter
    if not isinstance(spec.games, int) or spec.games < 1:
        raise ValueError(f"--games must be a positive integer, got {spec.games!r}")
    if spec.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {spec.seed}")
    for g in range(len(spec.clan_schedule) if spec.clan_schedule else 1):
        spec.config(0, g)      # map / clans / variant errors
    if spec.ruleset is not None:
        from .data import load_ruleset
        load_ruleset(spec.ruleset)


def game_seeds(seed: int, g: int, n_players: int) -> tuple[int, list[int]]:
    """(GameConfig seed, agent seeds) of game ``g``."""
    st = np.random.SeedSequence([seed, g]).generate_state(1 + n_players)
    return int(st[0] >> 1), [int(x >> 1) for x in st[1:]]


# ---------------------------------------------------------------- one game
_AGENTS: dict = {}


def _agent(name: str, i: int, kw: dict, game):
    """This process's agent for seat i; the first use warms it up (numba compilation or
    cache loading) on a copy of ``game`` so it does not count as thinking time."""
    from caledonia_env import agents
    key = (name, i)
    if key not in _AGENTS:
        bot = agents.make(name, seed=0, **kw)
        bot.act(game.clone())
        _AGENTS[key] = bot
    return _AGENTS[key]


def play_game(spec: TournamentSpec, g: int, record: bool = False) -> dict:
    """Play game ``g`` of ``spec``; return its CSV rows and optionally its JSON record."""
    from .game import Game
    n = len(spec.players)
    game_seed, agent_seeds = game_seeds(spec.seed, g, n)
    game = Game(spec.config(game_seed, g))
    bots = []
    for i, name in enumerate(spec.players):
        bot = None if game.is_automa(i) else _agent(name, i, spec.agent_kw, game)
        if bot is not None:                  # an Automa seat is played by the engine
            bot.reset(agent_seeds[i])
        bots.append(bot)
    order = [int(x) for x in game.state[L.S_ORDER:L.S_ORDER + n]]
    think = [0.0] * n
    decisions = [0] * n
    while not game.is_terminal:
        p = game.current_player
        t0 = time.perf_counter()
        a = bots[p].act(game)
        think[p] += time.perf_counter() - t0
        decisions[p] += 1
        game.step(a)
    rows = result_rows(game, g, game_seed, order, list(spec.players), decisions, think)
    return {"game": g, "rows": rows, "record": game.to_json(agents=list(spec.players)) if record else None}


def result_rows(game, g: int, game_seed: int, order, agents, decisions, think) -> list[dict]:
    """One CSV row per player of a finished game: seat, agent, clan, VP by component,
    win share (ties split), rank, thinking time and the rules it was played under."""
    n = game.num_players
    scores = game.score_breakdown()
    winners = game.winners()
    per_vp = game.ruleset.final_scoring.money_per_vp
    money = [int(game.state[L.S_PLAYERS + p * L.P_SIZE + L.P_MONEY]) for p in range(n)]
    key = [(scores[p]["total"], money[p] % per_vp) for p in range(n)]
    clans = _clans(game)
    rules = rule_fields(game.config, game.ruleset)
    rows = []
    for p in range(n):
        row = {"game": g, "game_seed": game_seed, "map": ",".join(game.map), "player": p,
               "seat": list(order).index(p), "agent": agents[p], "clan": clans[p]}
        row.update(scores[p])
        row.update(money_left=money[p],
                   win=(1.0 / len(winners)) if p in winners else 0.0,
                   rank=1 + sum(k > key[p] for k in key),
                   decisions=decisions[p], think_seconds=round(think[p], 6))
        row.update(rules)
        rows.append(row)
    return rows


def _clans(game) -> list[str]:
    """Clan name of each player ('-' without clans)."""
    return [game.clan(p) or "-" for p in range(game.num_players)]


def _worker(args):
    spec, g, record = args
    return play_game(spec, g, record)


# ------------------------------------------------------------------ runner
def progress_bar(total: int, label: str = "games", quiet: bool = False):
    """A tqdm bar on stderr; silent with ``quiet`` or when stderr is not a terminal."""
    from tqdm import tqdm
    return tqdm(total=total, desc=label, unit="game", file=sys.stderr,
                disable=True if quiet else None, dynamic_ncols=True)


def pool_context():
    """The multiprocessing context for game workers: ``fork`` (fast, numba already loaded),
    except once torch is loaded (a ``ppo:`` agent): torch's thread pool does not survive a
    fork, so the workers then start from a fresh ``forkserver`` (or ``spawn``)."""
    methods = mp.get_all_start_methods()
    if "torch" not in sys.modules and "fork" in methods:
        return mp.get_context("fork")
    return mp.get_context("forkserver" if "forkserver" in methods else "spawn")


def run(spec: TournamentSpec, workers: int = 1, record_dir: str | None = None,
        progress: Callable[[int], None] | None = None) -> list[dict]:
    """Play every game of ``spec``; return the CSV rows sorted by (game, player).

    ``record_dir``: write ``game_000000.json`` ... (``Game.to_json``) there; the
    files appear only when every game has finished (they are written to a
    temporary folder first).
    """
    validate(spec)
    record = record_dir is not None
    tmp_dir = None
    if record:
        parent = os.path.dirname(os.path.abspath(record_dir))
        tmp_dir = tempfile.mkdtemp(prefix=".records-", dir=parent)
    results = []
    try:
        jobs = [(spec, g, record) for g in range(spec.games)]
        if workers <= 1:
            it = map(_worker, jobs)
            pool = None
        else:
            pool = pool_context().Pool(workers)
            chunk = max(1, min(16, spec.games // (workers * 8)))
            it = pool.imap_unordered(_worker, jobs, chunksize=chunk)
        try:
            for res in it:
                if record:
                    _write_text(os.path.join(tmp_dir, f"game_{res['game']:06d}.json"), res["record"])
                results.extend(res["rows"])
                if progress:
                    progress(1)
        finally:
            if pool is not None:
                pool.terminate()
                pool.join()
        if record:
            os.makedirs(record_dir, exist_ok=True)
            for fn in sorted(os.listdir(tmp_dir)):
                os.replace(os.path.join(tmp_dir, fn), os.path.join(record_dir, fn))
    finally:
        if tmp_dir is not None:
            shutil.rmtree(tmp_dir, ignore_errors=True)
    results.sort(key=lambda r: (r["game"], r["player"]))
    return results


# ------------------------------------------------------------------ output
def check_output_file(path: str, what: str) -> None:
    """ValueError unless ``path`` can be written as a file: its folder must exist (no folder
    is created for an output file) and be writable, and ``path`` must not be a folder."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{what} {path}: folder {folder} does not exist (create it first)")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"{what} {path}: folder {folder} is not writable")
    if os.path.isdir(path):
        raise ValueError(f"{what} {path} is a folder; give a file name")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise ValueError(f"{what} {path} exists and is not writable")


def check_output_folder(path: str, what: str) -> None:
    """ValueError unless ``path`` is a writable folder or can be created as one: an output
    folder is created (one level), so its parent folder must exist and be writable."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{what} {path} exists and is not a folder")
    target = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(target):
        raise ValueError(f"{what} {path}: parent folder {target} does not exist (create it "
                         f"first)")
    if not os.access(target, os.W_OK):
        raise ValueError(f"{what} {path}: folder {target} is not writable")


def _write_text(path: str, text: str) -> None:
    """Write a file atomically: a temporary file in the same folder, then rename."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as f:
        f.write(text)


def write_csv(rows: list[dict], path: str) -> None:
    """One row per player per game (CSV_FIELDS), written atomically."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(CSV_FIELDS), extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    _write_text(path, buf.getvalue())


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (95% by default)."""
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


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


def report(rows: list[dict], by_clan: bool = False) -> str:
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
                 f"s/game = the agent's thinking time per game"
                 + (f"\n{describe_rules(rows)}" if all(f in rows[0] for f in RULE_FIELDS) else ""))
    return "\n\n".join(parts)


def solo_summary(rows: list[dict], game_kw: dict | None = None) -> dict:
    """Solo games (R-9.2): mean final VP with a normal 95% CI, spread, and the number of
    games in each rating band of the ruleset (``game_kw``: its GameConfig options; every
    band listed, lowest first)."""
    from .game import Game
    kw = {k: v for k, v in (game_kw or {}).items() if k not in ("solo", "num_players")}
    solo = Game(GameConfig(num_players=1, solo=True, **kw)).ruleset.solo
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


# ----------------------------------------------------------------- balance
def balance_schedule(clans, n_players: int, seed: int = 0) -> tuple:
    """Per-player clan tuples, a randomized balanced design: every combination of
    ``n_players`` different clans is a block of ``n_players`` games, one per seat rotation
    (with the first player fixed to player 0, every clan of the block plays every seat
    once). Blocks come in a seeded random order that keeps every prefix near-balanced:
    the next block is one whose clans have played least so far (ties drawn from
    ``seed``). After every block the clans' game counts differ by at most two blocks
    (``2 * n_players`` games); the whole schedule is exactly balanced."""
    clans = list(clans)
    if len(set(clans)) != len(clans):
        raise ValueError(f"clans must be different, got {clans}")
    if len(clans) < n_players:
        raise ValueError(f"{n_players} players need at least {n_players} clans, got {len(clans)}")
    rng = np.random.default_rng([seed, n_players, len(clans)])
    left = list(itertools.combinations(clans, n_players))
    played = dict.fromkeys(clans, 0)
    out = []
    while left:
        tie = rng.random(len(left))
        k = min(range(len(left)), key=lambda i: (sum(played[c] for c in left[i]), tie[i]))
        combo = left.pop(k)
        perm = list(rng.permutation(n_players))       # which clan sits at player 0 first
        combo = tuple(combo[i] for i in perm)
        out += [combo[r:] + combo[:r] for r in range(n_players)]
        for c in combo:
            played[c] += 1
    return tuple(out)


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


def balance_figure(stats: list[dict], names, ahead, meet, n_players: int, title: str):
    """Bar chart of win rates with 95% CIs (par = 1/players) and the head-to-head matrix."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(15, 6), gridspec_kw={"width_ratios": [1, 1.1]})
    clans = [s["clan"] for s in stats]
    rate = np.array([s["win_rate"] for s in stats])
    lo = rate - np.array([s["ci_low"] for s in stats])
    hi = np.array([s["ci_high"] for s in stats]) - rate
    ax1.bar(clans, 100 * rate, yerr=[100 * lo, 100 * hi], capsize=4, color="#5b8db8")
    ax1.axhline(100 / n_players, color="k", ls="--", lw=1, label=f"par {100 / n_players:.0f}%")
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
