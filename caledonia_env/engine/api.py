"""Fast paths for the Python ``Game`` API: one numba call per ``legal_actions()`` / ``step()``.

``seen`` (int32[STATE_SIZE + 1]) remembers the state the ``mask`` was computed for; its last
cell is 1 while that copy is valid. ``checked_apply`` reuses the mask only when the state
still equals that copy cell by cell, so writing into ``game.state`` by hand stays safe.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .actions import N_ACTIONS
from .constants import CTX_GAME_OVER
from .layout import S_CTX
from .mask import legal_mask
from .step import apply_action

APPLIED = 0
ILLEGAL = 1
GAME_OVER = 2


@njit(cache=True)
def _mask_for(s, T, mask, seen):
    n = s.size
    if seen[n] == 1:
        diff = 0
        for i in range(n):                  # no early exit: vectorised by LLVM
            diff |= s[i] ^ seen[i]
        if diff == 0:
            return
    legal_mask(s, T, mask)
    seen[:n] = s
    seen[n] = 1


#: ``mask`` is int8[MASK_SIZE]: N_ACTIONS rounded up to whole 8-byte words, scanned by word.
MASK_SIZE = (N_ACTIONS + 7) // 8 * 8


@njit(cache=True)
def legal_ids(s, T, mask, seen, ids):
    """Write the legal action ids of the pending decision into ``ids``; return their count."""
    _mask_for(s, T, mask, seen)
    words = mask.view(np.uint64)
    k = 0
    for w in range(words.size):
        if words[w]:
            for a in range(8 * w, 8 * w + 8):
                if mask[a]:
                    ids[k] = a
                    k += 1
    return k


@njit(cache=True)
def checked_apply(s, T, mask, seen, a):
    """Apply ``a`` if it is legal: APPLIED, else ILLEGAL or GAME_OVER with ``s`` unchanged."""
    if s[S_CTX] == CTX_GAME_OVER:
        return GAME_OVER
    _mask_for(s, T, mask, seen)
    if mask[a] == 0:
        return ILLEGAL
    apply_action(s, T, a)
    seen[s.size] = 0
    return APPLIED
