"""Walking provenance: which values of a table are estimates."""

from __future__ import annotations

from typing import Any, Iterator

from .names import META


def walk_estimates(obj: Any, src: str = "", path: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, value)`` of every value of ``obj`` whose inherited source is ``estimate``.

    ``source`` applies to everything inside its object; ``sources`` overrides it per field
    (or per item of a list field).
    """
    if isinstance(obj, dict):
        src = obj.get("source", src)
        per = obj.get("sources", {})
        for k, v in obj.items():
            if k in META:
                continue
            p = f"{path}.{k}" if path else k
            s = per.get(k, src)
            if isinstance(s, list):
                for i, (x, si) in enumerate(zip(v, s)):
                    yield from walk_estimates(x, si, f"{p}[{i}]")
            else:
                yield from walk_estimates(v, s, p)
    elif isinstance(obj, list) and any(isinstance(x, dict) for x in obj):
        for i, x in enumerate(obj):
            yield from walk_estimates(x, src, f"{path}[{i}]")
    elif src == "estimate":
        yield path, obj
