"""A rating ladder with a cost axis, and a sequential test for a replacement agent.

The ladder plays mixed tables of ``N`` players drawn from a list of rungs (agent names),
rates every rung by a Bradley-Terry fit (:func:`caledonia_env.train.rating.ratings`, Elo
scale, ``random`` = 0, 95% intervals) and puts beside each rating its cost: the agent's
mean thinking seconds a game.

Schedule (:func:`schedule`). A table is a set of ``N`` different rungs. A round plays every
table once, in an order that keeps every prefix near-balanced (the next table is one whose
pairs of rungs have met least so far, ties drawn from the seed), so after every full round
every pair of rungs has met equally often (for ``N = 2``: a round robin). A table is a
block of ``N`` games, one per cyclic rotation of its (seeded, shuffled) seating: every rung
of the block sits at every player index once. The block's games share one setup, drawn
from ``(seed, block)`` as a tournament's game is (:func:`caledonia_env.tournament.game_seeds`):
the same map, market, tiles and first player, so each rung also takes every turn position;
the clans are drafted by the players (the standard game, R-1.7). Use a seed that was never
used to choose or tune any rung. ``automa:LEVEL`` rungs (the publisher's Automa, played by
the engine, A-0) are 2-player only; a table of two Automa rungs is skipped.

Cost. ``think_seconds`` of the tournament rows: the CPU time (process time) of the agent's own
decisions in its worker process, warm-up and the engine's steps excluded. An Automa seat is played inside the engine's steps: its cost is
recorded as 0.

SPRT (:func:`sprt_test`, :func:`sprt`). A new agent is accepted over the one it replaces by
Wald's sequential probability ratio test on the new agent's score against the old one
(1 ahead, 1/2 tied on rank, 0 behind), head to head or at a table filled with other agents.
With the logistic Elo model ``s(d) = 1 / (1 + 10^(-d/400))``, ``s0 = s(elo0)`` and
``s1 = s(elo1)``, the log-likelihood ratio after scores ``x_1..x_n`` is

    LLR = sum_i [ x_i ln(s1 / s0) + (1 - x_i) ln((1 - s1) / (1 - s0)) ]

(Wald's Bernoulli test; a tie enters as half a win and half a loss, which overstates the
variance of a tied game, so ties make the test slower, never looser). With bounds
``A = ln(beta / (1 - alpha))`` and ``B = ln((1 - beta) / alpha)``, checked after every
block of ``N`` games (one per seat rotation): LLR >= B accepts H1 (the new agent is at
least ``elo1`` better: ``accept``), LLR <= A accepts H0 (it is at most ``elo0`` better:
``reject``); a game cap reached first is ``inconclusive`` (not accepted).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np

from caledonia_env import agents
from caledonia_env import tournament as tn
from caledonia_env.config import GameConfig
from caledonia_env.tournament.runner import map_jobs
from caledonia_env.train.rating import ratings

#: the default rungs per player count (expensive rungs such as mcts:32 stay optional)
DEFAULT_RUNGS = {
    2: ("random", "greedy", "greedy:solo", "greedy:2p", "mcts:8",
        "automa:1", "automa:2", "automa:3", "automa:4", "automa:5"),
    3: ("random", "greedy", "greedy:solo", "greedy:3p", "mcts:8"),
    4: ("random", "greedy", "greedy:solo", "greedy:4p", "mcts:8"),
}


def is_automa(name: str) -> bool:
    """Whether ``name`` is an ``automa:LEVEL`` seat (played by the engine)."""
    return name.strip().partition(":")[0] == "automa"


def check_agent(name: str, players: int) -> None:
    """ValueError for an unknown agent name (the registry's message lists the names) or an
    Automa seat outside 2 players."""
    agents.parse_name(name)
    if is_automa(name) and players != 2:
        raise ValueError(f"{name}: automa seats are 2-player only (one Automa seat against "
                         f"one agent), got --players {players}")
    agents.make(name, seed=0)


def check_rungs(rungs: Sequence[str], players: int) -> list[str]:
    """The rungs, stripped; ValueError for a bad player count, fewer than 2 (or ``players``)
    rungs, a repeated rung, an unknown agent name (the registry's message lists the names)
    or an Automa rung outside 2 players."""
    if not 2 <= players <= 4:
        raise ValueError(f"--players must be 2, 3 or 4, got {players}")
    rungs = [r.strip() for r in rungs if r.strip()]
    if len(rungs) < max(2, players):
        raise ValueError(f"a {players}-player ladder needs at least {max(2, players)} rungs, "
                         f"got {len(rungs)}: {','.join(rungs) or '(none)'}")
    seen = {r for r in rungs if rungs.count(r) > 1}
    if seen:
        raise ValueError(f"rungs must be different, repeated: {','.join(sorted(seen))}")
    for r in rungs:
        check_agent(r, players)
    if sum(not is_automa(r) for r in rungs) == 0:
        raise ValueError("a ladder needs at least one rung that is not an Automa")
    return rungs


def tables(rungs: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """Every set of ``players`` different rungs that can share a table (at most one Automa)."""
    return [t for t in itertools.combinations(rungs, players)
            if sum(is_automa(r) for r in t) <= 1]


def schedule(rungs: Sequence[str], players: int, games: int,
             seed: int = 0) -> list[tuple[int, tuple[str, ...]]]:
    """``(block, agent per player index)`` of each ladder game, in play order: whole blocks
    of ``players`` games (one per seat rotation) until at least ``games`` games (see the
    module docstring)."""
    rungs = list(rungs)
    all_tables = tables(rungs, players)
    if not all_tables:
        raise ValueError(f"no table of {players} rungs can be played from {','.join(rungs)}")
    rng = np.random.default_rng([int(seed), players, len(rungs)])
    met = {p: 0 for t in all_tables for p in itertools.combinations(sorted(t), 2)}
    out: list[tuple[int, tuple[str, ...]]] = []
    block = 0
    while len(out) < games:
        left = list(all_tables)
        while left and len(out) < games:
            tie = rng.random(len(left))
            k = min(range(len(left)), key=lambda i: (
                sum(met[p] for p in itertools.combinations(sorted(left[i]), 2)), tie[i]))
            table = left.pop(k)
            for p in itertools.combinations(sorted(table), 2):
                met[p] += 1
            seating = tuple(table[i] for i in rng.permutation(players))
            out += [(block, seating[r:] + seating[:r]) for r in range(players)]
            block += 1
    return out


def _play(job) -> list[dict]:
    spec, block, g = job
    rows = tn.play_game(spec, block)["rows"]
    for r in rows:
        r["block"], r["game"] = block, g
    return rows


def play(games: Sequence[tuple[int, tuple[str, ...]]], seed: int = 0, workers: int = 1,
         progress: Callable[[int], None] | None = None, config: GameConfig | None = None,
         first: int = 0) -> list[dict]:
    """Play scheduled games ``(block, players)`` through the tournament machinery (game
    ``block`` of a TournamentSpec of those players and ``seed``); the tournament rows, the
    ladder's game number (``first`` + index) in ``game`` and the block in ``block``,
    sorted by (game, player)."""
    specs: dict[tuple, tn.TournamentSpec] = {}
    blocks = 1 + max((b for b, _ in games), default=0)
    for _, players in games:
        if players not in specs:
            spec = tn.TournamentSpec(players=tuple(players), games=blocks, seed=seed,
                                     config=config)
            tn.validate(spec)
            specs[players] = spec
    jobs = [(specs[p], b, first + i) for i, (b, p) in enumerate(games)]
    rows: list[dict] = []
    chunk = max(1, min(8, len(jobs) // (max(workers, 1) * 8)))
    for res in map_jobs(_play, jobs, workers, chunk):
        rows.extend(res)
        if progress:
            progress(1)
    rows.sort(key=lambda r: (r["game"], r["player"]))
    return rows


def by_game(rows: list[dict]) -> list[list[dict]]:
    """The rows grouped per game, in game order."""
    out: dict = {}
    for r in rows:
        out.setdefault(r["game"], []).append(r)
    return [out[g] for g in sorted(out)]


def rate(rows: list[dict], anchor: str = "random") -> list[dict]:
    """Per rung, best first: agent, elo, ci (95% half-width), lo, hi, games, score (share of
    pairwise points), opponents, cpu_s (mean thinking seconds a game)."""
    games = [[(r["agent"], float(r["rank"])) for r in g] for g in by_game(rows)]
    think: dict[str, list[float]] = {}
    for r in rows:
        think.setdefault(r["agent"], []).append(float(r["think_seconds"]))
    out = ratings(games, anchor=anchor)
    for r in out:
        r["lo"], r["hi"] = r["elo"] - r["ci"], r["elo"] + r["ci"]
        r["cpu_s"] = float(np.mean(think[r["agent"]]))
    return out


def format_ladder(table: list[dict], anchor: str = "random") -> str:
    """The ladder as a text table: rank, rung, Elo ± 95% CI, games, score, CPU s a game."""
    w = max([len("rung")] + [len(r["agent"]) for r in table]) + 2
    head = f"{'#':>3}  {'rung':<{w}}{'Elo':>7}{'95% CI':>9}{'games':>8}{'score %':>9}{'CPU s/game':>12}"
    lines = [head, "-" * len(head)]
    for i, r in enumerate(table, 1):
        cost = "engine" if is_automa(r["agent"]) else f"{r['cpu_s']:.4f}"
        lines.append(f"{i:>3}  {r['agent']:<{w}}{r['elo']:>7.0f}{'±' + format(r['ci'], '.0f'):>9}"
                     f"{r['games']:>8}{100 * r['score']:>8.1f}%{cost:>12}")
    base = f"{anchor} = 0" if any(r["agent"] == anchor for r in table) else "mean = 0"
    lines.append(f"Bradley-Terry fit on pairwise ranks, Elo scale ({base}), 95% CI; CPU s/game = "
                 f"the agent's mean thinking time a game (an Automa is played by the engine)")
    return "\n".join(lines)


def plot_ladder(table: list[dict], path: str, title: str = "") -> str:
    """Draw strength against cost to ``path`` (PNG): x = CPU seconds a game (log scale),
    y = Elo with its 95% interval, each rung labelled; Automa rungs (no thinking time of
    their own) sit at the left edge. Returns ``path``."""
    import matplotlib               # heavy: imported only when a chart is drawn
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    costs = [r["cpu_s"] for r in table if r["cpu_s"] > 0 and not is_automa(r["agent"])]
    floor = (min(costs) if costs else 1e-3) / 4
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for r in table:
        auto = is_automa(r["agent"])
        x = floor if auto or r["cpu_s"] <= 0 else r["cpu_s"]
        color = "#8d99ae" if auto else "#e76f51"
        ax.errorbar([x], [r["elo"]], yerr=[[r["ci"]], [r["ci"]]], fmt="s" if auto else "o",
                    color=color, capsize=3, ms=6)
        ax.annotate(r["agent"], (x, r["elo"]), textcoords="offset points", xytext=(6, 4),
                    fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("CPU seconds a game (agent's thinking time; log scale; Automa at the left "
                  "edge)")
    ax.set_ylabel("Elo (random = 0), 95% CI")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(title or "Strength against cost")
    fig.tight_layout()
    tn.save_figure(fig, path)
    plt.close(fig)
    return path


def score_of(game_rows: list[dict], new: str, old: str) -> float:
    """``new``'s score against ``old`` in one game: 1 ahead, 1/2 tied on rank, 0 behind."""
    rank = {r["agent"]: float(r["rank"]) for r in game_rows}
    return 1.0 if rank[new] < rank[old] else 0.5 if rank[new] == rank[old] else 0.0


def expected_score(elo: float) -> float:
    """The logistic Elo model's expected score at an Elo difference ``elo``."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def sprt_llr(scores: Sequence[float], elo0: float = 0.0, elo1: float = 20.0) -> float:
    """Wald's log-likelihood ratio of H1 (elo1) against H0 (elo0) (module docstring)."""
    s0, s1 = expected_score(elo0), expected_score(elo1)
    win, loss = math.log(s1 / s0), math.log((1 - s1) / (1 - s0))
    return float(sum(x * win + (1 - x) * loss for x in scores))


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's (lower, upper) bounds of the LLR."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def check_sprt(elo0: float, elo1: float, alpha: float, beta: float) -> None:
    if not elo1 > elo0:
        raise ValueError(f"--elo1 must be above --elo0, got {elo0} and {elo1}")
    if not (0 < alpha < 0.5 and 0 < beta < 0.5):
        raise ValueError(f"--alpha and --beta must be in (0, 0.5), got {alpha} and {beta}")


def sprt_test(scores: Sequence[float], elo0: float = 0.0, elo1: float = 20.0,
              alpha: float = 0.05, beta: float = 0.05, step: int = 1) -> dict:
    """The test over ``scores`` in order, checked after every ``step`` scores: verdict
    (accept / reject / continue), the LLR where it stopped, the bounds, the games used,
    the mean score and the LLR after each check (``trajectory``)."""
    check_sprt(elo0, elo1, alpha, beta)
    lower, upper = sprt_bounds(alpha, beta)
    s0, s1 = expected_score(elo0), expected_score(elo1)
    win, loss = math.log(s1 / s0), math.log((1 - s1) / (1 - s0))
    llr, used, verdict, path = 0.0, 0, "continue", []
    for i, x in enumerate(scores, 1):
        llr += x * win + (1 - x) * loss
        if i % step == 0 or i == len(scores):
            used = i
            path.append(llr)
            if llr >= upper or llr <= lower:
                verdict = "accept" if llr >= upper else "reject"
                break
    return {"verdict": verdict, "llr": llr if used else 0.0, "lower": lower, "upper": upper,
            "games": used, "score": float(np.mean(scores[:used])) if used else float("nan"),
            "trajectory": path}


def sprt_schedule(new: str, old: str, players: int, blocks: range,
                  opponents: Sequence[str] = ("greedy",),
                  seed: int = 0) -> list[tuple[int, tuple[str, ...]]]:
    """The SPRT's games for ``blocks``: ``new``, ``old`` and ``players - 2`` seats of
    ``opponents`` (cycled), seated in a shuffled order drawn from ``(seed, block)`` and
    played in every cyclic rotation."""
    out = []
    fill = [opponents[i % len(opponents)] for i in range(players - 2)]
    for b in blocks:
        rng = np.random.default_rng([int(seed), int(b), players, 7])
        table = [new, old] + fill
        seating = tuple(table[i] for i in rng.permutation(players))
        out += [(b, seating[r:] + seating[:r]) for r in range(players)]
    return out


def sprt(new: str, old: str, players: int = 2, elo0: float = 0.0, elo1: float = 20.0,
         alpha: float = 0.05, beta: float = 0.05, max_games: int = 4000, batch: int = 200,
         opponents: Sequence[str] = ("greedy",), seed: int = 0, workers: int = 1,
         progress: Callable[[int], None] | None = None) -> dict:
    """Play ``new`` against ``old`` in batches of about ``batch`` games until the test
    decides (checked after every block, in game order, so the verdict does not depend on
    ``batch`` or ``workers``) or ``max_games`` are played; :func:`sprt_test`'s dict with
    ``inconclusive`` for an undecided test at the cap, and the rows played."""
    check_sprt(elo0, elo1, alpha, beta)
    new, old = new.strip(), old.strip()
    if new == old:
        raise ValueError(f"the new agent and the one it replaces are the same: {new}")
    if not 2 <= players <= 4:
        raise ValueError(f"--players must be 2, 3 or 4, got {players}")
    for a in [new, old] + (list(opponents) if players > 2 else []):
        check_agent(a, players)
    if is_automa(new) and is_automa(old):
        raise ValueError("the new agent and the old one cannot both be Automa seats")
    if max_games < players:
        raise ValueError(f"--max-games must be at least {players}, got {max_games}")
    per_batch = max(1, batch // players)
    scores: list[float] = []
    rows: list[dict] = []
    block = 0
    while True:
        todo = min(per_batch, max_games // players - block)
        games = sprt_schedule(new, old, players, range(block, block + todo), opponents, seed)
        played = play(games, seed=seed, workers=workers, progress=progress, first=len(scores))
        rows += played
        scores += [score_of(g, new, old) for g in by_game(played)]
        block += todo
        result = sprt_test(scores, elo0, elo1, alpha, beta, step=players)
        if result["verdict"] != "continue" or block >= max_games // players:
            break
    if result["verdict"] == "continue":
        result["verdict"] = "inconclusive"
    result.update(new=new, old=old, players=players, elo0=elo0, elo1=elo1, alpha=alpha,
                  beta=beta, rows=[r for r in rows if r["game"] < result["games"]])
    return result
