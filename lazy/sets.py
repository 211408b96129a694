"""NumPy's `unique` and the array API's `unique_*`, as our kernels around one sync.

How many distinct values there are depends on the data, so a unique is a
sync point, as `nonzero` is. Everything around that sync is ours:

1. the flattened input is sorted (argsorted, stably, when the first
   indices are wanted: each run's first element is then the value's first
   occurrence) by the sort extern (lazy/sorting.py);
2. one fused kernel marks where the sorted values change;
3. the implicit sync (`implicit: unique`) computes both, and the host reads
   where the marks are: the runs' starts, a result-sized array;
4. the values and first indices are gathers at the starts, the counts the
   differences of the starts, and the inverse each element's place among
   the values (searchsorted, an LLVM binary search over threads). These
   are lazy kernels again, fused into whatever reads them.

The inverse of distinct NaNs (the array API's rule, for floats) cannot be
searched for: there it is a scatter, through a stable argsort's
permutation, of each sorted element's run number (a running sum of the
marks). `unique(x, return_inverse=True, return_counts=True)` of 10M
float32 with about 900 values took 335-449 ms that way (the stable argsort
146 ms, the scatter, on one thread, 126), and takes 130 with a sort and
the search; with 10M distinct values the search costs more (470 against
406 ms). docs/performance_history.md has the numbers.

Results are sorted. NumPy 2.3's `unique_values` may return integers in
hash order; a sorted result is one of the orders it allows.

`isin` needs no sync at all: its result has its input's shape. The test
elements are sorted, each element searched for among them and compared
with what the search finds (`isin`).

Unique slices along an axis (`unique(x, axis=0)`: unique rows) take the
same steps with the slices as rows: they are sorted lexicographically by
one stable argsort per element of a slice, the last element first (a
least-significant-first radix sort of the rows), and a row changes where
any of its elements does. As in NumPy, which compares the slices as
structured records, -0.0 equals 0.0 and a NaN never equals anything, so
`equal_nan` does not apply. Slices of more than MAX_SLICE elements (a
sort each) keep NumPy's `unique(axis=)`, a logged fallback.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from scheduler.dtypes import bool_, int64, result_type

from . import elementwise, indexing, mutation, runtime, sorting
from .creation import full, zeros
from .scan import scan
from .tensor import Tensor


MAX_SLICE = 32  # elements of a slice sorted by (a stable argsort each) in unique(axis=)


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


class Runs(NamedTuple):
    """The sorted input cut into runs of equal values: what every result reads."""
    values: Tensor         # one per run, sorted
    indices: Tensor | None  # each run's first position in the input, if asked for
    inverse: Tensor | None  # each input element's run, shaped as the input, if asked for
    counts: Tensor         # each run's length


def runs(x: Tensor, *, indices: bool, inverse: bool, equal_nan: bool) -> Runs:
    """Cut sorted `x` (flattened) into runs of equal values; NaNs form one
    run when `equal_nan`, else each NaN is a run of its own (the array API's
    rule)."""
    flat = x.reshape(-1).contiguous()
    n = flat.size
    search = inverse and not indices and (equal_nan or not x.dtype.is_float)
    if indices or (inverse and not search):
        perm = sorting.argsort(flat, 0, "stable")
        offset = flat._view.offset  # gather reads storage positions
        ordered = indexing.gather(flat, perm + offset if offset else perm)
    else:
        perm, ordered = None, sorting.sort(flat, 0, "quicksort")
    change = _changes(ordered, equal_nan)
    starts, counts = _cut(change, n, x.device, (ordered,) if perm is None else (ordered, perm))
    values = indexing.gather(ordered, starts)
    if not inverse:
        inv = None
    elif search:  # where each element's value sits among the values
        inv = sorting.searchsorted(values, flat).reshape(x.shape)
    else:
        inv = _inverse(perm, change, x.shape, x.device)
    return Runs(values, indexing.gather(perm, starts) if indices else None, inv, counts)


def slice_runs(x: Tensor, axis: int, *, indices: bool, inverse: bool) -> Runs | None:
    """`runs` of the slices of `x` along `axis` (the module docstring says
    how; x has 2 or more axes, `axis` is one of them, not negative); the
    values are the distinct slices, stacked along `axis`. None when NumPy's
    fallback should run instead: no slices, empty slices, or slices longer
    than MAX_SLICE."""
    order = [axis] + [k for k in range(x.ndim) if k != axis]
    moved = x.permute(*order)
    n = x.shape[axis]
    width = moved.size // n if n else 0
    if not n or not width or width > MAX_SLICE:
        return None
    flat = moved.reshape(-1).contiguous()
    at = flat._view.offset  # gathers read storage positions: no bounds check, no sync
    lanes = indexing.positions_tensor(np.arange(width, dtype=np.int64), x.device)

    def rows_at(perm: Tensor) -> Tensor:
        """The rows `perm` names, in its order: (len(perm), width)."""
        return indexing.gather(flat, (perm * width + at).reshape(-1, 1) + lanes)

    perm = indexing.positions_tensor(np.arange(n, dtype=np.int64), x.device)
    for c in reversed(range(width)):
        column = indexing.gather(flat, perm * width + (at + c))
        perm = indexing.gather(perm, sorting.argsort(column, 0, "stable"))
    ordered = rows_at(perm)
    change = (ordered[1:] != ordered[:-1]).any(dim=1)
    starts, counts = _cut(change, n, x.device, (perm,))
    first = indexing.gather(perm, starts)
    shape = (len(starts),) + tuple(moved.shape[1:])
    back = [order.index(k) for k in range(x.ndim)]
    values = rows_at(first).reshape(shape).permute(*back)
    inv = _inverse(perm, change, (n,), x.device) if inverse else None
    return Runs(values, first if indices else None, inv, counts)


def isin(x: Tensor, test: Tensor, invert: bool = False) -> Tensor:
    """NumPy's `isin` and PyTorch's: whether each element of x equals some
    element of `test` (both in their common dtype), as bools shaped like x;
    `invert` negates it. Equality is ==, as NumPy's: -0.0 is in [0.0] and a
    NaN is in nothing. Lazy throughout: `test` sorted, x searched for in it
    (searchsorted, left), and each x compared with the element found there."""
    if x.device != test.device:
        raise ValueError(f"isin: expected both tensors on the same device, but found "
                         f"{x.device} and {test.device}")
    n = test.size
    if not n:
        return full(x.shape, invert, dtype=bool_, device=x.device)
    common = result_type(x.dtype, test.dtype)
    flat = test.reshape(-1)
    ordered = sorting.sort(flat if flat.dtype == common else elementwise.astype(flat, common),
                           0, "quicksort")
    at = elementwise.apply("minimum", sorting.searchsorted(ordered, x), n - 1)
    found = indexing.gather(ordered, at) == x
    return ~found if invert else found


def _cut(change: Tensor, n: int, device: str, also: tuple[Tensor, ...]
         ) -> tuple[Tensor, Tensor]:
    """The unique sync: compute the marks `change` between n sorted items
    (and `also`, which later results read), find them on the host, and
    return each run's start and length as lazy positions on `device`."""
    runtime.implicit_sync(change, "unique", also=also)
    bounds = np.concatenate(([0], np.flatnonzero(change.numpy()) + 1, [n])) if n else \
        np.zeros(1, np.int64)
    bounds = indexing.positions_tensor(bounds, device)  # the runs' starts, then n
    starts = bounds[:-1]
    return starts, bounds[1:] - starts


def _changes(ordered: Tensor, equal_nan: bool) -> Tensor:
    """Bool per sorted neighbour pair: does the value change there?"""
    after, before = ordered[1:], ordered[:-1]
    change = after != before
    if equal_nan and ordered.dtype.is_float:
        change = change & ((after == after) | (before == before))  # NaN next to NaN is no change
    return change


def _inverse(perm: Tensor, change: Tensor, shape: tuple[int, ...], device: str) -> Tensor:
    """Each input element's run: the running count of changes before its
    sorted position, written through the permutation (perm[0]'s run is 0)."""
    n = perm.size
    out = zeros(n, dtype=int64, device=device)
    if n > 1:
        mutation.write_positions(out, perm[1:], scan(change, "cumsum", 0, int64))
    return out.reshape(shape)


def unique_all(x: Tensor) -> UniqueAllResult:
    r = runs(x, indices=True, inverse=True, equal_nan=False)
    return UniqueAllResult(r.values, r.indices, r.inverse, r.counts)


def unique_counts(x: Tensor) -> UniqueCountsResult:
    r = runs(x, indices=False, inverse=False, equal_nan=False)
    return UniqueCountsResult(r.values, r.counts)


def unique_inverse(x: Tensor) -> UniqueInverseResult:
    r = runs(x, indices=False, inverse=True, equal_nan=False)
    return UniqueInverseResult(r.values, r.inverse)


def unique_values(x: Tensor) -> Tensor:
    return runs(x, indices=False, inverse=False, equal_nan=False).values


def torch_unique(x: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
                 return_counts: bool = False, dim: int | None = None
                 ) -> Tensor | tuple[Tensor, ...]:
    """PyTorch's `torch.unique` and `Tensor.unique`: the values, then the
    inverse and counts asked for; each NaN is its own value, as in PyTorch.
    Sorted either way (`sorted=False` leaves the order open). Unique slices
    along `dim` are NumPy's `unique(axis=dim)` (`slice_runs`)."""
    if dim is not None:
        from .numpy import unique as numpy_unique
        return numpy_unique(x, False, return_inverse, return_counts, axis=dim)
    r = runs(x, indices=False, inverse=return_inverse, equal_nan=False)
    extra = [a for want, a in ((return_inverse, r.inverse), (return_counts, r.counts)) if want]
    return (r.values, *extra) if extra else r.values


def unique(x: Tensor, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, *, equal_nan: bool = True
           ) -> Tensor | tuple[Tensor, ...]:
    """NumPy's `unique` of the flattened array: the values, then the extra
    results asked for, in NumPy's order."""
    r = runs(x, indices=return_index, inverse=return_inverse, equal_nan=equal_nan)
    return _in_numpys_order(r, return_index, return_inverse, return_counts)


def unique_slices(x: Tensor, axis: int, return_index: bool = False,
                  return_inverse: bool = False, return_counts: bool = False
                  ) -> Tensor | tuple[Tensor, ...] | None:
    """NumPy's `unique(x, axis=axis)`, or None where `slice_runs` leaves it
    to NumPy."""
    r = slice_runs(x, axis, indices=return_index, inverse=return_inverse)
    return None if r is None else \
        _in_numpys_order(r, return_index, return_inverse, return_counts)


def _in_numpys_order(r: Runs, return_index: bool, return_inverse: bool,
                     return_counts: bool) -> Tensor | tuple[Tensor, ...]:
    extra = [a for want, a in ((return_index, r.indices), (return_inverse, r.inverse),
                               (return_counts, r.counts)) if want]
    return (r.values, *extra) if extra else r.values
