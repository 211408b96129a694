"""NumPy's functions that write into their first argument: copyto,
fill_diagonal, put, putmask, place, put_along_axis, as lazy writes into
a tensor.

Through a NumPy fallback they would write a read-only host copy and raise
(`np.fill_diagonal(t, 5)` under `python -m lazy`); here they are ordinary
lazy writes (docs/semantics.md, "Writes"), so every view of the tensor
sees them in program order. A NumPy array as the destination is left to
NumPy itself.
"""
from __future__ import annotations

import math

import numpy as np

from scheduler.view import normalize_dim

from ..interop import check_where_mask
from ..tensor import Tensor
from ._helpers import operand, tensor
from ._searching import where as select


_KIND_ORDER = {"b": 0, "i": 1, "f": 2}


def copyto(dst: object, src: object, casting: str = "same_kind", where: object = True) -> None:
    """`dst[...] = src` where `where` is true, refusing what `casting` does
    not allow, as NumPy's: a Python number is weak (1.5 into float32 and 1
    into int32 pass, 1.5 into int32 does not), anything else is cast by
    its dtype."""
    if not isinstance(dst, Tensor):
        return np.copyto(dst, src.numpy() if isinstance(src, Tensor) else src, casting,
                         where.numpy() if isinstance(where, Tensor) else where)
    src = operand(src)
    want = dst.dtype.np
    if isinstance(src, Tensor):
        have, ok = src.dtype.np, bool(np.can_cast(src.dtype.np, want, casting))
    else:
        have = np.dtype(type(src))
        ok = casting == "unsafe" or _KIND_ORDER[have.kind] <= _KIND_ORDER[want.kind]
    if not ok:
        what = "array data" if isinstance(src, Tensor) and src.ndim else "scalar"
        raise TypeError(f"Cannot cast {what} from dtype('{have}') to dtype('{want}') "
                        f"according to the rule '{casting}'")
    if where is not True:
        check_where_mask(where)
        src = select(operand(where), src, dst)
    dst[...] = src
    return None


def _host(x: object) -> np.ndarray:
    """Indices, masks and values these functions need now (a tensor is synced)."""
    return np.asarray(x.numpy() if isinstance(x, Tensor) else x)


def _flat_write(a: Tensor, flat: np.ndarray, values: object) -> None:
    """a.flat[flat] = values, NumPy's way: the values repeat to the number of
    indices, and the last write to a repeated index wins. A tensor of values
    is read now (a sync): repeating it needs its length and values."""
    vals = _host(values)
    if flat.size == 0:
        return
    if vals.size == 0:
        raise ValueError("cannot write an empty sequence of values into a non-empty selection")
    idx = np.unravel_index(flat, a.shape)
    a[tuple(idx)] = tensor(np.resize(vals, flat.shape).astype(a.dtype.np, copy=False))


def fill_diagonal(a: object, val: object, wrap: bool = False) -> None:
    """NumPy's fill_diagonal: every a[i, i, ...] (for 2-D, the main diagonal,
    continued below a tall matrix's square part when `wrap`)."""
    if not isinstance(a, Tensor):
        return np.fill_diagonal(a, _host(val), wrap)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + sum(math.prod(a.shape[:k]) for k in range(1, a.ndim))
        end = a.size
    _flat_write(a, np.arange(0, min(end, a.size), step), val)
    return None


def put(a: object, ind: object, v: object, mode: str = "raise") -> None:
    """NumPy's put: a.flat[ind] = v. mode "raise" checks the indices now
    (negative ones count from the end), "wrap" takes them modulo a.size,
    "clip" clips them into range."""
    if not isinstance(a, Tensor):
        return np.put(a, _host(ind), _host(v), mode)
    flat = _host(ind).reshape(-1)
    if flat.size and flat.dtype.kind not in "iu":
        raise TypeError(f"put: indices must be integers, got dtype {flat.dtype}")
    flat = flat.astype(np.int64, copy=False)
    n = a.size
    if mode == "raise":
        bad = flat[(flat < -n) | (flat >= n)]
        if bad.size:
            raise IndexError(f"index {bad[0]} is out of bounds for axis 0 with size {n}")
        flat = np.where(flat < 0, flat + n, flat)
    elif mode == "wrap":
        flat = flat % n if n else flat
    elif mode == "clip":
        flat = np.clip(flat, 0, max(n - 1, 0))
    else:
        raise ValueError(f"put: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if flat.size and n == 0:
        raise IndexError("cannot put into an empty array")
    _flat_write(a, flat, v)
    return None


def _mask_positions(a: Tensor, mask: object, name: str) -> np.ndarray:
    m = _host(mask)
    if m.size != a.size:
        raise ValueError(f"{name}: mask and data must be the same size, got {m.size} and {a.size}")
    return np.flatnonzero(m.astype(bool, copy=False))


def putmask(a: object, mask: object, values: object) -> None:
    """NumPy's putmask: a.flat[n] = values.flat[n % len(values)] where
    mask.flat[n] (the values repeat by position, unlike `place`)."""
    if not isinstance(a, Tensor):
        return np.putmask(a, _host(mask), _host(values))
    flat, vals = _mask_positions(a, mask, "putmask"), _host(values).reshape(-1)
    _flat_write(a, flat, np.resize(vals, a.size)[flat] if vals.size else vals)
    return None


def place(arr: object, mask: object, vals: object) -> None:
    """NumPy's place: the true positions of `mask` take vals[0], vals[1], ...
    in order, repeated when there are fewer values than positions."""
    if not isinstance(arr, Tensor):
        return np.place(arr, _host(mask), _host(vals))
    _flat_write(arr, _mask_positions(arr, mask, "place"), vals)
    return None


def put_along_axis(arr: object, indices: object, values: object, axis: int | None) -> None:
    """NumPy's put_along_axis: `take_along_axis`'s positions written with
    `values` (broadcast to the indices), as one advanced-index write."""
    if not isinstance(arr, Tensor):
        return np.put_along_axis(arr, _host(indices), _host(values), axis)
    idx = _host(indices)
    if idx.dtype.kind not in "iu":
        raise IndexError(f"put_along_axis: indices must be integers, got dtype {idx.dtype}")
    if axis is None:
        if idx.ndim != 1:
            raise ValueError("put_along_axis: with axis=None the indices must be 1-D")
        return put(arr, idx, np.broadcast_to(_host(values), idx.shape))
    if idx.ndim != arr.ndim:
        raise ValueError(f"put_along_axis: indices and arr must have the same number of "
                         f"dimensions, got {idx.ndim} and {arr.ndim}")
    axis = normalize_dim(axis, arr.ndim, "axis")
    key = tuple(idx if d == axis else np.arange(n).reshape([-1 if k == d else 1
                                                             for k in range(arr.ndim)])
                for d, n in enumerate(arr.shape))
    arr[key] = operand(values)
    return None
