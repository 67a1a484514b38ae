"""``qpolicy`` (:mod:`agents.qpolicy`) distilled from the flat search by DAgger.

:func:`label_games` lets the current policy play games of its player count (2-4;
:func:`train.tune_weights.game_starts`: clans drafted, the ruleset's map; every seat is the
policy) and, at each of its searched decisions (every seat's), labels the position the way Gumbel MuZero does
(Danihelka et al. 2022, "Policy improvement by planning with Gumbel"): ``k`` candidates drawn
without replacement by Gumbel-top-k on the policy's logits, each scored by ``rollouts``
greedy rollouts of ``horizon`` rounds on common determinizations (the teacher
``mcts:16h1:Np``'s evaluator: :func:`agents.rollouts.rollout_margins`, the tuned weights,
each ending on the hand-written margin over the best opponent). The records keep the
features, the legal actions with their Q and label-time logits, the candidates' mean
margins, and each seat's final margin (the outcome).

:func:`targets` completes the Q values (a candidate: its mean margin; any other action: the
prior-weighted mean of the candidates', v_mix) and gives the improved policy
``softmax(logits + completedQ / q_temp)``; :func:`fit` trains the MLP by cross-entropy to it
over the legal actions (plus the value output's squared error on the mean of the search's
value and the outcome), the last layer starting at zero, and returns a
:class:`agents.qpolicy.QPolicy` with the standardisation folded in. :func:`save_records` /
:func:`load_records` keep labels on disk, so a run resumes and refits.
"""
from __future__ import annotations

import time

import numpy as np

from caledonia_env.agents.afterstate_value import N_FEATURES
from caledonia_env.agents.qpolicy import (ACTION_TYPES, HEAD_CONTEXTS, N_OUT, N_TYPES,
                                          OUT_VALUE, Decision, QPolicy)
from caledonia_env.agents.rollouts import final_margin, rollout_margins, seed_numba
from caledonia_env.engine.layout import S_CTX, S_NP, S_PLAYER, S_ROUND, game_over
from caledonia_env.engine.step import apply_action
from caledonia_env.train.tune_weights import game_starts

VALUE_SCALE = 20.0      # the value output is trained on margin / VALUE_SCALE
RECORD_KEYS = ("x", "n_legal", "seat", "game", "round", "outcome", "act", "q", "prior", "qhat")


def label_games(policy: QPolicy, games: int, seed: int, candidates: int = 8,
                rollouts: int = 4, horizon: int = 1, ruleset: str | None = None,
                progress=None) -> dict:
    """Records of the searched decisions of ``games`` games of ``seed`` (``policy.players``
    seats) played by ``policy`` in every seat, each labelled by Gumbel-top-k candidates and their rollouts
    (see the module). Arrays per decision: ``x`` (features), ``n_legal``, ``seat``, ``game``,
    ``round``, ``outcome`` (the seat's final margin); per legal action (decision after
    decision): ``act``, ``q``, ``prior`` (label-time logit), ``qhat`` (the candidate's mean
    margin, NaN for the actions not drawn)."""
    w = policy.weights
    dec = Decision(policy)
    rec = {k: [] for k in RECORD_KEYS}
    t0 = time.perf_counter()
    for g, (s0, T, switch, agent_seed) in enumerate(game_starts(seed, games, policy.players,
                                                                ruleset)):
        rng = np.random.default_rng([seed, g, 77])
        s = s0.copy()
        buf = np.empty_like(s)
        seed_numba(agent_seed)
        held = []
        while not game_over(s):
            p = int(s[S_PLAYER])
            a = dec.run(s, T, switch)
            legal = np.flatnonzero(dec.mask)
            if len(legal) > 1 and HEAD_CONTEXTS[int(s[S_CTX])]:
                prior = dec.logits[legal].copy()
                k = min(candidates, len(legal))
                cand = np.argsort(-(prior + rng.gumbel(size=len(legal))), kind="stable")[:k]
                acts = np.repeat(legal[cand], rollouts).astype(np.int64)
                seeds = np.tile(rng.integers(1, 2**31 - 2, rollouts), k).astype(np.int64)
                out = np.empty(len(acts))
                rollout_margins(s, T, w, p, acts, seeds, horizon, buf, out, switch)
                qhat = np.full(len(legal), np.nan)
                qhat[cand] = out.reshape(k, rollouts).mean(1)
                held.append((dec.x.astype(np.float32), p, int(s[S_ROUND]), legal,
                             dec.q[legal].copy(), prior, qhat))
                seed_numba(int(rng.integers(1, 2**31 - 2)))
            apply_action(s, T, a, switch)
        final = [final_margin(s, T, j) for j in range(int(s[S_NP]))]
        for x, p, r, legal, q, prior, qhat in held:
            for key, v in (("x", x), ("n_legal", len(legal)), ("seat", p), ("game", g),
                           ("round", r), ("outcome", final[p]), ("act", legal), ("q", q),
                           ("prior", prior), ("qhat", qhat)):
                rec[key].append(v)
        if progress is not None:
            progress(g + 1, games, time.perf_counter() - t0, len(held))
    return _stack(rec)


def _stack(rec: dict) -> dict:
    out = {"x": np.stack(rec["x"]) if rec["x"] else np.zeros((0, N_FEATURES), np.float32)}
    for k in ("n_legal", "seat", "game", "round"):
        out[k] = np.array(rec[k], np.int64)
    out["outcome"] = np.array(rec["outcome"], np.float64)
    for k, dt in (("act", np.int64), ("q", np.float64), ("prior", np.float64),
                  ("qhat", np.float64)):
        out[k] = np.concatenate(rec[k]).astype(dt) if rec[k] else np.zeros(0, dt)
    return out


def merge(records: list[dict]) -> dict:
    """One record set of several (their games renumbered to stay distinct)."""
    out = {k: [] for k in RECORD_KEYS}
    base = 0
    for r in records:
        for k in RECORD_KEYS:
            out[k].append(r[k] + base if k == "game" else r[k])
        base += int(r["game"].max()) + 1 if len(r["game"]) else 0
    return {k: np.concatenate(v) if v else v for k, v in out.items()}


def save_records(path: str, records: dict, **meta) -> str:
    """Write a record set (``.npz``)."""
    import json
    np.savez(path, **{k: records[k] for k in RECORD_KEYS}, meta=np.array(json.dumps(meta)))
    return path


def load_records(path: str) -> dict:
    """A record set written by :func:`save_records`."""
    with np.load(path, allow_pickle=False) as f:
        missing = [k for k in RECORD_KEYS if k not in f]
        if missing:
            raise ValueError(f"{path}: not a qpolicy record file (missing {missing})")
        return {k: f[k] for k in RECORD_KEYS}


def records_players(path: str) -> int:
    """The player count of a record file (its meta's ``players``; 2 if it has none)."""
    import json
    with np.load(path, allow_pickle=False) as f:
        return int(json.loads(str(f["meta"])).get("players", 2)) if "meta" in f else 2


def targets(records: dict, q_temp: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(the improved policy over each decision's legal actions, flat as ``act``; the search's
    value of each decision: the improved policy's mean completed Q)."""
    offs = np.concatenate([[0], np.cumsum(records["n_legal"])])
    tgt = np.empty(offs[-1])
    value = np.empty(len(records["n_legal"]))
    for i in range(len(value)):
        sl = slice(offs[i], offs[i + 1])
        prior = records["prior"][sl]
        qhat = records["qhat"][sl]
        pi = np.exp(prior - prior.max())
        pi /= pi.sum()
        seen = ~np.isnan(qhat)
        vmix = float(np.sum(pi[seen] * qhat[seen]) / max(np.sum(pi[seen]), 1e-12))
        cq = np.where(seen, qhat, vmix)
        lg = prior + (cq - cq.max()) / q_temp
        t = np.exp(lg - lg.max())
        t /= t.sum()
        tgt[sl] = t
        value[i] = float(np.sum(t * cq))
    return tgt, value


def _padded(records: dict, tau: float, tgt: np.ndarray):
    """Per decision, padded to the most legal actions: z = (Q - max Q) / tau, types, target,
    legal flags."""
    n = records["n_legal"]
    offs = np.concatenate([[0], np.cumsum(n)])
    L = int(n.max())
    z = np.zeros((len(n), L), np.float32)
    typ = np.zeros((len(n), L), np.int64)
    tg = np.zeros((len(n), L), np.float32)
    ok = np.zeros((len(n), L), bool)
    for i in range(len(n)):
        sl = slice(offs[i], offs[i + 1])
        q = records["q"][sl]
        z[i, :n[i]] = (q - q.max()) / tau
        typ[i, :n[i]] = ACTION_TYPES[records["act"][sl]]
        tg[i, :n[i]] = tgt[sl]
        ok[i, :n[i]] = True
    return z, typ, tg, ok


def split(records: dict, held_out: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Boolean masks over decisions (train, test): the last ``held_out`` share of the games."""
    games = records["game"]
    ids = np.unique(games)
    test = games >= ids[int(len(ids) * (1 - held_out))] if len(ids) > 1 else np.zeros(len(games), bool)
    return ~test, test


def torch_logits(net, x, z, typ, ok, beta: float):
    """The policy's logits (-inf where illegal) and value in torch, as :func:`agents.qpolicy.
    qpolicy_call` computes them: ``beta * exp(C[t]) * z + B[t]``."""
    import torch
    out = net(x)
    B, C = out[:, :N_TYPES], out[:, N_TYPES:2 * N_TYPES]
    lg = beta * torch.exp(torch.gather(C, 1, typ)) * z + torch.gather(B, 1, typ)
    return lg.masked_fill(~ok, float("-inf")), out[:, OUT_VALUE]


def make_net(hidden: int):
    """The MLP (torch), its last layer zero."""
    import torch
    net = torch.nn.Sequential(torch.nn.Linear(N_FEATURES, hidden), torch.nn.ReLU(),
                              torch.nn.Linear(hidden, N_OUT))
    torch.nn.init.zeros_(net[2].weight)
    torch.nn.init.zeros_(net[2].bias)
    return net


def export(net, mu, sd, beta, tau, weights, players, meta) -> QPolicy:
    """The torch MLP as a :class:`QPolicy` reading raw features (standardisation folded)."""
    l1, l2 = net[0].state_dict(), net[2].state_dict()
    W1 = l1["weight"].double().numpy()
    arrays = {"w1": W1.T / sd[:, None], "b1": l1["bias"].double().numpy() - (mu / sd) @ W1.T,
              "w2": l2["weight"].double().numpy().T, "b2": l2["bias"].double().numpy()}
    return QPolicy(arrays, beta, tau, weights, players, meta)


def fit(records: dict, train_mask, weights, hidden: int = 64, epochs: int = 30,
        batch: int = 256, lr: float = 1e-3, weight_decay: float = 1e-4, q_temp: float = 1.0,
        beta: float = 1.0, tau: float = 1.0, value_coef: float = 0.25, seed: int = 0,
        players: int = 2, log=None) -> QPolicy:
    """Train on the decisions of ``train_mask`` (see the module); the policy."""
    import torch
    torch.manual_seed(seed)
    tgt, sval = targets(records, q_temp)
    z, typ, tg, ok = _padded(records, tau, tgt)
    vt = 0.5 * (sval + records["outcome"]) / VALUE_SCALE
    x = records["x"].astype(np.float64)
    mu = x[train_mask].mean(0)
    sd = x[train_mask].std(0)
    sd[sd < 1e-6] = 1.0
    T = lambda a, dt=torch.float32: torch.tensor(a[train_mask], dtype=dt)  # noqa: E731
    xt, zt, typt, tgt_t, okt = (torch.tensor((x[train_mask] - mu) / sd, dtype=torch.float32),
                                T(z), T(typ, torch.int64), T(tg), T(ok, torch.bool))
    vtt = T(vt)
    net = make_net(hidden)
    opt = torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    gen = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        perm = torch.randperm(len(xt), generator=gen)
        total = 0.0
        for i in range(0, len(xt), batch):
            idx = perm[i:i + batch]
            lg, v = torch_logits(net, xt[idx], zt[idx], typt[idx], okt[idx], beta)
            logp = torch.log_softmax(lg, 1).masked_fill(~okt[idx], 0.0)
            ce = -(tgt_t[idx] * logp).sum(1).mean()
            loss = ce + value_coef * torch.mean((v - vtt[idx]) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += ce.item() * len(idx)
        sched.step()
        if log is not None:
            log(epoch + 1, epochs, total / len(xt))
    return export(net, mu, sd, beta, tau, weights, players, {"trained": True})


def evaluate_fit(policy: QPolicy, records: dict, mask, q_temp: float = 1.0) -> dict:
    """On the decisions of ``mask``: cross-entropy to the improved policy and how often the
    argmax is the improved policy's, for ``policy`` and for the greedy bot (its Q's argmax)."""
    tgt, _ = targets(records, q_temp)
    offs = np.concatenate([[0], np.cumsum(records["n_legal"])])
    w1, b1, w2, b2, beta, tau = policy.args()
    ce = ce0 = agree = agree0 = 0.0
    idx = np.flatnonzero(mask)
    for i in idx:
        sl = slice(offs[i], offs[i + 1])
        h = np.maximum(records["x"][i].astype(np.float64) @ w1 + b1, 0.0) @ w2 + b2
        t = ACTION_TYPES[records["act"][sl]]
        q = records["q"][sl]
        zz = (q - q.max()) / tau
        lg = beta * np.exp(h[N_TYPES + t]) * zz + h[t]
        lg0 = beta * zz
        for logits, is0 in ((lg, False), (lg0, True)):
            lp = logits - logits.max()
            lp = lp - np.log(np.exp(lp).sum())
            c = -float(np.sum(tgt[sl] * lp))
            hit = float(np.argmax(logits) == np.argmax(tgt[sl]))
            if is0:
                ce0 += c
                agree0 += hit
            else:
                ce += c
                agree += hit
    n = max(len(idx), 1)
    return {"decisions": int(len(idx)), "ce": ce / n, "ce_greedy": ce0 / n,
            "agree": agree / n, "agree_greedy": agree0 / n}
