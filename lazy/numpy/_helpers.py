"""Operand conversion for the NumPy namespace, with NumPy's defaults.

`lazy.tensor([1.0])` is float32 (PyTorch's default); code written for
NumPy expects float64, so this namespace converts Python floats and float
lists to float64 and Python ints to int64, as NumPy does.
"""
from __future__ import annotations

import operator

import numpy as np

from scheduler.dtypes import as_dtype
from scheduler.view import normalize_dim

from ..creation import asarray as _lazy_asarray
from ..interop import has_dtype, store_into
from ..tensor import Tensor, asarray_like


def host_array(obj: object, dtype: object = None) -> np.ndarray:
    """A NumPy array for non-tensor data; unsupported dtypes raise TypeError now."""
    arr = np.asarray(obj) if dtype is None else np.asarray(obj, dtype=as_dtype(dtype).np)
    if arr.dtype == object:
        raise TypeError(f"cannot make an array from {type(obj).__name__} data "
                        f"(ragged nesting or non-numeric items)")
    as_dtype(arr.dtype)  # TypeError naming the supported dtypes
    return arr


def tensor(x: object) -> Tensor:
    """`x` as an operand: tensors pass through; other data as NumPy would
    convert it, copied now. NumPy reads an operand when it is called, a
    lazy op at sync, and the caller may write the array in between."""
    if isinstance(x, Tensor):
        return x
    arr = host_array(x)
    return asarray_like(arr, "cpu", copy=arr is x or not arr.flags.owndata)


def shared(x: object) -> Tensor:
    """`x` as a tensor over the same memory: the input of NumPy's view
    functions (`reshape`, `transpose`, ...), whose result is a view of it,
    and of functions that read only its shape and dtype (`zeros_like`)."""
    if isinstance(x, Tensor):
        return x
    return _lazy_asarray(host_array(x))


def operand(x: object) -> object:
    """Tensors and Python scalars (weak, NEP 50) pass through; other data become
    tensors. A NumPy scalar of a dtype lazyrt lacks (`np.int8(1)`) passes too:
    beside a tensor, `elementwise` casts it exactly to NumPy's result dtype."""
    if isinstance(x, Tensor) or (isinstance(x, (bool, int, float)) and
                                 not isinstance(x, np.generic)):
        return x
    if isinstance(x, np.generic) and x.dtype.kind in "biuf" and not has_dtype(x.dtype):
        return x
    return tensor(x)


def axis_arg(axis: object, ndim: int) -> int:
    """One normalized axis; a bool is none (NumPy: "an integer is required")."""
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"an integer is required for the axis, got {axis!r}")
    return normalize_dim(operator.index(axis), ndim, "axis")


def axes_arg(axis: object, ndim: int) -> tuple[int, ...]:
    """A tuple of distinct normalized axes from an int, a sequence, or None (all)."""
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(axis_arg(a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis!r}")
    return out


def check_kind(name: str, x: Tensor, kinds: str) -> None:
    """TypeError naming the function and dtype when `x`'s kind is not in `kinds` (b, i, f)."""
    if x.dtype.kind not in kinds:
        words = {"b": "boolean", "i": "integer", "f": "floating"}
        allowed = " or ".join(words[k] for k in kinds)
        raise TypeError(f"{name}: expected {allowed} input, got dtype {x.dtype.name}")


def store_out(result: Tensor, out: object, casting: str = "unsafe", name: str = "out",
              exact: bool = True) -> Tensor:
    """NumPy's `out=` of a function: a lazy write of `result` into the tensor
    `out` (a copy into a NumPy array), which is returned; out's shape must be
    the result's, or (not `exact`: clip, a ufunc in NumPy) one it broadcasts to.

    `casting` is the rule NumPy applies to that function's out=: reductions
    cast unsafely (`np.sum(x, out=int_array)` truncates), clip only within
    a kind ("same_kind": no float result into an int out)."""
    if out is None:
        return result
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if not isinstance(out, (Tensor, np.ndarray)):
        raise TypeError(f"out must be a lazy tensor or a NumPy array, got {type(out).__name__}")
    return store_into(result, (out,), name, casting, exact)


def cast_all(ts: list[Tensor], dtype: object, casting: str) -> list[Tensor]:
    """Each tensor cast to `dtype`, refused as NumPy refuses under `casting`
    (concatenate's and einsum's `dtype=`)."""
    from .. import elementwise
    target = as_dtype(dtype)
    for t in ts:
        if not np.can_cast(t.dtype.np, target.np, casting=casting):
            raise TypeError(f"Cannot cast array data from {t.dtype.np!r} to {target.np!r} "
                            f"according to the rule {casting!r}")
    return [elementwise.cast(t, target) for t in ts]
