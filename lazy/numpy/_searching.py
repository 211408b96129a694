"""Searching and counting: argmax/argmin/where/count_nonzero are native;
`nonzero` is a sync point (its result's size depends on the data);
`searchsorted` is a deferred extern kernel (lazy/sorting.py), and so is
`bincount` after one sync for its length (lazy/counting.py)."""
from __future__ import annotations

import numpy as np

from scheduler.dtypes import bool_, float64

from .. import counting, elementwise, indexing, reductions, sorting
from ..fallback import numpy_fallback
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


def interp(x: object, xp: object, fp: object, left: object = None, right: object = None,
           period: object = None) -> Tensor:
    """NumPy's interp, its C loop's cases as selects: x's interval in xp by
    searchsorted (side "right", less one), then `slope * (x - xp[j]) +
    fp[j]`, NumPy's retry from the right end where that is NaN, fp[j]
    where x equals xp[j], fp[-1] at the last point, `left`/`right` (fp's
    ends) outside, NaN for NaN (but fp[0] for one sample point, as NumPy's).
    All in float64, as NumPy's. Nothing syncs.
    `period`, and complex or non-1-D sample points, are NumPy's (a logged
    fallback)."""
    t, xp_t, fp_t = tensor(x), tensor(xp), tensor(fp)
    if period is not None or xp_t.ndim != 1 or fp_t.ndim != 1 or \
            any(isinstance(v, Tensor) for v in (left, right)):
        return numpy_fallback("interp", np.interp, (x, xp, fp),
                              {"left": left, "right": right, "period": period})
    if fp_t.size != xp_t.size:
        raise ValueError("fp and xp are not of the same length.")
    if xp_t.size == 0:
        raise ValueError("array of sample points is empty")
    x64 = elementwise.astype(t, float64)
    # the samples as fresh contiguous float64 buffers: the gathers read storage positions
    xs, ys = (elementwise.apply("copy", elementwise.astype(v, float64)) for v in (xp_t, fp_t))
    n = xs.size
    lval = ys[0] if left is None else float(left)
    rval = ys[n - 1] if right is None else float(right)
    if n == 1:  # NumPy's own case: no search, and a NaN x gives fp[0]
        return where(x64 < xs[0], lval, where(x64 > xs[0], rval, ys[0]))
    j = sorting.searchsorted(xs, x64, "right") - 1
    lo = elementwise.apply("minimum", elementwise.apply("maximum", j, 0), n - 1)
    hi = elementwise.apply("minimum", lo + 1, n - 1)
    x0, x1, y0, y1 = (indexing.gather(v, i) for v in (xs, ys) for i in (lo, hi))
    slope = (y1 - y0) / (x1 - x0)
    r = slope * (x64 - x0) + y0
    r = where(r != r, slope * (x64 - x1) + y1, r)
    r = where((r != r) & (y0 == y1), y0, r)
    r = where((x64 == x0) | (j == n - 1), y0, r)  # an exact sample point; the last one
    r = where(x64 < xs[0], lval, where(x64 > xs[n - 1], rval, r))
    return where(x64 != x64, x64, r)


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


__all__ = ["argmax", "argmin", "bincount", "count_nonzero", "interp", "nonzero", "searchsorted",
           "take",
           "take_along_axis", "where"]
