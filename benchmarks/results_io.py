"""Result files: one JSON file per measurement run under ``benchmarks/results/``.

A benchmark run with ``--save`` writes ``benchmarks/results/<table>-<date>.json``;
``python benchmarks/report.py`` renders docs/results.md and the README's headline rows from
the newest file of each table. The schema (every key but ``source`` and ``notes`` is
required):

``table``
    the table of docs/results.md the file fills; files of one table share its columns.
``benchmark``
    the script that measured it (``fuzz.py``, ``strength.py``, …).
``title``, ``meaning``
    the table's heading and one sentence on what its numbers mean.
``command``, ``date``, ``commit``, ``machine``, ``ruleset``
    how, when (``YYYY-MM-DD``), on which checkout, on what (``cpu``, ``cores``, ``python``,
    ``numba``, ``platform``, or a ``description``) and on which economy it was measured.
``columns``
    ``[{"key", "label", "format"?, "unit"?}]``: ``format`` is a Python format spec for the
    numbers of the column (``",.0f"``), ``unit`` is written after the first number.
``rows``
    ``[{key: value}]``; a value is a string, a number, ``[lo, hi]`` (a range) or
    ``[value, lo, hi]`` (a value and its interval).
``source``
    ``"measured"`` for a file written by ``--save``; a transcribed figure says where from.
``notes``
    a sentence or two printed under the table.

Which figures the README's headline rows show is report.py's ``HEADLINES``.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
REQUIRED = ("table", "benchmark", "title", "meaning", "command", "date", "commit", "machine",
            "ruleset", "columns", "rows")


def machine() -> dict:
    """The machine a run measures: CPU model, cores, platform and the versions that matter."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")),
                       cpu)
    except OSError:
        pass
    info = {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version()}
    try:
        import numba
        info["numba"] = numba.__version__
    except ImportError:
        pass
    return info


def commit() -> str:
    """The checkout's commit (short id, ``+dirty`` with uncommitted changes), or ``unknown``."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def write_result(table: str, *, columns: list, rows: list, title: str = "", meaning: str = "",
                 ruleset: str = "default", notes: str = "", merge_key: str | tuple = "",
                 path: str | os.PathLike | None = None) -> Path:
    """Write one result file (see the module docstring) and return its path; the command,
    date, commit and machine are this run's. ``title`` and ``meaning`` default to those of
    the table's newest file. ``path`` defaults to ``benchmarks/results/<table>-<date>.json``;
    an existing file there is replaced, or with ``merge_key`` (a column key, or a tuple of
    them) keeps its rows whose ``merge_key`` values this run did not measure (one run per
    player count, or per player count and agent, one file)."""
    date = datetime.date.today().isoformat()
    out = Path(path) if path else RESULTS / f"{table}-{date}.json"
    before = [r for r in read_results(RESULTS) if r["table"] == table]
    last = max(before, key=lambda r: (r["date"], r["path"].name)) if before else {}
    title, meaning = title or last.get("title", table), meaning or last.get("meaning", "")
    if merge_key and out.exists():
        keys = (merge_key,) if isinstance(merge_key, str) else tuple(merge_key)
        which = lambda r: tuple(str(r.get(k, "")) if k != keys[0] else r.get(k) for k in keys)
        new = {which(r) for r in rows}
        old = json.loads(out.read_text(encoding="utf-8"))["rows"]
        rows = sorted([r for r in old if which(r) not in new] + rows, key=which)
    result = {"table": table, "benchmark": Path(sys.argv[0]).name, "title": title,
              "meaning": meaning,
              "command": "python " + shlex.join(
                  [os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
              "date": date, "commit": commit(), "machine": machine(), "ruleset": ruleset,
              "source": "measured", "columns": columns, "rows": rows}
    if notes:
        result["notes"] = notes
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"result written to {out}", file=sys.stderr)
    return out


def read_results(folder: str | os.PathLike = RESULTS) -> list[dict]:
    """Every result file of ``folder``, parsed, with its ``path``; ``ValueError`` naming the
    file for one that is not valid JSON or lacks a required key."""
    results = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            r = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not valid JSON ({e})") from None
        missing = [k for k in REQUIRED if k not in r]
        if missing:
            raise ValueError(f"{path}: missing {', '.join(missing)}")
        try:
            datetime.date.fromisoformat(r["date"])
        except (TypeError, ValueError):
            raise ValueError(f"{path}: date {r['date']!r} is not YYYY-MM-DD") from None
        r["path"] = path
        results.append(r)
    return results
