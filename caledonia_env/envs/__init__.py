"""RL environments over the engine: PettingZoo AEC, Gymnasium single-agent, numba vector env.

All three encode observations with the one numba function
:func:`caledonia_env.envs.observation.encode_obs` (layout in ``docs/observation.md``)
and use the engine's exact legal mask. Usage in ``docs/envs.md``.

This package is itself callable: ``caledonia_env.env(**options)`` is the wrapped
PettingZoo AEC env (PettingZoo's ``env()`` convention) while
``caledonia_env.envs.vector`` etc. stay importable submodules.
"""
import hashlib
import os
from pathlib import Path

import numba

from .. import game as _game  # noqa: F401  (loads the engine: its functions cache in its own dir)
from ..engine import (actions, board, constants, layout, mask, scoring,  # noqa: F401
                      setup, step)


def _env_cache_dir(base):
    """Numba cache folder for the env kernels: the engine's folder (keyed by the engine's
    sources) plus a hash of this package's sources. numba only checks the timestamp of a
    jitted function's own file, so a changed encoder or engine must not reuse kernels
    compiled against the old one."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return os.path.join(base, "env-" + digest.hexdigest()[:16])


_previous_cache_dir = numba.config.CACHE_DIR
if not os.environ.get("NUMBA_CACHE_DIR") and _previous_cache_dir:
    numba.config.CACHE_DIR = _env_cache_dir(_previous_cache_dir)
try:
    from .aec import env, raw_env
    from .gym_env import CaledoniaEnv
    from .observation import (LAYOUT, MAP_CHANNELS, OBS_HIGH, OBS_SIZE, decode_observation,
                              describe_observation, encode_obs)
    from .opponents import RandomAgent, make_opponent
    from .rewards import REWARD_MODES, terminal_rewards
    from .solo import CaledoniaSoloEnv
    from .vector import CaledoniaVectorEnv, make_sb3_vec_env
finally:
    numba.config.CACHE_DIR = _previous_cache_dir


GYM_ID = "Caledonia-v0"     # registered by ``import caledonia_env``


__all__ = ["env", "raw_env", "CaledoniaEnv", "CaledoniaSoloEnv", "CaledoniaVectorEnv", "make_sb3_vec_env",
           "RandomAgent", "make_opponent", "encode_obs", "decode_observation",
           "describe_observation", "OBS_SIZE", "OBS_HIGH", "LAYOUT", "MAP_CHANNELS",
           "REWARD_MODES", "terminal_rewards", "GYM_ID"]
