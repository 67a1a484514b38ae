"""Baseline bots for caledonia_env and a registry by name.

    >>> from caledonia_env import agents
    >>> bot = agents.make("greedy", seed=1)
    >>> game.step(bot.act(game))

``agents.make(name, seed=0, **kw)`` builds an agent; ``agents.available()``
lists the names; ``agents.register(kind, factory, ...)`` adds a kind (later
kinds can be added). Names: ``random``, ``greedy``, ``mcts`` and
``mcts:N`` (N rollouts per decision) or ``mcts:Xs`` (X seconds per decision),
``ppo:PATH`` or ``ppo:pretrained`` (a trained policy; needs the train extra),
``puct:SIMS`` or ``puct:SIMS:PATH`` (tree search with a trained policy/value network),
``nmcts:N`` or ``nmcts:N:PATH`` (``mcts`` with a trained policy as candidate ranking and
rollout policy), ``nmctsg:N[:PATH]`` (the same, the greedy bot playing the other seats of
its rollouts).
See docs/agents.md.
"""
from __future__ import annotations

from .automa import AutomaMarker, automa_seats, make_automa
from .base import Agent
from .greedy import GreedyAgent
from .mcts import MCTSAgent
from .ppo import PPOAgent
from .nmcts import NetMCTSAgent
from .puct import PUCTAgent
from .random_agent import RandomAgent
from .registry import available, kinds, make, parse_name, register, syntax


def _no_param(cls):
    def factory(param, seed, **kw):
        return cls(seed=seed, **kw)
    return factory


def _mcts(param, seed, **kw):
    if param is not None:
        text = param.strip().lower()
        try:
            if text.endswith("s"):
                kw["seconds"] = float(text[:-1])
                if not kw["seconds"] > 0:
                    raise ValueError
            else:
                kw["rollouts"] = int(text)
                if kw["rollouts"] < 1:
                    raise ValueError
        except ValueError:
            raise ValueError(f"mcts parameter must be a rollout count N >= 1 (mcts:200) or "
                             f"seconds per decision (mcts:0.5s), got {param!r}") from None
    return MCTSAgent(seed=seed, **kw)


register("random", _no_param(RandomAgent), help="uniformly random legal action.")
register("greedy", _no_param(GreedyAgent),
         help="one-step lookahead with a hand-written position evaluation.")
register("mcts", _mcts,
         help="Monte-Carlo search with greedy rollouts (default 64 rollouts per decision).",
         param="N rollouts per decision, or Xs seconds per decision", example="mcts:200, mcts:0.5s")

register("automa", make_automa,
         help="seat played by the engine as the publisher's Automa (a marker; see docs/automa.md).",
         param="difficulty 1-5", param_required=True, example="automa:5")

__all__ = ["Agent", "AutomaMarker", "automa_seats", "GreedyAgent", "MCTSAgent", "NetMCTSAgent",
           "PPOAgent", "PUCTAgent", "RandomAgent", "available", "kinds", "make", "parse_name",
           "register", "syntax"]
