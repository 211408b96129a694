"""lazy.numpy's statistical, searching, sorting, set, utility and dtype functions,
the namespace info, and which functions are native vs logged NumPy fallbacks."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import lazy
import lazy.numpy as lnp
from conftest import assert_close, same

pytestmark = [pytest.mark.usefixtures("fresh_log"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


RNG = np.random.default_rng(7)
ARRAYS = {"bool": RNG.random((3, 4)) < 0.5, "int32": RNG.integers(-5, 6, (3, 4), np.int32),
          "int64": RNG.integers(-5, 6, (3, 4)), "float32": RNG.normal(size=(3, 4)).astype(
              np.float32), "float64": RNG.normal(size=(3, 4))}


@pytest.mark.parametrize("dt", sorted(ARRAYS))
def test_statistical_functions_match_numpy(dt):
    a = ARRAYS[dt]
    x = lnp.asarray(a)
    for axis, keepdims in ((None, False), (1, True), ((0, 1), False), (-2, False)):
        kw = dict(axis=axis, keepdims=keepdims)
        for name in ("sum", "prod", "max", "min", "mean", "var", "std"):
            got, want = getattr(lnp, name)(x, **kw), getattr(np, name)(a, **kw)
            assert_close(got, want, rtol=1e-5 if dt == "float32" else 1e-12)
        same(lnp.any(x, **kw), np.any(a, **kw))
        same(lnp.all(x, **kw), np.all(a, **kw))
        same(lnp.count_nonzero(x, **kw), np.asarray(np.count_nonzero(a, **kw)))
    assert lazy.log.counters.fallbacks == 0


def test_numpy_positional_forms_and_out():
    a = np.arange(12.0).reshape(3, 4)
    x = lnp.asarray(a)
    same(lnp.sum(x, 0), np.sum(a, 0))
    same(lnp.mean(x, 1, None, None, True), np.mean(a, 1, None, None, True))
    same(lnp.argmax(x, 1), np.argmax(a, 1))
    same(lnp.zeros(3, lnp.int32), np.zeros(3, np.int32))
    same(lnp.full((2,), 1, lnp.float32), np.full((2,), 1, np.float32))
    same(lnp.eye(3, 3, 1), np.eye(3, 3, 1))
    assert_close(lnp.linspace(0, 1), np.linspace(0, 1))
    same(lnp.roll(x, 1, 0), np.roll(a, 1, 0))
    same(lnp.flip(x, 1), np.flip(a, 1))
    same(lnp.diff(x, 1, 0), np.diff(a, 1, 0))
    same(lnp.repeat(x, 2, 1), np.repeat(a, 2, 1))
    same(lnp.tril(x, 1), np.tril(a, 1))
    out = lnp.zeros(4)
    assert lnp.sum(x, 0, out=out) is out
    same(out, np.sum(a, 0))
    outi = lnp.zeros(3, lnp.int64)
    lnp.argmin(x, 1, outi)
    same(outi, np.argmin(a, 1))
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        lnp.max(x, 0, out=lnp.zeros(3))
    for o in (lnp.zeros(4, lnp.int64), np.zeros(4, np.int64)):  # reductions cast unsafely
        lnp.mean(x * 0.7, 0, out=o)
        np.testing.assert_array_equal(np.asarray(o), np.mean(a * 0.7, 0, out=np.zeros(4, np.int64)))


def test_statistical_options():
    a = np.arange(12.0).reshape(3, 4)
    x = lnp.asarray(a)
    assert_close(lnp.var(x, axis=0, correction=1), np.var(a, axis=0, ddof=1))
    assert_close(lnp.std(x, ddof=1), np.std(a, ddof=1))
    assert_close(lnp.var(x[:1], axis=0, correction=1), np.var(a[:1], axis=0, ddof=1))
    same(lnp.sum(lnp.asarray(a.astype(np.int32)), dtype=lnp.int32),
         np.sum(a.astype(np.int32), dtype=np.int32))
    assert_close(lnp.sum(x, dtype=lnp.float32), np.sum(a, dtype=np.float32))
    assert_close(lnp.mean(lnp.asarray(a > 3)), np.mean(a > 3))  # bool mean: float64
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        lnp.max(lnp.asarray(np.zeros((0, 3))), axis=0)
    with pytest.raises(IndexError, match=r"axis 2 is out of range .* \[-2, 1\]"):
        lnp.sum(x, axis=2)
    with pytest.raises(ValueError, match="repeated axis"):
        lnp.sum(x, axis=(0, 0))


def test_searching():
    a = np.array([[3.0, np.nan, 1.0], [2.0, 5.0, 5.0]])
    x = lnp.asarray(a)
    for axis in (None, 0, 1):
        same(lnp.argmax(x, axis=axis), np.argmax(a, axis=axis))
        same(lnp.argmin(x, axis=axis, keepdims=True), np.argmin(a, axis=axis, keepdims=True))
    same(lnp.where(x > 2, x, 0.0), np.where(a > 2, a, 0.0))
    same(lnp.where(a > 2, 1, lnp.asarray(a)), np.where(a > 2, 1, a))
    same(lnp.nonzero(x > 2), np.nonzero(a > 2))
    same(lnp.where(x > 2), np.where(a > 2))
    with pytest.raises(ValueError, match="0d arrays"):
        lnp.nonzero(lnp.asarray(1.0))
    assert lazy.log.counters.fallbacks == 0


def test_unique_of_wide_slices_under_strict_fallback_raises():
    """The set functions are ours (test_sets.py), unique rows (`axis=`) too;
    slices of more than sets.MAX_SLICE elements are NumPy's."""
    from lazy.sets import MAX_SLICE
    x = lnp.asarray(np.arange(4).reshape(2, 2))
    np.testing.assert_array_equal(lnp.unique_values(x).numpy(), np.arange(4))
    np.testing.assert_array_equal(lnp.unique(x, axis=0).numpy(), np.arange(4).reshape(2, 2))
    with pytest.raises(lazy.FallbackError, match="unique"):
        lnp.unique(lnp.zeros((2, MAX_SLICE + 1)), axis=0)


def test_utility_functions():
    a = np.array([[1.0, 4.0, 9.0, 16.0], [2.0, 3.0, 5.0, 7.0]])
    x = lnp.asarray(a)
    for n in (0, 1, 2):
        same(lnp.diff(x, n=n), np.diff(a, n=n))
    same(lnp.diff(x, axis=0), np.diff(a, axis=0))
    same(lnp.diff(x, prepend=0.0, append=lnp.asarray(a[:, :1])),
         np.diff(a, prepend=0.0, append=a[:, :1]))
    b = np.array([True, False, False, True])
    same(lnp.diff(lnp.asarray(b)), np.diff(b))
    c = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9])
    d = np.array([1.0 + 1e-7, np.nan, np.inf, np.inf, 0.0])
    for equal_nan in (False, True):
        same(lnp.isclose(lnp.asarray(c), lnp.asarray(d), equal_nan=equal_nan),
             np.isclose(c, d, equal_nan=equal_nan))
    assert lnp.allclose(x, a + 1e-9) is True and lnp.allclose(x, a + 1) is False
    assert lnp.array_equal(x, a) is True and lnp.array_equal(x, a[:1]) is False
    assert lnp.array_equal(lnp.asarray(c), c, equal_nan=True) is True
    assert lazy.log.counters.fallbacks == 0


def test_dtype_functions():
    assert lnp.result_type(lnp.int32, lnp.float32) == lnp.float64
    assert lnp.result_type(lnp.asarray(np.zeros(2, np.float32)), 1.0) == lnp.float32
    assert lnp.result_type(lnp.int32, 1) == lnp.int32
    assert lnp.can_cast(lnp.int32, lnp.int64) and not lnp.can_cast(lnp.float64, lnp.int64)
    f, i = lnp.finfo(lnp.float32), lnp.iinfo(lnp.int32)
    assert f.eps == np.finfo(np.float32).eps and type(f.eps) is float and f.dtype is lnp.float32
    assert f.smallest_normal == np.finfo(np.float32).smallest_normal and f.bits == 32
    assert (i.max, i.min, i.bits, i.dtype) == (2 ** 31 - 1, -2 ** 31, 32, lnp.int32)
    with pytest.raises(ValueError, match="not a floating dtype"):
        lnp.finfo(lnp.int32)
    assert lnp.isdtype(lnp.float32, "real floating") and lnp.isdtype(lnp.int64, "integral")
    assert lnp.isdtype(lnp.bool, "bool") and not lnp.isdtype(lnp.bool, "numeric")
    assert lnp.isdtype(lnp.int32, ("bool", lnp.int32)) and not lnp.isdtype(lnp.int32,
                                                                          "unsigned integer")
    x = lnp.asarray(np.arange(3))
    y = lnp.astype(x, lnp.float32)
    same(y, np.arange(3, dtype=np.float32))
    assert lnp.astype(x, lnp.int64, copy=False) is x
    assert lnp.astype(x, lnp.int64)._storage is not x._storage
    with pytest.raises(TypeError, match="unsupported dtype"):
        lnp.astype(x, np.int8)


def test_namespace_info_and_constants():
    x = lnp.asarray(np.arange(3.0))
    assert x.__array_namespace__() is lnp and x.__array_namespace__(api_version="2024.12") is lnp
    with pytest.raises(ValueError, match="2024.12"):
        x.__array_namespace__(api_version="1999.01")
    assert lnp.__array_api_version__ == "2024.12"
    info = lnp.__array_namespace_info__()
    assert info.capabilities()["boolean indexing"] is True
    assert "cpu" in info.devices() and info.default_device() in info.devices()
    assert info.default_dtypes()["real floating"] == lnp.float64
    assert set(info.dtypes()) == {"bool", "int32", "int64", "float32", "float64"}
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert (lnp.e, lnp.pi, lnp.inf, lnp.newaxis) == (np.e, np.pi, np.inf, None)
    assert np.isnan(lnp.nan) and lnp.ndarray is lazy.Tensor and lnp.bool_ is lnp.bool
    assert x.to_device("cpu").device == x.device == "cpu"
    assert lnp.ndim(x) == 1 and lnp.shape(x) == (3,) and lnp.size(x) == 3


def test_numpy_aliases_copy_and_dlpack():
    aliases = {"amax": "max", "amin": "min", "arccos": "acos", "arccosh": "acosh",
               "arcsin": "asin", "arcsinh": "asinh", "arctan": "atan", "arctanh": "atanh",
               "around": "round", "round_": "round", "bitwise_not":
               "bitwise_invert", "invert": "bitwise_invert", "conjugate": "conj",
               "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift",
               "mod": "remainder", "true_divide": "divide"}
    for alias, name in aliases.items():
        assert getattr(lnp, alias) is getattr(lnp, name), alias
    assert (lnp.float_, lnp.int_, lnp.intp) == (lnp.float64, lnp.int64, lnp.int64)
    a = np.arange(3.0)
    c = lnp.copy(a)
    same(c, a)
    assert not np.shares_memory(c.numpy(), a)
    d = lnp.from_dlpack(a)
    same(d, a)
    assert np.shares_memory(d.numpy(), a)


def test_other_numpy_functions_are_logged_fallbacks(allow_fallback):
    a = np.array([3.0, 1.0, 4.0, 1.0, 5.0])
    same(lnp.ptp(lnp.asarray(a)), np.asarray(np.ptp(a)))
    same(lnp.trapezoid(lnp.asarray(a)), np.asarray(np.trapezoid(a)))
    assert [r.reason for r in lazy.log if r.backend == "numpy"] == [
        "fallback: ptp not lowered", "fallback: trapezoid not lowered"]
    with pytest.raises(AttributeError, match="no attribute 'not_a_numpy_function'"):
        lnp.not_a_numpy_function
    with pytest.raises(AttributeError, match="no dtype 'int8': lazyrt supports bool"):
        lnp.int8
    assert lnp.fft is np.fft and lnp.errstate is np.errstate and lnp.euler_gamma > 0.5


@settings(max_examples=20, deadline=None)
@given(a=hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                    elements=st.floats(-100, 100, allow_nan=False)), data=st.data())
def test_reductions_property(a, data):
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1), label="axis")
    x = lnp.asarray(a)
    for name in ("sum", "mean", "var", "max", "min"):
        if name in ("max", "min") and a.size == 0:
            continue
        with np.errstate(all="ignore"):
            want = getattr(np, name)(a, axis=axis)
        assert_close(getattr(lnp, name)(x, axis=axis), want, rtol=1e-9, atol=1e-9)


def test_numpys_positional_dtype_and_out_forms():
    """NumPy's `x.sum(axis, dtype)` and `mean(axis, dtype)` (PyTorch's second
    positional is keepdim, a bool: both are told apart by type), an ndarray out= on
    reductions (a sync, then a copy into it), and anything else in keepdims's place
    refused by name rather than read as true."""
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    x = lnp.asarray(a)
    same(x.sum(0, np.float64), a.sum(0, np.float64))
    same(x.prod(1, np.float32), a.prod(1, np.float32))
    same(x.mean(1, np.float32), a.mean(1, np.float32))
    same(x.mean(dtype=np.float32), a.mean(dtype=np.float32))
    same(x.sum(1, True), a.sum(1, keepdims=True))
    with pytest.raises(TypeError, match="keepdims must be a bool"):
        x.max(0, np.empty(3))
    with pytest.raises(TypeError, match="dtype given twice"):
        x.sum(0, np.float64, dtype=np.float32)
    for fn in (np.sum, np.mean, np.max, np.argmax):
        out = np.empty(3, fn(a, axis=0).dtype)
        assert fn(x, axis=0, out=out) is out
        np.testing.assert_array_equal(out, fn(a, axis=0))


@pytest.mark.parametrize("bad", [
    lambda x: x.max(1.0), lambda x: x.max(np.True_), lambda x: x.sum((0.0, 1.0)),
    lambda x: x.max(0, keepdims=1.0), lambda x: x.sum(0, keepdims="float64"),
    lambda x: x.prod(keepdims=np.float32), lambda x: x.mean(0, keepdims=np.float32),
    lambda x: x.sum(0, np.float64, None), lambda x: x.sum(0, True, keepdims=True),
    lambda x: lnp.sum(x, axis=True), lambda x: lnp.argmax(x, axis=np.True_),
    lambda x: lnp.var(x, axis=(0, True)), lambda x: x.std(axis=True),
    lambda x: lnp.count_nonzero(x, axis=True)],
    ids=["float_axis", "np_bool_axis", "float_axes", "float_keepdims", "str_keepdims_kw",
         "dtype_as_keepdims_kw", "mean_dtype_as_keepdims_kw", "three_positional",
         "keepdims_twice", "lnp_bool_axis", "lnp_np_bool_axis", "lnp_bool_in_axes",
         "std_bool_axis", "count_nonzero_bool_axis"])
def test_bad_reduction_arguments_raise_even_after_valid_calls(bad):
    """TypeError, as NumPy, every time. Valid calls first: the plan cache keyed
    on the raw values took 1.0, np.True_ and (0.0, 1.0) for the ints they equal;
    a non-bool `keepdims=` keyword was read as NumPy's positional dtype; and
    lazy.numpy's axis= took True for 1."""
    x = lnp.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    x.max(1), x.max(0, keepdims=True), x.sum((0, 1)), x.sum(0), x.mean(0), x.prod()
    with pytest.raises(TypeError):
        bad(x)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("a", [np.array([-1.5, 2.5, 3.7, -4.0, 9.9]),
                               np.array([[1, 2, 4], [-7, 5, 6]]),
                               np.array([2**30, 2**30], np.int32),        # the int32 sum wraps
                               np.array([2**62 + 1, 2**62 + 3])])         # so does the int64 one
def test_mean_with_an_integer_dtype_is_numpys_truncated_mean(a, dtype):
    """NumPy sums in the integer dtype (wrapping) and truncates the quotient
    into it; this was a float64 mean (lazy.numpy) or a float mean cast back."""
    x = lnp.asarray(a)
    for axis in (None, -1):
        same(lnp.mean(x, axis=axis, dtype=dtype), np.mean(a, axis=axis, dtype=dtype))
        same(x.mean(axis, dtype=dtype), a.mean(axis, dtype=dtype))
    same(x.mean(0, True, dtype=dtype), a.mean(0, keepdims=True, dtype=dtype))
    same(np.mean(x, dtype=dtype), np.asarray(np.mean(a, dtype=dtype)))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("a", [np.array([[1, 2, 7], [4, 9, 3]], np.int32),
                               np.array([-1.5, 2.5, 3.7, -4.0, 9.9]),   # negative means truncate
                               np.array([[-7, 5, -6], [3, -9, 2]]),
                               np.array([2**30, 2**30, 5], np.int32)])   # the int32 sums wrap
def test_var_with_an_integer_dtype_is_numpys(a, dtype):
    """NumPy truncates the mean into the integer dtype, sums the squared
    deviations in it and truncates the quotient: var(dtype=int64) of
    [[1, 2, 7], [4, 9, 3]] is 8, not 7.89 (lazyrt gave float64)."""
    x = lnp.asarray(a)
    for axis in (None, -1, 0):
        for ddof in (0, 1):
            same(lnp.var(x, axis=axis, dtype=dtype, ddof=ddof),
                 np.var(a, axis=axis, dtype=dtype, ddof=ddof))
    same(lnp.var(x, 0, dtype, keepdims=True), np.var(a, 0, dtype, keepdims=True))
    same(lnp.std(x, dtype=dtype), np.asarray(np.std(a, dtype=dtype)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_var_with_a_float_dtype_takes_deviations_in_the_datas_precision(dtype):
    """NumPy sums in `dtype` but subtracts the mean from the float64 data:
    1e4 plus noise of 1e-3 has a float32 variance 8% off when the data is
    cast to float32 first (lazyrt did that)."""
    rng = np.random.default_rng(3)
    for a in (1e4 + rng.standard_normal((64, 50)) * 1e-3, rng.integers(-9, 9, (64, 50))):
        x = lnp.asarray(a)
        for axis in (None, 0):
            got = np.asarray(lnp.var(x, axis=axis, dtype=dtype, ddof=1))
            want = np.var(a, axis=axis, dtype=dtype, ddof=1)
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
        np.testing.assert_allclose(np.asarray(lnp.std(x, dtype=dtype)), np.std(a, dtype=dtype),
                                   rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_std_with_an_integer_dtype_refuses_an_array_result_as_numpy_does():
    """NumPy cannot store sqrt's float64 output into an integer array result
    (UFuncTypeError, a TypeError): only a single result is truncated."""
    a = np.array([[1, 2, 7], [4, 9, 3]])
    with pytest.raises(TypeError):
        np.std(a, axis=1, dtype=np.int64)
    with pytest.raises(TypeError, match=r"dtype=int64 and a result of shape \(2,\)"):
        lnp.std(lnp.asarray(a), axis=1, dtype=np.int64)
    with pytest.raises(TypeError, match=r"shape \(1, 1\)"):
        lnp.std(lnp.asarray(a), dtype=np.int32, keepdims=True)
    same(lnp.std(lnp.asarray(a), axis=(0, 1), dtype=np.int64),
         np.asarray(np.std(a, axis=(0, 1), dtype=np.int64)))


@pytest.mark.parametrize("out", [np.zeros(3, np.int64), np.zeros((), np.int64),
                                 np.zeros(3, bool), lnp.zeros(3, dtype=np.int32)],
                         ids=["int64", "0-d int64", "bool", "int32 tensor"])
def test_std_refuses_an_integer_or_bool_out_as_numpy_does(out):
    """NumPy's std ends with sqrt(..., out=out) under same_kind casting, so a
    float result is never truncated into an integer out (var's out is unsafe)."""
    a = np.arange(6.0).reshape(2, 3)
    axis = None if out.ndim == 0 else 0
    with pytest.raises(TypeError, match="Cannot cast ufunc 'sqrt' output"):
        np.std(a, axis=axis, out=np.zeros(out.shape, out.dtype.name))
    with pytest.raises(TypeError, match="Cannot cast ufunc 'sqrt' output from dtype.'float64'"):
        lnp.std(lnp.asarray(a), axis=axis, out=out)
    into, want = np.zeros(3, np.float32), np.zeros(3, np.float32)
    got = lnp.std(lnp.asarray(a), axis=0, out=into)
    np.std(a, axis=0, out=want)
    assert got is into  # NumPy returns its out array, written
    np.testing.assert_array_equal(into, want)


def test_sort_and_argsort_of_axis_none_flatten():
    a = np.array([[3, 1], [2, 0]])
    same(lnp.sort(lnp.asarray(a), axis=None), np.sort(a, axis=None))
    same(lnp.argsort(lnp.asarray(a), axis=None), np.argsort(a, axis=None))


def test_arange_of_a_0d_integer_tensor_is_an_integer_range():
    labels = lnp.asarray(np.array([0, 2, 1, 2]))
    same(lnp.arange(labels.max() + 1), np.arange(3))
    same(lnp.arange(lnp.asarray(np.float32(2.5))), np.arange(2.5))


def test_numpys_other_names_of_the_five_dtypes():
    for name in ("double", "single", "intc", "long", "longlong", "int_", "float64"):
        assert lnp.zeros(2, getattr(lnp, name)).dtype.name == np.dtype(getattr(np, name)).name
    with pytest.raises(AttributeError, match="float16"):
        lnp.float16


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("kw", [{"ddof": 0, "correction": 1}, {"ddof": 0.0, "correction": 2},
                                {"correction": 1.5}, {"ddof": None, "correction": 1}])
def test_var_and_std_take_the_correction_beside_ddof_zero(name, kw):
    """`std(x, ddof=0, correction=1)` divided by N (the ddof): NumPy takes the correction."""
    a, x = ARRAYS["float64"], lnp.asarray(ARRAYS["float64"])
    want = getattr(np, name)(a, axis=0, **{**kw, "ddof": kw.get("ddof") or 0})
    assert_close(getattr(lnp, name)(x, axis=0, **kw), want)
    assert_close(getattr(np, name)(x, axis=0, **kw), want)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("kw", [{"ddof": 1, "correction": 1}, {"ddof": 2, "correction": 0.5},
                                {"ddof": 1, "correction": 0}])
def test_var_and_std_refuse_ddof_and_correction_together(name, kw):
    """`var(x, ddof=1, correction=1)` returned a variance where NumPy raises ValueError."""
    a, x = ARRAYS["float64"], lnp.asarray(ARRAYS["float64"])
    msg = "ddof and correction can't be provided simultaneously"
    with pytest.raises(ValueError, match=msg):
        getattr(np, name)(a, **kw)
    for call in (getattr(lnp, name), getattr(np, name)):
        with pytest.raises(ValueError, match=msg):
            call(x, **kw)
    with pytest.raises(ValueError, match=msg):
        getattr(x, name)(**kw)


Z = np.asarray(5.0)  # a 0-d array: it has no axes


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "count_nonzero", "argmax",
                                  "argmin", "any", "all"])
@pytest.mark.parametrize("axis", [0, -1, None])
def test_0d_reductions_take_the_int_axes_numpy_takes(name, axis):
    """NumPy's ufunc reductions (and count_nonzero, argmax, argmin) take an int
    0 or -1 on a 0-d array as no axis; they must keep doing so."""
    want = getattr(np, name)(Z, axis=axis)
    same(getattr(lnp, name)(lnp.asarray(Z), axis=axis), want)
    same(getattr(np, name)(lnp.asarray(Z), axis=axis), want)


@pytest.mark.parametrize("name, axis", [
    *((n, a) for n in ("sum", "prod", "max", "min", "count_nonzero", "any", "all")
      for a in ((0,), 1, -2)),
    *((n, a) for n in ("mean", "var", "std") for a in (0, -1, (0,), 1))])
def test_0d_reductions_refuse_axes_the_input_lacks(name, axis):
    """`sum(5.0, axis=1)`, `mean(5.0, axis=0)`, `var(5.0, axis=0)` returned
    values: lazyrt skipped the axis check of 0-d inputs; NumPy raises AxisError."""
    with pytest.raises(np.exceptions.AxisError) as want:
        getattr(np, name)(Z, axis=axis)
    for call in (getattr(lnp, name), getattr(np, name)):
        with pytest.raises(np.exceptions.AxisError, match=f"^{want.value}$"):
            call(lnp.asarray(Z), axis=axis)


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_argsort_of_0d_is_a_1d_argsort(axis):
    """`argsort(5.0)` raised ValueError ("cannot sort a 0-d array"); NumPy gives [0]."""
    same(lnp.argsort(lnp.asarray(Z), axis=axis), np.argsort(Z, axis=axis))
    same(np.argsort(lnp.asarray(Z), axis=axis), np.argsort(Z, axis=axis))


@pytest.mark.parametrize("axis", [0, -1, 1])
def test_sort_of_0d_along_an_axis_raises_numpys_axis_error(axis):
    """`sort(5.0)` raised a plain ValueError where NumPy raises AxisError."""
    with pytest.raises(np.exceptions.AxisError) as want:
        np.sort(Z, axis=axis)
    with pytest.raises(np.exceptions.AxisError, match=f"^{want.value}$"):
        lnp.sort(lnp.asarray(Z), axis=axis)
    same(lnp.sort(lnp.asarray(Z), axis=None), np.sort(Z, axis=None))
