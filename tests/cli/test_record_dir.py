"""``caledonia play --out FILE --record-dir DIR`` streams both (docs/cli.md, "Errors and
output files"): every finished game keeps its row and its record when the run is
interrupted, ``--resume`` plays only the missing games (and a game whose record is
missing), the result equals an uninterrupted run's, and a record folder of another study
is refused."""
import os
import shlex

import pytest

from caledonia_env import scale
from caledonia_env import tournament as T
from caledonia_env.cli import main

STUDY = ["play", "-q", "--players", "random,greedy", "--games", "4", "--seed", "3"]


def _records(folder):
    """{file name: bytes} of a record folder."""
    return {n: (folder / n).read_bytes() for n in sorted(os.listdir(folder))}


def _same(rows):
    """Rows without their thinking time (the only column that differs between runs)."""
    return [{k: v for k, v in r.items() if k != "think_seconds"} for r in rows]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run: its rows and its records."""
    d = tmp_path_factory.mktemp("reference")
    assert main(STUDY + ["--out", str(d / "ref.csv"), "--record-dir", str(d / "rec")]) == 0
    return _same(scale.read_rows(str(d / "ref.csv"))), _records(d / "rec")


def _interrupt_after(monkeypatch, chunks: int):
    """Ctrl-C (KeyboardInterrupt) when the chunk after the first ``chunks`` starts."""
    real = scale.play_chunk
    calls = []

    def play_chunk(study, games, *args):
        calls.append(games)
        if len(calls) > chunks:
            raise KeyboardInterrupt
        return real(study, games, *args)

    monkeypatch.setattr(scale, "play_chunk", play_chunk)


@pytest.mark.parametrize("ext", [".csv", ".parquet"])
def test_interrupt_keeps_finished_rows_and_records_and_resume_completes_them(
        ext, reference, tmp_path, monkeypatch, capsys):
    if ext == ".parquet":
        pytest.importorskip("pyarrow")
    ref_rows, ref_records = reference
    out, rec = tmp_path / f"r{ext}", tmp_path / "rec"
    argv = STUDY + ["--out", str(out), "--record-dir", str(rec)]
    _interrupt_after(monkeypatch, 2)              # a record run plays one game per chunk
    assert main(argv) == 130
    err = capsys.readouterr().err
    command = shlex.join(["caledonia"] + argv + ["--resume"])
    assert (f"interrupted; 2 complete games kept in {out} with their records in {rec}; run "
            f"the same command with --resume to play the rest: {command}") in err, err
    assert _same(scale.read_rows(str(out))) == ref_rows[:4]          # games 0 and 1
    assert _records(rec) == {n: ref_records[n] for n in ("game_000000.json",
                                                         "game_000001.json")}
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".") or n.endswith(".lock")]
    monkeypatch.undo()
    assert main(argv + ["--resume"]) == 0
    assert "--resume: 2 games already in" in capsys.readouterr().out
    assert _same(scale.read_rows(str(out))) == ref_rows
    assert _records(rec) == ref_records
    assert sorted(os.listdir(tmp_path)) == sorted([out.name, "rec"])


def test_resume_plays_again_a_game_whose_record_is_missing(reference, tmp_path, capsys):
    """A game of --out without its record (deleted, or --out written without
    --record-dir) is replayed: games are deterministic, so its row and record come back."""
    ref_rows, ref_records = reference
    out, rec = tmp_path / "r.csv", tmp_path / "rec"
    T.write_csv([dict(r, think_seconds=0.0) for r in ref_rows[:6]], str(out))   # games 0-2
    rec.mkdir()
    for n in ("game_000000.json", "game_000002.json"):
        (rec / n).write_bytes(ref_records[n])
    assert main(STUDY + ["--out", str(out), "--record-dir", str(rec), "--resume"]) == 0
    text = capsys.readouterr().out
    assert f"--resume: 1 game of {out} had no record in {rec}; played again" in text
    assert "--resume: 2 games already in" in text
    assert _same(scale.read_rows(str(out))) == ref_rows
    assert _records(rec) == ref_records


@pytest.mark.parametrize("change, needle", [
    (["--seed", "4"], "game_000000.json has seed "),
    (["--players", "greedy,random"], "game_000000.json has agents ['random', 'greedy'], "
                                     "this study's is ['greedy', 'random']"),
    (["--map", "A1,B1,C1,D1"], "game_000000.json has map None, this study's game 0 has "
                               "['A1', 'B1', 'C1', 'D1']"),
    (["--games", "3"], "game_000003.json is game 3, this study has games 0-2"),
    ("not a record", "game_000001.json is not a game record"),
])
def test_resume_refuses_the_record_folder_of_another_study(change, needle, reference,
                                                           tmp_path, capsys):
    """The records already in the folder must be this study's games (config, agents,
    ruleset fingerprint, game numbers): else exit 2 naming the first difference, before
    any game, with the folder and --out as they were."""
    _, ref_records = reference
    rec = tmp_path / "rec"
    rec.mkdir()
    for n, data in ref_records.items():
        (rec / n).write_bytes(data)
    if change == "not a record":
        (rec / "game_000001.json").write_text("{not json")
        change = []
    before = _records(rec)
    argv = STUDY + change + ["--out", str(tmp_path / "r.csv"), "--record-dir", str(rec),
                             "--resume"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"resume: {rec} holds the records of another study: {needle}" in err, err
    assert err.count("\n") == 1
    assert _records(rec) == before
    assert sorted(os.listdir(tmp_path)) == ["rec"]


def test_a_record_lost_during_the_run_fails_the_final_check(tmp_path):
    """Every game must have its record at the end (IncompleteStudy naming the others)."""
    spec = T.TournamentSpec(players=("random", "random"), games=3, seed=5)
    rec = tmp_path / "rec"

    def lose_game_0(rows):
        if rows[0]["game"] == 1:
            os.unlink(rec / "game_000000.json")

    with pytest.raises(scale.IncompleteStudy, match=r"1 of 3 records missing \(games 0\)"):
        scale.run_study(spec, str(tmp_path / "s.csv"), backend="local", workers=1,
                        record_dir=str(rec), on_rows=lose_game_0)


def test_interrupt_of_a_record_dir_run_without_out_keeps_the_finished_records(
        reference, tmp_path, monkeypatch, capsys):
    _, ref_records = reference
    rec = tmp_path / "rec"
    _interrupt_after(monkeypatch, 3)
    assert main(STUDY + ["--record-dir", str(rec)]) == 130
    assert (f"interrupted; 3 game records kept in {rec}; a run without --out cannot be "
            f"resumed") in capsys.readouterr().err
    assert _records(rec) == {n: ref_records[n] for n in sorted(ref_records)[:3]}


def test_record_dir_on_ray_is_refused_before_anything_runs(tmp_path, capsys):
    rec = tmp_path / "rec"
    assert main(STUDY + ["--backend", "ray", "--out", str(tmp_path / "r.csv"),
                         "--record-dir", str(rec)]) == 2
    assert ("--record-dir works with the local backend only (Ray tasks send back no game "
            "records)") in capsys.readouterr().err
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="record_dir is for backend='local'"):
        scale.run_study(T.TournamentSpec(players=("random", "random"), games=1),
                        str(tmp_path / "r.csv"), backend="ray", record_dir=str(rec))
    assert os.listdir(tmp_path) == []


def test_a_study_without_records_is_refused_a_record_folder(tmp_path):
    class Rows:                           # a study that plays rows only (like EvalStudy)
        games = 1
    with pytest.raises(ValueError, match="a Rows writes no game records"):
        scale.RecordFolder(str(tmp_path / "rec"), Rows(), resume=False)
