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
logged NumPy fallback. Attributes (`nin`, `identity`, `__name__`, ...)
are NumPy's; a ufunc pickles and copies by name, as NumPy's do. NumPy's
ufuncs that lazy.numpy only has as fallbacks (`fmax`, `divmod`, ...) are
wrapped too (lazy.numpy's `__getattr__`), over the fallback function.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..interop import first_array
from ..tensor import Tensor
from ._helpers import tensor


class ufunc:
    """A lazy.numpy function with NumPy's ufunc keywords and methods."""

    def __init__(self, fn: Callable[..., Any], np_ufunc: np.ufunc):
        self._fn, self._np = fn, np_ufunc
        self.__name__ = self.__qualname__ = np_ufunc.__name__  # `power`, not `pow`
        self.__module__ = "lazy.numpy"  # where pickle finds it by that name
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
            i = first_array(ins)  # lazy.numpy's results are tensors; numbers stay weak
            args = args[:i] + (tensor(ins[i]),) + args[i + 1:]
        return self._np(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        """NumPy's: `reduce`, `outer`, `accumulate`, `at`, `nin`, `identity`, ..."""
        if name.startswith("_"):  # copy and pickle probe these before __init__ ran
            raise AttributeError(name)
        return getattr(self._np, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(dir(self._np)))

    def __reduce__(self) -> str:
        return self.__name__  # lazy.numpy.<name>: the same object after a round trip

    def __repr__(self) -> str:
        return f"<lazy.numpy ufunc {self.__name__!r}>"


_fallbacks: dict[str, ufunc] = {}


def fallback_ufunc(name: str, np_ufunc: np.ufunc, fallback: Callable[..., Any]) -> ufunc:
    """NumPy's ufunc `name` over its logged fallback, one object per name."""
    if name not in _fallbacks:
        _fallbacks[name] = ufunc(fallback, np_ufunc)
    return _fallbacks[name]


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
