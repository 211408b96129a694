"""NumPy's NaN-ignoring reductions and scans, native: each is its plain
counterpart over the input with its NaNs replaced (`where(x != x, v, x)`),
which fuses into the reduction's kernel, so no copy of the data is made
(NumPy's own nansum copies the array to replace them).

The replacement is NumPy's own (numpy/lib/_nanfunctions_impl.py): 0 for
sums, 1 for products, -inf/+inf for argmax/argmin, an all-NaN slice then
refused (argmax, argmin); means and variances count the elements that
are not NaN. nanmax and nanmin are a reduction of their own, `nanmax`/
`nanmin` (IEEE maxNum: NaN only for an all-NaN slice, as NumPy's fmax).
Integer and bool inputs have no NaNs: each is its plain counterpart.
nanmedian, nanquantile and nanpercentile are with the order statistics
(_order.py).

Departure: NumPy warns (RuntimeWarning) on an all-NaN slice or a variance
with no degrees of freedom; a lazy result has no values yet to look at,
so the results are NumPy's (NaN) without the warning. nanargmax and
nanargmin must raise NumPy's ValueError on an all-NaN slice at the call:
they sync (`implicit: nanargmax's all-NaN check`), the indices and the
check in one sync.
"""
from __future__ import annotations

import math

from scheduler.dtypes import as_dtype, int64

from .. import elementwise, reductions, runtime
from ..scan import scan
from ..tensor import Tensor
from ._helpers import axis_arg, store_out, tensor
from ._manipulation import numpy_axes
from ._searching import _index_out
from ._statistical import _identity, _mask, _reduce, mean, var

_ap = elementwise.apply


def _isnan(t: Tensor) -> Tensor:
    return _ap("ne", t, t)


def _replaced(t: Tensor, value: float) -> Tensor:
    """`t` with its NaNs as `value` (a float tensor; others have none)."""
    return _ap("where", _isnan(t), value, t) if t.dtype.is_float else t


def _kept(t: Tensor, where: object) -> object:
    """The mask of the elements a mean or variance counts: not NaN, and in
    `where`."""
    keep = _ap("invert", _isnan(t))
    return keep if where is True else _ap("and", keep, _mask(where, t.shape))


def nansum(a: object, axis: object = None, dtype: object = None, out: object = None,
           keepdims: bool = False, initial: object = None, where: object = True) -> Tensor:
    """Sum with NaNs as 0 (an all-NaN slice sums to 0, as NumPy)."""
    return store_out(_reduce("sum", _replaced(tensor(a), 0.0), axis, keepdims, dtype,
                             initial, where), out)


def nanprod(a: object, axis: object = None, dtype: object = None, out: object = None,
            keepdims: bool = False, initial: object = None, where: object = True) -> Tensor:
    """Product with NaNs as 1."""
    return store_out(_reduce("prod", _replaced(tensor(a), 1.0), axis, keepdims, dtype,
                             initial, where), out)


def nanmax(a: object, axis: object = None, out: object = None, keepdims: bool = False,
           initial: object = None, where: object = True) -> Tensor:
    """Maximum of the elements that are not NaN; NaN for an all-NaN slice
    (with `initial`, that value, as NumPy's fmax.reduce gives). One pass:
    the `nanmax` reduction (IEEE maxNum, which skips a NaN)."""
    return store_out(_extreme("max", tensor(a), axis, keepdims, initial, where), out)


def nanmin(a: object, axis: object = None, out: object = None, keepdims: bool = False,
           initial: object = None, where: object = True) -> Tensor:
    return store_out(_extreme("min", tensor(a), axis, keepdims, initial, where), out)


def _extreme(op: str, t: Tensor, axis: object, keepdims: bool, initial: object,
             where: object) -> Tensor:
    if not t.dtype.is_float:
        return _reduce(op, t, axis, keepdims, None, initial, where)
    if where is not True:  # left-out elements as NaN, which the reduction skips
        _identity(op, t.dtype, initial)  # NumPy's error without an initial
        t = _ap("where", _mask(where, t.shape), t, math.nan)
    axes = numpy_axes(axis, t.ndim, scalar_int=True)
    if initial is not None and math.prod(t.shape[d] for d in axes) == 0:
        return _reduce(op, t, axes, keepdims, None, initial)  # nothing but initial
    r = reductions.reduce(t, "nan" + op, axes, keepdims)
    if initial is None:
        return r
    bound = _ap("maximum" if op == "max" else "minimum", r, initial)
    return _ap("where", _isnan(r), elementwise.const(initial, r.dtype, (), r.device), bound)


def nanargmax(a: object, axis: int | None = None, out: object = None, *,
              keepdims: bool = False) -> Tensor:
    """Index of the first maximum not NaN (NaNs read as -inf, as NumPy's);
    ValueError for an all-NaN slice, which needs the values: a sync."""
    return _index_out(_arg_extreme("argmax", tensor(a), axis, keepdims), out)


def nanargmin(a: object, axis: int | None = None, out: object = None, *,
              keepdims: bool = False) -> Tensor:
    return _index_out(_arg_extreme("argmin", tensor(a), axis, keepdims), out)


def _arg_extreme(op: str, t: Tensor, axis: object, keepdims: bool) -> Tensor:
    ax = None if axis is None else axis_arg(axis, t.ndim)
    if not t.dtype.is_float:
        return reductions.reduce(t, op, ax, keepdims)
    r = reductions.reduce(_replaced(t, -math.inf if op == "argmax" else math.inf), op, ax,
                          keepdims)
    if t.size == 0:  # the reduction above raised NumPy's error for an empty slice, if any
        return r
    # all NaN where the NaN-skipping max is NaN (a kernel of its own, reading only t)
    bad = reductions.reduce(_isnan(reductions.reduce(t, "nanmax", ax)), "any", None)
    runtime.implicit_sync(bad, f"nan{op}'s all-NaN check", also=(r,))
    if bad.item():
        raise ValueError("All-NaN slice encountered")
    return r


def nanmean(a: object, axis: object = None, dtype: object = None, out: object = None,
            keepdims: bool = False, *, where: object = True) -> Tensor:
    """Mean of the elements that are not NaN (NaN where there are none).
    The sum and the count are sibling reductions read by the division: one
    kernel, one pass over the data (docs/fusion.md, rule 8)."""
    t = tensor(a)
    if not t.dtype.is_float:
        return mean(t, axis, dtype, out, keepdims, where=where)
    _inexact(dtype)
    if where is not True:
        return mean(t, axis, dtype, out, keepdims, where=_kept(t, where))
    axes = numpy_axes(axis, t.ndim)
    acc = t.dtype if dtype is None else as_dtype(dtype)
    sums = reductions.reduce(elementwise.cast(_replaced(t, 0.0), acc), "sum", axes, keepdims)
    count = reductions.reduce(elementwise.cast(_ap("eq", t, t), int64), "sum", axes, keepdims)
    return store_out(_ap("truediv", sums, elementwise.cast(count, sums.dtype)), out)


def nanvar(a: object, axis: object = None, dtype: object = None, out: object = None,
           ddof: float = 0, keepdims: bool = False, *, where: object = True,
           mean: object = None, correction: float | None = None) -> Tensor:
    """Variance of the elements that are not NaN over N - ddof of them;
    NaN where N - ddof <= 0 (NumPy's nanvar, where np.var would give inf)."""
    t = tensor(a)
    if not t.dtype.is_float:
        return var(t, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                   correction=correction)
    _inexact(dtype)
    keep = _kept(t, where)
    v = var(t, axis, dtype, None, ddof, keepdims, where=keep, mean=mean, correction=correction)
    n = reductions.reduce(keep, "sum", numpy_axes(axis, t.ndim), keepdims)
    dof = ddof if correction is None else correction
    return store_out(_ap("where", _ap("gt", _ap("sub", n, dof), 0), v, math.nan), out)


def nanstd(a: object, axis: object = None, dtype: object = None, out: object = None,
           ddof: float = 0, keepdims: bool = False, *, where: object = True,
           mean: object = None, correction: float | None = None) -> Tensor:
    v = nanvar(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
               correction=correction)
    return store_out(_ap("sqrt", v), out, "same_kind", "ufunc 'sqrt'")


def nancumsum(a: object, axis: int | None = None, dtype: object = None,
              out: object = None) -> Tensor:
    """Running sum with NaNs as 0 (flattened when axis is None)."""
    return store_out(scan(_replaced(tensor(a), 0.0), "cumsum", axis, dtype), out)


def nancumprod(a: object, axis: int | None = None, dtype: object = None,
               out: object = None) -> Tensor:
    return store_out(scan(_replaced(tensor(a), 1.0), "cumprod", axis, dtype), out)


def _inexact(dtype: object) -> None:
    """NumPy's rule for a float input's mean or variance: `dtype` floating."""
    if dtype is not None and not as_dtype(dtype).is_float:
        raise TypeError("If a is inexact, then dtype must be inexact")


__all__ = ["nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmin",
           "nanprod", "nanstd", "nansum", "nanvar"]
