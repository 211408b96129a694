"""NumPy's ufunc calling conventions for lazy.numpy's elementwise functions.

`lazy.numpy.add(x, y)` is a plain lazy op. NumPy code also writes
`np.add(x, y, out=z)`, `np.multiply(x, 2, where=m, out=z)`,
`np.sqrt(x, dtype=np.float32)` and `np.maximum.reduce(x)`; under
`python -m lazy` those reach lazy.numpy. So each function whose NumPy
namesake is a ufunc is wrapped in a `ufunc` that calls the lazy function
directly when given its operands and its own keywords (`vecdot`'s `axis`),
and otherwise calls NumPy's ufunc
itself, which hands a call on tensors to `Tensor.__array_ufunc__`
(interop.py): `out=` and `where=` become lazy writes, reductions and
`outer` are lowered, and the rest (`dtype=`, `accumulate`, ...) runs as a
logged NumPy fallback. Attributes (`nin`, `identity`, ...) are NumPy's.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..tensor import Tensor
from ._helpers import tensor


class ufunc:
    """A lazy.numpy function with NumPy's ufunc keywords and methods."""

    def __init__(self, fn: Callable[..., Any], np_ufunc: np.ufunc):
        self._fn, self._np = fn, np_ufunc
        self.__name__ = self.__qualname__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__signature__ = inspect.signature(fn)  # what interop's dispatch binds against
        self._keywords = {n for n, p in self.__signature__.parameters.items()
                          if p.kind is not p.POSITIONAL_ONLY}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) <= self._np.nin and self._keywords.issuperset(kwargs):
            return self._fn(*args, **kwargs)
        ins, out = args[:self._np.nin], args[self._np.nin:] or kwargs.get("out")
        given = out if isinstance(out, tuple) else (out,)
        if not any(isinstance(x, Tensor) for x in (*ins, *given)) and ins:
            args = (tensor(ins[0]),) + args[1:]  # lazy.numpy's results are tensors
        return self._np(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        """NumPy's: `reduce`, `outer`, `accumulate`, `at`, `nin`, `identity`, ..."""
        return getattr(self._np, name)

    def __repr__(self) -> str:
        return f"<lazy.numpy ufunc {self.__name__!r}>"


def wrap_ufuncs(namespace: dict[str, Any]) -> None:
    """Wrap each function in `namespace` whose NumPy namesake is a ufunc;
    aliases (`arctan2 = atan2`) stay one object."""
    wrapped: dict[int, ufunc] = {}
    for name, fn in list(namespace.items()):
        np_ufunc = getattr(np, name, None)
        if isinstance(np_ufunc, np.ufunc) and inspect.isfunction(fn):
            if id(fn) not in wrapped:
                wrapped[id(fn)] = ufunc(fn, np_ufunc)
            namespace[name] = wrapped[id(fn)]
