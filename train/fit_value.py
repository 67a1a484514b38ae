"""The learned afterstate value (:mod:`agents.afterstate_value`) fitted to game outcomes.

:func:`value_samples` plays greedy games (every seat with the same weights, by default the
set tuned for the player count, ``greedy:Np``) from :func:`train.tune_weights.game_starts`
(clans drafted, the ruleset's map, the bots' stream seeded per game) inside numba, stopping at
the start of every round (:func:`agents.rollouts.greedy_rollout` with ``stop``): the positions
where a search with a horizon of whole rounds values its rollouts. Each such position gives
one sample per seat: its features (:func:`agents.afterstate_value.value_features`) and that
seat's final margin (own final VP minus the best opponent's; own VP in a solo game).

:func:`fit` trains the network (two ReLU layers, mean squared error on the margin in units of
:data:`SCALE` VP, Adam, the games split into a training and a held-out part) and returns it
with the standardisation folded in; :func:`fit_report` gives the held-out R² by round beside
that of the hand-written evaluation's margin (:func:`agents.rollouts.leaf_margin`), the
baseline the network replaces.
"""
from __future__ import annotations

import time

import numpy as np

from caledonia_env.agents.afterstate_value import ARRAYS, N_FEATURES, value_features
from caledonia_env.agents.rollouts import final_margin, greedy_rollout, leaf_margin, seed_numba
from caledonia_env.engine.layout import S_NP, S_ROUND, game_over
from caledonia_env.train.tune_weights import MAX_STEPS, game_starts

SCALE = 20.0            # the network learns margin / SCALE


def value_samples(players: int, games: int, seed: int, weights, ruleset: str | None = None,
                  progress=None) -> dict:
    """Samples of :func:`value_features` at every round start of ``games`` greedy games of
    ``seed`` (weights ``weights`` in every seat). Returns arrays ``x`` (float32[N, F]),
    ``y`` (the final margin), ``game``, ``round``, and ``leaf`` (the hand-written margin of the
    same position, :func:`agents.rollouts.leaf_margin`)."""
    w = np.ascontiguousarray(weights, np.float64)
    xs, ys, gs, rs, leaves = [], [], [], [], []
    feat = np.empty(N_FEATURES)
    t0 = time.perf_counter()
    for g, (s0, T, switch, agent_seed) in enumerate(game_starts(seed, games, players, ruleset)):
        s = s0.copy()
        seed_numba(agent_seed)
        n = int(s[S_NP])
        held = []                               # (features, round, seat, leaf) of this game
        while not game_over(s):
            if greedy_rollout(s, T, w, MAX_STEPS, switch, stop=int(s[S_ROUND]) + 1) < 0:
                raise RuntimeError("a position without a legal action")
            if game_over(s):
                break
            for q in range(n):
                value_features(s, T, q, w, feat)
                held.append((feat.astype(np.float32), int(s[S_ROUND]), q,
                             leaf_margin(s, T, q, w)))
        final = [final_margin(s, T, q) for q in range(n)]
        for f, r, q, leaf in held:
            xs.append(f)
            ys.append(final[q])
            gs.append(g)
            rs.append(r)
            leaves.append(leaf)
        if progress is not None:
            progress(g + 1, games, time.perf_counter() - t0)
    return {"x": np.stack(xs), "y": np.array(ys, np.float32), "game": np.array(gs, np.int64),
            "round": np.array(rs, np.int64), "leaf": np.array(leaves, np.float32)}


def split(samples: dict, held_out: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks (train, test): the last ``held_out`` share of the games is held out."""
    games = samples["game"]
    cut = np.quantile(np.unique(games), 1.0 - held_out)
    test = games > cut
    return ~test, test


def fit(samples: dict, train_mask, hidden: int = 64, epochs: int = 40, batch: int = 512,
        lr: float = 2e-3, weight_decay: float = 1e-4, seed: int = 0, log=None) -> dict:
    """Train the network on ``samples[train_mask]``; its arrays (``ARRAYS``), taking the raw
    features and giving the margin in VP."""
    import torch

    torch.manual_seed(seed)
    x = samples["x"][train_mask].astype(np.float64)
    y = samples["y"][train_mask].astype(np.float64) / SCALE
    mu = x.mean(0)
    sd = x.std(0)
    sd[sd < 1e-6] = 1.0
    xt = torch.tensor((x - mu) / sd, dtype=torch.float32)
    yt = torch.tensor(y, dtype=torch.float32)
    net = torch.nn.Sequential(torch.nn.Linear(N_FEATURES, hidden), torch.nn.ReLU(),
                              torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                              torch.nn.Linear(hidden, 1))
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    gen = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        perm = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for i in range(0, len(xt), batch):
            idx = perm[i:i + batch]
            loss = torch.mean((net(xt[idx]).squeeze(1) - yt[idx]) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
        sched.step()
        if log is not None:
            log(epoch + 1, epochs, total / len(xt) * SCALE ** 2)
    l1, l2, l3 = (m.state_dict() for m in (net[0], net[2], net[4]))
    w1 = l1["weight"].double().numpy().T / sd[:, None]
    b1 = l1["bias"].double().numpy() - (mu / sd) @ l1["weight"].double().numpy().T
    return dict(zip(ARRAYS, (w1, b1, l2["weight"].double().numpy().T,
                             l2["bias"].double().numpy(),
                             l3["weight"].double().numpy()[0] * SCALE,
                             l3["bias"].double().numpy() * SCALE)))


def predict(arrays: dict, x: np.ndarray) -> np.ndarray:
    """The network's margins for the rows of ``x`` (NumPy; the same as the numba forward)."""
    h = np.maximum(x.astype(np.float64) @ arrays["w1"] + arrays["b1"], 0.0)
    h = np.maximum(h @ arrays["w2"] + arrays["b2"], 0.0)
    return h @ arrays["w3"] + arrays["b3"][0]


def r2(pred: np.ndarray, y: np.ndarray) -> float:
    """1 - SSE / SST."""
    return float(1.0 - np.sum((y - pred) ** 2) / max(np.sum((y - y.mean()) ** 2), 1e-12))


def fit_report(arrays: dict, samples: dict, mask) -> list[dict]:
    """Held-out R² and RMSE by round (and all), the network beside the hand-written margin."""
    rows = []
    rounds = samples["round"][mask]
    y = samples["y"][mask].astype(np.float64)
    net = predict(arrays, samples["x"][mask])
    leaf = samples["leaf"][mask].astype(np.float64)
    for r in [*sorted(set(rounds.tolist())), None]:
        sel = np.ones(len(y), bool) if r is None else rounds == r
        rows.append({"round": "all" if r is None else int(r), "n": int(sel.sum()),
                     "r2_value": r2(net[sel], y[sel]), "r2_evaluation": r2(leaf[sel], y[sel]),
                     "rmse_value": float(np.sqrt(np.mean((net[sel] - y[sel]) ** 2))),
                     "rmse_evaluation": float(np.sqrt(np.mean((leaf[sel] - y[sel]) ** 2)))})
    return rows
