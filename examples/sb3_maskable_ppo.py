"""Stable-Baselines3 / sb3-contrib: MaskablePPO on the Gymnasium env (one learning seat,
random opponents), then on the numba vector env. ``pip install -e ".[train]"``;
run ``python examples/sb3_maskable_ppo.py --steps 20000``.
"""
import argparse

from sb3_contrib import MaskablePPO

from caledonia_env.envs import CaledoniaEnv, make_sb3_vec_env


def main(steps: int):
    # Gymnasium env: MaskablePPO calls env.action_masks() (also in info["action_mask"]).
    model = MaskablePPO("MlpPolicy", CaledoniaEnv(num_players=2, opponents="random"),
                        n_steps=128, batch_size=64, seed=0, verbose=0)
    model.learn(steps)
    # Vector env: many games in one numba kernel, a real SB3 VecEnv.
    venv = make_sb3_vec_env(8, num_players=2, seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, seed=0, verbose=0)
    model.learn(steps)
    print("done")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=20_000, help="learner steps per model")
    main(p.parse_args().steps)
