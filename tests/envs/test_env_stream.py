"""Speed-work guard for the envs: a sha256 of everything the vector env and the PettingZoo
AEC env return over fixed-seed runs (observations, masks, rewards, dones, infos, scores,
move counts), recorded before their speed-ups (issue #37). Any change to what a learner
sees changes a hash. The games use ``RULES_2026_11`` (the ruleset ``estimates-2026-11`` and
the readings the shipped policies were trained on), so a change of the default rules leaves
them be.

``python tests/envs/test_env_stream.py`` prints the hashes of the tree it runs in (paste
them below only for a change meant to alter what the envs return).
"""
import hashlib
import json

import numpy as np
import pytest

import caledonia_env
from caledonia_env.config import RULES_2026_11
from caledonia_env.envs.vector import CaledoniaVectorEnv


#: name -> (vector env options, steps)
VECTOR_CASES = {
    "2p parallel": (dict(num_envs=24, num_players=2, seed=7, parallel=True), 160),
    "4p serial rank": (dict(num_envs=6, num_players=4, seed=8, parallel=False,
                            reward="rank", reward_scale=0.5), 200),
    "mixed counts penalize": (dict(num_envs=8, num_players=(2, 3, 4), seed=9,
                                   illegal_action="penalize", copy=True), 150),
    "automa": (dict(num_envs=4, num_players=2, opponents="automa:2", seed=10), 150),
    "python opponent": (dict(num_envs=3, num_players=3, opponents=lambda g: g.legal_actions()[0],
                             seed=11, reward="score_diff"), 60),
}
#: name -> (AEC env options, games)
AEC_CASES = {
    "4p": (dict(num_players=4), 2),
    "3p automa seat": (dict(num_players=3, automa={1: 2}, reward="rank"), 2),
}

STREAM_SHA256 = {
    "vector 2p parallel":
        "7779b3ced270e943b071752d0f7174baf7b132211126fdd53df351fd0686a120",
    "vector 4p serial rank":
        "5614087ba9a5e08d43e2da8ea27801a7748ad6e41b21287fb511b38ec5fd1e6a",
    "vector mixed counts penalize":
        "1a4ebc996c3ff65bae9b623334f52d1a3767822b37e3fca353dda30bb5b943bf",
    "vector automa":
        "21207c8519c176db4f94d2adf35452b25d9b5647c11820337f9f0c230aeddd2e",
    "vector python opponent":
        "7766244806b63f26bb747f78a0be330d34aea4291518064d1f479abb2d02e059",
    # recorded again when the final info's winners became an int8 mask per player (one
    # shape in every game); with the old list of indices these streams hash as before
    "aec 4p":
        "2332901d65f12b7fed41595937f3aa0a9373037c8e7a512510c34553826978d9",
    "aec 3p automa seat":
        "058126fa4df4a5982b287871447ded841561bb4a52bebc018a334e827f2b5e23",
}


def _feed(h, *arrays):
    for a in arrays:
        a = np.asarray(a)
        h.update(str(a.dtype).encode())
        h.update(np.ascontiguousarray(a).tobytes())


def vector_stream(options, steps) -> str:
    env = CaledoniaVectorEnv(**RULES_2026_11, **options)
    h = hashlib.sha256()
    _feed(h, env.reset(), env.action_masks())
    rng = np.random.default_rng(1)
    penalize = env.penalize
    for t in range(steps):
        actions = env.sample_actions()
        if penalize and t % 37 == 5:          # one illegal action now and then
            actions[t % env.num_envs] = -1
        obs, rewards, dones, infos = env.step(actions)
        _feed(h, obs, rewards, dones, env.action_masks(), env.seats, env.moves)
        for i, info in enumerate(infos):
            # every info carries the step's "action_mask" (fed above as env.action_masks());
            # the stream pins the end-of-game infos and their other keys
            if "terminal_observation" in info:
                h.update(json.dumps([i, sorted(k for k in info
                                               if k not in ("terminal_observation", "action_mask")),
                                     info["scores"], info["TimeLimit.truncated"]]).encode())
                _feed(h, info["terminal_observation"])
        if rng.random() < 0.05:               # the state accessors on a random step
            _feed(h, env.observations, env.rewards, env.dones)
    return h.hexdigest()


def aec_stream(options, games) -> str:
    env = caledonia_env.env(**RULES_2026_11, **options)
    rng = np.random.default_rng(2)
    h = hashlib.sha256()
    for g in range(games):
        env.reset(seed=100 + g)
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            _feed(h, obs["observation"], obs["action_mask"], info["action_mask"])
            rest = {k: v for k, v in info.items() if k != "action_mask"}
            h.update(json.dumps([agent, reward, term, trunc, rest], sort_keys=True,
                                default=str).encode())
            if term or trunc:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
            env.step(action)
        h.update(json.dumps([env.rewards, env._cumulative_rewards]).encode())
    return h.hexdigest()


def all_hashes() -> dict:
    out = {f"vector {k}": vector_stream(*v) for k, v in VECTOR_CASES.items()}
    out.update({f"aec {k}": aec_stream(*v) for k, v in AEC_CASES.items()})
    return out


@pytest.mark.parametrize("name", list(VECTOR_CASES))
def test_vector_env_stream_is_unchanged(name):
    assert vector_stream(*VECTOR_CASES[name]) == STREAM_SHA256[f"vector {name}"]


@pytest.mark.parametrize("name", list(AEC_CASES))
def test_aec_env_stream_is_unchanged(name):
    assert aec_stream(*AEC_CASES[name]) == STREAM_SHA256[f"aec {name}"]


if __name__ == "__main__":
    for k, v in all_hashes().items():
        print(f"    {k!r}: {v!r},")
