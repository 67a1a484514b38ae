"""Walking provenance: where each value of a table comes from, and which are estimates."""

from __future__ import annotations

from typing import Any, Iterator

from caledonia_env.data.names import META

#: fields that state provenance rather than a game number (not walked, not fingerprinted)
PROVENANCE_FIELDS = META + ("contracts_source",)


def walk_provenance(obj: Any, src: str = "", path: str = "") -> Iterator[tuple[str, Any, str]]:
    """``(path, value, source)`` of every value of ``obj``.

    ``source`` applies to everything inside its object; ``sources`` overrides it per field
    (or per item of a list field).  A list of numbers or names is one value; a list of
    objects is walked item by item (``[i]`` in the path).
    """
    if isinstance(obj, dict):
        src = obj.get("source", src)
        per = obj.get("sources", {})
        for k, v in obj.items():
            if k in PROVENANCE_FIELDS:
                continue
            p = f"{path}.{k}" if path else k
            s = per.get(k, src)
            if isinstance(s, list):
                for i, (x, si) in enumerate(zip(v, s)):
                    yield from walk_provenance(x, si, f"{p}[{i}]")
            else:
                yield from walk_provenance(v, s, p)
    elif isinstance(obj, list) and any(isinstance(x, dict) for x in obj):
        for i, x in enumerate(obj):
            yield from walk_provenance(x, src, f"{path}[{i}]")
    else:
        yield path, obj, src


def strip_provenance(obj: Any) -> Any:
    """``obj`` without its provenance fields (the numbers a fingerprint covers)."""
    if isinstance(obj, dict):
        return {k: strip_provenance(v) for k, v in obj.items() if k not in PROVENANCE_FIELDS}
    if isinstance(obj, list):
        return [strip_provenance(x) for x in obj]
    return obj
