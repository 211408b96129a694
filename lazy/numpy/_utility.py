"""Utility functions: all, any (with `where=`), diff, nan_to_num (native) and NumPy's
comparisons of whole arrays (`isclose` native; `allclose`/`array_equal`
sync to return a bool)."""
from __future__ import annotations

import numpy as np

from scheduler.dtypes import float64

from .. import elementwise, reductions
from ..tensor import Tensor
from ._elementwise import isfinite, isnan
from ._helpers import axis_arg, operand, store_out, tensor
from ._manipulation import concat, numpy_axes
from ._searching import where
from ._statistical import _mask

_ap = elementwise.apply


def all(x: object, /, axis: object = None, out: object = None, keepdims: bool = False, *,
        where: object = True) -> Tensor:
    return store_out(_truth("all", x, axis, keepdims, where), out)


def any(x: object, /, axis: object = None, out: object = None, keepdims: bool = False, *,
        where: object = True) -> Tensor:
    return store_out(_truth("any", x, axis, keepdims, where), out)


def _truth(op: str, x: object, axis: object, keepdims: bool, where: object) -> Tensor:
    """all/any; `where` leaves elements out as the op's identity (True for
    all, False for any), so an all-False slice is True for all, False for any."""
    t = tensor(x)
    if where is not True:
        t = _ap("where", _mask(where, t.shape), t, op == "all")
    return reductions.reduce(t, op, numpy_axes(axis, t.ndim, scalar_int=True), keepdims)


def diff(x: object, /, n: int = 1, axis: int = -1, prepend: object = None,
         append: object = None) -> Tensor:
    """n-th forward difference along `axis`: differences of shifted views (bool: !=)."""
    t = tensor(x)
    if t.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    d = axis_arg(axis, t.ndim)
    if prepend is not None or append is not None:
        parts = [_edge(prepend, t, d), t, _edge(append, t, d)]
        t = concat([p for p in parts if p is not None], axis=d)
    head = (slice(None),) * d
    for _ in range(n):
        hi, lo = t[head + (slice(1, None),)], t[head + (slice(None, -1),)]
        t = _ap("ne", hi, lo) if t.dtype.is_bool else _ap("sub", hi, lo)
    return t


def _edge(v: object, t: Tensor, d: int) -> Tensor | None:
    """A prepend/append value: scalars broadcast to one slice along `d` (NumPy)."""
    if v is None:
        return None
    e = tensor(v)
    if e.ndim == 0:
        shape = t.shape[:d] + (1,) + t.shape[d + 1:]
        return e.broadcast_to(shape)
    return e


def isclose(a: object, b: object, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """|a - b| <= atol + rtol |b| for finite values; infinities must be equal (NumPy)."""
    x, y = operand(a), operand(b)
    x, y = (tensor(v) if not isinstance(v, Tensor) else v for v in (x, y))
    if not x.dtype.is_float:
        x = elementwise.cast(x, float64)
    if not y.dtype.is_float:
        y = elementwise.cast(y, float64)
    close = _ap("le", _ap("abs", _ap("sub", x, y)), _ap("add", _ap("mul", _ap("abs", y), rtol),
                                                        atol))
    finite = _ap("and", isfinite(x), isfinite(y))
    out = _ap("where", finite, close, _ap("eq", x, y))
    if equal_nan:
        out = _ap("or", out, _ap("and", isnan(x), isnan(y)))
    return out


def allclose(a: object, b: object, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """A Python bool: reads the result (an implicit sync)."""
    return bool(all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1: object, a2: object, equal_nan: bool = False) -> bool:
    """Same shape and elements (a Python bool; an implicit sync)."""
    x, y = tensor(a1), tensor(a2)
    if x.shape != y.shape:
        return False
    eq = _ap("eq", x, y)
    if equal_nan and (x.dtype.is_float or y.dtype.is_float):
        eq = _ap("or", eq, _ap("and", isnan(x), isnan(y)))
    return bool(all(eq))


def nan_to_num(x: object, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """NaN becomes `nan`, inf `posinf` and -inf `neginf` (by default the
    dtype's largest and smallest finite values); integers and bools are
    unchanged. `copy=False` writes the tensor in place, a lazy write that
    its views see, as NumPy writes its array (a NumPy array is left to
    NumPy). The values are cast to x's dtype, never promote it."""
    if isinstance(x, np.ndarray) and not copy:
        return np.nan_to_num(x, copy=False, nan=nan, posinf=posinf, neginf=neginf)
    t = tensor(x)
    if not t.dtype.is_float:
        return _ap("copy", t) if copy else t
    info = np.finfo(t.dtype.np)
    big = float(info.max if posinf is None else posinf)  # Python floats: weak, never promote
    small = float(info.min if neginf is None else neginf)
    result = where(isnan(t), float(nan),
                   where(_ap("eq", t, np.inf), big, where(_ap("eq", t, -np.inf), small, t)))
    if copy:
        return result
    t[...] = result
    return t


__all__ = ["all", "allclose", "any", "array_equal", "diff", "isclose", "nan_to_num"]

