"""Dtype objects and the array API's dtype functions over lazyrt's five dtypes.

lazyrt has bool, int32, int64, float32 and float64; asking for another
(int8, uint8, float16, complex64, ...) raises TypeError naming these.
"""
from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np

from scheduler.dtypes import DType, as_dtype, bool_, float32, float64, int32, int64
from scheduler.dtypes import result_type as _result_type

from .. import layout as _layout
from ..tensor import Tensor
from ._helpers import shared, tensor

bool = bool_  # noqa: A001  (the array API's name)
float_, int_, intp = float64, int64, int64

_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "", "integral": "i",
          "real floating": "f", "complex floating": "", "numeric": "if"}


def astype(x: object, dtype: object, /, *, copy: bool = True, device: object = None) -> Tensor:
    """`x` converted to `dtype`, in x's layout (NumPy's `x.astype`); with
    copy=False the same tensor when nothing changes."""
    t = shared(x) if not copy else tensor(x)
    d = as_dtype(dtype)
    out = t if (not copy and t.dtype == d) else _layout.astype(t, d)
    return out if device is None else out.to(str(device))


def can_cast(from_: object, to: object, /) -> bool:
    """NumPy's safe-casting rule between dtypes (or an array's dtype)."""
    src = from_.dtype if isinstance(from_, Tensor) else as_dtype(from_)
    return builtins.bool(np.can_cast(src.np, as_dtype(to).np))


@dataclass(frozen=True)
class finfo_object:
    """The array API's finfo: Python floats and a lazyrt dtype (NumPy's has NumPy's)."""
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: DType


def finfo(type: object, /) -> finfo_object:
    """Machine limits of a floating dtype."""
    d = type.dtype if isinstance(type, Tensor) else as_dtype(type)
    if not d.is_float:
        raise ValueError(f"finfo: {d.name} is not a floating dtype")
    f = np.finfo(d.np)
    return finfo_object(f.bits, float(f.eps), float(f.max), float(f.min),
                        float(f.smallest_normal), d)


def iinfo(type: object, /) -> iinfo_object:
    """Machine limits of an integer dtype."""
    d = type.dtype if isinstance(type, Tensor) else as_dtype(type)
    if not d.is_int:
        raise ValueError(f"iinfo: {d.name} is not an integer dtype")
    i = np.iinfo(d.np)
    return iinfo_object(i.bits, int(i.max), int(i.min), d)


def isdtype(dtype: object, kind: object) -> bool:
    """Is `dtype` of `kind`: a dtype, a kind name ('real floating', ...) or a tuple of them."""
    d = as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of "
                             f"{', '.join(map(repr, _KINDS))}")
        return d.kind in _KINDS[kind] if _KINDS[kind] else False
    return d == as_dtype(kind)


def issubdtype(arg1: object, arg2: object, /) -> builtins.bool:
    """NumPy's dtype hierarchy test (`issubdtype(t.dtype, np.floating)`); a
    tensor stands for its dtype."""
    def np_side(x: object) -> object:
        return x.dtype.np if isinstance(x, Tensor) else x.np if isinstance(x, DType) else x
    return builtins.bool(np.issubdtype(np_side(arg1), np_side(arg2)))


def result_type(*arrays_and_dtypes: object) -> DType:
    """NumPy 2 promotion; tensors and dtypes are strong, Python scalars weak."""
    if not arrays_and_dtypes:
        raise ValueError("at least one array or dtype is required")
    items = []
    for x in arrays_and_dtypes:
        if isinstance(x, Tensor):
            items.append(x.dtype)
        elif isinstance(x, (builtins.bool, int, float)) and not isinstance(x, np.generic):
            items.append(x)
        else:
            items.append(as_dtype(x))
    return _result_type(*items)


__all__ = ["astype", "bool", "can_cast", "finfo", "float32", "float64", "iinfo",
           "int32", "int64", "isdtype", "issubdtype", "result_type"]
