"""The file of a study (docs/scale.md): reading its rows (CSV or Parquet, with a Parquet
study's unmerged parts), checking that a resumed file holds the same study, and writing
finished chunks to it as they arrive, never before the first one; and its folder of game
records (:class:`RecordFolder`, ``caledonia play --record-dir``), written game by game.

pyarrow (the Parquet format) is an optional extra: imported where Parquet is read or written.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import time

from caledonia_env import tournament as T
from caledonia_env.atomic import atomic_path, refuse_replacing

FORMATS = (".csv", ".parquet")
INT_FIELDS = frozenset(("game", "game_seed", "player", "seat", "decisions", "money_left", "rank")
                       + T.SCORE_FIELDS)
FLOAT_FIELDS = frozenset(("win", "think_seconds"))


def num_players(study) -> int:
    """Rows per game of ``study``: its ``num_players``; a TypeError naming the attribute for
    an object without one."""
    n = getattr(study, "num_players", None)
    if n is None:
        raise TypeError(f"a study gives its rows per game as num_players; "
                        f"{type(study).__name__} has none")
    return int(n)


def _format(out: str) -> str:
    ext = os.path.splitext(out)[1].lower()
    if ext not in FORMATS:
        raise ValueError(f"out must end with one of {FORMATS}, got {out!r}")
    return ext


def typed_row(row: dict) -> dict:
    """A CSV row with the tournament's types (int / float / str)."""
    out = {}
    for k in T.CSV_FIELDS:
        v = row[k]
        out[k] = int(v) if k in INT_FIELDS else float(v) if k in FLOAT_FIELDS else v
    return out


def _parts_dir(out: str) -> str:
    return out + ".parts"


def cut_last_row(out: str) -> bool:
    """Whether the CSV ``out`` ends inside a row (no final newline: an interrupted write)."""
    try:
        with open(out, "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() == 0:
                return False
            f.seek(-1, os.SEEK_END)
            return f.read(1) != b"\n"
    except FileNotFoundError:
        return False


def _read_csv(out: str) -> list[dict]:
    """The rows of a results CSV; only its last line may be cut (an interruption): a last
    line without its newline is dropped even when it parses (a cut number or fingerprint
    would read as another study's); ValueError for a file that is not a results file."""
    rows = []
    cut = cut_last_row(out)
    with open(out, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            return rows
        if tuple(header) != T.CSV_FIELDS:
            raise ValueError(f"{out} is not a results file: its first line is not the "
                             f"results header ({','.join(T.CSV_FIELDS[:4])},...)")
        lines = list(reader)
    if cut and lines:
        lines.pop()
    for i, line in enumerate(lines):
        try:
            rows.append(typed_row(dict(zip(header, line, strict=True))))
        except (KeyError, TypeError, ValueError):
            if i + 1 < len(lines):
                raise ValueError(f"{out} is not a results file: line {i + 2} is not a "
                                 f"results row") from None
    return rows


def _read_parquet(fn: str) -> list[dict]:
    import pyarrow.parquet as pq      # inside: pyarrow is an optional extra (parquet output)
    try:
        table = pq.read_table(fn)
    except Exception as e:            # pyarrow raises its own error types for a foreign file
        raise ValueError(f"{fn} is not a results file: {e}") from None
    if tuple(table.column_names) != T.CSV_FIELDS:
        raise ValueError(f"{fn} is not a results file: its columns are not the results "
                         f"columns ({','.join(T.CSV_FIELDS[:4])},...)")
    return table.to_pylist()


def read_rows(out: str) -> list[dict]:
    """Every row of a study file (CSV, Parquet, and a Parquet study's unmerged parts),
    typed as ``tournament.play_game`` returns them, sorted by (game, player). A cut last
    line of a CSV is dropped; ValueError for a file that is not a results file."""
    rows = []
    if _format(out) == ".csv":
        if os.path.exists(out):
            rows = _read_csv(out)
    else:
        files = [out] if os.path.exists(out) else []
        parts = _parts_dir(out)
        if os.path.isdir(parts):
            files += [os.path.join(parts, f) for f in sorted(os.listdir(parts))
                      if f.endswith(".parquet")]
        for fn in files:
            rows.extend(_read_parquet(fn))
    rows.sort(key=lambda r: (r["game"], r["player"]))
    return rows


def complete_games(rows: list[dict], num_players: int) -> set[int]:
    """Games with all their player rows."""
    count: dict = {}
    for r in rows:
        count[r["game"]] = count.get(r["game"], 0) + 1
    return {g for g, c in count.items() if c == num_players}


class IncompleteStudy(RuntimeError):
    """A finished study whose file does not hold every game exactly once."""


def check_complete(rows: list[dict], games: int, num_players: int, out: str) -> None:
    """IncompleteStudy naming the games of ``0 .. games-1`` that ``rows`` (the file ``out``
    as written) do not hold exactly once with players ``0 .. num_players-1``."""
    by: dict = {}
    for r in rows:
        by.setdefault(r["game"], []).append(r["player"])
    want = list(range(num_players))
    bad = [g for g in range(games) if sorted(by.get(g, ())) != want]
    extra = sorted(g for g in by if not 0 <= g < games)
    if bad or extra:
        shown = ", ".join(map(str, bad[:20])) + (f" and {len(bad) - 20} more" if len(bad) > 20
                                                 else "")
        raise IncompleteStudy(
            f"{out} does not hold every game of the study: "
            + (f"{len(bad)} of {games} games missing or not whole (games {shown})"
               if bad else f"games {extra[:5]} are not of this study")
            + "; was the file changed by another program during the run? Rerun with "
              "--resume to play the missing games")


def check_resume(rows: list[dict], study, out: str) -> None:
    """ValueError (one line, naming the first difference) unless the rows of ``out`` are
    games of ``study``: game numbers below ``study.games``, each game's players ``0 .. k-1``
    once with ``k <= num_players`` and ``k < num_players`` for one game at most (an
    interruption cuts the last game written, nothing else), and for every game the study's
    own check: ``study.mismatch(rows) -> str | None`` (what differs), or
    ``study.belongs(row)`` of studies without it (a tournament's takes about 25 µs a game)."""
    n = num_players(study)
    games: dict = {}
    for r in rows:
        games.setdefault(r["game"], []).append(r)
    short = []
    for g, rs in games.items():
        if not 0 <= g < study.games:
            raise ValueError(f"resume: {out} holds game {g}; this study has games 0-"
                             f"{study.games - 1} (another study: another --games?)")
        players = sorted(r["player"] for r in rs)
        if len(players) < n:
            short.append(g)
        if len(players) > n or players != list(range(len(players))) or len(short) > 1:
            g = g if len(short) < 2 else short[0]
            raise ValueError(f"resume: {out} holds another study: game {g} has players "
                             f"{sorted(r['player'] for r in games[g])}, this study has {n} "
                             f"players per game")
    for g, rs in sorted(games.items()):
        if hasattr(study, "mismatch"):
            why = study.mismatch(rs)
        else:
            why = None if study.belongs(rs[0]) else (f"game {g} is not one of this study "
                                                     f"(another seed, agents or games)")
        if why:
            raise ValueError(f"resume: {out} holds another study: {why}; give another out "
                             f"file, or drop --resume to replace it")


def _table(rows: list[dict]):
    import pyarrow as pa              # inside: pyarrow is an optional extra (parquet output)
    return pa.Table.from_pylist([{k: r[k] for k in T.CSV_FIELDS} for r in rows])


def _write_parquet(rows: list[dict], path: str) -> None:
    """Write rows to ``path`` atomically (temporary file, then rename)."""
    import pyarrow.parquet as pq      # inside: pyarrow is an optional extra (parquet output)
    with atomic_path(path, ".parquet") as tmp:
        pq.write_table(_table(rows), tmp)


class MemorySink:
    """Keeps the rows in memory (``run_study`` without ``out``)."""

    def __init__(self):
        self.rows: list[dict] = []
        self.done: set = set()
        self.written = 0

    def add(self, rows: list[dict]) -> None:
        self.rows.extend(rows)

    def close(self, finished: bool) -> None:
        self.rows.sort(key=lambda r: (r["game"], r["player"]))


class StudySink:
    """Appends finished chunks to the study file; ``close`` sorts / merges it.

    Nothing is written before the first chunk arrives: until then ``out`` stays as it was
    (a backend that does not start, or an interruption, leaves it untouched). ``written``:
    complete games in ``out`` once it has been written to (kept ones included); after an
    interruption :meth:`games_written` says it truthfully."""

    def __init__(self, out: str, study, resume: bool):
        self.out, self.ext, self.resume = out, _format(out), resume
        refuse_replacing(out, "out")
        self.num_players = num_players(study)
        kept = read_rows(out) if resume else []
        self.cut = resume and self.ext == ".csv" and cut_last_row(out)
        self.rows: list[dict] | None = None     # the file's rows once closed finished
        check_resume(kept, study, out)
        self.done = complete_games(kept, self.num_players)
        self.kept = [r for r in kept if r["game"] in self.done]
        self.started = False
        self.written = 0
        self.n_parts = 0
        self.adding = False              # inside add: ``written`` may lag the file
        self.closed = False

    def forget(self, games: set) -> None:
        """Play ``games`` again although ``out`` holds them (their records are missing): their
        rows are dropped from the kept ones (``out`` is rewritten without them at the first
        write)."""
        self.done -= games
        self.kept = [r for r in self.kept if r["game"] in self.done]

    def _start(self) -> None:
        """First write: the kept complete games (a cut last line and incomplete games are
        dropped), or an empty file / parts folder of a new study."""
        self.started = True
        self.written = len(self.done)
        if self.ext == ".csv":
            T.write_csv(self.kept, self.out)
            self.f = open(self.out, "a", newline="")
            self.w = csv.DictWriter(self.f, fieldnames=list(T.CSV_FIELDS), extrasaction="ignore")
            return
        parts = _parts_dir(self.out)
        if not self.resume:
            shutil.rmtree(parts, ignore_errors=True)
        os.makedirs(parts, exist_ok=True)
        if os.path.exists(self.out):     # a finished study: its rows become a part
            if self.resume:
                os.replace(self.out, os.path.join(parts, f"part-{time.time_ns()}-base.parquet"))
            else:
                os.unlink(self.out)

    def add(self, rows: list[dict]) -> None:
        if not self.started:
            self._start()
        self.adding = True
        if self.ext == ".csv":
            self.w.writerows(rows)
            self.f.flush()
            os.fsync(self.f.fileno())
        else:
            self.n_parts += 1
            _write_parquet(rows, os.path.join(_parts_dir(self.out),
                                              f"part-{time.time_ns()}-{self.n_parts:06d}.parquet"))
        self.written += len({r["game"] for r in rows})
        self.adding = False

    def games_written(self) -> int | None:
        """Complete games in ``out`` once closed (None: never written to): ``written``, or
        counted in the file when an interruption came inside :meth:`add` (the rows may
        be in while the count is not)."""
        if not self.started:
            return None
        if self.adding:
            return len(complete_games(read_rows(self.out), self.num_players))
        return self.written

    def close(self, finished: bool) -> None:
        if self.closed:
            return
        self.closed = True
        if not self.started:
            if not (finished and self.resume and self.done):
                return                   # nothing played: out stays as it was
            self._start()                # every game was already there: sort / merge it
        if self.ext == ".csv":
            self.f.close()
            if finished:
                self.rows = read_rows(self.out)
                T.write_csv(self.rows, self.out)
        elif finished:
            self.rows = read_rows(self.out)
            _write_parquet(self.rows, self.out)
            shutil.rmtree(_parts_dir(self.out), ignore_errors=True)


RECORD_NAME = re.compile(r"game_(\d{6,})\.json")


def record_name(g: int) -> str:
    """The record file of game ``g`` in a record folder: ``game_000042.json``."""
    return f"game_{g:06d}.json"


class RecordFolder:
    """A study's folder of game records (``record_name(g)``: ``Game.to_json`` of game g),
    each written atomically (temporary file, then rename) as its game finishes, before the
    game's rows go to the study file: a game whose rows are in the file has its record.

    The folder is created (one level) at the first record. With ``resume`` every record
    already there must be one of this study's (``study.record_mismatch``: seed, config,
    agents, ruleset fingerprint), else ValueError naming the first difference; without
    it, records of the same names are replaced as their games finish, other files stay.
    A record file that may not be replaced (``atomic.refuse_replacing``) is refused first.
    ``present``: the games whose records are there; ``written``: records written this run."""

    def __init__(self, folder: str, study, resume: bool):
        if not hasattr(study, "record_mismatch"):
            raise ValueError(f"a {type(study).__name__} writes no game records")
        self.folder, self.study = folder, study
        self.present = self._listing()
        for g in self.present:
            if g < study.games:
                refuse_replacing(self.path(g), "record")
        if resume:
            self._check_resume()
        self.written = 0

    def path(self, g: int) -> str:
        return os.path.join(self.folder, record_name(g))

    def _listing(self) -> set[int]:
        if not os.path.isdir(self.folder):
            return set()
        return {int(m.group(1)) for m in map(RECORD_NAME.fullmatch, os.listdir(self.folder))
                if m}

    def _check_resume(self) -> None:
        """ValueError (one line, naming the first difference) unless every record in the
        folder is one of this study's games."""
        for g in sorted(self.present):
            if g >= self.study.games:
                why = (f"{record_name(g)} is game {g}, this study has games 0-"
                       f"{self.study.games - 1} (another --games?)")
            else:
                try:
                    with open(self.path(g), encoding="utf-8") as f:
                        record = json.load(f)
                except (OSError, ValueError):
                    record = None
                why = (f"{record_name(g)} is not a game record" if not isinstance(record, dict)
                       else self.study.record_mismatch(g, record))
            if why:
                raise ValueError(f"resume: {self.folder} holds the records of another study: "
                                 f"{why}; give another record folder")

    def add(self, records: dict[int, str]) -> None:
        """Write the records ``{game: JSON text}`` of finished games."""
        if not os.path.isdir(self.folder):
            os.mkdir(self.folder)
        for g, text in sorted(records.items()):
            T.write_text(self.path(g), text)
            self.present.add(g)
            self.written += 1

    def check_complete(self, games: int) -> None:
        """IncompleteStudy naming the games of ``0 .. games-1`` without their record file."""
        self.present = self._listing()
        missing = [g for g in range(games) if g not in self.present]
        if missing:
            shown = ", ".join(map(str, missing[:20])) + (
                f" and {len(missing) - 20} more" if len(missing) > 20 else "")
            raise IncompleteStudy(
                f"{self.folder} does not hold every game's record: {len(missing)} of {games} "
                f"records missing (games {shown}); was the folder changed by another program "
                f"during the run? Rerun with --resume to play those games again")


def interrupt_note(e: BaseException, command: str | None = None) -> str | None:
    """What an interrupted ``run_study`` left in its file (``e.study_output``) and record
    folder (``e.study_records``), said truthfully for a message: the complete games kept
    (with their records) and how to finish them (``command``: the exact command line that
    does), or that the file was left as it was, or for records without a file how many
    were kept; None if ``e`` did not come through ``run_study`` with a file or folder."""
    out, games = getattr(e, "study_output", (None, None))
    folder, records = getattr(e, "study_records", (None, 0))
    if out is None:
        if folder is None:
            return None
        kept = (f"{records} game record{'s' * (records != 1)} kept in {folder}" if records
                else f"no game record written to {folder} yet")
        return kept + "; a run without --out cannot be resumed (--resume reads its rows)"
    if games:
        return (f"{games} complete game{'s' * (games != 1)} kept in {out}"
                + (f" with their records in {folder}" if folder else "")
                + "; run the same command with --resume to play the rest"
                + (f": {command}" if command else ""))
    if games is None:
        return (f"{out} was left as it was" if os.path.lexists(out)
                else "no output file was written")
    return f"{out} holds no complete game yet"
