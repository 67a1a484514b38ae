"""The bundled default ruleset's validation stamp (caledonia_env/data/validated.py, written by
caledonia_env/data/stamp.py): the default loads without pydantic's models while its files
and the validation code are those the stamp was written for, and is validated as any
ruleset when they are not."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from caledonia_env.data import loader, validated
from caledonia_env.data.names import RulesetError


def test_the_stamp_is_that_of_the_bundled_ruleset_and_its_validation():
    """Fails after a change to a bundled file or to the validation code until the stamp is
    written again (the default then loads validated, only slower)."""
    texts, tables, labels = loader.read_default()
    loader.validate_and_build(tables, labels)       # the bundled default is valid
    assert validated.stamped(texts), ("the stamp of the bundled ruleset is stale: run "
                                      "python -m caledonia_env.data.stamp")


def test_the_stamped_default_is_the_validated_one():
    texts, tables, labels = loader.read_default()
    quick = loader.build(tables, labels)
    checked = loader.validate_and_build(*loader.read_default()[1:])
    assert quick.fingerprint() == checked.fingerprint()
    assert quick.clans.params == checked.clans.params


def test_a_bundled_file_changed_in_place_is_validated(tmp_path, monkeypatch):
    """A bundled file edited by hand (an installed package's copy, say) no longer matches
    the stamp: it is validated, and a bad value is a clear error."""
    folder = tmp_path / "ruleset"
    shutil.copytree(loader.DEFAULT_RULESET_DIR, folder)
    setup = json.loads((folder / "setup.json").read_text())
    setup["rounds"] = "five"
    (folder / "setup.json").write_text(json.dumps(setup))
    monkeypatch.setattr(loader, "DEFAULT_RULESET_DIR", folder)
    monkeypatch.setattr(loader, "_DEFAULT", None)
    with pytest.raises(RulesetError, match=r"setup\.json: table 'setup', field 'rounds'"):
        loader.load_ruleset()


def test_a_missing_or_empty_stamp_means_validation(tmp_path, monkeypatch):
    texts = loader.read_default()[0]
    monkeypatch.setattr(validated, "STAMP", tmp_path / "missing")
    assert not validated.stamped(texts)
    (tmp_path / "empty").write_text("")
    monkeypatch.setattr(validated, "STAMP", tmp_path / "empty")
    assert not validated.stamped(texts)


def test_a_game_starts_without_loading_the_validation():
    """Importing the package and playing a move load neither pydantic nor the models."""
    code = ("import sys\nfrom caledonia_env import Game\n"
            "g = Game(num_players=4, clans='draft', seed=0)\ng.step(int(g.legal_actions()[0]))\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'"
            " or m == 'caledonia_env.data.schema'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[-2] == "[]"
