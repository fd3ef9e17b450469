"""Bit instructions for the compiled kernels: population count and trailing zeros.

numba has no operator for either; written as loops they cost one step per bit, where the
processor has one instruction (``popcnt``, ``tzcnt``). These are LLVM's intrinsics, which
compile to those instructions on the machine numba compiles for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def _popcount(typingctx: Any, x: Any) -> Any:
    """The number of set bits of an ``int64``."""
    del typingctx

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ctpop(args[0])

    return types.int64(types.int64), codegen


@intrinsic
def _trailing_zeros(typingctx: Any, x: Any) -> Any:
    """The index of the lowest set bit of a non-zero ``int64`` (64 for zero)."""
    del typingctx

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.int64(types.int64), codegen


popcount = cast(Callable[[int], int], _popcount)
trailing_zeros = cast(Callable[[int], int], _trailing_zeros)
