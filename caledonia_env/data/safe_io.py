"""Reading user files as UTF-8 text and JSON with bounded nesting.

Ruleset overrides and game records come from users (the CLI, an upload to the web app).
Every failure here is an :class:`InputError` with a one-line message; the caller puts
the file (and table or field) in front and raises its own error (``RulesetError``,
``RecordError``).
"""
from __future__ import annotations

import errno
import json
import os
import stat
from typing import Any

#: deepest nesting of JSON objects/lists accepted (rulesets and records need < 10)
MAX_JSON_DEPTH = 32
#: largest file read (the bundled ruleset files are < 10 KiB, a game record < 1 MiB)
MAX_FILE_BYTES = 64 * 2 ** 20


class InputError(ValueError):
    """A file that cannot be read as UTF-8 text or JSON (the message says why)."""


def read_bytes(path: str | os.PathLike, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; a missing file, a directory, a
    symbolic link loop, a device or pipe, a larger file or an unreadable file is an
    :class:`InputError`."""
    try:
        info = os.stat(path)
        if stat.S_ISDIR(info.st_mode):
            raise InputError("a directory, not a file")
        if not stat.S_ISREG(info.st_mode):       # a FIFO would block, /dev/zero never end
            raise InputError("not a regular file (a device, pipe or socket)")
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InputError(f"broken symbolic link (to {os.readlink(path)!r})") from None
        raise InputError("missing file") from None
    except OSError as ex:
        if ex.errno == errno.ELOOP:
            raise InputError("symbolic link loop (a link that leads back to itself)") from None
        raise InputError(f"cannot read file: {ex.strerror or ex}") from None
    if len(data) > max_bytes:
        raise InputError(f"larger than {max_bytes} bytes")
    return data


def decode_utf8(data: bytes) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark is dropped)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as ex:
        raise InputError(f"not UTF-8 text: byte 0x{data[ex.start]:02x} at offset {ex.start} "
                         f"cannot be decoded") from None


def read_text(path: str | os.PathLike) -> str:
    """A regular file as UTF-8 text (:func:`read_bytes`, :func:`decode_utf8`)."""
    return decode_utf8(read_bytes(path))


def check_depth(value: Any, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``value`` unchanged, or an :class:`InputError` if its lists and objects nest deeper
    than ``max_depth`` (``[]`` is depth 1); iterative, so any depth is safe to check."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, (list, tuple)):
            continue
        if depth + 1 > max_depth:
            raise InputError(f"JSON nested deeper than {max_depth} levels")
        stack.extend((x, depth + 1) for x in node)
    return value


def _unique_keys(pairs: list) -> dict:
    """``json.loads``'s ``object_pairs_hook``: an object, or an :class:`InputError` naming
    the first key it gives twice (plain JSON keeps the last one silently)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise InputError(f"duplicate key {key!r} in one JSON object (each key may "
                                 f"appear once)")
            seen.add(key)
    return obj


def parse_json(text: str | bytes, max_depth: int = MAX_JSON_DEPTH,
               unique_keys: bool = False) -> Any:
    """JSON text (bytes are decoded as UTF-8) as Python data, nested at most ``max_depth``
    levels; malformed JSON, numbers too long to convert and deep nesting are an
    :class:`InputError`, and so is a key given twice in one object with ``unique_keys``."""
    if isinstance(text, (bytes, bytearray)):
        text = decode_utf8(bytes(text))
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys if unique_keys else None)
    except InputError:
        raise
    except json.JSONDecodeError as ex:
        raise InputError(f"malformed JSON at line {ex.lineno}, column {ex.colno}: "
                         f"{ex.msg}") from None
    except RecursionError:
        raise InputError(f"JSON nested deeper than {max_depth} levels") from None
    except ValueError as ex:        # an integer of more digits than int() converts
        raise InputError(f"invalid JSON number: {str(ex).split(';')[0]}") from None
    return check_depth(value, max_depth)
