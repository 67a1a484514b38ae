"""Self-play training and evaluation of MaskablePPO agents (needs the ``train`` extra).

- :mod:`train.trainer`: ``caledonia train`` — MaskablePPO, numba vector env then self-play
  against a snapshot pool and bots, periodic evaluation, checkpoints, ``--resume``;
- :mod:`train.selfplay`: the self-play vector env and its opponent pool;
- :mod:`train.checkpoint`: weights-only checkpoints (no pickled code) and the actor network;
- :mod:`train.players`: batched policy players and many-game evaluation;
- :mod:`train.rating`: league ratings (Bradley-Terry on the Elo scale);
- :mod:`train.cli`: the ``train`` / ``evaluate`` / ``plot`` commands (``python -m train``).

See docs/training.md.
"""
