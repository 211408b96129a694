"""Transcendental functions composed from exp, log, sqrt, sin and cos.

Each composition is the textbook accurate one (a few ulp), so it fuses
like any elementwise op: `log1p` uses Goldberg's correction (exact where
1 + x rounds), `sinh`, `asinh`, `acosh` and `atanh` go through it or
`expm1`, `hypot` scales by the larger magnitude (no overflow). Functions
with no accurate composition, or one much slower than their own code
(expm1, tan, asin, acos, atan, atan2, nextafter), are primitives of their
own (scheduler/ops.py).
"""
from __future__ import annotations

import math

import numpy as np

from scheduler.dtypes import float_result, result_type

from .. import elementwise
from ..tensor import Tensor
from ._helpers import operand, tensor

_LN2 = math.log(2.0)
_BIG = 2.0 ** 28  # asinh/acosh: above this, log(2x) is exact to rounding
_ap = elementwise.apply


def _where(c: Tensor, a: object, b: object) -> Tensor:
    return _ap("where", c, a, b)


def _float(x: object) -> Tensor:
    """x in its floating dtype (float64 for integers, float32 for bool, as lazyrt's exp)."""
    t = tensor(x)
    return elementwise.cast(t, float_result(t.dtype))


def _float_pair(x1: object, x2: object) -> tuple[Tensor, Tensor]:
    a, b = operand(x1), operand(x2)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = tensor(a)
    d = float_result(result_type(*(v.dtype if isinstance(v, Tensor) else v for v in (a, b))))
    device = (a if isinstance(a, Tensor) else b).device

    def conv(v: object) -> Tensor:
        return elementwise.cast(v, d) if isinstance(v, Tensor) else elementwise.const(v, d, (),
                                                                                     device)
    return conv(a), conv(b)


def _odd(x: Tensor, magnitude: Tensor) -> Tensor:
    """f(x) = sign(x) f(|x|), with f(+-0) = +-0 (x itself)."""
    return _where(_ap("eq", x, 0.0), x, _where(_ap("lt", x, 0.0), _ap("neg", magnitude),
                                                magnitude))


def log1p(x: object, /) -> Tensor:
    """log(1 + x) without cancellation: log(u) * (x / (u - 1)) for u = 1 + x
    (Goldberg; the ratio first, so a huge x cannot overflow the product)."""
    t = _float(x)
    u = _ap("add", t, 1.0)
    out = _ap("mul", _ap("log", u), _ap("truediv", t, _ap("sub", u, 1.0)))
    out = _where(_ap("eq", u, 1.0), t, out)
    return _where(_ap("eq", u, np.inf), np.inf, out)


def log2(x: object, /) -> Tensor:
    return _ap("log2", _float(x))


def log10(x: object, /) -> Tensor:
    return _ap("log10", _float(x))


def _half_exp(a: Tensor) -> Tensor:
    """e**a / 2 as (w / 2) * w with w = e**(a/2): finite where e**a alone
    overflows but its half does not (float64 a in (709.78, 710.48])."""
    w = _ap("exp", _ap("mul", a, 0.5))
    return _ap("mul", _ap("mul", w, 0.5), w)


def sinh(x: object, /) -> Tensor:
    """sign(x) (E + E / (E + 1)) / 2 with E = expm1(|x|): accurate near 0 too;
    e**|x| / 2 where E overflows."""
    t = _float(x)
    a = _ap("abs", t)
    e = expm1(a)
    mag = _ap("mul", _ap("add", e, _ap("truediv", e, _ap("add", e, 1.0))), 0.5)
    return _odd(t, _where(_ap("eq", e, np.inf), _half_exp(a), mag))


def cosh(x: object, /) -> Tensor:
    """(u + 1/u) / 2 with u = e**|x|; e**|x| / 2 where u overflows."""
    t = _float(x)
    a = _ap("abs", t)
    u = _ap("exp", a)
    return _where(_ap("eq", u, np.inf), _half_exp(a),
                  _ap("mul", _ap("add", u, _ap("truediv", 1.0, u)), 0.5))


def tanh(x: object, /) -> Tensor:
    return _ap("tanh", tensor(x))


def atanh(x: object, /) -> Tensor:
    """sign(x) log1p(2|x| / (1 - |x|)) / 2."""
    t = _float(x)
    a = _ap("abs", t)
    mag = _ap("mul", log1p(_ap("truediv", _ap("mul", a, 2.0), _ap("sub", 1.0, a))), 0.5)
    return _odd(t, mag)


def asinh(x: object, /) -> Tensor:
    """sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); log(2|x|) for huge |x|."""
    t = _float(x)
    a = _ap("abs", t)
    a2 = _ap("mul", a, a)
    small = log1p(_ap("add", a, _ap("truediv", a2, _ap("add", _ap("sqrt", _ap("add", a2, 1.0)),
                                                            1.0))))
    big = _ap("add", _ap("log", a), _LN2)
    return _odd(t, _where(_ap("gt", a, _BIG), big, small))


def acosh(x: object, /) -> Tensor:
    """log1p(t + sqrt(2t + t^2)) for t = x - 1; log(2x) for huge x; NaN below 1."""
    v = _float(x)
    t = _ap("sub", v, 1.0)
    small = log1p(_ap("add", t, _ap("sqrt", _ap("add", _ap("mul", t, 2.0), _ap("mul", t, t)))))
    big = _ap("add", _ap("log", v), _LN2)
    return _where(_ap("lt", v, 1.0), np.nan, _where(_ap("gt", v, _BIG), big, small))


def hypot(x1: object, x2: object, /) -> Tensor:
    """sqrt(x1^2 + x2^2) as m sqrt(1 + (n/m)^2), m >= n the magnitudes: never overflows
    early; inf if either is inf (even with a NaN), as C's hypot."""
    a, b = _float_pair(x1, x2)
    a, b = _ap("abs", a), _ap("abs", b)
    m, n = _ap("maximum", a, b), _ap("minimum", a, b)
    r = _ap("truediv", n, m)
    out = _ap("mul", m, _ap("sqrt", _ap("add", _ap("mul", r, r), 1.0)))
    out = _where(_ap("eq", m, 0.0), 0.0, out)
    inf = _ap("or", _ap("eq", a, np.inf), _ap("eq", b, np.inf))
    return _where(inf, np.inf, out)


def logaddexp(x1: object, x2: object, /) -> Tensor:
    """log(exp(x1) + exp(x2)) as max + log1p(exp(-|x1 - x2|)) (NumPy's formula)."""
    a, b = _float_pair(x1, x2)
    m = _ap("maximum", a, b)
    out = _ap("add", m, log1p(_ap("exp", _ap("neg", _ap("abs", _ap("sub", a, b))))))
    return _where(_ap("eq", a, b), _ap("add", a, _LN2), out)


def _primitive(op: str, arity: int):
    """A primitive of its own (scheduler/ops.py): lazy and fused like any elementwise op."""
    if arity == 1:
        def f(x: object, /) -> Tensor:
            return _ap(op, _float(x))
    else:
        def f(x1: object, x2: object, /) -> Tensor:
            return _ap(op, *_float_pair(x1, x2))
    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"Elementwise {op} in the floating dtype (as the C library's {op})."
    return f


expm1 = _primitive("expm1", 1)
tan = _primitive("tan", 1)
acos = _primitive("acos", 1)
asin = _primitive("asin", 1)
atan = _primitive("atan", 1)
atan2 = _primitive("atan2", 2)
nextafter = _primitive("nextafter", 2)

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cosh", "expm1",
           "hypot", "log10", "log1p", "log2", "logaddexp", "nextafter", "sinh", "tan", "tanh"]
