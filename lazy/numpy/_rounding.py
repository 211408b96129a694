"""Rounding and sign functions.

floor, ceil, trunc and rint are primitives (one instruction each on the
CPU); the rest compose them exactly, so they fuse into one kernel with
their neighbours. Integer and bool inputs keep their dtype in floor, ceil
and trunc (and integers in round), as NumPy 2 does.
"""
from __future__ import annotations

import math

import numpy as np

from scheduler.dtypes import bool_, float32, float_result

from .. import elementwise
from ..fallback import numpy_fallback
from ..tensor import Tensor
from ._helpers import check_kind, operand, tensor

_where, _apply = (lambda c, a, b: elementwise.apply("where", c, a, b)), elementwise.apply


def _rounding(op: str, x: object) -> Tensor:
    t = tensor(x)
    return _apply(op if t.dtype.is_float else "copy", t)


def rint(x: object, /) -> Tensor:
    """Round half to even in a floating dtype: NumPy's rint of integers is
    float64 (of bools float16, here float32), unlike its `round`."""
    t = tensor(x)
    return _apply("rint", elementwise.cast(t, float_result(t.dtype)))


def floor(x: object, /) -> Tensor:
    return _rounding("floor", x)


def ceil(x: object, /) -> Tensor:
    return _rounding("ceil", x)


def trunc(x: object, /) -> Tensor:
    return _rounding("trunc", x)


def round(x: object, /, decimals: int = 0) -> Tensor:
    """Round half to even; with `decimals`, NumPy's rint(x * 10**d) / 10**d.
    Bools round as floats (float32; NumPy: float16)."""
    t = tensor(x)
    if t.dtype.is_bool:
        t = elementwise.cast(t, float32)
    if not t.dtype.is_float:
        if decimals >= 0:
            return _apply("copy", t)
        return numpy_fallback("round", np.round, (t,), {"decimals": decimals})
    if decimals == 0:
        return _apply("rint", t)
    scale = _power_of_ten(abs(decimals))
    if decimals > 0:
        return _apply("truediv", _apply("rint", _apply("mul", t, scale)), scale)
    return _apply("mul", _apply("rint", _apply("truediv", t, scale)), scale)


def _power_of_ten(n: int) -> float:
    """10**n as NumPy's round computes it (a product of tens, which differs
    from 10.0**n in the last bit from n = 23 on): inf past 1e308, so that
    huge decimals give NaN as in NumPy, where 10.0**n raises OverflowError."""
    scale = float(10 ** min(n, 8))
    for _ in range(8, n):
        if scale == math.inf:
            break
        scale *= 10.0
    return scale


def sign(x: object, /) -> Tensor:
    """-1, 0 or 1 in x's dtype; NaN stays NaN and -0.0 gives 0.0 (NumPy)."""
    t = tensor(x)
    check_kind("sign", t, "if")
    one, zero = elementwise.const(1, t.dtype, (), t.device), elementwise.const(0, t.dtype, (),
                                                                              t.device)
    rest = _where(_apply("eq", t, 0), zero, t) if t.dtype.is_float else zero
    return _where(_apply("gt", t, 0), one, _where(_apply("lt", t, 0), _apply("neg", one), rest))


def signbit(x: object, /) -> Tensor:
    """Is the sign bit set (-0.0 and negative NaNs too): the `signbit` primitive."""
    t = tensor(x)
    if t.dtype.is_bool:
        return elementwise.filled(False, bool_, t.shape, t.device)
    if t.dtype.is_int:
        return _apply("lt", t, 0)
    return _apply("signbit", t)


def copysign(x1: object, x2: object, /) -> Tensor:
    """|x1| with the sign bit of x2 (floating result, as NumPy)."""
    a, b = operand(x1), operand(x2)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = tensor(a)
    return _apply("copysign", a, b)


__all__ = ["ceil", "copysign", "floor", "rint", "round", "sign", "signbit", "trunc"]
