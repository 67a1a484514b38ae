"""Compile machinery: njit and the numba cache, first-run notice, compile helper, scratch."""
