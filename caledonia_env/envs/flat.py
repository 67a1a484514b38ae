"""Flat observations for the PettingZoo AEC env: ``caledonia_env.env(obs_type="flat")``.

======================  =================================================================
Import                  ``caledonia_env.env(obs_type="flat", **options)``, or
                        ``from caledonia_env.envs.flat import flat_env``
Observation             ``float32[5019]`` in ``Box(0, OBS_HIGH)`` (``docs/observation.md``):
                        the ``"observation"`` entry of the Dict view alone
Action mask             ``infos[agent]["action_mask"]`` (int8[2039], all zeros unless the
                        agent decides now), as in the Dict view
Everything else         as :mod:`caledonia_env.envs.aec` (actions, rewards, terminations,
                        ``illegal_action`` default ``"penalize"``)
======================  =================================================================

A Box observation is what SuperSuit's observation wrappers and PettingZoo's ``api_test``
expect (the Dict view makes ``api_test`` warn "Observation space should be Box or
Discrete" / "Observation is not a NumPy array" at every check); ``api_test`` and the
masked samplers then read the mask from ``infos``. Tianshou's ``PettingZooEnv`` reads a
mask only from a Dict observation and would take every action as legal here, so wrapping
this env in it is refused with a ValueError that says to pass the Dict view. See
``docs/envs.md``.
"""
from __future__ import annotations

from pettingzoo.utils import BaseWrapper

from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.envs.aec import OrderEnforcing, raw_env
from caledonia_env.envs.aec import env as dict_env
from caledonia_env.envs.common import check_choice, observe

OBS_TYPES = ("dict", "flat")


def check_obs_type(obs_type):
    check_choice("obs_type", obs_type, OBS_TYPES)


class FlatObservation(BaseWrapper):
    """The AEC env with the Box observation alone (the mask stays in ``infos``)."""

    def __init__(self, env):
        super().__init__(env)
        self.observation_spaces = {a: env.observation_space(a)["observation"]
                                   for a in self.possible_agents}

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def observe(self, agent):
        inner = self.env.unwrapped
        return observe(inner.game, inner._index[agent])

    def last(self, observe=True):
        """As ``AECEnv.last``; Tianshou's ``PettingZooEnv``, which passes itself as
        ``observe`` from its ``reset``, is refused (see :func:`refuse_tianshou`)."""
        if observe is not True and observe is not False:
            refuse_tianshou(observe)
        return super().last(observe)


TIANSHOU_FLAT = (
    "Tianshou's PettingZooEnv reads the action mask only from a Dict observation's "
    "'action_mask' entry: on obs_type='flat' it would take all {n} actions as legal and "
    "train unmasked. Pass the Dict view: PettingZooEnv(caledonia_env.env()) "
    "(obs_type='dict', the default; docs/libraries.md)")


def refuse_tianshou(caller) -> None:
    """ValueError when ``caller`` is Tianshou's ``PettingZooEnv`` (its ``step`` is
    Tianshou's own, which gives every action as legal unless the observation is a Dict
    with ``action_mask``); subclasses with their own ``step`` are let through."""
    step = getattr(type(caller), "step", None)
    if getattr(step, "__module__", "").split(".")[0] == "tianshou":
        raise ValueError(TIANSHOU_FLAT.format(n=N_ACTIONS))


def flat_env(**options):
    """``caledonia_env.env(**options)`` with flat observations (illegal actions penalized
    by default, as :func:`caledonia_env.envs.aec.env`)."""
    options.setdefault("illegal_action", "penalize")
    return OrderEnforcing(FlatObservation(raw_env(**options)))


def make_aec(obs_type: str = "dict", **options):
    """The wrapped AEC env with the Dict (``"dict"``) or Box (``"flat"``) observation."""
    check_obs_type(obs_type)
    return dict_env(**options) if obs_type == "dict" else flat_env(**options)
