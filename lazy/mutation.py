"""Writes: setitem, in-place operators and methods (`add_`, `fill_`, ...).

A write never changes memory when it is built. It makes a new version of
the tensor's storage: a scatter node over the current version, pointed to
by the shared Storage, so every view sees it while ops built earlier keep
reading the version they captured. Whether the scatter reuses the old
memory is decided at sync (scheduler/inplace.py) and logged.
"""
from __future__ import annotations

import numpy as np

from scheduler.dtypes import DType
from scheduler.view import View

from . import elementwise, linalg, runtime
from .host import from_python
from .tensor import Tensor, asarray_like

_EXACT_OVERLAP_LIMIT = 1 << 20


def _has_internal_overlap(v: View) -> bool:
    """Would two elements of `v` land on one memory location?"""
    if any(s == 0 and n > 1 for n, s in zip(v.shape, v.strides)):
        return True
    if v.is_contiguous() or v.size > _EXACT_OVERLAP_LIMIT or v.size < 2:
        return False
    from scheduler.interpret import positions
    return np.unique(positions(v, [], v.shape)).size < v.size


def _value(value: object, dtype: DType, shape: tuple[int, ...], device: str) -> Tensor:
    """`value` as a tensor of `dtype` broadcast to `shape` (NumPy's setitem rule)."""
    nested = isinstance(value, (list, tuple))  # NumPy strips leading 1s of arrays, not lists
    if not isinstance(value, Tensor):
        if isinstance(value, np.generic) and value.dtype.kind in "biuf":
            value = value.item()  # NumPy checks a scalar's value against the dtype, as a number's
        if isinstance(value, (bool, int, float)):
            return elementwise.const(value, dtype, shape, device)
        if nested:  # converted straight into the dtype, as NumPy's setitem does
            value = asarray_like(from_python(value, dtype), device, copy=False)
        else:
            value = asarray_like(value, device)
    if value.device != device:
        raise ValueError(f"expected all tensors on the same device, but found {device} "
                         f"and {value.device}")
    extra = value.ndim - len(shape)
    if extra > 0 and not nested and all(n == 1 for n in value.shape[:extra]):
        value = value.reshape(value.shape[extra:])  # NumPy drops leading size-1 axes
    try:
        ok = elementwise.broadcast_shapes(value.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"could not broadcast input array from shape {value.shape} into "
                         f"shape {shape}")
    value = elementwise.cast(value, dtype)
    return value if value.shape == shape else value.broadcast_to(shape)


def write(t: Tensor, dest: View, value: object) -> None:
    """Write `value` through `dest`, a view of `t`'s storage."""
    if _has_internal_overlap(dest):
        raise RuntimeError(
            f"unsupported operation: more than one element of the written-to tensor refers "
            f"to a single memory location (shape {dest.shape}, strides {dest.strides}); "
            f"clone() the tensor before writing to it")
    if isinstance(value, Tensor) and value._storage is t._storage and value._view == dest \
            and value.dtype == t.dtype:
        return  # `x[i] += 1` ends with x[i] = (the view just written): nothing to do
    v = _value(value, t._buf.dtype, dest.shape, t.device)
    runtime.new_version(t._storage, ((v._buf, v._view),), dest)


def write_positions(t: Tensor, pos: np.ndarray | Tensor, value: object) -> None:
    """Write `value` at element positions `pos` of `t`'s storage (advanced
    indexing: host positions; a tensor of them may be pending, and is trusted
    to be in bounds and distinct, as a unique's permutation is)."""
    v = _value(value, t._buf.dtype, tuple(pos.shape), t.device)
    from .indexing import positions_tensor
    p = pos if isinstance(pos, Tensor) else positions_tensor(pos, t.device)
    runtime.new_version(t._storage, ((v._buf, v._view), (p._buf, p._view)), None)


def setitem(t: Tensor, key: object, value: object) -> None:
    from . import indexing, views
    if indexing.is_advanced(key):
        write_positions(t, indexing.positions(t, key), value)
    else:
        write(t, views.basic_view(t, key if isinstance(key, tuple) else (key,)), value)


def write_back(t: Tensor, result: Tensor, op: str) -> Tensor:
    """Store an in-place op's result, if its shape and dtype still fit (NumPy
    and PyTorch refuse otherwise: the output is not broadcast)."""
    if result.shape != t.shape:
        raise ValueError(f"in-place {op}: non-broadcastable output operand with shape "
                         f"{t.shape} doesn't match the broadcast shape {result.shape}")
    if not np.can_cast(result.dtype.np, t.dtype.np, casting="same_kind"):
        raise TypeError(f"in-place {op}: result type {result.dtype.name} can't be cast to the "
                        f"tensor's dtype {t.dtype.name}")
    write(t, t._view, result)
    return t


def inplace(t: Tensor, op: str, other: object) -> Tensor:
    """`t op= other`."""
    result = elementwise.power(t, other) if op == "pow" else elementwise.apply(op, t, other)
    return write_back(t, result, op)


def imatmul(t: Tensor, other: object) -> Tensor:
    """`t @= other`, in place as NumPy's (which needs the product to keep t's shape)."""
    result = linalg.matmul(t, other)
    if result.shape != t.shape:
        raise ValueError(f"in-place matmul: the product has shape {result.shape}, the "
                         f"tensor {t.shape}; @= needs them equal")
    return write_back(t, result, "matmul")


def clamp_(t: Tensor, min: object = None, max: object = None) -> Tensor:
    return write_back(t, elementwise.clip(t, min, max), "clamp")


def fill_(t: Tensor, value: object) -> Tensor:
    """Fill with one value (a scalar or a 0-d tensor, as PyTorch's fill_)."""
    if isinstance(value, Tensor) and value.ndim:
        raise ValueError(f"fill_ takes a scalar or a 0-d tensor, got a tensor of shape "
                         f"{value.shape}; use copy_ to broadcast a tensor")
    write(t, t._view, value)
    return t


def copy_(t: Tensor, src: object) -> Tensor:
    """Copy `src` (broadcast, cast to t's dtype) into `t`, as PyTorch's copy_."""
    write(t, t._view, src)
    return t
