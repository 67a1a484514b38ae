"""Agents by name: ``make("mcts:200", seed=3)``.

A name is ``KIND`` or ``KIND:PARAM``; everything after the first ``:`` is the
parameter, passed as a string to the kind's factory (so ``ppo:runs/a:b.zip``
keeps its colons). ``register`` adds a kind; later issues add theirs the same
way (e.g. ``register("ppo", load_ppo, param="PATH of a .zip", param_required=True)``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from caledonia_env.agents.base import Agent


@dataclass(frozen=True)
class Kind:
    name: str
    factory: Callable[..., Agent]      # factory(param: str | None, seed: int, **kw) -> Agent
    help: str
    param: str | None               # what PARAM means, None if the kind takes none
    param_required: bool
    example: str | None


_KINDS: dict[str, Kind] = {}


def register(name: str, factory: Callable[..., Agent], *, help: str = "",
             param: str | None = None, param_required: bool = False,
             example: str | None = None, replace: bool = False) -> None:
    """Add an agent kind. ``factory(param, seed, **kw)`` gets the text after ``name:``
    (or None) and returns an :class:`Agent`. ``param`` documents the parameter;
    kinds without one reject ``name:anything``."""
    if not name or ":" in name or name != name.strip() or "," in name:
        raise ValueError(f"agent kind names are non-empty, without ':' ',' or spaces: {name!r}")
    if name in _KINDS and not replace:
        raise ValueError(f"agent kind {name!r} is already registered (pass replace=True)")
    if param_required and param is None:
        raise ValueError("param_required needs a param description")
    _KINDS[name] = Kind(name, factory, help, param, param_required, example)


def available() -> list[str]:
    """Names that ``make`` accepts as they are (kinds whose parameter is optional or absent)."""
    return sorted(k.name for k in _KINDS.values() if not k.param_required)


def kinds() -> list[Kind]:
    """Every registered kind with its help and parameter syntax."""
    return [_KINDS[n] for n in sorted(_KINDS)]


def syntax() -> str:
    """One line per kind: ``name[:PARAM]  help`` (for error messages and --help)."""
    lines = []
    for k in kinds():
        if k.param is None:
            form = k.name
        elif k.param_required:
            form = f"{k.name}:PARAM"
        else:
            form = f"{k.name}[:PARAM]"
        line = f"  {form:<16} {k.help}"
        if k.param is not None:
            line += f" PARAM: {k.param}."
        if k.example:
            line += f" e.g. {k.example}"
        lines.append(line)
    return "\n".join(lines)


def parse_name(spec: str) -> tuple[str, str | None]:
    """Split ``KIND:PARAM`` at the first colon; check KIND exists and PARAM fits it."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent name must be a non-empty string, got {spec!r}; "
                         f"available: {', '.join(available())}")
    spec = spec.strip()
    kind, sep, param = spec.partition(":")
    if kind not in _KINDS:
        raise ValueError(f"unknown agent {spec!r}; available: {', '.join(available())}\n"
                         f"syntax:\n{syntax()}")
    k = _KINDS[kind]
    if sep and k.param is None:
        raise ValueError(f"agent {kind!r} takes no parameter, got {spec!r}")
    if sep and not param:
        raise ValueError(f"agent {spec!r}: empty parameter after ':' ({k.param})")
    if not sep and k.param_required:
        raise ValueError(f"agent {kind!r} needs a parameter: {kind}:PARAM ({k.param})")
    return kind, (param if sep else None)


def make(name: str, seed: int = 0, **kw) -> Agent:
    """A fresh agent from its registry name (``random``, ``greedy``, ``mcts:200``...)."""
    kind, param = parse_name(name)
    agent = _KINDS[kind].factory(param, int(seed), **kw)
    agent.name = name.strip()
    return agent
