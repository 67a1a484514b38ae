"""benchmarks/strength.py: the match list parsing and the table line (synthetic rows)."""
import importlib.util
import os

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "strength.py")
spec = importlib.util.spec_from_file_location("strength_bench", _PATH)
strength = importlib.util.module_from_spec(spec)
spec.loader.exec_module(strength)


def test_games_and_targets_apply_to_the_matches_before_them():
    argv = ["--match", "a b", "--games", "10", "--match", "c d e", "--match", "f g",
            "--target", "0.5", "--games", "7", "--seed", "3"]
    assert strength.matches_from_argv(argv) == [
        (["a", "b"], 10, 0.5), (["c", "d", "e"], 7, 0.5), (["f", "g"], 7, 0.5)]


def _row(role, win, total, **comp):
    r = {c: 0 for c in strength.COMPONENTS}
    r.update(comp, role=role, win=win, total=total)
    return r


@pytest.mark.parametrize("wins, target, verdict", [(20, 0.25, "yes"), (0, 0.25, "no"),
                                                   (5, 0.25, "not shown")])
def test_summary_line_win_share_par_target_and_components(wins, target, verdict):
    rows = []
    for g in range(20):                       # a win share per game, 3 opponents
        rows.append(_row(0, 1.0 if g < wins else 0.0, 150, goods=60, imports=10))
        rows += [_row(k, 0.0 if g < wins else 1 / 3, 140, goods=50) for k in (1, 2, 3)]
    line = strength.summary_line(["ppo:x", "greedy", "greedy", "greedy"], rows, target, 12.3)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[0] == "4p `ppo:x` vs `greedy` + `greedy` + `greedy`" and cells[1] == "20"
    assert cells[2].startswith(f"{100 * wins / 20:.1f}%") and cells[3] == "25%"
    assert cells[5] == verdict and cells[6] == "150.0 : 140.0"
    assert cells[7].split(" / ")[1] == "60.0" and cells[7].split(" / ")[4] == "10.0"
    assert cells[8].split(" / ")[1] == "50.0"


@pytest.mark.parametrize("spec, says", [("ppo:{tmp}/missing.zip", "does not exist"),
                                        ("ppo:{tmp}", "is a folder")])
def test_a_bad_checkpoint_is_a_usage_error_before_any_game(tmp_path, capsys, spec, says):
    pytest.importorskip("torch")
    with pytest.raises(SystemExit) as e:
        strength.main(["--match", f"{spec.format(tmp=tmp_path)} greedy", "--games", "2"])
    assert e.value.code == 2
    assert says in capsys.readouterr().err


def test_each_match_counts_its_games_on_a_progress_bar(monkeypatch):
    """Long matches show their games going by (a tqdm bar on a terminal's stderr; here an
    enabled tqdm bar writing to a buffer)."""
    import io

    from tqdm import tqdm

    import caledonia_env.tournament as tn
    bars = []

    def recording_bar(total, label="games", quiet=False):
        bars.append(tqdm(total=total, desc=label, file=io.StringIO()))
        return bars[-1]

    monkeypatch.setattr(tn, "progress_bar", recording_bar)
    strength.main(["--match", "random random", "--games", "3", "--match",
                   "random random random", "--games", "2", "--workers", "1"])
    assert [(b.total, b.n, b.desc) for b in bars] == [
        (3, 3, "random random"), (2, 2, "random random random")]


def test_a_match_with_an_automa_seat_is_played_by_the_engine():
    """``automa:L`` in a match is an Automa seat of the game (A-0), not an agent to call:
    two games give the measured agent's two rows and the Automa's two."""
    rows, _ = strength.play(["greedy", "automa:2"], 2, 5, 1)
    assert sorted((r["agent"], r["role"]) for r in rows) == [
        ("automa:2", 1), ("automa:2", 1), ("greedy", 0), ("greedy", 0)]
    s = strength.summary(["greedy", "automa:2"], rows, None)
    share = sum(r["win"] for r in rows if r["agent"] == "greedy") / 2
    assert s["games"] == 2 and s["win"][0] == 100 * share and s["par"] == 50
