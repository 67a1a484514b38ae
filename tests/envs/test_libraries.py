"""The envs fit the RL libraries' documented routes (docs/libraries.md).

Fast tests check the env side (infos without None, masks in infos, human render, the
RLlib key adapter, the illegal-action default); slow tests run each ``examples/`` script
for a few steps, skipped with the reason when the library is not installed.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import render_test

import caledonia_env
from caledonia_env import Game, GameConfig, IllegalActionError
from caledonia_env.envs import CaledoniaEnv, make_sb3_vec_env
from caledonia_env.envs.aec import raw_env
from caledonia_env.envs.common import final_info

ROOT = Path(__file__).resolve().parents[2]


def nones(value, path="info"):
    """Paths of every None inside nested dicts / lists / tuples."""
    if value is None:
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in nones(v, f"{path}[{k!r}]")]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in nones(v, f"{path}[{i}]")]
    return []


@pytest.mark.parametrize("n", [2, 3, 4])
def test_aec_infos_have_no_none_and_carry_the_mask(n):
    """Tianshou reads None (or a missing key) in infos as NaN; AgileRL reads info["action_mask"]."""
    env = caledonia_env.env(num_players=n)
    env.reset(seed=n)
    rng = np.random.default_rng(n)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        for a, inf in env.infos.items():
            assert nones(inf) == [], (a, nones(inf))
        if term or trunc:
            assert info["acting_player"] == -1 and info["acting_agent"] == ""
            assert not info["action_mask"].any()
            env.step(None)
            continue
        np.testing.assert_array_equal(info["action_mask"], obs["action_mask"])
        assert info["acting_agent"] == agent and info["acting_player"] == int(agent[-1])
        for other, inf in env.infos.items():
            if other != agent:
                assert not inf["action_mask"].any()
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    assert steps > 100


@pytest.mark.parametrize("n", [2, 3, 4])
def test_gym_infos_have_no_none_and_mask_equals_action_masks(n):
    env = CaledoniaEnv(num_players=n, seat=0)
    obs, info = env.reset(seed=n)
    rng = np.random.default_rng(n)
    done = False
    while True:
        assert nones(info) == []
        assert info["action_mask"].dtype == np.int8
        np.testing.assert_array_equal(info["action_mask"].astype(bool), env.action_masks())
        if done:
            break
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, done, trunc, info = env.step(a)
    assert info["acting_player"] == -1 and not info["action_mask"].any()
    assert len(info["scores"]) == n


def test_human_render_prints_the_text_view(capsys):
    env = caledonia_env.env(num_players=2, render_mode="human")
    env.reset(seed=1)
    assert env.render() is None
    assert "Clans of Caledonia" in capsys.readouterr().out
    genv = gymnasium.make("Caledonia-v0", num_players=2, render_mode="human")
    genv.reset(seed=1)
    assert genv.render() is None
    assert "Clans of Caledonia" in capsys.readouterr().out


def test_pettingzoo_render_test_passes(capsys):
    render_test(lambda render_mode=None: caledonia_env.env(num_players=2, render_mode=render_mode))


@pytest.mark.parametrize("winners", [[1], [0, 1], [0, 1, 2]])
def test_final_info_has_one_shape_whatever_the_number_of_winners(winners, monkeypatch):
    """Tianshou allocates its replay buffer with the first game's info shapes: a tied game
    (R-7, ties shared) must give the same shapes as any other."""
    game = Game(GameConfig(num_players=3, seed=1))
    rng = np.random.default_rng(1)
    while not game.is_terminal:
        game.step(int(rng.choice(game.legal_actions())))
    monkeypatch.setattr(game, "winners", lambda: winners)
    info = final_info(game)
    assert info["winners"].dtype == np.int8 and info["winners"].shape == (3,)
    assert np.flatnonzero(info["winners"]).tolist() == winners
    assert len(info["scores"]) == 3


def test_env_penalizes_illegal_actions_by_default_like_pettingzoo_classic():
    """env() ends the game with illegal_reward (TerminateIllegalWrapper's convention)."""
    env = caledonia_env.env(num_players=2)
    env.reset(seed=0)
    offender = env.agent_selection
    obs, *_ = env.last()
    with pytest.warns(UserWarning, match="illegal action"):
        env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert all(env.terminations.values()) and env.rewards[offender] == -1.0
    assert env.infos[offender]["offender"] == offender
    assert nones(env.infos[offender]) == []


def test_raw_env_raises_and_says_how_to_make_unmasked_samplers_safe():
    env = raw_env(num_players=2)
    env.reset(seed=0)
    bad = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="illegal_action='penalize'"):
        env.step(bad)


# ------------------------------------------------------------ example scripts (slow)
# Each library's tutorial route (docs/libraries.md) runs as a script in examples/, in the
# library's own venv: $CALEDONIA_LIB_VENVS/<name>/bin/python (default <repo>/.venvs/<name>,
# made as docs/libraries.md shows), else this interpreter if it has the library, else the
# test is skipped with the reason printed.
VENVS = Path(os.environ.get("CALEDONIA_LIB_VENVS", ROOT / ".venvs"))
PROBE = ("import importlib, sys, caledonia_env; print(caledonia_env.__file__)\n"
         "try: importlib.import_module(sys.argv[1])\nexcept ImportError: sys.exit(1)")


def library_python(name, module):
    """The interpreter for library ``name`` (importing ``module``) and this checkout's
    caledonia_env, or skip with the reason printed."""
    want = (ROOT / "caledonia_env" / "__init__.py").resolve()
    tried = []
    for python in (VENVS / name / "bin" / "python", Path(sys.executable)):
        if not python.exists():
            tried.append(f"{python}: no such interpreter")
            continue
        proc = subprocess.run([str(python), "-c", PROBE, module], capture_output=True,
                              text=True, timeout=300, cwd=ROOT)
        found = Path(proc.stdout.strip() or "/").resolve()
        if proc.returncode == 0 and found == want:
            return str(python)
        tried.append(f"{python}: " + (f"{module} is not installed" if proc.returncode == 1 else
                                      f"imports caledonia_env from {found}, not {want}"
                                      if proc.returncode == 0 else proc.stderr.strip()[-200:]))
    reason = (f"{name} route skipped ({'; '.join(tried)}); make the venv as docs/libraries.md "
              f"shows or set CALEDONIA_LIB_VENVS")
    print(reason)
    pytest.skip(reason)


def run_example(name, module, script, *args, timeout=1800, stderr_without=None):
    """The script's stdout; ``stderr_without``: a text its stderr must not hold."""
    python = library_python(name, module)
    proc = subprocess.run([python, str(ROOT / "examples" / script), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    if stderr_without is not None:
        assert stderr_without not in proc.stderr, proc.stderr[-3000:]
    return proc.stdout


def assert_learning_printed(out):
    """The example printed the win rate against random before and after training."""
    for when in ("before", "after"):
        assert re.search(rf"^{when} training: win rate [01]\.\d\d \[", out, re.M), out[-2000:]
    assert out.rstrip().endswith("done")


@pytest.mark.slow
def test_sb3_tutorial_route():
    out = run_example("sb3", "sb3_contrib", "sb3_maskable_ppo.py", "--steps", "4096",
                      "--games", "4")
    assert_learning_printed(out)
    assert "ep_rew_mean" in out and "ep_len_mean" in out      # episode stats reach SB3's log


@pytest.mark.slow
def test_tianshou_tutorial_route():
    assert_learning_printed(run_example("tianshou", "tianshou", "tianshou_dqn.py", "--steps",
                                        "300", "--games", "4", "--seed", "3"))


@pytest.mark.slow
def test_tianshou_single_agent_ppo_route():
    """Masked PPO on the Gymnasium env through Tianshou's on-policy trainer."""
    assert_learning_printed(run_example("tianshou", "tianshou", "tianshou_ppo.py", "--steps",
                                        "2048", "--games", "4", "--seed", "3"))


@pytest.mark.slow
def test_rllib_tutorial_route():
    out = run_example("rllib", "ray.rllib", "rllib_ppo.py", "--iterations", "1",
                      "--train-batch", "400", "--games", "4")
    assert_learning_printed(out)
    assert "iteration 1:" in out


@pytest.mark.slow
def test_rllib_selfplay_script_runs_on_local_ray():
    """The cluster training script, 1 iteration with 1 env runner on a local Ray."""
    python = library_python("rllib", "ray.rllib")
    proc = subprocess.run([python, "-m", "caledonia_env.train.rllib_selfplay",
                           "--iterations", "1", "--num-env-runners", "1", "--players", "3",
                           "--train-batch", "300", "--eval-games", "3"], capture_output=True,
                          text=True, timeout=1800, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "'iteration': 1" in proc.stdout and "episode_len_mean" in proc.stdout
    assert_learning_printed(proc.stdout)


@pytest.mark.slow
def test_agilerl_multi_agent_tutorial_route():
    assert_learning_printed(run_example("agilerl", "agilerl", "agilerl_maddpg.py", "--steps",
                                        "600", "--games", "4", "--seed", "3"))


@pytest.mark.slow
def test_agilerl_single_agent_ppo_route():
    """Masked PPO: the env's class default raises on an illegal action, so a run that ends
    also shows that every sampled action was legal."""
    assert_learning_printed(run_example("agilerl", "agilerl", "agilerl_ppo.py", "--steps",
                                        "2048", "--games", "4", "--seed", "3"))


@pytest.mark.slow
def test_supersuit_tutorial_route_with_maskable_ppo():
    out = run_example("supersuit", "supersuit", "supersuit_wrappers.py", "--steps", "1024",
                      "--games", "4", "--seed", "3", stderr_without="illegal action by")
    assert_learning_printed(out)
    assert "frame_stack_v1 on the flat AEC env" in out


@pytest.mark.slow
def test_supersuit_tutorial_route_with_plain_ppo():
    assert_learning_printed(run_example("supersuit", "supersuit", "supersuit_wrappers.py",
                                        "--algo", "ppo", "--steps", "1024", "--games", "4",
                                        "--seed", "3"))


# ------------------------------------------------------------ SB3 episode statistics
def test_sb3_vec_env_reports_episodes_as_vecmonitor_does():
    """infos[i]["episode"] = {"r", "l", "t"} at each episode end: the return and the number
    of learner steps of that episode, the seconds since the env was made."""
    pytest.importorskip("stable_baselines3")
    venv = make_sb3_vec_env(3, num_players=2, seed=0, reward="score_diff")
    venv.reset()
    rng = np.random.default_rng(0)
    returns, lengths, seen = np.zeros(3), np.zeros(3, int), 0
    while seen < 4:
        masks = venv.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, rewards, dones, infos = venv.step(actions)
        returns += rewards
        lengths += 1
        for i, info in enumerate(infos):
            if dones[i]:
                ep = info["episode"]
                assert ep["r"] == pytest.approx(returns[i]) and ep["l"] == lengths[i]
                assert ep["r"] != 0 and ep["t"] >= 0
                returns[i], lengths[i] = 0.0, 0
                seen += 1
            else:
                assert "episode" not in info


def test_sb3_logs_episode_return_and_length_on_the_vec_env(capsys):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure
    model = MaskablePPO("MlpPolicy", make_sb3_vec_env(4, num_players=2, seed=0), n_steps=128,
                        batch_size=128, n_epochs=1, policy_kwargs={"net_arch": [16]}, seed=0)
    model.set_logger(configure(None, ["stdout"]))
    model.learn(512)
    out = capsys.readouterr().out
    assert "ep_rew_mean" in out and "ep_len_mean" in out
    assert len(model.ep_info_buffer) > 0


def test_no_module_imports_rllibs_example_modules():
    """RLlib's examples folder warns it "will raise an error in the future": never import it."""
    sources = [p for d in ("caledonia_env", "train", "agents", "examples")
               for p in (ROOT / d).rglob("*.py")]
    assert len(sources) > 50
    offenders = [str(p) for p in sources if "rllib.examples" in p.read_text()]
    assert offenders == []
