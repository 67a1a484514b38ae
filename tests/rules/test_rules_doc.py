"""docs/rules.md: every rule id cited in the repo resolves there, every rule id there is
named by a test, and the repo never points outside itself (R-0 … R-9, P1-P9)."""
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RULES_MD = ROOT / "docs" / "rules.md"
AUTOMA_MD = ROOT / "docs" / "automa.md"

ID_RE = re.compile(r"(?<![\w-])([RA]-\d+(?:\.\d+)*|P[1-9])(?!\w|\.\d)")
ANCHOR_RE = re.compile(r'<a id="([a-z0-9-]+)"></a>')
TEST_NAME_RE = re.compile(r"def (test_\w+)")
TEST_NAME_ID_RE = re.compile(r"(?<![a-z0-9])(?:r(\d+(?:_\d+)*)|p([1-9]))(?![a-z0-9])")
LINK_RE = re.compile(r"\]\(\.\./(tests/[\w/]+\.py)\)")

# Rule ids in docs/rules.md that no test names: R-0 is the glossary, R-9 the heading of the
# modes (its sub-rules … are tested). Update this set when that changes.
NOT_NAMED_BY_TESTS = {"R-0", "R-9"}

# Mentions of files outside the repository (spelled in pieces so this file passes itself).
FORBIDDEN = ["../" + "shared", "shared" + "/", "RULES" + ".md", "DESIGN" + ".md",
             "AUTOMA" + ".md", "DATA" + ".md"]
SKIP_DIRS = {".git", "__pycache__", ".pytest_cache", ".ipynb_checkpoints", "build", "dist",
             ".venv", "runs"}


def anchor(rule_id):
    """``R-3.2`` -> ``r-3-2``, ``P4`` -> ``p4`` (the explicit anchors of rules.md)."""
    return rule_id.lower().replace(".", "-")


def ids_in(text):
    return set(ID_RE.findall(text))


def repo_files():
    """The repository's files: tracked, or untracked and not ignored (what a commit could
    add; not the venvs, runs and caches a checkout collects); None outside a git checkout."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, check=False)
    if out.returncode != 0:
        return None
    return sorted({ROOT / f for f in out.stdout.decode().split("\0") if f})


def text_files(*roots):
    listed = repo_files()
    for root in roots:
        if root.is_file():
            paths = [root]
        elif listed is None:
            paths = sorted(root.rglob("*"))
        else:
            paths = [p for p in listed if p.is_relative_to(root)]
        for path in paths:
            rel = path.relative_to(ROOT).parts
            if not path.is_file() or any(d in SKIP_DIRS or d.endswith(".egg-info") for d in rel):
                continue
            try:
                yield path, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:      # images, checkpoints
                continue


def rules_sections():
    """{rule id: its section of rules.md (text up to the next anchor)}."""
    text = RULES_MD.read_text(encoding="utf-8")
    parts = ANCHOR_RE.split(text)
    sections = dict(zip(parts[1::2], parts[2::2]))
    ids = {}
    for a, body in sections.items():
        heading = re.search(r"^#+ (R-\d+(?:\.\d+)*|P[1-9])\b", body, re.M)
        assert heading and anchor(heading.group(1)) == a, \
            f"rules.md: anchor {a!r} must be followed by a heading naming its rule id"
        ids[heading.group(1)] = body
    return ids


def test_test_names_map_to_ids():
    """The test-name spelling of rule ids (``test_r3_2_x``, ``test_p4_y``)."""
    found = {m.group(1) and "R-" + m.group(1).replace("_", ".") or "P" + m.group(2)
             for m in TEST_NAME_ID_RE.finditer("test_r3_2_3p_trade test_p4_shift test_r7")}
    assert found == {"R-3.2", "P4", "R-7"}
    assert ids_in("R-3.3.1, (R-7). P4 and A-2.1; not XR-1, P10, R-1a") == \
        {"R-3.3.1", "R-7", "P4", "A-2.1"}


def test_every_rule_has_one_anchor():
    text = RULES_MD.read_text(encoding="utf-8")
    anchors = ANCHOR_RE.findall(text)
    assert len(anchors) == len(set(anchors)), "rules.md: duplicate anchors"
    assert len(rules_sections()) == len(anchors)


def test_cited_ids_resolve():
    """(a) Every R-/P- id cited in the package (code, help texts, data), docs and README
    has an anchor in docs/rules.md; A- ids resolve in docs/automa.md once it exists."""
    rules = set(rules_sections())
    automa = ids_in(AUTOMA_MD.read_text(encoding="utf-8")) if AUTOMA_MD.exists() else set()
    missing = []
    for path, text in text_files(ROOT / "caledonia_env", ROOT / "docs", ROOT / "README.md"):
        for rid in sorted(ids_in(text)):
            known = automa if rid.startswith("A-") else rules
            if rid not in known:
                missing.append(f"{path.relative_to(ROOT)}: {rid}")
    assert not missing, "rule ids without an anchor in docs/rules.md (or docs/automa.md):\n" \
        + "\n".join(missing)


def test_every_rule_is_named_by_a_test():
    """(b) Every rule id of docs/rules.md is named by a test file (docstring, comment or
    test name); the exceptions are listed in NOT_NAMED_BY_TESTS."""
    named = set()
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name == Path(__file__).name:
            continue
        text = path.read_text(encoding="utf-8")
        named |= ids_in(text)
        for name in TEST_NAME_RE.findall(text):
            for m in TEST_NAME_ID_RE.finditer(name):
                named.add("R-" + m.group(1).replace("_", ".") if m.group(1) else "P" + m.group(2))
    unnamed = set(rules_sections()) - named
    assert unnamed == NOT_NAMED_BY_TESTS, (
        f"rule ids no test names: {sorted(unnamed)}; "
        f"expected exactly {sorted(NOT_NAMED_BY_TESTS)} (update NOT_NAMED_BY_TESTS)")


@pytest.mark.parametrize("rule_id", sorted(set(rules_sections()) - NOT_NAMED_BY_TESTS))
def test_rule_links_its_tests(rule_id):
    """Each rule's section links test files, and each linked file names that rule id."""
    links = LINK_RE.findall(rules_sections()[rule_id])
    assert links, f"rules.md: {rule_id} links no test file"
    for link in links:
        path = ROOT / link
        assert path.is_file(), f"rules.md: {rule_id} links missing {link}"
        assert rule_id in ids_in(path.read_text(encoding="utf-8")) or \
            re.search(rf"def test_\w*{rule_id.lower().replace('-', '').replace('.', '_')}"
                      r"(?![0-9a-z])", path.read_text(encoding="utf-8")), \
            f"rules.md: {rule_id} links {link}, which does not name {rule_id}"


def _slugs(md):
    """GitHub heading anchors of a markdown text, plus its explicit ``<a id>`` anchors."""
    heads = re.findall(r"^#+ (.+)$", md, re.M)
    slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}
    return slugs | set(ANCHOR_RE.findall(md))


def test_rules_md_links_resolve():
    """Relative links of rules.md point to existing files and anchors."""
    text = RULES_MD.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if "://" in target:
            continue
        file, _, frag = target.partition("#")
        path = (RULES_MD.parent / file).resolve() if file else RULES_MD
        assert path.is_file(), f"rules.md links missing file {target}"
        if frag:
            assert frag in _slugs(path.read_text(encoding="utf-8")), \
                f"rules.md links missing anchor {target}"


def test_no_mentions_of_files_outside_the_repo():
    """(c) Docs, README, code, tests and notebooks stand alone: no paths to the project's
    private specification files."""
    hits = []
    for path, text in text_files(ROOT):
        if path == Path(__file__).resolve():
            continue
        for i, line in enumerate(text.splitlines(), 1):
            for word in FORBIDDEN:
                if word in line:
                    hits.append(f"{path.relative_to(ROOT)}:{i}: {word}")
    assert not hits, "mentions of files outside the repository:\n" + "\n".join(hits)
