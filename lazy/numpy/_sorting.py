"""Sorting: `sort`, `argsort`, `partition` and `argpartition` are deferred
extern kernels (lazy/sorting.py); the set functions sort and mark runs
with kernels of ours around one sync, their result's size being the
data's (lazy/sets.py); `isin` sorts and searches with no sync, and the
`*1d` set functions are NumPy's steps over those."""
from __future__ import annotations

import numpy as np

from scheduler.dtypes import bool_

from .. import sets, sorting
from ..creation import full
from ..fallback import numpy_fallback
from ..tensor import Tensor
from ._helpers import tensor
from ._manipulation import concat, numpy_axis


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


def partition(a: object, kth: object, axis: int | None = -1, kind: str = "introselect",
              order: object = None) -> Tensor:
    """NumPy's partition: the elements at `kth` are where a sort puts them,
    smaller ones before, larger after. The order within each side is left
    open, and a full sort is one such order: NumPy's default sort, rows
    over threads (lazy/sorting.py), faster here than NumPy's introselect."""
    t, axis = _selected(a, kth, axis, kind, order)
    if t is None:
        return numpy_fallback("partition", np.partition, (a, kth), {"axis": axis, "order": order})
    return sorting.sort(t, axis, "any")


def argpartition(a: object, kth: object, axis: int | None = -1, kind: str = "introselect",
                 order: object = None) -> Tensor:
    """Indices that partition `a` (see `partition`): a stable argsort's."""
    t, axis = _selected(a, kth, axis, kind, order)
    if t is None:
        return numpy_fallback("argpartition", np.argpartition, (a, kth),
                              {"axis": axis, "order": order})
    return sorting.argsort(t, axis, "stable")


def _selected(a: object, kth: object, axis: int | None, kind: str, order: object
              ) -> tuple[Tensor | None, int | None]:
    """(the tensor, its axis) after NumPy's checks of `kth` and `kind`, raised
    at the call; (None, axis) for `order`, which NumPy's own call refuses."""
    if order is not None:
        return None, axis
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    t, axis = _flat_if_none(tensor(a), axis)
    axis = numpy_axis(axis, t.ndim)
    ks = np.asarray(kth)
    if ks.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    n = t.shape[axis]
    for k in ks.reshape(-1).tolist():
        k = k + n if k < 0 else k
        if not 0 <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")
    return t, axis


def unique_all(x: object, /) -> sets.UniqueAllResult:
    """(values, indices, inverse_indices, counts); each NaN is a value of its own."""
    return sets.unique_all(tensor(x))


def unique_counts(x: object, /) -> sets.UniqueCountsResult:
    return sets.unique_counts(tensor(x))


def unique_inverse(x: object, /) -> sets.UniqueInverseResult:
    return sets.unique_inverse(tensor(x))


def unique_values(x: object, /) -> Tensor:
    return sets.unique_values(tensor(x))


def unique(ar: object, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *,
           equal_nan: bool = True, sorted: bool = True):  # noqa: A002  (NumPy's name)
    """NumPy's unique, with its optional extra outputs (lazy/sets.py). The
    values are sorted even with `sorted=False`, one order NumPy allows.
    Unique rows or columns (`axis`) are ours up to sets.MAX_SLICE elements
    a slice, then a NumPy fallback; a 1-D array's only axis is NumPy's flat
    unique, `equal_nan` included."""
    t = tensor(ar)
    if axis is not None:
        axis = numpy_axis(axis, t.ndim)  # NumPy's AxisError
    if axis is not None and t.ndim > 1:
        got = sets.unique_slices(t, axis, return_index, return_inverse, return_counts)
        if got is not None:
            return got
        return numpy_fallback("unique", np.unique, (t,),
                              {"return_index": return_index, "return_inverse": return_inverse,
                               "return_counts": return_counts, "axis": axis,
                               "equal_nan": equal_nan})
    return sets.unique(t, return_index, return_inverse, return_counts,
                         equal_nan=equal_nan)


def isin(element: object, test_elements: object, assume_unique: bool = False,
         invert: bool = False, *, kind: str | None = None) -> Tensor:
    """NumPy's isin (lazy/sets.py): lazy, no sync. `kind` is checked as NumPy
    checks it and changes nothing else; so does `assume_unique`."""
    if kind not in (None, "sort", "table"):
        raise ValueError(f"Invalid kind: {kind!r}. Please use None, 'sort' or 'table'.")
    a, b = tensor(element), tensor(test_elements)
    if kind == "table" and not all(t.dtype.is_int or t.dtype.is_bool for t in (a, b)):
        raise ValueError("The 'table' method is only supported for boolean or integer "
                         "arrays. Please select 'sort' or None for kind.")
    return sets.isin(a, b, invert)


def union1d(ar1: object, ar2: object) -> Tensor:
    """NumPy's union1d: the sorted distinct values of both, flattened (`unique`
    of their concatenation: one sync)."""
    return sets.unique(concat([tensor(ar1), tensor(ar2)], axis=None))


# intersect1d, setdiff1d and setxor1d follow NumPy's own steps, over our
# unique (a sync each), sort, isin and boolean masks (a sync each): the
# same values, NaNs and signed zeros included, without leaving lazyrt.

def intersect1d(ar1: object, ar2: object, assume_unique: bool = False,
                return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor, Tensor]:
    """NumPy's intersect1d: the sorted values in both (and, with
    `return_indices`, the first index of each in either input)."""
    a, b = tensor(ar1), tensor(ar2)
    if assume_unique:
        a, b = a.reshape(-1), b.reshape(-1)
    elif return_indices:
        (a, first_a), (b, first_b) = unique(a, return_index=True), unique(b, return_index=True)
    else:
        a, b = unique(a), unique(b)
    aux = concat([a, b], axis=None)
    order = argsort(aux, kind="stable") if return_indices else None
    aux = aux[order] if return_indices else sort(aux)
    same = aux[1:] == aux[:-1]
    values = aux[:-1][same]
    if not return_indices:
        return values
    in_a, in_b = order[:-1][same], order[1:][same] - a.size
    if not assume_unique:
        in_a, in_b = first_a[in_a], first_b[in_b]
    return values, in_a, in_b


def setdiff1d(ar1: object, ar2: object, assume_unique: bool = False) -> Tensor:
    """NumPy's setdiff1d: the sorted distinct values of ar1 not in ar2."""
    a, b = tensor(ar1), tensor(ar2)
    a, b = (a.reshape(-1), b) if assume_unique else (unique(a), unique(b))
    return a[sets.isin(a, b, invert=True)]


def setxor1d(ar1: object, ar2: object, assume_unique: bool = False) -> Tensor:
    """NumPy's setxor1d: the sorted values in exactly one of the two."""
    a, b = tensor(ar1), tensor(ar2)
    if not assume_unique:
        a, b = unique(a), unique(b)
    aux = concat([a, b], axis=None)
    if not aux.size:
        return aux
    aux = sort(aux)
    edge = full((1,), True, dtype=bool_, device=aux.device)
    apart = concat([edge, aux[1:] != aux[:-1], edge])
    return aux[apart[1:] & apart[:-1]]


__all__ = ["argpartition", "argsort", "intersect1d", "isin", "partition", "setdiff1d",
           "setxor1d", "sort", "union1d", "unique", "unique_all", "unique_counts",
           "unique_inverse", "unique_values"]
