"""The numba engine: pure functions over a flat int32 state and static tables.

Every function is made by :func:`caledonia_env.engine.compile.jit.njit`; where numba caches the
compiled code (and why an edit to any project numba source recompiles it) is explained in
:mod:`caledonia_env.engine.compile.jit`.
"""
