"""The greedy evaluation's weights tuned by the cross-entropy method, for one player count.

Every game is set up from ``(seed, g)`` as in a tournament (:func:`tournament.spec.game_seeds`:
clans drafted, the ruleset's map), the bots' tie-breaking stream seeded per game, and played to
the end inside numba (:func:`agents.rollouts.greedy_rollout`, each seat with its own weight
vector): every vector of a generation plays the same games (common random numbers).

- Solo (R-9.2): the fitness is the greedy bot's mean final VP.
- 2-4 players: the candidate sits in seat ``g mod n`` of game g (seats rotated), the other
  seats play the opponents' weights (the pool: the default greedy bot, the solo-tuned set and
  the last generation's mean, in an order that turns with g); the fitness is the candidate's
  win share (ties split) plus ``MARGIN_WEIGHT`` times its mean margin over the best opponent
  (clipped at +-``MARGIN_CLIP`` VP), so that among equal win shares the larger margins count.

Each generation draws ``population`` vectors around the mean (Gaussian, one standard
deviation per weight, clipped at 0; the first is the mean itself), keeps the best quarter and
moves the mean to theirs; the tie-breaking noise weight stays as it is (and in the solo game
the opponent term, which has no opponent to weigh). The search's whole
state (mean, deviations, the generator's state, history) is a JSON object after every
generation (:func:`tune`'s ``checkpoint``), from which a run resumes exactly.
"""
from __future__ import annotations

import time

import numpy as np

from caledonia_env.agents.greedy_value import (DEFAULT_WEIGHTS, N_WEIGHTS, W_MONEY_CURVE, W_NOISE,
                                               W_OPPONENT)
from caledonia_env.agents.rollouts import final_margin, greedy_rollout, seed_numba
from caledonia_env.config import GameConfig
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine.layout import S_NP
from caledonia_env.game import Game
from caledonia_env.tournament.spec import TournamentSpec, game_seeds

MAX_STEPS = 100000
SIGMA = 0.4             # the first generation's standard deviation, relative to each weight
SIGMA_FLOOR = 0.02      # ... plus this, so that a weight of 0 can move
SIGMA_KEEP = 0.7        # a generation's sigma: this share of the last one, the rest the elite's
#: first deviations of the weights that start at 0 (their scale: the opponent term's lambda
#: is a share of a VP estimate; the money curve's VP per £ per production squared)
SIGMA_START = {W_OPPONENT: 0.25, W_MONEY_CURVE: 0.01}
MARGIN_WEIGHT = 0.002   # fitness per VP of margin over the best opponent (2-4 players)
MARGIN_CLIP = 50.0


def game_starts(seed: int, games: int, players: int = 1, ruleset: str | None = None
                ) -> list[tuple]:
    """The start of games 0..games-1 of a tournament with ``seed`` (clans drafted; solo when
    ``players`` is 1, as ``caledonia play --solo``): (state, tables, Automa switch, the bots'
    seed) each."""
    config = GameConfig(num_players=players, solo=players == 1, ruleset=ruleset)
    spec = TournamentSpec(players=("greedy",) * players, games=games, seed=seed, config=config)
    starts = []
    for g in range(games):
        game_seed, agent_seeds = game_seeds(seed, g, players)
        game = Game(spec.game_config(game_seed, g))
        starts.append((game.state.copy(), game.tables, automa_switch(game.tables),
                       agent_seeds[0]))
    return starts


def solo_starts(seed: int, games: int, ruleset: str | None = None) -> list[tuple]:
    """:func:`game_starts` of the solo game."""
    return game_starts(seed, games, 1, ruleset)


def play(seats, start) -> np.ndarray:
    """Play one game from ``start`` (of :func:`game_starts`) with seat p's weights
    ``seats[p]``; the final state."""
    s0, T, switch, agent_seed = start
    s = s0.copy()
    seed_numba(agent_seed)
    w = np.ascontiguousarray(np.asarray(seats, np.float64).reshape(-1))
    if greedy_rollout(s, T, w, MAX_STEPS, switch) < 0:
        raise RuntimeError("a position without a legal action")
    return s


def solo_scores(w, starts) -> np.ndarray:
    """The greedy bot's final VP with weights ``w`` in each of the solo games ``starts``."""
    return np.array([np.floor(final_margin(play([w], st), st[1], 0)) for st in starts])


def seat_plan(g: int, players: int, pool_size: int) -> tuple[int, list[int]]:
    """Game g's seat of the candidate (``g mod players``) and the pool member of each other
    seat, in seat order (the pool turned by g, so that each member meets every seat)."""
    me = g % players
    others = [(g // players + j) % pool_size for j in range(players - 1)]
    return me, others


def match_scores(w, pool, starts) -> tuple[np.ndarray, np.ndarray]:
    """Per game of ``starts``: the candidate ``w``'s win (1, ties split by the number tied,
    else 0) and its final margin over the best opponent, the other seats from ``pool``
    (:func:`seat_plan`)."""
    n = _players(starts[0])
    wins, margins = np.empty(len(starts)), np.empty(len(starts))
    for g, st in enumerate(starts):
        me, others = seat_plan(g, n, len(pool))
        seats = [pool[others.pop(0)] if q != me else w for q in range(n)]
        s = play(seats, st)
        m = final_margin(s, st[1], me)
        if m == 0:          # tied with the best opponent, money included (R-7 [interp])
            tied = sum(1 for q in range(n) if q != me and final_margin(s, st[1], q) == 0)
            wins[g] = 1.0 / (1 + tied)
        else:
            wins[g] = 1.0 if m > 0 else 0.0
        margins[g] = m
    return wins, margins


def _players(start) -> int:
    return int(start[0][S_NP])


def fitness(w, pool, starts) -> float:
    """The tuning's fitness of ``w``: solo mean VP, or win share + margin term (module doc)."""
    if _players(starts[0]) == 1:
        return float(solo_scores(w, starts).mean())
    wins, margins = match_scores(w, pool, starts)
    return float(wins.mean() + MARGIN_WEIGHT * np.clip(margins, -MARGIN_CLIP, MARGIN_CLIP).mean())


def new_state(seed: int, init=None) -> dict:
    """The search's state before its first generation, from ``init`` (default
    ``DEFAULT_WEIGHTS``) and the generator seeded by ``seed``."""
    mu = np.array(DEFAULT_WEIGHTS if init is None else init, np.float64)
    if mu.shape != (N_WEIGHTS,):
        raise ValueError(f"init must have {N_WEIGHTS} weights, got shape {mu.shape}")
    sigma = SIGMA * np.abs(mu) + SIGMA_FLOOR
    for i, sd in SIGMA_START.items():
        if mu[i] == 0.0:
            sigma[i] = sd
    return {"generation": 0, "mean": mu.tolist(), "sigma": sigma.tolist(),
            "rng": np.random.default_rng(seed).bit_generator.state, "history": []}


def tune(starts, generations: int, population: int, seed: int, init=None, progress=None,
         opponents=(), state: dict | None = None, checkpoint=None, deadline=None) -> dict:
    """The cross-entropy method on the games ``starts`` up to generation ``generations``,
    from ``state`` (a checkpoint of an earlier call) or from ``init`` (:func:`new_state`).
    ``opponents``: the fixed pool members (2-4 players; the last generation's mean is added).
    ``progress(generation, row)`` and ``checkpoint(state)`` are called after each generation;
    ``deadline`` (a ``time.monotonic()`` value) stops after the generation that passes it.
    Returns ``{"weights": the final mean, "start_fitness"`` and ``"fitness"``: of the first
    and the final mean, ``"history"``: one dict per generation, ``"state"``, ``"done"``:
    whether every generation ran}``."""
    if generations < 1 or population < 4:
        raise ValueError(f"need generations >= 1 and population >= 4, got {generations} "
                         f"and {population}")
    multi = _players(starts[0]) > 1
    if multi and not opponents:
        raise ValueError("a tuning with opponents needs at least one opponent weight vector")
    state = dict(state) if state is not None else new_state(seed, init)
    mu, sigma = np.array(state["mean"]), np.array(state["sigma"])
    rng = np.random.default_rng()
    rng.bit_generator.state = state["rng"]
    history = list(state["history"])
    fixed = (W_NOISE,) if multi else (W_NOISE, W_OPPONENT)    # alone, no opponent to weigh
    free = np.array([i for i in range(N_WEIGHTS) if i not in fixed])
    n_elite = max(2, population // 4)
    while state["generation"] < generations:
        gen = state["generation"]
        t0 = time.perf_counter()
        pool = [np.asarray(o, np.float64) for o in opponents] + ([mu.copy()] if multi else [])
        cand = np.repeat(mu[None], population, 0)
        cand[:, free] += rng.standard_normal((population, len(free))) * sigma[free]
        cand[:, free] = np.maximum(cand[:, free], 0.0)
        cand[0] = mu
        fit = np.array([fitness(c, pool, starts) for c in cand])
        elite = np.argsort(-fit)[:n_elite]
        mu = cand[elite].mean(0)
        sigma[free] = (SIGMA_KEEP * sigma[free] + (1 - SIGMA_KEEP) * cand[elite][:, free].std(0)
                       + 1e-3)
        row = {"generation": gen, "mean_fitness": float(fit[0]), "best": float(fit.max()),
               "elite": float(fit[elite].mean()), "seconds": time.perf_counter() - t0}
        history.append(row)
        state = {"generation": gen + 1, "mean": mu.tolist(), "sigma": sigma.tolist(),
                 "rng": rng.bit_generator.state, "history": history}
        if progress is not None:
            progress(gen, row)
        if checkpoint is not None:
            checkpoint(state)
        if deadline is not None and time.monotonic() >= deadline:
            break
    final_pool = [np.asarray(o, np.float64) for o in opponents] + ([mu.copy()] if multi else [])
    return {"weights": mu, "start_fitness": history[0]["mean_fitness"] if history else None,
            "fitness": fitness(mu, final_pool, starts), "history": history, "state": state,
            "done": state["generation"] >= generations}


__all__ = ["fitness", "game_starts", "match_scores", "new_state", "play", "seat_plan",
           "solo_scores", "solo_starts", "tune"]
