"""The Automa's seat flag, card table and deck (A-2, A-10).

Card columns are ``data.automa``'s CARD_*, the codes follow its ACTIONS / CRITERIA order;
the deck lives in the seat's P_AM_* fields.
"""
import numpy as np

from caledonia_env.data.automa import (CARD_ACTIONS, CARD_CRITERIA, CARD_MODULES, CARD_N_ACTIONS,
                           CARD_REMOVE, CARD_ROUND, CARD_STEPS, CARD_UPGRADE)
from caledonia_env.engine.constants import BAKERY, COW, DAIRY, DISTILLERY, FIELD, MAX_PLAYERS, SHEEP
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import (AM_CARD_W, P_AM_ACTION, P_AM_DISCARD, P_AM_NPILE, P_AM_PILE, P_AM_REMOVED,
                     P_AM_SUPPORT, S_ROUND, T_AM_CARDS, T_AM_LEVEL, T_AM_N_CARDS)
from caledonia_env.engine.rng import shuffle

# action and criterion codes of a card (data.automa.ACTIONS / CRITERIA order)
ACT_SKIP, ACT_TECH, ACT_UPGRADE, ACT_TRADE, ACT_EXPAND, ACT_FULFILL, ACT_TAKE = range(7)
CRIT_PORT, CRIT_COSTS, CRIT_SETTLEMENTS, CRIT_NEIGHBORHOOD = range(4)
# preferred unit cycle; index 6 = worker
CYCLE = (SHEEP, COW, DAIRY, BAKERY, FIELD, DISTILLERY)
N_CYCLE = 7


@njit(cache=True, inline="always")
def is_automa(T, p):
    return T[T_AM_LEVEL + p] > 0


def automa_switch(T):
    """The ``automa`` argument of the engine's entry points (``setup.new_game``,
    ``step.apply_action``, ``api.game_call`` and the kernels built on them) for tables ``T``
    (one row, or a batch of rows): ``True`` when a seat is the Automa, else ``None``. numba
    prunes the Automa's calls from a compilation whose ``automa`` is ``None``, so games
    without Automa seats never compile its code (cold start)."""
    levels = np.asarray(T)[..., T_AM_LEVEL:T_AM_LEVEL + MAX_PLAYERS]
    return True if (levels > 0).any() else None


@njit(cache=True)
def any_automa(T):
    for p in range(MAX_PLAYERS):
        if T[T_AM_LEVEL + p] > 0:
            return True
    return False


@njit(cache=True, inline="always")
def card(T, c, col):
    return T[T_AM_CARDS + c * AM_CARD_W + col]


# ------------------------------------------------------------------ deck
@njit(cache=True)
def build_deck(s, T, poff):
    """A-2.2: every card of this round or earlier, except removed ones, shuffled."""
    k = 0
    for c in range(T[T_AM_N_CARDS]):
        if card(T, c, CARD_ROUND) <= s[S_ROUND] and not (s[poff + P_AM_REMOVED] >> c) & 1:
            s[poff + P_AM_PILE + k] = c
            k += 1
    shuffle(s, s, poff + P_AM_PILE, k)
    s[poff + P_AM_NPILE] = k
    s[poff + P_AM_DISCARD] = 0
    s[poff + P_AM_ACTION] = -1
    s[poff + P_AM_SUPPORT] = -1


@njit(cache=True)
def draw_card(s, T, poff):
    """Top card; an empty pile is first refilled from the shuffled discard pile (A-2.5)."""
    if s[poff + P_AM_NPILE] == 0:
        k = 0
        for c in range(T[T_AM_N_CARDS]):
            if (s[poff + P_AM_DISCARD] >> c) & 1:
                s[poff + P_AM_PILE + k] = c
                k += 1
        shuffle(s, s, poff + P_AM_PILE, k)
        s[poff + P_AM_NPILE] = k
        s[poff + P_AM_DISCARD] = 0
        if k == 0:
            return -1
    s[poff + P_AM_NPILE] -= 1
    return s[poff + P_AM_PILE + s[poff + P_AM_NPILE]]


@njit(cache=True)
def next_action_card(s, T, poff):
    """A-2.3 / A-2.6: discard (or remove) the previous cards, draw the action card."""
    a = s[poff + P_AM_ACTION]
    if a >= 0:
        if card(T, a, CARD_REMOVE):
            s[poff + P_AM_REMOVED] |= 1 << a
        else:
            s[poff + P_AM_DISCARD] |= 1 << a
    if s[poff + P_AM_SUPPORT] >= 0:
        s[poff + P_AM_DISCARD] |= 1 << s[poff + P_AM_SUPPORT]
    s[poff + P_AM_SUPPORT] = -1
    a = draw_card(s, T, poff)
    s[poff + P_AM_ACTION] = a
    return a
