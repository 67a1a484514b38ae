"""SuperSuit: what it can and cannot wrap.

Reward and action wrappers work on the AEC env; SuperSuit's observation wrappers
(``frame_stack_v1``, ``normalize_obs_v0``, ``dtype_v0`` ...) accept only Box / Discrete
observation spaces, so they reject the env's Dict observation (observation + action_mask),
exactly as for PettingZoo's own masked classic games. ``pip install supersuit``;
run ``python examples/supersuit_wrappers.py``.
"""
import numpy as np
import supersuit as ss

import caledonia_env


def play(env, seed=0):
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total = 0.0
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        total += reward
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return total


def main():
    print("clip_reward_v0 works: total reward", play(ss.clip_reward_v0(caledonia_env.env(num_players=2),
                                                                     lower_bound=-0.5, upper_bound=0.5)))
    for name in ("frame_stack_v1", "normalize_obs_v0", "dtype_v0"):
        wrapper = getattr(ss, name)
        try:
            wrapper(caledonia_env.env(num_players=2), *((np.float32,) if name == "dtype_v0" else ()))
        except Exception as e:          # SuperSuit's own check on Dict observation spaces
            print(f"{name} rejects the Dict observation: {type(e).__name__}: {e}")
        else:
            raise SystemExit(f"{name} unexpectedly accepted a Dict observation space")
    print("done")


if __name__ == "__main__":
    main()
