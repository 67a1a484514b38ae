"""Fill numba's cache with the code most tests run, before the tests start.

Needs only the core install (no pytest, no torch), so that ``make test`` can run it while
pip installs the extras (the Makefile); ``tests/conftest.py`` runs it again before its
parallel workers start, and then it only loads what is cached.

    python tests/warm.py         # compile (or load) in two processes; quiet unless it fails
"""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def warm_game_paths() -> None:
    """Compile (or load) the engine through ``Game`` (with and without an Automa seat: two
    compilations, ``engine.automa_deck.automa_switch``) and the greedy and mcts bots."""
    from caledonia_env import Game, GameConfig, agents
    game = Game(GameConfig(num_players=2, seed=0, automa={1: 3}))
    game.step(int(game.legal_actions()[0]))
    game = Game(GameConfig(num_players=4, seed=0, clans="draft"))
    game.step(int(game.legal_actions()[0]))
    for name in ("greedy", "mcts:4"):
        agents.make(name, seed=0).act(game.clone())


def warm_kernels() -> None:
    """Compile (or load) the vector env's kernels and the random playouts."""
    from caledonia_env import Game, GameConfig
    from caledonia_env.engine.layout import STATE_SIZE
    from caledonia_env.engine.playout import random_games
    from caledonia_env.envs.vector import CaledoniaVectorEnv
    env = CaledoniaVectorEnv(num_envs=2, num_players=2, seed=0)
    env.reset()
    env.step(env.sample_actions())
    game = Game(GameConfig(num_players=4, seed=0, clans="draft"))
    random_games(game.tables, 1, 0, np.zeros((1, STATE_SIZE), np.int32), None)


def warm_numba_cache() -> None:
    """Both warm-ups, which every later process shares through numba's cache by path:
    :func:`warm_kernels` in a second process while this one runs :func:`warm_game_paths`
    (the two use two cores; the engine functions both call are compiled twice, and each
    write to the cache replaces its file whole)."""
    helper = subprocess.Popen([sys.executable, "-c", "import warm; warm.warm_kernels()"],
                              cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    try:
        warm_game_paths()
    finally:
        out = helper.communicate()[0]
    if helper.returncode != 0:
        raise RuntimeError(f"warming numba's cache (vector env, playouts) failed:\n{out}")


if __name__ == "__main__":
    warm_numba_cache()
