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

import os
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
    net = _torch_net(hidden, None, mu, sd)
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
    return _arrays_of(net, mu, sd)


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


# ----------------------------------------------------------------------------------------
# Listwise fit on the search's sibling rollouts
# ----------------------------------------------------------------------------------------
LABEL_ROWS = ("x", "done", "leaf", "deep", "group", "action", "seed", "game", "ply", "player",
              "round", "outcome")
FAILED = -1e9


def recording_agent(name: str, feature_weights):
    """The flat search ``name`` (``mcts:NhH...``, greedy rollouts of whole rounds) with its
    evaluator swapped for :class:`agents.search_values.RecordingRollouts`: the same moves,
    every sibling group of rollouts kept."""
    from caledonia_env import agents
    from caledonia_env.agents.mcts import MCTSAgent
    from caledonia_env.agents.search_values import GreedyRollouts, RecordingRollouts

    bot = agents.make(name, seed=0)
    ev = getattr(bot, "evaluator", None)
    if (not isinstance(bot, MCTSAgent) or type(ev) is not GreedyRollouts
            or ev.rollout != "greedy" or ev.horizon < 1):
        raise ValueError(f"labels come from the flat search with greedy rollouts of whole "
                         f"rounds (e.g. mcts:16h1:2p), not {name!r}")
    bot.evaluator = RecordingRollouts(ev.weights, ev.horizon, feature_weights)
    return bot


def _label_game(spec, g: int, bots, group0: int) -> tuple[dict, list[int]]:
    """Game g of ``spec`` played by the recording ``bots``: its label rows and history."""
    from caledonia_env.game import Game
    from caledonia_env.tournament.spec import game_seeds

    n = len(spec.players)
    game_seed, agent_seeds = game_seeds(spec.seed, g, n)
    game = Game(spec.game_config(game_seed, g))
    for i, bot in enumerate(bots):
        bot.reset(agent_seeds[i])
        bot.evaluator.calls.clear()
    cols = {k: [] for k in LABEL_ROWS if k != "outcome"}
    group = group0
    while not game.is_terminal:
        p = game.current_player
        ply, rnd = len(game.history), game.round
        a = bots[p].act(game)
        for q, acts, seeds, margins, feats, done, deep in bots[p].evaluator.calls:
            k = len(acts)
            for key, v in (("x", feats), ("done", done), ("leaf", margins), ("deep", deep),
                           ("action", acts), ("seed", seeds)):
                cols[key].append(v)
            for key, v in (("group", group), ("game", g), ("ply", ply), ("player", q),
                           ("round", rnd)):
                cols[key].append(np.full(k, v, np.int64))
            group += 1
        bots[p].evaluator.calls.clear()
        game.step(a)
    final = np.array([final_margin(game.state, game.tables, q) for q in range(n)])
    rows = {k: np.concatenate(v) if v else np.zeros((0, N_FEATURES) if k == "x" else 0)
            for k, v in cols.items()}
    rows["outcome"] = final[rows["player"].astype(np.int64)] if len(rows["player"]) else \
        np.zeros(0)
    return rows, list(game.history)


def _typed(rows: dict) -> dict:
    types = {"x": np.float32, "done": np.bool_, "leaf": np.float32, "deep": np.float32,
             "outcome": np.float32}
    return {k: np.asarray(rows[k], types.get(k, np.int64)) for k in LABEL_ROWS}


def save_labels(path: str, labels: dict) -> str:
    """Write label records (:func:`search_labels`) to ``path`` (npz, atomically)."""
    import json
    from caledonia_env.atomic import atomic_path

    with atomic_path(path, suffix=".npz") as tmp:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **{k: labels[k] for k in LABEL_ROWS},
                                hist=labels["hist"], hist_start=labels["hist_start"],
                                meta=np.array(json.dumps(labels["meta"])))
    return path


def load_labels(path: str) -> dict:
    """The label records of a file of :func:`save_labels`."""
    import json

    try:
        with np.load(path, allow_pickle=False) as f:
            out = {k: f[k] for k in (*LABEL_ROWS, "hist", "hist_start")}
            out["meta"] = json.loads(str(f["meta"]))
    except (KeyError, ValueError, OSError) as e:
        raise ValueError(f"{path}: not a labels file of fit-value ({e})") from None
    return out


def search_labels(players: int, games: int, seed: int, agent: str, feature_weights,
                  ruleset: str | None = None, path: str | None = None, save_every: int = 10,
                  command: str = "", progress=None) -> dict:
    """Label records of ``games`` self-play games of the flat search ``agent`` (every seat;
    the standard game: map drawn, clans drafted, game g set up from ``(seed, g)`` as in a
    tournament). One row per rollout of every searched decision: the leaf's features for the
    deciding seat (``x``; ``done`` if the game ended there), the search's hand-written leaf
    margin (``leaf``), the margin once that rollout is played on to the end (``deep``), its
    sibling group (one ``playouts`` call: candidates on common determinizations), candidate
    ``action`` and determinization ``seed``, ``game``, ``ply``, ``player``, ``round`` and the
    game's final margin of that seat (``outcome``); ``hist``/``hist_start``: each game's
    actions (a decision replays from ``(seed, game)`` and ``hist[:ply]``). With ``path``, the
    records are saved every ``save_every`` games and a file of the same labelling resumes."""
    from caledonia_env.config import GameConfig
    from caledonia_env.tournament.spec import TournamentSpec

    meta = {"players": players, "seed": seed, "agent": agent, "ruleset": ruleset,
            "feature_weights": np.asarray(feature_weights, float).round(12).tolist()}
    labels = None
    if path is not None and os.path.exists(path):
        labels = load_labels(path)
        old = {k: labels["meta"].get(k) for k in meta}
        if old != meta:
            diff = sorted(k for k in meta if old[k] != meta[k])
            raise ValueError(f"{path} holds labels of another labelling (differs in "
                             f"{', '.join(diff)}): give another --labels file")
    if labels is None:
        labels = {k: np.zeros((0, N_FEATURES) if k == "x" else 0) for k in LABEL_ROWS}
        labels.update(hist=np.zeros(0, np.int64), hist_start=np.zeros(1, np.int64))
        labels = {**_typed(labels), "hist": labels["hist"], "hist_start": labels["hist_start"]}
    done_games = len(labels["hist_start"]) - 1
    labels["meta"] = {**meta, "games": max(done_games, 0), "command": command}
    if done_games >= games:
        return labels
    spec = TournamentSpec(players=(agent,) * players, games=games, seed=seed,
                          config=GameConfig(num_players=players, solo=players == 1,
                                            ruleset=ruleset))
    bots = [recording_agent(agent, feature_weights) for _ in range(players)]
    parts = [{k: labels[k] for k in LABEL_ROWS}]
    hists = [labels["hist"]]
    starts = list(labels["hist_start"])
    group = int(labels["group"].max()) + 1 if len(labels["group"]) else 0
    t0 = time.perf_counter()

    def gather(g_done):
        out = _typed({k: np.concatenate([p[k] for p in parts]) for k in LABEL_ROWS})
        out.update(hist=np.concatenate(hists).astype(np.int64),
                   hist_start=np.array(starts, np.int64),
                   meta={**meta, "games": g_done, "command": command})
        return out

    for g in range(done_games, games):
        rows, hist = _label_game(spec, g, bots, group)
        group += len(np.unique(rows["group"]))
        parts.append(rows)
        hists.append(np.array(hist, np.int64))
        starts.append(starts[-1] + len(hist))
        if path is not None and ((g + 1) % save_every == 0 or g + 1 == games):
            labels = gather(g + 1)
            parts, hists = [{k: labels[k] for k in LABEL_ROWS}], [labels["hist"]]
            save_labels(path, labels)
        if progress is not None:
            progress(g + 1, games, time.perf_counter() - t0)
    return gather(games)


def sibling_groups(labels: dict, games=None) -> dict:
    """The sibling groups of label records (of the games in ``games``, default all): rows
    sorted by candidate, ``rows`` (indices into the records), ``cand_start`` (each
    candidate's first row, one past the end last), ``cand_group`` (its group's index),
    ``group_start`` (each group's first candidate, one past the end last), ``cand_leaf`` and
    ``cand_deep`` (candidates' mean hand-written and played-on margins), ``group_game``.
    Groups with a failed rollout or fewer than two candidates are left out."""
    keep = (labels["leaf"] > FAILED / 2) & (labels["deep"] > FAILED / 2)
    bad = np.unique(labels["group"][~keep])
    keep &= ~np.isin(labels["group"], bad)
    if games is not None:
        keep &= np.isin(labels["game"], np.asarray(list(games)))
    idx = np.flatnonzero(keep)
    key = labels["group"][idx] * 1_000_000 + labels["action"][idx]
    ukey, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
    cgroup = ukey // 1_000_000
    ugroup, gfirst, gcount = np.unique(cgroup, return_index=True, return_counts=True)
    ok_cand = np.isin(cgroup, ugroup[gcount >= 2])
    order = np.argsort(inv, kind="stable")
    rows, inv = idx[order], inv[order]
    sel = ok_cand[inv]
    rows, inv = rows[sel], inv[sel]
    remap = -np.ones(len(ukey), np.int64)
    remap[ok_cand] = np.arange(ok_cand.sum())
    inv = remap[inv]
    cg = cgroup[ok_cand]
    ug, ginv = np.unique(cg, return_inverse=True)
    n_c = len(cg)
    cand_start = np.searchsorted(inv, np.arange(n_c + 1))
    group_start = np.searchsorted(ginv, np.arange(len(ug) + 1))
    leaf = labels["leaf"].astype(np.float64)[rows]
    deep = labels["deep"].astype(np.float64)[rows]
    cnt = np.diff(cand_start)
    return {"rows": rows, "cand_start": cand_start, "cand_group": ginv,
            "group_start": group_start, "cand_count": cnt,
            "cand_leaf": np.add.reduceat(leaf, cand_start[:-1]) / cnt if n_c else leaf[:0],
            "cand_deep": np.add.reduceat(deep, cand_start[:-1]) / cnt if n_c else deep[:0],
            "group_game": labels["game"][rows[cand_start[group_start[:-1]]]]
            if len(ug) else np.zeros(0, np.int64)}


def candidate_scores(groups: dict, row_values: np.ndarray) -> np.ndarray:
    """Each candidate's mean of ``row_values`` (one per row of ``groups['rows']``)."""
    cs = groups["cand_start"]
    return np.add.reduceat(np.asarray(row_values, np.float64), cs[:-1]) / np.diff(cs)


def ranking_quality(groups: dict, scores: np.ndarray, target: np.ndarray | None = None) -> dict:
    """How ``scores`` (one per candidate) rank each group's siblings against ``target``
    (default the played-on margins): mean Kendall tau over groups (pairs of distinct
    targets, ties in ``scores`` count 0), top-1 agreement (the best-scored candidate is a
    best target one; ties in ``scores`` share the credit) and regret (VP of target lost by
    playing the best-scored candidate, ties averaged)."""
    target = groups["cand_deep"] if target is None else target
    taus, tops, regrets = [], [], []
    gs = groups["group_start"]
    for g in range(len(gs) - 1):
        s, t = scores[gs[g]:gs[g + 1]], target[gs[g]:gs[g + 1]]
        ds = np.sign(s[:, None] - s[None, :])
        dt = np.sign(t[:, None] - t[None, :])
        iu = np.triu_indices(len(s), 1)
        pairs = dt[iu] != 0
        if pairs.any():
            taus.append(float(np.mean((ds[iu] * dt[iu])[pairs])))
        best = s == s.max()
        tops.append(float(np.mean(t[best] == t.max())))
        regrets.append(float(t.max() - np.mean(t[best])))
    return {"groups": len(gs) - 1, "kendall": float(np.mean(taus)) if taus else float("nan"),
            "top1": float(np.mean(tops)) if tops else float("nan"),
            "regret": float(np.mean(regrets)) if regrets else float("nan")}


def leaf_predictions(arrays: dict, labels: dict, groups: dict) -> np.ndarray:
    """A value network's margin of each grouped row's leaf (the exact margin where the game
    is over, as :func:`agents.afterstate_value.value_margin`)."""
    rows = groups["rows"]
    pred = predict(arrays, labels["x"][rows])
    done = labels["done"][rows]
    pred[done] = labels["leaf"][rows][done]
    return pred


def _torch_net(hidden: int, init: dict | None, mu, sd):
    import torch

    net = torch.nn.Sequential(torch.nn.Linear(N_FEATURES, hidden), torch.nn.ReLU(),
                              torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                              torch.nn.Linear(hidden, 1))
    if init is not None:
        w1 = np.asarray(init["w1"], np.float64)
        if w1.shape[1] != hidden:
            raise ValueError(f"the initial value has {w1.shape[1]} units a layer, not {hidden}")
        with torch.no_grad():
            net[0].weight.copy_(torch.tensor((w1 * sd[:, None]).T))
            net[0].bias.copy_(torch.tensor(np.asarray(init["b1"]) + mu @ w1))
            net[2].weight.copy_(torch.tensor(np.asarray(init["w2"]).T))
            net[2].bias.copy_(torch.tensor(np.asarray(init["b2"])))
            net[4].weight.copy_(torch.tensor(np.asarray(init["w3"])[None] / SCALE))
            net[4].bias.copy_(torch.tensor(np.asarray(init["b3"]) / SCALE))
    return net


def _arrays_of(net, mu, sd) -> dict:
    l1, l2, l3 = (m.state_dict() for m in (net[0], net[2], net[4]))
    w1 = l1["weight"].double().numpy().T / sd[:, None]
    b1 = l1["bias"].double().numpy() - (mu / sd) @ l1["weight"].double().numpy().T
    return dict(zip(ARRAYS, (w1, b1, l2["weight"].double().numpy().T,
                             l2["bias"].double().numpy(),
                             l3["weight"].double().numpy()[0] * SCALE,
                             l3["bias"].double().numpy() * SCALE)))


def fit_listwise(labels: dict, groups: dict, hidden: int = 64, epochs: int = 30,
                 batch: int = 256, lr: float = 1e-3, weight_decay: float = 1e-4,
                 tau: float = 4.0, anchor: float = 0.1, init: dict | None = None,
                 seed: int = 0, log=None) -> dict:
    """Train the network on the sibling ``groups`` (:func:`sibling_groups`) by ListNet: per
    group, the cross-entropy between softmax(played-on margins / ``tau``) and softmax(the
    candidates' mean predicted leaf margin / ``tau``) (VP), plus ``anchor`` times the mean
    squared error of each leaf's prediction against its played-on margin (in units of
    :data:`SCALE` VP), which keeps the scale a margin. Leaves where the game is over are
    valued exactly. ``init``: arrays to start from (e.g. the MSE-fitted value). ``log(epoch,
    epochs, listwise, mse)``. Returns the arrays (``ARRAYS``) on raw features, in VP."""
    import torch

    torch.manual_seed(seed)
    rows = groups["rows"]
    x = labels["x"][rows].astype(np.float64)
    done = labels["done"][rows]
    live = ~done
    mu = x[live].mean(0) if live.any() else np.zeros(N_FEATURES)
    sd = x[live].std(0) if live.any() else np.ones(N_FEATURES)
    sd[sd < 1e-6] = 1.0
    xt = torch.tensor((x - mu) / sd, dtype=torch.float32)
    exact = torch.tensor(labels["leaf"][rows].astype(np.float64) / SCALE, dtype=torch.float32)
    deep = torch.tensor(labels["deep"][rows].astype(np.float64) / SCALE, dtype=torch.float32)
    done_t = torch.tensor(done)
    net = _torch_net(hidden, init, mu, sd)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    gen = np.random.default_rng(seed)
    gs, cs = groups["group_start"], groups["cand_start"]
    n_groups = len(gs) - 1
    cand_deep = groups["cand_deep"] / tau
    kmax = int(np.diff(gs).max()) if n_groups else 1
    n_cands = len(cs) - 1
    row_cand = np.repeat(np.arange(n_cands), np.diff(cs))
    cand_group = groups["cand_group"]
    cand_slot = np.arange(n_cands) - gs[cand_group]

    def ranges(starts, ends):
        """The concatenation of arange(starts[i], ends[i])."""
        lens = ends - starts
        return np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(lens.sum())

    for epoch in range(epochs):
        perm = gen.permutation(n_groups)
        tot_l = tot_m = 0.0
        for i in range(0, n_groups, batch):
            bg = np.sort(perm[i:i + batch])
            cands = ranges(gs[bg], gs[bg + 1])
            brow = ranges(cs[gs[bg]], cs[gs[bg + 1]])
            cand_local = np.searchsorted(cands, row_cand[brow])
            n_b = len(bg)
            slot = cand_slot[cands]
            gl = np.searchsorted(bg, cand_group[cands])
            ridx = torch.tensor(brow)
            out = net(xt[ridx]).squeeze(1)
            d = done_t[ridx]
            val = torch.where(d, exact[ridx], out)
            cl = torch.tensor(cand_local)
            csum = torch.zeros(len(cands)).index_add(0, cl, val)
            cpred = csum / torch.tensor(cs[cands + 1] - cs[cands], dtype=torch.float32)
            pm = torch.full((n_b, kmax), -1e9)
            tm = torch.full((n_b, kmax), -1e9)
            pm[gl, slot] = cpred * SCALE / tau
            tm[gl, slot] = torch.tensor(cand_deep[cands], dtype=torch.float32)
            valid = torch.zeros((n_b, kmax), dtype=torch.bool)
            valid[gl, slot] = True
            p_t = torch.softmax(tm, 1)
            logq = torch.log_softmax(pm, 1).masked_fill(~valid, 0.0)
            lw = -(p_t * logq).sum(1).mean()
            live_b = ~d
            mse = (torch.mean((out[live_b] - deep[ridx][live_b]) ** 2)
                   if bool(live_b.any()) else torch.zeros(()))
            loss = lw + anchor * mse
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot_l += lw.item() * n_b
            tot_m += mse.item() * n_b
        sched.step()
        if log is not None:
            log(epoch + 1, epochs, tot_l / max(n_groups, 1), tot_m / max(n_groups, 1) * SCALE ** 2)
    return _arrays_of(net, mu, sd)


def listwise_report(labels: dict, groups: dict, nets: dict) -> list[dict]:
    """Held-out sibling ranking (:func:`ranking_quality` against the played-on margins) of
    the hand-written leaf margin (what the search ranks by) and of each value network in
    ``nets`` (name -> arrays); plus each one's RMSE (VP) of the leaves' played-on margins."""
    rows = groups["rows"]
    deep = labels["deep"][rows].astype(np.float64)
    leaf = labels["leaf"][rows].astype(np.float64)
    live = ~labels["done"][rows]
    out = [{"what": "hand-written margin", **ranking_quality(
        groups, candidate_scores(groups, leaf)),
        "rmse": float(np.sqrt(np.mean((leaf[live] - deep[live]) ** 2)))}]
    for name, arrays in nets.items():
        pred = leaf_predictions(arrays, labels, groups)
        out.append({"what": name, **ranking_quality(groups, candidate_scores(groups, pred)),
                    "rmse": float(np.sqrt(np.mean((pred[live] - deep[live]) ** 2)))})
    return out
