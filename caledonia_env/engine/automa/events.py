"""The Automa's event log (A-3): event kinds, the writer ``log_event`` (jitted, called by
every Automa action) and the reader ``read_events`` that turns the log into readable
events for ``Game``."""
from __future__ import annotations

import numpy as np

from caledonia_env.data.names import PORTS
from caledonia_env.engine import layout as L
from caledonia_env.engine.constants import GOOD_NAMES, UNIT_NAMES
from caledonia_env.engine.compile.jit import njit
from caledonia_env.engine.layout import AM_EV_W, AM_LOG_CAP, S_AM_NLOG

# event kinds of the log (read_events turns them into text)
EV_SKIP, EV_TECH, EV_UPGRADE, EV_TRADE, EV_EXPAND, EV_FULFILL, EV_TAKE, EV_PASS, EV_WORKER, \
    EV_PORT = range(10)


@njit(cache=True)
def log_event(s, p, kind, c, a1, a2, a3, amlog=None):
    """Count the event in ``s[S_AM_NLOG]`` and write (player | kind << 4 | (card + 1) << 9,
    a1, a2, a3) into the event log ``amlog`` (int32[AM_LOG_SIZE], a ring indexed by the
    count; empty or None: the event is only counted)."""
    n = s[S_AM_NLOG]
    if amlog is not None:
        if amlog.size:
            base = (n % AM_LOG_CAP) * AM_EV_W
            amlog[base] = p | (kind << 4) | ((c + 1) << 9)
            amlog[base + 1] = a1
            amlog[base + 2] = a2
            amlog[base + 3] = a3
    s[S_AM_NLOG] = n + 1


_KINDS = {EV_SKIP: "skip", EV_TECH: "technology", EV_UPGRADE: "upgrade", EV_TRADE: "trade",
          EV_EXPAND: "expand", EV_FULFILL: "fulfill", EV_TAKE: "take_contract", EV_PASS: "pass",
          EV_WORKER: "start_worker", EV_PORT: "port"}


def read_events(state: np.ndarray, amlog: np.ndarray, labels, after: int) -> list[dict]:
    """The events of the last engine call (``new_game_log`` or ``apply_action_log``, which
    clear the count first) from its event log ``amlog``, oldest first; nothing is changed.
    ``after`` (the number of actions applied so far) is stored in each event."""
    n = int(state[L.S_AM_NLOG])
    out = []
    for i in range(max(0, n - L.AM_LOG_CAP), n):
        base = (i % L.AM_LOG_CAP) * L.AM_EV_W
        head, a1, a2, a3 = (int(x) for x in amlog[base:base + 4])
        kind = (head >> 4) & 31
        ev = {"after": after, "player": head & 15, "kind": _KINDS[kind],
              "card": (head >> 9) or None, "args": (a1, a2, a3)}
        ev["text"] = event_text(ev, labels)
        out.append(ev)
    if n > L.AM_LOG_CAP:
        out.insert(0, {"after": after, "player": -1, "kind": "lost", "card": None,
                       "args": (n - L.AM_LOG_CAP, 0, 0),
                       "text": f"automa: {n - L.AM_LOG_CAP} older events not logged"})
    return out


def event_text(ev: dict, labels) -> str:
    """e.g. ``"automa P1: expand cow @ B2-07 (card 14)"``."""
    kind = ev["kind"]
    a1, a2, a3 = ev["args"]
    if kind == "technology":
        what = f"technology upgrade {('lumberjack', 'miner')[a1]}"
    elif kind == "upgrade":
        what = ("hire merchant", "shipping upgrade")[a1]
    elif kind == "trade":
        what = f"trade {('buy', 'sell')[a2]} {a3} {GOOD_NAMES[a1]}"
    elif kind == "expand":
        what = f"expand {UNIT_NAMES[a1]} @ {labels[a2]}"
        if a3 >= 0:
            what += f", neighborhood buy {a3 % 8} {GOOD_NAMES[a3 // 8]}"
    elif kind == "fulfill":
        what = f"fulfill contract {a1 + 1} (net £{a2:+d})"
    elif kind == "take_contract":
        what = f"take contract {a1 + 1} (£{a2:+d})" + (", fulfilled at once" if a3 else "")
    elif kind == "pass":
        what = f"pass (+£{a1})"
    elif kind == "start_worker":
        what = f"starting {UNIT_NAMES[a1]} @ {labels[a2]}"
    elif kind == "port":
        what = f"claim port {labels[-4 + a1]} ({PORTS[a2]})"
    else:
        what = kind
    card = f" (card {ev['card']})" if ev["card"] else ""
    return f"automa P{ev['player']}: {what}{card}"
