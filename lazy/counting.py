"""`bincount` as a deferred extern kernel (NumPy's and PyTorch's).

Its length is max(x) + 1, and NumPy refuses negative values: both need
the values, so building it syncs once (cause `implicit: bincount`), for
x's min and max. The count itself is then an extern node like the sorts
(lazy/sorting.py): it runs at the next sync, after the kernels that make
x, as a histogram per thread on the CPU (cpu_backend/histogram.py) and
CuPy's bincount on a GPU. It was a NumPy fallback, which synced x, ran on
one thread and handed back a host copy.
"""
from __future__ import annotations

import operator

from scheduler.dtypes import float64, int64

from . import elementwise, reductions, runtime
from .tensor import Tensor, asarray_like


def bincount(x: Tensor, weights: object = None, minlength: object = 0) -> Tensor:
    """How many times each of 0, 1, ..., max(x) occurs in 1-D `x` (bool or
    integers, none negative): int64; with `weights` (one per value), the
    sum of each value's weights instead: float64, as NumPy's (int64 zeros
    for an empty x, as NumPy's too). At least `minlength` long."""
    minlength = _minlength(minlength)
    if x.ndim != 1:
        raise ValueError(f"bincount: x must be 1-D, got shape {x.shape}")
    if x.dtype.is_float:
        raise TypeError(f"Cannot cast array data from dtype('{x.dtype.name}') to "
                        f"dtype('int64') according to the rule 'safe'")
    srcs = [(x._buf, x._view)]
    if weights is not None:
        w = weights if isinstance(weights, Tensor) else asarray_like(weights, x.device)
        if w.shape != x.shape:
            raise ValueError(f"The weights and list don't have the same length: weights of "
                             f"shape {w.shape}, x of shape {x.shape}")
        if w.device != x.device:
            raise ValueError(f"bincount: weights on {w.device}, x on {x.device}")
        w = elementwise.cast(w, float64)
        srcs.append((w._buf, w._view))
    if x.size == 0:  # NumPy's, weights or not
        return elementwise.filled(0, int64, (minlength,), x.device)
    dtype = int64 if weights is None else float64
    low, high = reductions.reduce(x, "min"), reductions.reduce(x, "max")
    runtime.implicit_sync(high, "bincount", also=(low,))
    if int(low.item()) < 0:
        raise ValueError("'list' argument must have no negative elements")
    n = max(int(high.item()) + 1, minlength)
    return runtime.make("bincount", tuple(srcs), n, dtype, (n,), x.device)


def _minlength(m: object) -> int:
    try:
        m = operator.index(m)
    except TypeError:
        raise TypeError(f"bincount: minlength must be an integer, got "
                        f"{type(m).__name__}") from None
    if m < 0:
        raise ValueError("'minlength' must not be negative")
    return m
