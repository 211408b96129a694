"""Helpers shared by the write tests (test_writes, test_inplace_ops, test_write_ordering)."""
from __future__ import annotations

import numpy as np

import lazy
from conftest import np_offset, sample

E = Ellipsis
_ast = np.lib.stride_tricks.as_strided


def np_as_strided(base: np.ndarray, size, stride, offset):
    flat = base.reshape(-1)
    return _ast(flat[offset:], shape=size, strides=tuple(s * flat.itemsize for s in stride))


def writable(view: np.ndarray, base: np.ndarray) -> np.ndarray:
    """A writeable ndarray over the same memory as `view` (NumPy's diagonal is read-only)."""
    if view.flags.writeable:
        return view
    return np.ndarray(view.shape, view.dtype, buffer=base, offset=np_offset(view, base) *
                      view.itemsize, strides=view.strides)


def pair(shape, dtype="float64", seed=0, pending=False):
    """(lazy tensor, NumPy reference) holding the same data; the tensor owns a copy."""
    a = sample(shape, dtype, np.random.default_rng(seed))
    t = lazy.tensor(a)
    if pending:
        t = t + (False if dtype == "bool" else 0)
        assert t._buf.pending
    return t, a.copy()


def scalar_for(dtype: str, k: int = 7):
    return {"bool": True, "int32": k, "int64": -k, "float32": k + 0.25,
            "float64": -k - 0.5}[dtype]


def write_reasons() -> list[str]:
    return [r.reason for r in lazy.log if r.kernel.startswith("s")]
