"""``caledonia train --recipe NAME``: the chain of commands that made a shipped policy.

A recipe is a TOML file in ``train/recipes/`` (installed with the package), one per file of
``agents/pretrained/``: its ``description``, the file it ``ships``, the environment ``env``
every command runs with, and its ``link`` list, run in order, each writing into
``OUT/<link name>``:

- ``git = "REV:PATH"``: a file of the project's history (``git show``; needs a clone),
  e.g. the earlier policy a fine-tune starts from;
- ``train = "ARGS"``: ``caledonia train ARGS --out OUT/<name>`` in a child process;
  ``{link}`` in ARGS is the file that link produced;
- ``select = {run, vs, games, seed}``: every checkpoint of link ``run`` (its
  ``checkpoints/``, ``best.zip`` and ``last.zip``) plays ``games`` games against ``vs``
  (one copy per other seat, seats rotated, game g set up from ``(seed, g)``, the games of
  ``benchmarks/strength.py --seed SEED``); the highest win share is the link's file;
- ``pick = {run, file}``: the link's file is ``OUT/<run>/<file>`` (e.g. ``best.zip``).

The last link's file is copied to ``OUT/<ships>``. ``--dry-run`` prints the commands.
"""
from __future__ import annotations

import glob
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recipes")
KINDS = ("git", "train", "select", "pick")


class RecipeError(ValueError):
    """A recipe that cannot be read or run (the message names the file and the link)."""


@dataclass
class Link:
    name: str
    kind: str
    spec: object
    about: str = ""


@dataclass
class Recipe:
    name: str
    description: str
    ships: str
    players: int
    env: dict = field(default_factory=dict)
    links: list = field(default_factory=list)

    def file_of(self, out: str, link: Link) -> str:
        """The file ``link`` produces under the recipe folder ``out``."""
        if link.kind == "git":
            return os.path.join(out, link.name + ".zip")
        if link.kind == "pick":
            return os.path.join(out, link.spec["run"], link.spec["file"])
        if link.kind == "select":
            return os.path.join(out, link.name + ".zip")
        return os.path.join(out, link.name, "last.zip")

    def train_args(self, out: str, link: Link) -> list[str]:
        """``caledonia train`` arguments of a train link, placeholders filled."""
        files = {k.name: self.file_of(out, k) for k in self.links}
        try:
            text = link.spec.format(**files)
        except (KeyError, IndexError) as e:
            raise RecipeError(f"recipe {self.name}, link {link.name}: unknown placeholder "
                              f"{e} (links: {', '.join(files)})") from None
        return shlex.split(text) + ["--out", os.path.join(out, link.name)]

    def commands(self, out: str) -> list[str]:
        """The chain as shell lines (what ``--dry-run`` prints)."""
        env = " ".join(f"{k}={v}" for k, v in self.env.items())
        lines = []
        for link in self.links:
            if link.kind == "git":
                lines.append(f"git show {link.spec} > {self.file_of(out, link)}")
            elif link.kind == "train":
                args = " ".join(shlex.quote(a) for a in self.train_args(out, link))
                lines.append(f"{env} caledonia train {args}".strip())
            elif link.kind == "select":
                s = link.spec
                lines.append(f"# {link.name}: the checkpoint of {s['run']} with the highest "
                             f"win share in {s['games']} games vs {s['vs']}, seed {s['seed']}")
            else:
                lines.append(f"# {link.name}: {self.file_of(out, link)}")
        lines.append(f"cp {self.file_of(out, self.links[-1])} {os.path.join(out, self.ships)}")
        return lines


def names() -> list[str]:
    return sorted(f[:-5] for f in os.listdir(FOLDER) if f.endswith(".toml"))


def load(name: str) -> Recipe:
    """The recipe ``name`` (a file of :data:`FOLDER`), checked link by link."""
    path = os.path.join(FOLDER, name + ".toml")
    if not os.path.isfile(path):
        raise RecipeError(f"no recipe {name!r}; recipes: {', '.join(names())}")
    with open(path, "rb") as f:
        try:
            d = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise RecipeError(f"{path}: {e}") from None
    links = []
    for i, raw in enumerate(d.get("link", [])):
        kinds = [k for k in KINDS if k in raw]
        if len(kinds) != 1 or "name" not in raw:
            raise RecipeError(f"{path}: link {i + 1} needs a name and one of {KINDS}")
        links.append(Link(raw["name"], kinds[0], raw[kinds[0]], raw.get("about", "")))
    if not links:
        raise RecipeError(f"{path}: no [[link]]")
    for link in links:
        if link.kind in ("select", "pick") and link.spec.get("run") not in {k.name for k in links}:
            raise RecipeError(f"{path}: link {link.name} reads run {link.spec.get('run')!r}, "
                              f"which is no link of the recipe")
    return Recipe(name, d["description"], d["ships"], int(d["players"]),
                  {k: str(v) for k, v in d.get("env", {}).items()}, links)


def _repo_root() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=here,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RecipeError("this recipe starts from a file of the project's git history: run it "
                          "in a clone of the repository (an installed package has no history)")
    return proc.stdout.strip()


def candidates(run: str) -> list[str]:
    """A run's checkpoints, best.zip and last.zip (those present), in step order."""
    files = sorted(glob.glob(os.path.join(run, "checkpoints", "*.zip")))
    files += [os.path.join(run, f) for f in ("best.zip", "last.zip")
              if os.path.isfile(os.path.join(run, f))]
    if not files:
        raise RecipeError(f"{run}: no checkpoint to select from")
    return files


def select(recipe: Recipe, files: list[str], vs: str, games: int, seed: int,
           workers: int = 1, log=print) -> str:
    """The file of ``files`` with the highest win share against ``vs`` (first on ties)."""
    from caledonia_env import scale
    from caledonia_env.train.batched_play import EvalStudy, checkpoint_sha256, summarize
    n = recipe.players
    specs = [f"ppo:{f}" for f in files]
    matches = tuple((s,) + (vs,) * (n - 1) for s in specs)
    sha = {s: checkpoint_sha256(s, n) for s in specs}
    study = EvalStudy(matches=matches, per_match=games, seed=seed, sha256=sha)
    rows = scale.run_study(study, None, backend="local", workers=workers)["rows"]
    best, best_rate = None, -1.0
    for r in rows:
        r["role"] = study.role(r)
    for m, f in enumerate(files):
        mine = [r for r in rows if study.match_game(r["game"])[0] == m]
        st = summarize(mine, role=0)
        log(f"  {f}: {st['win_rate']:.1%} [{st['ci_low']:.1%}, {st['ci_high']:.1%}] "
            f"in {st['games']} games vs {vs}")
        if st["win_rate"] > best_rate:
            best, best_rate = f, st["win_rate"]
    return best


def run(recipe: Recipe, out: str, workers: int = 1, log=print) -> str:
    """Run every link into ``out``; returns the shipped file's path there."""
    os.makedirs(out, exist_ok=True)
    env = {**os.environ, **recipe.env}
    for link in recipe.links:
        target = recipe.file_of(out, link)
        log(f"[{recipe.name}] {link.name}: {link.about or link.kind}")
        if link.kind == "git":
            proc = subprocess.run(["git", "show", link.spec], cwd=_repo_root(),
                                  capture_output=True)
            if proc.returncode != 0:
                raise RecipeError(f"git show {link.spec}: {proc.stderr.decode().strip()}")
            with open(target, "wb") as f:
                f.write(proc.stdout)
        elif link.kind == "train":
            cmd = [sys.executable, "-m", "caledonia_env", "train"] + recipe.train_args(out, link)
            if subprocess.run(cmd, env=env).returncode != 0:
                raise RecipeError(f"link {link.name} failed: {shlex.join(cmd)}")
        elif link.kind == "select":
            s = link.spec
            chosen = select(recipe, candidates(os.path.join(out, s["run"])), s["vs"],
                            int(s["games"]), int(s["seed"]), workers, log)
            shutil.copyfile(chosen, target)
            log(f"  selected {chosen}")
        elif not os.path.isfile(target):
            raise RecipeError(f"link {link.name}: {target} was not written")
    shipped = os.path.join(out, recipe.ships)
    shutil.copyfile(recipe.file_of(out, recipe.links[-1]), shipped)
    return shipped
