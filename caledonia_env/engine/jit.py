"""``njit`` for the whole project: numba's, without one compilation per constant argument.

When jitted code calls another jitted function with a constant (``unit_cost(s, T, p, 6,
...)``, ``can_tech(s, T, p, t, True)``), numba types that argument as ``Literal[int](6)``
or ``Literal[bool](True)`` and compiles a separate specialization of the callee, and of
everything it calls with that argument, for every constant value: a cold start compiled
``log_event`` 11 times and ``unit_cost`` 5 times. The functions made here resolve every
call from jitted code with the arguments' plain types (``types.unliteral``), so each
function is compiled once per array/scalar signature. Python callers are unaffected
(their arguments never have literal types). A function that needs a literal argument
(``numba.literally``) must use numba's own ``njit``.
"""
from __future__ import annotations

import numba
from numba.core import types


def _plain_calls(dispatcher):
    """Make calls to ``dispatcher`` from jitted code resolve with non-literal types (with
    ``NUMBA_DISABLE_JIT=1`` numba returns the plain function: nothing to do)."""
    resolve = getattr(dispatcher, "get_call_template", None)
    if resolve is None:
        return dispatcher

    def get_call_template(args, kws):
        return resolve(tuple(types.unliteral(a) for a in args),
                       {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def njit(*args, **options):
    """``numba.njit`` (same options, bare or called) whose dispatcher compiles one
    specialization per non-literal signature (see the module docstring)."""
    if len(args) == 1 and callable(args[0]) and not options:
        return _plain_calls(numba.njit(args[0]))
    decorate = numba.njit(*args, **options)
    return lambda func: _plain_calls(decorate(func))
