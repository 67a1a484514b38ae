"""Weights files of the greedy evaluation (agents.weights), the shipped solo set, the agents
that play with one (greedy:W, mcts:N:W) and the tuner behind it (train.tune_weights)."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from caledonia_env import agents
from caledonia_env import tournament as tn
from caledonia_env.agents import greedy_value
from caledonia_env.config import GameConfig
from caledonia_env.agents.weights import (WEIGHT_NAMES, load_weights, save_weights,
                                          weights_from_dict, weights_path)
from caledonia_env.cli import main
from caledonia_env.data import load_ruleset
from caledonia_env.train import tune_weights


def test_names_follow_the_evaluation_indices():
    assert len(WEIGHT_NAMES) == greedy_value.N_WEIGHTS == len(set(WEIGHT_NAMES))
    assert WEIGHT_NAMES[greedy_value.W_MONEY_SLOPE] == "money_slope"
    assert WEIGHT_NAMES[greedy_value.W_CONTRACT_READY] == "contract_ready"
    assert WEIGHT_NAMES[greedy_value.W_NOISE] == "noise"


def test_a_written_file_reads_back_with_its_provenance(tmp_path):
    w = greedy_value.DEFAULT_WEIGHTS * 1.5
    path = save_weights(str(tmp_path / "w.json"), w, seed=3)
    np.testing.assert_array_equal(load_weights(path), w)
    assert json.loads(open(path).read())["seed"] == 3


@pytest.mark.parametrize("change, words", [
    (lambda d: d.pop("sell"), "missing ['sell']"),
    (lambda d: d.update(speed=1.0), "unknown ['speed']"),
    (lambda d: d.update(sell=-0.5), "'sell' must be a finite number >= 0"),
    (lambda d: d.update(sell="0.9"), "'sell' must be a finite number >= 0"),
    (lambda d: d.update(sell=True), "'sell' must be a finite number >= 0"),
])
def test_a_bad_weights_object_is_named(change, words):
    named = dict(zip(WEIGHT_NAMES, greedy_value.DEFAULT_WEIGHTS.tolist()))
    change(named)
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        weights_from_dict(named, "w.json")


def test_a_bad_weights_file_is_named(tmp_path):
    with pytest.raises(ValueError, match="shipped set"):
        load_weights("nosuchset")
    with pytest.raises(ValueError, match="cannot read"):
        load_weights(str(tmp_path / "missing.json"))
    (tmp_path / "x.json").write_text('{"w": 1}')
    with pytest.raises(ValueError, match="not a weights file"):
        load_weights(str(tmp_path / "x.json"))
    (tmp_path / "y.json").write_text("{")
    with pytest.raises(ValueError, match="malformed JSON"):
        load_weights(str(tmp_path / "y.json"))


def test_the_shipped_solo_set_names_the_ruleset_it_was_tuned_on():
    """The solo weights were tuned on the default before the printed market (the named
    ruleset market-estimate-2026-11); their file keeps that ruleset's fingerprint until they
    are retuned on today's default."""
    data = json.loads(open(weights_path("solo")).read())
    assert data["ruleset_fingerprint"] == load_ruleset("market-estimate-2026-11").fingerprint()
    assert data["ruleset_fingerprint"] != load_ruleset().fingerprint()
    w = load_weights("solo")
    assert not np.allclose(w, greedy_value.DEFAULT_WEIGHTS)
    assert w[greedy_value.W_NOISE] == greedy_value.DEFAULT_WEIGHTS[greedy_value.W_NOISE]
    assert data["tuned_mean_vp"] > data["start_mean_vp"]


@pytest.mark.parametrize("name, players", [("2p", 2), ("3p", 3), ("4p", 4)])
def test_the_shipped_sets_for_opponents_were_tuned_on_todays_default(name, players):
    """greedy_2p/3p/4p.json: tuned by caledonia tune-weights for their player count, on the
    default ruleset, with the opponent term switched on; their command writes the file."""
    data = json.loads(open(weights_path(name)).read())
    assert data["players"] == players
    assert data["ruleset_fingerprint"] == load_ruleset().fingerprint()
    assert data["command"].startswith(f"caledonia tune-weights --out "
                                      f"agents/pretrained/greedy_{name}.json --players {players} ")
    assert data["generations"] == data["generations_run"] == len(data["history"])
    w = load_weights(name)
    assert w[greedy_value.W_OPPONENT] > 0
    np.testing.assert_array_equal(agents.make(f"greedy:{name}").weights, w)


@pytest.mark.parametrize("name", ["solo", "2p", "3p", "4p"])
def test_each_shipped_sets_model_card_names_its_file(name):
    path = weights_path(name)
    card = open(path[:-5] + ".md", encoding="utf-8").read()
    data = json.loads(open(path).read())
    assert f"**Ruleset fingerprint**: `{data['ruleset_fingerprint']}`" in card
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    assert f"**File sha256**: `{digest}`" in card
    assert f"`{data['command']}`" in card or data["command"] in card


def test_greedy_and_mcts_play_with_named_weights():
    solo = load_weights("solo")
    np.testing.assert_array_equal(agents.make("greedy:solo").weights, solo)
    np.testing.assert_array_equal(agents.make("mcts:8c12:solo").evaluator.weights, solo)
    bot = agents.make("mcts:8h2c12:solo")
    assert (bot.rollouts, bot.candidates, bot.evaluator.horizon) == (8, 12, 2)
    np.testing.assert_array_equal(agents.make("greedy").weights, greedy_value.DEFAULT_WEIGHTS)
    with pytest.raises(ValueError, match="shipped set"):
        agents.make("mcts:8:nosuchset")


def test_the_network_searches_take_weights_after_or_instead_of_a_checkpoint():
    """``nmctsg:N[hH][:PATH][:WEIGHTS]``: the last part is WEIGHTS when it names a shipped
    set or a .json file; they value the leaves of a horizon, while nmctsg's opponents stay
    the greedy bot with its default weights (so without a horizon they change nothing)."""
    pytest.importorskip("torch")
    from caledonia_env import Game, GameConfig
    from caledonia_env.agents.checkpoint import pretrained_path
    solo, path = load_weights("solo"), pretrained_path(2)
    for name, want_path in (("nmctsg:4h2:solo", "pretrained"),
                            (f"nmctsg:4h2:{path}:solo", path),
                            (f"nmcts:4:{weights_path('solo')}", "pretrained")):
        bot = agents.make(name, seed=1)
        assert bot.path == want_path, name
        np.testing.assert_array_equal(bot.evaluator.weights, solo)
        np.testing.assert_array_equal(bot.evaluator.opponent_weights,
                                      greedy_value.DEFAULT_WEIGHTS)
    bot = agents.make(f"nmctsg:4h2:{path}", seed=1)
    assert bot.path == path and bot.evaluator.horizon == 2
    np.testing.assert_array_equal(bot.evaluator.weights, greedy_value.DEFAULT_WEIGHTS)
    game = Game(GameConfig(num_players=2, seed=3, clans="draft"))
    while not game.is_terminal and game.context != "main action":
        game.step(agents.make("greedy").act(game))
    margins = {}
    for name in ("nmctsg:8h1", "nmctsg:8h1:solo", "nmctsg:8", "nmctsg:8:solo"):
        bot = agents.make(name, seed=5)
        assert bot.act(game.clone()) in game.legal_actions()
        margins[name] = bot.last_stats["margins"]
    assert margins["nmctsg:8h1"] != margins["nmctsg:8h1:solo"]
    assert margins["nmctsg:8"] == margins["nmctsg:8:solo"]     # played to the end: exact VP
    with pytest.raises(ValueError, match="cannot read the weights"):
        agents.make("nmctsg:4:nosuchset.json")


def test_a_tournament_in_one_process_keeps_each_runs_weights():
    """The process's agent cache is keyed by the keyword options too."""
    def mean_vp(weights):
        spec = tn.TournamentSpec(players=("greedy",), games=3, seed=4,
                                 config=GameConfig(num_players=1, solo=True),
                                 agent_kw={"weights": weights})
        return np.mean([r["total"] for r in tn.run(spec)])
    default = mean_vp(greedy_value.DEFAULT_WEIGHTS)
    assert mean_vp(np.zeros(greedy_value.N_WEIGHTS)) != default
    assert mean_vp(greedy_value.DEFAULT_WEIGHTS) == default


def test_the_fitness_is_the_greedy_bots_solo_score():
    """solo_scores plays the tournament's solo games with greedy moves (ties broken by its
    own numba stream): each final VP is that of a finished solo game of the same setup."""
    starts = tune_weights.solo_starts(6, 4)
    a = tune_weights.solo_scores(greedy_value.DEFAULT_WEIGHTS, starts)
    np.testing.assert_array_equal(a, tune_weights.solo_scores(greedy_value.DEFAULT_WEIGHTS, starts))
    assert (a > 40).all() and (a < 250).all()
    zeros = tune_weights.solo_scores(np.zeros(greedy_value.N_WEIGHTS), starts)
    assert zeros.mean() < a.mean()


def test_tuning_is_reproducible_and_starts_from_its_init():
    starts = tune_weights.solo_starts(7, 5)
    one = tune_weights.tune(starts, 2, 4, seed=1)
    two = tune_weights.tune(starts, 2, 4, seed=1)
    np.testing.assert_array_equal(one["weights"], two["weights"])
    assert one["history"][0]["mean_fitness"] == pytest.approx(
        tune_weights.solo_scores(greedy_value.DEFAULT_WEIGHTS, starts).mean())
    assert one["start_fitness"] == one["history"][0]["mean_fitness"]
    assert one["fitness"] == tune_weights.solo_scores(one["weights"], starts).mean()
    assert (one["weights"] >= 0).all()
    assert one["weights"][greedy_value.W_NOISE] == greedy_value.DEFAULT_WEIGHTS[greedy_value.W_NOISE]
    assert not np.array_equal(tune_weights.tune(starts, 1, 4, seed=2)["weights"],
                              tune_weights.tune(starts, 1, 4, seed=3)["weights"])
    with pytest.raises(ValueError, match="population >= 4"):
        tune_weights.tune(starts, 1, 3, seed=1)


def test_the_command_writes_a_file_greedy_plays_with(tmp_path, capsys):
    out = tmp_path / "w.json"
    assert main(["tune-weights", "--games", "3", "--generations", "1", "--population", "4",
                 "--seed", "2", "-q", "--out", str(out)]) == 0
    assert "weights written to" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert (data["games"], data["generations"], data["population"]) == (3, 1, 4)
    assert data["command"] == (f"caledonia tune-weights --out {out} --games 3 --generations 1 "
                               f"--population 4 --seed 2")
    assert len(data["history"]) == 1
    np.testing.assert_array_equal(agents.make(f"greedy:{out}").weights, load_weights(str(out)))
    assert main(["tune-weights", "--population", "3", "--out", str(tmp_path / "v.json")]) == 2
    assert "--population >= 4" in capsys.readouterr().err
    assert main(["tune-weights", "--init", "nosuchset", "--out", str(tmp_path / "v.json")]) == 2
    assert "shipped set" in capsys.readouterr().err
