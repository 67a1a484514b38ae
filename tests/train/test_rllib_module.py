"""train/rllib_module.py: RLlib's masking RLModule on PettingZoo's observation keys.

Skipped where ``ray[rllib]`` does not import (run it in the RLlib venv of
docs/libraries.md: ``.venvs/rllib/bin/python -m pytest tests/train/test_rllib_module.py``).
"""
import numpy as np
import pytest

import caledonia_env

pytest.importorskip("ray.rllib", reason="ray[rllib] does not import here (docs/libraries.md)")
torch = pytest.importorskip("torch")
from ray.rllib.core.columns import Columns  # noqa: E402

from caledonia_env.train.rllib_module import (  # noqa: E402
    MaskedTorchRLModule,
    masked_module_spec,
    module_policy,
)


def build(hidden=(32,)):
    env = caledonia_env.env(num_players=2)
    spec = masked_module_spec(hidden)
    spec.observation_space = env.observation_space("player_0")
    spec.action_space = env.action_space("player_0")
    return env, spec.build()


def batch_of(env, n=3):
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    obs, masks = [], []
    for _ in range(n):
        o = env.observe(env.agent_selection)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return np.stack(obs), np.stack(masks)


def test_illegal_logits_are_the_float_minimum_and_values_have_batch_shape():
    env, module = build()
    assert isinstance(module, MaskedTorchRLModule)
    obs, masks = batch_of(env)
    batch = {Columns.OBS: {"observation": torch.as_tensor(obs), "action_mask": torch.as_tensor(masks)}}
    out = module.forward_exploration(batch)
    logits = out[Columns.ACTION_DIST_INPUTS].detach().numpy()
    assert (logits[masks == 0] == np.finfo(np.float32).min).all()
    assert np.isfinite(logits[masks == 1]).all()
    values = module.compute_values(batch)
    assert tuple(values.shape) == (len(obs),)
    np.testing.assert_allclose(values.detach().numpy(),
                               module.compute_values(batch, out[Columns.EMBEDDINGS]).detach().numpy())
    actions = module_policy(module)(obs, masks)
    assert all(masks[i, a] == 1 for i, a in enumerate(actions))


def test_the_module_names_a_space_without_the_pettingzoo_keys():
    from gymnasium import spaces
    spec = masked_module_spec((8,))
    spec.observation_space = spaces.Dict({"observations": spaces.Box(0, 1, (4,))})
    spec.action_space = spaces.Discrete(3)
    with pytest.raises(ValueError, match="'observation' and 'action_mask'"):
        spec.build()
