"""Terminal rewards shared by the AEC, Gymnasium and vector envs (numba).

Modes (``reward=`` option of every env):

- ``"win"`` (default): +1 for a sole winner, 0 for each of tied winners (the
  tie is shared), -1 for everyone else — the same as :meth:`Game.returns`.
- ``"rank"``: 1 - 2·rank/(n-1) (first +1, last -1, linear between); tied
  players share the mean of the ranks they cover. Sums to 0.
- ``"score_diff"``: (own VP - mean VP of the other players) / 100. Sums to 0.
- ``"vp"``: the own final VP (the solo game's reward, R-9.2).

:func:`projected_score_diff` is the potential of the optional reward shaping of the
self-play trainer: the ``score_diff`` the players would have if the game ended now.

Winner and ranks use the final VP (R-7) with the rulebook tiebreak the Game
API uses: most money left over after buying VP ([interp] R-7).
"""
import numpy as np

from caledonia_env.engine.board import pofs
from caledonia_env.engine.constants import MAX_PLAYERS
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (copy_state, P_MONEY, P_SCORE, S_NP, SCORE_FIELDS, T_AM_LEVEL,
                             T_AM_MONEY_PER_VP, T_MONEY_PER_VP)
from caledonia_env.engine.scoring import final_scoring

REWARD_MODES = ("win", "rank", "score_diff", "vp")
R_WIN, R_RANK, R_SCORE_DIFF, R_VP = range(4)
SCORE_DIFF_SCALE = 100.0
SCORE_TOTAL = SCORE_FIELDS.index("total")


def reward_mode(name) -> int:
    """Index of a reward mode name; ValueError listing the allowed names."""
    if name not in REWARD_MODES:
        raise ValueError(f"reward must be one of {REWARD_MODES}, got {name!r}")
    return REWARD_MODES.index(name)


@njit(cache=True)
def terminal_rewards(s, T, mode, out):
    """Write each player's terminal reward into out[:n] (valid once the game is over, R-7)."""
    n = s[S_NP]
    per = T[T_MONEY_PER_VP]
    if per <= 0:
        per = 1
    key = np.zeros(MAX_PLAYERS, np.int64)
    vp = np.zeros(MAX_PLAYERS, np.int64)
    for p in range(n):
        poff = pofs(p)
        vp[p] = s[poff + P_SCORE + SCORE_TOTAL]
        rest = s[poff + P_MONEY] % (T[T_AM_MONEY_PER_VP] if T[T_AM_LEVEL + p] > 0 else per)
        key[p] = vp[p] * per + rest         # an Automa's leftover is below its £5
    for p in range(MAX_PLAYERS):
        out[p] = 0.0
    if mode == R_VP:
        for p in range(n):
            out[p] = vp[p]
        return
    if mode == R_SCORE_DIFF:
        total = 0
        for p in range(n):
            total += vp[p]
        for p in range(n):
            others = (total - vp[p]) / (n - 1)
            out[p] = (vp[p] - others) / SCORE_DIFF_SCALE
        return
    for p in range(n):
        better = 0
        equal = 0
        for q in range(n):
            if key[q] > key[p]:
                better += 1
            elif key[q] == key[p]:
                equal += 1
        if mode == R_WIN:
            if better > 0:
                out[p] = -1.0
            elif equal == 1:
                out[p] = 1.0
            else:
                out[p] = 0.0
        else:
            mean_rank = better + (equal - 1) / 2.0
            out[p] = 1.0 - 2.0 * mean_rank / (n - 1)


@njit(cache=True)
def projected_score_diff(s, T, scratch, out):
    """out[:n] = (own VP - the others' mean VP) / 100 if the game were scored now (R-7).

    ``scratch`` (same shape as ``s``) receives a copy that is scored; ``s`` is unchanged.
    At the end of the game it equals the ``score_diff`` reward."""
    copy_state(scratch, s)
    final_scoring(scratch, T)
    if s[S_NP] < 2:
        out[:] = 0.0
        return
    terminal_rewards(scratch, T, R_SCORE_DIFF, out)
