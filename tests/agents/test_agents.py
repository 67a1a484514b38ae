"""Baseline bots (agents/): registry, legality, determinism, evaluation, win-rate claims."""
from types import SimpleNamespace

import pytest
from invariants import play_checked

from caledonia_env import agents
from caledonia_env.agents import registry
from caledonia_env.agents.builtin import BUILTIN
from caledonia_env.agents.base import Agent
from caledonia_env.agents.greedy_value import DEFAULT_WEIGHTS, evaluate
from caledonia_env.agents.rollouts import final_margin
from caledonia_env.agents import mcts as mcts_module
from caledonia_env.agents.mcts import MCTSAgent
from caledonia_env import Game, GameConfig
from caledonia_env.envs import opponents
from caledonia_env.tournament import TournamentSpec, run, wilson

FAST = ("random", "greedy", "mcts:4")




# ------------------------------------------------------------------ registry
def test_available_and_make_every_name():
    names = agents.available()
    assert {"random", "greedy", "mcts"} <= set(names)
    for name in names + ["mcts:8", "mcts:0.05s"]:
        bot = agents.make(name, seed=3)
        assert isinstance(bot, Agent)
        assert bot.name == name and bot.seed == 3


def test_unknown_agent_lists_the_available_ones():
    with pytest.raises(ValueError) as e:
        agents.make("alphazero")
    msg = str(e.value)
    assert "alphazero" in msg
    for name in agents.available():
        assert name in msg
    assert "mcts:N" in msg or "mcts[:PARAM]" in msg


@pytest.mark.parametrize("bad", ["random:3", "greedy:x", "mcts:abc", "mcts:0", "mcts:-1s",
                                 "mcts:", "", "  "])
def test_bad_agent_parameters_raise_valueerror(bad):
    with pytest.raises(ValueError):
        agents.make(bad)


def test_register_prefix_kind_with_required_parameter():
    made = []

    class Fixed(Agent):
        def act(self, game):
            return int(game.legal_actions()[0])

    def factory(param, seed, **kw):
        made.append(param)
        return Fixed(seed)

    agents.register("test-fixed", factory, help="first legal action.", param="PATH of a file",
                    param_required=True, replace=True)
    try:
        bot = agents.make("test-fixed:runs/a:b.zip", seed=2)
        assert made == ["runs/a:b.zip"]           # only the first ':' separates the kind
        assert bot.name == "test-fixed:runs/a:b.zip"
        assert "test-fixed" not in agents.available()   # needs its parameter
        assert "test-fixed:PARAM" in agents.syntax()
        with pytest.raises(ValueError, match="needs a parameter"):
            agents.make("test-fixed")
        with pytest.raises(ValueError, match="already registered"):
            agents.register("test-fixed", factory)
    finally:
        registry._KINDS.pop("test-fixed", None)


def test_register_rejects_bad_kind_names():
    for bad in ("", "a:b", "a,b", " a"):
        with pytest.raises(ValueError):
            agents.register(bad, lambda param, seed: None)


def test_builtin_kinds_are_the_one_table():
    """Every built-in kind is a row of agents.builtin.BUILTIN, registered as it stands."""
    names = {k.name for k in BUILTIN}
    assert names == {"random", "greedy", "mcts", "vmcts", "automa", "ppo", "nmcts", "nmctsg",
                     "puct", "puctr", "qpolicy"}
    assert names <= {k.name for k in agents.kinds()}
    for k in BUILTIN:
        assert registry._KINDS[k.name] == k
        assert k.help and (k.param is None or k.example)
    assert "flat" in registry._KINDS["mcts"].help and "no tree" in registry._KINDS["mcts"].help


def test_one_random_policy_for_the_agents_and_the_envs():
    """agents' RandomAgent is the env layer's class with the Agent interface: the same moves
    from the same seed, in the registry and as the envs' built-in opponent."""
    bot = agents.make("random", seed=4)
    env_bot = opponents.make_opponent("random", seed=4)
    assert isinstance(bot, Agent) and isinstance(bot, opponents.RandomOpponent)
    assert type(bot).act is opponents.RandomOpponent.act and bot.name == "random"
    assert repr(bot) == "RandomAgent(name='random', seed=4)"
    game = Game(GameConfig(num_players=2, seed=3))
    moves = []
    while not game.is_terminal and len(moves) < 60:
        a = bot.act(game)
        assert env_bot.act(game) == a
        moves.append(a)
        game.step(a)
    bot.reset(4)
    replay = Game(GameConfig(num_players=2, seed=3))
    assert play_checked(replay, [bot, bot], limit=60) == moves


# ------------------------------------------------------------------ legality
@pytest.mark.parametrize("players", [2, 3, 4])
def test_R_2_2_every_bot_plays_only_legal_actions_to_the_end(players):
    """Every decision context of a full game (R-1.7 .. R-7): bots only choose masked actions."""
    game = Game(GameConfig(num_players=players, seed=11 + players))
    bots = [agents.make(FAST[i % 3], seed=i) for i in range(players)]
    play_checked(game, bots)
    assert game.is_terminal


def test_act_on_finished_game_raises():
    game = Game(GameConfig(num_players=2, seed=1))
    play_checked(game, [agents.make("random", 0), agents.make("random", 1)])
    for name in FAST:
        with pytest.raises(ValueError, match="game is over"):
            agents.make(name).act(game)


# -------------------------------------------------------------- determinism
@pytest.mark.parametrize("name", ["random", "greedy"])
def test_same_seed_same_game(name):
    def game_actions(seed):
        game = Game(GameConfig(num_players=3, seed=5))
        bots = [agents.make(name, seed=seed + i) for i in range(3)]
        return play_checked(game, bots)
    a = game_actions(1)
    assert a == game_actions(1)
    if name == "random":
        assert a != game_actions(2)


def test_mcts_deterministic_given_seed_and_reset():
    game = Game(GameConfig(num_players=2, seed=4))
    play_checked(game, [agents.make("greedy", 0), agents.make("greedy", 1)], limit=12)
    bot = agents.make("mcts:6", seed=9)
    first = [bot.act(game) for _ in range(2)]
    bot.reset(9)
    again = [bot.act(game) for _ in range(2)]
    assert first == again
    other = agents.make("mcts:6", seed=9)
    assert other.act(game) == first[0]


# --------------------------------------------------------------- evaluation
def test_R_7_evaluation_is_the_final_score_at_game_over():
    game = Game(GameConfig(num_players=3, seed=8))
    play_checked(game, [agents.make("greedy", i) for i in range(3)])
    scores = game.scores()
    for p in range(3):
        v = evaluate(game.state, game.tables, p, DEFAULT_WEIGHTS)
        assert int(v) == scores[p]
    margin = final_margin(game.state, game.tables, 0)
    assert int(round(margin)) == pytest.approx(scores[0] - max(scores[1:]), abs=1)


def test_R_3_8_greedy_does_not_pass_first_with_money_to_invest():
    """The opening main action of round 1 is an investment, not a pass (R-3.8 pass bonus)."""
    for seed in range(4):
        game = Game(GameConfig(num_players=2, seed=seed))
        bot = agents.make("greedy")
        while game.context != "main action":
            game.step(bot.act(game))
        assert game.describe_action(bot.act(game)) != "pass"


def test_mcts_rejects_bad_options():
    with pytest.raises(ValueError):
        MCTSAgent(rollouts=0)
    with pytest.raises(ValueError):
        MCTSAgent(seconds=0)
    with pytest.raises(ValueError):
        MCTSAgent(candidates=1)
    with pytest.raises(ValueError):
        MCTSAgent(rollout="smart")


def test_mcts_with_random_rollouts_plays_legally():
    game = Game(GameConfig(num_players=3, seed=6))
    bots = [agents.make("mcts:8", seed=1, rollout="random"), agents.make("random", 2),
            agents.make("greedy", 3)]
    play_checked(game, bots, limit=150)


def _charge_rollouts(monkeypatch, bot, clock, seconds):
    """Each rollout of ``bot``'s evaluator advances the fake ``clock`` by ``seconds``."""
    real = bot.evaluator.playouts

    def playouts(s, T, p, acts, seeds, out):
        real(s, T, p, acts, seeds, out)
        clock[0] += seconds * len(acts)
    monkeypatch.setattr(bot.evaluator, "playouts", playouts)


def test_mcts_time_budget_sizes_its_rounds_from_the_cost_of_a_rollout(monkeypatch):
    """``mcts:0.2s``: the first round plays one rollout a candidate, each later round its share
    of the time left at the cost per rollout measured so far. A fake clock (each rollout costs
    1 ms) makes the spending exact; no wall-clock time is asserted."""
    game = Game(GameConfig(num_players=2, seed=2))
    bot = agents.make("mcts:0.2s", seed=1)
    while game.context != "main action":
        game.step(bot.act(game))
    clock = [0.0]
    monkeypatch.setattr(mcts_module, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    _charge_rollouts(monkeypatch, bot, clock, 0.001)
    a = bot.act(game)
    assert game.legal_mask()[a]
    stats = bot.last_stats
    n = stats["candidates"]
    assert n >= 3
    # round one costs n ms; the rest of the 200 ms is spent, less the rounding down of
    # each round's rollouts to a whole number per survivor
    assert stats["seconds"] == pytest.approx(stats["rollouts"] * 0.001)
    assert 0.2 - 0.001 * n <= stats["seconds"] <= 0.2
    slow = agents.make("mcts:0.2s", seed=1)                 # 10 ms a rollout: fewer rollouts
    _charge_rollouts(monkeypatch, slow, clock, 0.01)
    slow.act(game)
    assert n <= slow.last_stats["rollouts"] <= 20 < stats["rollouts"]


# ------------------------------------------------------- win-rate claims
def _win_rate(players, games, seed):
    rows = run(TournamentSpec(players=tuple(players), games=games, seed=seed), workers=2)
    mine = [r for r in rows if r["player"] == 0]
    wins = sum(r["win"] for r in mine)
    return wins / len(mine), wilson(wins, len(mine))


@pytest.mark.slow
def test_greedy_beats_three_randoms_in_90_percent_of_4p_games():
    rate, (lo, hi) = _win_rate(["greedy", "random", "random", "random"], 150, seed=101)
    print(f"greedy vs 3 random: {rate:.3f} (95% CI {lo:.3f}-{hi:.3f})")
    assert rate >= 0.90
    assert lo > 0.80


@pytest.mark.slow
def test_mcts_beats_greedy_in_60_percent_of_2p_games():
    rate, (lo, hi) = _win_rate(["mcts:32", "greedy"], 40, seed=202)
    print(f"mcts:32 vs greedy: {rate:.3f} (95% CI {lo:.3f}-{hi:.3f})")
    assert rate >= 0.60
    assert lo > 0.50
