"""Evaluators: what the search agents ask about a position, behind one interface.

The search agents differ in how they search (``mcts``/``nmcts``: a flat Monte-Carlo search,
:mod:`agents.mcts`; ``puct``: a tree, :mod:`agents.puct`); what they need to know about a
position comes from an :class:`Evaluator` (OpenSpiel's idea). For an engine state ``s``
with its tables ``T`` (never changed):

- ``prepare(game)``: once per decision, before the other calls (a network evaluator takes
  the network of the game's player count there);
- ``prior(s, T) -> (legal, scores)``: the legal actions of the player to move and the
  evaluator's score of each, higher is better (a network's are its policy's probabilities);
- ``evaluate(s, T) -> values``: the value of ``s`` for every player, float64[num_players].

The implementations:

- :class:`GreedyRollouts` (``mcts``): prior = the greedy one-step evaluation; values = the
  final margins of a greedy (or random) rollout;
- :class:`PolicyRollouts` (``nmcts``, ``nmctsg``): prior = the policy's logits; values = the
  final margins of a policy rollout (the greedy bot in the other seats with
  ``opponents="greedy"``);
- :class:`ValueRollouts` (``vmcts``): as :class:`GreedyRollouts`, rollouts of whole rounds
  valued by a learned afterstate value (:mod:`agents.afterstate_value`);
- :class:`RecordingRollouts`: :class:`GreedyRollouts` with a horizon that also keeps every
  rollout's leaf (its value features, and the margin once it is played on to the end), the
  labels of the value's listwise fit (``train/fit_value.py``);
- :class:`NetworkValues` (``puct``, ``puctr``): prior = the softmax of the policy head's
  legal logits; values = the value head (plus the shaping potential, plus a greedy rollout
  with ``rollout_mix``).

Rollout evaluators (:class:`RolloutEvaluator`) also play: ``action(s, T)`` is their own move
(the decisions a search leaves to them), ``finish(s, T)`` plays a game to its end, and
``playouts`` evaluates many (action, determinization) pairs in one numba call, the flat
search's inner loop. A final margin is a player's final VP minus the best opponent's
(:func:`agents.rollouts.final_margin`).
"""
from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.automa.deck import automa_switch
from caledonia_env.engine.constants import MAX_PLAYERS
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import S_NP, S_PLAYER, game_over
from caledonia_env.engine.mask import legal_mask
from caledonia_env.engine.playout import rollout
from caledonia_env.envs.observation import OBS_SIZE, encode_obs
from caledonia_env.envs.rewards import (REWARD_MODES, SCORE_DIFF_SCALE, projected_score_diff, reward_mode,
                           terminal_rewards)
from caledonia_env.agents.afterstate_value import (N_FEATURES, ValueNet, load_value,
                                                  recorded_rollout_margins, value_rollout_margins)
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS
from caledonia_env.agents.rollouts import (
    action_values,
    final_margin,
    greedy_action,
    greedy_rollout,
    random_rollout_margins,
    rollout_margins,
)
from caledonia_env.agents.greedy import greedy_weights
from caledonia_env.agents.netroll import (mixed_rollout, policy_action, policy_logits, policy_rollout_margins,
                      policy_weights)
from caledonia_env.agents.policy import PretrainedActor, is_pretrained, load_network
from caledonia_env.agents.policy import network_arrays as search_net  # the one NumPy copy of a loaded network

MAX_STEPS = 100000              # a rollout longer than this has not ended (a failed rollout)
FAILED = -1e9                   # the value of a failed rollout (as in the numba playouts)
ROLLOUT_POLICIES = {"greedy": rollout_margins, "random": random_rollout_margins}
OPPONENT_MODELS = ("policy", "greedy")


@njit(cache=True)
def _numba_draw():
    """A seed drawn from numba's np.random stream (the random rollouts' own seed)."""
    return np.random.randint(1, 2**31 - 2)


def softmax(logits: np.ndarray) -> np.ndarray:
    """The distribution softmax(logits), in the dtype of ``logits``."""
    pr = np.exp(logits - logits.max())
    pr /= pr.sum()
    return pr


class Evaluator(ABC):
    """What a search asks about positions: ``prepare``, ``prior`` and ``evaluate``."""

    def prepare(self, game) -> None:
        """Called once per decision of ``game`` before the other methods."""

    @abstractmethod
    def prior(self, s, T) -> tuple[np.ndarray, np.ndarray]:
        """(legal actions of the player to move, their scores: higher is better)."""

    @abstractmethod
    def evaluate(self, s, T) -> np.ndarray:
        """The value of position ``s`` for every player (float64[num_players])."""


class RolloutEvaluator(Evaluator):
    """An evaluator that plays: a policy finishing games (rollouts) and valuing them by every
    player's final margin. ``horizon`` > 0 stops the search's rollouts (``playouts``) after
    that many rounds and values them by the greedy evaluation's estimate of the final margin
    (:func:`agents.rollouts.leaf_margin`); 0 plays them to the end."""

    def __init__(self, weights=None, horizon: int = 0):
        if not (isinstance(horizon, (int, np.integer)) and horizon >= 0):
            raise ValueError(f"horizon must be a number of rounds >= 0 (0: rollouts to the "
                             f"end of the game), got {horizon!r}")
        self.weights = greedy_weights(weights)
        self.horizon = int(horizon)
        self.mask = np.zeros(N_ACTIONS, np.int8)
        self._buf = None

    def buffer(self, s) -> np.ndarray:
        """A scratch state of ``s``'s shape (kept between calls)."""
        if self._buf is None or self._buf.shape != s.shape:
            self._buf = np.empty_like(s)
        return self._buf

    @abstractmethod
    def action(self, s, T) -> int:
        """The rollout policy's move in ``s``."""

    @abstractmethod
    def finish(self, s, T) -> bool:
        """Play the game in ``s`` (changed) to its end with the rollout policy; False if
        it did not end (a position without a legal action, or MAX_STEPS moves)."""

    @abstractmethod
    def playouts(self, s, T, p, actions, seeds, out) -> None:
        """``out[i]``: p's final margin after determinizing ``s`` with ``seeds[i]``
        (:func:`agents.rollouts.determinize`), applying ``actions[i]`` and finishing
        the game, or its estimate after ``horizon`` rounds (:data:`FAILED` if the rollout
        did not get there)."""

    def evaluate(self, s, T) -> np.ndarray:
        """Every player's final margin after finishing ``s`` (a copy) with the rollout
        policy; :data:`FAILED` for everyone if it did not end."""
        end = s.copy()
        num_players = int(s[S_NP])
        if not self.finish(end, T):
            return np.full(num_players, FAILED)
        return np.array([final_margin(end, T, q) for q in range(num_players)])


class GreedyRollouts(RolloutEvaluator):
    """``mcts``'s evaluator: the greedy bot (weights ``weights``) ranks the actions
    (:func:`agents.rollouts.action_values`), plays the decisions and the rollouts;
    ``rollout="random"`` plays the rollouts with uniformly random legal moves instead
    (the engine's ``playout.rollout``)."""

    def __init__(self, weights=None, rollout: str = "greedy", horizon: int = 0):
        if rollout not in ROLLOUT_POLICIES:
            raise ValueError(f"rollout must be one of {sorted(ROLLOUT_POLICIES)}, got {rollout!r}")
        if rollout == "random" and horizon:
            raise ValueError("random rollouts play to the end of the game: horizon must be 0")
        super().__init__(weights, horizon)
        self.rollout = rollout
        self._values = np.zeros(N_ACTIONS, np.float64)

    def action(self, s, T) -> int:
        return int(greedy_action(s, T, self.weights, self.mask, self.buffer(s), automa_switch(T)))

    def prior(self, s, T):
        action_values(s, T, self.weights, self.mask, self.buffer(s), self._values,
                      automa_switch(T))
        legal = np.flatnonzero(self.mask)
        return legal, self._values[legal]

    def finish(self, s, T) -> bool:
        if self.rollout == "random":
            steps = rollout(s, T, _numba_draw(), MAX_STEPS, automa_switch(T))
        else:
            steps = greedy_rollout(s, T, self.weights, MAX_STEPS, automa_switch(T))
        return steps >= 0 and game_over(s)

    def playouts(self, s, T, p, actions, seeds, out) -> None:
        ROLLOUT_POLICIES[self.rollout](s, T, self.weights, p, actions, seeds, self.horizon,
                                       self.buffer(s), out, automa_switch(T))


class RecordingRollouts(GreedyRollouts):
    """:class:`GreedyRollouts` (greedy rollouts of ``horizon`` >= 1 rounds, the same margins,
    so the search plays the same moves) that records every ``playouts`` call, one group of
    siblings sharing determinizations: ``calls`` gets ``(p, actions, seeds, margins,
    features, done, deep)`` with each rollout leaf's :func:`agents.afterstate_value.value_features`
    for p (``feature_weights``, default the rollouts' weights) and ``deep``, p's final margin
    once that rollout is played on to the end of the game
    (:func:`agents.afterstate_value.recorded_rollout_margins`). Whoever reads ``calls``
    empties it."""

    def __init__(self, weights=None, horizon: int = 1, feature_weights=None):
        if not (isinstance(horizon, (int, np.integer)) and horizon >= 1):
            raise ValueError(f"recorded rollouts stop at a round: horizon must be >= 1, "
                             f"got {horizon!r}")
        super().__init__(weights, "greedy", horizon)
        self.feature_weights = (self.weights if feature_weights is None
                                else greedy_weights(feature_weights))
        self.calls: list = []

    def playouts(self, s, T, p, actions, seeds, out) -> None:
        n = len(actions)
        feats = np.empty((n, N_FEATURES))
        done = np.zeros(n, np.bool_)
        deep = np.empty(n)
        recorded_rollout_margins(s, T, self.weights, p, actions, seeds, self.horizon,
                                 self.buffer(s), out, automa_switch(T), self.feature_weights,
                                 feats, done, deep)
        self.calls.append((int(p), np.array(actions, np.int64), np.array(seeds, np.int64),
                           out.copy(), feats.astype(np.float32), done, deep))


class ValueRollouts(GreedyRollouts):
    """``vmcts``'s evaluator: :class:`GreedyRollouts` whose rollouts of ``horizon`` rounds
    (>= 1) are valued by a learned afterstate value (:mod:`agents.afterstate_value`) instead
    of the hand-written evaluation's margin. ``value``: a value file, or None for the shipped
    one of each game's player count; ``weights``: the greedy bot's for the prior, the moves
    and the rollouts, None for those the value was trained with (the tuned set of its player
    count)."""

    def __init__(self, weights=None, horizon: int = 1, value=None):
        if not (isinstance(horizon, (int, np.integer)) and horizon >= 1):
            raise ValueError(f"vmcts values rollouts of whole rounds: horizon must be >= 1, "
                             f"got {horizon!r}")
        super().__init__(weights, "greedy", horizon)
        self.own_weights = weights is not None
        self.value = value
        self._nets: dict = {}
        self._net = None
        if value is not None:
            self._nets[None] = load_value(value)         # a clear error now

    def net(self, num_players: int) -> ValueNet:
        """The value network for games of ``num_players``."""
        if self.value is not None:
            net = self._nets[None]
            if net.players != num_players:
                raise ValueError(f"{self.value} values {net.players}-player games, not "
                                 f"{num_players}-player ones")
            return net
        if num_players not in self._nets:
            self._nets[num_players] = load_value(num_players)
        return self._nets[num_players]

    def prepare(self, game) -> None:
        self._net = self.net(game.num_players)
        if not self.own_weights:
            self.weights = self._net.weights

    def playouts(self, s, T, p, actions, seeds, out) -> None:
        value_rollout_margins(s, T, self.weights, p, actions, seeds, self.horizon,
                              self.buffer(s), out, automa_switch(T), *self._net.args())


class NetworkSource:
    """The network a search plays: a checkpoint ``path``, or for ``"pretrained"`` the
    shipped searches' network of each game's player count (:func:`checkpoint.pretrained_path`
    with ``search``: the policy's file unless ``SEARCH_FILES`` names another). ``critic``:
    the whole ``ActorCritic`` (value head included) instead of the actor."""

    def __init__(self, path: str = "pretrained", critic: bool = False):
        self.path = path
        self.critic = critic
        self._pretrained = PretrainedActor(search=True) if is_pretrained(path) else None
        if self._pretrained is None:
            load_network(path, critic=critic)      # a clear error now, not at the first move

    def network(self, num_players: int):
        """``(module, meta)`` for games of ``num_players``."""
        if self._pretrained is not None:
            return self._pretrained.network(num_players, critic=self.critic)
        return load_network(self.path, critic=self.critic)


class PolicyRollouts(RolloutEvaluator):
    """``nmcts``'s evaluator: a trained policy (numba, :mod:`agents.netroll`) ranks the
    actions by its logits, plays the decisions (its most likely action) and the rollouts.

    ``temperature``: 0 plays the most likely action in the rollouts, > 0 samples
    softmax(logits / temperature); ``opponents``: who plays the other seats of the rollouts,
    ``"policy"`` or ``"greedy"`` (the greedy bot, with its default weights: ``nmctsg``'s
    opponent model; in ``evaluate`` the policy plays the seat of the player to move);
    ``weights``: the greedy evaluation's that value the leaves of a horizon."""

    def __init__(self, path: str = "pretrained", temperature: float = 0.0,
                 opponents: str = "policy", weights=None, horizon: int = 0):
        if not temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if opponents not in OPPONENT_MODELS:
            raise ValueError(f"opponents must be one of {OPPONENT_MODELS}, got {opponents!r}")
        super().__init__(weights, horizon)
        self.opponents = opponents
        self.opponent_weights = greedy_weights(None)
        self.temperature = float(temperature)
        self.source = NetworkSource(path)
        self.path = path
        self._obs = np.zeros(OBS_SIZE, np.float32)
        self._logits = np.empty(N_ACTIONS, np.float32)
        self._net = None

    def network(self, num_players: int):
        """``(module, meta)`` of the policy for games of ``num_players``."""
        return self.source.network(num_players)

    def prepare(self, game) -> None:
        self._net = policy_weights(*self.network(game.num_players)).args()

    def action(self, s, T) -> int:
        return int(policy_action(s, T, *self._net, 0.0, self.mask, self._obs, self._logits))

    def prior(self, s, T):
        legal_mask(s, T, self.mask)
        legal = np.flatnonzero(self.mask)
        if len(legal) == 1:
            return legal, np.zeros(1, np.float32)
        policy_logits(s, T, *self._net, self.mask, self._obs, self._logits)
        return legal, self._logits[legal]

    def finish(self, s, T) -> bool:
        me = int(s[S_PLAYER]) if self.opponents == "greedy" else -1
        steps = mixed_rollout(s, T, *self._net, self.temperature, me, self.opponent_weights,
                              MAX_STEPS, automa_switch(T))
        return steps >= 0 and game_over(s)

    def playouts(self, s, T, p, actions, seeds, out) -> None:
        policy_rollout_margins(s, T, *self._net, self.temperature, self.opponents == "greedy",
                               self.opponent_weights, self.weights, p, actions, seeds,
                               self.horizon, self.buffer(s), out, automa_switch(T))


def terminal_mode(meta: dict, num_players: int) -> tuple[int, float]:
    """(reward mode, scale) in which finished games are valued, so that terminal values and
    the value head share their units: the checkpoint's training reward
    (``meta['train']['reward']``, default ``score_diff``, times ``reward_scale``, default 1).
    In the solo game a checkpoint trained with ``vp`` keeps it; any other (a multi-player
    policy playing solo) values the final VP / 100, the ``score_diff`` scale."""
    train = meta.get("train") or {}
    mode = train.get("reward", "score_diff")
    if mode not in REWARD_MODES:
        raise ValueError(f"puct needs a checkpoint trained with a terminal reward "
                         f"({', '.join(REWARD_MODES)}); this one was trained with {mode!r}")
    scale = float(train.get("reward_scale", 1.0))
    if num_players == 1 and mode != "vp":
        mode, scale = "vp", 1.0 / SCORE_DIFF_SCALE
    return reward_mode(mode), scale


def shaping_weight(meta: dict) -> float:
    """The checkpoint's ``--shaping`` weight W (0 without shaping): its value head then
    estimates the return minus W times the projected VP lead."""
    return float((meta.get("train") or {}).get("shaping", 0.0) or 0.0)


class NetworkValues(Evaluator):
    """``puct``'s evaluator: a policy/value network (``path``: a checkpoint with a value
    head, or ``"pretrained"``) in NumPy (:class:`network.NetArrays`).

    Values are in the units of the checkpoint's training reward (:func:`terminal_mode`):
    the value head's ``v`` for the player ``p`` to move and ``-v/(n-1)`` for each of the
    ``n-1`` others (zero-sum), plus ``W`` times each player's projected VP lead for a
    network trained with shaping ``W`` (:func:`shaping_weight`); ``rollout_mix`` > 0 mixes
    in the terminal rewards of a greedy rollout from the position,
    ``(1 - mix) * values + mix * rollout`` (AlphaGo's leaf). A finished game is valued by
    its terminal rewards (:meth:`terminal`). The prior is the policy head's softmax over the
    legal actions; a tree keeps the hidden layer of :meth:`expand` and asks
    :meth:`logits` for the actions it meets.
    """

    def __init__(self, path: str = "pretrained", rollout_mix: float = 0.0):
        if not 0 <= rollout_mix <= 1:
            raise ValueError(f"rollout_mix must be in [0, 1], got {rollout_mix}")
        self.rollout_mix = float(rollout_mix)
        self.source = NetworkSource(path, critic=True)
        self.path = path
        self.rollouts = GreedyRollouts(DEFAULT_WEIGHTS)
        self._obs = np.zeros(OBS_SIZE, np.float32)
        self._rewards = np.zeros(MAX_PLAYERS)
        self._phi_buf = None
        self._ro_buf = None

    def network(self, num_players: int):
        """``(ActorCritic, meta)`` for games of ``num_players``."""
        return self.source.network(num_players)

    def prepare(self, game) -> None:
        s = game.state
        num_players = int(s[S_NP])
        module, meta = self.network(game.num_players)
        self.net = search_net(module, meta)
        self.num_players = num_players
        self.mode, self.scale = terminal_mode(meta, num_players)
        self.shaping = shaping_weight(meta) * self.scale if num_players > 1 else 0.0
        if self._phi_buf is None or self._phi_buf.shape != s.shape:
            self._phi_buf = np.empty_like(s)
            self._ro_buf = np.empty_like(s)

    def terminal(self, s, T) -> np.ndarray:
        """Every player's terminal reward of the finished game ``s``, in the value units."""
        terminal_rewards(s, T, self.mode, self._rewards)
        return self._rewards[:self.num_players] * self.scale

    def expand(self, s, T) -> tuple[np.ndarray, np.ndarray]:
        """(values per player, the policy head's hidden layer) of the unfinished ``s``."""
        num_players = self.num_players
        p = int(s[S_PLAYER])
        encode_obs(s, T, p, self._obs)
        hidden, v = self.net.evaluate(self._obs)
        if num_players == 1:
            values = np.array([v])
        else:
            values = np.full(num_players, -v / (num_players - 1))
            values[p] = v
            if self.shaping:            # the head learned return - W * phi: add it back
                projected_score_diff(s, T, self._phi_buf, self._rewards)
                values += self.shaping * self._rewards[:num_players]
        if self.rollout_mix > 0:        # AlphaGo's leaf: (1 - mix) * value + mix * rollout
            self._ro_buf[:] = s
            if self.rollouts.finish(self._ro_buf, T):
                terminal_rewards(self._ro_buf, T, self.mode, self._rewards)
                values = ((1.0 - self.rollout_mix) * values
                          + self.rollout_mix * self.scale * self._rewards[:num_players])
        return values, hidden

    def logits(self, hidden: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """The policy head's logits of ``actions`` from a hidden layer of :meth:`expand`."""
        return self.net.logits(hidden, actions)

    def evaluate(self, s, T) -> np.ndarray:
        if game_over(s):
            return self.terminal(s, T)
        return self.expand(s, T)[0]

    def prior(self, s, T):
        mask = np.zeros(N_ACTIONS, np.int8)
        legal_mask(s, T, mask)
        legal = np.flatnonzero(mask)
        encode_obs(s, T, int(s[S_PLAYER]), self._obs)
        hidden = self.net.evaluate(self._obs)[0]
        return legal, softmax(self.logits(hidden, legal))


__all__ = ["Evaluator", "GreedyRollouts", "NetworkSource", "NetworkValues", "PolicyRollouts",
           "RolloutEvaluator", "search_net", "shaping_weight", "softmax",
           "terminal_mode"]
