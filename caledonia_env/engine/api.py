"""Fast path of the Python ``Game`` API: one numba call per ``legal_actions()`` / ``step()``.

``step()`` leaves the next decision's mask ready (computed in the same call), so a caller
that steps and then reads the mask (every env, every search) pays one call per move.

``mask`` is int8[actions.MASK_WIDTH], scanned a 64-bit word at a time. ``seen``
(int32[STATE_SIZE + 1]) remembers the state the ``mask`` was computed for; its last cell is
1 while that copy is valid. The mask is reused only while the state still equals that copy
cell by cell, so writing into ``game.state`` by hand stays safe. Both entry points are one
function so that the big mask and step code are linked into one compiled library (cold
compile time).
"""
from __future__ import annotations

import numpy as np

from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import game_over
from caledonia_env.engine.mask import legal_mask
from caledonia_env.engine.step import apply_action_log

APPLIED = 0
ILLEGAL = 1
GAME_OVER = 2
LEGAL_IDS = -1
LEGAL_MASK = -2


@njit(cache=True)
def game_call(s, T, mask, seen, ids, amlog, a, automa):
    """``a == LEGAL_IDS``: write the legal ids into ``ids`` and return their count;
    ``a == LEGAL_MASK``: only make ``mask`` current (returns 0).
    ``a >= 0``: apply ``a`` if it is legal (its Automa events into ``amlog``), compute the
    new state's mask (unless the game is over) and return APPLIED, else ILLEGAL or
    GAME_OVER with ``s`` unchanged."""
    if a >= 0 and game_over(s):
        return GAME_OVER
    n = s.size
    diff = 1 - seen[n]
    if diff == 0:
        for i in range(n):                  # no early exit: vectorised by LLVM
            diff |= s[i] ^ seen[i]
    if diff != 0:
        legal_mask(s, T, mask)
        for i in range(n):                  # a loop, not seen[:n] = s: no shape-error path
            seen[i] = s[i]                  # to compile (cold start)
        seen[n] = 1
    if a >= 0:
        if mask[a] == 0:
            return ILLEGAL
        apply_action_log(s, T, a, amlog, automa)
        if game_over(s):
            seen[n] = 0
        else:
            legal_mask(s, T, mask)
            for i in range(n):
                seen[i] = s[i]
        return APPLIED
    if a == LEGAL_MASK:
        return 0
    words = mask.view(np.uint64)
    k = 0
    for w in range(words.size):
        if words[w]:
            for b in range(8 * w, 8 * w + 8):
                if mask[b]:
                    ids[k] = b
                    k += 1
    return k
