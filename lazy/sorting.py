"""`sort`, `argsort` and `searchsorted` as deferred extern kernels.

They were NumPy fallbacks, which sync their input at the call and so cut
the graph in two. Here each builds a node like any other: nothing runs
until a sync, what it reads is computed by the kernels before it, and what
reads it fuses after it. The kernel IR has no sort, so the sort itself is
an extern kernel, as matmul is: NumPy's functions on the CPU, independent
rows split over threads (scheduler/sorting.py), CuPy's on a GPU.
Descending order costs no kernel: it is an ascending sort between two
reversed views (docs/numpy.md, "Sorting").
"""
from __future__ import annotations

from typing import NamedTuple

from scheduler.dtypes import int64, result_type
from scheduler.sorting import MIN_SPLIT
from scheduler.view import normalize_dim

from . import elementwise, runtime, views
from .tensor import Tensor, asarray_like

class SortResult(NamedTuple):
    """PyTorch's `torch.return_types.sort`: what `lazy.sort` returns."""
    values: Tensor
    indices: Tensor


_KINDS = {"q": "quicksort", "h": "heapsort", "s": "stable", "m": "stable"}


def sort_kind(kind: str | None, stable: bool) -> str:
    """The extern's kind for NumPy's `kind` (read by its first letter, as
    NumPy does; mergesort is stable's alias) or, without one, the array
    API's `stable`: "stable" when the result must be a stable sort's."""
    if kind is None:
        return "stable" if stable else "quicksort"
    if not isinstance(kind, str) or kind[:1].lower() not in _KINDS:
        raise ValueError(f"sort kind must be one of 'quicksort', 'heapsort', 'stable' or "
                         f"'mergesort', got {kind!r}")
    return _KINDS[kind[0].lower()]


def sort(t: Tensor, axis: int = -1, kind: str = "stable", descending: bool = False) -> Tensor:
    """A sorted copy along `axis` (NaNs last; first when descending); with
    kind "stable", equal elements keep their order in either direction."""
    return _sorted("sort", t, axis, kind, descending)


def argsort(t: Tensor, axis: int = -1, kind: str = "stable", descending: bool = False
            ) -> Tensor:
    """int64 indices that sort `t` along `axis`, as `sort` orders it."""
    return _sorted("argsort", t, axis, kind, descending)


def argsort_method(t: Tensor, axis: int | None = -1, kind: str | None = None,
                   order: object = None, *, dim: int | None = None, descending: bool = False,
                   stable: bool | None = None) -> Tensor:
    """`Tensor.argsort`: NumPy's ndarray method (axis None flattens) and
    PyTorch's (`dim`, `descending`; its unstable default may give a stable
    order, as here)."""
    from .numpy import argsort as numpy_argsort  # imported late: lazy.numpy imports this
    if order is not None:
        raise ValueError("Cannot specify order when the array has no fields.")
    if dim is not None:
        axis = dim
    return numpy_argsort(t, axis=axis, kind=kind, descending=descending,
                         stable=True if stable is None else stable)


def _sorted(op: str, t: Tensor, axis: int, kind: str, descending: bool) -> Tensor:
    if t.ndim == 0:  # one element, as PyTorch and NumPy's argsort treat it
        return _sorted(op, t.reshape(1), 0, kind, descending).reshape(())
    axis = normalize_dim(axis, t.ndim, "axis")
    if descending:  # the stable ascending sort of the reversed rows, reversed
        res = _flip(_sorted(op, _flip(t, axis), axis, kind, False), axis)
        return (t.shape[axis] - 1) - res if op == "argsort" else res
    last = t.ndim - 1
    if t.size >= MIN_SPLIT and t.shape[axis] > 1 and abs(t._view.strides[axis]) != 1:
        # rows across memory (a column sort, a transposed view): NumPy would
        # gather each row into a buffer, a cache miss per element. One
        # cache-blocked copy kernel with the axis last (fused with whatever
        # computes t) makes the rows contiguous; the result is copied back into
        # NumPy's layout, which a consumer's kernel does as it reads it
        order = [d for d in range(t.ndim) if d != axis] + [axis]
        rows = _sorted(op, t.permute(*order).contiguous(), last, kind, False)
        return rows.permute(*sorted(range(t.ndim), key=order.__getitem__)).contiguous() \
            if axis != last else rows
    dtype = int64 if op == "argsort" else t.dtype
    return runtime.make(op, ((t._buf, t._view),), (axis, kind), dtype, t.shape, t.device)


def _flip(t: Tensor, axis: int) -> Tensor:
    return views.getitem(t, tuple(slice(None, None, -1) if d == axis else slice(None)
                                  for d in range(t.ndim)))


def searchsorted(a: Tensor, v: object, side: str = "left", sorter: object = None) -> Tensor:
    """int64 positions at which v's elements would go into sorted 1-D `a` to
    keep it sorted (NumPy's: both in their common dtype, NaNs last); with
    `sorter`, `a[sorter]` is the sorted array."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if a.ndim != 1:
        raise ValueError(f"searchsorted: the sorted array must be 1-D, got shape {a.shape}")
    if sorter is not None:
        sorter = sorter if isinstance(sorter, Tensor) else asarray_like(sorter, a.device)
        if sorter.shape != a.shape or not sorter.dtype.is_int:
            raise ValueError(f"searchsorted: sorter must be 1-D integers of the sorted array's "
                             f"length {a.shape[0]}, got {sorter.dtype.name} of shape "
                             f"{sorter.shape}")
        a = a.take(sorter)
    weak = elementwise.is_weak_scalar(v)
    common = result_type(a.dtype, v if weak else _tensor(v, a.device).dtype)
    v = elementwise.filled(v, common, (), a.device) if weak else _tensor(v, a.device)
    if v.device != a.device:
        raise ValueError(f"expected all tensors on the same device, but found {a.device} "
                         f"and {v.device}")
    a, v = (x if x.dtype == common else elementwise.astype(x, common) for x in (a, v))
    return runtime.make("searchsorted", ((a._buf, a._view), (v._buf, v._view)), side, int64,
                        v.shape, a.device)


def _tensor(x: object, device: str) -> Tensor:
    return x if isinstance(x, Tensor) else asarray_like(x, device)
