"""Scratch arrays on the calling frame's stack.

``scratch(n, dtype)`` is an uninitialized 1-d array of ``n`` items that lives until the
calling function returns; ``n`` must be a compile-time constant: a literal or an int imported
by name (``RB_LEN``), not a module attribute (``layout.RB_LEN``, which numba types as a plain
int64). Compiled code puts it on the caller's stack: no heap allocation and no reference
counting, where numba's ``np.empty`` costs as much as a short helper of the engine or of
the evaluation (the greedy bot's evaluation needs several small arrays a call). Plain
Python (``NUMBA_DISABLE_JIT``) gets ``np.empty(n, dtype)``.

Never return such an array or store it in another array or object: it dies with the
caller's frame. Passing it down to callees is fine.
"""
import numpy as np
from numba.core import cgutils, errors, types
from numba.extending import intrinsic, overload


def scratch(n, dtype):
    """An uninitialized ``dtype[n]`` that dies with the calling frame (see the module)."""
    return np.empty(n, dtype)


@intrinsic
def _stack_array(typingctx, n, dtype):
    """``dtype[n]`` allocated in the calling function's entry block (``alloca``), with no
    meminfo, so numba's reference counting leaves it alone."""
    if not isinstance(n, types.IntegerLiteral):
        raise errors.TypingError(f"scratch() needs a constant length, got {n}")
    if not isinstance(dtype, (types.NumberClass, types.DType)):
        raise errors.TypingError(f"scratch() needs a NumPy scalar type, got {dtype}")
    item_type = dtype.dtype if isinstance(dtype, types.DType) else dtype.instance_type
    length = n.literal_value
    arr = types.Array(item_type, 1, "C")

    def codegen(context, builder, sig, args):
        item = context.get_data_type(item_type)
        size = context.get_constant(types.intp, context.get_abi_sizeof(item))
        ary = context.make_array(arr)(context, builder)
        context.populate_array(ary, data=cgutils.alloca_once(builder, item, size=length),
                               shape=[context.get_constant(types.intp, length)],
                               strides=[size], itemsize=size, meminfo=None)
        return ary._getvalue()
    return arr(n, dtype), codegen


@overload(scratch, inline="always")
def _scratch_compiled(n, dtype):
    def impl(n, dtype):
        return _stack_array(n, dtype)
    return impl
