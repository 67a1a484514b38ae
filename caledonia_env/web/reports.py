"""The study reports ``caledonia serve`` shows (``--reports DIR``, default ``reports``): each
folder directly inside DIR that holds a report (``caledonia balance --report DIR/NAME``:
index.html, report.md, report.json) is listed by its name, with the title, date and first
conclusion of its report.json.

A request names a report and one of its three files, never a path: the name must be a plain
folder name (letters, digits, ``.``, ``_``, ``-``, not starting with a dot), the folder and
the file must be real ones (no symbolic link) inside DIR, and anything else, existing or
not, is the same "no report" answer. A report page is served under a Content-Security-Policy
that runs no script and loads nothing from outside (its images are data URIs).
"""
from __future__ import annotations

import html
import json
import os
import re
import stat
import urllib.parse
from pathlib import Path

#: where ``caledonia serve`` looks for reports by default (relative to its working folder)
REPORTS_DIR = "reports"
#: the files of a report a client may read, and their media types
SERVED = {"index.html": "text/html; charset=utf-8",
          "report.md": "text/markdown; charset=utf-8",
          "report.json": "application/json"}
#: largest report.json read for the listing (bytes)
MAX_JSON_BYTES = 4_000_000
#: a report page may style itself and show its embedded images, nothing more
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'self'")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,119}")


def _regular(path: Path, kind) -> bool:
    """Whether ``path`` is of ``kind`` (``stat.S_ISDIR``, ``stat.S_ISREG``) itself, not
    through a symbolic link."""
    try:
        return kind(os.lstat(path).st_mode)
    except OSError:
        return False


def report_file(folder, name: str, file: str = "index.html") -> Path:
    """The path of ``file`` of report ``name`` in ``folder``; LookupError, the same for
    every cause, unless ``name`` is a plain folder name, ``file`` one of :data:`SERVED` and
    both real (no link) inside ``folder``."""
    root = Path(folder)
    if not (isinstance(name, str) and _NAME.fullmatch(name) and file in SERVED):
        raise LookupError(name)
    report, path = root / name, root / name / file
    if not (_regular(report, stat.S_ISDIR) and _regular(path, stat.S_ISREG)):
        raise LookupError(name)
    if os.path.dirname(os.path.dirname(os.path.realpath(path))) != os.path.realpath(root):
        raise LookupError(name)
    return path


def _summary(path: Path) -> dict:
    """Title, date and first conclusion of a report.json (empty when unreadable)."""
    try:
        if os.lstat(path).st_size > MAX_JSON_BYTES or not _regular(path, stat.S_ISREG):
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    conclusions = data.get("conclusions") or [""]
    return {k: v for k, v in (("title", data.get("title")), ("written", data.get("written")),
                              ("conclusion", conclusions[0] if isinstance(conclusions, list)
                               else None))
            if isinstance(v, str)}


def list_reports(folder) -> list[dict]:
    """``[{"name", "title", "written", "conclusion"}]`` of the reports in ``folder``, by
    name (none when ``folder`` is missing); title, date and conclusion from report.json
    (the name, an empty date and conclusion when it cannot be read)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for name in names:
        try:
            report_file(folder, name)
        except LookupError:
            continue
        info = _summary(Path(folder) / name / "report.json")
        out.append({"name": name, "title": info.get("title") or name,
                    "written": info.get("written", ""), "conclusion": info.get("conclusion", "")})
    return out


def listing_html(reports: list[dict]) -> str:
    """The page listing ``reports`` (:func:`list_reports`), each linking to its page."""
    e = html.escape
    items = "".join(
        f"<li><a href=\"/reports/{e(urllib.parse.quote(r['name']))}/\">{e(r['title'])}</a>"
        f" <small>({e(r['name'])}{', ' + e(r['written']) if r['written'] else ''})</small>"
        + (f"<br><span class=\"conclusion\">{e(r['conclusion'])}</span>" if r["conclusion"]
           else "") + "</li>" for r in reports)
    body = (f"<ul id=\"reports\">{items}</ul>" if reports else
            "<p id=\"no-reports\">No reports in this server's reports folder yet: "
            "<code>caledonia balance --report reports/NAME</code> writes one, and "
            "<code>caledonia serve --reports FOLDER</code> names the folder.</p>")
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>Study reports — caledonia serve</title><style>"
            "body{font-family:system-ui,sans-serif;max-width:60rem;margin:1rem auto;"
            "padding:0 1rem}li{margin:.6rem 0}.conclusion{color:#444}</style></head><body>"
            "<p><a href=\"/\">← the game</a></p><h1>Study reports</h1>" + body
            + "</body></html>\n")
