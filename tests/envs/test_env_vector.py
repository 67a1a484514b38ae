"""Numba vector env (issue #5): kernels, auto-reset, rewards, determinism, SB3 VecEnv."""
import numpy as np
import pytest

from caledonia_env import Game, IllegalActionError
from caledonia_env.engine import layout as L
from caledonia_env.engine.actions import N_ACTIONS
from caledonia_env.engine.mask import legal_mask
from caledonia_env.envs.observation import OBS_SIZE, encode_obs
from caledonia_env.envs.rewards import R_WIN, SCORE_TOTAL, terminal_rewards
from caledonia_env.engine.actions import MASK_WIDTH
from caledonia_env.envs.vector import CaledoniaVectorEnv, make_sb3_vec_env
from caledonia_env.envs.vector_kernels import sample_legal_actions


def check_rows(env):
    """Every row's observation / mask is the encoder / engine mask of its state for its seat."""
    obs = env.observations
    masks = env.action_masks()
    for i in range(env.num_envs):
        T = env.tables[env.table_index[i]]
        want = np.empty(OBS_SIZE, np.float32)
        encode_obs(env.states[i], T, int(env.seats[i]), want)
        assert np.array_equal(obs[i], want)
        m = np.zeros(N_ACTIONS, np.int8)
        legal_mask(env.states[i], T, m)
        assert np.array_equal(masks[i], m.astype(bool))
        assert env.states[i, L.S_PLAYER] == env.seats[i]
        assert masks[i].any()


def run(env, steps, seed=0):
    rng = np.random.default_rng(seed)
    done_info = []
    for _ in range(steps):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, dones, infos = env.step(actions)
        for i in np.flatnonzero(dones):
            done_info.append((i, float(rewards[i]), infos[i]))
        assert not rewards[~dones].any()
    return done_info


@pytest.mark.parametrize("n", [2, 4])
def test_rows_are_the_encoder_and_mask_of_their_state(n):
    env = CaledoniaVectorEnv(8, num_players=n, seed=3)
    env.reset()
    check_rows(env)
    run(env, 40)
    check_rows(env)


def test_R_7_auto_reset_and_terminal_reward():
    env = CaledoniaVectorEnv(6, num_players=2, seed=1)
    env.reset()
    finished = run(env, 150)
    assert len(finished) >= 6
    for i, reward, info in finished:
        final = info["terminal_observation"]
        assert final.shape == (OBS_SIZE,)
        assert reward in (-1.0, 0.0, 1.0)
        assert len(info["scores"]) == 2
    check_rows(env)


def test_terminal_reward_is_the_game_winner():
    """The kernel's reward equals Game.returns() of the finished game (R-7 tiebreak)."""
    for seed in range(6):
        g = Game(num_players=3, seed=seed)
        rng = np.random.default_rng(seed)
        while not g.is_terminal:
            g.step(rng.choice(g.legal_actions()))
        out = np.zeros(4)
        terminal_rewards(g.state, g.tables, R_WIN, out)
        assert out[:3].tolist() == g.returns().tolist()
        assert [int(g.state[L.S_PLAYERS + p * L.P_SIZE + L.P_SCORE + SCORE_TOTAL])
                for p in range(3)] == g.scores().tolist()


def test_serial_and_parallel_kernels_agree_and_seed_reproduces():
    a = CaledoniaVectorEnv(20, num_players=4, seed=7, parallel=False)
    b = CaledoniaVectorEnv(20, num_players=4, seed=7, parallel=True)
    oa, ob = a.reset(), b.reset()
    assert np.array_equal(oa, ob)
    rng = np.random.default_rng(0)
    for _ in range(60):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in a.action_masks()])
        ra = a.step(acts)
        rb = b.step(acts)
        assert np.array_equal(ra[0], rb[0]) and np.array_equal(ra[1], rb[1])
        assert np.array_equal(a.states, b.states)


def test_returned_buffers_alternate_and_copy_option():
    env = CaledoniaVectorEnv(2, num_players=2, seed=0)
    o0 = env.reset()
    keep = o0.copy()
    o1, *_ = env.step(env.sample_actions())
    assert not np.shares_memory(o0, o1)
    assert np.array_equal(o0, keep)          # the previous observation survives one step
    env = CaledoniaVectorEnv(2, num_players=2, seed=0, copy=True)
    o0 = env.reset()
    o1, *_ = env.step(env.sample_actions())
    o2, *_ = env.step(env.sample_actions())
    assert not np.shares_memory(o0, o2)


def test_illegal_action_raises_before_stepping_and_penalize():
    env = CaledoniaVectorEnv(3, num_players=2, seed=0)
    env.reset()
    before = env.states.copy()
    acts = env.sample_actions()
    acts[1] = int(np.flatnonzero(~env.action_masks()[1])[0])
    with pytest.raises(IllegalActionError, match="env 1"):
        env.step(acts)
    assert np.array_equal(before, env.states)
    env = CaledoniaVectorEnv(3, num_players=2, seed=0, illegal_action="penalize",
                             illegal_reward=-5.0)
    env.reset()
    acts = env.sample_actions()
    acts[2] = -1
    _, rewards, dones, infos = env.step(acts)
    assert dones[2] and rewards[2] == -5.0
    assert "terminal_observation" in infos[2]


def test_mixed_player_counts_and_fixed_map():
    env = CaledoniaVectorEnv(12, num_players=(2, 3, 4), map="A1,B2,C1,D2", seat=0, seed=4)
    env.reset()
    counts = {int(env.tables[k, L.T_NP]) for k in env.table_index}
    assert counts == {2, 3, 4}
    assert (env.seats == 0).all()
    run(env, 30)
    check_rows(env)


def test_python_opponents_slow_path():
    calls = []

    def first_legal(game):
        calls.append(game.current_player)
        return int(game.legal_actions()[0])

    env = CaledoniaVectorEnv(3, num_players=2, opponents=first_legal, seat=1, seed=2)
    env.reset()
    check_rows(env)
    finished = run(env, 150)
    assert finished and calls and set(calls) == {0}
    check_rows(env)


def test_a_named_bot_that_never_asks_for_the_legal_actions_can_be_the_opponent():
    """``opponents="greedy"`` (the Python path): the bot reads the state, not
    ``legal_actions()``, and its moves are still checked against the engine's mask."""
    env = CaledoniaVectorEnv(2, num_players=2, opponents="greedy", seat=0, seed=4)
    env.reset()
    check_rows(env)
    run(env, 40)
    check_rows(env)
    assert env.moves.sum() > 80


def test_R_1_1_random_maps_cover_several_sides():
    env = CaledoniaVectorEnv(32, num_players=2, seed=0)
    env.reset()
    assert len(set(env.table_index.tolist())) > 4


def test_sb3_vec_env_and_maskable_ppo():
    pytest.importorskip("stable_baselines3")
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import VecEnv
    env = make_sb3_vec_env(4, num_players=2, seed=0)
    assert isinstance(env, VecEnv)
    assert is_masking_supported(env)
    obs = env.reset()
    assert obs.shape == (4, OBS_SIZE)
    masks = get_action_masks(env)
    assert masks.shape == (4, N_ACTIONS) and masks.dtype == bool
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=32, n_epochs=1,
                        policy_kwargs={"net_arch": [32]}, seed=0)
    model.learn(total_timesteps=64)


def test_R_8_clan_games_in_the_vector_env():
    env = CaledoniaVectorEnv(6, num_players=3, clans="draft", clan_auction=True, seed=5)
    env.reset()
    check_rows(env)
    finished = run(env, 120)
    assert finished
    check_rows(env)


def test_random_legal_pick_is_uniform_over_the_mask():
    """The opponents' word-wise random pick returns only legal ids, each about equally often."""
    legal = np.array([0, 7, 8, 63, 64, 1000, N_ACTIONS - 1])
    masks = np.zeros((4000, MASK_WIDTH), np.int8)
    masks[:, legal] = 1
    masks[-1] = 0
    rng = np.arange(1, 4001, dtype=np.int64) * 7919
    out = np.empty(4000, np.int64)
    sample_legal_actions(masks, rng, out)
    assert out[-1] == -1
    values, counts = np.unique(out[:-1], return_counts=True)
    assert values.tolist() == legal.tolist()
    assert counts.min() > 0.7 * 3999 / len(legal)


@pytest.mark.parametrize("options", [dict(num_players=1, solo=True, reward="vp"),
                                     dict(num_players=2, opponents="automa:1")],
                         ids=["solo", "automa"])
def test_moves_count_the_learner_steps_over_auto_resets(options):
    """The learner is the only seat that takes actions here (the solo game, R-9.2; an Automa
    seat is played inside the engine, A-0), so ``moves`` is the number of steps, over auto-resets
    that draw any of the 16 map tables (the numba fast path)."""
    env = CaledoniaVectorEnv(4, seed=3, **options)
    env.reset()
    assert env.fast and len(env.maps) == 16
    steps, reset_tables = 0, []
    while len(reset_tables) < 6:
        _, _, dones, _ = env.step(env.sample_actions())
        steps += 1
        reset_tables += env.table_index[dones].tolist()
    assert any(reset_tables)                  # a table index other than 0 was drawn
    assert env.moves.tolist() == [steps] * 4


def test_moves_count_learner_and_python_opponent_actions():
    """With Python opponents every action is seen here: ``moves`` sums the learner's steps and
    the opponents' actions after ``reset`` (mixed player counts, 16 maps: 32 tables)."""
    rng = np.random.default_rng(0)
    calls = [0]

    def counting_random(game):
        calls[0] += 1
        return int(rng.choice(game.legal_actions()))

    env = CaledoniaVectorEnv(3, num_players=(2, 3), opponents=counting_random, seed=1)
    env.reset()
    calls[0] = 0                              # reset's opponent moves are not counted
    steps, reset_tables = 0, []
    while len(reset_tables) < 3:
        _, _, dones, _ = env.step(env.sample_actions())
        steps += 1
        reset_tables += env.table_index[dones].tolist()
    assert any(reset_tables)
    assert int(env.moves.sum()) == 3 * steps + calls[0]
