"""Self-play training and evaluation of MaskablePPO agents (needs the ``train`` extra).

- :mod:`caledonia_env.train.trainer`: ``caledonia train`` — MaskablePPO, numba vector env then self-play
  against a snapshot pool and bots, periodic evaluation, checkpoints, ``--resume``;
- :mod:`caledonia_env.train.selfplay`: the self-play vector env and its opponent pool;
- :mod:`caledonia_env.agents.checkpoint` (agents layer): weights-only checkpoints and the actor network;
- :mod:`caledonia_env.train.players`: many-game evaluation with batched policy players
  (:mod:`caledonia_env.agents.policy`);
- :mod:`caledonia_env.train.rating`: league ratings (Bradley-Terry on the Elo scale);
- :mod:`caledonia_env.train.expert`: ``caledonia expert`` — expert iteration, the policy
  fitted to the root visit counts of ``puct`` self-play;
- :mod:`caledonia_env.train.cli`: the ``train`` / ``expert`` / ``evaluate`` / ``plot`` commands.

See docs/training.md.
"""
