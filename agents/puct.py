"""``puct:SIMS[:PATH]``: AlphaZero-style tree search (PUCT) guided by a trained network.

The policy head gives the prior of each legal action (a softmax over the legal logits),
the value head evaluates the leaves, both through the evaluator
:class:`agents.search_values.NetworkValues`; ``PATH`` is a checkpoint with a value head
(``caledonia train`` saves the whole policy), by default the shipped searches' network
for the game's player count (:func:`checkpoint.pretrained_path` with ``search``).

Hidden information is handled by determinization, re-drawn for every simulation: the
simulation starts from a copy of the position in which
:func:`agents.rollouts.determinize` has replaced the contract pile's order, the
Automa's action piles and the state's random stream (solo dice, Automa draws) by a
sample drawn from the simulation's seed and the public pile contents only, so the
search never reads the true pile or the future dice. The tree is keyed by action
sequences (one tree for all determinizations): chance is resolved inside the engine's
``apply_action`` by the determinized stream, and at each node the actions of *this*
simulation's state compete (an action legal in one determinization and not in another
is simply not selectable there). The other players' decisions are nodes of the same
tree, searched with the same network from their own seat.

A decision with a single legal action is never searched: the root returns it at once,
and inside the tree forced moves are applied on the way (:meth:`PUCTAgent._advance`).

Values: the value head estimates the return of the player whose observation it sees, in
the training reward's units (``score_diff``: (own VP - mean VP of the others) / 100, which
sums to zero over the players). A leaf evaluated for player ``p`` backs up ``v`` for ``p``
and ``-v/(n-1)`` for each of the ``n-1`` others (a zero-sum approximation: exact for two
players; for more, each other player gets the others' mean, exact on average for
``score_diff``); a finished game backs up every player's true terminal reward in the same
units (:func:`agents.search_values.terminal_mode`). A network trained with reward shaping
(``caledonia train --shaping W``) learned the return *minus* ``W`` times the potential,
the player's projected VP lead (``env.rewards.projected_score_diff``): the leaf adds it
back, ``v + W * phi[p]`` for the player to move and ``W * phi[q] - v/(n-1)`` for the
others. Each node keeps the value sums of all players, and a node chooses with the values
of the player to move there (max-n). Q values are normalized to [0, 1] by the smallest and
largest value backed up in this search (MuZero's min-max normalization), so ``c_puct``
does not depend on the reward's scale; an unvisited action gets its parent's mean value
(first-play urgency).

``puctr:SIMS[:PATH]`` (``rollout_mix`` > 0) mixes each leaf's values with the terminal
rewards of a greedy rollout from the determinized leaf, AlphaGo's
``(1 - mix) * value + mix * rollout`` (:class:`agents.search_values.GreedyRollouts`).

Selection: ``argmax Q(a) + c_puct * P(a) * sqrt(N) / (1 + N(a))``. Play: the most
visited root action (``temperature=0``, ties to the higher prior) or a sample
proportional to ``N(a)^(1/temperature)``. Dirichlet noise on the root prior is off by
default (``noise_frac=0``).
"""
from __future__ import annotations

import math
import time

import numpy as np

from caledonia_env.engine.actions import MASK_WIDTH, N_ACTIONS
from caledonia_env.engine.api import APPLIED, LEGAL_IDS, LEGAL_MASK, game_call
from caledonia_env.engine.layout import AM_LOG_SIZE, S_PLAYER, STATE_SIZE, game_over
from caledonia_env.agents.base import Agent
from caledonia_env.agents.rollouts import determinize
from caledonia_env.agents.search_values import NetworkValues, softmax
from caledonia_env.agents.ppo import need_torch


class _Node:
    """Statistics of one decision (reached by an action sequence from the root)."""

    __slots__ = ("hidden", "logits", "visits", "wsum", "children", "n", "vsum")

    def __init__(self, num_players: int):
        self.hidden = None                  # the policy head's hidden layer once evaluated
        self.logits = None                  # float64[N_ACTIONS], NaN where not computed
        self.visits = None                  # float64[N_ACTIONS]: N(a)
        self.wsum = None                    # float64[N_ACTIONS, num_players]: value sums
        self.children: dict = {}
        self.n = 0                          # simulations through this node
        self.vsum = np.zeros(num_players)     # their value sums (first-play urgency)


ROLLOUT_MIX = 0.5          # puctr's leaf weight of the rollout (AlphaGo's lambda)


class PUCTAgent(Agent):
    """PUCT search with a policy/value network over determinized hidden information.

    ``sims``: simulations per searched decision (each evaluates one new position with the
    network, or reaches the end of the game); ``path``: a checkpoint with a value head, or
    ``"pretrained"`` (the shipped searches' network for the game's player count);
    ``c_puct``: the exploration constant; ``temperature``: 0 plays the most visited action,
    > 0 samples ``N^(1/temperature)``; ``noise_frac`` / ``dirichlet_alpha``: Dirichlet noise
    mixed into the root prior (off by default, for self-play data).
    """

    name = "puct"

    def __init__(self, sims: int = 64, path: str = "pretrained", seed: int = 0,
                 name: str | None = None, c_puct: float = 1.5, temperature: float = 0.0,
                 noise_frac: float = 0.0, dirichlet_alpha: float = 0.3,
                 rollout_mix: float = 0.0):
        if int(sims) < 1:
            raise ValueError(f"sims must be >= 1, got {sims}")
        if not c_puct > 0:
            raise ValueError(f"c_puct must be > 0, got {c_puct}")
        if not temperature >= 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        if not 0 <= noise_frac <= 1 or not dirichlet_alpha > 0:
            raise ValueError(f"noise_frac must be in [0, 1] and dirichlet_alpha > 0, got "
                             f"{noise_frac}, {dirichlet_alpha}")
        need_torch("puct")
        self.sims = int(sims)
        self.c_puct = float(c_puct)
        self.temperature = float(temperature)
        self.noise_frac = float(noise_frac)
        self.dirichlet_alpha = float(dirichlet_alpha)
        self.evaluator = NetworkValues(path, rollout_mix)
        self._mask = np.zeros(MASK_WIDTH, np.int8)     # engine.api.game_call's scratch
        self._seen = np.zeros(STATE_SIZE + 1, np.int32)
        self._ids = np.empty(N_ACTIONS, np.int64)
        self._log = np.zeros(AM_LOG_SIZE, np.int32)
        self._buf = None
        self.last_stats: dict = {}
        super().__init__(seed, name)

    @property
    def path(self) -> str:
        return self.evaluator.path

    @property
    def rollout_mix(self) -> float:
        return self.evaluator.rollout_mix

    def network(self, num_players: int):
        """``(ActorCritic, meta)`` this agent plays games of ``num_players`` with."""
        return self.evaluator.network(num_players)

    # ------------------------------------------------------------------ search
    def act(self, game) -> int:
        if game.is_terminal:
            raise ValueError(f"no legal action: the game is over ({game!r})")
        legal = game.legal_actions()
        if len(legal) == 1:
            self.last_stats = {"sims": 0, "legal": 1}
            return int(legal[0])
        t0 = time.perf_counter()
        s, T = game.state, game.tables
        self._automa = game.static.automa_switch
        self._seen[-1] = 0                  # the last mask may belong to other tables
        self.evaluator.prepare(game)
        num_players = self.evaluator.num_players
        if self._buf is None or self._buf.shape != s.shape:
            self._buf = np.empty_like(s)
        base = self._numba_seed()
        self._lo, self._hi = math.inf, -math.inf
        root = _Node(num_players)
        root_noise = None
        if self.noise_frac > 0:
            root_noise = np.zeros(N_ACTIONS)
            root_noise[legal] = self.rng.dirichlet(np.full(len(legal), self.dirichlet_alpha))
        for i in range(self.sims + 1):          # the first one evaluates the root
            self._simulate(root, s, T, (base + i) % (2**31 - 1), num_players, root_noise)
        visits = root.visits[legal]
        prior = self._prior(root, legal)
        if self.temperature == 0:
            a = int(legal[np.argmax(visits + 0.5 * prior)])     # ties: the higher prior
        else:
            w = visits ** (1.0 / self.temperature)
            a = int(self.rng.choice(legal, p=w / w.sum()))
        q = root.wsum[a, int(s[S_PLAYER])] / max(root.visits[a], 1.0)
        self.last_stats = {"sims": self.sims, "legal": len(legal), "nodes": self._nodes,
                           "visits": {int(b): int(v) for b, v in zip(legal, visits) if v},
                           "value": float(q), "seconds": time.perf_counter() - t0}
        return a

    def _simulate(self, root, s, T, seed, num_players, root_noise):
        buf, mask = self._buf, self._mask[:N_ACTIONS]
        buf[:] = s
        determinize(buf, T, seed)
        self._engine(buf, T, LEGAL_MASK)
        node = root
        path = []
        while True:
            if game_over(buf):
                values = self.evaluator.terminal(buf, T)
                break
            p = int(buf[S_PLAYER])
            if node.hidden is None:
                values = self._expand(node, buf, T, num_players)
                if node is root:
                    self._nodes = 1
                break
            a = self._select(node, mask, p, root_noise if node is root else None)
            path.append((node, a))
            child = node.children.get(a)
            if child is None:
                child = node.children[a] = _Node(num_players)
                self._nodes += 1
            self._advance(buf, T, a)
            node = child
        self._lo = min(self._lo, float(values.min()))
        self._hi = max(self._hi, float(values.max()))
        for parent, a in path:
            parent.visits[a] += 1.0
            parent.wsum[a] += values
            parent.n += 1
            parent.vsum += values
        node.n += 1
        node.vsum += values

    def _engine(self, buf, T, a):
        """:func:`engine.api.game_call` on ``buf`` with this agent's scratch (the mask of
        the state reached stays in ``self._mask``)."""
        return game_call(buf, T, self._mask, self._seen, self._ids, self._log, a,
                         self._automa)

    def _advance(self, buf, T, a):
        """Apply ``a``, then every forced move (a decision with one legal action) until a
        real choice or the end; the mask of a state reached before the end is left in
        ``self._mask``. The code every ``Game`` runs, one engine call per move: no compiled
        function of its own (each links and compiles the whole engine again, issue #37)."""
        while True:
            if self._engine(buf, T, a) != APPLIED:
                raise RuntimeError(f"puct: action {a} is not legal in the simulated position")
            if game_over(buf) or self._engine(buf, T, LEGAL_IDS) != 1:
                return
            a = int(self._ids[0])

    def _expand(self, node, buf, T, num_players):
        """Evaluate the position (:meth:`NetworkValues.expand`): the node keeps the policy
        head's hidden layer for its prior; returns the leaf values."""
        values, node.hidden = self.evaluator.expand(buf, T)
        node.logits = np.full(N_ACTIONS, np.nan)
        node.visits = np.zeros(N_ACTIONS)
        node.wsum = np.zeros((N_ACTIONS, num_players))
        return values

    def _prior(self, node, legal):
        """The policy head's distribution over ``legal`` (softmax of the legal logits)."""
        lg = node.logits[legal]
        if np.isnan(lg).any():              # actions not asked for at this node before
            node.logits[legal] = lg = self.evaluator.logits(node.hidden, legal)
        return softmax(lg)

    def _select(self, node, mask, p, noise):
        legal = np.flatnonzero(mask)
        pr = self._prior(node, legal)
        if noise is not None:
            pr = (1.0 - self.noise_frac) * pr + self.noise_frac * noise[legal]
        visits = node.visits[legal]
        fpu = node.vsum[p] / node.n
        q = np.where(visits > 0, node.wsum[legal, p] / np.maximum(visits, 1.0), fpu)
        span = self._hi - self._lo
        q = (q - self._lo) / span if span > 0 else np.zeros_like(q)
        u = self.c_puct * pr * math.sqrt(node.n) / (1.0 + visits)
        return int(legal[np.argmax(q + u)])

