"""Studies that stop when they know (``caledonia balance --until resolved``): anytime-valid
confidence sequences for the mean of bounded outcomes, and the verdicts read from them.

A confidence sequence at level 1 - alpha holds the mean at *every* game count at once with
probability >= 1 - alpha, so a study may look after every batch and stop whenever it likes
without raising its error rate (a fixed-n interval checked after every batch does not:
the more looks, the more often it excludes the truth once). :func:`confidence_sequence` is
the predictable plug-in empirical-Bernstein sequence of Waudby-Smith & Ramdas ("Estimating
means of bounded random variables by betting", JRSS-B 2023, Theorem 2), intersected over
time: valid for independent outcomes in a known range whose means may differ from game to
game (then it covers their weighted running mean), and narrow when the outcomes vary
little (paired differences are mostly 0).

A verdict compares the mean with a centre (par, or 0 for a paired difference) and an
indifference margin: ``above`` when the sequence's lower bound is above the centre,
``below`` when its upper bound is below it, ``at`` when the whole sequence lies within
centre ± margin; the first one reached is kept. Each wrong verdict (``above`` or ``below``
on the wrong side, ``at`` for a mean further than the margin) needs the sequence to miss
the mean, so with ``alpha`` split over k verdicts (:func:`bonferroni`) every verdict of a
study is right with probability >= 1 - alpha, however long it runs.
"""
from __future__ import annotations

import numpy as np

ABOVE, AT, BELOW = "above", "at", "below"
CAP = 0.5                                  # the largest bet λ (Waudby-Smith & Ramdas: 1/2)


def bonferroni(confidence: float, k: int) -> float:
    """The alpha of each of ``k`` verdicts for a study-wide ``confidence``."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
    return (1 - confidence) / max(1, k)


def confidence_sequence(x, alpha: float, lo: float = 0.0, hi: float = 1.0
                        ) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) after each outcome of ``x`` (last axis = time; leading axes are
    separate streams) of the two-sided level 1 - ``alpha`` confidence sequence of outcomes
    in ``[lo, hi]``, each bound the running intersection (lower never falls, upper never
    rises). PrPl-EB: with the outcomes scaled to [0, 1], the running mean
    mu_t = (1/2 + sum x) / (t + 1), variance s2_t = (1/4 + sum (x_i - mu_i)^2) / (t + 1),
    bets lam_t = min(sqrt(2 log(2/alpha) / (s2_{t-1} t log(1 + t))), 1/2), the centre
    sum lam x / sum lam and the half-width
    (log(2/alpha) + sum 4 (x_i - mu_{i-1})^2 (-log(1 - lam_i) - lam_i) / 4) / sum lam."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    if not hi > lo:
        raise ValueError(f"the range must have hi > lo, got [{lo}, {hi}]")
    y = (np.asarray(x, float) - lo) / (hi - lo)
    if y.size and (y.min() < -1e-12 or y.max() > 1 + 1e-12):
        raise ValueError(f"outcomes must lie in [{lo}, {hi}]")
    n = y.shape[-1]
    t = np.arange(1, n + 1, dtype=float)
    mu = (0.5 + np.cumsum(y, axis=-1)) / (t + 1)
    s2 = (0.25 + np.cumsum((y - mu) ** 2, axis=-1)) / (t + 1)
    lead = y.shape[:-1] + (1,)
    mu_prev = np.concatenate([np.full(lead, 0.5), mu[..., :-1]], axis=-1)
    s2_prev = np.concatenate([np.full(lead, 0.25), s2[..., :-1]], axis=-1)
    log_a = np.log(2 / alpha)
    lam = np.minimum(np.sqrt(2 * log_a / (s2_prev * t * np.log1p(t))), CAP)
    psi = (-np.log1p(-lam) - lam) / 4
    total = np.cumsum(lam, axis=-1)
    centre = np.cumsum(lam * y, axis=-1) / total
    half = (log_a + np.cumsum(4 * (y - mu_prev) ** 2 * psi, axis=-1)) / total
    lower = np.maximum.accumulate(np.clip(centre - half, 0, 1), axis=-1)
    upper = np.minimum.accumulate(np.clip(centre + half, 0, 1), axis=-1)
    return lo + (hi - lo) * lower, lo + (hi - lo) * upper


def verdicts(lower, upper, centre: float, margin: float) -> np.ndarray:
    """The verdict of each (lower, upper) pair (arrays of one shape): ABOVE, BELOW, AT or
    '' (unresolved); ABOVE / BELOW win over AT when both hold."""
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    out = np.full(lower.shape, "", dtype=object)
    out[(lower >= centre - margin) & (upper <= centre + margin)] = AT
    out[upper < centre] = BELOW
    out[lower > centre] = ABOVE
    return out


def first_verdict(lower, upper, centre: float, margin: float) -> tuple[str, int | None]:
    """(verdict, index) of the first resolved point of a sequence (1-d bounds); ('', None)
    if it never resolves. With running-intersection bounds a verdict, once reached, holds
    for the rest of the sequence."""
    v = verdicts(lower, upper, centre, margin)
    hit = np.flatnonzero(v != "")
    return ("", None) if hit.size == 0 else (str(v[hit[0]]), int(hit[0]))
