"""Sorting: `sort` and `argsort` are deferred extern kernels (lazy/sorting.py);
the set functions are NumPy fallbacks (their result's size depends on the
data), each logged as `fallback: <name> not lowered`."""
from __future__ import annotations

import numpy as np

from .. import sorting
from ..fallback import numpy_fallback
from ..tensor import Tensor
from ._helpers import tensor
from ._manipulation import numpy_axis


def _flat_if_none(t: Tensor, axis: int | None) -> tuple[Tensor, int]:
    """NumPy's `axis=None`: sort the flattened array."""
    return (t.reshape(-1), -1) if axis is None else (t, axis)


def sort(x: object, /, axis: int | None = -1, kind: str | None = None, *, descending: bool = False,
         stable: bool = True) -> Tensor:
    """Sorted copy along `axis` (NaNs last ascending, first descending); a
    stable sort's result unless a NumPy `kind` or `stable=False` says otherwise."""
    t, axis = _flat_if_none(tensor(x), axis)
    axis = numpy_axis(axis, t.ndim)  # a 0-d array has no axis to sort along
    return sorting.sort(t, axis, sorting.sort_kind(kind, stable), descending)


def argsort(x: object, /, axis: int | None = -1, kind: str | None = None, *,
            descending: bool = False, stable: bool = True) -> Tensor:
    """Indices that sort `x` along `axis`; descending keeps equal elements in order."""
    t = tensor(x)
    if t.ndim == 0:  # NumPy sorts a 0-d array's indices as a 1-d one's: argsort(5.0) is [0]
        t = t.reshape(-1)
    t, axis = _flat_if_none(t, axis)
    axis = numpy_axis(axis, t.ndim)
    return sorting.argsort(t, axis, sorting.sort_kind(kind, stable), descending)


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
