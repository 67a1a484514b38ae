"""The flat action space: stable ids, unique names, parse inverse of describe."""
import pytest

from caledonia_env import Game, GameConfig
from caledonia_env.engine import actions as A


def test_ids_are_stable_across_player_counts_and_maps():
    sizes = {Game(GameConfig(num_players=n, seed=s)).num_actions for n in (2, 3, 4) for s in (0, 1)}
    assert sizes == {A.N_ACTIONS}


def test_every_name_unique_and_parses_back():
    game = Game(GameConfig(num_players=4, seed=0))
    names = [game.describe_action(a) for a in range(A.N_ACTIONS)]
    assert len(set(names)) == A.N_ACTIONS
    for a in range(A.N_ACTIONS):
        assert game.parse_action(names[a]) == a


def test_names_use_map_labels():
    game = Game(GameConfig(num_players=2, seed=0, map="A1,B2,C1,D2"))
    node = 5
    name = game.describe_action(A.place_id(0, node))
    assert name == f"expand sheep @ {game.board.labels[node]}"
    assert game.parse_action("  Trade   BUY 2 whisky ") == A.trade_id(0, 5, 2)


def test_unknown_name_is_a_clear_error():
    game = Game(GameConfig(num_players=2, seed=0))
    with pytest.raises(ValueError, match="unknown action name 'fly to the moon'"):
        game.parse_action("fly to the moon")
    with pytest.raises(ValueError, match="outside"):
        game.describe_action(A.N_ACTIONS)


@pytest.mark.parametrize("bad, match", [
    (dict(num_players=5), "num_players must be"),
    (dict(num_players=1), "num_players must be"),
    (dict(seed=-1), "seed"),
    (dict(map="A1,B3,C1,D1"), "allowed sides"),
    (dict(map="B1,A1,C1,D1"), "in order A,B,C,D"),
    (dict(first_player=3, num_players=2), "first_player"),
])
def test_config_errors_list_allowed_values(bad, match):
    with pytest.raises(ValueError, match=match):
        GameConfig(**bad)
