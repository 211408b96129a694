"""Order statistics: `median`, `quantile` and `percentile` through the sort
extern kernel.

NumPy computes them with a partition (introselect) of each slice, on one
thread. Here the slices are sorted by the sort extern kernel (whole rows
over threads, docs/numpy.md "Sorting") and the values at the wanted places
are read through views, so nothing syncs and the arithmetic after them
fuses. The arithmetic is NumPy's, operation for operation: the mean of
the middle pair for a median, `_lerp`'s two-sided linear interpolation for
a quantile, each in the dtype NumPy's promotion gives (float32 data and a
Python float q stay float32; an array q makes it float64). A slice holding
a NaN gives that NaN, as NumPy's. The "linear" method (NumPy's default)
is native; other methods, weights, q as a tensor, empty slices and 0-d
input run as NumPy fallbacks.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from scheduler.dtypes import float64, int64

from .. import elementwise, indexing, reductions, sorting
from ..creation import arange
from ..fallback import numpy_fallback
from ..tensor import Tensor
from ._helpers import store_out, tensor
from ._manipulation import numpy_axes, stack


def _sorted_rows(t: Tensor, axis: object, keepdims: bool
                 ) -> tuple[Tensor, int, tuple[int, ...]]:
    """(t's slices along `axis` (an int, a tuple, or None: all) sorted as the
    rows of a tensor, the slices' length, the result's shape)."""
    axes = numpy_axes(axis, t.ndim)
    keep = [d for d in range(t.ndim) if d not in axes]
    n = math.prod(t.shape[d] for d in axes)
    rows = t.permute(*keep, *axes).reshape(*(t.shape[d] for d in keep), n)
    shape = tuple(1 if d in axes else t.shape[d] for d in range(t.ndim)) if keepdims \
        else tuple(t.shape[d] for d in keep)
    return sorting.sort(rows, -1, "any"), n, shape


def _at(rows: Tensor, i: int) -> Tensor:
    return rows[..., i]


def _nan_last(rows: Tensor, value: Tensor) -> Tensor:
    """NumPy's NaN check: a slice whose last sorted element is NaN gives it."""
    if not rows.dtype.is_float:
        return value
    last = _at(rows, -1)
    return elementwise.apply("where", elementwise.apply("ne", last, last), last, value)


def median(a: object, axis: object = None, out: object = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Tensor:
    """The middle value of each slice, or the mean of the middle two."""
    t = tensor(a)
    if t.ndim == 0 or t.size == 0:  # NumPy's scalar result, or its empty-slice warning
        return numpy_fallback("median", np.median, (t,), {"axis": axis, "out": out,
                                                           "keepdims": keepdims})
    rows, n, shape = _sorted_rows(t, axis, keepdims)
    lo, hi = _at(rows, (n - 1) // 2), _at(rows, n // 2)
    if not t.dtype.is_float:  # NumPy's mean of integers and bools is in float64
        lo, hi = elementwise.astype(lo, float64), elementwise.astype(hi, float64)
    mid = lo if n % 2 else (lo + hi) / 2
    return store_out(_nan_last(rows, mid).reshape(shape), out)


def quantile(a: object, q: object, axis: object = None, out: object = None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
             weights: object = None, interpolation: object = None) -> Tensor:
    """NumPy's quantile; q in [0, 1]."""
    return _quantile("quantile", np.asanyarray, "Quantiles must be in the range [0, 1]", a, q,
                     axis, out, method, keepdims, weights, interpolation)


def percentile(a: object, q: object, axis: object = None, out: object = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
               weights: object = None, interpolation: object = None) -> Tensor:
    """NumPy's percentile: the quantile of q / 100, q in [0, 100]."""
    return _quantile("percentile", lambda q: np.true_divide(q, 100, out=...),
                     "Percentiles must be in the range [0, 100]", a, q, axis, out, method,
                     keepdims, weights, interpolation)


def _quantile(name: str, fraction: Callable[[object], np.ndarray], error: str, a: object,
              q: object, axis: object, out: object, method: str, keepdims: bool,
              weights: object, interpolation: object, nan: bool = False) -> Tensor:
    """quantile or percentile (`name`), whose q `fraction` makes a fraction
    array as NumPy does (a Python int or float q stays weak: NumPy's rule);
    `nan`: of each slice's numbers (nanquantile, nanpercentile; the same as
    the plain ones for integers, which hold no NaN)."""
    t = tensor(a)
    if _fallback(t, q, method, weights, interpolation):
        extra = {} if interpolation is None else {"interpolation": interpolation}
        return numpy_fallback(name, getattr(np, name), (t, q), dict(
            axis=axis, out=out, method=method, keepdims=keepdims, weights=weights, **extra))
    qs = fraction(q)
    if not (qs.min() >= 0 and qs.max() <= 1):
        raise ValueError(error)
    weak = type(q) in (int, float)
    if nan and t.dtype.is_float:
        count, at, shape = _nan_rows(t, axis, keepdims)
        picked = [_nan_lerp(count, at, v, qs.dtype, weak, t.dtype) for v in qs.reshape(-1)]
    else:
        rows, n, shape = _sorted_rows(t, axis, keepdims)
        if qs.dtype.kind in "iub":  # whole places: NumPy takes the values, no interpolation
            picked = [_nan_last(rows, _at(rows, int(i) * (n - 1))) for i in qs.reshape(-1)]
        else:
            picked = [_lerp(rows, (n - 1) * float(v), n, weak) for v in qs.reshape(-1)]
    res = stack([p.reshape(shape) for p in picked]).reshape(qs.shape + shape) if qs.ndim \
        else picked[0].reshape(shape)
    return store_out(res, out)


def _fallback(t: Tensor, q: object, method: str, weights: object, interpolation: object) -> bool:
    """What stays NumPy's: other methods, weights, a q that is a tensor (its
    values pick the places) or empty, 0-d or empty input, and bools (NumPy
    raises)."""
    return (method != "linear" or weights is not None or interpolation is not None
            or isinstance(q, Tensor) or np.size(q) == 0 or t.ndim == 0 or t.size == 0
            or t.dtype.is_bool)


def _lerp(rows: Tensor, place: float, n: int, weak: bool) -> Tensor:
    """The value at fractional `place` of the sorted rows, as NumPy's `_lerp`:
    a + (b - a) * g below g = 0.5, b - (b - a) * (1 - g) from it, with NumPy's
    places: at or past the last, both ends are the last element and g =
    place + 1. A Python float q keeps float data's dtype; else float64."""
    below = math.floor(place)
    lo, hi = (-1, -1) if place >= n - 1 else (below, below + 1)
    g = place - lo if place >= n - 1 else place - below
    a, b = _at(rows, lo), _at(rows, hi)
    diff = b - a
    if not (weak and rows.dtype.is_float):
        a, b, diff = (elementwise.astype(x, float64) for x in (a, b, diff))
    value = b - diff * (1 - g) if g >= 0.5 else a + diff * g
    return _nan_last(rows, value)


# -- the NaN-ignoring ones: each slice's numbers are its first `count` sorted elements

def _nan_rows(t: Tensor, axis: object, keepdims: bool) -> tuple[Tensor, Tensor, Callable]:
    """(the slices sorted as rows (NaNs last), each row's count of numbers,
    `at(i)`: each row's element at index tensor i, a gather: the places
    differ from row to row), and the result's shape, as `_sorted_rows`."""
    rows, n, shape = _sorted_rows(t, axis, keepdims)
    count = reductions.reduce(elementwise.astype(rows == rows, int64), "sum", -1)
    base = arange(math.prod(rows.shape[:-1]), device=t.device).reshape(count.shape) * n

    def at(i: Tensor) -> Tensor:
        return indexing.gather(rows, base + i)
    return count, at, shape


def nanmedian(a: object, axis: object = None, out: object = None,
              overwrite_input: bool = False, keepdims: bool = False) -> Tensor:
    """The median of each slice's numbers; NaN where there are none (NumPy
    warns then; a lazy result cannot: docs/numpy.md)."""
    t = tensor(a)
    if not t.dtype.is_float:
        return median(t, axis, out, overwrite_input, keepdims)
    if t.ndim == 0 or t.size == 0:
        return numpy_fallback("nanmedian", np.nanmedian, (t,), {"axis": axis, "out": out,
                                                                 "keepdims": keepdims})
    count, at, shape = _nan_rows(t, axis, keepdims)
    some = count > 0
    lo = at(elementwise.apply("where", some, (count - 1) // 2, 0))
    hi = at(count // 2)
    mid = elementwise.apply("where", count % 2 == 1, lo, (lo + hi) / 2)
    return store_out(elementwise.apply("where", some, mid, math.nan).reshape(shape), out)


def nanquantile(a: object, q: object, axis: object = None, out: object = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights: object = None,
                interpolation: object = None) -> Tensor:
    """NumPy's nanquantile: each slice's quantile of its numbers."""
    return _quantile("nanquantile", np.asanyarray, "Quantiles must be in the range [0, 1]", a,
                     q, axis, out, method, keepdims, weights, interpolation, nan=True)


def nanpercentile(a: object, q: object, axis: object = None, out: object = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: object = None,
                  interpolation: object = None) -> Tensor:
    return _quantile("nanpercentile", lambda q: np.true_divide(q, 100, out=...),
                     "Percentiles must be in the range [0, 100]", a, q, axis, out, method,
                     keepdims, weights, interpolation, nan=True)


def _nan_lerp(count: Tensor, at: Callable, v: object, qdtype: np.dtype, weak: bool,
              dtype) -> Tensor:
    """NumPy's _quantile for one q over each row's `count` numbers, its
    steps with the per-row count as tensors: virtual index (count - 1) * q
    in float64, NumPy's places (at or past the last, both the last and
    gamma = index + 1), `_lerp`, NaN where a row has no number. An integer
    q takes the element itself."""
    some = count > 0
    last = elementwise.apply("where", some, count - 1, 0)
    if qdtype.kind in "iub":
        value = at(last * int(v))
    else:
        index = elementwise.astype(count - 1, float64) * float(v)
        above = index >= elementwise.astype(count - 1, float64)
        below = elementwise.apply("floor", index)
        lo = elementwise.apply("where", above, last, elementwise.astype(below, int64))
        hi = elementwise.apply("where", above, last, lo + 1)
        gamma = index - elementwise.apply("where", above, -1.0, below)
        g, rest = gamma, 1 - gamma
        if weak:  # NumPy's float(gamma), a weak scalar: 1 - gamma in float64, each
            g, rest = (elementwise.astype(x, dtype) for x in (g, rest))  # then rounded
        a, b = (at(elementwise.apply("where", some, i, 0)) for i in (lo, hi))
        diff = b - a
        value = elementwise.apply("where", gamma >= 0.5, b - diff * rest, a + diff * g)
    return elementwise.apply("where", some, value, math.nan)


__all__ = ["median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile"]
