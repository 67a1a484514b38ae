"""Game records: the JSON format written by ``Game.to_json`` (docs/records.md).

A record holds the setup (config or scenario), the actions, optional agent names,
the scores and sha256 checksums: one of the final state and a short digest of the
state after every action, so a replay names the first step where it diverges.
This module is the format only; ``Game.to_json``/``Game.from_json`` drive it.
"""
from __future__ import annotations

import hashlib
import os
import warnings

import numpy as np

from caledonia_env.config import RULES_2026_11, RULES_2026_11_26
from caledonia_env.data.safe_io import InputError, check_depth, parse_json, read_bytes

RECORD_VERSION = 6
#: version 1: no checksums, no agents, no scores; version 2: the checksums also cover the
#: Automa event log, which the state row held until version 3 (see :func:`state_digest`);
#: versions 1-3 name the port tiles by the project's old labels; versions 1-4 were played
#: when the bundled default held the estimates of 2026-11, version 5 on the sourced default
#: with the old market estimate and the readings before #76 (see :func:`upgrade_setup`)
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6)
LOG_IN_STATE_VERSION = 2
PRINTED_PORTS_VERSION = 4       # the first version naming port tiles by their printed numbers
SOURCED_DEFAULT_VERSION = 5     # the first version played on the sourced default (2026-11-26)
PRINTED_MARKET_VERSION = 6      # the first version played on the printed market and the text's readings
#: config keys renamed in version 4: old name -> new name
CONFIG_NAMES_V3 = {"interp_p4_exact": "interp_price_shift_exact"}
#: what a record before version 5 meant by the bundled default and by the named ruleset that
#: became the default (its market is now market-estimate-2026-11), and the readings of the
#: switches that were the defaults then
RULESET_NAMES_V4 = {None: RULES_2026_11["ruleset"], "sourced-2026-11": RULES_2026_11_26["ruleset"]}
READINGS_V4 = {k: v for k, v in RULES_2026_11.items() if k.startswith("interp_")}
#: the same for a version-5 record: its bundled default is now the named ruleset
#: market-estimate-2026-11, and the readings before #76
RULESET_NAMES_V5 = {None: RULES_2026_11_26["ruleset"]}
READINGS_V5 = {k: v for k, v in RULES_2026_11_26.items() if k.startswith("interp_")}
STEP_DIGEST_CHARS = 8           # hex characters kept per step (32 bits)


class RecordError(ValueError):
    """A game record that cannot be read, or whose replay does not match it."""


class RecordWarning(UserWarning):
    """A record read without full verification (an old record with no checksum)."""


def state_digest(state: np.ndarray, amlog: np.ndarray | None = None) -> str:
    """sha256 (hex) of a state row, platform independent (little-endian int32). With
    ``amlog`` (a game's Automa event log): the digest of a version-2 record, whose state
    row ended with that log."""
    data = np.ascontiguousarray(state, dtype="<i4").tobytes()
    if amlog is not None:
        data += np.ascontiguousarray(amlog, dtype="<i4").tobytes()
    return hashlib.sha256(data).hexdigest()


def step_digest(state: np.ndarray, amlog: np.ndarray | None = None) -> str:
    """The short per-step digest: the first characters of :func:`state_digest`."""
    return state_digest(state, amlog)[:STEP_DIGEST_CHARS]


def make_record(*, config: dict, map: list, fingerprint: str, actions: list, step_digests: list,
                final_state: np.ndarray, scores, scenario=None, agents=None) -> dict:
    """The record dict (version :data:`RECORD_VERSION`); ``scores`` None while the game runs."""
    record = {"version": RECORD_VERSION, "config": config, "map": list(map),
              "ruleset_fingerprint": fingerprint}
    if scenario is not None:
        record["scenario"] = scenario
    if agents is not None:
        if isinstance(agents, str) or not all(isinstance(a, str) for a in agents):
            raise TypeError(f"agents must be a list of agent names (str), got {agents!r}")
        record["agents"] = list(agents)
    record.update(actions=[int(a) for a in actions], scores=scores,
                  checksum={"algorithm": "sha256", "final_state": state_digest(final_state),
                            "steps": list(step_digests)})
    return record


def load(path: str | os.PathLike, *, allow_ruleset_paths: bool = True) -> dict:
    """Read the record file ``path`` (UTF-8 JSON) and check it as :func:`read_record` does.

    A missing or unreadable file, a symbolic link loop, bytes that are not UTF-8 and JSON
    nested too deep are a :class:`RecordError` naming ``path``.
    """
    try:
        data = read_bytes(path)
    except InputError as e:
        raise RecordError(f"{os.fspath(path)}: cannot read the game record: {e}") from None
    try:
        return read_record(data, allow_ruleset_paths=allow_ruleset_paths)
    except RecordError as e:
        raise RecordError(f"{os.fspath(path)}: {e}") from None


def read_record(text, *, allow_ruleset_paths: bool = True) -> dict:
    """Parse a record (JSON text, UTF-8 bytes or an already-loaded dict) and check its
    structure.

    Raises :class:`RecordError` naming the field; a record without its ``map`` is
    refused. Version-1 records (or records without ``checksum``) are accepted;
    :class:`Verifier` warns about them.
    ``allow_ruleset_paths=False`` refuses a record whose ``config.ruleset`` (or
    ``scenario.ruleset``) names a ruleset path: a server reading uploaded records
    must not open files named by them.
    """
    try:
        d = parse_json(text) if isinstance(text, (str, bytes, bytearray)) else check_depth(text)
    except InputError as e:
        raise RecordError(f"a game record is JSON (Game.to_json): {e}") from None
    if not isinstance(d, dict):
        raise RecordError(f"a game record is a JSON object, got {type(d).__name__}")
    if d.get("version") not in READABLE_VERSIONS:
        raise RecordError(f"unsupported game record version {d.get('version')!r}; readable: "
                          f"{READABLE_VERSIONS}")
    if "config" not in d and "scenario" not in d:
        raise RecordError("a game record needs 'config' (or 'scenario')")
    if not isinstance(d.get("config", {}), dict) or not isinstance(d.get("scenario", {}), dict):
        raise RecordError("'config' and 'scenario' of a game record are JSON objects")
    actions = d.get("actions")
    if not isinstance(actions, list) or not all(type(a) is int for a in actions):
        raise RecordError(f"'actions' must be a list of integer action ids, got {actions!r:.80}")
    if "map" in d and not isinstance(d["map"], list):
        raise RecordError(f"'map' must be a list of four sides, got {d['map']!r}")
    agents = d.get("agents")
    if agents is not None and (not isinstance(agents, list)
                               or not all(isinstance(a, str) for a in agents)):
        raise RecordError(f"'agents' must be a list of names, got {agents!r}")
    ck = d.get("checksum")
    if ck is not None:
        steps = ck.get("steps") if isinstance(ck, dict) else None
        if not isinstance(ck, dict) or ck.get("algorithm") != "sha256" \
                or not isinstance(ck.get("final_state"), str) or not isinstance(steps, list) \
                or len(steps) != len(actions):
            raise RecordError("'checksum' must be {'algorithm': 'sha256', 'final_state': hex, "
                              "'steps': one digest per action}")
    if "map" not in d:
        raise RecordError("a game record names the map it was played on ('map': the four "
                          "module sides, e.g. [\"A1\", \"B2\", \"C1\", \"D2\"]); this one has "
                          "none, so its start cannot be checked")
    if not allow_ruleset_paths:
        _refuse_ruleset_path(d)
    return d


def upgrade_setup(d: dict) -> dict:
    """The record's ``config`` and ``scenario`` in the current format (a new dict).

    Before version 4 a record's config named ``interp_p4_exact`` (now
    ``interp_price_shift_exact``) and its scenario, of scenario version 1, named the port
    tiles by the old labels: the scenario is marked ``"version": 1`` so that it is read
    with the mapping (``caledonia_env.scenario.PORT_LABELS_V1``). Before version 5 the
    bundled default held the estimates of 2026-11 (now the named ruleset
    ``estimates-2026-11``; the then named ``sourced-2026-11`` is now
    ``market-estimate-2026-11``) and the
    swap and solo-import switches defaulted to ``READINGS_V4``. A version-5 record was
    played on the sourced default with the old market (now the named ruleset
    ``market-estimate-2026-11``) and the readings ``READINGS_V5``; a config naming a ruleset
    path keeps it. Records before version 5 get the ``READINGS_V5`` readings too.
    """
    out = dict(d)
    version = d.get("version", RECORD_VERSION)
    if version < PRINTED_PORTS_VERSION:
        if isinstance(d.get("config"), dict):
            out["config"] = {CONFIG_NAMES_V3.get(k, k): v for k, v in d["config"].items()}
        if isinstance(d.get("scenario"), dict):
            out["scenario"] = {"version": 1, **d["scenario"]}
    if version < SOURCED_DEFAULT_VERSION:
        _old_default(out, READINGS_V4, RULESET_NAMES_V4)
    if version < PRINTED_MARKET_VERSION:
        _old_default(out, READINGS_V5, RULESET_NAMES_V5 if version == SOURCED_DEFAULT_VERSION
                     else {})
    return out


def _old_default(out, readings, names):
    """In ``out``: the ``readings`` a config does not name, and the ``names`` of rulesets
    (config and scenario) as they are called now."""
    for part in ("config", "scenario"):
        if isinstance(out.get(part), dict):
            setup = {**readings, **out[part]} if part == "config" else dict(out[part])
            name = setup.get("ruleset")
            if not isinstance(name, (dict, list)) and name in names:
                setup["ruleset"] = names[name]
            out[part] = setup


def _refuse_ruleset_path(d: dict) -> None:
    for part in ("config", "scenario"):
        path = d.get(part, {}).get("ruleset")
        if path is not None:
            raise RecordError(f"records uploaded here may not name a ruleset path ({part}.ruleset "
                              f"= {str(path)[:80]!r}); bundled rulesets: only the default, "
                              f"written \"ruleset\": null")


class Verifier:
    """Checks a replay against a record, step by step (used by ``Game.from_json``).

    ``strict=True`` refuses a record without checksum (RecordError); otherwise such a
    record replays with a :class:`RecordWarning`. A version-2 checksum covers the state row
    followed by the Automa event log: pass the replaying game's log (a game replayed from
    its start, whose log is never reset, holds what that row held).
    """

    def __init__(self, record: dict, strict: bool = False):
        self.checksum = record.get("checksum")
        self.log_in_state = record.get("version") == LOG_IN_STATE_VERSION
        self.scores = record.get("scores")
        if self.checksum is None:
            msg = (f"game record version {record.get('version')} has no checksum: it replays "
                   f"without verification")
            if strict:
                raise RecordError(msg + " (strict=True)")
            warnings.warn(msg, RecordWarning, stacklevel=3)

    def step(self, k: int, action: int, state: np.ndarray, amlog: np.ndarray) -> None:
        """After action number ``k`` (0-based) was applied."""
        if self.checksum is None:
            return
        if step_digest(state, amlog if self.log_in_state else None) != self.checksum["steps"][k]:
            raise RecordError(f"the replay diverges from the record at step {k} (action "
                              f"{action}): the state after it differs (different engine "
                              f"version or an edited record)")

    def final(self, state: np.ndarray, amlog: np.ndarray, scores) -> None:
        if self.checksum is not None and state_digest(
                state, amlog if self.log_in_state else None) != self.checksum["final_state"]:
            raise RecordError("the replay's final state differs from the record's checksum")
        if scores is None or self.scores is None:
            return
        scores = [int(x) for x in scores]       # plain ints: no np.int64(33) in the message
        if scores != self.scores:
            raise RecordError(f"the replay's scores {scores} differ from the record's "
                              f"{self.scores}")
