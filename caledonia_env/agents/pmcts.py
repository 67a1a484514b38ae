"""``pmcts:ROLLOUTS[:PATH]``: the ``mcts`` search with its candidates chosen by a trained network.

``mcts`` searches the greedy bot's best one-step candidates by successive halving over
greedy rollouts (:mod:`agents.mcts`). ``pmcts`` keeps that search and its rollouts and
changes who proposes: the candidates are the actions with the highest prior of the
policy network (the shipped policy of the game's player count, or ``PATH``), and the
decisions ``mcts`` does not search (purchases, processing, port picks...) are played by
the network's most likely action instead of the greedy bot. The network sees only the
player's observation; the rollouts run on determinized copies (:mod:`agents.mcts`), so
neither reads the true pile or the future dice.
"""
from __future__ import annotations

import numpy as np

from ..engine.actions import A_PASS
from ..engine.layout import S_PLAYER
from ..env.observation import OBS_SIZE, encode_obs
from .evaluation import action_values, greedy_action, seed_numba
from .mcts import MCTSAgent
from .policy import PretrainedActor, is_pretrained, load_network
from .ppo import need_torch
from .puct import search_net
from .registry import kinds, register


class PolicyMCTSAgent(MCTSAgent):
    """``mcts`` whose candidates are the policy network's most likely actions.

    ``rollouts``, ``seconds``: as ``mcts``; ``path``: a checkpoint or ``"pretrained"``;
    ``candidates``: how many of the network's best actions are searched; ``greedy_too``:
    how many of the greedy ranking's best actions are added to them (0: none);
    ``fallback``: who plays the decisions that are not searched, ``"policy"`` or
    ``"greedy"``.
    """

    name = "pmcts"

    def __init__(self, rollouts: int = 32, path: str = "pretrained", seed: int = 0,
                 name: str | None = None, candidates: int = 6, greedy_too: int = 0,
                 fallback: str = "policy", **kw):
        if fallback not in ("policy", "greedy"):
            raise ValueError(f"fallback must be 'policy' or 'greedy', got {fallback!r}")
        if greedy_too < 0:
            raise ValueError(f"greedy_too must be >= 0, got {greedy_too}")
        need_torch("pmcts")
        super().__init__(seed=seed, name=name, rollouts=rollouts, candidates=candidates, **kw)
        self.path = path
        self.greedy_too = int(greedy_too)
        self.fallback = fallback
        self._pretrained = PretrainedActor() if is_pretrained(path) else None
        if self._pretrained is None:
            load_network(path)                      # clear error now, not at the first move
        self._obs = np.zeros(OBS_SIZE, np.float32)

    def _logits(self, game, legal: np.ndarray) -> np.ndarray:
        if self._pretrained is not None:
            module, meta = self._pretrained.network(game.num_players, critic=True)
        else:
            module, meta = load_network(self.path, critic=True)
        net = search_net(module, meta)
        encode_obs(game.state, game.tables, int(game.state[S_PLAYER]), self._obs)
        hidden, _ = net.evaluate(self._obs)
        return net.logits(hidden, legal)

    def act(self, game) -> int:
        if game.is_terminal:
            raise ValueError(f"no legal action: the game is over ({game!r})")
        s, T = game.state, game.tables
        if self._buf is None or self._buf.shape != s.shape:
            self._buf = np.empty_like(s)
        legal = game.legal_actions()
        if len(legal) == 1:
            return int(legal[0])
        seed_numba(self._numba_seed())
        searched = game.context in self.contexts
        if not searched and self.fallback == "greedy":
            return int(greedy_action(s, T, self.weights, self._mask, self._buf))
        logits = self._logits(game, legal)
        if not searched:
            return int(legal[np.argmax(logits)])
        order = legal[np.argsort(-logits, kind="stable")]
        cands = list(order[:self.candidates])
        if self.greedy_too:
            action_values(s, T, self.weights, self._mask, self._buf, self._values)
            ranked = legal[np.argsort(-self._values[legal], kind="stable")]
            cands += [a for a in ranked[:self.greedy_too] if a not in cands]
        if A_PASS in legal and A_PASS not in cands:
            cands.append(A_PASS)
        if len(cands) == 1:
            return int(cands[0])
        return self._halving(game, np.array(cands, np.int64))


def _factory(param, seed, **kw):
    rollouts, _, path = (param or "").partition(":")
    try:
        n = int(rollouts)
        if n < 1:
            raise ValueError
    except ValueError:
        raise ValueError(f"pmcts parameter must be ROLLOUTS (>= 1) or ROLLOUTS:PATH, e.g. "
                         f"pmcts:32 or pmcts:32:runs/x/best.zip; got {param!r}") from None
    return PolicyMCTSAgent(n, path or "pretrained", seed=seed, **kw)


if "pmcts" not in {k.name for k in kinds()}:
    register("pmcts", _factory,
             help="mcts (greedy rollouts, successive halving) over the candidates a trained "
                  "policy network ranks best (needs the train extra).",
             param="ROLLOUTS per decision, optionally :PATH of a checkpoint (default: the "
                   "shipped policy for the game's player count)",
             param_required=True, example="pmcts:32, pmcts:32:runs/x/best.zip")
