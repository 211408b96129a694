"""`import lazy.numpy as np`: the Python array API (2024.12) over lazy tensors.

Arrays are `lazy.Tensor`s. Functions lazyrt can express are lazy and
fuse (elementwise math, reductions, views, where, gathers, matmul); the
rest (sorting, set functions, cumulative sums, searchsorted, einsum, ...)
run in NumPy through `lazy.fallback.numpy_fallback`, each logged as
`fallback: <name> not lowered` and an error under LAZY_FALLBACK=error.
Any other NumPy function reached as `lazy.numpy.<name>` is such a
fallback too. docs/numpy.md lists which is which.

Signatures are the array API's, loosened to also accept NumPy's
positional forms (`np.sum(x, 0)`, `np.zeros(3, np.int32)`, `np.roll(x,
1, 0)`) and `out=` on reductions, so NumPy code runs unchanged.
"""
import math as _math

import numpy as _np

from ..fallback import numpy_fallback as _numpy_fallback
from ..tensor import Tensor as _Tensor
from ._creation import *  # noqa: F401,F403
from ._dtypes import *  # noqa: F401,F403
from ._dtypes import bool, float_, int_, intp  # noqa: F401,A004
from ._elementwise import *  # noqa: F401,F403
from ._info import __array_namespace_info__  # noqa: F401
from ._linalg import *  # noqa: F401,F403
from ._manipulation import *  # noqa: F401,F403
from ._rounding import *  # noqa: F401,F403
from ._searching import *  # noqa: F401,F403
from ._sorting import *  # noqa: F401,F403
from ._statistical import *  # noqa: F401,F403
from ._transcendental import *  # noqa: F401,F403
from ._utility import *  # noqa: F401,F403
from ..functions import take, take_along_axis  # noqa: F401
from scheduler.dtypes import bool_  # noqa: F401

__array_api_version__ = "2024.12"

e, pi, inf, nan, newaxis = _math.e, _math.pi, _math.inf, _math.nan, None
ndarray = _Tensor

# NumPy's other names for the same functions
absolute = abs  # noqa: F405
arccos, arcsin, arctan, arctan2 = acos, asin, atan, atan2  # noqa: F405
arccosh, arcsinh, arctanh = acosh, asinh, atanh  # noqa: F405
power, true_divide, mod = pow, divide, remainder  # noqa: F405
invert, bitwise_not = bitwise_invert, bitwise_invert  # noqa: F405
left_shift, right_shift = bitwise_left_shift, bitwise_right_shift  # noqa: F405
amax, amin, around, round_ = max, min, round, round  # noqa: F405
rint = round  # noqa: F405
conjugate = conj  # noqa: F405


def ndim(a: object) -> int:
    return a.ndim if isinstance(a, _Tensor) else _np.ndim(a)


def shape(a: object) -> tuple[int, ...]:
    return a.shape if isinstance(a, _Tensor) else _np.shape(a)


def size(a: object) -> int:
    return a.size if isinstance(a, _Tensor) else _np.size(a)


def copy(a: object) -> _Tensor:
    return asarray(a, copy=True)  # noqa: F405


def __getattr__(name: str):
    """Any other NumPy function, run as a logged NumPy fallback (median, percentile, ...)."""
    func = getattr(_np, name, None)
    if name.startswith("_") or not callable(func) or isinstance(func, type):
        raise AttributeError(f"module 'lazy.numpy' has no attribute {name!r}")

    def fallback(*args: object, **kwargs: object) -> object:
        return _numpy_fallback(name, func, args, kwargs)
    fallback.__name__ = fallback.__qualname__ = name
    fallback.__doc__ = f"numpy.{name}, run as a logged NumPy fallback."
    return fallback
