"""Both install modes carry the whole package: a non-editable ``pip install .`` of a copy of
the repository, used from a folder outside it, has ``caledonia_env.agents`` (with its
shipped checkpoints and model cards) and ``caledonia_env.train``, and plays a game with the
pretrained policy; no top-level ``agents`` or ``train`` package is installed.

The fresh virtual environment borrows this environment's third-party packages through a
``.pth`` line (no download, no second copy of torch) and gets the project itself by a real
wheel install of a copy of the tracked files.
"""
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _tracked_files():
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=False)
    if out.returncode != 0:
        pytest.skip("not a git checkout: cannot list the tracked files to install")
    return [f for f in out.stdout.decode().split("\0") if f and (REPO / f).is_file()]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of a fresh venv holding a non-editable install, a work folder outside the repo)."""
    base = tmp_path_factory.mktemp("install")
    src = base / "src"
    for rel in _tracked_files():
        if rel.startswith(("tests/", "notebooks/", "docs/")):
            continue
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, src / rel)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # third-party packages come from this environment (its .pth files are not processed, so
    # this checkout's editable install stays out of the new venv)
    Path(purelib, "_borrowed.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-deps", "--no-build-isolation", "--no-cache-dir", str(src)],
                   check=True, capture_output=True, text=True)
    shutil.rmtree(src)                  # nothing may be read from the source tree
    work = base / "work"
    work.mkdir()
    return python, work


def _run(python, work, *args, timeout=600):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    return subprocess.run([str(python), *args], cwd=work, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_non_editable_install_has_the_namespaced_packages(installed):
    python, work = installed
    code = ("import importlib.util, pathlib, caledonia_env.agents as a, caledonia_env.train as t;"
            "import caledonia_env.agents.checkpoint as c;"
            "assert 'site-packages' in a.__file__ and 'site-packages' in t.__file__, (a.__file__, t.__file__);"
            "assert importlib.util.find_spec('agents') is None and importlib.util.find_spec('train') is None;"
            "zips = sorted(pathlib.Path(c.PRETRAINED_DIR).glob('*.zip'));"
            "assert zips, c.PRETRAINED_DIR;"
            "from caledonia_env.data import loader, validated;"        # the stamp ships and
            "assert validated.stamped(loader.read_default()[0]);"     # fits the installed files
            "print(len(zips))")
    out = _run(python, work, "-c", code)
    assert out.returncode == 0, out.stderr[-3000:]
    assert int(out.stdout.split()[-1]) >= 4


def test_non_editable_install_plays_the_pretrained_policy(installed):
    python, work = installed
    caledonia = python.parent / "caledonia"
    out = _run(caledonia, work, "play", "--players", "ppo:pretrained,greedy", "--games", "2",
               "--workers", "1", "--out", str(work / "games.csv"))
    assert out.returncode == 0, out.stderr[-3000:]
    assert (work / "games.csv").read_text().count("\n") >= 3


def test_non_editable_install_carries_the_training_recipes(installed):
    python, work = installed
    out = _run(python.parent / "caledonia", work, "train", "--recipe", "list")
    assert out.returncode == 0, out.stderr[-3000:]
    names = [f"ppo_{n}" for n in ("2p", "3p", "4p", "solo")] + ["search_2p"]
    assert all(name in out.stdout for name in names), out.stdout


def test_the_rllib_extra_installs_the_torch_its_module_imports():
    """``caledonia_env.train.rllib_module`` builds a torch RLModule and ``ray[rllib]`` does not
    require torch: the rllib extra carries the train extra's pin (docs/libraries.md)."""
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    pin = [r for r in extras["train"] if r.startswith("torch")]
    assert pin and pin[0] in extras["rllib"]
    assert "import torch" in (REPO / "train" / "rllib_module.py").read_text()
