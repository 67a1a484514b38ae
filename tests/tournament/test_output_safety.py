"""No command can lose a user's results (docs/cli.md "Output files", docs/scale.md
"Resuming"): --out never replaces a write-protected file or what is not a regular file,
--resume refuses the file of another study (naming the difference), nothing is written
before the first result is in, and an interruption says truthfully what was kept.

Tests run as root here: the checks read mode bits, never os.access."""
import json
import os
import stat
import subprocess
import sys
import time

import pytest

from caledonia_env import scale
from caledonia_env import tournament as T
from caledonia_env.config import GameConfig
from caledonia_env.atomic import atomic_path, refuse_replacing
from caledonia_env.cli import main

SPEC = T.TournamentSpec(players=("random", "random"), games=3, seed=5)


def _play(argv):
    return ["play", "-q"] + argv


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A 3-game, 2-player results file (6 rows) and its bytes."""
    out = tmp_path_factory.mktemp("results") / "valuable.csv"
    scale.run_study(SPEC, str(out), backend="local", workers=1)
    return out, out.read_bytes()


@pytest.fixture
def valuable(results, tmp_path):
    """A fresh copy of the results file."""
    out = tmp_path / "valuable.csv"
    out.write_bytes(results[1])
    return out


# --------------------------------------------------------------- what --out refuses
def test_refuse_replacing_reads_the_mode_bits_and_the_file_kind(tmp_path):
    ok = tmp_path / "ok.csv"
    ok.write_text("x")
    refuse_replacing(ok)                       # a writable regular file
    refuse_replacing(tmp_path / "new.csv")     # an absent one
    ro = tmp_path / "ro.csv"
    ro.write_text("keep")
    ro.chmod(0o444)
    link = tmp_path / "link.csv"
    link.symlink_to(ok)
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for path, needle in ((ro, r"write-protected \(mode 0444\)"), (link, "a symbolic link"),
                         (fifo, "a FIFO"), (tmp_path, "a folder")):
        with pytest.raises(ValueError, match=needle):
            refuse_replacing(path, "--out")
        with pytest.raises(ValueError, match=needle):
            with atomic_path(path):
                pytest.fail("nothing may be written")
    assert ro.read_text() == "keep" and stat.S_IMODE(ro.stat().st_mode) == 0o444
    assert link.is_symlink() and ok.read_text() == "x"
    assert sorted(os.listdir(tmp_path)) == ["link.csv", "ok.csv", "pipe.csv", "ro.csv"]


@pytest.mark.parametrize("kind", ["read-only", "symlink", "fifo", "read-only-resume"])
def test_play_refuses_an_out_it_may_not_replace(kind, valuable, tmp_path, capsys):
    before = valuable.read_bytes()
    out, extra = valuable, []
    if kind.startswith("read-only"):
        valuable.chmod(0o444)
        needle = "chmod u+w"
        extra = ["--resume"] if kind.endswith("resume") else []
    elif kind == "symlink":
        out = tmp_path / "link.csv"
        out.symlink_to(valuable)
        needle = "symbolic link"
    else:
        out = tmp_path / "pipe.csv"
        os.mkfifo(out)
        needle = "FIFO"
    assert main(_play(["--players", "random,random", "--games", "3", "--seed", "5",
                       "--out", str(out)] + extra)) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err
    assert valuable.read_bytes() == before
    if kind.startswith("read-only"):
        assert stat.S_IMODE(valuable.stat().st_mode) == 0o444
    if kind == "symlink":
        assert out.is_symlink()
    if kind == "fifo":
        assert stat.S_ISFIFO(os.lstat(out).st_mode)


def test_play_refuses_a_device_file(tmp_path, capsys):
    """A character device (made here, as /dev/null's twin, when the tests may make one)."""
    dev = tmp_path / "null.csv"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("making a device node needs root")
    assert main(_play(["--players", "random,random", "--games", "1", "--out", str(dev)])) == 2
    assert "a character device" in capsys.readouterr().err
    assert stat.S_ISCHR(os.lstat(dev).st_mode)


# --------------------------------------------------------------------- --resume
RULESET = {"final_scoring": {"money_per_vp": 9}}


@pytest.mark.parametrize("other, needle", [
    (dict(players=("greedy", "random")), "agent is 'random', this study's is 'greedy'"),
    (dict(players=("random", "random", "random")), "this study has 3 players"),
    (dict(seed=6), "game seed"),
    (dict(games=2), "games 0-1"),
    (dict(config=GameConfig(num_players=2, clans=("stewart", "campbell"))),
     "clan_mode is 'draft', this study's is 'fixed'"),
    (dict(config=GameConfig(num_players=2, ports=False)),
     "variants is '', this study's is 'no-ports'"),
    (dict(ruleset="RULESET"), "ruleset is 'bundled'"),
    (dict(config=GameConfig(num_players=2, map="A1,B1,C1,D1")), "map is"),
])
def test_resume_refuses_another_study_naming_the_difference(other, needle, valuable,
                                                            tmp_path):
    if other.get("ruleset") == "RULESET":
        path = tmp_path / "rules.json"
        path.write_text(json.dumps(RULESET))
        other = dict(config=GameConfig(num_players=2, ruleset=str(path)))
    before = valuable.read_bytes()
    spec = T.TournamentSpec(**{**dict(players=SPEC.players, games=8, seed=SPEC.seed), **other})
    with pytest.raises(ValueError, match="another study|games 0-1") as e:
        scale.run_study(spec, str(valuable), backend="local", workers=1, resume=True)
    assert needle in str(e.value) and "\n" not in str(e.value)
    assert valuable.read_bytes() == before


def test_resume_accepts_the_same_study_and_only_plays_the_rest(valuable):
    spec = T.TournamentSpec(players=SPEC.players, games=5, seed=SPEC.seed)
    summary = scale.run_study(spec, str(valuable), backend="local", workers=1, resume=True)
    assert (summary["skipped"], summary["games"]) == (3, 2)
    assert len(scale.read_rows(str(valuable))) == 10


@pytest.mark.parametrize("text", ["hello\nworld\n", "game,player\n1,2\n",
                                  ",".join(T.CSV_FIELDS) + "\nnot,a,row\n" + "x" * 20 + "\n"])
def test_resume_refuses_a_file_that_is_not_a_results_file(text, tmp_path, capsys):
    out = tmp_path / "notes.csv"
    out.write_text(text)
    with pytest.raises(ValueError, match="not a results file"):
        scale.run_study(SPEC, str(out), backend="local", workers=1, resume=True)
    assert main(_play(["--players", "random,random", "--games", "3", "--resume",
                       "--out", str(out)])) == 2
    err = capsys.readouterr().err
    assert "not a results file" in err and err.count("\n") == 1
    assert out.read_text() == text


def test_cli_resume_of_another_player_list_exits_2_and_keeps_the_file(valuable, capsys):
    before = valuable.read_bytes()
    assert main(_play(["--players", "random,random,random", "--games", "6", "--seed", "5",
                       "--resume", "--out", str(valuable)])) == 2
    err = capsys.readouterr().err
    assert "another study" in err and err.count("\n") == 1
    assert valuable.read_bytes() == before


def test_balance_resume_matches_its_design(tmp_path, capsys):
    """An assigned-design balance file resumes under the same options (seats and clans of
    the schedule match) and is refused by --design drafted."""
    out = tmp_path / "b.csv"
    common = ["balance", "--agent", "random", "--players", "2", "--plot", "", "-q",
              "--clans", "stewart,campbell,mackenzie", "--out", str(out)]
    assert main(common + ["--games", "3"]) == 0
    assert main(common + ["--games", "6", "--resume"]) == 0
    assert "3 games already in" in capsys.readouterr().out
    before = out.read_bytes()
    drafted = [a for a in common if a not in ("--clans", "stewart,campbell,mackenzie")]
    assert main(drafted + ["--games", "6", "--resume", "--design", "drafted"]) == 2
    assert "clan_mode is 'fixed', this study's is 'draft'" in capsys.readouterr().err
    assert out.read_bytes() == before


# ------------------------------------------------------- nothing written too early
def test_nothing_is_written_before_the_first_result(valuable, monkeypatch):
    """A backend that fails before its first result leaves --out as it was."""
    def broken(*args):
        raise RuntimeError("backend down")
        yield                                   # a generator, like the real one

    monkeypatch.setattr(scale, "_local_results", broken)
    before = valuable.read_bytes()
    spec = T.TournamentSpec(players=SPEC.players, games=5, seed=SPEC.seed)
    for resume in (False, True):
        with pytest.raises(RuntimeError, match="backend down"):
            scale.run_study(spec, str(valuable), backend="local", resume=resume)
        assert valuable.read_bytes() == before
    assert sorted(os.listdir(valuable.parent)) == ["valuable.csv"]


# ------------------------------------------------------------ interruption notes
def _interrupt_after(monkeypatch, chunks: int):
    real = scale.play_chunk
    calls = []

    def play_chunk(study, games, *args):
        calls.append(games)
        if len(calls) > chunks:
            raise KeyboardInterrupt
        return real(study, games, *args)

    monkeypatch.setattr(scale, "play_chunk", play_chunk)


def test_interrupt_of_a_streamed_run_says_what_was_kept(tmp_path, monkeypatch, capsys):
    out = tmp_path / "s.csv"
    argv = _play(["--players", "random,random", "--games", "4", "--seed", "5",
                  "--resume", "--out", str(out)])
    _interrupt_after(monkeypatch, 2)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert f"2 complete games kept in {out}; run the same command with --resume" in err
    assert "no partial output" not in err
    assert len(scale.read_rows(str(out))) == 4
    monkeypatch.undo()
    assert main(argv) == 0
    assert "2 games already in" in capsys.readouterr().out
    assert len(scale.read_rows(str(out))) == 8


def test_interrupt_before_any_result_says_the_file_was_left(valuable, monkeypatch, capsys):
    before = valuable.read_bytes()
    _interrupt_after(monkeypatch, 0)
    assert main(_play(["--players", "random,random", "--games", "4", "--backend", "local",
                       "--resume", "--out", str(valuable), "--seed", "5"])) == 130
    assert f"{valuable} was left as it was" in capsys.readouterr().err
    assert valuable.read_bytes() == before


def test_interrupt_of_a_plain_play_out_keeps_the_finished_games(tmp_path, monkeypatch,
                                                                 capsys):
    """Issue #75: Ctrl+C on a plain ``play --out`` kept none of the finished games and did
    not mention --resume. Now the games are streamed and the message gives the command."""
    out = tmp_path / "r.csv"
    argv = _play(["--players", "random,random", "--games", "4", "--seed", "5",
                  "--out", str(out)])
    _interrupt_after(monkeypatch, 2)
    assert main(argv) == 130
    err = capsys.readouterr().err
    resume = "caledonia " + " ".join(argv + ["--resume"])
    assert f"2 complete games kept in {out}; run the same command with --resume to play " \
           f"the rest: {resume}" in err, err
    assert len(scale.read_rows(str(out))) == 4
    monkeypatch.undo()
    assert main(argv[:] + ["--resume"]) == 0
    assert "2 games already in" in capsys.readouterr().out
    assert len(scale.read_rows(str(out))) == 8
    assert sorted(os.listdir(tmp_path)) == ["r.csv"]


def test_run_study_reports_what_an_interruption_kept(tmp_path):
    out = tmp_path / "s.csv"
    spec = T.TournamentSpec(players=SPEC.players, games=4, seed=SPEC.seed)

    def stop(rows):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as e:
        scale.run_study(spec, str(out), backend="local", workers=1, chunk=1, on_rows=stop)
    assert e.value.study_output == (str(out), 1)
    assert scale.interrupt_note(e.value) == (f"1 complete game kept in {out}; run the same "
                                             f"command with --resume to play the rest")
    assert len(scale.read_rows(str(out))) == 2
    untouched = KeyboardInterrupt()
    untouched.study_output = (str(tmp_path / "new.csv"), None)
    assert scale.interrupt_note(untouched) == "no output file was written"
    assert scale.interrupt_note(KeyboardInterrupt()) is None


def test_an_interruption_inside_a_write_counts_the_games_in_the_file(tmp_path,
                                                                      monkeypatch):
    """Ctrl-C / SIGTERM during the second chunk's fsync: its rows are in the file though
    the run had not counted them yet; the note counts the file (2 games), not the run."""
    out = tmp_path / "s.csv"
    spec = T.TournamentSpec(players=SPEC.players, games=4, seed=SPEC.seed)
    real, calls = os.fsync, []

    def fsync(fd):
        real(fd)
        calls.append(fd)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt) as e:
        scale.run_study(spec, str(out), backend="local", workers=1, chunk=1)
    monkeypatch.undo()
    assert e.value.study_output == (str(out), 2)
    assert len(scale.read_rows(str(out))) == 4


def test_resume_refuses_a_ruleset_whose_numbers_changed(tmp_path):
    """Same --ruleset path, other content: the fingerprint tells them apart."""
    rules = tmp_path / "rules.json"
    rules.write_text("{}")
    out = tmp_path / "r.csv"
    spec = T.TournamentSpec(players=SPEC.players, games=2, seed=1,
                            config=GameConfig(num_players=2, ruleset=str(rules)))
    scale.run_study(spec, str(out), backend="local", workers=1)
    rules.write_text(json.dumps(RULESET))
    more = T.TournamentSpec(players=SPEC.players, games=4, seed=1,
                            config=GameConfig(num_players=2, ruleset=str(rules)))
    with pytest.raises(ValueError, match="ruleset_fingerprint is"):
        scale.run_study(more, str(out), backend="local", workers=1, resume=True)


def test_resume_keeps_one_cut_game_anywhere_but_refuses_more():
    """Ray finishes chunks out of order, so the game cut by an interruption need not be the
    highest-numbered; one cut game is resumed, several short games are another study."""
    study = scale.TournamentStudy(T.TournamentSpec(players=SPEC.players, games=6, seed=5))
    rows = T.run(T.TournamentSpec(players=SPEC.players, games=4, seed=5))
    cut = [r for r in rows if not (r["game"] == 1 and r["player"] == 1)]
    scale.check_resume(cut, study, "x.csv")
    twice = [r for r in cut if not (r["game"] == 2 and r["player"] == 1)]
    with pytest.raises(ValueError, match=r"game 1 has players \[0\], this study has 2"):
        scale.check_resume(twice, study, "x.csv")
    doubled = rows + [dict(rows[0])]
    with pytest.raises(ValueError, match=r"game 0 has players \[0, 0, 1\]"):
        scale.check_resume(doubled, study, "x.csv")
    duplicate = [dict(r, player=0) if r["game"] == 3 else r for r in rows]
    with pytest.raises(ValueError, match=r"game 3 has players \[0, 0\]"):
        scale.check_resume(duplicate, study, "x.csv")


def test_resume_checks_every_game_not_a_sample():
    """400 games of this study but one, game 201, of another seed: found."""
    template = T.run(T.TournamentSpec(players=SPEC.players, games=1, seed=5))
    rows = [dict(r, game=g, game_seed=T.game_seeds(5 if g != 201 else 9, g, 2)[0])
            for g in range(400) for r in template]
    study = scale.TournamentStudy(T.TournamentSpec(players=SPEC.players, games=400, seed=5))
    with pytest.raises(ValueError, match="game 201 has game seed"):
        scale.check_resume(rows, study, "x.csv")


# ------------------------------------------------- one run per file (issue #75)
HOLD = """
import sys, time
from caledonia_env.tournament import lock_output
with lock_output(sys.argv[1], "--out"):
    print("locked", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def held(tmp_path):
    """Another process holding the lock of tmp_path/s.csv: (out, the process)."""
    out = tmp_path / "s.csv"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline() == "locked\n"
        yield out, proc
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("argv", [
    ["play", "-q", "--players", "random,random", "--games", "2"],
    ["play", "-q", "--players", "random,random", "--games", "2", "--resume"],
    ["balance", "-q", "--agent", "random", "--players", "2", "--games", "2", "--plot", ""],
])
def test_a_second_run_on_a_locked_out_fails_at_once_naming_the_first(argv, held, capsys):
    out, proc = held
    out.write_text("precious\n")
    t0 = time.perf_counter()
    assert main(argv + ["--out", str(out)]) == 2
    assert time.perf_counter() - t0 < 5               # at once, not after the games
    err = capsys.readouterr().err
    assert f"--out {out} is being written by another run (pid {proc.pid}: caledonia" in err
    assert err.count("\n") == 1, err
    assert out.read_text() == "precious\n"


def test_run_study_refuses_a_locked_out_and_a_dead_holder_does_not_block(held):
    out, proc = held
    with pytest.raises(T.OutputBusy, match=f"pid {proc.pid}"):
        scale.run_study(SPEC, str(out), backend="local", workers=1)
    assert not out.exists()
    proc.kill()                                       # killed: its lock file stays behind
    proc.wait()
    assert os.path.exists(T.output.lock_path(out))
    scale.run_study(SPEC, str(out), backend="local", workers=1)
    assert len(scale.read_rows(str(out))) == 6
    assert sorted(os.listdir(out.parent)) == ["s.csv"]   # released: the lock file removed


def test_the_lock_is_reentrant_and_released_on_error(tmp_path):
    out = str(tmp_path / "x.csv")
    with pytest.raises(RuntimeError, match="boom"):
        with T.lock_output(out):
            with T.lock_output(out):                  # the CLI's lock, then run_study's
                assert os.path.exists(T.output.lock_path(out))
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []
    with T.lock_output(out):
        pass


@pytest.mark.slow
def test_two_concurrent_runs_on_one_file_never_lose_a_game(tmp_path, capsys):
    """Issue #75: two ``play --resume --out`` runs at once ended with 350 of 400 games and
    exit 0. Now the second fails at once naming the first; the first writes every game."""
    out = tmp_path / "cc.csv"
    argv = ["play", "-q", "--players", "random,random", "--games", "300", "--seed", "3",
            "--resume", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "caledonia_env"] + argv,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lock = T.output.lock_path(out)
    deadline = time.monotonic() + 60
    while not (os.path.exists(lock) and open(lock).read().startswith(f"{proc.pid}\n")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.02)
    assert main(argv) == 2
    assert f"pid {proc.pid}" in capsys.readouterr().err
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    rows = scale.read_rows(str(out))
    assert scale.complete_games(rows, 2) == set(range(300)) and len(rows) == 600
    assert main(argv) == 0
    assert "300 games already in" in capsys.readouterr().out


# ---------------------------------------------- every game in the file at the end
def test_a_file_that_lost_games_during_the_run_exits_1_naming_them(tmp_path, monkeypatch,
                                                                    capsys):
    """Another program replaces the file mid-run (as an unlocked run did): the final check
    finds the games gone and says which, instead of 'N rows written' and exit 0."""
    out = tmp_path / "s.csv"
    real = scale.play_chunk

    def play_chunk(study, games, *args):
        if games == [2]:                              # games 0 and 1 are in: replace the
            T.write_csv([], str(out))                 # file (this run appends to the old)
        return real(study, games, *args)

    monkeypatch.setattr(scale, "play_chunk", play_chunk)
    assert main(_play(["--players", "random,random", "--games", "4", "--out", str(out)])) == 1
    captured = capsys.readouterr()
    assert "rows written" not in captured.out
    assert (f"{out} does not hold every game of the study: 4 of 4 games missing or not "
            f"whole (games 0, 1, 2, 3)") in captured.err and "--resume" in captured.err


def test_check_complete_names_missing_and_doubled_games():
    rows = T.run(T.TournamentSpec(players=SPEC.players, games=3, seed=5))
    scale.check_complete(rows, 3, 2, "x.csv")
    with pytest.raises(scale.IncompleteStudy, match=r"2 of 3 games .*\(games 1, 2\)"):
        scale.check_complete(rows[:2] + rows[2:4] + rows[2:3], 3, 2, "x.csv")


# ------------------------------------------------------------- a cut last row
@pytest.mark.parametrize("cut", [1, 5, 40])
def test_a_cut_last_row_is_named_and_resumed_not_another_study(cut, valuable, capsys):
    """Issue #75: a truncated last row (here its fingerprint or more cut) read as 'another
    study'. It is now dropped, said so, and its game played again."""
    valuable.write_bytes(valuable.read_bytes()[:-cut])
    assert main(_play(["--players", "random,random", "--games", "3", "--seed", "5",
                       "--resume", "--out", str(valuable)])) == 0
    captured = capsys.readouterr()
    assert f"the last row of {valuable} was cut short (an interrupted write)" in captured.out
    assert "another study" not in captured.err + captured.out
    rows = scale.read_rows(str(valuable))
    assert len(rows) == 6 and valuable.read_bytes().endswith(b"\n")


def test_a_second_run_on_a_locked_record_folder_fails_at_once(tmp_path, capsys):
    """Two runs with different --out files but one --record-dir would overwrite each other's
    records: the folder is locked too (``<folder>.lock`` beside it)."""
    recs = tmp_path / "recs"
    recs.mkdir()
    (recs / "game_000000.json").write_text("precious\n")
    proc = subprocess.Popen([sys.executable, "-c", HOLD_FOLDER, str(recs)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "locked\n"
        argv = ["play", "-q", "--players", "random,random", "--games", "2",
                "--record-dir", str(recs)]
        assert main(argv + ["--out", str(tmp_path / "a.csv")]) == 2
        err = capsys.readouterr().err
        assert f"--record-dir {recs} is being written by another run (pid {proc.pid}" in err
        assert (recs / "game_000000.json").read_text() == "precious\n"
        assert not (tmp_path / "a.csv").exists()
    finally:
        proc.kill()
        proc.wait()


HOLD_FOLDER = """
import sys, time
from caledonia_env.tournament import lock_output
with lock_output(sys.argv[1], "--record-dir", folder=True):
    print("locked", flush=True)
    time.sleep(60)
"""
