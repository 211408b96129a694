"""Statistical reductions: sum, prod, max, min, mean, var, std (native) and the
cumulative ones (NumPy fallbacks: lazyrt has no scan primitive).

Native reductions fuse their elementwise producers; `var` is two
reductions (the mean, then the sum of squared deviations).
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from scheduler.dtypes import DType, as_dtype, float64

from .. import elementwise, reductions
from ..fallback import numpy_fallback
from ..tensor import Tensor
from ._helpers import store_out, tensor
from ._manipulation import numpy_axes


def _input(x: object, dtype: object) -> Tensor:
    t = tensor(x)
    return t if dtype is None else elementwise.cast(t, as_dtype(dtype))


def _reduce(op: str, x: object, axis: object, keepdims: bool, dtype: object = None) -> Tensor:
    t = _input(x, dtype)
    out = reductions.reduce(t, op, numpy_axes(axis, t.ndim, scalar_int=True), keepdims)
    if dtype is not None and out.dtype != as_dtype(dtype):
        out = elementwise.cast(out, as_dtype(dtype))
    return out


# Arguments keep NumPy's positional order (np.sum(x, 0) works); `out=` is a lazy write.
def sum(x: object, /, axis: object = None, dtype: object = None, out: object = None,
        keepdims: bool = False) -> Tensor:
    """Sum; bool and int32 give int64 (NumPy); float32 accumulates in float64."""
    return store_out(_reduce("sum", x, axis, keepdims, dtype), out)


def prod(x: object, /, axis: object = None, dtype: object = None, out: object = None,
         keepdims: bool = False) -> Tensor:
    return store_out(_reduce("prod", x, axis, keepdims, dtype), out)


def max(x: object, /, axis: object = None, out: object = None, keepdims: bool = False) -> Tensor:
    """Maximum (NaN propagates); an empty reduction raises ValueError, as NumPy."""
    return store_out(_reduce("max", x, axis, keepdims), out)


def min(x: object, /, axis: object = None, out: object = None, keepdims: bool = False) -> Tensor:
    return store_out(_reduce("min", x, axis, keepdims), out)


def _count(t: Tensor, axes: tuple[int, ...]) -> int:
    return math.prod(t.shape[a] for a in axes)


def _floating(x: object) -> Tensor:
    """Input for var/std: bool and integers compute in float64, as NumPy."""
    t = tensor(x)
    return t if t.dtype.is_float else elementwise.cast(t, float64)


def mean(x: object, /, axis: object = None, dtype: object = None, out: object = None,
         keepdims: bool = False) -> Tensor:
    """Arithmetic mean in the floating dtype (float64 for bool and integers);
    an integer `dtype` gives NumPy's truncated integer mean."""
    t = tensor(x)
    return store_out(reductions.mean(t, numpy_axes(axis, t.ndim), keepdims, dtype=dtype), out)


def _correction(ddof: float | None, correction: float | None) -> float:
    """NumPy's rule for its two names of one argument: `correction` (the
    array API's) replaces `ddof` (NumPy's), and a nonzero `ddof` beside it
    raises; a None `ddof` is 0."""
    if correction is None:
        return 0 if ddof is None else ddof
    if ddof is not None and ddof != 0:
        raise ValueError(f"ddof and correction can't be provided simultaneously "
                         f"(got ddof={ddof!r} and correction={correction!r})")
    return correction


def var(x: object, /, axis: object = None, dtype: object = None, out: object = None,
        ddof: float | None = 0, keepdims: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Variance: mean squared deviation over N - correction (`ddof` is NumPy's name)."""
    correction = _correction(ddof, correction)
    if dtype is not None and not as_dtype(dtype).is_float:
        return store_out(_integer_var(tensor(x), axis, as_dtype(dtype), correction, keepdims),
                         out)
    # NumPy's order: the mean and the final sum in `dtype`, the deviations in
    # the promoted dtype, so float64 data keeps its precision under dtype=float32.
    t = _floating(x)
    axes = numpy_axes(axis, t.ndim)
    dev = elementwise.apply("sub", t, reductions.mean(t, axes, True, dtype=dtype))
    total = _reduce("sum", elementwise.apply("mul", dev, dev), axes, keepdims, dtype)
    n = _count(t, axes)
    return store_out(elementwise.apply("truediv", total,
                                       float(builtins.max(n - correction, 0))), out)


def _integer_var(t: Tensor, axis: object, want: DType, correction: float,
                 keepdims: bool) -> Tensor:
    """NumPy's variance with an integer or bool `dtype`: the mean truncated
    into `want`, the input's deviations from it squared and summed in `want`
    (wrapping as NumPy's do), and the quotient truncated into `want` too."""
    axes = numpy_axes(axis, t.ndim)
    dev = elementwise.apply("sub", t, reductions.mean(t, axes, True, dtype=want))
    total = _reduce("sum", elementwise.apply("mul", dev, dev), axes, keepdims, want)
    n = _count(t, axes)
    return elementwise.cast(elementwise.apply("truediv", total,
                                              float(builtins.max(n - correction, 0))), want)


def std(x: object, /, axis: object = None, dtype: object = None, out: object = None,
        ddof: float | None = 0, keepdims: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Square root of `var`. With an integer `dtype`, NumPy truncates a
    single (0-d) result into it and refuses any other, because sqrt's
    float64 output cannot be stored into an integer array: so does this."""
    v = var(x, axis, dtype, None, ddof, keepdims, correction=correction)
    if v.dtype.is_float:  # no dtype, or a floating one; sqrt's out= is same_kind in NumPy
        return store_out(elementwise.apply("sqrt", v), out, "same_kind", "ufunc 'sqrt'")
    if v.ndim:
        raise TypeError(f"std with dtype={v.dtype.name} and a result of shape {v.shape}: "
                        f"sqrt's float64 output cannot be cast to {v.dtype.name} "
                        f"(casting='same_kind'), as in NumPy; pass a floating dtype")
    return store_out(elementwise.cast(elementwise.apply("sqrt", v), v.dtype), out)


def cumulative_sum(x: object, /, *, axis: int | None = None, dtype: object = None,
                   include_initial: bool = False) -> Tensor:
    """Running sum (a NumPy fallback: there is no scan primitive)."""
    return numpy_fallback("cumulative_sum", np.cumulative_sum, (tensor(x),),
                          {"axis": axis, "dtype": _np_dtype(dtype),
                           "include_initial": include_initial})


def cumulative_prod(x: object, /, *, axis: int | None = None, dtype: object = None,
                    include_initial: bool = False) -> Tensor:
    return numpy_fallback("cumulative_prod", np.cumulative_prod, (tensor(x),),
                          {"axis": axis, "dtype": _np_dtype(dtype),
                           "include_initial": include_initial})


def cumsum(a: object, axis: int | None = None, dtype: object = None) -> Tensor:
    """NumPy's cumsum (flattens when axis is None); a NumPy fallback."""
    return numpy_fallback("cumsum", np.cumsum, (tensor(a),),
                          {"axis": axis, "dtype": _np_dtype(dtype)})


def cumprod(a: object, axis: int | None = None, dtype: object = None) -> Tensor:
    return numpy_fallback("cumprod", np.cumprod, (tensor(a),),
                          {"axis": axis, "dtype": _np_dtype(dtype)})


def _np_dtype(dtype: object) -> np.dtype | None:
    return None if dtype is None else as_dtype(dtype).np


__all__ = ["cumprod", "cumsum", "cumulative_prod", "cumulative_sum", "max", "mean", "min",
           "prod", "std", "sum", "var"]
