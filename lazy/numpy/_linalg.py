"""Linear algebra: matmul is an extern BLAS kernel; tensordot, dot, vecdot,
outer, inner and trace compose views, elementwise ops, reductions and
matmul; so does einsum (lazy/einsum.py)."""
from __future__ import annotations

import math

import numpy as np

from .. import elementwise, linalg, reductions, views
from ..einsum import einsum as contract, sublists
from ..tensor import Tensor
from ._dtypes import result_type
from ._helpers import axis_arg, cast_all, store_out, tensor


def matmul(x1: object, x2: object, /) -> Tensor:
    return linalg.matmul(tensor(x1), tensor(x2))


def _axes_pair(axes: object, a: Tensor, b: Tensor) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} must be between 0 and the smaller of the "
                             f"two ranks ({a.ndim}, {b.ndim})")
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    xa, xb = axes
    xa = [xa] if isinstance(xa, (int, np.integer)) else list(xa)
    xb = [xb] if isinstance(xb, (int, np.integer)) else list(xb)
    if len(xa) != len(xb):
        raise ValueError(f"tensordot: axes lists {xa} and {xb} differ in length")
    return [axis_arg(i, a.ndim) for i in xa], [axis_arg(i, b.ndim) for i in xb]


def tensordot(x1: object, x2: object, /, axes: object = 2) -> Tensor:
    """Sum over the paired axes: permute and reshape each side to a matrix, one matmul."""
    a, b = tensor(x1), tensor(x2)
    xa, xb = _axes_pair(axes, a, b)
    for i, j in zip(xa, xb):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"shape-mismatch for sum: axis {i} of shape {a.shape} has size "
                             f"{a.shape[i]}, axis {j} of shape {b.shape} has size {b.shape[j]}")
    fa = [d for d in range(a.ndim) if d not in xa]
    fb = [d for d in range(b.ndim) if d not in xb]
    k = math.prod(a.shape[i] for i in xa)
    am = views.reshape(views.permute(a, tuple(fa + xa)),
                       (math.prod(a.shape[d] for d in fa), k))
    bm = views.reshape(views.permute(b, tuple(xb + fb)),
                       (k, math.prod(b.shape[d] for d in fb)))
    out = linalg.matmul(am, bm)
    return views.reshape(out, tuple(a.shape[d] for d in fa) + tuple(b.shape[d] for d in fb))


def vecdot(x1: object, x2: object, /, *, axis: int = -1) -> Tensor:
    """Dot product of vectors along `axis` (broadcast over the rest), in the promoted dtype."""
    a, b = tensor(x1), tensor(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("vecdot: inputs must be at least 1-D")
    ia, ib = axis_arg(axis, a.ndim), axis_arg(axis, b.ndim)
    if a.shape[ia] != b.shape[ib]:
        raise ValueError(f"vecdot: the contracted axis has size {a.shape[ia]} in x1 (shape "
                         f"{a.shape}) but {b.shape[ib]} in x2 (shape {b.shape})")
    d = result_type(a, b)
    prod = elementwise.apply("mul", elementwise.cast(a, d), elementwise.cast(b, d))
    out = reductions.reduce(prod, "sum", axis, False)
    return elementwise.cast(out, d)


def dot(a: object, b: object) -> Tensor:
    """NumPy's dot: a product for scalars, matmul up to 2-D, else a tensordot over the
    last axis of `a` and the second-to-last of `b`."""
    x, y = tensor(a), tensor(b)
    if x.ndim == 0 or y.ndim == 0:
        return elementwise.apply("mul", x, y)
    if x.ndim <= 2 and y.ndim <= 2:
        return linalg.matmul(x, y)
    return tensordot(x, y, axes=([-1], [-2 if y.ndim > 1 else -1]))


def inner(a: object, b: object) -> Tensor:
    x, y = tensor(a), tensor(b)
    if x.ndim == 0 or y.ndim == 0:
        return elementwise.apply("mul", x, y)
    return tensordot(x, y, axes=([-1], [-1]))


def outer(a: object, b: object) -> Tensor:
    x, y = views.reshape(tensor(a), (-1,)), views.reshape(tensor(b), (-1,))
    return elementwise.apply("mul", views.unsqueeze(x, 1), views.unsqueeze(y, 0))


def trace(a: object, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """Sum of a diagonal: a strided view, then a reduction."""
    return reductions.reduce(views.diagonal(tensor(a), offset, axis1, axis2), "sum", -1)


def einsum(*args: object, out: object = None, dtype: object = None, order: str = "K",
           casting: str = "safe", optimize: object = False) -> Tensor:
    """NumPy's einsum, in views, fused products and sums, and matmuls
    (lazy/einsum.py); also NumPy's sublist form. `optimize` and `order` are
    accepted: the order of contractions is always lazyrt's own (smallest
    first), and the result's layout is what the plan leaves (the last
    product's axes permuted into the output's order, as order="K" allows)."""
    if not args:
        raise TypeError("einsum() missing the subscripts string and operands")
    subscripts, operands = (args[0], list(args[1:])) if isinstance(args[0], str) else \
        sublists(args)
    ts = [tensor(o) for o in operands]
    if dtype is not None:
        ts = cast_all(ts, dtype, casting)
    return store_out(contract(subscripts, ts), out, casting)


__all__ = ["dot", "einsum", "inner", "matmul", "outer", "tensordot", "trace", "vecdot"]
