"""``python -m caledonia_env.envs``: print the observation layout, or refresh docs/observation.md.

    python -m caledonia_env.envs                 # print the offset table (markdown)
    python -m caledonia_env.envs --write-docs    # rewrite the table in docs/observation.md
"""
import argparse
import os
import sys

from caledonia_env.envs.observation_text import layout_markdown

BEGIN = "<!-- BEGIN GENERATED LAYOUT -->"
END = "<!-- END GENERATED LAYOUT -->"
DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "docs", "observation.md")


def write_docs(path: str = DOC) -> None:
    """Replace the text between the layout markers of ``path`` by the current table."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path}: markers {BEGIN} / {END} not found")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"{head}{BEGIN}\n{layout_markdown()}\n{END}{tail}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-docs", action="store_true",
                        help=f"rewrite the generated table in {DOC}")
    args = parser.parse_args(argv)
    if args.write_docs:
        write_docs()
        print(f"updated {DOC}")
    else:
        print(layout_markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
