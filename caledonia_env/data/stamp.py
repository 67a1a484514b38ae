"""Write the bundled default ruleset's validation stamp (``validated.STAMP``).

``python -m caledonia_env.data.stamp`` validates the bundled default and writes the stamp
that lets it load without its validation (:mod:`caledonia_env.data.validated`); run it after
changing a bundled file or the validation code.
"""
from __future__ import annotations

from caledonia_env.data.loader import read_default, validate_and_build
from caledonia_env.data.validated import STAMP, digest


def main() -> int:
    """Validate the bundled default ruleset and write its stamp."""
    texts, tables, labels = read_default()
    validate_and_build(tables, labels)
    STAMP.write_text(digest(texts) + "\n")
    print(f"validated the bundled ruleset; wrote {STAMP}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
