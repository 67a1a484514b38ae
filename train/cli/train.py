"""``caledonia train``: its options and the run's settings from them (:mod:`train.trainer`)."""
from __future__ import annotations

import argparse
import dataclasses
import sys

from caledonia_env import tournament as tn
from caledonia_env.agents.checkpoint import CheckpointError
from caledonia_env.train.cli.common import game_options, parse_int
from caledonia_env.train.config import TrainConfig, load_config

TRAIN_EXAMPLES = """\
examples:
  caledonia train --players 2 --timesteps 2_000_000 --out runs/x
  caledonia train --players 2 --timesteps 1_100_000 --out runs/ppo2p --n-envs 32 \\
      --fast-fraction 0.5 --opponents self=0.4,snapshot=0.2,greedy=0.4
  caledonia train --out runs/x --resume --timesteps 3_000_000     # continue, new total
  caledonia train --players 2 --init pretrained --fast-fraction 0 --out runs/ft2p \
      --opponents self=0.2,league=0.4,greedy=0.4          # fine-tune the shipped 2p policy
  caledonia train --out runs/x --resume --timesteps 5_000_000 --max-minutes 140 \
      --opponents self=0.2,league=0.4,greedy=0.3,random=0.1     # change the opponents
  caledonia train --solo --timesteps 3_000_000 --out runs/solo --max-minutes 60
      # the solo game (R-9.2): reward final VP x 0.01, evaluation = mean VP and rating bands
  tensorboard --logdir runs/x/tb
  caledonia train --recipe list                       # the recipes of the shipped policies
  caledonia train --recipe ppo_2p --dry-run           # the commands that made ppo_2p.zip
  caledonia train --recipe ppo_solo --out runs/solo   # reproduce ppo_solo.zip there

opponent mix (--opponents NAME=WEIGHT,...; drawn per episode and seat in the self-play phase):
  self      the current policy (weights synced at every rollout)
  snapshot  a past snapshot, uniform over the last --pool-size (one every --snapshot-every steps)
  latest    the newest snapshot
  league    a snapshot drawn by prioritized fictitious self-play: weight (1 - p)^--pfsp-power,
            p = the learner's expected score against it from a Bradley-Terry fit of the last
            --league-window self-play games (OUT/league.csv, table in OUT/league.txt)
  NAME      any bot: random, greedy, mcts:8, ppo:PATH
  (snapshot / latest play the current policy while the pool is empty)
"""


# settings a resumed run may change: the budget, the opponents and the bookkeeping, not the
# model, the game or the reward
RESUME_OVERRIDES = ("timesteps", "max_minutes", "threads", "opponents", "snapshot_every",
                    "pool_size", "pfsp_power", "league_window", "eval_every", "eval_games",
                    "eval_vs", "checkpoint_every", "keep_checkpoints")


def add_train_parser(subparsers) -> argparse.ArgumentParser:
    d = TrainConfig()
    p = subparsers.add_parser(
        "train", help="train a MaskablePPO policy by self-play (needs the train extra)",
        description="Train a MaskablePPO policy (sb3-contrib) for one seat: first against random "
                    "opponents in the numba vector env, then by self-play against a pool of its "
                    "own snapshots and the baseline bots. Logs to TensorBoard (OUT/tb), evaluates "
                    "against random and greedy (win rate with 95% Wilson CI, OUT/eval.csv), keeps "
                    "OUT/best.zip and checkpoints, draws OUT/curve.png.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=TRAIN_EXAMPLES)
    a = p.add_argument
    a("--players", type=int, default=None,
      help=f"players per game, 2-4 (default {d.players}; 1 with --solo)")
    a("--timesteps", type=parse_int, default=None,
      help=f"total learner decisions to train, e.g. 2_000_000 (default {d.timesteps:_}); with "
           f"--resume the new total")
    a("--out", default=None, help=f"run folder, created if missing; its parent must exist "
                                  f"(default {d.out})")
    a("--resume", action="store_true",
      help="continue the run in --out from last.zip / resume.pt with its saved settings "
           "(config.json); the time budget, the opponents and the evaluation settings may "
           "change, not the model, the game or the reward")
    a("--init", default=None, metavar="CHECKPOINT",
      help="start from a checkpoint's weights (same --net; 'pretrained' = the shipped policy "
           "for --players), e.g. fine-tune the shipped policy with --fast-fraction 0")
    a("--seed", type=int, default=None, help=f"seed (default {d.seed})")
    a("--recipe", default=None, metavar="NAME",
      help="run the recipe NAME of train/recipes/ (the chain of commands that made the "
           "shipped file NAME.zip, e.g. ppo_2p) into --out (default runs/NAME); 'list' "
           "lists them. No other training option goes with it")
    a("--dry-run", action="store_true", help="with --recipe: print its commands, run nothing")
    a("--workers", type=int, default=1,
      help="with --recipe: processes for its selection games (default 1)")
    g = p.add_argument_group("PPO")
    g.add_argument("--n-envs", type=int, default=None, help=f"parallel games (default {d.n_envs})")
    g.add_argument("--n-steps", type=int, default=None,
                   help=f"steps per env per rollout (default {d.n_steps})")
    g.add_argument("--batch-size", type=int, default=None, help=f"minibatch (default {d.batch_size})")
    g.add_argument("--n-epochs", type=int, default=None, help=f"epochs per rollout (default {d.n_epochs})")
    g.add_argument("--lr", dest="learning_rate", type=float, default=None,
                   help=f"learning rate (default {d.learning_rate})")
    g.add_argument("--gamma", type=float, default=None, help=f"discount (default {d.gamma})")
    g.add_argument("--gae-lambda", type=float, default=None, help=f"GAE lambda (default {d.gae_lambda})")
    g.add_argument("--clip-range", type=float, default=None, help=f"PPO clip (default {d.clip_range})")
    g.add_argument("--ent-coef", type=float, default=None, help=f"entropy bonus (default {d.ent_coef})")
    g.add_argument("--vf-coef", type=float, default=None, help=f"value loss weight (default {d.vf_coef})")
    g.add_argument("--net", default=None,
                   help=f"FEATURES:LAYERS, a shared feature layer then policy / value layers "
                        f"(default {d.net})")
    g.add_argument("--activation", choices=("relu", "tanh"), default=None,
                   help=f"(default {d.activation})")
    g.add_argument("--reward", choices=("win", "rank", "score_diff", "vp"), default=None,
                   help=f"terminal reward (default {d.reward}: own VP minus the others' mean, "
                        f"/100; vp with --solo)")
    g.add_argument("--reward-scale", type=float, default=None,
                   help="multiplies every reward (default 1; 0.01 with --solo, so the VP "
                        "reward is about 1)")
    g.add_argument("--shaping", type=float, default=None, metavar="W",
                   help="potential-based reward shaping (Ng et al. 1999): every learner step "
                        "also gets W x (gamma x phi(next) - phi(now)), phi = its VP lead if the "
                        "game were scored now (/100); the optimal policy is unchanged. "
                        "Self-play phase only: needs --fast-fraction 0 (default 0: off)")
    g = p.add_argument_group("opponents (self-play pool rules)")
    g.add_argument("--fast-fraction", type=float, default=None,
                   help=f"share of the timesteps played first against numba random opponents "
                        f"(default {d.fast_fraction})")
    g.add_argument("--opponents", default=None, metavar="MIX",
                   help=f"self-play opponent mix (default {d.opponents}); see below")
    g.add_argument("--snapshot-every", type=parse_int, default=None,
                   help=f"steps between pool snapshots (default {d.snapshot_every:_})")
    g.add_argument("--pool-size", type=int, default=None,
                   help=f"snapshots kept in the pool (default {d.pool_size})")
    g.add_argument("--pfsp-power", type=float, default=None,
                   help=f"league draws: weight (1 - p)^POWER (default {d.pfsp_power:g}; 0: "
                        f"uniform)")
    g.add_argument("--league-window", type=parse_int, default=None,
                   help=f"self-play games in the league's rating fit (default "
                        f"{d.league_window:_})")
    g = p.add_argument_group("evaluation and checkpoints")
    g.add_argument("--eval-every", type=parse_int, default=None,
                   help=f"steps between evaluations (default {d.eval_every:_})")
    g.add_argument("--eval-games", type=int, default=None,
                   help=f"games per evaluation opponent (default {d.eval_games})")
    g.add_argument("--eval-vs", default=None,
                   help=f"evaluation opponents (default {d.eval_vs})")
    g.add_argument("--checkpoint-every", type=parse_int, default=None,
                   help=f"steps between checkpoints (default {d.checkpoint_every:_})")
    g.add_argument("--keep-checkpoints", type=int, default=None,
                   help=f"checkpoints kept in OUT/checkpoints (default {d.keep_checkpoints})")
    g = p.add_argument_group("game and machine")
    g.add_argument("--map", default=None, help="fixed module sides, e.g. A1,B2,C1,D2 "
                                               "(default: a map drawn per game)")
    g.add_argument("--threads", type=int, default=None,
                   help="torch threads (default: torch's choice)")
    g.add_argument("--max-minutes", type=float, default=None,
                   help="stop (saving everything) when the run's wall time reaches this, e.g. "
                        "50 (default 0: no limit; a resumed run counts its earlier sessions)")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    tn.add_rules_options(p)
    p.set_defaults(func=cmd_train)
    return p


def config_from_args(args) -> TrainConfig:
    """The run's settings from the command line (a resumed run: its saved ones, with the
    options :data:`RESUME_OVERRIDES` allows)."""
    fields = [f.name for f in dataclasses.fields(TrainConfig)]
    given = {k: getattr(args, k) for k in fields if getattr(args, k, None) is not None}
    if not args.resume:
        if getattr(args, "solo", False):     # one player, scored by its final VP
            for k, v in (("players", 1), ("reward", "vp"), ("reward_scale", 0.01),
                         ("fast_fraction", 1.0)):
                given.setdefault(k, v)
            given["game"] = {"solo": True}
        cfg = TrainConfig(**given)
        cfg.validate()                       # --players and the rest first, then the rules
        cfg.game = game_options(args, cfg.players)
        return cfg
    out = given.pop("out", TrainConfig().out)
    over = {k: given.pop(k) for k in RESUME_OVERRIDES if k in given}
    if given:
        allowed = ", ".join("--" + k.replace("_", "-") for k in RESUME_OVERRIDES)
        print(f"caledonia train: --resume uses the run's saved settings; ignoring "
              f"{', '.join('--' + k.replace('_', '-') for k in given)} (a resumed run "
              f"may change only {allowed})", file=sys.stderr)
    return load_config(out, **over)


def cmd_recipe(args) -> int:
    """``--recipe``: list the recipes, print one's commands, or run it into ``--out``."""
    from caledonia_env.train import recipe as recipes
    sub = argparse.ArgumentParser().add_subparsers()
    defaults = vars(add_train_parser(sub).parse_args([]))     # every option left unset
    own = {"recipe", "dry_run", "workers", "out", "quiet", "func"}
    extra = ["--" + k.replace("_", "-") for k, v in defaults.items()
             if k not in own and getattr(args, k, v) != v]
    try:
        if extra:
            raise recipes.RecipeError(f"--recipe runs its own commands; drop {', '.join(extra)}")
        if args.recipe == "list":
            for name in recipes.names():
                r = recipes.load(name)
                print(f"{name:10s} {r.description}")
            return 0
        recipe = recipes.load(args.recipe)
        out = args.out or f"runs/{recipe.name}"
        if args.dry_run:
            print("\n".join(recipe.commands(out)))
            return 0
        tn.check_output_folder(out, "--out")
        path = recipes.run(recipe, out, workers=args.workers)
    except (ValueError, FileExistsError, CheckpointError) as e:     # RecipeError included
        print(f"caledonia train: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(f"{recipe.name}: {path}")
    return 0


def cmd_train(args) -> int:
    if args.recipe is not None:
        return cmd_recipe(args)
    try:
        import sb3_contrib  # noqa: F401  (optional extra: a clear message without it)
    except ImportError:
        print("caledonia train: error: training needs the train extra "
              "(pip install -e '.[train]': torch, stable-baselines3, sb3-contrib, tensorboard)",
              file=sys.stderr)
        return 2
    from caledonia_env.train.trainer import train     # needs the train extra (sb3), checked just above
    try:
        cfg = config_from_args(args)
        cfg.validate()
        tn.check_output_folder(cfg.out, "--out")
        train(cfg, resume=args.resume, progress=not args.quiet)
    except (ValueError, FileExistsError, CheckpointError) as e:
        print(f"caledonia train: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0
