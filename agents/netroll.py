"""A trained policy inside numba: its forward pass and whole games played by it.

:func:`policy_weights` gives the loaded network's one NumPy copy (:class:`network.NetArrays`,
shared with the search agents), whose ``args()`` are the policy path (the shared first layer,
the policy layers and the action head); :func:`policy_action` plays the most likely legal
action of one position (or samples the softmax at a temperature) without leaving numba, and
:func:`policy_rollout_margins` finishes many determinized copies of a position with every
player played by the policy, as :func:`rollouts.rollout_margins` does with the greedy bot.
Each layer reads only the weight rows of its non-zero inputs (about 15% of the observation,
fewer of the hidden units after a ReLU), and logits are computed for the legal actions alone.
Each compiled function links and generates the code of the whole engine below it again
(issue #37), so the policy's rollouts are one compiled function, :func:`policy_call`, behind
the Python functions :func:`mixed_rollout` and :func:`policy_rollout_margins` (as
:func:`rollouts.greedy_call` for the greedy bot's); ``mixed_rollout_to`` and the margins' loop
are inlined into it.
"""
from __future__ import annotations

import numpy as np

from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import S_PLAYER
from caledonia_env.engine.mask import count_legal, legal_mask
from caledonia_env.engine.step import apply_action
from caledonia_env.envs.observation import OBS_SIZE, encode_obs
from caledonia_env.agents.rollouts import (_NO_IDS, _NO_VALUES, NO_HORIZON, greedy_action, reached,
                                           rollout_value, start_rollout)
from caledonia_env.agents.network import NetArrays
from caledonia_env.agents.policy import network_arrays


def policy_weights(module, meta: dict) -> NetArrays:
    """The NumPy copy of a loaded module (:func:`policy.network_arrays`, the one shared with
    the search agents); ``.args()`` gives the arrays the kernels below take."""
    return network_arrays(module, meta)


@njit(cache=True)
def _act(x, relu):
    for i in range(x.shape[0]):
        if relu:
            if x[i] < 0.0:
                x[i] = 0.0
        else:
            x[i] = np.tanh(x[i])


@njit(cache=True)
def policy_hidden(obs, w1t, b1, pwt, pb, relu):
    """The policy head's last hidden layer for one observation. Every layer runs over the
    non-zero inputs only, adding input i times row i of the transposed weights to all the
    outputs at once (a loop the compiler vectorises); each output still sums its terms in
    input order, so the values are the dot-product form's (a skipped term is a zero)."""
    h = b1.copy()
    m = h.shape[0]
    for i in range(obs.shape[0]):
        o = obs[i]
        if o != 0.0:
            for j in range(m):
                h[j] += o * w1t[i, j]
    _act(h, relu)
    for k in range(len(pwt)):
        wt = pwt[k]
        x = pb[k].copy()
        for i in range(wt.shape[0]):
            hi = h[i]
            if hi != 0.0:
                for j in range(wt.shape[1]):
                    x[j] += wt[i, j] * hi
        _act(x, relu)
        h = x
    return h


@njit(cache=True)
def policy_logits(s, T, w1t, b1, pwt, pb, wa, ba, relu, mask, obs, out):
    """The policy's logits of the legal actions in ``mask`` for the player to move (-inf
    elsewhere) into ``out``; each logit sums over the hidden layer's non-zero units only."""
    encode_obs(s, T, s[S_PLAYER], obs)
    h = policy_hidden(obs, w1t, b1, pwt, pb, relu)
    nz = np.empty(h.shape[0], np.int64)
    k = 0
    for i in range(h.shape[0]):
        if h[i] != 0.0:
            nz[k] = i
            k += 1
    for a in range(N_ACTIONS):
        if mask[a]:
            acc = ba[a]
            for t in range(k):
                i = nz[t]
                acc += wa[a, i] * h[i]
            out[a] = acc
        else:
            out[a] = -np.inf


@njit(cache=True)
def policy_action(s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, mask, obs, logits):
    """The policy's action in ``s``: the most likely legal one (``temperature`` 0) or a
    sample of softmax(logits / temperature) with numba's random stream; the only legal
    action without evaluating the network; -1 if none."""
    legal_mask(s, T, mask)
    k, only = count_legal(mask)
    if k <= 1:
        return only
    policy_logits(s, T, w1t, b1, pwt, pb, wa, ba, relu, mask, obs, logits)
    best = -1
    if temperature <= 0.0:
        bv = -np.inf
        for a in range(N_ACTIONS):
            if mask[a] and logits[a] > bv:
                bv = logits[a]
                best = a
        return best
    top = -np.inf
    for a in range(N_ACTIONS):
        if mask[a] and logits[a] > top:
            top = logits[a]
    total = 0.0
    for a in range(N_ACTIONS):
        if mask[a]:
            logits[a] = np.exp((logits[a] - top) / temperature)
            total += logits[a]
    r = np.random.random() * total
    for a in range(N_ACTIONS):
        if mask[a]:
            best = a
            r -= logits[a]
            if r <= 0.0:
                break
    return best


@njit(cache=True, inline="always")
def mixed_rollout_to(s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, me, gw, stop,
                     max_steps, automa):
    """:func:`mixed_rollout` until the game ends or round ``stop`` begins."""
    mask = np.zeros(N_ACTIONS, np.int8)
    obs = np.zeros(OBS_SIZE, np.float32)
    logits = np.empty(N_ACTIONS, np.float32)
    buf = np.empty_like(s)
    steps = 0
    while not reached(s, stop) and steps < max_steps:
        if me < 0 or s[S_PLAYER] == me:
            a = policy_action(s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, mask, obs,
                              logits)
        else:
            a = greedy_action(s, T, gw, mask, buf, automa)
        if a < 0:
            return -1 - steps
        apply_action(s, T, a, automa)
        steps += 1
    return steps


@njit(cache=True, inline="always")
def _policy_rollout_margins(s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, me, gw, lw,
                            p, actions, seeds, horizon, buf, out, automa):
    """:func:`policy_rollout_margins` with the policy in seat ``me`` only (< 0: in every
    seat), as in :func:`mixed_rollout`."""
    for i in range(actions.shape[0]):
        stop = start_rollout(buf, s, T, actions[i], seeds[i], horizon, automa)
        steps = mixed_rollout_to(buf, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, me, gw,
                                 stop, 100000, automa)
        out[i] = rollout_value(buf, T, p, lw, steps, stop)


OP_FINISH, OP_MARGINS = range(2)        # what policy_call does


@njit(cache=True, nogil=True)
def policy_call(op, s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, me, gw, lw, p, actions,
                seeds, horizon, max_steps, buf, out, automa):
    """The network searches' rollouts, by ``op``: ``OP_FINISH``: :func:`mixed_rollout`
    (``me``, ``gw``, ``max_steps``), returning its steps; ``OP_MARGINS``:
    :func:`policy_rollout_margins` (the policy in seat ``me`` only, or in every seat when
    ``me`` < 0). Each reads the arguments its Python function names; returns 0 but for
    ``OP_FINISH``."""
    if op == OP_FINISH:
        return mixed_rollout_to(s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, me, gw,
                                NO_HORIZON, max_steps, automa)
    if op == OP_MARGINS:
        _policy_rollout_margins(s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, me, gw, lw,
                                p, actions, seeds, horizon, buf, out, automa)
    return 0


def mixed_rollout(s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, me, gw, max_steps,
                  automa) -> int:
    """Play until the game ends with the policy in seat ``me`` and the greedy bot (weights
    ``gw``, :func:`rollouts.greedy_action`) in the other seats; ``me`` < 0: the policy in
    every seat. Returns the steps taken (negative if a position had no legal action)."""
    return int(policy_call(OP_FINISH, s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, me,
                           gw, gw, 0, _NO_IDS, _NO_IDS, 0, max_steps, s[:0], _NO_VALUES, automa))


def policy_rollout_margins(s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature, greedy_others,
                           gw, lw, p, actions, seeds, horizon, buf, out, automa) -> None:
    """For each i: determinize the hidden information with seeds[i], apply actions[i],
    play with the policy in every seat (or only in p's, the greedy bot with weights ``gw``
    in the others, when ``greedy_others``) to the end of the game or of ``horizon`` rounds
    (0: no horizon, :mod:`agents.rollouts`), and store p's margin there
    (:func:`rollouts.leaf_margin`: own VP minus the best opponent's, estimated by the greedy
    evaluation with weights ``lw`` before the end) in out[i]."""
    policy_call(OP_MARGINS, s, T, w1t, b1, pwt, pb, wa, ba, relu, temperature,
                p if greedy_others else -1, gw, lw, p, actions, seeds, horizon, 0, buf, out,
                automa)
