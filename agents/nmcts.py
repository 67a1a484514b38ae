"""``nmcts:ROLLOUTS[:PATH]``: ``mcts`` with a trained policy network in place of the greedy bot.

The search is :class:`agents.mcts.MCTSAgent`'s (a flat Monte-Carlo search, no tree:
successive halving over a few candidates, each played out on the same determinizations of
the hidden information, :func:`agents.rollouts.determinize`) with the evaluator
:class:`agents.search_values.PolicyRollouts`: the network takes the greedy bot's three roles.
The candidates are the policy head's most likely legal actions (plus ``pass`` when legal),
every rollout is finished with the policy playing every seat (its most likely legal action,
numba, :func:`agents.netroll.policy_rollout_margins`), and the decisions that are not searched
are the policy's. ``PATH`` is a checkpoint of ``caledonia train``, by default the shipped
searches' network for the game's player count (:func:`checkpoint.pretrained_path` with
``search``: the policy's own file unless another ships). ``nmctsg`` is the
same with ``opponents="greedy"``: the greedy bot plays the other seats of the rollouts.
"""
from __future__ import annotations

from caledonia_env.agents.search_values import PolicyRollouts
from caledonia_env.agents.mcts import SEARCHED_CONTEXTS, MCTSAgent
from caledonia_env.agents.ppo import need_torch


class NetMCTSAgent(MCTSAgent):
    """Flat Monte-Carlo search over the policy's best candidates with policy rollouts.

    ``rollouts``: rollouts per searched decision; ``path``: a checkpoint, or ``"pretrained"``;
    ``candidates``: how many of the policy's most likely actions are searched;
    ``temperature``: 0 (default) plays the most likely action in the rollouts, > 0 samples
    softmax(logits / temperature); ``opponents``: who plays the other seats of the rollouts,
    ``"policy"`` (default) or ``"greedy"`` (the greedy bot: an opponent model for games
    against the search bots, whose rollouts and candidates are greedy's); ``horizon``:
    rounds a rollout plays before the greedy evaluation values it (0: to the end);
    ``weights``: the greedy evaluation's that value the leaves of a horizon (default
    :func:`agents.greedy.greedy_weights`; ``nmctsg``'s opponents keep the default weights).
    ``seconds`` and ``contexts`` as for ``mcts``.
    """

    name = "nmcts"

    def __init__(self, rollouts: int = 32, path: str = "pretrained", seed: int = 0,
                 name: str | None = None, candidates: int = 6, temperature: float = 0.0,
                 seconds: float | None = None, contexts=SEARCHED_CONTEXTS,
                 opponents: str = "policy", horizon: int = 0, weights=None):
        need_torch("nmcts")
        evaluator = PolicyRollouts(path, temperature, opponents, weights, horizon)
        super().__init__(seed=seed, name=name, rollouts=rollouts, seconds=seconds,
                         candidates=candidates, contexts=contexts, evaluator=evaluator)

    @property
    def path(self) -> str:
        return self.evaluator.path

    @property
    def opponents(self) -> str:
        return self.evaluator.opponents

    @property
    def temperature(self) -> float:
        return self.evaluator.temperature

    def network(self, num_players: int):
        """``(module, meta)`` of the policy this agent plays games of ``num_players`` with."""
        return self.evaluator.network(num_players)
