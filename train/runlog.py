"""The files of a run folder: the CSV logs (``eval.csv``, ``train.csv``)."""
from __future__ import annotations

import csv
import os

RUN_FILES = ("config.json", "eval.csv", "train.csv", "best.zip", "last.zip", "resume.pt")
EVAL_FIELDS = ("timesteps", "wall_seconds", "opponent", "games", "wins", "win_rate", "ci_low",
               "ci_high", "vp", "opp_vp", "vp_ci_low", "vp_ci_high", "bands")
TRAIN_FIELDS = ("timesteps", "wall_seconds", "phase", "episodes", "ep_reward", "win_rate",
                "ep_len", "fps")


def append_csv(path, fields, row):
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(fields), extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow(row)


def read_csv(path) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))

