"""Studies that stop when they know (``caledonia balance --until resolved``): the confidence
sequences keep their error rate under continuous monitoring (simulated streams, where a
fixed-n interval looked at after every batch does not), the verdicts, and real studies
that stop before their cap."""
import numpy as np
import pytest

from caledonia_env import tournament as tn
from caledonia_env.cli import main
from caledonia_env.config import GameConfig
from caledonia_env.tournament.arms import ArmFiles, Design, Until, make_arms, run_arms
from caledonia_env.tournament.sequential import (ABOVE, AT, BELOW, bonferroni,
                                                 confidence_sequence, first_verdict, verdicts)

ALPHA = 0.05
STREAMS, GAMES = 1000, 2000


def _wrong(lower, upper, mean, margin):
    """Per stream: whether any point gave a wrong verdict about ``mean`` (above / below on
    the wrong side, at par further than the margin)."""
    v = verdicts(lower, upper, 0.25, margin)
    return (((v == ABOVE) & (mean <= 0.25)) | ((v == BELOW) & (mean >= 0.25))
            | ((v == AT) & (abs(mean - 0.25) > margin))).any(axis=-1)


def test_bernoulli_streams_at_par_are_rarely_called_above_or_below():
    """1000 streams of 2000 games at par (p = 0.25), watched after every game: the share
    called above or below par at any time stays below alpha."""
    x = (np.random.default_rng(1).random((STREAMS, GAMES)) < 0.25).astype(float)
    lower, upper = confidence_sequence(x, ALPHA)
    wrong = ((lower > 0.25) | (upper < 0.25)).any(axis=1)
    assert wrong.mean() <= ALPHA
    assert (upper[:, -1] - lower[:, -1]).mean() < 0.08          # and it narrows


def test_a_fixed_n_interval_peeked_at_every_batch_breaks_the_rate():
    """The same streams judged by a fixed-n normal interval after every 50 games: far more
    than alpha of them are once called off par, which the sequence above avoids."""
    x = (np.random.default_rng(1).random((STREAMS, GAMES)) < 0.25).astype(float)
    n = np.arange(50, GAMES + 1, 50)
    p = np.cumsum(x, axis=1)[:, n - 1] / n
    half = 1.96 * np.sqrt(p * (1 - p) / n)
    assert ((p - half > 0.25) | (p + half < 0.25)).any(axis=1).mean() > 3 * ALPHA


def test_means_that_vary_from_game_to_game_and_at_par_verdicts():
    """Opponents change game to game (p alternating 0.10 / 0.40, mean par): no wrong
    verdict beyond alpha with a 3-point margin; a stream 6 points above par is not called
    at par beyond alpha either, and is called above par in most streams."""
    rng = np.random.default_rng(2)
    p = np.where(np.arange(GAMES) % 2 == 0, 0.10, 0.40)
    x = (rng.random((STREAMS, GAMES)) < p).astype(float)
    lower, upper = confidence_sequence(x, ALPHA)
    assert _wrong(lower, upper, 0.25, 0.03).mean() <= ALPHA
    y = (rng.random((STREAMS, GAMES)) < 0.31).astype(float)
    lower, upper = confidence_sequence(y, ALPHA)
    assert _wrong(lower, upper, 0.31, 0.03).mean() <= ALPHA
    assert (verdicts(lower, upper, 0.25, 0.03)[:, -1] == ABOVE).mean() > 0.5


def test_paired_differences_around_zero():
    """Paired differences in [-1, 1], mostly 0 (B changes few games): no false 'raises' or
    'lowers' beyond alpha; a real +5-point change is found, and sooner than its win shares
    would find it unpaired."""
    rng = np.random.default_rng(3)
    d = rng.choice([-1.0, 0.0, 1.0], p=[0.1, 0.8, 0.1], size=(STREAMS, GAMES))
    lower, upper = confidence_sequence(d, ALPHA, -1, 1)
    assert ((lower > 0) | (upper < 0)).any(axis=1).mean() <= ALPHA
    up = rng.choice([-1.0, 0.0, 1.0], p=[0.075, 0.8, 0.125], size=(200, GAMES))
    lower, upper = confidence_sequence(up, ALPHA, -1, 1)
    found = [first_verdict(lo, hi, 0.0, 0.01) for lo, hi in zip(lower, upper)]
    assert np.mean([v == ABOVE for v, _ in found]) > 0.5
    assert all(v in (ABOVE, "") for v, _ in found)


def test_first_verdict_bonferroni_and_bad_input():
    lower, upper = np.array([0.1, 0.2, 0.3]), np.array([0.6, 0.5, 0.4])
    assert first_verdict(lower, upper, 0.25, 0.01) == (ABOVE, 2)
    assert first_verdict(lower, upper, 0.3, 0.2) == (AT, 1)
    assert first_verdict(lower, upper, 0.35, 0.01) == ("", None)
    assert bonferroni(0.95, 8) == pytest.approx(0.05 / 8)
    with pytest.raises(ValueError, match="between 0 and 1"):
        bonferroni(1.0, 2)
    with pytest.raises(ValueError, match=r"lie in \[0.0, 1.0\]"):
        confidence_sequence([0.5, 2.0], 0.05)
    with pytest.raises(ValueError, match="batch must be a positive"):
        Until(batch=0)


# ------------------------------------------------------------ real studies
def test_a_clear_matchup_stops_before_its_cap(tmp_path, capsys):
    """cunningham against buchanan under greedy: both verdicts resolve after a few dozen
    games, far below the cap; the table says after how many."""
    out = tmp_path / "u.csv"
    assert main(["balance", "--players", "2", "--agent", "greedy", "--clans",
                 "cunningham,buchanan", "--until", "resolved", "--max-games", "400",
                 "--batch", "10", "--out", str(out), "--plot", "", "-q"]) == 0
    text = capsys.readouterr().out
    assert "every verdict resolved after" in text and "@" in text
    assert "above par" in text and "below par" in text
    played = int(text.split("every verdict resolved after ")[1].split()[0])
    assert played < 400 and played % 10 == 0
    assert f"{2 * played} rows written" in text


def test_a_paired_study_stops_and_a_resumed_one_stops_at_the_same_batch(tmp_path):
    """Identical rules (every difference 0) resolve as 'no change' within a 20-point margin
    before the cap; playing the same study again from its files (resume) plays no game and
    reaches the same verdicts after the same games."""
    clans = ("cunningham", "buchanan")
    spec = tn.TournamentSpec(players=("greedy",) * 2, games=1, seed=0,
                             config=GameConfig(num_players=2, first_player=0),
                             clan_schedule=tn.balance_schedule(clans, 2))
    arms = make_arms(spec, ("greedy",), 2, spec.template)
    paths = [str(tmp_path / a.file_name(k)) for k, a in enumerate(arms)]
    design, until = Design(2, margin=0.2), Until(batch=20, max_games=600)
    with ArmFiles(paths) as files:
        first = run_arms(arms, files, design, until=until)
    assert first.stopped == "resolved" and first.games < 600
    assert {v["text"] for v in first.verdicts} == {"no change (±20 pp)"}
    with ArmFiles(paths, resume=True) as files:
        again = run_arms(arms, files, design, until=until)
    assert files.kept == 2 * first.games and again.games == first.games
    assert [v["games_needed"] for v in again.verdicts] == \
        [v["games_needed"] for v in first.verdicts]
