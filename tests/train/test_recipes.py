"""``caledonia train --recipe``: one recipe per shipped policy, each link valid, the runner
runs a chain (git file, training run, selection, pick) end to end on a tiny recipe."""
import os
import subprocess
from pathlib import Path

import pytest

from caledonia_env.cli import main as cli_main
from caledonia_env.train import recipe as recipes
from caledonia_env.train.cli.train import config_from_args

ROOT = Path(__file__).resolve().parents[2]
PRETRAINED = ROOT / "agents" / "pretrained"


def _train_parser():
    import argparse
    from caledonia_env.train.cli.train import add_train_parser
    sub = argparse.ArgumentParser().add_subparsers()
    return add_train_parser(sub)


def test_every_shipped_policy_has_a_recipe_and_its_card_names_it():
    shipped = sorted(p.stem for p in PRETRAINED.glob("*.zip"))
    assert shipped == recipes.names()
    for name in shipped:
        r = recipes.load(name)
        assert r.ships == f"{name}.zip"
        card = (PRETRAINED / f"{name}.md").read_text()
        assert f"caledonia train --recipe {name}" in card
        assert f"{r.players} player" in card or (r.players == 1 and "solo" in card)


@pytest.mark.parametrize("name", recipes.names())
def test_each_training_link_is_a_valid_train_command(name, tmp_path):
    """The train links parse with `caledonia train`'s own parser into a valid config: no
    typo survives in a recipe."""
    r = recipes.load(name)
    out = str(tmp_path / name)
    trains = [link for link in r.links if link.kind == "train"]
    assert trains
    for link in trains:
        args = _train_parser().parse_args(r.train_args(out, link))
        cfg = config_from_args(args)
        cfg.validate()
        assert cfg.out == os.path.join(out, link.name)
        assert cfg.players == r.players
        if cfg.init is not None:                       # a file an earlier link writes
            assert cfg.init in {r.file_of(out, k) for k in r.links}
    assert r.commands(out)[-1] == f"cp {r.file_of(out, r.links[-1])} {os.path.join(out, r.ships)}"


def test_a_git_link_is_a_file_of_the_history(tmp_path):
    """A fine-tune starts from a file of the project's history: the runner takes it from git."""
    r = recipes.load("ppo_2p")
    start = r.links[0]
    assert start.kind == "git"
    want = subprocess.run(["git", "show", start.spec], cwd=ROOT, capture_output=True)
    if want.returncode != 0:
        pytest.skip("not a git clone with the project's history")
    r.links = [start]                                 # run only the first link
    shipped = recipes.run(r, str(tmp_path / "r"), log=lambda *a: None)
    assert Path(shipped).read_bytes() == want.stdout


def test_the_runner_trains_selects_and_ships_a_tiny_recipe(tmp_path, monkeypatch):
    pytest.importorskip("sb3_contrib")
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "tiny.toml").write_text('''
description = "a tiny 2-player chain"
ships = "tiny.zip"
players = 2
env = { NUMBA_NUM_THREADS = "1" }

[[link]]
name = "run"
train = "--players 2 --timesteps 1024 --n-envs 4 --n-steps 64 --batch-size 128 --n-epochs 1 --net 32:16 --fast-fraction 1 --eval-every 512 --eval-games 2 --eval-vs random --checkpoint-every 512 -q"

[[link]]
name = "again"
train = "--players 2 --init {run} --timesteps 512 --n-envs 4 --n-steps 64 --batch-size 128 --n-epochs 1 --net 32:16 --fast-fraction 1 --eval-every 512 --eval-games 2 --eval-vs random --checkpoint-every 256 -q"

[[link]]
name = "chosen"
select = { run = "again", vs = "random", games = 2, seed = 5 }
''')
    monkeypatch.setattr(recipes, "FOLDER", str(folder))
    lines = []
    r = recipes.load("tiny")
    shipped = recipes.run(r, str(tmp_path / "out"), log=lines.append)
    files = recipes.candidates(str(tmp_path / "out" / "again"))
    assert len(files) >= 3                            # checkpoints, best.zip, last.zip
    assert Path(shipped).read_bytes() in {Path(f).read_bytes() for f in files}
    assert sum("in 2 games vs random" in x for x in lines) == len(files)
    from caledonia_env.agents import checkpoint as ck
    meta = ck.load(shipped).meta
    assert meta["train"]["init"] == str(tmp_path / "out" / "run" / "last.zip")


def test_cli_lists_prints_and_refuses(capsys):
    assert cli_main(["train", "--recipe", "list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in recipes.names())
    assert cli_main(["train", "--recipe", "ppo_solo", "--dry-run", "--out", "runs/s"]) == 0
    out = capsys.readouterr().out
    assert "caledonia train --solo --timesteps 6_000_000" in out and "--out runs/s/solo" in out
    assert "cp runs/s/solo/best.zip runs/s/ppo_solo.zip" in out
    assert cli_main(["train", "--recipe", "nope"]) == 2
    assert "no recipe 'nope'" in capsys.readouterr().err
    assert cli_main(["train", "--recipe", "ppo_2p", "--players", "3", "--clans", "none"]) == 2
    assert "drop --players, --clans" in capsys.readouterr().err


def test_a_broken_recipe_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(recipes, "FOLDER", str(tmp_path))
    (tmp_path / "bad.toml").write_text('description = "x"\nships = "x.zip"\nplayers = 2\n'
                                       '[[link]]\nname = "s"\nselect = {run = "nowhere"}\n')
    with pytest.raises(recipes.RecipeError, match="reads run 'nowhere'"):
        recipes.load("bad")
    (tmp_path / "bad.toml").write_text('description = "x"\nships = "x.zip"\nplayers = 2\n'
                                       '[[link]]\nname = "t"\ntrain = "--init {nothing}"\n')
    with pytest.raises(recipes.RecipeError, match="unknown placeholder"):
        recipes.load("bad").train_args("o", recipes.load("bad").links[0])
