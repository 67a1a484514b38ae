"""CaledoniaSolo-v0: the solo game (R-9.2) as a single-agent Gymnasium env."""
import gymnasium
import numpy as np
import pytest

import caledonia_env  # noqa: F401  (registers the envs)
from caledonia_env.envs.solo import CaledoniaSoloEnv


def _play(env, seed, rng):
    obs, info = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        legal = np.flatnonzero(env.unwrapped.action_masks())
        obs, r, done, trunc, info = env.step(int(rng.choice(legal)))
        total += r
        assert env.observation_space.contains(obs)
    return total, info


def test_solo_env_final_vp_reward_and_rating_r92():
    """R-9.2: reward = final VP; info has the score breakdown and the rating band."""
    env = gymnasium.make("CaledoniaSolo-v0")
    total, info = _play(env, 3, np.random.default_rng(0))
    assert total == info["score"] == info["score_breakdown"]["total"]
    assert info["rating"] in ("Newbie", "Rookie", "Average", "Expert", "Genius")
    assert info["rating"] == env.unwrapped.game.ruleset.solo.rating(info["score"])


def test_solo_env_round_shaping_sums_to_final_vp_r92():
    """R-6.4 / R-9.2: the per-round reward adds up to the final VP."""
    env = CaledoniaSoloEnv(reward="round")
    total, info = _play(env, 5, np.random.default_rng(1))
    assert total == pytest.approx(info["score"])


def test_solo_env_rejects_fixed_options():
    with pytest.raises(TypeError, match="num_players"):
        CaledoniaSoloEnv(num_players=2)
    with pytest.raises(ValueError, match="reward"):
        CaledoniaSoloEnv(reward="win")


def test_solo_env_gymnasium_check_env():
    from gymnasium.utils.env_checker import check_env
    check_env(CaledoniaSoloEnv(illegal_action="penalize"), skip_render_check=True)


def test_solo_env_sb3_check_env():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env
    check_env(CaledoniaSoloEnv(illegal_action="penalize"), warn=False)


def _finish_games(v, n, seed):
    """Random legal play in vector env ``v`` until ``n`` games end: their (reward, VP)."""
    rng = np.random.default_rng(seed)
    finished = []
    while len(finished) < n:
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in v.action_masks()])
        _, rew, dones, _ = v.step(acts)
        finished += [(float(rew[i]), int(v.scores[i, 0])) for i in np.flatnonzero(dones)]
    return finished


def test_vector_env_runs_n_solo_games_with_vp_reward_r92():
    """R-9.2: N solo games in the numba vector env; the terminal reward is the final VP."""
    from caledonia_env.envs.vector import CaledoniaVectorEnv
    v = CaledoniaVectorEnv(num_envs=3, num_players=1, solo=True, reward="vp", seed=2)
    v.reset()
    finished = _finish_games(v, 3, seed=0)
    assert all(r == score and score > 0 for r, score in finished)
    with pytest.raises(ValueError, match="reward='vp'"):
        CaledoniaVectorEnv(num_envs=1, num_players=1, solo=True)


def test_vector_env_reward_scale_multiplies_the_vp_reward_r92():
    """reward_scale=0.01 gives the same games with every reward scaled (a PPO-friendly VP)."""
    from caledonia_env.envs.vector import CaledoniaVectorEnv
    runs = []
    for scale in (1.0, 0.01):
        v = CaledoniaVectorEnv(num_envs=2, num_players=1, solo=True, reward="vp", seed=5,
                               reward_scale=scale)
        v.reset()
        runs.append([r for r, _ in _finish_games(v, 2, seed=1)])
    assert runs[1] == pytest.approx([0.01 * r for r in runs[0]])
    for bad in (0, -1.0, float("nan"), True, "1"):
        with pytest.raises(ValueError, match="reward_scale"):
            CaledoniaVectorEnv(num_envs=1, num_players=1, solo=True, reward="vp",
                               reward_scale=bad)
