"""Sorting and set functions: NumPy fallbacks (lazyrt has no sort primitive),
each logged as `fallback: <name> not lowered`."""
from __future__ import annotations

import numpy as np

from ..fallback import numpy_fallback
from ..tensor import Tensor
from ._helpers import tensor
from ._manipulation import flip, numpy_axis


def _flat_if_none(t: Tensor, axis: int | None) -> tuple[Tensor, int]:
    """NumPy's `axis=None`: sort the flattened array."""
    return (t.reshape(-1), -1) if axis is None else (t, axis)


def _stable_float_sort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """A stable sort's exact result (ascending, or descending with equal
    elements still in their original order) at the speed of NumPy's default
    sort, about twice the stable one's for floats. The two differ only in
    the order of elements that compare equal but differ in bits, -0.0/+0.0
    and NaNs; those are put back in their original order (boolean indexing
    visits rows in the same order on both sides, so each row gets its own)."""
    s = np.sort(a, axis=axis)
    if descending:
        s = np.ascontiguousarray(np.flip(s, axis=axis))
    src, dst = np.moveaxis(a, axis, -1), np.moveaxis(s, axis, -1)
    for same in (lambda v: v == 0, np.isnan):
        picked = same(src)
        if picked.any():
            dst[same(dst)] = src[picked]
    return s


def sort(x: object, /, axis: int | None = -1, kind: str | None = None, *, descending: bool = False,
         stable: bool = True) -> Tensor:
    """Sorted copy along `axis` (NaNs last ascending, first descending)."""
    t, axis = _flat_if_none(tensor(x), axis)
    axis = numpy_axis(axis, t.ndim)  # a 0-d array has no axis to sort along
    if kind is None and stable and t.dtype.is_float:
        return numpy_fallback("sort", _stable_float_sort, (t,), {"axis": axis,
                                                                 "descending": descending})
    if kind is None and stable:
        stable = False  # equal integers are indistinguishable: NumPy's fastest sort gives the same
    out = numpy_fallback("sort", np.sort, (t,), {"axis": axis, "kind": kind or
                                                  ("stable" if stable else None)})
    return flip(out, axis=axis) if descending else out


def argsort(x: object, /, axis: int | None = -1, kind: str | None = None, *,
            descending: bool = False, stable: bool = True) -> Tensor:
    """Indices that sort `x` along `axis`; descending keeps equal elements in order."""
    t = tensor(x)
    if t.ndim == 0:  # NumPy sorts a 0-d array's indices as a 1-d one's: argsort(5.0) is [0]
        t = t.reshape(-1)
    t, axis = _flat_if_none(t, axis)
    axis = numpy_axis(axis, t.ndim)
    kind = kind or ("stable" if stable else None)
    if not descending:
        return numpy_fallback("argsort", np.argsort, (t,), {"axis": axis, "kind": kind})
    n = t.shape[axis]
    idx = numpy_fallback("argsort", np.argsort, (flip(t, axis=axis),), {"axis": axis, "kind": kind})
    return (n - 1) - flip(idx, axis=axis)


def unique_all(x: object, /):
    """(values, indices, inverse_indices, counts), as NumPy's namedtuple."""
    return numpy_fallback("unique_all", np.unique_all, (tensor(x),), {})


def unique_counts(x: object, /):
    return numpy_fallback("unique_counts", np.unique_counts, (tensor(x),), {})


def unique_inverse(x: object, /):
    return numpy_fallback("unique_inverse", np.unique_inverse, (tensor(x),), {})


def unique_values(x: object, /) -> Tensor:
    return numpy_fallback("unique_values", np.unique_values, (tensor(x),), {})


def unique(ar: object, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *,
           equal_nan: bool = True):
    """NumPy's unique, with its optional extra outputs (a NumPy fallback)."""
    return numpy_fallback("unique", np.unique, (tensor(ar),),
                          {"return_index": return_index, "return_inverse": return_inverse,
                           "return_counts": return_counts, "axis": axis,
                           "equal_nan": equal_nan})


__all__ = ["argsort", "sort", "unique", "unique_all", "unique_counts", "unique_inverse",
           "unique_values"]
