"""Reductions over one axis, several axes or all, with NumPy's dtypes.

A reduction node always produces the keepdim shape; dropping the reduced
axes is a view. Both `axis`/`dim` and `keepdims`/`keepdim` are accepted.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from scheduler.dtypes import DType, as_dtype, bool_, float_result, int64
from scheduler.ops import REDUCTIONS
from scheduler.view import View, normalize_dim

from . import elementwise, runtime
from .tensor import Tensor

_NAMES = {"max": "maximum", "min": "minimum", "argmax": "argmax", "argmin": "argmin",
          "nanmax": "fmax", "nanmin": "fmin"}


def _axes(t: Tensor, axis, op: str) -> tuple[int, ...]:
    return axes_of(t.shape, axis, op)


def axes_of(shape: tuple[int, ...], axis, op: str) -> tuple[int, ...]:
    """Reduced axes, sorted; () for a 0-d tensor (dim 0 or -1 names its one value)."""
    ndim = len(shape)
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        if op in ("argmax", "argmin"):
            raise TypeError(f"{op} takes a single int axis or None, got {axis!r}")
        axes = tuple(normalize_dim(a, ndim, "axis") for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axis': {axis!r}")
        return tuple(sorted(axes)) if ndim else ()
    d = normalize_dim(axis, ndim, "axis")
    return (d,) if ndim else ()


def _options(axis, dim, keepdim, keepdims) -> tuple[object, bool]:
    if axis is not None and dim is not None:
        raise TypeError("pass either axis or dim, not both")
    for k in (keepdim, keepdims):
        if not _is_flag(k):
            what = repr(k) if len(repr(k)) < 40 else f"a {type(k).__name__}"
            raise TypeError(f"keepdims must be a bool, got {what} (NumPy's positional dtype "
                            f"comes second only in sum, prod and mean; out= is not supported)")
    return (axis if axis is not None else dim), bool(keepdim or keepdims)


def _is_flag(k: object) -> bool:
    """A keepdim value: a bool (NumPy's too), or 0/1."""
    return isinstance(k, (bool, np.bool_)) or (type(k) is int and k in (0, 1))


def keepdims_or_dtype(second: tuple, keepdims: object, dtype: object) -> tuple[object, object]:
    """(keepdims, dtype) of sum/prod/mean, whose optional second positional
    argument is PyTorch's keepdim (a bool) or NumPy's dtype (anything else).
    The keywords mean only what they say: `keepdims="float64"` is refused
    later, as NumPy refuses it, not taken for a dtype."""
    if not second:
        return keepdims, dtype
    if len(second) > 1:
        raise TypeError(f"expected at most 2 positional arguments (axis, then keepdim or "
                        f"dtype), got {1 + len(second)}; out= is not supported")
    value, = second
    if _is_flag(value):
        if keepdims is not False:
            raise TypeError(f"keepdims given twice: {value!r} and {keepdims!r}")
        return value, dtype
    if dtype is not None:
        raise TypeError(f"dtype given twice: {value!r} and {dtype!r}")
    return keepdims, value


def reduce(t: Tensor, op: str, axis=None, keepdims: bool = False, *, dim=None,
           keepdim: bool = False, dtype: DType | None = None) -> Tensor:
    """`dtype`: the result dtype when not the op's own (softmax keeps logsumexp
    in its float64 accumulator for float32 data).

    The per-op hot path: a plain reduction's checks and shapes come from
    `_plan`'s cache, keyed by everything they depend on (as elementwise.apply).
    """
    if _exact(axis) and _exact(dim) and keepdim.__class__ is bool \
            and keepdims.__class__ is bool:
        plan = _plan(op, axis, dim, keepdim or keepdims, dtype, t._view.shape,
                     t._storage.buf.dtype)
    else:
        plan = None  # the general path checks (and refuses) the rest
    if plan is None:
        return _reduce(t, op, axis, keepdims, dim=dim, keepdim=keepdim, dtype=dtype)
    axes, out_dtype, kshape, view = plan
    out = runtime.make("reduce", ((t._buf, t._view),), (op, axes), out_dtype, kshape, t.device)
    return out if view is None else out._as(view)


def _exact(axis: object) -> bool:
    """None, an int or a tuple of ints, exactly: what `_plan`'s cache may be
    keyed on. 1.0, True and np.True_ equal 1 as keys, so they would hit a
    valid entry (they raise on the general path), and a list is unhashable."""
    c = axis.__class__
    return axis is None or c is int or (c is tuple and all(a.__class__ is int for a in axis))


class MinMax(NamedTuple):
    """PyTorch's `torch.return_types.aminmax`: what `lazy.aminmax` returns."""
    min: Tensor
    max: Tensor


def aminmax(t: Tensor, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
    """PyTorch's aminmax: the min and the max over `dim` (None: all), which
    run as sibling reductions, one pass over the data (docs/fusion.md)."""
    if dim is not None and not isinstance(dim, (int, np.integer)):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    return MinMax(reduce(t, "min", dim, keepdim), reduce(t, "max", dim, keepdim))


def total(t: Tensor, op: str, axis=None, keepdims: bool = False, *, dim=None,
          keepdim: bool = False, dtype: object = None) -> Tensor:
    """`sum`/`prod` with NumPy's and PyTorch's `dtype=`: the input is cast to
    it first, so that is what the reduction accumulates in (a float64 sum of
    int64 values does not wrap), and the result has it."""
    if dtype is None:
        return reduce(t, op, axis, keepdims, dim=dim, keepdim=keepdim)
    want = as_dtype(dtype)
    out = reduce(elementwise.astype(t, want), op, axis, keepdims, dim=dim, keepdim=keepdim)
    return out if out.dtype == want else elementwise.astype(out, want)


@lru_cache(maxsize=4096)
def _plan(op: str, axis, dim, keep: bool, dtype: DType | None, shape: tuple[int, ...],
          src: DType) -> tuple | None:
    """(reduced axes, result dtype, keepdim shape, the view that drops the
    axes or None) of a reduction that is one plain node; None for the
    others (any/all cast first, nothing to reduce, argmax/argmin of all
    axes flatten first), which take `_reduce` every time. Errors are raised
    (never cached) by the same checks as `_reduce`."""
    if op in ("any", "all"):
        return None
    axis, keep = _options(axis, dim, keep, False)
    axes = axes_of(shape, axis, op)
    if not axes or (op in ("argmax", "argmin") and axis is None and len(shape) > 1):
        return None
    red = REDUCTIONS[op]
    _check_identity(op, red, shape, axes, axis)
    kshape = tuple(1 if d in axes else n for d, n in enumerate(shape))
    view = None if keep else View.contiguous(tuple(n for d, n in enumerate(shape)
                                                   if d not in axes))
    return axes, dtype or red.result_dtype(src), kshape, view


def _check_identity(op: str, red, shape: tuple[int, ...], axes: tuple[int, ...], axis) -> None:
    if red.identity is None and any(shape[a] == 0 for a in axes):
        raise ValueError(f"zero-size array to reduction operation {_NAMES[op]} which has "
                         f"no identity (shape {shape}, axis {axis})")


def _reduce(t: Tensor, op: str, axis=None, keepdims: bool = False, *, dim=None,
            keepdim: bool = False, dtype: DType | None = None) -> Tensor:
    axis, keep = _options(axis, dim, keepdim, keepdims)
    axes = _axes(t, axis, op)
    red = REDUCTIONS[op]
    out_dtype = dtype or red.result_dtype(t.dtype)
    _check_identity(op, red, t.shape, axes, axis)
    src = elementwise.cast(t, bool_) if op in ("any", "all") else t
    if not axes:  # nothing to reduce: NumPy gives the values in the result dtype
        if op in ("argmax", "argmin"):
            return elementwise.filled(0, out_dtype, t.shape, t.device)
        return elementwise.astype(src, out_dtype)
    if op in ("argmax", "argmin") and axis is None and t.ndim > 1:
        flat = src.reshape(-1)  # NumPy: the index into the flattened tensor
        out = reduce(flat, op)
        return out.reshape((1,) * t.ndim) if keep else out
    kshape = tuple(1 if d in axes else n for d, n in enumerate(t.shape))
    out = runtime.make("reduce", ((src._buf, src._view),), (op, axes), out_dtype, kshape,
                       t.device)
    if keep:
        return out
    shape = tuple(n for d, n in enumerate(t.shape) if d not in axes)
    return out._as(View.contiguous(shape))


def mean(t: Tensor, axis=None, keepdims: bool = False, *, dim=None,
         keepdim: bool = False, dtype: object = None) -> Tensor:
    """sum / count in the floating dtype (float64 for bool, which NumPy
    averages as integers); the division fuses as an epilogue. `dtype` is
    NumPy's: the input is cast to it first, and an integer or bool `dtype`
    sums in that dtype (wrapping as NumPy's does) and truncates the quotient
    into it (PyTorch refuses a non-floating dtype)."""
    axis, keep = _options(axis, dim, keepdim, keepdims)
    axes = _axes(t, axis, "sum")
    count = math.prod(t.shape[a] for a in axes)
    divisor = float(count) if count else float("nan")
    want = None if dtype is None else as_dtype(dtype)
    if want is not None and not want.is_float:
        sums = total(t, "sum", axes, keep, dtype=want)
        return elementwise.cast(elementwise.apply("truediv", sums, divisor), want)
    if want is not None:
        t = elementwise.cast(t, want)
    sums = reduce(elementwise.cast(t, float_result(int64 if t.dtype.is_bool else t.dtype)),
                  "sum", axis=axes, keepdims=keep)
    return elementwise.apply("truediv", sums, divisor)
