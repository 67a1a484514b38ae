"""Baseline bots for caledonia_env and a registry by name.

    >>> from caledonia_env import agents
    >>> bot = agents.make("greedy", seed=1)
    >>> game.step(bot.act(game))

``agents.make(name, seed=0, **kw)`` builds an agent; ``agents.available()``
lists the names; ``agents.register(kind, factory, ...)`` adds a kind. The built-in
kinds are one table, :data:`agents.builtin.BUILTIN`: ``random``, ``greedy``, ``mcts``
(a flat Monte-Carlo search, no tree: ``mcts:N`` N rollouts per decision or ``mcts:Xs``
X seconds per decision), ``automa:LEVEL``, ``ppo:PATH`` or ``ppo:pretrained`` (a trained
policy; needs the train extra), ``puct:SIMS[:PATH]`` and ``puctr:SIMS[:PATH]`` (tree search
with a trained policy/value network), ``nmcts:N[:PATH]`` (``mcts`` with a trained policy as
candidate ranking and rollout policy), ``nmctsg:N[:PATH]`` (the same, the greedy bot playing
the other seats of its rollouts). The searches take their values and priors from an
evaluator (:mod:`agents.search_values`). See docs/agents.md.
"""
from __future__ import annotations

from caledonia_env.agents import builtin
from caledonia_env.agents.automa import AutomaMarker, automa_seats, make_automa
from caledonia_env.agents.base import Agent
from caledonia_env.agents.search_values import Evaluator, GreedyRollouts, NetworkValues, PolicyRollouts
from caledonia_env.agents.greedy import GreedyAgent
from caledonia_env.agents.mcts import MCTSAgent
from caledonia_env.agents.nmcts import NetMCTSAgent
from caledonia_env.agents.ppo import PPOAgent
from caledonia_env.agents.puct import PUCTAgent
from caledonia_env.agents.random_agent import RandomAgent
from caledonia_env.agents.registry import available, kinds, make, parse_name, register, syntax

builtin.install()

__all__ = ["Agent", "AutomaMarker", "Evaluator", "GreedyAgent", "GreedyRollouts", "MCTSAgent",
           "NetMCTSAgent", "NetworkValues", "PPOAgent", "PUCTAgent", "PolicyRollouts",
           "RandomAgent", "automa_seats", "available", "kinds", "make", "make_automa",
           "parse_name", "register", "syntax"]
