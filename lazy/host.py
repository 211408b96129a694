"""Wrapping host data (NumPy arrays, nested lists, scalars) as storages.

A NumPy array becomes a realized buffer without a copy whenever its
strides are whole elements: the buffer spans the memory the array covers
and the view carries its strides (negative and zero ones too).
"""
from __future__ import annotations

import numpy as np

from scheduler.dtypes import DEFAULT_FLOAT, DType, as_dtype
from scheduler.graph import Buffer
from scheduler.view import View


def storage_of(a: np.ndarray) -> tuple[np.ndarray, View]:
    """(flat array over a's memory, view of `a` into it) without copying when possible."""
    item = a.itemsize
    if a.size == 0:
        return np.empty(0, a.dtype), View.contiguous(a.shape)
    if a.flags.c_contiguous:
        return a.reshape(-1), View.contiguous(a.shape)
    if any(s % item for s in a.strides):
        return np.ascontiguousarray(a).reshape(-1), View.contiguous(a.shape)
    strides = tuple(s // item for s in a.strides)
    low = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in strides)]
    span = 1 + sum(abs(s) * (n - 1) for n, s in zip(a.shape, strides))
    flat = np.lib.stride_tricks.as_strided(low, shape=(span,), strides=(item,),
                                           writeable=a.flags.writeable)
    offset = (a.__array_interface__["data"][0] - low.__array_interface__["data"][0]) // item
    return flat, View(a.shape, strides, offset)


def from_python(data: object, dtype: DType | None) -> np.ndarray:
    """Nested lists and scalars: PyTorch's defaults (floats become float32)."""
    arr = np.asarray(data)
    if arr.dtype == object:
        raise TypeError(f"cannot make a tensor from {type(data).__name__} data "
                        f"(ragged nesting or non-numeric items)")
    if dtype is not None:  # NumPy's conversion: a value the dtype can't hold raises
        return np.asarray(data, dtype=dtype.np)
    if arr.dtype.kind == "f":
        return arr.astype(DEFAULT_FLOAT.np)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    return arr


def buffer_and_view(data: object, dtype: object | None, copy: bool) -> tuple[Buffer, View]:
    want = as_dtype(dtype) if dtype is not None else None
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        arr = np.asarray(data)
        if want is not None and arr.dtype != want.np:
            arr = arr.astype(want.np)
        else:
            as_dtype(arr.dtype)  # TypeError naming the supported dtypes
            if copy:
                arr = arr.copy()
    else:
        arr = from_python(data, want)
    flat, view = storage_of(arr)
    return Buffer.realized(flat, "cpu", as_dtype(flat.dtype)), view
