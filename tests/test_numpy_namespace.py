"""lazy.numpy's elementwise functions against real NumPy: values, dtypes, shapes.

Every elementwise function is native: each runs under LAZY_FALLBACK=error
(the `fresh_log` fixture), so a hidden NumPy fallback fails the test.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import lazy
import lazy.numpy as lnp
from conftest import assert_close, sample

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SPECIAL = np.array([0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.5, 1e-9, -1e-9, 3e-5, 0.75, 1.0, -1.0,
                    7.25, -7.5, 31.5, 1e6, -2e9, 1e15 + 0.5, 1e300, np.inf, -np.inf, np.nan, -np.nan])
FLOATS = ["float32", "float64"]
ALL_DTYPES = ["bool", "int32", "int64", "float32", "float64"]
FLOATING = ["bool", "int64", "float32", "float64"]  # int32 -> float64 is int64's kernel


def data(dtype: str, rng: np.random.Generator, n: int = 40) -> np.ndarray:
    """Random values plus the special ones (floats), or sample() for bool/int."""
    if dtype in FLOATS:
        x = np.concatenate([SPECIAL, rng.normal(0, 3, n), rng.uniform(-1, 1, n)])
        return x.astype(dtype)
    return sample((n,), dtype, rng)


def want_dtype(expected: np.ndarray, src: str) -> str:
    """NumPy's dtype, but lazyrt has no float16 or int8: floating results of bool input
    are float32, int8 results of bool input int64 (square, as `**`)."""
    if expected.dtype == np.int8:
        return "int64"
    return "float32" if expected.dtype == np.float16 else expected.dtype.name


TOL = {"float32": 2e-6, "float64": 1e-13}
LOOSE = {"float32": 1e-5, "float64": 1e-12}  # compositions: a few ulp

# name -> (NumPy function, dtypes, relative tolerance table or None for exact)
UNARY = {
    "abs": (np.abs, ALL_DTYPES, None),
    "negative": (np.negative, ["int32", "int64", "float32", "float64"], None),
    "positive": (np.positive, ["int32", "int64", "float32", "float64"], None),
    "square": (np.square, ALL_DTYPES, None),
    "sqrt": (np.sqrt, FLOATING, TOL),
    "exp": (np.exp, FLOATING, TOL),
    "log": (np.log, FLOATING, TOL),
    "sin": (np.sin, FLOATING, TOL),
    "cos": (np.cos, FLOATING, TOL),
    "tanh": (np.tanh, FLOATING, TOL),
    "tan": (np.tan, FLOATING, LOOSE),
    "expm1": (np.expm1, FLOATING, LOOSE),
    "log1p": (np.log1p, FLOATING, LOOSE),
    "log2": (np.log2, FLOATING, TOL),
    "log10": (np.log10, FLOATING, TOL),
    "sinh": (np.sinh, FLOATING, LOOSE),
    "cosh": (np.cosh, FLOATING, LOOSE),
    "asinh": (np.arcsinh, FLOATING, LOOSE),
    "acosh": (np.arccosh, FLOATING, LOOSE),
    "atanh": (np.arctanh, FLOATING, LOOSE),
    "asin": (np.arcsin, FLOATING, TOL),
    "acos": (np.arccos, FLOATING, TOL),
    "atan": (np.arctan, FLOATING, TOL),
    "floor": (np.floor, ALL_DTYPES, None),
    "ceil": (np.ceil, ALL_DTYPES, None),
    "trunc": (np.trunc, ALL_DTYPES, None),
    "round": (np.round, ALL_DTYPES, None),
    "rint": (np.rint, ALL_DTYPES, None),
    "sign": (np.sign, ["int32", "int64", "float32", "float64"], None),
    "signbit": (np.signbit, ALL_DTYPES, None),
    "isnan": (np.isnan, ALL_DTYPES, None),
    "isinf": (np.isinf, ALL_DTYPES, None),
    "isfinite": (np.isfinite, ALL_DTYPES, None),
    "logical_not": (np.logical_not, ALL_DTYPES, None),
    "bitwise_invert": (np.invert, ["bool", "int32", "int64"], None),
    "reciprocal": (np.reciprocal, FLOATS, None),
    "conj": (np.conj, ALL_DTYPES, None),
    "real": (np.real, ALL_DTYPES, None),
    "imag": (np.imag, ALL_DTYPES, None),
}


def check(got: lazy.Tensor, expected: np.ndarray, src: str, tol: dict | None) -> None:
    dt = want_dtype(np.asarray(expected), src)
    if tol is None:
        got_np = got.numpy()
        assert got.dtype.name == dt, (got.dtype.name, dt)
        assert got.shape == np.shape(expected)
        np.testing.assert_array_equal(got_np, np.asarray(expected).astype(dt))
        if got_np.dtype.kind == "f":  # signed zeros too
            np.testing.assert_array_equal(np.signbit(got_np), np.signbit(expected))
    else:
        r = tol[dt]
        assert_close(got, np.asarray(expected).astype(dt), dtype=dt, rtol=r, atol=r)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["sinh", "cosh"])
def test_sinh_cosh_stay_finite_where_only_exp_overflows(name, dtype):
    """sinh(710.0) is 1.1e308 while e**710 overflows: it used to give inf
    (found by the hypothesis property test in a CI run)."""
    top = 710.47 if dtype == "float64" else 89.4
    x = np.array([0.0, 0.5, 20.0, top - 1, top - 0.4, top, top + 0.02, 1e5, np.inf, np.nan],
                 dtype)
    x = np.concatenate([x, -x])
    got = getattr(lnp, name)(lnp.asarray(x)).numpy()
    want = getattr(np, name)(x)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log2_and_log10_are_exact_at_exact_powers(dtype):
    """Digit and bit counts (`floor(log10(x))`, `log2(n).astype(int)`) need the exact
    integer at exact powers: 1e-22 .. 1e22 in float64 (NumPy's C library gives them),
    1 .. 1e10 in float32, and every power of two."""
    big = 22 if dtype == "float64" else 10
    p10 = np.array([10.0 ** k for k in range(-big if dtype == "float64" else 0, big + 1)], dtype)
    k10 = np.arange(-big if dtype == "float64" else 0, big + 1)
    np.testing.assert_array_equal(lnp.log10(lnp.asarray(p10)).numpy(), k10)
    np.testing.assert_array_equal(lnp.floor(lnp.log10(lnp.asarray(p10 * 3))).numpy(), k10)
    info = np.finfo(dtype)
    k2 = np.arange(info.minexp - info.nmant, info.maxexp)
    p2 = np.ldexp(np.ones(k2.size, dtype), k2)
    np.testing.assert_array_equal(lnp.log2(lnp.asarray(p2)).numpy(), k2)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_numpy(name, fresh_log):
    fn, dtypes, tol = UNARY[name]
    rng = np.random.default_rng(len(name))
    for dt in dtypes:
        a = data(dt, rng)
        if name in ("round", "rint") and dt in FLOATS:
            a = a[np.abs(a) < 1e300]  # NumPy's rint(1e300 * 1) is the same; keep it simple
        bool_as_float = dt == "bool" and (tol or name in ("round", "rint"))
        with np.errstate(all="ignore"):  # bool: NumPy computes in float16, lazyrt float32
            expected = fn(a.astype(np.float32) if bool_as_float else a)
        if name == "conj" and dt == "bool":
            expected = a  # NumPy: int8; lazyrt's conj is a copy, so it stays bool
        check(getattr(lnp, name)(lnp.asarray(a)), expected, dt, tol)
    assert lazy.log.counters.fallbacks == 0


BINARY = {
    "add": (np.add, ALL_DTYPES, None),
    "subtract": (np.subtract, ["int32", "int64", "float32", "float64"], None),
    "multiply": (np.multiply, ALL_DTYPES, None),
    "divide": (np.divide, ["int32", "int64", "float32", "float64"], None),
    "floor_divide": (np.floor_divide, ["int32", "int64", "float32", "float64"], None),
    "remainder": (np.remainder, ["int32", "int64", "float32", "float64"], None),
    "pow": (np.power, ["float32", "float64"], TOL),
    "maximum": (np.maximum, ALL_DTYPES, None),
    "minimum": (np.minimum, ALL_DTYPES, None),
    "equal": (np.equal, ALL_DTYPES, None),
    "not_equal": (np.not_equal, ALL_DTYPES, None),
    "less": (np.less, ALL_DTYPES, None),
    "less_equal": (np.less_equal, ALL_DTYPES, None),
    "greater": (np.greater, ALL_DTYPES, None),
    "greater_equal": (np.greater_equal, ALL_DTYPES, None),
    "logical_and": (np.logical_and, ALL_DTYPES, None),
    "logical_or": (np.logical_or, ALL_DTYPES, None),
    "logical_xor": (np.logical_xor, ALL_DTYPES, None),
    "bitwise_and": (np.bitwise_and, ["bool", "int32", "int64"], None),
    "bitwise_or": (np.bitwise_or, ["bool", "int32", "int64"], None),
    "bitwise_xor": (np.bitwise_xor, ["bool", "int32", "int64"], None),
    "copysign": (np.copysign, ["int32", "float32", "float64"], None),
    "nextafter": (np.nextafter, ["int64", "float32", "float64"], None),
    "atan2": (np.arctan2, ["int32", "float32", "float64"], TOL),
    "hypot": (np.hypot, ["int32", "float32", "float64"], LOOSE),
    "logaddexp": (np.logaddexp, ["int64", "float32", "float64"], LOOSE),
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_numpy_with_broadcasting(name, fresh_log):
    fn, dtypes, tol = BINARY[name]
    rng = np.random.default_rng(len(name) + 100)
    for dt in dtypes:
        a = data(dt, rng)[:30].reshape(5, 6)
        b = data(dt, rng)[-6:].reshape(1, 6)
        with np.errstate(all="ignore"):
            expected = fn(a, b)
        check(getattr(lnp, name)(lnp.asarray(a), lnp.asarray(b)), expected, dt, tol)
    assert lazy.log.counters.fallbacks == 0


@pytest.mark.parametrize("name,fn", [("bitwise_left_shift", np.left_shift),
                                     ("bitwise_right_shift", np.right_shift)])
def test_shifts_including_wide_shift_counts(name, fn, fresh_log):
    rng = np.random.default_rng(3)
    for dt, bits in (("int32", 32), ("int64", 64)):
        a = rng.integers(-1000, 1000, 70).astype(dt)
        a[:3] = [np.iinfo(dt).min, np.iinfo(dt).max, -1]
        s = (np.arange(70) % (bits + 8) - 3).astype(dt)  # negative counts too
        check(getattr(lnp, name)(lnp.asarray(a), lnp.asarray(s)), fn(a, s), dt, None)
        for count in (-1, -bits, 0, bits - 1, bits + 1):  # a Python int count
            check(getattr(lnp, name)(lnp.asarray(a), count), fn(a, np.array(count, dt)), dt, None)
    with pytest.raises(TypeError, match="integer"):
        getattr(lnp, name)(lnp.asarray([1.0]), 1)


def test_python_scalars_are_weak_and_lists_default_to_float64(fresh_log):
    x = lnp.asarray(np.array([1.0, 2.0], np.float32))
    assert lnp.add(x, 1.5).dtype == lnp.float32
    assert lnp.multiply(lnp.asarray(np.array([1, 2], np.int32)), 2).dtype == lnp.int32
    assert lnp.add([1.0, 2.0], 1).dtype == lnp.float64  # NumPy's default, not float32
    assert lnp.add(2, 3).dtype == lnp.int64 and lnp.add(2, 3).item() == 5
    assert lnp.add(x, np.float64(1)).dtype == lnp.float64  # NumPy scalars are strong
    with pytest.raises(OverflowError):
        lnp.add(lnp.asarray(np.array([1], np.int32)), 2 ** 40)


def test_clip_round_decimals_and_aliases(fresh_log):
    a = np.array([-2.345, 0.5, 1.555, 9.0, np.nan])
    x = lnp.asarray(a)
    check(lnp.clip(x, -1.0, 2.0), np.clip(a, -1.0, 2.0), "float64", None)
    check(lnp.clip(x, min=0.0), np.clip(a, 0.0, None), "float64", None)
    check(lnp.clip(x), a, "float64", None)
    out = lnp.zeros(5)
    assert lnp.clip(x, -1.0, 2.0, out=out) is out  # NumPy's out=: written, returned
    check(out, np.clip(a, -1.0, 2.0), "float64", None)
    host = np.zeros(5)
    assert lnp.clip(x, None, 0.0, host) is host
    np.testing.assert_array_equal(host, np.clip(a, None, 0.0))
    for out in (lnp.zeros(3, dtype=lnp.int64), np.zeros(3, dtype=np.int64)):
        with pytest.raises(TypeError, match="same_kind"):  # NumPy's rule for clip's out=
            lnp.clip(lnp.asarray(np.arange(3)), 0.5, 1.5, out=out)
    with pytest.raises(ValueError, match="shape"):
        lnp.clip(x, 0.0, 1.0, out=lnp.zeros(4))
    check(lnp.round(x, decimals=2), np.round(a, 2), "float64", LOOSE)
    check(lnp.round(x * 1000, decimals=-2), np.round(a * 1000, -2), "float64", LOOSE)
    assert lnp.arctan2 is lnp.atan2 and lnp.absolute is lnp.abs and lnp.power is lnp.pow


def test_native_composition_is_one_fused_kernel(fresh_log):
    x = lnp.asarray(np.linspace(-3, 3, 101))
    y = lnp.expm1(x) + lnp.floor(x) * lnp.sinh(x) - lnp.hypot(x, 2.0)
    y.sync()
    assert len(lazy.log) == 1 and lazy.log.counters.fallbacks == 0
    a = np.linspace(-3, 3, 101)
    np.testing.assert_allclose(y.numpy(), np.expm1(a) + np.floor(a) * np.sinh(a)
                               - np.hypot(a, 2.0), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, x", [
    ("expm1", [704.0, 709.7, -745.0, 1e-300]),   # (u - 1) * x overflowed before dividing
    ("sinh", [-709.0, 704.0, 1e-300]),
    ("log1p", [1e300, 1e307, 1.7e308, -1e-300]),  # log(u) * x overflowed likewise
])
def test_compositions_near_the_float_range_end(name, x):
    a = np.array(x)
    np.testing.assert_allclose(getattr(lnp, name)(lnp.asarray(a)).numpy(), getattr(np, name)(a),
                               rtol=1e-13)


finite = hnp.arrays(np.float64, hnp.array_shapes(max_dims=2, max_side=6),
                    elements=st.floats(-1e6, 1e6, allow_nan=False, width=64))


@settings(max_examples=25, deadline=None)
@given(a=finite, name=st.sampled_from(["floor", "ceil", "trunc", "round", "sign", "expm1",
                                       "log1p", "sinh", "cosh", "asinh", "tan", "square"]))
def test_unary_property(a, name):
    fn = {"round": np.round, "asinh": np.arcsinh}.get(name) or getattr(np, name)
    with np.errstate(all="ignore"):
        expected = fn(a)
    tol = None if name in ("floor", "ceil", "trunc", "round", "sign", "square") else LOOSE
    if name == "tan":  # near poles cos rounds differently; compare sin/cos's own error bound
        tol = {"float64": 1e-9}
    check(getattr(lnp, name)(lnp.asarray(a)), expected, "float64", tol)


VIEW_CASES = [
    ("asanyarray", lambda xp, a: xp.asanyarray(a)),
    ("asanyarray dtype", lambda xp, a: xp.asanyarray(a, dtype=xp.int64)),
    ("require", lambda xp, a: xp.require(a)),
    ("require C", lambda xp, a: xp.require(a, requirements="C")),
    ("require C of a transpose", lambda xp, a: xp.require(a.T, requirements=["C"])),
    ("require F", lambda xp, a: xp.require(a, requirements="F")),
    ("require F of a transpose", lambda xp, a: xp.require(a.T, requirements="F")),
    ("require O of a slice", lambda xp, a: xp.require(a[1:], requirements="O")),
    ("rollaxis", lambda xp, a: xp.rollaxis(a, 1)),
    ("rollaxis to itself", lambda xp, a: xp.rollaxis(a, 1, 2)),
    ("rollaxis start", lambda xp, a: xp.rollaxis(a.reshape(2, 3, 2), 2, 1)),
    ("dsplit", lambda xp, a: xp.dsplit(a.reshape(1, 3, 4), 2)[1]),
    ("dsplit at", lambda xp, a: xp.dsplit(a.reshape(1, 3, 4), [1])[1]),
    ("asfortranarray 1-d", lambda xp, a: xp.asfortranarray(a[1])),
    ("asfortranarray 0-d", lambda xp, a: xp.asfortranarray(a[1, 1, ...])),
    ("asfortranarray transposed", lambda xp, a: xp.asfortranarray(a.T)),
    ("asfortranarray 2-d", lambda xp, a: xp.asfortranarray(a)),
    ("asfortranarray strided", lambda xp, a: xp.asfortranarray(a[0, ::2])),
    ("real", lambda xp, a: xp.real(a)),
    ("trim_zeros", lambda xp, a: xp.trim_zeros(a[0])),
    ("trim_zeros f", lambda xp, a: xp.trim_zeros(a[0], "f")),
    ("trim_zeros b", lambda xp, a: xp.trim_zeros(a[0], trim="b")),
    ("trim_zeros 2-d", lambda xp, a: xp.trim_zeros(a)),
    ("trim_zeros axis", lambda xp, a: xp.trim_zeros(a, axis=1)),
    ("trim_zeros all zero", lambda xp, a: xp.trim_zeros(a[0, :1])),
]


@pytest.mark.parametrize("name, f", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_functions_return_views_exactly_when_numpy_does(name, f):
    """A write through the result changes the input exactly when NumPy's does."""
    a = np.array([[0, 1, 2, 0], [0, 3, 0, 0], [0, 0, 0, 0]], dtype=np.float64)
    t = lnp.asarray(a.copy())
    expected, got = f(np, a), f(lnp, t)
    assert isinstance(got, lazy.Tensor)
    assert got.dtype.np == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)
    expected[...] = -1
    got[...] = -1
    np.testing.assert_array_equal(t.numpy(), a)


def test_asanyarray_of_a_tensor_is_the_tensor():
    t = lnp.asarray([1.0, 2.0])
    assert lnp.asanyarray(t) is t and lnp.real(t) is t


@pytest.mark.parametrize("call, error, match", [
    (lambda xp: xp.dsplit(xp.zeros((2, 4)), 2), ValueError, "dsplit only works"),
    (lambda xp: xp.require(xp.zeros(3), requirements="CF"), ValueError, "both"),
    (lambda xp: xp.rollaxis(xp.zeros((2, 3)), 0, 4), np.exceptions.AxisError, "'start' arg"),
    (lambda xp: xp.trim_zeros(xp.zeros(3), "x"), ValueError, "unexpected character")])
def test_view_functions_raise_as_numpy(call, error, match):
    with pytest.raises(error, match=match):
        call(np)
    with pytest.raises(error, match=match):
        call(lnp)
