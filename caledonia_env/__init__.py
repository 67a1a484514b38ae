"""caledonia_env: a fast, faithful Clans of Caledonia simulator for RL research.

Layers, each importing only from below (docs/architecture.md; tests/test_layers.py):
data, map -> engine -> config -> scenario/records -> game -> env -> agents -> tournament
-> train -> cli.
This root module is the facade at the top: it wires the registrations.
"""
import gymnasium

from caledonia_env import plugins
from caledonia_env.config import GameConfig
from caledonia_env.game import Game, IllegalActionError
from caledonia_env.records import RecordError, RecordWarning
from caledonia_env.scenario import ScenarioError, to_scenario

from_scenario = Game.from_scenario

__version__ = "0.1.0"
__all__ = ["Game", "GameConfig", "IllegalActionError", "RecordError", "RecordWarning",
           "ScenarioError", "__version__", "from_scenario", "to_scenario",
           "env", "parallel_env", "raw_env"]


def _register_gym():
    """``gymnasium.make("Caledonia-v0", ...)`` (the env module loads on first make). The
    registered ids penalize illegal actions, as ``env()`` does, so the Gymnasium and SB3
    checkers (which step unmasked samples) pass on them; ``illegal_action="raise"`` is one
    argument away, and the classes keep ``"raise"`` as ``raw_env`` does (docs/envs.md)."""
    penalize = {"illegal_action": "penalize"}
    if "Caledonia-v0" not in gymnasium.registry:
        gymnasium.register(id="Caledonia-v0", entry_point="caledonia_env.envs.gym_env:CaledoniaEnv",
                           kwargs=penalize)
    if "CaledoniaSolo-v0" not in gymnasium.registry:   # solo benchmark
        gymnasium.register(id="CaledoniaSolo-v0", entry_point="caledonia_env.envs.solo:CaledoniaSoloEnv",
                           kwargs=penalize)


_register_gym()


def _agent_factory(name: str, seed: int = 0):
    """Opponents by name for the envs: ``caledonia_env.agents.make`` (loaded on first use)."""
    from caledonia_env import agents        # here, not at the top: ``import caledonia_env`` stays light
    return agents.make(name, seed=seed)


if plugins.opponent_factory is None:
    plugins.opponent_factory = _agent_factory


def env(obs_type: str = "dict", **options):
    """The wrapped PettingZoo AEC env (PettingZoo's ``env()`` convention; the envs load on
    first use so ``import caledonia_env`` stays light): :func:`caledonia_env.envs.aec.env`;
    ``obs_type="flat"``: the Box observation, the mask in ``infos``
    (:mod:`caledonia_env.envs.flat`)."""
    from caledonia_env.envs import flat      # inside: the envs load on first use
    return flat.make_aec(obs_type, **options)


def parallel_env(**options):
    """The PettingZoo Parallel view of the turn-based game (the others wait while one agent
    decides): :func:`caledonia_env.envs.parallel.parallel_env`."""
    from caledonia_env.envs import parallel  # inside: the envs load on first use
    return parallel.parallel_env(**options)


def __getattr__(name):
    """Lazy ``raw_env``: the bare PettingZoo AEC class :class:`caledonia_env.envs.aec.raw_env`."""
    if name == "raw_env":
        from caledonia_env.envs import aec   # inside: the envs load on first use
        return aec.raw_env
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
