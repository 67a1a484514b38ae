"""train/library_policies.py: a library policy's win rate against a bot, seats rotated."""
import numpy as np
import pytest

from caledonia_env.train.library_policies import FunctionPlayer, format_rate, win_rate_vs


def test_win_rate_of_a_policy_against_random_with_rotated_seats():
    seen = []

    def first_legal(obs, masks):
        seen.append(obs.shape)
        return masks.argmax(axis=1)

    st = win_rate_vs(first_legal, games=6, num_players=2, seed=3)
    assert st["games"] == 6 and 0.0 <= st["win_rate"] <= 1.0 and st["vp"] > 0
    assert all(shape[1] == 5019 for shape in seen)
    assert "over 6 games" in format_rate("before", st)


def random_legal(seed):
    """A uniformly random legal policy in the ``policy(obs, masks)`` form."""
    rng = np.random.default_rng(seed)
    return lambda obs, masks: np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def test_a_seeded_policy_gives_the_same_rate_again():
    a = win_rate_vs(random_legal(0), games=8, num_players=3, seed=1)
    b = win_rate_vs(random_legal(0), games=8, num_players=3, seed=1)
    assert a == b and a["games"] == 8


def test_an_illegal_choice_is_reported():
    player = FunctionPlayer(lambda obs, masks: np.zeros(len(obs), int))
    masks = np.zeros((2, 5), np.int8)
    masks[:, 3] = 1
    with pytest.raises(ValueError, match="illegal action 0"):
        player.act_batch(np.zeros((2, 4), np.float32), masks)
