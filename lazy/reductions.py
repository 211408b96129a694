"""Reductions over one axis, several axes or all, with NumPy's dtypes.

A reduction node always produces the keepdim shape; dropping the reduced
axes is a view. Both `axis`/`dim` and `keepdims`/`keepdim` are accepted.
"""
from __future__ import annotations

import math

from scheduler.dtypes import DType, bool_, float_result
from scheduler.ops import REDUCTIONS
from scheduler.view import View, normalize_dim

from . import elementwise, runtime
from .tensor import Tensor

_NAMES = {"max": "maximum", "min": "minimum", "argmax": "argmax", "argmin": "argmin"}


def _axes(t: Tensor, axis, op: str) -> tuple[int, ...]:
    """Reduced axes, sorted; () for a 0-d tensor (dim 0 or -1 names its one value)."""
    if axis is None:
        return tuple(range(t.ndim))
    if isinstance(axis, (tuple, list)):
        if op in ("argmax", "argmin"):
            raise TypeError(f"{op} takes a single int axis or None, got {axis!r}")
        axes = tuple(normalize_dim(a, t.ndim, "axis") for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axis': {axis!r}")
        return tuple(sorted(axes)) if t.ndim else ()
    d = normalize_dim(axis, t.ndim, "axis")
    return (d,) if t.ndim else ()


def _options(axis, dim, keepdim, keepdims) -> tuple[object, bool]:
    if axis is not None and dim is not None:
        raise TypeError("pass either axis or dim, not both")
    return (axis if axis is not None else dim), bool(keepdim or keepdims)


def reduce(t: Tensor, op: str, axis=None, keepdims: bool = False, *, dim=None,
           keepdim: bool = False, dtype: DType | None = None) -> Tensor:
    """`dtype`: the result dtype when not the op's own (softmax keeps logsumexp
    in its float64 accumulator for float32 data)."""
    axis, keep = _options(axis, dim, keepdim, keepdims)
    axes = _axes(t, axis, op)
    red = REDUCTIONS[op]
    out_dtype = dtype or red.result_dtype(t.dtype)
    if red.identity is None and any(t.shape[a] == 0 for a in axes):
        raise ValueError(f"zero-size array to reduction operation {_NAMES[op]} which has "
                         f"no identity (shape {t.shape}, axis {axis})")
    src = elementwise.cast(t, bool_) if op in ("any", "all") else t
    if not axes:  # nothing to reduce: NumPy gives the values in the result dtype
        if op in ("argmax", "argmin"):
            return elementwise.const(0, out_dtype, t.shape, t.device)
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
         keepdim: bool = False) -> Tensor:
    """sum / count in the floating dtype; the division fuses as an epilogue."""
    axis, keep = _options(axis, dim, keepdim, keepdims)
    axes = _axes(t, axis, "sum")
    count = math.prod(t.shape[a] for a in axes)
    dtype = float_result(t.dtype)
    total = reduce(elementwise.cast(t, dtype), "sum", axis=axes, keepdims=keep)
    return elementwise.apply("truediv", total, float(count) if count else float("nan"))
