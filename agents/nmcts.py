"""``nmcts:ROLLOUTS[:PATH]``: ``mcts`` with a trained policy network in place of the greedy bot.

The search is :class:`agents.mcts.MCTSAgent`'s (a flat Monte-Carlo search: successive
halving over a few candidates, each played out on the same determinizations of the hidden
information, :func:`agents.evaluation.determinize`), with the network in the greedy bot's
three roles: the candidates are the policy head's most likely legal actions (plus ``pass``
when legal), every rollout is finished with the policy playing every seat (its most likely
legal action, numba, :func:`agents.netroll.policy_rollout_margins`), and the decisions that
are not searched are the policy's. ``PATH`` is a checkpoint of ``caledonia train``, by
default the shipped policy for the game's player count (:func:`checkpoint.pretrained_path`).
"""
from __future__ import annotations

import numpy as np

from ..engine.actions import N_ACTIONS
from ..engine.mask import legal_mask
from ..envs.observation import OBS_SIZE
from .mcts import SEARCHED_CONTEXTS, MCTSAgent
from .netroll import policy_action, policy_logits, policy_rollout_margins, policy_weights
from .policy import PretrainedActor, count_and_path, is_pretrained, load_network
from .ppo import need_torch
from .registry import kinds, register


OPPONENT_MODELS = ("policy", "greedy")


class NetMCTSAgent(MCTSAgent):
    """Flat Monte-Carlo search over the policy's best candidates with policy rollouts.

    ``rollouts``: rollouts per searched decision; ``path``: a checkpoint, or ``"pretrained"``;
    ``candidates``: how many of the policy's most likely actions are searched;
    ``temperature``: 0 (default) plays the most likely action in the rollouts, > 0 samples
    softmax(logits / temperature); ``opponents``: who plays the other seats of the rollouts,
    ``"policy"`` (default) or ``"greedy"`` (the greedy bot: an opponent model for games
    against the search bots, whose rollouts and candidates are greedy's). ``seconds`` and
    ``contexts`` as for ``mcts``.
    """

    name = "nmcts"

    def __init__(self, rollouts: int = 32, path: str = "pretrained", seed: int = 0,
                 name: str | None = None, candidates: int = 6, temperature: float = 0.0,
                 seconds: float | None = None, contexts=SEARCHED_CONTEXTS,
                 opponents: str = "policy"):
        if not temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if opponents not in OPPONENT_MODELS:
            raise ValueError(f"opponents must be one of {OPPONENT_MODELS}, got {opponents!r}")
        self.opponents = opponents
        need_torch("nmcts")
        self.path = path
        self.temperature = float(temperature)
        self._pretrained = PretrainedActor() if is_pretrained(path) else None
        if self._pretrained is None:
            load_network(path)                  # clear error now, not at the first move
        self._obs = np.zeros(OBS_SIZE, np.float32)
        self._logits = np.empty(N_ACTIONS, np.float32)
        self._net = None
        super().__init__(seed=seed, name=name, rollouts=rollouts, seconds=seconds,
                         candidates=candidates, contexts=contexts)

    def network(self, num_players: int):
        """``(module, meta)`` of the policy this agent plays games of ``num_players`` with."""
        if self._pretrained is not None:
            return self._pretrained.network(num_players)
        return load_network(self.path)

    def _prepare(self, game) -> None:
        self._net = policy_weights(*self.network(game.num_players)).args()

    def _unsearched(self, s, T) -> int:
        return int(policy_action(s, T, *self._net, 0.0, self._mask, self._obs, self._logits))

    def _ranking(self, s, T):
        legal_mask(s, T, self._mask)
        legal = np.flatnonzero(self._mask)
        if len(legal) > 1:
            policy_logits(s, T, *self._net, self._mask, self._obs, self._logits)
        return legal, self._logits[legal]

    def _playouts(self, s, T, p, actions, seeds, out) -> None:
        policy_rollout_margins(s, T, *self._net, self.temperature,
                               self.opponents == "greedy", self.weights, p, actions, seeds,
                               self._buf, out)


def _factory(kind, **fixed):
    def factory(param, seed, **kw):
        rollouts, path = count_and_path(kind, param, "ROLLOUTS")
        return NetMCTSAgent(rollouts, path, seed=seed, **fixed, **kw)
    return factory


_registered = {k.name for k in kinds()}
if "nmcts" not in _registered:
    register("nmcts", _factory("nmcts"),
             help="mcts with a trained policy network: its most likely actions are the "
                  "candidates and it plays the rollouts (needs the train extra).",
             param="ROLLOUTS per decision, optionally :PATH of a checkpoint (default: the "
                   "shipped policy for the game's player count)",
             param_required=True, example="nmcts:32, nmcts:64:runs/x/best.zip")
if "nmctsg" not in _registered:
    register("nmctsg", _factory("nmctsg", opponents="greedy"),
             help="nmcts whose rollouts play the other seats with the greedy bot (an "
                  "opponent model; needs the train extra).",
             param="ROLLOUTS per decision, optionally :PATH of a checkpoint",
             param_required=True, example="nmctsg:64")
