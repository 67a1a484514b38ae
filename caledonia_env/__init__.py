"""caledonia_env: a fast, faithful Clans of Caledonia simulator for RL research.

Layers (top to bottom): envs -> Game API -> numba engine -> ruleset data + map.
"""
from .config import GameConfig
from .game import Game, IllegalActionError
from .scenario import ScenarioError, from_scenario, to_scenario

Game.from_scenario = staticmethod(from_scenario)
Game.to_scenario = to_scenario

__version__ = "0.1.0"
__all__ = ["Game", "GameConfig", "IllegalActionError", "ScenarioError", "__version__",
           "env", "raw_env"]


def _register_gym():
    """``gymnasium.make("Caledonia-v0", ...)`` (the env module loads on first make)."""
    import gymnasium
    if "Caledonia-v0" not in gymnasium.registry:
        gymnasium.register(id="Caledonia-v0", entry_point="caledonia_env.env.gym_env:CaledoniaEnv")


_register_gym()


def __getattr__(name):
    """Lazy ``env`` (the callable caledonia_env.env package: PettingZoo AEC) and ``raw_env``."""
    if name in ("env", "raw_env"):
        import importlib
        module = importlib.import_module(".env", __name__)
        return module if name == "env" else module.raw_env
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
