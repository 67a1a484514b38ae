"""No silent unmasked training (issue #75): every env view gives its mask in its reset and
step infos, and each library route's trainer sees the mask: an untrained policy run for N
steps on an env that *raises* on an illegal action (``illegal_action="raise"``) never
chooses one. Library tests skip with the reason when the library is not installed
(docs/libraries.md says how to make each library's venv)."""
import importlib.util
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import caledonia_env
from caledonia_env import IllegalActionError
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.envs import CaledoniaEnv, CaledoniaSoloEnv, CaledoniaVectorEnv
from caledonia_env.envs.aec import raw_env
from caledonia_env.envs.flat import TIANSHOU_FLAT, flat_env
from caledonia_env.envs.parallel import WAIT, parallel_env

ROOT = Path(__file__).resolve().parents[2]


def needs(*modules):
    """Skip, naming the missing library, unless every module imports."""
    for m in modules:
        if importlib.util.find_spec(m.split(".")[0]) is None:
            pytest.skip(f"{m} is not installed (docs/libraries.md, 'One venv per library')")


# ------------------------------------------------------------ the env side
GYM_VIEWS = {
    "Caledonia-v0": lambda: gymnasium.make("Caledonia-v0", num_players=2,
                                           illegal_action="raise"),
    "CaledoniaSolo-v0": lambda: gymnasium.make("CaledoniaSolo-v0", illegal_action="raise"),
}


@pytest.mark.parametrize("view", sorted(GYM_VIEWS))
def test_gymnasium_views_give_the_mask_in_reset_and_step_infos(view):
    """The solo env's infos had no ``action_mask``: AgileRL's PPO trained unmasked on it."""
    env = GYM_VIEWS[view]()
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=1)
    steps, done = 0, False
    while True:
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (N_ACTIONS,)
        np.testing.assert_array_equal(mask.astype(bool), env.unwrapped.action_masks())
        if done:
            break
        obs, _, done, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
    assert not info["action_mask"].any() and steps > 20


@pytest.mark.parametrize("obs_type", ["dict", "flat"])
def test_aec_views_give_the_mask_in_infos_at_reset_and_every_step(obs_type):
    env = caledonia_env.env(num_players=3, obs_type=obs_type, illegal_action="raise")
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    for agent in env.agent_iter():
        *_, term, trunc, info = env.last()
        if term or trunc:
            assert not info["action_mask"].any()
            env.step(None)
            continue
        np.testing.assert_array_equal(info["action_mask"], env.unwrapped.game.legal_mask_int8())
        env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))


@pytest.mark.parametrize("obs_type", ["dict", "flat"])
def test_parallel_views_give_the_mask_in_reset_and_step_infos(obs_type):
    env = parallel_env(num_players=2, obs_type=obs_type, illegal_action="raise")
    obs, infos = env.reset(seed=3)
    rng = np.random.default_rng(3)
    while env.agents:
        decider = env.aec.agent_selection
        for a, info in infos.items():
            if a == decider:
                np.testing.assert_array_equal(info["action_mask"][:N_ACTIONS],
                                              env.game.legal_mask_int8())
            else:
                assert np.flatnonzero(info["action_mask"]).tolist() == [WAIT]
        actions = {a: int(rng.choice(np.flatnonzero(info["action_mask"])))
                   for a, info in infos.items()}
        obs, _, _, _, infos = env.step(actions)


def test_vector_env_gives_the_mask_in_reset_and_step_infos():
    """Each step's ``infos[i]["action_mask"]`` is the next decision's (the new game's after
    an auto-reset), as ``action_masks()`` gives it."""
    env = CaledoniaVectorEnv(4, num_players=2, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    masks = [info["action_mask"] for info in env.reset_infos]
    ended = 0
    while ended < 2:
        np.testing.assert_array_equal(np.stack(masks).astype(bool), env.action_masks())
        actions = [int(rng.choice(np.flatnonzero(m))) for m in masks]
        _, _, dones, infos = env.step(actions)
        masks = [info["action_mask"] for info in infos]
        ended += int(dones.sum())
        assert all(m.any() for m in masks)          # a finished game is reset at once


@pytest.mark.parametrize("make", [lambda: CaledoniaEnv(num_players=2),
                                  lambda: CaledoniaSoloEnv()], ids=["Caledonia", "solo"])
def test_gymnasium_vector_infos_carry_the_mask_where_agilerl_reads_it(make):
    """AgileRL's on-policy collector reads ``info["action_mask"]`` of a Gymnasium vector env
    (docs/libraries.md): a sampler that sees only that mask never picks an illegal action
    (the env classes raise on one), across auto-resets."""
    venv = gymnasium.vector.SyncVectorEnv([make] * 2,
                                          autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
    _, infos = venv.reset(seed=4)
    rng = np.random.default_rng(4)
    ended = 0
    for _ in range(400):
        actions = [int(rng.choice(np.flatnonzero(m))) for m in infos["action_mask"]]
        _, _, term, trunc, infos = venv.step(actions)
        ended += int((term | trunc).sum())
    assert ended >= 1


# ------------------------------------------------------------ Tianshou
class _PettingZooEnvLikeTianshous:
    """What Tianshou 2.0's ``PettingZooEnv`` does with an env (its reset passes itself to
    ``last`` and reads a mask only from a Dict observation); its ``step`` method counts as
    Tianshou's. The real one is tested below where Tianshou is installed."""

    def __init__(self, env):
        self.env = env
        self.env.reset()
        observation, *_ = self.env.last(self)

    def step(self, action):
        raise AssertionError("not reached")


_PettingZooEnvLikeTianshous.step.__module__ = "tianshou.env.pettingzoo_env"


def test_flat_aec_env_refuses_tianshous_wrapper_saying_what_to_pass():
    with pytest.raises(ValueError, match=r"would take all 2039 actions as legal .* Pass the "
                                         r"Dict view: PettingZooEnv\(caledonia_env.env\(\)\)"):
        _PettingZooEnvLikeTianshous(flat_env(num_players=2))
    env = flat_env(num_players=2)
    env.reset(seed=0)
    assert env.last()[0].shape == env.last(True)[0].shape            # plain calls unchanged
    _PettingZooEnvLikeTianshous(caledonia_env.env(num_players=2))    # the Dict view: accepted


def test_real_tianshou_refuses_flat_and_reads_the_dict_mask():
    needs("tianshou")
    from tianshou.env.pettingzoo_env import PettingZooEnv
    with pytest.raises(ValueError, match="Pass the Dict view") as err:
        PettingZooEnv(caledonia_env.env(num_players=2, obs_type="flat"))
    assert str(err.value) == TIANSHOU_FLAT.format(n=N_ACTIONS)
    env = PettingZooEnv(raw_env(num_players=2))
    obs, _ = env.reset(seed=0)
    assert sum(obs["mask"]) == int(env.env.game.legal_mask_int8().sum()) < N_ACTIONS


@pytest.mark.slow           # about 30 s, most of it Tianshou's multi-agent set-up
def test_tianshou_multi_agent_dqn_route_collects_only_legal_actions():
    """The tic-tac-toe route (examples/tianshou_dqn.py): an untrained DQN with exploration
    and Tianshou's masked random player, 150 steps on ``raw_env`` (raises on illegal)."""
    needs("tianshou", "torch")
    from tianshou.algorithm import (DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm,
                                    MultiAgentOffPolicyAlgorithm)
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.utils.net.common import Net

    def make():
        return PettingZooEnv(raw_env(num_players=2))
    env = make()
    net = Net(state_shape=env.observation_space["observation"].shape,
              action_shape=env.action_space.n, hidden_sizes=[16])
    learner = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space,
                                                 eps_training=0.5, eps_inference=0.5),
                  optim=AdamOptimizerFactory(lr=1e-3))
    algo = MultiAgentOffPolicyAlgorithm(
        algorithms=[learner, MARLRandomDiscreteMaskedOffPolicyAlgorithm(
            action_space=env.action_space)], env=env)
    collector = Collector[CollectStats](algo, DummyVectorEnv([make]),
                                        VectorReplayBuffer(1000, 1), exploration_noise=True)
    collector.reset()
    assert collector.collect(n_step=150).n_collected_steps >= 150


@pytest.mark.parametrize("env_id", ["Caledonia-v0", "CaledoniaSolo-v0"])
def test_tianshou_single_agent_ppo_route_collects_only_legal_actions(env_id):
    """examples/tianshou_ppo.py's mask wrapper and masking actor, untrained, 300 steps on
    an env that raises on an illegal action: the solo id works the same way now."""
    needs("tianshou", "torch")
    spec = importlib.util.spec_from_file_location("tianshou_ppo", ROOT / "examples" /
                                                  "tianshou_ppo.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    from tianshou.algorithm import PPO
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    options = {"num_players": 2} if env_id == "Caledonia-v0" else {}

    def make():
        return ex.TianshouMask(gymnasium.make(env_id, illegal_action="raise", **options))
    env = make()
    n_obs = env.observation_space["obs"].shape[0]
    algo = PPO(policy=DiscreteActorPolicy(actor=ex.MaskedActor(n_obs, env.action_space.n),
                                          action_space=env.action_space),
               critic=ex.Critic(n_obs), optim=AdamOptimizerFactory(lr=1e-3))
    collector = Collector[CollectStats](algo, DummyVectorEnv([make, make]),
                                        VectorReplayBuffer(1000, 2))
    collector.reset()
    assert collector.collect(n_step=300).n_collected_steps >= 300


# ------------------------------------------------------------ AgileRL
class _MaskDropped(gymnasium.Wrapper):
    """The env with ``action_mask`` taken out of its infos: what an AgileRL trainer gets
    from an env that gives no mask."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return obs, {k: v for k, v in info.items() if k != "action_mask"}

    def step(self, action):
        *out, info = self.env.step(action)
        return *out, {k: v for k, v in info.items() if k != "action_mask"}


def _agilerl_ppo(venv):
    """An untrained AgileRL PPO for ``venv`` as ``examples/agilerl_ppo.py`` builds it."""
    import torch
    from agilerl.algorithms import PPO
    torch.manual_seed(0)
    return PPO(observation_space=venv.single_observation_space,
               action_space=venv.single_action_space, num_envs=venv.num_envs,
               net_config={"encoder_config": {"hidden_size": [16]}}, learn_step=300,
               rollout_buffer_config={"use_gae": False})


def _agilerl_venv(make, wrap=lambda e: e):
    return gymnasium.vector.SyncVectorEnv([lambda: wrap(make())] * 2,
                                          autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)


AGILERL_ENVS = {"Caledonia": lambda: CaledoniaEnv(num_players=2, illegal_action="raise"),
                "solo": lambda: CaledoniaSoloEnv(illegal_action="raise")}


@pytest.mark.parametrize("name", sorted(AGILERL_ENVS))
def test_agilerl_ppo_collector_takes_only_legal_actions(name):
    """examples/agilerl_ppo.py's route: AgileRL's own on-policy collector (what
    ``train_on_policy`` runs), untrained PPO, 2 envs x 150 steps on an env that raises on an
    illegal action; the rollout buffer keeps each step's mask for the PPO update."""
    needs("agilerl", "torch")
    from agilerl.rollouts.on_policy import collect_rollouts
    venv = _agilerl_venv(AGILERL_ENVS[name])
    venv.reset(seed=5)
    agent = _agilerl_ppo(venv)
    scores, *_ = collect_rollouts(agent, venv, n_steps=150)
    assert len(scores) >= 2                                  # games ended and auto-reset
    masks = agent.rollout_buffer.buffer["action_masks"][:150]
    actions = agent.rollout_buffer.buffer["actions"][:150].long()
    assert masks.shape == (150, 2, N_ACTIONS) and not masks.all()
    assert masks.gather(2, actions.reshape(150, 2, 1)).all()
    venv.close()


def test_agilerl_ppo_collector_without_the_mask_hits_an_illegal_action():
    """The check above can fail: the same untrained PPO on the env with the mask taken out
    of its infos picks an illegal id within 150 steps, and the env raises."""
    needs("agilerl", "torch")
    from agilerl.rollouts.on_policy import collect_rollouts
    venv = _agilerl_venv(AGILERL_ENVS["Caledonia"], _MaskDropped)
    venv.reset(seed=5)
    with pytest.raises(IllegalActionError):
        collect_rollouts(_agilerl_ppo(venv), venv, n_steps=150)
    venv.close()


def test_agilerl_maddpg_route_takes_only_legal_actions():
    """examples/agilerl_maddpg.py's route: AgileRL's vectorised PettingZoo env over the flat
    Parallel view (raising on an illegal action), untrained MADDPG with its exploration
    noise choosing through ``get_action(obs, infos)`` as ``train_multi_agent_off_policy``
    does, 2 envs x 150 steps; the waiting seat is given ``WAIT``."""
    needs("agilerl", "torch")
    import torch
    from agilerl.algorithms import MADDPG
    from agilerl.vector.pz_async_vec_env import AsyncPettingZooVecEnv
    torch.manual_seed(0)
    venv = AsyncPettingZooVecEnv(
        [lambda: parallel_env(num_players=2, obs_type="flat", illegal_action="raise")] * 2)
    obs, infos = venv.reset(seed=6)
    ids = venv.agents
    agent = MADDPG(observation_spaces=[venv.single_observation_space(a) for a in ids],
                   action_spaces=[venv.single_action_space(a) for a in ids], agent_ids=ids,
                   net_config={"encoder_config": {"hidden_size": [16]}}, vect_noise_dim=2)
    agent.set_training_mode(True)
    ended = 0
    for _ in range(150):
        actions, _ = agent.get_action(obs=obs, infos=infos)
        for a in ids:
            legal = np.take_along_axis(infos[a]["action_mask"], actions[a][:, None], axis=1)
            assert legal.all()
        obs, _, term, _, infos = venv.step(actions)
        ended += int(term[ids[0]].sum())
    assert ended >= 2
    venv.close()


# ------------------------------------------------------------ SB3 / sb3-contrib
@pytest.mark.parametrize("make", [lambda: CaledoniaEnv(num_players=2),
                                  lambda: CaledoniaSoloEnv()], ids=["Caledonia", "solo"])
def test_sb3_maskable_ppo_route_takes_only_legal_actions(make):
    """sb3-contrib's route (ActionMasker + MaskablePPO), untrained, 256 learner steps on the
    env class, which raises on an illegal action."""
    needs("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker
    env = ActionMasker(make(), lambda e: e.unwrapped.action_masks())
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1,
                        policy_kwargs={"net_arch": [16]}, seed=0)
    model.learn(256)
    assert model.num_timesteps >= 256


# ------------------------------------------------------------ SuperSuit
def test_supersuit_route_with_maskable_ppo_takes_only_legal_actions():
    """examples/supersuit_wrappers.py's route, untrained, on a Parallel env that raises."""
    needs("supersuit", "sb3_contrib")
    import supersuit as ss
    from sb3_contrib import MaskablePPO

    from caledonia_env.train.sb3_masks import InfoActionMasks
    env = parallel_env(num_players=2, obs_type="flat", illegal_action="raise")
    env = ss.pettingzoo_env_to_vec_env_v1(ss.flatten_v0(ss.pad_observations_v0(env)))
    venv = ss.concat_vec_envs_v1(env, 2, num_cpus=1, base_class="stable_baselines3")
    model = MaskablePPO("MlpPolicy", InfoActionMasks(venv), n_steps=64, batch_size=64,
                        n_epochs=1, policy_kwargs={"net_arch": [16]})
    model.learn(256)        # 4 slots (2 games, 2 seats): 256 agent steps
    assert model.num_timesteps >= 256
    venv.close()


def test_supersuit_black_death_is_not_needed_and_says_so():
    """black_death_v3 ends an episode only when every agent is terminated *and* truncated;
    the Parallel view terminates all agents at once and never truncates, so the wrapper sends
    one more step to the finished game: the error says why it is not needed."""
    needs("supersuit")
    import supersuit as ss
    env = ss.black_death_v3(parallel_env(num_players=2, obs_type="flat",
                                         illegal_action="raise"))
    _, infos = env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    with pytest.raises(RuntimeError, match="the game is over.*needs no black_death"):
        for steps in range(1000):
            *_, infos = env.step({a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"])))
                                  for a in env.agents})
    assert steps > 20


def test_the_parallel_env_names_black_death_when_stepped_past_the_end():
    """The same message without SuperSuit: what black_death_v3 sends after the last step."""
    env = parallel_env(num_players=2)
    env.reset(seed=0)
    env.agents = []
    with pytest.raises(RuntimeError, match=r"SuperSuit's black_death_v3 .* never truncated"):
        env.step({})
    with pytest.raises(RuntimeError, match=r"^the game is over: call reset\(\) before step\(\)$"):
        env.step({"player_0": 0})
