"""`import lazy.numpy as np`: the Python array API (2024.12) over lazy tensors.

Arrays are `lazy.Tensor`s. Functions lazyrt can express are lazy and
fuse (elementwise math, reductions, views, where, gathers, matmul,
cumulative sums, sorts, searchsorted, median and quantiles, einsum, the
set functions around one sync); the rest (ptp, ...) run in NumPy through
`lazy.fallback.numpy_fallback`, each logged as
`fallback: <name> not lowered` and an error under LAZY_FALLBACK=error.
Any other NumPy function reached as `lazy.numpy.<name>` is such a
fallback too. docs/numpy.md lists which is which.

Signatures are the array API's, loosened to also accept NumPy's
positional forms (`np.sum(x, 0)`, `np.zeros(3, np.int32)`, `np.roll(x,
1, 0)`) and `out=` on reductions, so NumPy code runs unchanged.
"""
import math as _math
import types as _types

import numpy as _np

from ..fallback import numpy_fallback as _numpy_fallback
from ..tensor import Tensor as _Tensor
from ._creation import *  # noqa: F401,F403
from ._dtypes import *  # noqa: F401,F403
from ._dtypes import bool, float_, int_, intp  # noqa: F401,A004
from ._elementwise import *  # noqa: F401,F403
from ._info import __array_namespace_info__  # noqa: F401
from ._inplace import copyto, fill_diagonal, place, put, put_along_axis, putmask  # noqa: F401
from ._linalg import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
from ._nan import *  # noqa: F401,F403
from ._order import *  # noqa: F401,F403
from ._rounding import *  # noqa: F401,F403
from ._searching import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._statistical import *  # noqa: F401,F403
from ._transcendental import *  # noqa: F401,F403
from ._ufunc import fallback_ufunc as _fallback_ufunc, wrap_ufuncs as _wrap_ufuncs
from ._utility import *  # noqa: F401,F403
from . import random  # noqa: F401  (numpy.random, shuffling tensors correctly)
from .. import layout as _layout
from scheduler.dtypes import as_dtype as _as_dtype, bool_  # noqa: F401

__array_api_version__ = "2024.12"

e, pi, inf, nan, newaxis = _math.e, _math.pi, _math.inf, _math.nan, None
_MISSING = object()
_SUPPORTED = ("bool", "int32", "int64", "float32", "float64")
# NumPy's abstract scalar types, for `issubdtype(t.dtype, np.floating)`: NumPy's own
_CATEGORIES = (_np.generic, _np.number, _np.integer, _np.signedinteger, _np.unsignedinteger,
               _np.inexact, _np.floating, _np.complexfloating)
ndarray = _Tensor

# NumPy's other names for the same functions
absolute = abs  # noqa: F405
arccos, arcsin, arctan, arctan2 = acos, asin, atan, atan2  # noqa: F405
arccosh, arcsinh, arctanh = acosh, asinh, atanh  # noqa: F405
power, true_divide, mod = pow, divide, remainder  # noqa: F405
invert, bitwise_not = bitwise_invert, bitwise_invert  # noqa: F405
left_shift, right_shift = bitwise_left_shift, bitwise_right_shift  # noqa: F405
amax, amin, around, round_ = max, min, round, round  # noqa: F405
conjugate = conj  # noqa: F405


def ndim(a: object) -> int:
    return a.ndim if isinstance(a, _Tensor) else _np.ndim(a)


def shape(a: object) -> tuple[int, ...]:
    return a.shape if isinstance(a, _Tensor) else _np.shape(a)


def size(a: object) -> int:
    return a.size if isinstance(a, _Tensor) else _np.size(a)


def copy(a: object, order: str = "K", subok: bool = False) -> _Tensor:
    """A new tensor laid out in `order` (NumPy's default K keeps a's layout)."""
    if isinstance(a, _Tensor):
        return _layout.copy_in(a, order)
    return asarray(_np.copy(a, order=order))  # noqa: F405 - NumPy's copy, now, wrapped


def asanyarray(a: object, dtype: object = None, *, device: object = None,
               copy: object = None) -> _Tensor:
    """asarray (a tensor has no subclasses): `a` itself when it is already one."""
    return asarray(a, dtype=dtype, device=device, copy=copy)  # noqa: F405


def __getattr__(name: str) -> object:
    """NumPy names this module does not define.

    Functions run as logged NumPy fallbacks (ptp, trapezoid, ...);
    submodules (fft, ...), classes (errstate, dtype), the
    abstract dtype categories (floating, integer, ...) and constants are
    NumPy's own; dtypes lazyrt lacks (int8, float16,
    complex128, ...) raise AttributeError saying so.
    """
    attr = getattr(_np, name, _MISSING)
    if name.startswith("_") or attr is _MISSING:
        raise AttributeError(f"module 'lazy.numpy' has no attribute {name!r}")
    if isinstance(attr, type) and issubclass(attr, _np.generic) and attr not in _CATEGORIES:
        if _np.dtype(attr).name in _SUPPORTED:  # np.double, np.single, np.intc, np.long, ...
            return _as_dtype(attr)
        raise AttributeError(f"lazy.numpy has no dtype {name!r}: lazyrt supports bool, int32, "
                             f"int64, float32, float64")
    if isinstance(attr, (_types.ModuleType, type, int, float)) or not callable(attr):
        return attr

    def fallback(*args: object, **kwargs: object) -> object:
        return _numpy_fallback(name, attr, args, kwargs)
    fallback.__name__ = fallback.__qualname__ = name
    fallback.__doc__ = f"numpy.{name}, run as a logged NumPy fallback."
    if isinstance(attr, _np.ufunc):  # np.fmax(x, y, out=z), np.fmax.reduce(x)
        return _fallback_ufunc(attr.__name__, attr, fallback)
    return fallback


_wrap_ufuncs(globals())  # np.add(x, y, out=z), np.maximum.reduce(x): NumPy's ufunc conventions
