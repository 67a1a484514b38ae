"""Automa seats in the turn flow (A-1.3 … A-1.5, A-3): resolved in numba until a
non-Automa decision (or the end of the game) is pending."""

from caledonia_env.engine.automa.turn import automa_turn
from caledonia_env.engine.automa.deck import is_automa
from caledonia_env.engine.constants import CTX_MAIN, CTX_START_PICK, CTX_START_WORKER
from caledonia_env.engine.flow import end_turn, resolve
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import S_CTX, S_MAIN_DONE, S_PLAYER, S_SETUP_PTR


@njit(cache=True)
def run_automata(s, T, amlog):
    """Play every pending Automa decision: its turns (A-3); it takes no starting pair (A-1.3)
    and its starting workers were placed at setup (A-1.4). Events go to ``amlog``
    (``automa.events.log_event``)."""
    while True:
        p = s[S_PLAYER]
        if p < 0 or not is_automa(T, p):
            return
        ctx = s[S_CTX]
        if ctx == CTX_MAIN:
            automa_turn(s, T, p, amlog)
            s[S_MAIN_DONE] = 1
            end_turn(s, T, True)
        elif ctx == CTX_START_PICK or ctx == CTX_START_WORKER:
            s[S_SETUP_PTR] += 1
            resolve(s, T, True)
        else:
            return
