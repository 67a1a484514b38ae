"""How well the greedy evaluation predicts the final VP, and a regression fit of its weights.

    python benchmarks/evaluation_fit.py --players 2 --games 40 --weights default,solo
    python benchmarks/evaluation_fit.py --players 2 --games 80 --fit --out-weights fit_2p.json
    python benchmarks/evaluation_fit.py --players 1 --games 60 --fit --save

Greedy bots (``--play``: by default the player count's shipped set, else ``solo``) play games
0..N-1 of ``--seed`` (:func:`train.tune_weights.game_starts`); every ``--every``-th decision's
state is logged with every seat and that seat's final VP (:mod:`train.fit_weights`). Each set
of ``--weights`` (``default``, a shipped set's name or a weights ``.json``) is scored by the R²,
RMSE, bias and correlation of the evaluation against the final VP, by third of the game
(rounds 1-2, 3-4, 5) and overall. ``--fit`` also fits the weights to the outcomes on the
first games (all but the ``--holdout`` share) from ``--init`` and adds the fitted set; the
table then reports every set on the held-out games only. A Markdown table goes to stdout,
progress to stderr; ``--save`` writes ``benchmarks/results/evaluation_fit-<date>.json``
(one file holds several player counts).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS
from caledonia_env.agents.weights import load_weights, save_weights, weights_path
from caledonia_env.train import fit_weights as fw

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_io import write_result  # noqa: E402

sys.path.pop(0)

FITTED = "fitted"
COLUMNS = [{"key": "players", "label": "players"}, {"key": "set", "label": "weights"},
           {"key": "third", "label": "positions"}, {"key": "data", "label": "games"},
           {"key": "n", "label": "samples"}, {"key": "r2", "label": "R²", "format": ".3f"},
           {"key": "rmse", "label": "RMSE", "format": ".1f", "unit": " VP"},
           {"key": "bias", "label": "bias", "format": "+.1f", "unit": " VP"},
           {"key": "corr", "label": "corr", "format": ".3f"}]


def weights_of(spec: str) -> np.ndarray:
    """``default`` (the hand-set weights), a shipped set's name or a weights file."""
    return DEFAULT_WEIGHTS.copy() if spec == "default" else load_weights(spec)


def default_play(players: int) -> str:
    """The set the logged games are played with: the player count's shipped set, else solo."""
    name = "solo" if players == 1 else f"{players}p"
    return name if os.path.exists(weights_path(name)) else "solo"


def cell(value, column: dict) -> str:
    """One table cell: a number in its column's format, ``-`` for none."""
    if value is None:
        return "-"
    if isinstance(value, float) and "format" in column:
        return format(value, column["format"])
    return str(value)


def markdown(rows: list[dict]) -> str:
    """The rows as a Markdown table of :data:`COLUMNS`."""
    lines = ["| " + " | ".join(c["label"] for c in COLUMNS) + " |",
             "|" + "|".join("---:" if "format" in c else "---" for c in COLUMNS) + "|"]
    lines += ["| " + " | ".join(cell(r[c["key"]], c) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--players", type=int, default=2, choices=(1, 2, 3, 4))
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--weights", default="default,solo",
                    help="comma-separated sets to score: default, a shipped set, a .json")
    ap.add_argument("--play", default=None,
                    help="the set the logged games are played with (default: the player "
                         "count's shipped set, else solo)")
    ap.add_argument("--every", type=int, default=2, help="log every k-th decision")
    ap.add_argument("--per-game", type=int, default=200, help="at most this many states a game")
    ap.add_argument("--fit", action="store_true", help="fit the weights and score the fit")
    ap.add_argument("--init", default=None, help="the fit's start (default: --play's set)")
    ap.add_argument("--holdout", type=float, default=0.5,
                    help="share of the games kept out of the fit and scored (0: fit and "
                         "score on all)")
    ap.add_argument("--max-iter", type=int, default=40, help="the fit's iterations at most")
    ap.add_argument("--out-weights", default=None, help="write the fitted weights (.json)")
    ap.add_argument("--save", action="store_true", help="write a result file")
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error("--games must be >= 1")
    if args.out_weights and not args.fit:
        ap.error("--out-weights needs --fit")
    if not 0.0 <= args.holdout < 1.0:
        ap.error("--holdout must be in [0, 1)")
    if args.fit and args.holdout > 0 and args.games < 2:
        ap.error("a fit with --holdout needs at least 2 games")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    names = [n.strip() for n in args.weights.split(",") if n.strip()]
    if FITTED in names:
        raise SystemExit(f"'{FITTED}' names the fitted set; pick another name")
    sets = {n: weights_of(n) for n in names}
    play = args.play or default_play(args.players)
    t0 = time.perf_counter()

    def logged(g, k):
        if (g + 1) % 10 == 0 or g + 1 == args.games:
            print(f"game {g + 1}/{args.games}: {k} states ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)

    ds = fw.log_positions(weights_of(play), args.players, args.games, args.seed, args.every,
                          args.per_game, progress=logged)
    t_log = time.perf_counter() - t0
    print(f"logged {len(ds)} samples of {ds.states.shape[0]} states in {t_log:.1f} s "
          f"(games played with {play})", file=sys.stderr)
    scored, data = ds, f"all {args.games}"
    notes = (f"{args.players}p: games played by greedy with the {play} weights; one "
             f"decision's state in {args.every}, each seat against its final VP.")
    if args.fit:
        n_test = min(max(round(args.holdout * args.games), 1), args.games - 1) \
            if args.holdout else 0
        n_fit = args.games - n_test
        train = ds.games(range(n_fit))
        if args.holdout:
            scored = ds.games(range(n_fit, args.games))
            data = f"held-out {args.games - n_fit} of {args.games}"
        init = args.init or play
        t1 = time.perf_counter()
        res = fw.fit(train, weights_of(init), max_iter=args.max_iter,
                     progress=lambda i, e: print(f"fit iteration {i}: MSE {e:.2f}",
                                                 file=sys.stderr, flush=True))
        print(f"fit on {n_fit} games ({len(train)} samples) from {init}: MSE "
              f"{res.mse_init:.2f} -> {res.mse:.2f} in {res.iterations} iterations, "
              f"{time.perf_counter() - t1:.1f} s", file=sys.stderr)
        sets[FITTED] = res.weights
        notes += (f" '{FITTED}': fitted from {init} on games 0-{n_fit - 1} (training MSE "
                  f"{res.mse_init:.1f} -> {res.mse:.1f}).")
        if args.out_weights:
            save_weights(args.out_weights, res.weights, made_by="benchmarks/evaluation_fit.py",
                         command="python benchmarks/evaluation_fit.py " + " ".join(
                             sys.argv[1:] if argv is None else argv),
                         players=args.players, seed=args.seed, games=n_fit, init=init,
                         played_with=play, every=args.every, mse_init=res.mse_init,
                         mse=res.mse)
            print(f"fitted weights written to {args.out_weights}", file=sys.stderr)
    rows = [dict(r, players=args.players, data=data) for r in fw.fit_report(scored, sets)]
    print(markdown(rows))
    if args.save:
        write_result("evaluation_fit", columns=COLUMNS, rows=rows,
                     title="Greedy evaluation against the final VP",
                     meaning="How well the greedy bot's hand-written evaluation of a position "
                             "predicts each seat's final VP (R² against the outcome's spread "
                             "in that part of the game), per weight set.",
                     notes=notes, merge_key="players")
    return 0


if __name__ == "__main__":
    sys.exit(main())
