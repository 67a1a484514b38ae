"""RL environments over the engine: PettingZoo AEC and Parallel, Gymnasium single-agent and
solo, numba vector env.

Every env encodes observations with the one numba function
:func:`caledonia_env.envs.observation.encode_obs` (layout in ``docs/observation.md``)
and uses the engine's exact legal mask. Each env module's docstring is its card; usage in
``docs/envs.md``. ``caledonia_env.env(**options)`` (the package root) is the wrapped
PettingZoo AEC env, :func:`caledonia_env.envs.aec.env` (``obs_type="flat"``:
:mod:`.flat`); ``caledonia_env.parallel_env(**options)`` the Parallel view (:mod:`.parallel`).
"""
from caledonia_env.envs.aec import env, raw_env
from caledonia_env.envs.flat import OBS_TYPES, flat_env
from caledonia_env.envs.gym_env import CaledoniaEnv
from caledonia_env.envs.observation import LAYOUT, MAP_CHANNELS, OBS_HIGH, OBS_SIZE, encode_obs
from caledonia_env.envs.observation_text import decode_observation, describe_observation
from caledonia_env.envs.parallel import WAIT, CaledoniaParallelEnv, parallel_env
from caledonia_env.envs.opponents import RandomOpponent, make_opponent
from caledonia_env.envs.rewards import REWARD_MODES, terminal_rewards
from caledonia_env.envs.solo import CaledoniaSoloEnv
from caledonia_env.envs.vector import CaledoniaVectorEnv, make_sb3_vec_env

GYM_ID = "Caledonia-v0"     # registered by ``import caledonia_env``


__all__ = ["env", "raw_env", "flat_env", "OBS_TYPES", "parallel_env", "CaledoniaParallelEnv", "WAIT",
           "CaledoniaEnv", "CaledoniaSoloEnv", "CaledoniaVectorEnv", "make_sb3_vec_env",
           "RandomOpponent", "make_opponent", "encode_obs", "decode_observation",
           "describe_observation", "OBS_SIZE", "OBS_HIGH", "LAYOUT", "MAP_CHANNELS",
           "REWARD_MODES", "terminal_rewards", "GYM_ID"]
