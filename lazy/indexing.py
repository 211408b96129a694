"""Advanced indexing: integer arrays and boolean masks, read as gathers.

A key of slices, integers, integer arrays and masks is an affine map
from the result's coordinates to storage positions (selection.py): the
advanced indices' part is computed on the host, and for a large result
the slice axes' part is added inside the gather's kernel, so nothing of
the result's size is written first. Any other key (newaxis, boolean
scalars, out-of-bounds or mismatched indices) takes the general path:
select from arrays shaped like `t` with the same key, and NumPy's rules
give the result shape and its errors. Those arrays are each axis's
coordinates broadcast to `t`'s shape (stride 0, never written out), one
axis at a time (`selected_positions`).

The gather is a lazy op that fuses like an elementwise one. Index tensors
are synced first (their values decide shapes and bounds): a logged sync
point.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from scheduler.dtypes import int64
from scheduler.view import View, normalize_dim

from . import elementwise, runtime, selection
from .selection import Selection, Term
from .tensor import Tensor, asarray_like

# below this many result elements the positions are written on the host:
# a computed-positions kernel is a new structure to compile, ~30 ms once
COMPUTED_POSITIONS = 1 << 16


def _is_array_like(k: object) -> bool:
    """An advanced index, as NumPy counts them: a 0-d integer array is one too
    (its result is a copy), only Python and NumPy scalars are not."""
    if isinstance(k, (Tensor, np.ndarray)):
        return True
    return isinstance(k, (list, bool, np.bool_))


def is_advanced(key: object) -> bool:
    key = key if isinstance(key, tuple) else (key,)
    return any(_is_array_like(k) for k in key)


def _host_index(k: object) -> object:
    if isinstance(k, Tensor):
        what = "boolean mask index" if k.dtype.is_bool else "index tensor"
        runtime.implicit_sync(k, what)
        return np.asarray(k.numpy())
    if isinstance(k, list):
        arr = np.asarray(k) if k else np.empty(0, np.int64)  # [] is an empty int index
        if arr.dtype.kind not in "biu":
            raise IndexError(f"arrays used as indices must be of integer or boolean type, "
                             f"got {arr.dtype}")
        return arr
    return k


def selected_positions(t: Tensor, select: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Storage positions of the elements `select` picks from an array shaped
    like `t` (`select` indexes or takes from its argument, as NumPy would
    from t's values): offset + sum over axes of coordinate * stride, each
    axis's coordinates selected from a stride-0 broadcast view. 10M elements,
    1M picked: 19 ms, against 57 ms to write every position out first."""
    view, shape = t._view, t.shape
    out = None
    for d, (n, stride) in enumerate(zip(shape, view.strides)):
        if stride and n > 1:
            small = np.int32 if n < 2 ** 31 else np.int64  # half the bytes to write and read
            coord = np.arange(n, dtype=small).reshape((n,) + (1,) * (len(shape) - d - 1))
            term = select(np.broadcast_to(coord, shape)).astype(np.int64) * stride
            out = term if out is None else out + term
    if out is None:  # every axis of length 1 or stride 0: the offset, selected for its shape
        return np.array(select(np.broadcast_to(np.int64(view.offset), shape)), dtype=np.int64)
    return out + view.offset if view.offset else out


def _selection(t: Tensor, key: object) -> tuple[tuple, Selection | None]:
    key = key if isinstance(key, tuple) else (key,)
    host = tuple(_host_index(k) for k in key)
    return host, selection.parse(t.shape, t._view.strides, t._view.offset, host)


def positions(t: Tensor, key: object) -> np.ndarray:
    """Element positions `t[key]` selects, shaped like NumPy's result."""
    host, sel = _selection(t, key)
    return sel.positions() if sel is not None else selected_positions(t, lambda a: a[host])


def positions_tensor(pos: np.ndarray, device: str, dtype: object = np.int64, *,
                     copy: bool = False) -> Tensor:
    """Host-computed element positions, on `device` (a logged transfer off the
    CPU). `copy=True` for an index array the caller may still write."""
    p = asarray_like(np.ascontiguousarray(pos, dtype=dtype), "cpu", copy=copy)
    return p if device == "cpu" else p.to(device)


def gather(t: Tensor, pos: np.ndarray | Tensor) -> Tensor:
    """A new tensor of `t`'s values at storage positions `pos` (a copy, as NumPy's)."""
    p = pos if isinstance(pos, Tensor) else positions_tensor(pos, t.device)
    base = t._buf
    return runtime.make("gather", ((base, View((base.size,), (1,), 0)), (p._buf, p._view)),
                        None, t.dtype, tuple(pos.shape), t.device)


def _term_tensor(term: Term, device: str) -> Tensor:
    """A term as lazy int64 ops on its uploaded index (the decomposition of
    a mask's flat indices included), computed in the gather's kernel."""
    index = positions_tensor(term.index, device, term.index.dtype, copy=True)  # maybe the user's
    return term.combine(elementwise.cast(index, int64))


def _computed_positions(sel: Selection, device: str) -> Tensor:
    """The positions as a lazy expression, added in the gather's own kernel:
    nothing of the result's size is written first."""
    p = None
    for term in sel.terms:
        v = _term_tensor(term, device).reshape(sel.at_rank(term.index.shape))
        p = v if p is None else p + v
    if sel.offset:
        p = p + sel.offset
    for dim, n, step in sel.slices:
        iota = runtime.make("iota", (), None, int64, (n,), device)
        p = p + (iota * step).reshape(selection.along(dim, n, len(sel.shape)))
    return p.broadcast_to(sel.shape)


def getitem(t: Tensor, key: object) -> Tensor:
    host, sel = _selection(t, key)
    if sel is None:
        return gather(t, selected_positions(t, lambda a: a[host]))
    if math.prod(sel.shape) < COMPUTED_POSITIONS:
        return gather(t, sel.positions())
    return gather(t, _computed_positions(sel, t.device))


def _index_array(index: object, what: str) -> np.ndarray:
    arr = np.asarray(_host_index(index) if isinstance(index, Tensor) else index)
    if arr.dtype.kind not in "iu":
        raise IndexError(f"{what}: indices must be integers, got dtype {arr.dtype}")
    return arr


def _bools_as_ints(indices: object) -> object:
    """As NumPy's take reads indices: bools count as 0 and 1, and an empty
    list (float64 to `np.asarray`) is an empty integer array."""
    if isinstance(indices, Tensor):
        indices = _host_index(indices)
    arr = np.asarray(indices)
    empty_list = arr.size == 0 and not isinstance(indices, np.ndarray)
    return arr.astype(np.intp) if arr.dtype == np.bool_ or empty_list else arr


def take(t: Tensor, indices: object, axis: int | None = None) -> Tensor:
    """NumPy's take: along `axis`, or into the flattened tensor when axis is None.

    Bool indices count as 0 and 1, as NumPy's safe cast to intp makes them (not a mask)."""
    idx = _index_array(_bools_as_ints(indices), "take")
    if axis is not None:
        axis = normalize_dim(axis, t.ndim, "axis")
    return gather(t, selected_positions(t, lambda a: np.take(a, idx, axis=axis)))


def take_along_axis(t: Tensor, indices: object, axis: int | None) -> Tensor:
    """NumPy's take_along_axis; axis None takes from the flattened tensor (1-D indices)."""
    idx = _index_array(indices, "take_along_axis")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(f"take_along_axis: with axis=None the indices must be 1-D, got "
                             f"shape {idx.shape}")
        t, axis = t.reshape(-1), 0
    if idx.ndim != t.ndim:
        raise ValueError(f"take_along_axis: indices has {idx.ndim} dimensions, the tensor has "
                         f"{t.ndim} (shape {t.shape}); they must match")
    axis = normalize_dim(axis, t.ndim, "axis")
    return gather(t, selected_positions(t, lambda a: np.take_along_axis(a, idx, axis=axis)))


def gather_dim(t: Tensor, dim: int, index: object) -> Tensor:
    """PyTorch's gather: out[i][j] = t[index[i][j]][j] for dim 0, and so on."""
    idx = _index_array(index, "gather")
    d = normalize_dim(dim, t.ndim)
    if idx.ndim != t.ndim or any(idx.shape[k] > t.shape[k] for k in range(t.ndim) if k != d):
        raise ValueError(f"gather: index of shape {idx.shape} does not fit the tensor's shape "
                         f"{t.shape} (same number of dims, and no larger except along dim {d})")
    if idx.size and (idx.min() < -t.shape[d] or idx.max() >= t.shape[d]):
        bad = idx.max() if idx.max() >= t.shape[d] else idx.min()
        raise IndexError(f"gather: index {bad} is out of bounds for dim {d} with size "
                         f"{t.shape[d]}")
    grids = list(np.indices(idx.shape, sparse=True))
    grids[d] = idx
    return gather(t, selected_positions(t, lambda a: a[tuple(grids)]))


def index_select(t: Tensor, dim: int, index: object) -> Tensor:
    idx = _index_array(index, "index_select")
    if idx.ndim > 1:
        raise ValueError(f"index_select: index must be 0-d or 1-d, got shape {idx.shape}")
    axis = normalize_dim(dim, t.ndim)
    return gather(t, selected_positions(t, lambda a: np.take(a, idx.reshape(-1), axis=axis)))


def masked_fill(t: Tensor, mask: object, value: object) -> Tensor:
    """`value` where `mask` is true, `t` elsewhere; keeps t's dtype (PyTorch)."""
    if not isinstance(mask, Tensor):
        mask = asarray_like(mask, t.device)
    if not mask.dtype.is_bool:
        raise TypeError(f"masked_fill: mask must be a bool tensor, got {mask.dtype.name}")
    shape = elementwise.broadcast_shapes(t.shape, mask.shape)
    if shape != t.shape:
        raise ValueError(f"masked_fill: mask of shape {mask.shape} does not broadcast to the "
                         f"tensor's shape {t.shape}")
    fill = elementwise.const(value, t.dtype, (), t.device) if not isinstance(value, Tensor) \
        else elementwise.cast(value, t.dtype)
    return elementwise.apply("where", mask, fill, t)


def nonzero(t: Tensor) -> tuple[Tensor, ...]:
    """Indices of the nonzero elements, one int64 tensor per axis (NumPy).

    The result's length depends on the data: this is a sync point.
    """
    runtime.implicit_sync(t, "nonzero")
    return tuple(asarray_like(np.ascontiguousarray(i, dtype=np.int64), t.device, copy=False)
                 for i in np.nonzero(t.numpy()))
