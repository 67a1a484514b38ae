"""Run every notebook of ``notebooks/`` top to bottom with its default (small) parameters.

Each notebook executes in a fresh ``python3`` Jupyter kernel started with the interpreter
that runs pytest (checked below), with the notebook's folder as working directory. A failing
cell fails the test with that cell's source and traceback. ``03_selfplay`` needs the
``train`` extra (torch, sb3-contrib) and is skipped without it.
The same notebooks also run under ``pytest --nbmake notebooks/``.
"""
from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb"))
NEEDS_TRAIN = {"03_selfplay.ipynb"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CELL_TIMEOUT = 600          # seconds per cell: a stuck cell fails instead of hanging CI


def run_notebook(nb, cwd: Path = NOTEBOOK_DIR):
    """Execute ``nb`` in place in a ``python3`` kernel; fail the test at the first error."""
    client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(cwd)}})
    error = None
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as e:
        error = ANSI.sub("", str(e))
    if error is not None:
        pytest.fail(f"a cell failed:\n{error}", pytrace=False)
    return nb


def test_notebooks_exist():
    assert {"01_quickstart.ipynb", "02_clan_balance.ipynb", "03_selfplay.ipynb"} <= set(NOTEBOOKS)


def test_kernel_runs_this_interpreter():
    """The ``python3`` kernel must be the venv's interpreter, which has the project installed."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import sys, caledonia_env\nprint(sys.executable)\nprint(sys.prefix)")])
    run_notebook(nb)
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs if o.output_type == "stream")
    assert text.split() == [sys.executable, sys.prefix], text


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_outputs_stripped(name):
    """Notebooks are stored without outputs (issue #8)."""
    nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{name}: cell {i} has outputs"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_first_code_cell_is_parameters(name):
    nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "parameters" in first.metadata.get("tags", []), f"{name}: first code cell not tagged"
    assert first.source.lstrip().startswith("# Parameters"), f"{name}: first code cell"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name, record_property):
    if name in NEEDS_TRAIN:
        pytest.importorskip("torch")
        pytest.importorskip("sb3_contrib")
    nb = nbformat.read(NOTEBOOK_DIR / name, as_version=4)
    t0 = time.perf_counter()
    run_notebook(nb)
    elapsed = time.perf_counter() - t0
    record_property("seconds", round(elapsed, 1))
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"]
    assert not errors
    images = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
                 for o in c.outputs)
    assert images > 0, f"{name}: no inline plot was displayed"
    sys.stderr.write(f"\n{name}: {elapsed:.1f} s\n")

