"""Tensor methods that take NumPy's and PyTorch's arguments at once.

Each factory makes one method of `Tensor` (tensor.py) for a family of
functions: reductions (`axis`/`keepdims` and `dim`/`keepdim`), sum and prod
(with NumPy's `dtype`, `out=`, `initial=`, `where=`), var and std, the scans,
and NumPy's ndarray methods that are lazy.numpy's functions with the tensor
first. The op logic stays in reductions.py, scan.py and lazy.numpy; those
import tensor.py, which imports this module, so a method finds them when it
runs: reductions as an attribute of the package (an import statement there
cost 0.9 us of a 5.5 us `x.sum()`), the others by importing them.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from .tensor import Tensor

_lazy = sys.modules[__package__]  # tensor.py imports lazy.reductions before any call


def reduction(op: str):
    """A reduction method with NumPy's and PyTorch's axis arguments and no
    `dtype` (reductions.reduce's own `dtype` is for internal reductions)."""
    def method(self, axis=None, keepdims=False, *, dim=None, keepdim=False):
        return _lazy.reductions.reduce(self, op, axis, keepdims, dim=dim, keepdim=keepdim)
    method.__name__ = method.__qualname__ = op
    return method


def with_options(op: str):
    """max/min/any/all: `reduction`'s, plus NumPy's out=, where= and initial=."""
    def method(self, axis=None, keepdims=False, *, dim=None, keepdim=False, out=None,
               initial=None, where=True):
        if out is None and initial is None and where is True:
            return _lazy.reductions.reduce(self, op, axis, keepdims, dim=dim, keepdim=keepdim)
        return numpy_reduction(op, self, axis, dim, keepdims or keepdim, out=out,
                               initial=initial, where=where)
    method.__name__ = method.__qualname__ = op
    return method


def total(op: str):
    """sum/prod with NumPy's and PyTorch's arguments (`second`: x.sum(0, True)
    as PyTorch, or x.sum(0, np.float64) as NumPy); a user's `dtype=` is
    NumPy's, what they accumulate in."""
    def method(self, axis=None, *second, keepdims=False, dim=None, keepdim=False, dtype=None,
               out=None, initial=None, where=True):
        keepdims, dtype = _lazy.reductions.keepdims_or_dtype(second, keepdims, dtype)
        if out is None and initial is None and where is True:
            return _lazy.reductions.total(self, op, axis, keepdims, dim=dim, keepdim=keepdim,
                                    dtype=dtype)
        return numpy_reduction(op, self, axis, dim, keepdims or keepdim, dtype=dtype,
                               out=out, initial=initial, where=where)
    method.__name__ = method.__qualname__ = op
    return method


def spread(name: str):
    """var/std: NumPy's and the array API's (correction 0 unless asked)."""
    def method(self, axis=None, *, ddof=None, keepdims=False, correction=None, dtype=None,
               out=None, where=True, mean=None):
        return numpy_reduction(name, self, axis, None, keepdims, ddof=ddof,
                               correction=correction, dtype=dtype, out=out, where=where,
                               mean=mean)
    method.__name__ = method.__qualname__ = name
    return method


def numpy_reduction(name: str, t: Tensor, axis, dim, keepdims: bool, **kwargs) -> Tensor:
    """A reduction method called with NumPy-only arguments (out=, initial=,
    where=, mean=): lazy.numpy's function of the same name, given those not None."""
    from . import numpy as lnp
    return getattr(lnp, name)(t, axis if dim is None else dim, keepdims=keepdims,
                              **{k: v for k, v in kwargs.items() if v is not None})


def scan(op: str):
    """NumPy's `a.cumsum(axis, dtype)`, and PyTorch's `x.cumsum(dim, dtype=)`."""
    def method(self, axis=None, dtype=None, *, dim=None):
        from .scan import scan as run_scan
        return run_scan(self, op, axis, dtype, dim=dim)
    method.__name__ = method.__qualname__ = op
    return method


def numpy_method(name: str):
    """NumPy's ndarray method `name`: lazy.numpy's function of the same name
    with the tensor first."""
    def method(self, *args, **kwargs):
        from . import numpy as lnp
        return getattr(lnp, name)(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"NumPy's ndarray.{name}: lazy.numpy.{name}(self, ...)."
    return method
