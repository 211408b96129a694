"""Shared helpers for the differential tests of the user-facing API.

Imported by the test modules as `from conftest import ...` (pytest puts
tests/ on sys.path). The `strict_fallback` fixture is opt-in per module
(`pytestmark = pytest.mark.usefixtures("strict_fallback")`) so it never
changes other modules' tests.
"""
from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest

# Each test session compiles into its own disk cache, so "miss"/"hit" in the
# log never depends on what earlier runs left behind (set before lazy loads a backend).
os.environ["LAZY_CACHE_DIR"] = tempfile.mkdtemp(prefix="lazyrt-test-cache-")
# The suite is written for the CPU backend; where a GPU is usable the default device
# would be cuda (docs/cuda.md). Tests of the default device unset this, the device
# tests name device="cuda", and LAZY_DEVICE=cuda in the environment still wins.
os.environ.setdefault("LAZY_DEVICE", "cpu")

import lazy  # noqa: E402

FLOAT_TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}
DTYPE_NAMES = ["bool", "int32", "int64", "float32", "float64"]


@pytest.fixture
def strict_fallback(monkeypatch):
    """A silent NumPy fallback is an error (LAZY_FALLBACK=error)."""
    monkeypatch.setenv("LAZY_FALLBACK", "error")


@pytest.fixture
def fresh_log(strict_fallback):
    """Nothing pending from earlier tests, and an empty log to read."""
    lazy.sync()
    lazy.log.clear()


@pytest.fixture
def allow_fallback(monkeypatch):
    """NumPy fallbacks allowed (LAZY_FALLBACK=allow): for the functions that are
    fallbacks by design (ptp, trapezoid, ..., docs/numpy.md)."""
    monkeypatch.setenv("LAZY_FALLBACK", "allow")


@pytest.fixture
def fallback_log(allow_fallback):
    """Fallbacks allowed, nothing pending from earlier tests, and an empty log."""
    lazy.sync()
    lazy.log.clear()


@pytest.fixture
def cuda(monkeypatch):
    """Device "cuda" on the emulated GPU (cuda_lazy_helpers.py) for one test;
    yields the fake CuPy module. Imported here, not at the top, so that the
    modules that never use it do not load the CUDA backend."""
    from cuda_lazy_helpers import emulated_cuda
    yield from emulated_cuda(monkeypatch)


def np_strides(a: np.ndarray) -> tuple[int, ...]:
    """NumPy's byte strides in elements."""
    return tuple(s // a.itemsize for s in a.strides)


def np_offset(view: np.ndarray, base: np.ndarray) -> int:
    """Element offset of `view`'s first element from `base`'s first element."""
    return (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) \
        // view.itemsize


def assert_strides(t: lazy.Tensor, expected: tuple[int, ...], shape: tuple[int, ...]) -> None:
    """Compare strides in elements on axes of size > 1 (others are arbitrary)."""
    got = t.stride()
    assert len(got) == len(expected) == len(shape), (got, expected, shape)
    for d, n in enumerate(shape):
        if n > 1:
            assert got[d] == expected[d], f"stride of axis {d}: got {got}, expected {expected} " \
                                          f"(shape {shape})"


def assert_layout_like(t: lazy.Tensor, a: np.ndarray, base: np.ndarray | None = None) -> None:
    """Shape, strides (size>1 axes) and, given the base array, storage offset match NumPy."""
    assert t.shape == a.shape, (t.shape, a.shape)
    assert isinstance(t.shape, tuple)
    if a.size > 0:
        assert_strides(t, np_strides(a), a.shape)
        if base is not None:
            assert t.storage_offset() == np_offset(a, base), (t.storage_offset(),
                                                              np_offset(a, base))


def same(got, expected) -> None:
    """Exact values, dtype and shape (a tensor, or lists/tuples of them)."""
    if isinstance(expected, (list, tuple)):
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            same(g, e)
        return
    expected = np.asarray(expected)
    assert got.dtype.name == expected.dtype.name, (got.dtype.name, expected.dtype.name)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(got.numpy(), expected)


def assert_close(t: lazy.Tensor, expected, dtype: str | None = None, rtol: float | None = None,
                 atol: float | None = None) -> np.ndarray:
    """Values, shape and dtype of `t` against a NumPy result (exact for bool/int)."""
    expected = np.asarray(expected)
    want = dtype or expected.dtype.name
    assert t.dtype.name == want, f"dtype: got {t.dtype.name}, expected {want}"
    got = t.numpy()
    assert got.dtype.name == t.dtype.name
    assert t.shape == expected.shape, f"shape: got {t.shape}, expected {expected.shape}"
    assert got.shape == expected.shape
    if t.dtype.is_float:
        tol = dict(FLOAT_TOL[t.dtype.name])
        if rtol is not None:
            tol["rtol"] = rtol
        if atol is not None:
            tol["atol"] = atol
        np.testing.assert_allclose(got, expected.astype(got.dtype), equal_nan=True, **tol)
    else:
        np.testing.assert_array_equal(got, expected.astype(got.dtype))
    return got


def sample(shape, dtype: str, rng: np.random.Generator, low: int = -5, high: int = 6,
           positive: bool = False) -> np.ndarray:
    """Deterministic test data of `dtype`; quarter-integers for floats."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int"):
        lo = 1 if positive else low
        return rng.integers(lo, high, shape).astype(dtype)
    x = rng.integers(4 * (1 if positive else low), 4 * high, shape) / 4.0
    if positive:
        x = np.where(x == 0, 0.25, x)
    return x.astype(dtype)


def lazy_dtype_name(op: str, *operands) -> str:
    """The dtype lazyrt documents for `op` on these operands (scheduler/ops.py, dtypes.py).

    NumPy 2 promotion (Python scalars weak), except: floating functions of
    bool give float32 (NumPy: float16, which lazyrt lacks) and bool // % **
    give int64 (NumPy: int8). bool / bool is float64, as in NumPy.
    """
    args = [o.dtype if isinstance(o, np.ndarray) else o for o in operands]
    promoted = np.result_type(*args)
    if op in ("truediv", "exp", "expm1", "log", "sqrt", "sin", "cos", "tan", "tanh", "sigmoid"):
        if promoted == np.bool_:
            return "float64" if op == "truediv" else "float32"
        if promoted.kind in "iu":
            return "float64"
        return promoted.name
    if op in ("floordiv", "mod", "pow") and promoted == np.bool_:
        return "int64"
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        return "bool"
    return promoted.name


def backends_used() -> list[str]:
    return [r.backend for r in lazy.log]
