"""The five dtypes lazyrt supports and NumPy's promotion rules for them.

They live in the scheduler (not in `lazy`) because the kernel IR and the
backends need them too, and dependencies flow lazy -> scheduler -> backends.
`lazy` re-exports them as `lazy.float32` and so on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np


@dataclass(frozen=True, eq=False, slots=True)
class DType:
    """One of the five dtypes below, which are singletons: hashed by identity,
    which is cheap (dtypes are in the key of every op's caches).

    NumPy code uses a dtype as NumPy's: it reads `.dtype` (so
    `np.dtype(lazy.float32)` and `np.zeros(3, dtype=lazy.float32)` work),
    compares it with names and NumPy types (`t.dtype == "float32"`), prints
    it as its name and calls it as a scalar type (`np.float32(1.5)` under
    `python -m lazy`)."""
    name: str
    kind: str  # 'b' bool, 'i' signed integer, 'f' floating
    itemsize: int
    np: np.dtype = field(init=False, repr=False)  # the NumPy dtype, made once

    def __post_init__(self) -> None:
        object.__setattr__(self, "np", np.dtype(self.name))

    def __reduce__(self) -> tuple:
        """Copies and pickles stay the singleton, so identity keeps meaning equality."""
        return as_dtype, (self.name,)

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind == "i"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def dtype(self) -> np.dtype:
        return self.np

    def __eq__(self, other: object) -> bool:
        """Identity between DTypes; anything else as NumPy's dtype compares."""
        if other is self:
            return True
        if isinstance(other, DType) or other is None:
            return False
        try:
            return self.np == np.dtype(other)
        except (TypeError, ValueError):
            return NotImplemented

    # By identity, for the op caches' speed; so a dict keyed by NumPy dtypes
    # does not find a lazyrt dtype (docs/numpy.md: use `x.dtype.np`).
    __hash__ = object.__hash__

    def __call__(self, value: object = 0) -> object:
        """As NumPy's scalar type: a NumPy scalar, or an array or tensor converted."""
        if hasattr(value, "astype") and not isinstance(value, np.generic):
            return value.astype(self.np)
        return self.np.type(value)

    def __getattr__(self, name: str) -> object:
        """NumPy's dtype attributes this one lacks (`type`, `char`, `str`, ...)."""
        if name.startswith("_") or name == "np":
            raise AttributeError(name)
        return getattr(self.np, name)

    def __repr__(self) -> str:
        return f"lazy.{self.name}"

    def __str__(self) -> str:
        return self.name


bool_ = DType("bool", "b", 1)
int32 = DType("int32", "i", 4)
int64 = DType("int64", "i", 8)
float32 = DType("float32", "f", 4)
float64 = DType("float64", "f", 8)

ALL = (bool_, int32, int64, float32, float64)
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {np.dtype(d.name): d for d in ALL}
DEFAULT_FLOAT = float32  # PyTorch's default for lazy creation functions
DEFAULT_INT = int64


def as_dtype(x: object) -> DType:
    """Accept a DType, a NumPy dtype or type, a name, the Python types, or
    PyTorch's dtypes (by name: torch is never imported for this)."""
    if isinstance(x, DType):
        return x
    if isinstance(x, np.dtype) and x in _BY_NP:
        return _BY_NP[x]
    if x is bool:
        return bool_
    if x is int:
        return int64
    if x is float:
        return float64
    try:
        name = np.dtype(x).name
    except TypeError:
        name = None
    if type(x).__name__ == "dtype" and str(x).startswith("torch."):  # torch.float32
        name = str(x)[len("torch."):]
    if name in _BY_NAME:
        return _BY_NAME[name]
    raise TypeError(
        f"unsupported dtype {x!r}: lazyrt supports {', '.join(d.name for d in ALL)}")


def result_type(*items: object) -> DType:
    """NumPy 2 (NEP 50) promotion over DTypes and Python scalars.

    Python scalars are "weak": `float32 + 1.0` stays float32, `int32 + 1.0`
    becomes float64, exactly as `np.result_type` says.
    """
    # Weak scalars promote by kind, never by value, so the answer depends on
    # types alone and is cached (np.result_type costs microseconds per op).
    return promote(tuple(d if isinstance(d, DType) else type(d) for d in items))


_SAMPLE = {bool: True, int: 0, float: 0.0, complex: 0j}


@lru_cache(maxsize=1024)
def promote(kinds: tuple) -> DType:
    """`result_type` over DTypes and the types of Python scalars (weak)."""
    args = [k.np if isinstance(k, DType) else _SAMPLE.get(k, k) for k in kinds]
    return as_dtype(np.result_type(*args))


def float_result(d: DType) -> DType:
    """Dtype of a floating function (exp, sqrt, /, mean) applied to `d`.

    NumPy gives float64 for integers; for bool NumPy picks float16, which
    lazyrt lacks, so bool maps to the default float32 (documented).
    """
    if d.is_float:
        return d
    return float32 if d.is_bool else float64


def sum_result(d: DType) -> DType:
    """NumPy's sum/prod dtype: bool and smaller ints accumulate in int64."""
    return int64 if not d.is_float else d
