"""The built-in agent kinds, in one table: name, factory, help, parameter syntax, example.

``agents`` installs :data:`BUILTIN` into the registry (:mod:`agents.registry`) on import;
``register`` adds further kinds the same way. A factory is ``factory(param, seed, **kw)``:
``param`` is the text after ``KIND:`` (None without one), ``kw`` go to the agent's
constructor.
"""
from __future__ import annotations

from caledonia_env.agents.automa import make_automa
from caledonia_env.agents.greedy import GreedyAgent
from caledonia_env.agents.mcts import MCTSAgent
from caledonia_env.agents.nmcts import NetMCTSAgent
from caledonia_env.agents.policy import count_and_path
from caledonia_env.agents.ppo import PPOAgent
from caledonia_env.agents.puct import ROLLOUT_MIX, PUCTAgent
from caledonia_env.agents.qpolicy import QPolicyAgent
from caledonia_env.agents.random_agent import RandomAgent
from caledonia_env.agents.search_values import ValueRollouts
from caledonia_env.agents.registry import Kind, register
from caledonia_env.agents.weights import SHIPPED, load_weights, names_weights


def _no_param(cls):
    def factory(param, seed, **kw):
        return cls(seed=seed, **kw)
    return factory


def _suffix(kind: str, text: str, letter: str, key: str, unit: str, least: int
            ) -> tuple[str, dict]:
    """``text`` without a trailing ``<letter>K`` and ``{key: K}`` (``{}`` without one)."""
    head, sep, count = text.rpartition(letter)
    if not sep:
        return text, {}
    if not count.isdigit() or int(count) < least or not head:
        raise ValueError(f"{kind}: the suffix {letter!r} takes a number of {unit} >= {least} "
                         f"after the budget, suffixes in the order N[hH][cK] "
                         f"(e.g. {kind}:64h2c12), got {text!r}")
    return head, {key: int(count)}


def split_suffixes(kind: str, text: str) -> tuple[str, dict]:
    """A flat search's budget and the options its suffixes name, in this order:
    ``hH``, rollouts of H rounds (H >= 1), then ``cK``, K candidates (K >= 2; default 6):
    ``"64h2c12"`` -> (``"64"``, ``{"horizon": 2, "candidates": 12}``). Text that does not
    start like a budget (``runs/x.zip``: a path without its count) is left to the kind's own
    message."""
    if not text[:1].isdigit() and not text.startswith("."):
        return text, {}
    text, candidates = _suffix(kind, text, "c", "candidates", "candidates", 2)
    text, horizon = _suffix(kind, text, "h", "horizon", "rounds", 1)
    return text, {**horizon, **candidates}


def _greedy(param, seed, **kw):
    """``greedy``, or ``greedy:WEIGHTS`` (a shipped set's name or a weights file,
    :func:`agents.weights.load_weights`)."""
    if param is not None:
        kw["weights"] = load_weights(param.strip())
    return GreedyAgent(seed=seed, **kw)


def _mcts(param, seed, **kw):
    """``mcts``, ``mcts:N`` (N rollouts per decision) or ``mcts:Xs`` (X seconds), each
    optionally followed by ``hH`` (rollouts of H rounds) and ``cK`` (K candidates),
    :func:`split_suffixes`, and by ``:WEIGHTS`` (the greedy evaluation's, as ``greedy:``)."""
    if param is not None:
        param, sep, weights = param.partition(":")
        if sep:
            kw["weights"] = load_weights(weights.strip())
        text, options = split_suffixes("mcts", param.strip().lower())
        kw.update(options)
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
                             f"seconds per decision (mcts:0.5s), optionally followed by a "
                             f"horizon hH in rounds (mcts:32h1) and a candidate count cK "
                             f"(mcts:128c24), got {param!r}") from None
    return MCTSAgent(seed=seed, **kw)


def _vmcts(param, seed, **kw):
    """``vmcts:N[hH][cK][:VALUE]``: the flat search with greedy rollouts of H rounds (default
    1) valued by the learned afterstate value (:class:`agents.search_values.ValueRollouts`),
    VALUE a value file (default: the shipped one of the game's player count)."""
    budget, sep, value = (param or "").partition(":")
    budget, options = split_suffixes("vmcts", budget.strip().lower())
    try:
        rollouts = int(budget) if budget else 16
        if rollouts < 1:
            raise ValueError
    except ValueError:
        raise ValueError(f"vmcts parameter must be a rollout count N >= 1 (vmcts:16), "
                         f"optionally followed by a horizon hH in rounds (vmcts:16h2) and a "
                         f"candidate count cK, then :VALUE a value file, got {param!r}") from None
    evaluator = ValueRollouts(kw.pop("weights", None), options.pop("horizon", 1),
                              value.strip() or None)
    return MCTSAgent(seed=seed, rollouts=rollouts, evaluator=evaluator, **options, **kw)


def _qpolicy(param, seed, **kw):
    """``qpolicy`` (the shipped ``pretrained/qpolicy_{N}p.npz`` of the game's player count N)
    or ``qpolicy:FILE``."""
    return QPolicyAgent(param.strip() if param else None, seed=seed, **kw)


def _ppo(param, seed, **kw):
    return PPOAgent(param, seed=seed, **kw)


def split_weights(text: str) -> tuple[str, dict]:
    """The network searches' ``PATH:WEIGHTS``, ``WEIGHTS`` or ``PATH`` -> (``PATH`` or "",
    ``{"weights": ...}`` or ``{}``): the last part is WEIGHTS when it names them
    (:func:`agents.weights.names_weights`)."""
    head, sep, tail = text.rpartition(":")
    if names_weights(tail.strip()):
        return head, {"weights": load_weights(tail.strip())}
    return text, {}


def _nmcts(kind, **fixed):
    def factory(param, seed, **kw):
        budget, sep, rest = (param or "").partition(":")
        rest, weights = split_weights(rest)
        budget, options = split_suffixes(kind, budget.strip().lower())
        rollouts, path = count_and_path(kind, budget + (":" + rest if rest else ""),
                                        "ROLLOUTS")
        return NetMCTSAgent(rollouts, path, seed=seed, **fixed, **options, **weights, **kw)
    return factory


def _puct(kind, **defaults):
    def factory(param, seed, **kw):
        sims, path = count_and_path(kind, param, "SIMS")
        return PUCTAgent(sims, path, seed=seed, **{**defaults, **kw})
    return factory


_WEIGHTS = (f"{' or '.join(SHIPPED)} (the shipped set tuned for the solo game) or PATH of a "
            f".json of 'caledonia tune-weights'")
_NET_PATH = ("optionally :PATH of a checkpoint (default: the shipped searches' network for "
             "the game's player count)")

BUILTIN = (
    Kind("random", _no_param(RandomAgent), "uniformly random legal action.",
         None, False, None),
    Kind("greedy", _greedy,
         "one-step lookahead with a hand-written position evaluation.",
         f"optionally the evaluation's WEIGHTS: {_WEIGHTS}", False, "greedy, greedy:solo"),
    Kind("mcts", _mcts,
         "flat Monte-Carlo search (one level, no tree) over the greedy bot's best candidates "
         "with greedy rollouts (default 64 rollouts per decision).",
         "N rollouts per decision, or Xs seconds per decision; a suffix hH stops each "
         "rollout after H rounds and values it with the greedy evaluation, a suffix cK "
         "searches the K best candidates (default 6); optionally :WEIGHTS, the greedy "
         "evaluation's", False,
         "mcts:200, mcts:0.5s, mcts:32h1, mcts:128c24, mcts:256c36:solo"),
    Kind("vmcts", _vmcts,
         "mcts whose greedy rollouts stop after H rounds (default 1) and are valued by a "
         "learned afterstate value (agents/pretrained/value_Np.npz); the greedy bot plays "
         "with the weights the value was trained with (greedy:Np).",
         "N rollouts per decision (default 16; suffixes hH: rollouts of H rounds, cK: K "
         "candidates), optionally :VALUE, a value file of train/fit_value.py", False,
         "vmcts, vmcts:16, vmcts:32h2, vmcts:16:my_value.npz"),
    Kind("qpolicy", _qpolicy,
         "a learned policy over the tuned greedy evaluation's one-step values (numba, well "
         "under 1 ms a decision): distilled from mcts:16h1:Np by DAgger (caledonia "
         "fit-qpolicy; agents/pretrained/qpolicy_<N>p.md).",
         "optionally FILE, a policy file of 'caledonia fit-qpolicy' (default: "
         "agents/pretrained/qpolicy_<N>p.npz of the game's player count N)", False,
         "qpolicy, qpolicy:my_qpolicy.npz"),
    Kind("automa", make_automa,
         "seat played by the engine as the publisher's Automa (a marker; see docs/automa.md).",
         "difficulty 1-5", True, "automa:5"),
    Kind("ppo", _ppo,
         "a MaskablePPO policy trained by 'caledonia train' (needs the train extra).",
         "PATH of a checkpoint .zip, or 'pretrained' for the shipped policy of the game's "
         "player count", True, "ppo:runs/x/best.zip, ppo:pretrained"),
    Kind("nmcts", _nmcts("nmcts"),
         "mcts (flat, no tree) with a trained policy network: its most likely actions are "
         "the candidates and it plays the rollouts (needs the train extra).",
         f"ROLLOUTS per decision (suffixes hH: rollouts of H rounds, cK: K candidates), "
         f"{_NET_PATH}, then optionally :WEIGHTS, the greedy evaluation's for a horizon's "
         f"leaves (as greedy:)", True,
         "nmcts:32, nmcts:64:runs/x/best.zip"),
    Kind("nmctsg", _nmcts("nmctsg", opponents="greedy"),
         "nmcts whose rollouts play the other seats with the greedy bot (an opponent model; "
         "needs the train extra).",
         "ROLLOUTS per decision (suffixes hH: rollouts of H rounds, cK: K candidates), "
         f"optionally :PATH of a checkpoint, then optionally :WEIGHTS, the greedy "
         f"evaluation's for the horizon's leaves (the opponents keep the default ones): "
         f"{_WEIGHTS}", True,
         "nmctsg:64, nmctsg:64h1, nmctsg:64h2:solo"),
    Kind("puct", _puct("puct"),
         "PUCT tree search (AlphaZero-style) with a trained policy/value network over a "
         "determinized contract pile and dice (needs the train extra).",
         f"SIMS simulations per decision, {_NET_PATH}", True,
         "puct:64, puct:32:runs/x/best.zip"),
    Kind("puctr", _puct("puctr", rollout_mix=ROLLOUT_MIX),
         "puct whose leaves average the value head and a greedy rollout to the end of the "
         "game (AlphaGo's mixed leaf evaluation; needs the train extra).",
         "SIMS simulations per decision (one rollout each), optionally :PATH of a "
         "checkpoint", True, "puctr:32"),
)


def install() -> None:
    """Put every built-in kind into the registry (replacing a kind of the same name that an
    agent module registered on import: this table is the one place they are defined)."""
    for k in BUILTIN:
        register(k.name, k.factory, help=k.help, param=k.param,
                 param_required=k.param_required, example=k.example, replace=True)
