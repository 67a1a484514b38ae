"""The search agents' moves pinned: the same seed plays the same game.

The hashes were recorded from the agents before their rollout and network code moved
into the shared evaluators (agents/search_values.py); a change of any search's behaviour
(candidates, determinizations, rollouts, priors, leaf values) changes its hash. The games
are played under the rules of the day they were recorded (``RULES_2026_11``), so that the
pins follow the searches, not the ruleset (tests/engine/test_engine_trace.py follows that).
"""
import hashlib

import pytest
from invariants import play_checked

from caledonia_env import Game, GameConfig, agents
from caledonia_env.config import RULES_2026_11

torch = pytest.importorskip("torch", reason="the network searches need the train extra (torch)")

from small_nets import save_small  # noqa: E402

MOVES = 40
PINNED = {
    # (name; PATH: a small random network, tests/small_nets.py; no PATH: the shipped policy
    #  of the player count), keyword options, players -> hash of the first MOVES actions
    ("mcts:8", (), 2): "f1ce28015f4289b3",
    ("mcts:8", (("rollout", "random"),), 2): "a20d6aacff7074d8",
    ("nmcts:4:PATH", (), 2): "0edb51a294d18ec1",
    ("nmctsg:4:PATH", (), 2): "63cfdc6fdd4b6156",
    ("nmcts:4:PATH", (("temperature", 1.0),), 2): "aa4430c98e96df93",
    ("puct:4:PATH", (), 2): "f96e906d00aa3d2f",
    ("puctr:4:PATH", (), 2): "f4e5630318a25f1b",
    ("puct:4:PATH", (("noise_frac", 0.25), ("temperature", 1.0)), 2): "eb8f149770b666a3",
    # the shipped 3-player policy of 2026-11-26 (agents/pretrained/ppo_3p.md): a new file
    # plays other moves; the two hashes were recorded with it
    ("nmctsg:4", (), 3): "9cfc1382a44ea441",
    ("puct:4", (), 3): "525f2ec236ab212b",
}


def moves_hash(kind, options, path, num_players=2, seed=5):
    """sha256 prefix of the first MOVES actions of a game with ``kind`` in every seat."""
    name = kind.replace("PATH", str(path))
    game = Game(GameConfig(num_players=num_players, seed=seed, **RULES_2026_11))
    bots = [agents.make(name, seed=10 + p, **dict(options)) for p in range(num_players)]
    actions = play_checked(game, bots, limit=MOVES)
    return hashlib.sha256(",".join(map(str, actions)).encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def small_net(tmp_path_factory):
    return save_small(tmp_path_factory.mktemp("pins") / "net.zip", 2, seed=7)


@pytest.mark.parametrize("kind,options,num_players", list(PINNED))
def test_search_agents_play_their_pinned_moves(kind, options, num_players, small_net, recwarn):
    got = moves_hash(kind, options, small_net, num_players)
    assert got == PINNED[kind, options, num_players]
