"""The observation layout read back in Python: :func:`decode_observation` (named fields),
:func:`describe_observation` (a readable summary) and :func:`layout_markdown` (the table of
docs/observation.md). The layout itself and the numba encoder that writes it are
:mod:`caledonia_env.envs.observation`."""
import numpy as np

from caledonia_env.data.names import SCORING_TILES
from caledonia_env.engine.constants import CONTEXT_NAMES, GOOD_NAMES, MAX_PLAYERS
from caledonia_env.envs.observation import (CF, CONTRACT_FEATURES, CONTRACT_SCALE, GLORY_SCALE, LAYOUT,
                          MAP_CHANNELS, MC, MC_OCC, MONEY_SCALE, O_MAP, O_PLAYERS, OBS_SIZE, PB,
                          PF, PORT_FEATURES, PRICE_SCALE, SPF, START_PICK_FEATURES)


def decode_observation(vec) -> dict:
    """Named fields of an observation vector (``{"global.price": array, ...}``).

    Per-player fields have a leading axis of ``MAX_PLAYERS`` (relative seats,
    observer first); ``map.nodes`` has shape (MAX_NODES, len(MAP_CHANNELS)).
    Values are the scaled floats of the vector (see ``docs/observation.md``).
    """
    vec = np.asarray(vec)
    if vec.shape != (OBS_SIZE,):
        raise ValueError(f"expected an observation of shape ({OBS_SIZE},), got {vec.shape}")
    out = {}
    for f in LAYOUT.fields:
        if f.group == "player":
            rows = [vec[f.offset + r * PB: f.offset + r * PB + f.size].reshape(f.shape)
                    for r in range(MAX_PLAYERS)]
            out[f.key] = np.stack(rows)
        else:
            out[f.key] = vec[f.offset:f.offset + f.size].reshape(f.shape)
    return out


def describe_observation(vec) -> dict:
    """A readable summary of a vector: contexts, prices in £, per-player money… (for debugging)."""
    d = decode_observation(vec)
    n = int(np.argmax(d["global.num_players"])) + 1
    ctx = d["decision.context"]
    rnd = d["global.round"]
    return {
        "num_players": n,
        "round": int(np.argmax(rnd)) + 1 if rnd.any() else 0,
        "context": CONTEXT_NAMES[int(np.argmax(ctx))],
        "actor": int(np.argmax(d["decision.actor"])) if d["decision.actor"].any() else -1,
        "prices": {g: round(float(v) * PRICE_SCALE) for g, v in zip(GOOD_NAMES, d["global.price"])},
        "money": [round(float(v) * MONEY_SCALE) for v in d["player.money"][:n, 0]],
        "glory": [round(float(v) * GLORY_SCALE) for v in d["player.glory"][:n, 0]],
        "scoring_tiles": [SCORING_TILES[int(np.argmax(r))] if r.any() else None
                          for r in d["global.scoring_tiles"]],
        "own_units": int(d["map.nodes"][:, MC_OCC].sum()),
    }


def layout_markdown() -> str:
    """The offset table of docs/observation.md (generated from :data:`LAYOUT`)."""
    rows = ["| offset | size | field | shape | meaning | scaling |", "|---|---|---|---|---|---|"]
    for f in LAYOUT.fields:
        if f.group == "player":
            off = f"{f.offset} (+{PB}·r)"
        else:
            off = str(f.offset)
        shape = "×".join(map(str, f.shape))
        rows.append(f"| {off} | {f.size} | `{f.key}` | {shape} | {f.meaning} | {f.scale} |")
    rows.append("")
    rows.append(f"Per-player block: {PB} values per relative seat r = 0..{MAX_PLAYERS - 1} "
                f"(r = 0 is the observer), starting at {O_PLAYERS}; total size **{OBS_SIZE}**.")
    rows.append("")
    rows.append("Contract features (" + str(CF) + "): " + ", ".join(
        f"`{c}`" + (f" /{CONTRACT_SCALE[i - 1]:g}" if i else "")
        for i, c in enumerate(CONTRACT_FEATURES)) + ".")
    rows.append("")
    rows.append(f"Map channels ({MC}, node-major: value of channel k of node v at "
                f"`{O_MAP} + v·{MC} + k`):")
    rows.append("")
    rows.append("| k | channel |")
    rows.append("|---|---|")
    for k, c in enumerate(MAP_CHANNELS):
        rows.append(f"| {k} | `{c}` |")
    rows.append("")
    rows.append(f"Port features ({PF}): " + ", ".join(f"`{p}`" for p in PORT_FEATURES) + ".")
    rows.append("")
    rows.append(f"Starting-pick features ({SPF}): " + ", ".join(
        f"`{p}`" for p in START_PICK_FEATURES) + ".")
    return "\n".join(rows)


__all__ = ["decode_observation", "describe_observation", "layout_markdown"]
