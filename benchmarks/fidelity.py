"""The default ruleset's provenance: how many values each kind of source backs.

Every value of the bundled ruleset names its source (docs/ruleset.md): the rulebook, an
erratum or FAQ, a named public source (``sourced:…``), the community, or ``estimate`` where
the printed number was unavailable. Prints the count of each kind and the estimates by
table, then what is unsourced outside the ruleset data: the map's module sides (the
project's own layouts, docs/map.md) and the rule readings (the ``GameConfig``
``interp_*`` switches, docs/interpretations.md). ``--save`` also writes a result file
(benchmarks/results_io.py).

    python benchmarks/fidelity.py [--ruleset NAME_OR_FOLDER] [--save]
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import sys

KINDS = ("rulebook", "erratum", "faq", "sourced", "community", "estimate")


def counts(ruleset=None) -> tuple[collections.Counter, collections.Counter]:
    """(values by source kind, estimates by table) of a ruleset (default: the bundled one)."""
    from caledonia_env.data import load_ruleset
    from caledonia_env.data.names import source_kind
    rs = load_ruleset(ruleset) if ruleset else load_ruleset()
    kinds = collections.Counter(source_kind(s) for *_, s in rs.provenance())
    return kinds, collections.Counter(t for t, *_ in rs.estimates())


def unsourced() -> dict[str, list[str]]:
    """What the ruleset's provenance does not cover and no source backs: the bundled map
    sides (every one the project's own layout) and the rule readings (the ``interp_*``
    fields of ``GameConfig``, found on the dataclass)."""
    from caledonia_env.config import GameConfig
    from caledonia_env.map.format import MAPS_DIR
    sides = sorted(f[:-5] for f in os.listdir(MAPS_DIR) if f.endswith(".json"))
    readings = [f.name for f in dataclasses.fields(GameConfig) if f.name.startswith("interp_")]
    return {"map sides": sides, "rule readings": readings}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ruleset", default=None, help="a named ruleset or a ruleset folder")
    p.add_argument("--save", action="store_true",
                   help="also write benchmarks/results/fidelity-DATE.json")
    a = p.parse_args(argv)
    kinds, by_table = counts(a.ruleset)
    total = sum(kinds.values())
    rows = [{"source": k, "values": kinds[k], "share": round(100 * kinds[k] / total, 1)}
            for k in KINDS]
    named = total - kinds["estimate"]
    rows += [{"source": "named source (all but estimate)", "values": named,
              "share": round(100 * named / total, 1)},
             {"source": "all values", "values": total, "share": 100.0}]
    for r in rows:
        print(f"{r['source']:<32} {r['values']:>6} {r['share']:>6.1f}%")
    tables = ", ".join(f"{t} {n}" for t, n in by_table.most_common())
    print(f"estimates by table: {tables}")
    other = unsourced()
    beyond = "; ".join(f"{len(v)} {k} ({', '.join(v)})" for k, v in other.items())
    print(f"unsourced outside the ruleset: {beyond}")
    if a.save:
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        from results_io import write_result
        write_result(
            "fidelity", title="Fidelity: where the ruleset's numbers come from",
            meaning="Every value of the default ruleset by the kind of source it names "
                    "(docs/ruleset.md lists every estimate and how to override it). The "
                    "default is the printed game's economy as far as public sources show it. "
                    "Outside the ruleset the map sides (the project's own) and the rule "
                    "readings are unsourced too (notes).",
            columns=[{"key": "source", "label": "source"},
                     {"key": "values", "label": "values", "format": ",d"},
                     {"key": "share", "label": "share", "format": ".1f", "unit": "%"}],
            rows=rows, ruleset=a.ruleset or "default",
            notes=f"Estimates by table: {tables}. Unsourced outside the ruleset: {beyond}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
