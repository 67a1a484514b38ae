"""caledonia_env: a fast, faithful Clans of Caledonia simulator for RL research.

Layers (top to bottom): envs -> Game API -> numba engine -> ruleset data + map.
"""
from .config import GameConfig
from .game import Game, IllegalActionError
from .scenario import ScenarioError, from_scenario, to_scenario

Game.from_scenario = staticmethod(from_scenario)
Game.to_scenario = to_scenario

__version__ = "0.1.0"
__all__ = ["Game", "GameConfig", "IllegalActionError", "ScenarioError", "__version__"]
