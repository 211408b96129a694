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

from scheduler.dtypes import float64

from .. import elementwise, sorting
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
              weights: object, interpolation: object) -> Tensor:
    """quantile or percentile (`name`), whose q `fraction` makes a fraction
    array as NumPy does (a Python int or float q stays weak: NumPy's rule)."""
    t = tensor(a)
    if _fallback(t, q, method, weights, interpolation):
        extra = {} if interpolation is None else {"interpolation": interpolation}
        return numpy_fallback(name, getattr(np, name), (t, q), dict(
            axis=axis, out=out, method=method, keepdims=keepdims, weights=weights, **extra))
    qs = fraction(q)
    if not (qs.min() >= 0 and qs.max() <= 1):
        raise ValueError(error)
    return _quantiles(t, qs, type(q) in (int, float), axis, out, keepdims)


def _fallback(t: Tensor, q: object, method: str, weights: object, interpolation: object) -> bool:
    """What stays NumPy's: other methods, weights, a q that is a tensor (its
    values pick the places) or empty, 0-d or empty input, and bools (NumPy
    raises)."""
    return (method != "linear" or weights is not None or interpolation is not None
            or isinstance(q, Tensor) or np.size(q) == 0 or t.ndim == 0 or t.size == 0
            or t.dtype.is_bool)


def _quantiles(t: Tensor, qs: np.ndarray, weak: bool, axis: object, out: object,
               keepdims: bool) -> Tensor:
    rows, n, shape = _sorted_rows(t, axis, keepdims)
    if qs.dtype.kind in "iub":  # whole places: NumPy takes the values, no interpolation
        picked = [_nan_last(rows, _at(rows, int(i) * (n - 1))) for i in qs.reshape(-1)]
    else:
        picked = [_lerp(rows, (n - 1) * float(v), n, weak) for v in qs.reshape(-1)]
    res = stack([p.reshape(shape) for p in picked]).reshape(qs.shape + shape) if qs.ndim \
        else picked[0].reshape(shape)
    return store_out(res, out)


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


__all__ = ["median", "percentile", "quantile"]
