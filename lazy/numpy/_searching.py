"""Searching and counting: argmax/argmin/where/count_nonzero are native;
`nonzero` is a sync point (its result's size depends on the data);
`searchsorted` is a deferred extern kernel (lazy/sorting.py), and so is
`bincount` after one sync for its length (lazy/counting.py)."""
from __future__ import annotations

import numpy as np

from scheduler.dtypes import bool_

from .. import counting, elementwise, indexing, reductions, sorting
from ..tensor import Tensor
from ._helpers import axis_arg, operand, store_out, tensor
from ._manipulation import numpy_axes


def _arg(op: str, x: object, axis: object, keepdims: bool) -> Tensor:
    t = tensor(x)
    return reductions.reduce(t, op, None if axis is None else axis_arg(axis, t.ndim), keepdims)


def _index_out(result: Tensor, out: object) -> Tensor:
    """NumPy's out= of argmax/argmin: any dtype that casts safely to intp
    (int32 and bool do, float64 does not), written unsafely."""
    o = out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if o is not None:
        dtype = o.dtype.np if isinstance(o, Tensor) else np.dtype(o.dtype)
        if not np.can_cast(dtype, np.intp, "safe"):
            raise TypeError(f"Cannot cast scalar from {dtype!r} to {np.dtype(np.intp)!r} "
                            f"according to the rule 'safe'")
    return store_out(result, out)


def argmax(x: object, /, axis: int | None = None, out: object = None, *,
           keepdims: bool = False) -> Tensor:
    """Index of the first maximum (the first NaN wins), int64; axis None: flat index."""
    return _index_out(_arg("argmax", x, axis, keepdims), out)


def argmin(x: object, /, axis: int | None = None, out: object = None, *,
           keepdims: bool = False) -> Tensor:
    return _index_out(_arg("argmin", x, axis, keepdims), out)


def nonzero(x: object, /) -> tuple[Tensor, ...]:
    """One int64 index tensor per axis; syncs `x` (logged as `implicit: nonzero`)."""
    t = tensor(x)
    if t.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "np.atleast_1d(scalar).nonzero() instead.")
    return indexing.nonzero(t)


def where(condition: object, x1: object = None, x2: object = None, /) -> Tensor:
    """x1 where condition is true, else x2 (broadcast); one argument: nonzero."""
    if x1 is None and x2 is None:
        return nonzero(condition)
    if x1 is None or x2 is None:
        raise ValueError("where: either both or neither of x1 and x2 should be given")
    c, a, b = tensor(condition), operand(x1), operand(x2)
    return elementwise.apply("where", c, a, b)


def count_nonzero(x: object, /, axis: object = None, *, keepdims: bool = False) -> Tensor:
    """Number of nonzero elements (int64), a fused sum of x != 0."""
    t = tensor(x)
    nz = elementwise.cast(t, bool_)
    return reductions.reduce(nz, "sum", numpy_axes(axis, t.ndim, scalar_int=True), keepdims)


def bincount(x: object, /, weights: object = None, minlength: object = 0) -> Tensor:
    """Occurrences of each value 0..max(x) in 1-D `x` (or sums of `weights`):
    one implicit sync for the length, then a deferred kernel (lazy/counting.py)."""
    return counting.bincount(tensor(x), weights, minlength)


def take(a: object, indices: object, axis: int | None = None, out: object = None,
         mode: str = "raise") -> Tensor:
    """Elements at `indices` along `axis` (flattened when None): a gather.
    mode "wrap" or "clip" maps the indices into range first, with NumPy's
    own take of the positions 0..n-1 (its errors, bool indices as 0 and 1)."""
    t = tensor(a)
    if mode != "raise":
        n = t.size if axis is None else t.shape[axis_arg(axis, t.ndim)]
        indices = np.take(np.arange(n), indexing._host_index(indices), mode=mode)
    return store_out(indexing.take(t, indices, axis), out)


def take_along_axis(x: object, indices: object, /, axis: int | None = -1) -> Tensor:
    """x's elements at `indices` along `axis` (default the last, as the array API)."""
    return indexing.take_along_axis(tensor(x), indices, axis)


def searchsorted(x1: object, x2: object, /, side: str = "left",
                 sorter: object = None) -> Tensor:
    """Insertion indices of x2 into sorted 1-D x1."""
    return sorting.searchsorted(tensor(x1), operand(x2), side, sorter)


__all__ = ["argmax", "argmin", "bincount", "count_nonzero", "nonzero", "searchsorted", "take",
           "take_along_axis", "where"]
