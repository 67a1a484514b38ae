"""The greedy evaluation's weights as files: their names, reading and writing, shipped sets.

A weights file is JSON, ``{"weights": {NAME: value, ...}, ...}``: every NAME of
:data:`WEIGHT_NAMES` (the ``W_*`` indices of :mod:`agents.greedy_value` in lower case without
``W_``: ``money_slope``, ``sell``, ...) with a finite value >= 0; the other keys record where
the weights came from (``caledonia tune-weights`` writes the command, seed and fitness).
Files written before ``opponent`` and ``money_curve`` existed (:data:`ADDED_LATER`) read them
as 0, their default. A shipped set is named by a word: ``solo`` is ``pretrained/greedy_solo.json``,
the weights tuned for the solo game (R-9.2), ``2p``, ``3p`` and ``4p`` those tuned against
opponents for that player count (``pretrained/greedy_2p.json`` ...), each with its model card
beside it (``.md``). ``greedy:4p`` and ``mcts:32:2p`` play with them (:mod:`agents.builtin`).
"""
from __future__ import annotations

import json
import math
import os

import numpy as np

from caledonia_env.atomic import atomic_path
from caledonia_env.data.safe_io import InputError, parse_json, read_bytes
from caledonia_env.agents import greedy_value
from caledonia_env.agents.checkpoint import PRETRAINED_DIR

#: the weights' names by index: W_MONEY_SLOPE (index 0) is "money_slope", ...
WEIGHT_NAMES = tuple(name[2:].lower() for name, _ in sorted(
    ((k, v) for k, v in vars(greedy_value).items() if k.startswith("W_")), key=lambda kv: kv[1]))
#: weights added after the first weights files were written: a file without them reads
#: their default (0: the term is off), so that it plays as it did when it was written
ADDED_LATER = ("opponent", "money_curve")
#: shipped weight sets by name, files of the pretrained folder
SHIPPED = {"solo": "greedy_solo.json", "2p": "greedy_2p.json", "3p": "greedy_3p.json",
           "4p": "greedy_4p.json"}


def names_weights(text: str) -> bool:
    """Whether an agent name's part ``text`` names weights: a shipped set or a ``.json``
    file (a checkpoint is a ``.zip``)."""
    return text in SHIPPED or text.endswith(".json")


def weights_path(spec: str) -> str:
    """The file of a shipped set's name (:data:`SHIPPED`), or ``spec`` itself (a path)."""
    return os.path.join(PRETRAINED_DIR, SHIPPED[spec]) if spec in SHIPPED else spec


def weights_from_dict(named: dict, source: str = "weights") -> np.ndarray:
    """The float64 weight vector of ``{NAME: value}``; ValueError naming the missing,
    unknown or invalid entries."""
    if not isinstance(named, dict):
        raise ValueError(f"{source}: 'weights' must be an object of NAME: value")
    missing = [n for n in WEIGHT_NAMES if n not in named and n not in ADDED_LATER]
    unknown = sorted(set(named) - set(WEIGHT_NAMES))
    if missing or unknown:
        raise ValueError(f"{source}: weights missing {missing or 'none'}, unknown "
                         f"{unknown or 'none'} (names: {', '.join(WEIGHT_NAMES)})")
    w = greedy_value.DEFAULT_WEIGHTS.copy()
    for i, n in enumerate(WEIGHT_NAMES):
        if n not in named:
            continue
        v = named[n]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                or v < 0:
            raise ValueError(f"{source}: weight {n!r} must be a finite number >= 0, got {v!r}")
        w[i] = v
    return w


def load_weights(spec: str) -> np.ndarray:
    """The weights of a shipped set's name (:data:`SHIPPED`) or of a weights file; ValueError with
    the reason for a file that is missing or not a weights file."""
    path = weights_path(spec)
    if not path.endswith(".json"):
        raise ValueError(f"weights must be a shipped set ({', '.join(SHIPPED)}) or a .json file "
                         f"written by 'caledonia tune-weights', got {spec!r}")
    try:
        data = parse_json(read_bytes(path))
    except (OSError, InputError) as e:
        raise ValueError(f"{path}: cannot read the weights: {e}") from None
    if not isinstance(data, dict) or "weights" not in data:
        raise ValueError(f"{path}: not a weights file (no 'weights' object)")
    return weights_from_dict(data["weights"], path)


def save_weights(path: str, w, **meta) -> str:
    """Write ``w`` with the provenance ``meta`` as a weights file (atomically); ``path``."""
    w = np.asarray(w, np.float64)
    if w.shape != (len(WEIGHT_NAMES),):
        raise ValueError(f"weights must have {len(WEIGHT_NAMES)} entries, got shape {w.shape}")
    data = {"weights": {n: float(v) for n, v in zip(WEIGHT_NAMES, w)}, **meta}
    with atomic_path(path, ".json") as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
    return path


__all__ = ["SHIPPED", "WEIGHT_NAMES", "load_weights", "names_weights", "save_weights",
           "weights_from_dict", "weights_path"]
