"""Which bots the web app offers: a fixed menu chosen when the server starts.

A seat name from a request is checked against :class:`AgentMenu` and never reaches the
agent registry as it is: the kinds are a fixed list, every search parameter has a bound
(:class:`Limits`), and a checkpoint is a name of the menu (``pretrained``, or the file
name of a ``.zip`` in ``caledonia serve --agent-dir DIR``) that the server maps to its own
file. No path from a request is ever looked at (docs/web.md, Security).
"""
from __future__ import annotations

import importlib.util
import logging
import math
import os
from dataclasses import dataclass

from caledonia_env.agents import kinds, make
from caledonia_env.agents.automa import LEVELS
from caledonia_env.agents.builtin import split_suffixes
from caledonia_env.agents.checkpoint import pretrained_path
from caledonia_env.agents.weights import SHIPPED as WEIGHT_SETS
from caledonia_env.agents.weights import names_weights
from caledonia_env.engine.constants import N_ROUNDS_MAX
from caledonia_env.web.guards import shown

log = logging.getLogger("caledonia_env.web")

PRETRAINED = "pretrained"
#: kinds whose parameter is ``N[:CHECKPOINT]`` (N bounded by the Limits field named)
NET_SEARCH = {"puct": "max_sims", "puctr": "max_sims", "nmcts": "max_rollouts",
              "nmctsg": "max_rollouts"}
NET_KINDS = ("ppo",) + tuple(NET_SEARCH)
BASIC_KINDS = ("random", "greedy", "mcts", "automa")
#: flat searches, whose budget takes the suffixes hH and cK (agents.builtin.split_suffixes)
FLAT_SEARCH = ("mcts", "nmcts", "nmctsg")
#: kinds that take a shipped weights set's name last (``greedy:solo``, ``nmctsg:64h2:solo``)
WEIGHTED = ("greedy",) + FLAT_SEARCH
MAX_CANDIDATES = 64


@dataclass(frozen=True)
class Limits:
    """Bounds the server enforces on bot seats and on one request's bot play.

    ``max_rollouts``: mcts / nmcts rollouts per decision; ``max_sims``: puct / puctr
    simulations per decision; ``max_seconds``: ``mcts:Xs`` seconds per decision;
    ``step_seconds``: bot play of one request stops at the first decision that ends past
    this budget (the answer says so; the next request goes on)."""
    max_rollouts: int = 512
    max_sims: int = 256
    max_seconds: float = 5.0
    step_seconds: float = 10.0

    def __post_init__(self):
        for name in ("max_rollouts", "max_sims"):
            v = getattr(self, name)
            if type(v) is not int or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        for name in ("max_seconds", "step_seconds"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 \
                    or (name == "max_seconds" and v == 0):
                raise ValueError(f"{name} must be a finite number of seconds "
                                 f"{'> 0' if name == 'max_seconds' else '>= 0'}, got {v!r}")


def scan_agent_dir(folder) -> dict[str, str]:
    """``{file name: absolute path}`` of the ``.zip`` files directly inside ``folder``
    (names with ``:`` are skipped: a seat name could not refer to them)."""
    folder = os.path.abspath(os.fspath(folder))
    if not os.path.isdir(folder):
        raise ValueError(f"--agent-dir must be a folder, got {folder!r}")
    return {f: os.path.join(folder, f) for f in sorted(os.listdir(folder))
            if f.endswith(".zip") and f != PRETRAINED and ":" not in f
            and os.path.isfile(os.path.join(folder, f))}


class AgentMenu:
    """The agent names a server accepts for its seats and how it builds them.

    ``checkpoints``: ``{name: path}`` the ``ppo``/``puct``/``nmcts`` kinds may load besides
    the shipped ``pretrained`` (:func:`scan_agent_dir`); ``networks``: offer those kinds
    at all (default: when torch is installed)."""

    def __init__(self, limits: Limits | None = None, checkpoints: dict | None = None,
                 networks: bool | None = None):
        self.limits = limits or Limits()
        self.checkpoints = dict(checkpoints or {})
        if PRETRAINED in self.checkpoints:
            raise ValueError(f"a checkpoint cannot be named {PRETRAINED!r}")
        if networks is None:
            networks = importlib.util.find_spec("torch") is not None
        self.kinds = BASIC_KINDS + (NET_KINDS if networks else ())

    def checkpoint_names(self) -> list[str]:
        return [PRETRAINED] + sorted(self.checkpoints)

    # ------------------------------------------------------------- checking names
    def check(self, name: str) -> str:
        """The seat name, normalized (``'mcts:200'``); ValueError saying what is allowed."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"an agent name must be a non-empty string, got {name!r}")
        name = name.strip()
        kind, sep, param = name.partition(":")
        if kind not in self.kinds:
            raise ValueError(f"agent {shown(name)} is not offered by this server; offered: "
                             f"{', '.join(self.kinds)} (see /api/meta)")
        weights = ""
        if kind in WEIGHTED:
            param, weights = self._weights(kind, param)
        if kind in ("random", "greedy"):
            if sep and (param or not weights):
                raise ValueError(f"agent {kind!r} takes no parameter"
                                 f"{'' if kind == 'random' else ' but weights: ' + self._sets()}"
                                 f", got {shown(name)}")
        elif kind == "mcts":
            if sep:
                self._budget(kind, param, self.limits.max_rollouts)
        elif kind == "automa":
            if param not in {str(x) for x in LEVELS}:
                raise ValueError(f"automa needs a level 1-5 (automa:5), got {shown(name)}")
        elif kind == "ppo":
            self._checkpoint(kind, param)
        else:
            count, _, ck = param.partition(":")
            bound = getattr(self.limits, NET_SEARCH[kind])
            if kind in FLAT_SEARCH:
                self._budget(kind, count, bound)
            else:
                self._count(kind, count, bound)
            if ck:
                self._checkpoint(kind, ck)
        return name

    @staticmethod
    def _sets() -> str:
        return ", ".join(WEIGHT_SETS)

    def _weights(self, kind: str, param: str) -> tuple[str, str]:
        """``(param without its weights, the weights' name or "")``: the last part of a
        flat search's or greedy's parameter is a shipped set's name (never a path)."""
        head, sep, tail = param.rpartition(":")
        last = tail if sep or kind == "greedy" else ""
        if not names_weights(last):
            return param, ""
        if last not in WEIGHT_SETS:
            raise ValueError(f"{kind}: weights must be a shipped set ({self._sets()}) on this "
                             f"server, not a file, got {shown(last)}")
        return head, last

    def _budget(self, kind: str, text: str, bound: int) -> None:
        """``N[hH][cK]`` (``mcts``: also ``Xs[hH][cK]``) within the server's bounds."""
        try:
            head, options = split_suffixes(kind, text)
            ok = (1 <= options.get("horizon", 1) <= N_ROUNDS_MAX
                  and 2 <= options.get("candidates", 2) <= MAX_CANDIDATES)
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{kind}: the suffixes are hH, rollouts of H rounds "
                             f"(1..{N_ROUNDS_MAX}), then cK, K candidates "
                             f"(2..{MAX_CANDIDATES}), e.g. {kind}:32h2c12; got {shown(text)}")
        if kind == "mcts" and head.endswith("s"):
            self._seconds(head[:-1])
        else:
            self._count(kind, head, bound)

    def _seconds(self, text: str) -> None:
        try:
            sec = float(text)
        except ValueError:
            sec = math.nan
        limit = self.limits.max_seconds
        if not 0 < sec <= limit:     # also refuses nan and inf
            raise ValueError(f"mcts:Xs needs 0 < X <= {limit:g} seconds on this server, got "
                             f"{shown(text + 's')}")

    @staticmethod
    def _count(kind: str, text: str, bound: int) -> int:
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= bound:
            raise ValueError(f"{kind} needs a count 1..{bound} on this server "
                             f"({kind}:{min(64, bound)}), got {shown(text)}")
        return int(text)

    def _checkpoint(self, kind: str, name: str) -> None:
        if name != PRETRAINED and name not in self.checkpoints:
            raise ValueError(f"{kind}: unknown checkpoint {shown(name)}; this server offers: "
                             f"{', '.join(self.checkpoint_names())} (a name, not a path)")

    # ------------------------------------------------------------- building agents
    def make(self, name: str, num_players: int, seed: int = 0):
        """A fresh agent for a checked ``name`` in a game of ``num_players``."""
        name = self.check(name)
        kind, _, param = name.partition(":")
        if kind not in NET_KINDS:
            return make(name, seed=seed)
        param, weights = self._weights(kind, param) if kind in WEIGHTED else (param, "")
        count, ck = ("", param) if kind == "ppo" else param.partition(":")[::2]
        try:
            path = self._path(ck or PRETRAINED, num_players, search=kind != "ppo")
            agent = make(":".join(x for x in (kind, count, path, weights) if x), seed=seed)
        except Exception:   # the loader's message may quote the file: the page gets none of it
            log.exception("caledonia serve: could not load %s", name)
            raise ValueError(f"agent {name!r}: its checkpoint could not be loaded on this "
                             f"server (the server's log has the reason)") from None
        agent.name = name
        return agent

    def _path(self, checkpoint: str, num_players: int, search: bool) -> str:
        if checkpoint == PRETRAINED:
            return pretrained_path(num_players, search=search)
        return self.checkpoints[checkpoint]

    # ------------------------------------------------------------- /api/meta
    def describe(self) -> dict:
        """What /api/meta shows: the kinds with their parameter syntax, checkpoints, bounds."""
        lim = self.limits
        ck = "|".join(self.checkpoint_names())
        sets = "|".join(WEIGHT_SETS)
        suffixes = (f"[hH (rounds 1..{N_ROUNDS_MAX})][cK (candidates 2..{MAX_CANDIDATES})]")
        params = {
            "random": None, "greedy": f"optional: weights {sets}",
            "mcts": f"optional: N rollouts (1..{lim.max_rollouts}) or Xs seconds "
                    f"(<= {lim.max_seconds:g}), then {suffixes}, then optionally :{sets}",
            "automa": "level 1-5 (the engine plays the seat as the publisher's Automa)",
            "ppo": ck,
            "puct": f"SIMS (1..{lim.max_sims}), optionally :{ck}",
            "puctr": f"SIMS (1..{lim.max_sims}), optionally :{ck}",
            "nmcts": f"ROLLOUTS (1..{lim.max_rollouts}){suffixes}, optionally :{ck}, then "
                     f"optionally :{sets}",
            "nmctsg": f"ROLLOUTS (1..{lim.max_rollouts}){suffixes}, optionally :{ck}, then "
                      f"optionally :{sets}",
        }
        examples = {"greedy": "greedy:solo", "mcts": "mcts:64", "automa": "automa:3",
                    "ppo": "ppo:pretrained", "puct": "puct:64", "puctr": "puctr:32",
                    "nmcts": "nmcts:32", "nmctsg": "nmctsg:64h2:solo"}
        helps = {k.name: k.help for k in kinds()}
        return {"agents": [{"name": k, "help": helps.get(k, ""), "param": params[k],
                            "param_required": k not in ("random", "greedy", "mcts"),
                            "example": examples.get(k)} for k in self.kinds],
                "checkpoints": self.checkpoint_names(),
                "limits": {"max_rollouts": lim.max_rollouts, "max_sims": lim.max_sims,
                           "max_seconds": lim.max_seconds, "step_seconds": lim.step_seconds}}
