"""Elementwise ops (operators, methods, lazy.functions) against NumPy: values, dtypes, shapes."""
from __future__ import annotations

import operator

import numpy as np
import pytest

import lazy
from conftest import DTYPE_NAMES, assert_close, backends_used, lazy_dtype_name, sample

pytestmark = pytest.mark.usefixtures("strict_fallback")

RNG = np.random.default_rng(1234)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# op name -> (operator form, numpy function, operand kinds allowed)
BINARY = {
    "add": (operator.add, np.add, "bif"),
    "sub": (operator.sub, np.subtract, "if"),
    "mul": (operator.mul, np.multiply, "bif"),
    "truediv": (operator.truediv, np.true_divide, "bif"),
    "floordiv": (operator.floordiv, np.floor_divide, "bif"),
    "mod": (operator.mod, np.remainder, "bif"),
    "pow": (operator.pow, np.power, "bif"),
    "eq": (operator.eq, np.equal, "bif"),
    "ne": (operator.ne, np.not_equal, "bif"),
    "lt": (operator.lt, np.less, "bif"),
    "le": (operator.le, np.less_equal, "bif"),
    "gt": (operator.gt, np.greater, "bif"),
    "ge": (operator.ge, np.greater_equal, "bif"),
    "and": (operator.and_, np.bitwise_and, "bi"),
    "or": (operator.or_, np.bitwise_or, "bi"),
    "xor": (operator.xor, np.bitwise_xor, "bi"),
}
FUNCS = {"add": lazy.add, "sub": lazy.subtract, "mul": lazy.multiply, "truediv": lazy.divide,
         "floordiv": lazy.floor_divide, "mod": lazy.remainder, "pow": lazy.pow,
         "eq": lazy.equal, "ne": lazy.not_equal, "lt": lazy.less, "le": lazy.less_equal,
         "gt": lazy.greater, "ge": lazy.greater_equal, "and": lazy.bitwise_and,
         "or": lazy.bitwise_or, "xor": lazy.bitwise_xor}
UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
    "tanh": np.tanh, "sigmoid": _sigmoid, "abs": np.abs,
}
KIND = {"bool": "b", "int32": "i", "int64": "i", "float32": "f", "float64": "f"}
SHAPE_PAIRS = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (2, 3)),
               ((5,), ()), ((2, 1, 3), (4, 1)), ((0, 3), (1, 3)), ((1,), (0,))]


def _operands(op, da, db, sa, sb):
    a = sample(sa, da, RNG)
    positive = op in ("floordiv", "mod", "truediv")
    b = sample(sb, db, RNG, positive=positive)
    if op == "pow":
        # keep integer powers small and non-negative, floats positive-based
        a = sample(sa, da, RNG, low=-3, high=4)
        b = sample(sb, db, RNG, low=0, high=4)
        if np.result_type(a, b).kind == "f":
            a = np.abs(a) + (a.dtype.kind == "f") * 0.5 if a.dtype != np.bool_ else a
    return a, b


def _numpy_ref(op, a, b):
    want = lazy_dtype_name(op, a, b)
    fn = BINARY[op][1]
    if op in ("floordiv", "mod", "pow", "truediv") and np.result_type(a, b) == np.bool_:
        a, b = np.asarray(a).astype(want), np.asarray(b).astype(want)
    with np.errstate(all="ignore"):
        return np.asarray(fn(a, b)), want


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("da", DTYPE_NAMES)
@pytest.mark.parametrize("db", DTYPE_NAMES)
def test_binary_dtypes(op, da, db):
    pyop, npfn, kinds = BINARY[op]
    a, b = _operands(op, da, db, (3, 4), (4,))
    promoted = np.result_type(a, b)
    ok = KIND[promoted.name] in kinds  # NumPy: int32 - bool is fine, bool - bool is not
    A, B = lazy.asarray(a), lazy.asarray(b)
    if not ok:
        with pytest.raises(TypeError, match=op):
            pyop(A, B)
        return
    expected, want = _numpy_ref(op, a, b)
    tol = dict(rtol=2e-5) if op == "pow" else {}
    assert_close(pyop(A, B), expected, dtype=want, **tol)
    assert_close(FUNCS[op](A, B), expected, dtype=want, **tol)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                                "lt", "xor"])
@pytest.mark.parametrize("shapes", SHAPE_PAIRS)
def test_binary_broadcasting(op, shapes):
    sa, sb = shapes
    dt = "int64" if op in ("and", "xor") else "float32"
    a, b = _operands(op, dt, dt, sa, sb)
    pyop = BINARY[op][0]
    expected, want = _numpy_ref(op, a, b)
    assert_close(pyop(lazy.asarray(a), lazy.asarray(b)), expected, dtype=want)
    expected, want = _numpy_ref(op, b, a) if op != "pow" else _numpy_ref(op, np.abs(b), a)
    if op != "pow":
        assert_close(pyop(lazy.asarray(b), lazy.asarray(a)), expected, dtype=want)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow",
                                "lt"])
@pytest.mark.parametrize("dt", ["bool", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("scalar", [2, 3.5, True, -3])
def test_python_scalars_are_weak(op, dt, scalar):
    """NEP 50: tensor op Python scalar follows np.result_type(dtype, scalar)."""
    pyop, _, kinds = BINARY[op]
    a = sample((2, 5), dt, RNG, positive=op in ("truediv", "floordiv", "mod", "pow"))
    A = lazy.asarray(a)
    promoted = np.result_type(a.dtype, scalar)
    if KIND[promoted.name] not in kinds:
        with pytest.raises(TypeError):
            pyop(A, scalar)
        return
    if op == "pow" and promoted.kind in "iu" and scalar < 0:
        with pytest.raises(ValueError, match="negative"):
            pyop(A, scalar)
        return
    expected, want = _numpy_ref(op, a, scalar)
    assert_close(pyop(A, scalar), expected, dtype=want, rtol=2e-5)
    # reflected operand order
    if op == "pow" and np.result_type(scalar, a.dtype).kind in "iu" and a.dtype.kind != "b" \
            and (a < 0).any():
        return
    if op in ("truediv", "floordiv", "mod") and dt != "bool" and (a == 0).any():
        return
    expected, want = _numpy_ref(op, scalar, a)
    assert_close(pyop(scalar, A), expected, dtype=want, rtol=2e-5)


FUNCTIONS = {"add": np.add, "subtract": np.subtract, "maximum": np.maximum, "pow": np.power,
             "less": np.less}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("scalar", [0.1, 1e40, 2**31 - 1, True])
@pytest.mark.parametrize("dt", ["int32", "float64"])
@pytest.mark.parametrize("tensor", [True, False], ids=["tensor", "ndarray"])
def test_functions_keep_a_leading_python_scalar_weak(name, scalar, dt, tensor):
    """`lazy.pow(0.1, x)` as `0.1 ** x`: the number stays weak beside a tensor
    or a NumPy array. It became a float32 or int64 tensor: float64 results
    were rounded to float32, 1e40 became inf, int32 results widened."""
    a = np.array([1, 2, 3], dt)
    with np.errstate(all="ignore"):
        try:
            want = FUNCTIONS[name](scalar, a)
        except OverflowError:  # 1e40 is no int32 (NumPy refuses it too)
            with pytest.raises(OverflowError):
                getattr(lazy, name)(scalar, lazy.asarray(a) if tensor else a)
            return
    got = getattr(lazy, name)(scalar, lazy.asarray(a) if tensor else a)
    assert_close(got, want, dtype=want.dtype.name, rtol=1e-15)


@pytest.mark.parametrize("dt", ["int32", "float32"])
def test_numpy_operands_and_scalars_are_strong(dt):
    a = np.arange(1, 7, dtype=dt).reshape(2, 3)
    A = lazy.asarray(a)
    # NumPy scalars and arrays are not weak (NEP 50).
    assert_close(A + np.float64(1.5), a + np.float64(1.5))
    assert_close(A * np.int64(3), a * np.int64(3))
    arr = np.arange(3, dtype=np.float64)
    assert_close(A + arr, a + arr)
    out = arr + A  # ndarray on the left defers to the tensor
    assert isinstance(out, lazy.Tensor)
    assert_close(out, arr + a)
    assert_close(A + [1, 2, 3], a + np.array([1, 2, 3]))


def test_scalar_overflow_raises_like_numpy():
    A = lazy.asarray(np.arange(3, dtype=np.int32))
    with pytest.raises(OverflowError):
        np.arange(3, dtype=np.int32) + 2**40
    with pytest.raises(OverflowError):
        A + 2**40


def test_integer_wraparound():
    a = np.array([2**31 - 1, -2**31, 5], np.int32)
    A = lazy.asarray(a)
    assert_close(A + 1, a + np.int32(1))
    assert_close(A * A, a * a)
    assert_close(-A, -a)
    b = np.array([2**63 - 1, -2**63], np.int64)
    assert_close(lazy.asarray(b) + 1, b + 1)


def test_integer_division_edge_cases():
    a = np.array([-7, -1, 0, 1, 7, 5, 9, -9], dtype=np.int64)
    b = np.array([2, -3, 3, -3, -2, 5, 0, 0], dtype=np.int64)
    A, B = lazy.asarray(a), lazy.asarray(b)
    with np.errstate(all="ignore"):
        assert_close(A // B, a // b)
        assert_close(A % B, a % b)
    i32 = np.array([-2**31, 7], np.int32)
    with np.errstate(all="ignore"):
        assert_close(lazy.asarray(i32) // -1, i32 // np.int32(-1))
        assert_close(lazy.asarray(i32) % -1, i32 % np.int32(-1))


def test_float_division_edge_cases():
    a = np.array([-7.5, 7.5, -0.0, 3.0, 1.0, -1.0, 0.0, np.inf], np.float32)
    b = np.array([2, -2, 3, 0, np.inf, 0, 0, 2], np.float32)
    A, B = lazy.asarray(a), lazy.asarray(b)
    with np.errstate(all="ignore"):
        assert_close(A / B, a / b)
        assert_close(A // B, a // b)
        assert_close(A % B, a % b)
        got = (A % B).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(a % b))


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dt", DTYPE_NAMES)
def test_unary(name, dt):
    a = sample((3, 5), dt, RNG, positive=name in ("log", "sqrt"))
    want = "bool" if (name == "abs" and dt == "bool") else (
        dt if name == "abs" else lazy_dtype_name(name, a))
    src = a.astype(want) if want != dt and name != "abs" else a
    with np.errstate(divide="ignore"):
        expected = UNARY[name](src)
    A = lazy.asarray(a)
    assert_close(getattr(A, name)(), expected, dtype=want)
    fn = lazy.log if name == "log" else getattr(lazy, name)
    assert_close(fn(A), expected, dtype=want)
    if name == "abs":
        assert_close(abs(A), expected, dtype=want)


def test_lazy_log_is_both_log_and_ln():
    x = np.array([1.0, np.e, 10.0], np.float32)
    assert_close(lazy.log(lazy.asarray(x)), np.log(x))
    assert_close(lazy.log(x), np.log(x))  # NumPy input
    assert callable(lazy.log.table) and callable(lazy.log.clear)


def test_unary_special_values():
    x = np.array([-1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 100.0, -100.0], np.float32)
    X = lazy.asarray(x)
    with np.errstate(all="ignore"):
        assert_close(X.log(), np.log(x))
        assert_close(X.sqrt(), np.sqrt(x))
        assert_close(X.exp(), np.exp(x))
        assert_close(X.tanh(), np.tanh(x))
        assert_close(X.sigmoid(), _sigmoid(x))
        assert_close(abs(X), np.abs(x))
    np.testing.assert_array_equal(np.signbit(abs(X).numpy()), np.signbit(np.abs(x)))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(np.signbit(X.sqrt().numpy()[1:3]),
                                      np.signbit(np.sqrt(x[1:3])))


@pytest.mark.parametrize("dt", ["int32", "int64", "float32", "float64"])
def test_neg(dt):
    a = sample((4, 3), dt, RNG)
    assert_close(-lazy.asarray(a), -a)
    assert_close(lazy.negative(lazy.asarray(a)), -a)


def test_neg_and_sub_of_bool_raise():
    t = lazy.asarray(np.array([True, False]))
    with pytest.raises(TypeError):
        -t
    with pytest.raises(TypeError):
        t - t


@pytest.mark.parametrize("dt", ["bool", "int32", "int64"])
def test_invert(dt):
    a = sample((7,), dt, RNG)
    assert_close(~lazy.asarray(a), ~a)
    assert_close(lazy.invert(lazy.asarray(a)), ~a)


def test_invert_float_raises():
    with pytest.raises(TypeError):
        ~lazy.ones(3)


@pytest.mark.parametrize("da, db", [("float32", "float32"), ("int32", "int64"),
                                    ("float32", "int32"), ("bool", "bool"),
                                    ("bool", "int32"), ("float64", "float32")])
def test_maximum_minimum(da, db):
    a, b = sample((3, 4), da, RNG), sample((4,), db, RNG)
    A, B = lazy.asarray(a), lazy.asarray(b)
    assert_close(lazy.maximum(A, B), np.maximum(a, b))
    assert_close(lazy.minimum(A, B), np.minimum(a, b))
    assert_close(A.maximum(B), np.maximum(a, b))
    assert_close(A.minimum(b), np.minimum(a, b))


def test_maximum_minimum_nan_propagates():
    a = np.array([np.nan, 1.0, 2.0, -0.0], np.float32)
    b = np.array([1.0, np.nan, 3.0, 0.0], np.float32)
    A, B = lazy.asarray(a), lazy.asarray(b)
    assert_close(lazy.maximum(A, B), np.maximum(a, b))
    assert_close(lazy.minimum(A, B), np.minimum(a, b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_maximum_minimum_signed_zeros_and_nans_bit_for_bit(dtype):
    """Every pair of 0.0, -0.0, NaNs of both signs, +-1, +-inf, in both
    orders: NumPy gives the second of two equal values (maximum(0.0, -0.0)
    is -0.0) and the first NaN; llvm.maximum gave 0.0 for both orders."""
    vals = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf, -np.inf], dtype)
    a, b = np.repeat(vals, len(vals)), np.tile(vals, len(vals))
    for name in ("maximum", "minimum"):
        want = getattr(np, name)(a, b)
        got = getattr(lazy, name)(lazy.asarray(a), lazy.asarray(b)).numpy()
        np.testing.assert_array_equal(got.view(f"u{a.itemsize}"), want.view(f"u{a.itemsize}"))


@pytest.mark.parametrize("dx, dy", [("float32", "float32"), ("int32", "float64"),
                                    ("int64", "int32"), ("bool", "int32"), ("bool", "bool")])
def test_where(dx, dy):
    c = RNG.random((3, 1)) < 0.5
    x, y = sample((3, 4), dx, RNG), sample((4,), dy, RNG)
    expected = np.where(c, x, y)
    assert_close(lazy.where(lazy.asarray(c), lazy.asarray(x), lazy.asarray(y)), expected)
    assert_close(lazy.where(lazy.asarray(c), lazy.asarray(x), y), expected)


def test_where_scalars_and_nonbool_condition():
    c = np.array([0, 2, -1, 0], np.int32)
    x = np.arange(4, dtype=np.float32)
    C, X = lazy.asarray(c), lazy.asarray(x)
    assert_close(lazy.where(C, X, 0.5), np.where(c, x, 0.5).astype(np.float32))
    assert_close(lazy.where(C > 0, 1, X), np.where(c > 0, 1, x))
    assert_close(lazy.where(C > 0, 1, 2), np.where(c > 0, 1, 2))
    assert_close(lazy.where(c > 0, x, 7.0), np.where(c > 0, x, np.float32(7.0)))


@pytest.mark.parametrize("dt", ["int32", "int64", "float32", "float64"])
def test_clip(dt):
    a = sample((4, 5), dt, RNG)
    A = lazy.asarray(a)
    assert_close(A.clip(-2, 3), np.clip(a, -2, 3))
    assert_close(lazy.clip(A, min=0), np.clip(a, 0, None))
    assert_close(A.clamp(max=1), np.clip(a, None, 1))
    lo, hi = sample((5,), dt, RNG, low=-5, high=0), sample((5,), dt, RNG, low=0, high=5)
    assert_close(lazy.clip(A, lazy.asarray(lo), lazy.asarray(hi)), np.clip(a, lo, hi))
    with pytest.raises(ValueError):
        A.clip()


BOUNDS = [None, 0.0, -0.0, -3.0, 2.0, float("nan")]


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("lo", BOUNDS, ids=repr)
@pytest.mark.parametrize("hi", BOUNDS[:4] + [3.0], ids=repr)
def test_clip_signed_zeros_and_nans_bit_for_bit(dt, lo, hi):
    """With both bounds NumPy keeps an element equal to one (clip(-0.0, 0, 3)
    is -0.0), with one it returns the bound; lazyrt's clip returned the
    bound in both cases, so 1 / clip(...) flipped from -inf to inf."""
    if lo is None and hi is None:
        return
    a = np.array([-0.0, 0.0, 3.0, -3.0, np.nan, 2.0], dt)
    want = np.clip(a, lo, hi)
    got = lazy.clip(lazy.asarray(a), lo, hi).numpy()
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (got, want)


@pytest.mark.parametrize("lo, hi", [(0, 2**31), (-2**31 - 1, 5), (-2**40, 2**40), (2**31, None),
                                    (None, -2**40)])
def test_clip_int_bounds_beyond_the_dtype(lo, hi):
    """NumPy 2 drops a Python int bound past the dtype's end that cannot
    bind and raises for one that would; lazyrt raised for both."""
    a = np.array([1, 2, -5], np.int32)
    try:
        want = np.clip(a, lo, hi)
    except OverflowError:
        with pytest.raises(OverflowError):
            lazy.clip(lazy.asarray(a), lo, hi)
        return
    got = lazy.clip(lazy.asarray(a), lo, hi)
    assert_close(got, want)
    assert got._storage is not lazy.asarray(a)._storage


@pytest.mark.parametrize("src", DTYPE_NAMES)
@pytest.mark.parametrize("dst", DTYPE_NAMES)
def test_astype(src, dst):
    a = sample((3, 4), src, RNG)
    if src.startswith("float"):
        a = (a * 3.3).astype(src)  # fractions truncate toward zero when cast to int
    A = lazy.asarray(a)
    for d in (dst, getattr(lazy, dst if dst != "bool" else "bool_"), np.dtype(dst)):
        out = A.astype(d)
        assert_close(out, a.astype(dst), rtol=0, atol=0)
        assert out._buf is not A._buf  # always a new buffer, as NumPy's astype
    assert_close(lazy.astype(A, dst), a.astype(dst), rtol=0, atol=0)
    assert_close(A.to(dst), a.astype(dst), rtol=0, atol=0)


def test_conversion_methods():
    a = np.array([-1.7, 0.0, 2.5], np.float64)
    A = lazy.asarray(a)
    assert_close(A.float(), a.astype(np.float32))
    assert_close(A.double(), a)
    assert_close(A.int(), a.astype(np.int32))
    assert_close(A.long(), a.astype(np.int64))
    assert_close(A.bool(), a.astype(bool))


def test_astype_invalid_dtype():
    with pytest.raises(TypeError, match="dtype"):
        lazy.ones(3).astype(np.float16)
    with pytest.raises(TypeError, match="dtype"):
        lazy.ones(3).astype("complex64")


def test_power_fast_paths_match_numpy():
    a = np.array([-2.5, -1.0, 0.0, 0.5, 3.0], np.float32)
    A = lazy.asarray(a)
    with np.errstate(all="ignore"):
        for e in (0, 1, 2, 3, 0.5, -1, 2.5, -2, 0.0, 1.0):
            assert_close(A ** e, np.power(a, e), rtol=2e-5)
            assert_close(lazy.pow(A, e), np.power(a, e), rtol=2e-5)
    i = np.array([-3, -1, 0, 2, 5], np.int32)
    I = lazy.asarray(i)
    for e in (0, 1, 2, 3, 4):
        assert_close(I ** e, i ** e)
    with np.errstate(invalid="ignore"):
        assert_close(I ** 0.5, np.power(i, 0.5))
    assert_close(2 ** lazy.asarray(np.array([0, 1, 10], np.int32)),
                 2 ** np.array([0, 1, 10], np.int32))
    with pytest.raises(ValueError):
        I ** -1
    # x ** 1 must be a new tensor with the same values
    assert (A ** 1) is not A
    assert_close(A ** 1, a)


def test_bool_ops():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    A, B = lazy.asarray(a), lazy.asarray(b)
    assert_close(A & B, a & b)
    assert_close(A | B, a | b)
    assert_close(A ^ B, a ^ b)
    assert_close(A + B, a + b)     # bool + bool is logical or in NumPy
    assert_close(A * B, a * b)
    assert_close(A & True, a & True)
    assert_close(A | 1, a | 1)     # weak int: int64
    assert_close(A == B, a == b)
    assert_close(A > B, a > b)
    assert_close(A.maximum(B), np.maximum(a, b))


def test_chained_expression():
    x = sample((64, 2), "float32", RNG)
    X = lazy.asarray(x)
    y = X[:, 0] ** 2 + X[:, 1] ** 3
    assert_close(y, x[:, 0] ** 2 + x[:, 1] ** 3)
    z = lazy.where(X > 0, X.exp(), (X * 0.5).sigmoid()) - X.abs().sqrt() / (1 + X * X)
    assert_close(z, np.where(x > 0, np.exp(x), _sigmoid(x * np.float32(0.5)))
                 - np.sqrt(np.abs(x)) / (1 + x * x))


def test_results_from_two_syncs_combine():
    a = lazy.arange(6).reshape(2, 3) * 1.5
    a.sync()
    b = a + lazy.ones(3)
    assert_close(b, np.arange(6).reshape(2, 3) * 1.5 + np.ones(3, np.float32))


def test_nothing_runs_before_sync():
    lazy.log.clear()
    x = lazy.arange(1000, dtype=lazy.float32)
    y = (x * 2 + 1).sin()
    z = y.sum()
    assert len(lazy.log) == 0
    assert len(lazy.log.syncs) == 0
    assert y._buf.pending and z._buf.pending and x._buf.pending
    lazy.sync(y, z)
    assert not y._buf.pending and not z._buf.pending
    assert len(lazy.log) >= 1
    assert len(lazy.log.syncs) == 1
    assert set(backends_used()) == {"llvm"}
    assert lazy.log.counters.fallbacks == 0
    ops = {o.split("@")[0] for r in lazy.log for o in r.ops}
    assert {"mul", "add", "sin"} <= ops
    assert any("test_elementwise.py" in o for r in lazy.log for o in r.ops)
    ref = np.sin(np.arange(1000, dtype=np.float32) * 2 + 1)
    assert_close(y, ref)
    assert_close(z, ref.sum(), rtol=1e-4)


def test_implicit_sync_is_logged():
    lazy.log.clear()
    t = lazy.arange(4) + 1
    assert t._buf.pending
    assert t.tolist() == [1, 2, 3, 4]
    assert lazy.log.counters.implicit_syncs == 1
    assert lazy.log.syncs[-1].cause.startswith("implicit")


def test_numpy_of_result_is_readonly_view():
    t = lazy.arange(6) * 2
    arr = t.numpy()
    assert np.shares_memory(arr, t.numpy())
    assert not arr.flags.writeable


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_shift_operators_match_numpy(dtype):
    xn = np.array([0, 1, -1, 7, -8, 2**20, -(2**20)], dtype)
    sn = np.array([0, 1, 2, 3, 4, 5, 6], dtype)
    x, s = lazy.asarray(xn), lazy.asarray(sn)
    np.testing.assert_array_equal((x << s).numpy(), xn << sn)
    np.testing.assert_array_equal((x >> s).numpy(), xn >> sn)
    np.testing.assert_array_equal((3 << s).numpy(), 3 << sn)
    np.testing.assert_array_equal((x >> 2).numpy(), xn >> 2)
    y = lazy.asarray(xn.copy())  # asarray shares memory: the write would change xn
    y <<= 2
    np.testing.assert_array_equal(y.numpy(), xn << 2)


@pytest.mark.parametrize("dt", ["int32", "int64"])
def test_comparing_with_an_int_beyond_the_dtype_is_exact(dt):
    """NumPy 2 compares a Python int outside an integer dtype's range exactly
    (the answer is the same for every element); arithmetic with it raises,
    and so does a comparison of bools (they compare as int64)."""
    a = np.array([-5, 0, 7]).astype(dt)
    t = lazy.asarray(a)
    with pytest.raises(OverflowError):
        lazy.asarray(np.array([True])) < 2**63
    for v in (2**31, -2**31 - 1, 2**63, -2**63 - 1, 2**80, -2**80):
        for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
            for left, right in ((t, v), (v, t)):
                got = getattr(left, op)(right) if left is t else getattr(t, _MIRROR[op])(v)
                want = getattr(a if left is t else v, op)(right if left is t else a)
                if want is NotImplemented:  # int.__lt__(ndarray): Python reflects it
                    want = getattr(a, _MIRROR[op])(v)
                assert got.dtype == lazy.bool and got.tolist() == want.tolist(), (v, op, left is t)
    with pytest.raises(OverflowError):
        t + 2**80
    import lazy.numpy as lnp  # the scalar on the left (`v < t` reflects to `t > v`)
    for v in (2**63, -2**63 - 1):
        for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
            assert getattr(lnp, name)(v, t).tolist() == getattr(np, name)(v, a).tolist()


_MIRROR = {"__eq__": "__eq__", "__ne__": "__ne__", "__lt__": "__gt__", "__le__": "__ge__",
           "__gt__": "__lt__", "__ge__": "__le__"}


@pytest.mark.parametrize("value", [3, 5, 2.0, 2.5, np.int32(4), True, [3, 4], [[1], [5]],
                                   np.array([1, 4]), None, "a"])
def test_in_is_any_element_equal_as_numpy(value):
    """`v in t` is NumPy's `(t == v).any()`: Python's default iterated the rows,
    syncing each, and raised on a 2-D or 0-d tensor."""
    a = np.array([[1, 2], [3, 4]])
    assert (value in lazy.asarray(a)) is (value in a)
    if isinstance(value, list):
        assert (lazy.asarray(value) in lazy.asarray(a)) is (value in a)
    assert (3 in lazy.asarray(np.array(3))) is True and (3 in lazy.zeros(0)) is False
    with pytest.raises(ValueError, match=r"broadcast together with shapes \(2, 2\) \(3,\)"):
        [1, 2, 3] in lazy.asarray(a)


@pytest.mark.parametrize("other", [None, "a", b"x"])
def test_comparing_with_none_or_a_string_is_elementwise_as_numpy(other):
    """NumPy's `a == None` is all False and `a != None` all True (PyTorch's is
    a Python bool; lazyrt's operators follow NumPy); other ops raise TypeError."""
    import lazy.numpy as lnp
    a = np.arange(6.0).reshape(2, 3)
    t = lazy.asarray(a)
    for got, want in ((t == other, a == other), (t != other, a != other),
                      (other == t, other == a), (other != t, other != a)):
        assert_close(got, want)
    assert_close(lazy.asarray(np.array(1.5)) == other, np.array(1.5) == other)
    kind = type(other).__name__
    with pytest.raises(TypeError, match=f"lt: unsupported operand of type {kind}"):
        t < other
    if other is None:  # np.equal(a, "a") has no loop, but np.equal(a, None) compares
        assert_close(lnp.equal(t, None), np.equal(a, None))
        assert_close(lnp.not_equal(None, t), np.not_equal(None, a))
        with pytest.raises(TypeError, match="add: unsupported operand of type NoneType"):
            lnp.add(t, None)
