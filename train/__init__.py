"""Self-play training and evaluation of MaskablePPO agents (needs the ``train`` extra).

- :mod:`caledonia_env.train.trainer`: ``caledonia train`` — the training loop (numba vector
  env, then self-play against a snapshot pool and bots); its parts:
  :mod:`~caledonia_env.train.config` (settings, ``--resume``'s saved config),
  :mod:`~caledonia_env.train.model` (the MaskablePPO network),
  :mod:`~caledonia_env.train.runstate` (``--init``, ``--resume``, checkpoints, snapshots),
  :mod:`~caledonia_env.train.periodic_eval` (periodic evaluations, ``best.zip``),
  :mod:`~caledonia_env.train.runlog` (CSV logs);
- :mod:`caledonia_env.train.selfplay`: the self-play vector env and its opponent pool;
  :mod:`caledonia_env.train.opponents`: the opponent mix;
- :mod:`caledonia_env.agents.checkpoint` (agents layer): weights-only checkpoints, read within
  limits; :mod:`caledonia_env.agents.network`: the networks;
- :mod:`caledonia_env.train.batched_play`: many-game evaluation with batched policy players
  (:mod:`caledonia_env.agents.policy`);
- :mod:`caledonia_env.train.rating`: league ratings (Bradley-Terry on the Elo scale);
- :mod:`caledonia_env.train.expert`: ``caledonia expert`` — expert iteration, the policy
  fitted to the root visit counts of ``puct`` self-play;
- :mod:`caledonia_env.train.recipe`: ``caledonia train --recipe NAME`` — the chain of
  commands that made each shipped policy (``train/recipes/NAME.toml``);
- :mod:`caledonia_env.train.cli`: the ``train`` / ``expert`` / ``evaluate`` / ``plot``
  commands (the package :mod:`caledonia_env.train.cli`: ``train``, ``evaluate``, ``expert``,
  ``tune``, ``common``).

See docs/training.md.
"""
