"""Expert iteration: distil a search into the policy (``caledonia expert``).

1. :func:`collect` plays games with the expert search on a checkpoint (the standard game
   for the player count: map drawn, clans drafted), in every seat (self-play) or in one
   seat against another agent (``vs``, e.g. ``greedy``), and keeps, at every searched
   decision of an expert seat, the observation of the player to move, the legal actions
   and the search's preference: ``puct``'s root visit counts (Dirichlet noise on its root
   prior for variety), or the action chosen by the flat searches ``nmcts``/``nmctsg``
   (with their candidates' mean margins). With ``dagger`` the checkpoint's policy plays
   the expert seats and the search only labels the positions the policy reaches (DAgger,
   Ross, Gordon & Bagnell 2011).
2. :func:`fit` trains the policy head toward that preference sharpened by a
   temperature ``tau`` (target proportional to ``N(a)^(1/tau)``; cross-entropy over the
   legal actions), optionally mixed with the source policy's own distribution
   (``anchor``), while a squared-error term holds the value head to the original
   network's values on the same positions, so a search on the result keeps its leaf
   values (and the shaping metadata stays true). A tenth of the games is held out.
3. The result is a checkpoint with the original architecture and metadata plus
   ``expert_iteration``: playable as ``ppo:PATH`` and ``puct:SIMS:PATH``, and the start of
   the next iteration.

Expert iteration: Anthony, Tian & Barber 2017; AlphaZero's policy target (Silver et al.
2018). See docs/training.md.
"""
from __future__ import annotations

import copy
import os
import time

import numpy as np

from caledonia_env import agents
from caledonia_env.agents import checkpoint as ckpt
from caledonia_env.agents.nmcts import NetMCTSAgent
from caledonia_env.agents.puct import PUCTAgent
from caledonia_env.config import GameConfig
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.envs.observation import OBS_SIZE, encode_obs
from caledonia_env.game import Game
from caledonia_env.tournament import pool_context, progress_bar


EXPERTS = ("puct", "nmcts", "nmctsg")


def make_expert(kind: str, path: str, sims: int, seed: int, noise: float = 0.25,
                horizon: int = 0):
    """The search to distil: ``puct:SIMS`` with Dirichlet noise on its root prior, or the
    flat search ``nmcts:SIMS`` / ``nmctsg:SIMS`` (SIMS rollouts of ``horizon`` rounds, 0:
    to the end; no noise: it has no prior to perturb), all on the checkpoint ``path``."""
    if kind == "puct":
        if horizon:
            raise ValueError("horizon is a flat search's (nmcts, nmctsg), not puct's")
        return PUCTAgent(sims, path, seed=seed, noise_frac=noise)
    if kind in ("nmcts", "nmctsg"):
        return NetMCTSAgent(sims, path, seed=seed, horizon=horizon,
                            opponents="greedy" if kind == "nmctsg" else "policy")
    raise ValueError(f"unknown expert {kind!r}; one of {', '.join(EXPERTS)}")


def search_target(stats: dict) -> dict | None:
    """What the search preferred at the decision it just made (its ``last_stats``), as
    weights over actions: ``puct``'s root visit counts, or the flat search's ``choice``
    (its counts are not a preference: successive halving gives the last two candidates
    the same count). None when the decision was not searched (forced, or a context the
    search leaves to the policy)."""
    if stats.get("sims"):
        return stats["visits"]
    if "choice" in stats:
        return {stats["choice"]: 1}
    return None


def self_play_game(path: str, num_players: int, sims: int, seed: int, g: int,
                   noise: float = 0.25, expert: str = "puct", vs: str | None = None,
                   horizon: int = 0, dagger: bool = False, search_net: str | None = None
                   ) -> dict:
    """One game (seed ``(seed, g)``) of the expert search on ``path`` (or on ``search_net``
    when given): in every seat, or, with ``vs`` (an agent name such as ``greedy``), in seat
    ``g % num_players`` against ``vs`` in the others. With ``dagger`` the policy of ``path``
    (its most likely action) moves in those seats and the search only labels its positions.
    Returns the recorded seats' searched decisions (observation as float16, legal actions,
    target weights, the flat search's candidates' mean margins, NaN elsewhere) and their
    win share."""
    game_seed = seed * 1_000_003 + g
    game = Game(GameConfig(num_players=num_players, seed=game_seed))
    seats = range(num_players) if vs is None else [g % num_players]
    bots = [make_expert(expert, search_net or path, sims, game_seed * 8 + p, noise, horizon)
            if p in seats
            else agents.make(vs, seed=game_seed * 8 + p) for p in range(num_players)]
    actor = agents.make(f"ppo:{path}") if dagger else None
    obs, legal, visits, margins = [], [], [], []
    buf = np.zeros(OBS_SIZE, np.float32)
    while not game.is_terminal:
        p = game.current_player
        a = bots[p].act(game)
        if p in seats:
            stats = bots[p].last_stats
            target = search_target(stats)
            if target:
                encode_obs(game.state, game.tables, p, buf)
                ids = np.asarray(game.legal_actions(), np.int32)
                obs.append(buf.astype(np.float16))
                legal.append(ids)
                visits.append(np.array([target.get(int(x), 0) for x in ids], np.float32))
                m = stats.get("margins", {})
                margins.append(np.array([m.get(int(x), np.nan) for x in ids], np.float32))
            if actor is not None:
                a = actor.act(game)
        game.step(a)
    winners = game.winners()
    won = sum(1.0 / len(winners) for p in seats if p in winners) / len(seats)
    return {"obs": obs, "legal": legal, "visits": visits, "margins": margins, "game": g,
            "won": won}


def _worker(task):
    return self_play_game(*task)


def collect(path: str, num_players: int = 2, sims: int = 32, games: int | None = None,
            minutes: float | None = None, seed: int = 0, workers: int = 1,
            noise: float = 0.25, quiet: bool = False, expert: str = "puct",
            vs: str | None = None, horizon: int = 0, dagger: bool = False,
            search_net: str | None = None) -> dict:
    """Data for :func:`fit`: ``games`` games, or as many as start within ``minutes`` (at
    least one). Game g is the same for any worker count. ``horizon``, ``dagger`` and
    ``search_net`` as for :func:`self_play_game`."""
    if games is None and minutes is None:
        raise ValueError("give games or minutes")
    if games is not None and games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    if sims < 1 or workers < 1 or not 2 <= num_players <= 4:
        raise ValueError(f"need sims >= 1, workers >= 1 and 2-4 players; got sims={sims}, "
                         f"workers={workers}, num_players={num_players}")
    if expert not in EXPERTS:
        raise ValueError(f"unknown expert {expert!r}; one of {', '.join(EXPERTS)}")
    if horizon < 0 or (horizon and expert == "puct"):
        raise ValueError(f"horizon (rounds, >= 0) is a flat search's (nmcts, nmctsg); got "
                         f"{horizon} for {expert}")
    if vs is not None and agents.parse_name(vs)[0] == "automa":   # a clear error now
        raise ValueError("--vs automa: the Automa is an engine seat, not an agent the expert "
                         "can play against here; give a bot, e.g. --vs greedy")
    # a clear error now (missing or unsafe file, no value head), a warning for another count
    for net in {path, search_net or path}:
        ckpt.load_actor_critic(ckpt.load(net, num_players=num_players))
    limit = games if games is not None else 10**9
    deadline = None if minutes is None else time.monotonic() + 60 * minutes
    tasks = ((path, num_players, sims, seed, g, noise, expert, vs, horizon, dagger, search_net)
             for g in range(limit))
    done = []
    bar = progress_bar(games or 0, "expert games", quiet)
    if workers == 1:
        results = map(_worker, tasks)
        pool = None
    else:
        pool = pool_context().Pool(workers)
        results = pool.imap(_worker, tasks)
    try:
        for r in results:
            done.append(r)
            bar.update(1)
            if deadline is not None and time.monotonic() > deadline:
                break
    finally:
        bar.close()
        if pool is not None:
            pool.terminate()
            pool.join()
    return merge(done, num_players, sims, expert, vs, horizon, dagger, search_net)


def merge(done: list[dict], num_players: int, sims: int, expert: str = "puct",
          vs: str | None = None, horizon: int = 0, dagger: bool = False,
          search_net: str | None = None) -> dict:
    """The games of :func:`self_play_game` as one data set (arrays, :func:`save_data`)."""
    obs = [o for r in done for o in r["obs"]]
    legal = [x for r in done for x in r["legal"]]

    def joined(key):
        return np.concatenate([v for r in done for v in r[key]]) if legal else \
            np.zeros(0, np.float32)

    return {"obs": np.stack(obs) if obs else np.zeros((0, OBS_SIZE), np.float16),
            "legal": np.concatenate(legal) if legal else np.zeros(0, np.int32),
            "visits": joined("visits"), "margins": joined("margins"),
            "lens": np.array([len(x) for x in legal], np.int64),
            "game": np.array([r["game"] for r in done for _ in r["obs"]], np.int64),
            "won": np.array([r["won"] for r in done], np.float64),
            "players": np.array(num_players), "sims": np.array(sims),
            "expert": np.array(expert), "vs": np.array(vs or ""),
            "horizon": np.array(horizon), "dagger": np.array(dagger),
            "search_net": np.array(os.path.basename(search_net or ""))}


def save_data(data: dict, path: str) -> None:
    np.savez_compressed(path, **data)


def load_data(*paths: str) -> dict:
    """The data of one or more :func:`save_data` files, joined (game numbers kept apart)."""
    if not paths:
        raise ValueError("give at least one data file")
    parts = []
    for path in paths:
        with np.load(path) as d:
            data = {k: d[k] for k in d.files}
        need = {"obs", "legal", "visits", "lens", "game"}
        if not need <= set(data):
            raise ValueError(f"{path}: not expert-iteration data "
                             f"(missing {sorted(need - set(data))})")
        parts.append(data)
    if len(parts) == 1:
        return parts[0]
    if len({int(d.get("players", 0)) for d in parts}) != 1:
        raise ValueError("the data files are of different player counts")
    joined = dict(parts[0])
    offset, games = 0, []
    for d in parts:
        games.append(d["game"] + offset)
        offset += int(d["game"].max(initial=-1)) + 1
    joined["game"] = np.concatenate(games)
    for k in ("obs", "legal", "visits", "lens", "won", "margins"):
        if all(k in d for d in parts):
            joined[k] = np.concatenate([d[k] for d in parts])
        else:                           # "won", "margins": not in earlier versions' files
            joined.pop(k, None)
    return joined


def _batch(data, offs, idx, tau, margin_temp=0.0):
    import torch                        # optional extra (train)
    x = torch.from_numpy(data["obs"][idx].astype(np.float32))
    mask = torch.zeros(len(idx), N_ACTIONS, dtype=torch.bool)
    target = torch.zeros(len(idx), N_ACTIONS)
    for r, i in enumerate(idx):
        ids = torch.from_numpy(data["legal"][offs[i]:offs[i + 1]].astype(np.int64))
        if margin_temp:                 # softmax of the candidates' mean margins
            m = data["margins"][offs[i]:offs[i + 1]]
            w = torch.from_numpy(np.nan_to_num(np.exp((m - np.nanmax(m)) / margin_temp)))
        else:
            w = torch.from_numpy(data["visits"][offs[i]:offs[i + 1]]) ** (1.0 / tau)
        mask[r, ids] = True
        target[r, ids] = w / w.sum()
    return x, mask, target


def fit(path: str, data: dict, out: str, epochs: int = 3, lr: float = 1e-4, tau: float = 0.25,
        value_weight: float = 1.0, batch: int = 256, seed: int = 0, quiet: bool = False,
        anchor: float = 0.0, margin_temp: float = 0.0) -> dict:
    """Train ``path``'s policy toward the sharpened visit counts in ``data`` (or, with
    ``margin_temp`` > 0, toward the softmax of the flat search's candidates' mean margins
    at that temperature, in VP), mixed with the share ``anchor`` of the source policy's own
    distribution (a pull back toward what it played); save the checkpoint to ``out``. Returns the held-out cross-entropy (to the
    mixed target), the argmax agreement with the search's preferred action and the value
    drift before and after, and the training loss of each epoch."""
    import torch                        # optional extra (train)
    if epochs < 1 or not lr > 0 or not tau > 0 or batch < 1 or value_weight < 0:
        raise ValueError("need epochs >= 1, lr > 0, tau > 0, batch >= 1, value_weight >= 0")
    if not 0 <= anchor < 1:
        raise ValueError(f"anchor is a share of the target in [0, 1), got {anchor}")
    if margin_temp < 0 or (margin_temp and ("margins" not in data or str(
            data.get("expert", "puct")) == "puct")):
        raise ValueError("margin_temp (VP, >= 0) needs data with the flat search's margins "
                         "(nmcts/nmctsg data of this version)")
    n = len(data["lens"])
    if n < 2:
        raise ValueError(f"need at least 2 searched positions, the data has {n}")
    offs = np.concatenate([[0], np.cumsum(data["lens"])])
    rng = np.random.default_rng(seed)
    games = np.unique(data["game"])
    rng.shuffle(games)
    held = np.isin(data["game"], games[:len(games) // 10]) if len(games) >= 10 else \
        np.arange(n) % 10 == 0
    train_idx, held_idx = np.flatnonzero(~held), np.flatnonzero(held)
    source = ckpt.load(path)
    net = ckpt.load_actor_critic(source)
    frozen = copy.deepcopy(net).eval()
    torch.manual_seed(seed)
    opt = torch.optim.Adam(net.parameters(), lr=lr)

    def losses(x, mask, target):
        logits, value = net(x)
        logits = logits.masked_fill(~mask, -1e9)
        with torch.no_grad():
            logits0, v0 = frozen(x)
            mixed = target if not anchor else (1 - anchor) * target + anchor * torch.softmax(
                logits0.masked_fill(~mask, -1e9), dim=1)
        ce = -(mixed * torch.log_softmax(logits, dim=1)).sum(1).mean()
        drift = ((value - v0) ** 2).mean()
        agree = (logits.argmax(1) == target.argmax(1)).float().mean()
        return ce, drift, agree

    def held_out():
        net.eval()
        tot = np.zeros(3)
        with torch.no_grad():
            for s in range(0, len(held_idx), 1024):
                idx = held_idx[s:s + 1024]
                tot += np.array([t.item() for t in losses(
                    *_batch(data, offs, idx, tau, margin_temp))]) * len(idx)
        net.train()
        ce, drift, agree = tot / max(len(held_idx), 1)
        return {"cross_entropy": ce, "value_drift": drift, "argmax_agreement": agree}

    report = {"positions": n, "train": len(train_idx), "held_out": len(held_idx),
              "before": held_out(), "epochs": []}
    bar = progress_bar(epochs * ((len(train_idx) + batch - 1) // batch), "fit", quiet,
                       unit="batch")
    net.train()
    for _ in range(epochs):
        perm = rng.permutation(train_idx)
        total = 0.0
        for s in range(0, len(perm), batch):
            idx = perm[s:s + batch]
            ce, drift, _ = losses(*_batch(data, offs, idx, tau, margin_temp))
            loss = ce + value_weight * drift
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
            bar.update(1)
        report["epochs"].append(total / len(perm))
    bar.close()
    report["after"] = held_out()
    meta = dict(source.meta)
    meta["expert_iteration"] = {
        "from": os.path.basename(path), "from_sha256": source.sha256,
        "positions": n, "games": int(len(games)), "sims": int(data.get("sims", 0)),
        "expert": str(data.get("expert", "puct")), "vs": str(data.get("vs", "")) or None,
        "horizon": int(data.get("horizon", 0)), "dagger": bool(data.get("dagger", False)),
        "search_net": str(data.get("search_net", "")) or None,
        "epochs": epochs, "lr": lr, "tau": tau, "anchor": anchor, "margin_temp": margin_temp,
        "value_weight": value_weight,
        "before": report["before"], "after": report["after"]}
    ckpt.save(out, ckpt.sb3_state(net.state_dict()), meta)
    return report
