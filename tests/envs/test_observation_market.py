"""The observation shows each good's price, not its marker's step number (R-3.1: the default
printed tracks repeat prices)."""
import numpy as np
import pytest
from market_tracks import WOOL, WOOL_TRACK, put_marker

from caledonia_env import Game, GameConfig
from caledonia_env.envs.observation import O_PRICE, OBS_SIZE, PRICE_SCALE, encode_obs


def test_price_feature_is_the_price_of_the_marker_step():
    g = Game(GameConfig(num_players=2, seed=3))
    s, T = g.state.copy(), g.tables
    out = np.zeros(OBS_SIZE, np.float32)
    seen = []
    for k in range(len(WOOL_TRACK)):
        put_marker(s, T, k)
        encode_obs(s, T, 0, out)
        seen.append(float(out[O_PRICE + WOOL]) * PRICE_SCALE)
    assert seen == pytest.approx(WOOL_TRACK)
