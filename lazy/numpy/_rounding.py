"""Rounding and sign functions, composed exactly from lazy primitives.

lazyrt has no floor primitive, but NumPy's float floor division by 1 is
exactly floor for every finite value (`fmod` is exact), so these fuse
into one kernel with their neighbours. Integer and bool inputs keep their
dtype, as NumPy 2 does.
"""
from __future__ import annotations

import numpy as np

from scheduler.dtypes import bool_

from .. import elementwise
from ..fallback import numpy_fallback
from ..tensor import Tensor
from ._helpers import check_kind, operand, tensor

_where, _apply = (lambda c, a, b: elementwise.apply("where", c, a, b)), elementwise.apply


def floor(x: object, /) -> Tensor:
    """Largest integer <= x: where |x| is inf, x itself, else x // 1 (exact)."""
    t = tensor(x)
    if not t.dtype.is_float:
        return _apply("copy", t)
    return _where(_apply("eq", _apply("abs", t), np.inf), t, _apply("floordiv", t, 1.0))


def ceil(x: object, /) -> Tensor:
    """-floor(-x): keeps the sign of negative results that round to zero."""
    t = tensor(x)
    if not t.dtype.is_float:
        return _apply("copy", t)
    return _apply("neg", floor(_apply("neg", t)))


def trunc(x: object, /) -> Tensor:
    t = tensor(x)
    if not t.dtype.is_float:
        return _apply("copy", t)
    return _where(_apply("lt", t, 0.0), ceil(t), floor(t))


def _rint(t: Tensor) -> Tensor:
    """Round half to even: floor, then up when the fraction is over 1/2 or exactly 1/2
    with an odd floor; a zero result keeps x's sign (x * 0), as NumPy's rint."""
    r = floor(t)
    frac = _apply("sub", t, r)  # exact: r and t share their exponent range
    odd = _apply("eq", _apply("mod", r, 2.0), 1.0)
    up = _apply("or", _apply("gt", frac, 0.5), _apply("and", _apply("eq", frac, 0.5), odd))
    out = _apply("add", r, elementwise.cast(up, t.dtype))
    return _where(_apply("eq", out, 0.0), _apply("mul", t, 0.0), out)


def round(x: object, /, decimals: int = 0) -> Tensor:
    """Round half to even; with `decimals`, NumPy's rint(x * 10**d) / 10**d."""
    t = tensor(x)
    if not t.dtype.is_float:
        if decimals >= 0:
            return _apply("copy", t)
        return numpy_fallback("round", np.round, (t,), {"decimals": decimals})
    if decimals == 0:
        return _rint(t)
    scale = 10.0 ** abs(decimals)
    if decimals > 0:
        return _apply("truediv", _rint(_apply("mul", t, scale)), scale)
    return _apply("mul", _rint(_apply("truediv", t, scale)), scale)


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
        return elementwise.const(False, bool_, t.shape, t.device)
    if t.dtype.is_int:
        return _apply("lt", t, 0)
    return _apply("signbit", t)


def copysign(x1: object, x2: object, /) -> Tensor:
    """|x1| with the sign bit of x2 (floating result, as NumPy)."""
    a, b = operand(x1), operand(x2)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = tensor(a)
    return _apply("copysign", a, b)


__all__ = ["ceil", "copysign", "floor", "round", "sign", "signbit", "trunc"]
