"""The envs' optional reward shaping ``shaping=W`` (caledonia_env/envs/common.py ``Potential``):
W times each step's change of the projected VP lead (R-7 scoring of the state now), 0 once
the game is over, so the shaped return of a game differs from the terminal reward by
-W * phi(first state) only."""
import gymnasium
import numpy as np
import pytest

import caledonia_env
from caledonia_env.envs.rewards import SCORE_DIFF_SCALE, projected_score_diff


def phi(game):
    """Every player's projected VP lead now (the potential), by hand from the engine."""
    out = np.zeros(4)
    projected_score_diff(game.state, game.tables, np.empty_like(game.state), out)
    return out[:game.num_players]


def play_aec(n, seed, shaping, reward="score_diff"):
    """Random legal play; each step's rewards of every agent and the phi before it."""
    env = caledonia_env.env(num_players=n, reward=reward, shaping=shaping, seed=seed)
    env.reset()
    rng = np.random.default_rng(seed)
    steps, totals = [], {a: 0.0 for a in env.possible_agents}
    first = phi(env.unwrapped.game)
    while env.agents:
        agent = env.agent_selection
        _, r, term, _, info = env.last()
        totals[agent] += r
        if term:
            env.step(None)
            continue
        before = phi(env.unwrapped.game)
        env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        steps.append((before, dict(env.unwrapped.rewards), env.unwrapped.game))
    return env, steps, totals, first


@pytest.mark.parametrize("n", [2, 4])
def test_R_7_shaped_aec_rewards_are_the_change_of_the_projected_lead(n):
    env, steps, _, _ = play_aec(n, seed=11, shaping=0.5)
    game = env.unwrapped.game
    assert game.is_terminal
    for (before, rewards, _), (after, _, _) in zip(steps[:-1], steps[1:]):
        for p, a in enumerate(env.possible_agents):
            assert rewards[a] == pytest.approx(0.5 * (after[p] - before[p]), abs=1e-12)
    assert any(abs(r) > 1e-9 for _, rewards, _ in steps[:-1] for r in rewards.values())
    # the last step: phi drops to 0, the terminal reward comes
    last_before, last_rewards, _ = steps[-1]
    terminal = np.array(game.scores(), float)
    lead = np.array([terminal[p] - (terminal.sum() - terminal[p]) / (n - 1) for p in range(n)])
    for p, a in enumerate(env.possible_agents):
        assert last_rewards[a] == pytest.approx(lead[p] / SCORE_DIFF_SCALE - 0.5 * last_before[p])


@pytest.mark.parametrize("n", [2, 3])
def test_R_7_shaped_return_is_the_terminal_reward_minus_the_first_potential(n):
    _, _, plain, _ = play_aec(n, seed=5, shaping=0.0)
    _, steps, shaped, first = play_aec(n, seed=5, shaping=2.0)
    assert any(abs(r) > 1e-9 for _, rewards, _ in steps[:-1] for r in rewards.values())
    for p, a in enumerate(plain):
        assert shaped[a] == pytest.approx(plain[a] - 2.0 * first[p])


def test_R_7_shaping_off_keeps_every_reward_zero_before_the_end():
    _, steps, _, _ = play_aec(2, seed=3, shaping=0.0)
    assert all(r == 0.0 for _, rewards, _ in steps[:-1] for r in rewards.values())


def test_R_7_gym_env_shaping_sums_to_the_terminal_reward_minus_the_first_potential():
    def run(shaping):
        env = gymnasium.make("Caledonia-v0", num_players=2, reward="score_diff",
                             shaping=shaping, seat=1)
        _, info = env.reset(seed=9)
        first = phi(env.unwrapped.game)[1]
        rng = np.random.default_rng(0)
        total, rewards, done = 0.0, [], False
        while not done:
            a = int(rng.choice(np.flatnonzero(info["action_mask"])))
            _, r, done, _, info = env.step(a)
            total += r
            rewards.append(r)
        return total, rewards, first
    plain, plain_steps, _ = run(0.0)
    shaped, shaped_steps, first = run(1.0)
    assert all(r == 0.0 for r in plain_steps[:-1])
    assert any(abs(r) > 1e-9 for r in shaped_steps[:-1])
    assert shaped == pytest.approx(plain - first)


def test_parallel_view_passes_shaping_through():
    env = caledonia_env.parallel_env(num_players=2, shaping=1.0, reward="score_diff")
    obs, infos = env.reset(seed=4)
    rng = np.random.default_rng(4)
    seen = []
    while env.agents:
        actions = {a: int(rng.choice(np.flatnonzero(infos[a]["action_mask"]))) for a in env.agents}
        obs, rewards, *_, infos = env.step(actions)
        seen += list(rewards.values())
    assert any(abs(r) > 1e-9 for r in seen[:-2])


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_shaping_must_be_a_finite_weight_at_least_zero(bad):
    with pytest.raises(ValueError, match="shaping must be a finite number >= 0"):
        caledonia_env.env(num_players=2, shaping=bad)
    with pytest.raises(ValueError, match="shaping must be a finite number >= 0"):
        gymnasium.make("Caledonia-v0", num_players=2, shaping=bad)
