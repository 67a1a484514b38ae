"""The greedy evaluation's weights tuned for the solo game (R-9.2) by the cross-entropy method.

The fitness of a weight vector is the greedy bot's mean final VP over a fixed set of solo
games (common random numbers: game ``g`` is set up from ``(seed, g)`` as in a tournament,
:func:`tournament.spec.game_seeds`, and the bot's tie-breaking stream is seeded per game),
each played to the end inside numba (:func:`agents.rollouts.greedy_rollout`). Each
generation draws ``population`` vectors around the mean (Gaussian, one standard deviation per
weight, clipped at 0; the first is the mean itself), keeps the best quarter and moves the
mean to theirs; the tie-breaking noise weight stays as it is. The solo game only: with
opponents the fitness would need a rollout in which seats play with different weights.
"""
from __future__ import annotations

import time

import numpy as np

from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS, W_NOISE
from caledonia_env.agents.rollouts import final_margin, greedy_rollout, seed_numba
from caledonia_env.config import GameConfig
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.game import Game
from caledonia_env.tournament.spec import TournamentSpec, game_seeds

MAX_STEPS = 100000
SIGMA = 0.4             # the first generation's standard deviation, relative to each weight
SIGMA_FLOOR = 0.02      # ... plus this, so that a weight of 0 can move
SIGMA_KEEP = 0.7        # a generation's sigma: this share of the last one, the rest the elite's


def solo_starts(seed: int, games: int, ruleset: str | None = None) -> list[tuple]:
    """The start of solo games 0..games-1 of a tournament with ``seed`` (clans drafted, as
    ``caledonia play --solo``): (state, tables, Automa switch, the bot's seed) each."""
    spec = TournamentSpec(players=("greedy",), games=games, seed=seed,
                          config=GameConfig(num_players=1, solo=True, ruleset=ruleset))
    starts = []
    for g in range(games):
        game_seed, agent_seeds = game_seeds(seed, g, 1)
        game = Game(spec.game_config(game_seed, g))
        starts.append((game.state.copy(), game.tables, automa_switch(game.tables),
                       agent_seeds[0]))
    return starts


def solo_scores(w, starts) -> np.ndarray:
    """The greedy bot's final VP with weights ``w`` in each of the games ``starts``."""
    w = np.asarray(w, np.float64)
    vp = np.empty(len(starts))
    for i, (s0, T, switch, agent_seed) in enumerate(starts):
        s = s0.copy()
        seed_numba(agent_seed)
        if greedy_rollout(s, T, w, MAX_STEPS, switch) < 0:
            raise RuntimeError(f"game {i}: a position without a legal action")
        vp[i] = np.floor(final_margin(s, T, 0))
    return vp


def tune(starts, generations: int, population: int, seed: int, init=None,
         progress=None) -> dict:
    """The cross-entropy method from ``init`` (default ``DEFAULT_WEIGHTS``) on the games
    ``starts``: ``{"weights": the final mean, "start_fitness"`` and ``"fitness"``: the mean
    VP of ``init`` and of the final mean on ``starts``, ``"history"``: one dict per
    generation}``. ``progress(generation, row)`` is called after each generation."""
    if generations < 1 or population < 4:
        raise ValueError(f"need generations >= 1 and population >= 4, got {generations} "
                         f"and {population}")
    mu = np.array(DEFAULT_WEIGHTS if init is None else init, np.float64)
    free = np.array([i for i in range(len(mu)) if i != W_NOISE])
    sigma = SIGMA * np.abs(mu) + SIGMA_FLOOR
    rng = np.random.default_rng(seed)
    n_elite = max(2, population // 4)
    history = []
    for gen in range(generations):
        t0 = time.perf_counter()
        cand = np.repeat(mu[None], population, 0)
        cand[:, free] += rng.standard_normal((population, len(free))) * sigma[free]
        cand[:, free] = np.maximum(cand[:, free], 0.0)
        cand[0] = mu
        fit = np.array([solo_scores(c, starts).mean() for c in cand])
        elite = np.argsort(-fit)[:n_elite]
        mu = cand[elite].mean(0)
        sigma[free] = (SIGMA_KEEP * sigma[free] + (1 - SIGMA_KEEP) * cand[elite][:, free].std(0)
                       + 1e-3)
        row = {"generation": gen, "mean_fitness": float(fit[0]), "best": float(fit.max()),
               "elite": float(fit[elite].mean()), "seconds": time.perf_counter() - t0}
        history.append(row)
        if progress is not None:
            progress(gen, row)
    return {"weights": mu, "start_fitness": history[0]["mean_fitness"],
            "fitness": float(solo_scores(mu, starts).mean()), "history": history}


__all__ = ["solo_scores", "solo_starts", "tune"]
