"""The rating ladder (train/ladder.py, ``caledonia ladder``): the schedule's balance and seat
rotation, Automa rungs in 2 players only, ratings anchored at random on a tiny real run, the
SPRT's formula and verdicts on synthetic scores, and the command's errors and chart."""
import itertools
import math
from collections import Counter

import numpy as np
import pytest

from caledonia_env.cli import main
from caledonia_env.train import ladder

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
RUNGS5 = ["random", "greedy", "greedy:solo", "greedy:2p", "mcts:8"]


def _pairs(games):
    return Counter(p for _, t in games for p in itertools.combinations(sorted(t), 2))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_round_meets_every_pair_equally_and_rotates_the_seats(players):
    per_round = math.comb(5, players) * players
    games = ladder.schedule(RUNGS5, players, 2 * per_round, seed=3)
    assert len(games) == 2 * per_round
    for k in (per_round, 2 * per_round):          # after every full round
        met = _pairs(games[:k])
        assert set(met) == set(itertools.combinations(sorted(RUNGS5), 2))
        assert len(set(met.values())) == 1
    blocks: dict = {}
    for b, t in games:
        blocks.setdefault(b, []).append(t)
    assert len(blocks) == 2 * math.comb(5, players)
    for seatings in blocks.values():              # a block: every rung at every player index
        assert len(seatings) == players and len({frozenset(s) for s in seatings}) == 1
        for i in range(players):
            assert sorted(s[i] for s in seatings) == sorted(seatings[0])


def test_the_schedule_rounds_up_to_whole_blocks_and_follows_the_seed():
    games = ladder.schedule(RUNGS5, 3, 7, seed=1)
    assert len(games) == 9
    assert ladder.schedule(RUNGS5, 3, 7, seed=1) == games
    assert ladder.schedule(RUNGS5, 3, 30, seed=2) != ladder.schedule(RUNGS5, 3, 30, seed=1)


def test_automa_rungs_are_two_player_only_and_never_meet():
    rungs = ["random", "greedy", "automa:1", "automa:5"]
    games = ladder.schedule(ladder.check_rungs(rungs, 2), 2, 20, seed=0)
    assert all(sum(ladder.is_automa(a) for a in t) == 1 for _, t in games if
               any(ladder.is_automa(a) for a in t))
    assert ("automa:1", "automa:5") not in _pairs(games)
    assert len(ladder.tables(rungs, 2)) == 5
    with pytest.raises(ValueError, match="2-player only"):
        ladder.check_rungs(["random", "greedy", "automa:3"], 3)
    with pytest.raises(ValueError, match="at least 2 rungs"):
        ladder.check_rungs(["greedy"], 2)
    with pytest.raises(ValueError, match="unknown agent 'nope'; available"):
        ladder.check_rungs(["greedy", "nope"], 2)
    with pytest.raises(ValueError, match="repeated: greedy"):
        ladder.check_rungs(["greedy", "greedy", "random"], 2)


def test_a_tiny_ladder_rates_greedy_above_random_at_zero():
    games = ladder.schedule(["random", "greedy"], 2, 20, seed=11)
    rows = ladder.play(games, seed=11)
    assert len(rows) == 40 and sorted({r["game"] for r in rows}) == list(range(20))
    # the two games of a block share their setup, the rungs swapped
    for b in range(10):
        pair = [r for r in rows if r["block"] == b]
        assert len({r["game_seed"] for r in pair}) == 1
        assert {(r["player"], r["agent"]) for r in pair if r["game"] == 2 * b} == \
            {(1 - r["player"], r["agent"]) for r in pair if r["game"] == 2 * b + 1}
    table = {r["agent"]: r for r in ladder.rate(rows)}
    assert table["random"]["elo"] == 0.0 and table["random"]["ci"] == 0.0
    assert table["greedy"]["lo"] > 0          # greedy wins nearly every game against random
    assert table["greedy"]["games"] == table["random"]["games"] == 20
    assert table["greedy"]["cpu_s"] > 0
    text = ladder.format_ladder(list(table.values()))
    assert "random = 0" in text and "greedy" in text


def test_the_llr_is_walds_bernoulli_sum():
    s1 = 1 / (1 + 10 ** (-20 / 400))
    assert s1 == pytest.approx(0.528751, abs=1e-6)
    # one win, one loss, one tie, H0 0 Elo, H1 20 Elo, by hand
    hand = 1.5 * math.log(s1 / 0.5) + 1.5 * math.log((1 - s1) / 0.5)
    assert ladder.sprt_llr([1, 0, 0.5]) == pytest.approx(hand)
    assert hand == pytest.approx(-0.0049678, abs=1e-6)
    assert ladder.sprt_llr([1] * 10) == pytest.approx(10 * math.log(2 * s1))
    lo, hi = ladder.sprt_bounds(0.05, 0.05)
    assert lo == pytest.approx(-math.log(19)) and hi == pytest.approx(math.log(19))


def test_the_sprt_accepts_a_clearly_better_agent_and_rejects_an_equal_one():
    rng = np.random.default_rng(5)
    better = (rng.random(3000) < 0.7).astype(float)         # about +150 Elo
    res = ladder.sprt_test(better, step=2)
    assert res["verdict"] == "accept" and res["llr"] >= res["upper"]
    assert res["games"] < 300 and res["games"] % 2 == 0
    assert res["trajectory"][-1] == res["llr"] and len(res["trajectory"]) == res["games"] // 2
    equal = (rng.random(20000) < 0.5).astype(float)
    assert ladder.sprt_test(equal[:40])["verdict"] == "continue"
    res = ladder.sprt_test(equal)
    assert res["verdict"] == "reject" and res["llr"] <= res["lower"]
    with pytest.raises(ValueError, match="--elo1 must be above"):
        ladder.sprt_test(equal, elo0=10, elo1=5)


def test_sprt_plays_head_to_head_until_it_decides():
    res = ladder.sprt("greedy", "random", players=2, elo1=100, max_games=60, batch=10, seed=2)
    assert res["verdict"] == "accept" and res["games"] <= 60 and res["games"] % 2 == 0
    assert len(res["rows"]) == 2 * res["games"]
    assert res["score"] > 0.8
    with pytest.raises(ValueError, match="the same"):
        ladder.sprt("greedy", "greedy")
    with pytest.raises(ValueError, match="2-player only"):
        ladder.sprt("greedy", "automa:2", players=3)


def test_the_sprt_at_a_table_scores_only_new_against_old():
    games = ladder.sprt_schedule("greedy", "random", 3, range(2), opponents=("mcts:8",), seed=0)
    assert len(games) == 6 and all(sorted(t) == ["greedy", "mcts:8", "random"] for _, t in games)
    rows = [{"agent": "greedy", "rank": 3}, {"agent": "mcts:8", "rank": 1},
            {"agent": "random", "rank": 2}]
    assert ladder.score_of(rows, "greedy", "random") == 0.0
    rows[0]["rank"] = 2
    assert ladder.score_of(rows, "greedy", "random") == 0.5


def test_the_chart_is_a_png(tmp_path):
    table = [{"agent": "greedy", "elo": 400.0, "ci": 50.0, "cpu_s": 0.005},
             {"agent": "random", "elo": 0.0, "ci": 0.0, "cpu_s": 0.001},
             {"agent": "automa:3", "elo": 900.0, "ci": 80.0, "cpu_s": 0.0}]
    path = ladder.plot_ladder(table, str(tmp_path / "ladder.png"))
    assert open(path, "rb").read(8) == PNG_MAGIC


@pytest.mark.parametrize("argv, message", [
    (["--rungs", "greedy"], "needs at least 2 rungs"),
    (["--players", "3", "--rungs", "random,greedy,automa:1"], "2-player only"),
    (["--rungs", "random,bogus"], "unknown agent 'bogus'; available"),
    (["--accept", "greedy"], "--accept NEW and --against OLD go together"),
    (["--accept", "greedy", "--against", "random", "--elo0", "5", "--elo1", "5"],
     "--elo1 must be above"),
    (["--games", "0", "--rungs", "random,greedy"], "--games must be >= 1"),
])
def test_bad_options_exit_2_with_the_message(argv, message, capsys):
    assert main(["ladder", *argv]) == 2
    assert message in capsys.readouterr().err


def test_the_command_writes_its_table_chart_and_games_and_keeps_them(tmp_path, capsys):
    out, png = tmp_path / "ladder.csv", tmp_path / "ladder.png"
    assert main(["ladder", "--rungs", "random,greedy", "--games", "4", "--seed", "3", "-q",
                 "--out", str(out), "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "random = 0" in text and "4 games of 2 players" in text
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert len(out.read_text().splitlines()) == 1 + 8
    assert main(["ladder", "--rungs", "random,greedy", "--games", "4", "--out", str(out)]) == 2
    assert "exists" in capsys.readouterr().err
