"""The house has one direction of dependency (docs/architecture.md).

Every import in the package, at module level or inside a function, is read with
``ast``; a module may import only from its own layer or a lower one.
"""
import ast
import tomllib
from pathlib import Path

import pytest

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
# caledonia_env.agents and caledonia_env.train live in the top-level folders agents/ and
# train/ (pyproject's package-dir); every other subpackage lives under caledonia_env/.
SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
PACKAGE_DIR = SETUPTOOLS["package-dir"]
ROOTS = {name.removeprefix("caledonia_env").lstrip("."): REPO / folder
         for name, folder in PACKAGE_DIR.items()}


def source_path(sub: str) -> Path:
    """Where the dotted name ``sub`` (relative to caledonia_env) lives, without a suffix."""
    parts = sub.split(".") if sub else []
    if parts and parts[0] in ROOTS:
        return ROOTS[parts[0]].joinpath(*parts[1:])
    return ROOTS[""].joinpath(*parts)

# lowest first; a module belongs to the first prefix that matches its dotted name
LAYERS = [
    ("plugins", "atomic"),
    ("data", "map"),
    ("engine",),
    ("config",),
    ("game", "scenario", "records", "render_text", "fuzz"),
    ("envs",),
    ("agents",),
    ("tournament", "scale", "ray_connect", "study_file"),
    ("train",),
    ("cli", "__main__", "__init__", "web"),
]


def layer_of(module: str) -> int:
    """Layer index of a dotted name relative to the package ('' = the package root)."""
    head = module.split(".")[0] if module else "__init__"
    for i, names in enumerate(LAYERS):
        if head in names:
            return i
    raise AssertionError(f"module caledonia_env.{module} is in no layer: add it to LAYERS "
                         f"and to docs/architecture.md")


def modules():
    for prefix, root in sorted(ROOTS.items()):
        for path in sorted(root.rglob("*.py")):
            parts = [prefix] if prefix else []
            parts += list(path.relative_to(root).with_suffix("").parts)
            yield ".".join(parts), path


def test_package_dir_covers_every_folder():
    """Each mapped folder exists and holds a package; nothing else maps into caledonia_env."""
    assert set(ROOTS) == {"", "agents", "train"}
    for root in ROOTS.values():
        assert (root / "__init__.py").is_file(), root
    assert not (ROOTS[""] / "agents").exists() and not (ROOTS[""] / "train").exists()


def test_every_package_is_installed():
    """pyproject's ``packages`` lists exactly the folders that hold an ``__init__.py`` and
    the data folders whose files ``package-data`` names, so a non-editable install carries
    every subpackage and every data file (setuptools warns about data folders left out)."""
    found = {".".join(["caledonia_env", *filter(None, [prefix]),
                       *init.parent.relative_to(root).parts])
             for prefix, root in ROOTS.items() for init in root.rglob("__init__.py")}
    data = set(SETUPTOOLS["package-data"]) - {"caledonia_env"}
    assert found | data == set(SETUPTOOLS["packages"])
    for name in data:
        folder = source_path(name.removeprefix("caledonia_env."))
        assert folder.is_dir() and not (folder / "__init__.py").exists(), name
        assert any(folder.glob(SETUPTOOLS["package-data"][name][0])), name


def imported(path: Path, module: str):
    """Dotted names (relative to caledonia_env) of everything ``path`` imports from the package."""
    pkg = module.split(".")[:-1] if not module.endswith("__init__") else module.split(".")[:-1]
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "caledonia_env" or a.name.startswith("caledonia_env."):
                    yield a.name.removeprefix("caledonia_env").lstrip("."), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and (node.module == "caledonia_env"
                                  or node.module.startswith("caledonia_env.")):
                target = node.module.removeprefix("caledonia_env").lstrip(".")
            else:
                continue
            for a in node.names:       # a submodule, or a name defined in `target`
                sub = ".".join(filter(None, [target, a.name]))
                path_of = source_path(sub)
                is_module = path_of.with_suffix(".py").exists() or path_of.is_dir()
                yield (sub if is_module else target), node.lineno


@pytest.mark.parametrize("module,path", list(modules()), ids=lambda x: str(x))
def test_imports_point_down(module, path):
    mine = layer_of(module)
    bad = [(t, line) for t, line in imported(path, module) if layer_of(t) > mine]
    assert not bad, (f"caledonia_env.{module} (layer {LAYERS[mine]}) imports from a higher "
                     f"layer: " + ", ".join(f"{t} (line {line})" for t, line in bad))


def test_layer_check_catches_an_upward_import(tmp_path):
    f = tmp_path / "x.py"
    f.write_text("def f():\n    from ..agents import make\n")
    assert [t for t, _ in imported(f, "envs.x")] == ["agents"]
    assert layer_of("agents") > layer_of("envs.x")


def test_architecture_doc_shows_the_tree_as_it_is():
    """docs/architecture.md's tree names every package folder, every data folder and every
    module at the package root, and nothing that is not there."""
    doc = (REPO / "docs" / "architecture.md").read_text()
    block = doc.split("<!-- tree:begin -->")[1].split("<!-- tree:end -->")[0]
    words = {w for line in block.splitlines() for w in line.split()}
    named_folders = {w.rstrip("/") for w in words if w.endswith("/")}
    named_modules = {w for w in words if w.endswith(".py")}
    folders = {"caledonia_env", "agents", "train"}
    for name in SETUPTOOLS["packages"]:
        sub = name.removeprefix("caledonia_env").lstrip(".")
        if sub:
            folders.add(source_path(sub).name)
    assert named_folders == folders
    root_modules = {p.name for p in ROOTS[""].glob("*.py")} - {"__init__.py", "__main__.py"}
    assert root_modules <= named_modules
    assert named_modules <= {p.name for p in ROOTS[""].glob("*.py")}
