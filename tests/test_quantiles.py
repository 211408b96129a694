"""median / quantile / percentile (lazy/numpy/_order.py): the sort extern kernel and
fused arithmetic, checked against NumPy's values and dtypes. The module runs under
LAZY_FALLBACK=error; the fallbacks it checks allow them explicitly."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazy
import lazy.numpy as lnp
from conftest import sample

pytestmark = pytest.mark.usefixtures("strict_fallback")


def same_values(got: lazy.Tensor, want: object) -> None:
    """Same dtype, shape and values as NumPy's (NaNs where NumPy has them)."""
    want = np.asarray(want)
    assert (got.dtype.name, got.shape) == (want.dtype.name, want.shape)
    np.testing.assert_array_equal(got.numpy(), want)


QS = st.sampled_from([0.0, 0.3, 0.5, 0.75, 1.0, 0, 1, [0.1, 0.9], np.float64(0.25),
                      [[0.5], [0.0]]])


@settings(max_examples=120, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(["int32", "int64", "float32", "float64"]),
       axis_pick=st.integers(-1, 3), keepdims=st.booleans(), q=QS, nan=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_median_and_quantiles_are_numpys(shape, dtype, axis_pick, keepdims, q, nan, seed):
    """Values, dtypes (float32 stays float32 with a Python float q; an array q,
    or integer data, gives float64) and shapes (q's dimensions first), every
    axis form, keepdims, and slices holding a NaN."""
    a = sample(shape, dtype, np.random.default_rng(seed))
    if nan and dtype.startswith("float"):
        a.reshape(-1)[seed % a.size] = np.nan
    axis = None if axis_pick == -1 else axis_pick % len(shape)
    if axis_pick == 3 and len(shape) > 1:
        axis = (0, len(shape) - 1)
    x = lazy.asarray(a)
    full = np.median(a, axis=axis).ndim == 0  # every axis reduced
    if nan and dtype.startswith("float") and full and type(q) is np.float64:
        q = 0.25  # NumPy's dtype there depends on the data (docs/numpy.md, "Order statistics")
    same_values(lnp.median(x, axis=axis, keepdims=keepdims),
                np.median(a, axis=axis, keepdims=keepdims))
    same_values(lnp.quantile(x, q, axis=axis, keepdims=keepdims),
                np.quantile(a, q, axis=axis, keepdims=keepdims))
    p = q * 100 if isinstance(q, float) else np.multiply(q, 100).tolist()
    same_values(lnp.percentile(x, p, axis=axis, keepdims=keepdims),
                np.percentile(a, p, axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_interpolation_is_numpys_to_the_bit(dtype):
    """Random (not quarter-integer) data, where the two sides of NumPy's `_lerp`
    round differently: below g = 0.5 from a, from it from b."""
    a = np.random.default_rng(5).standard_normal((9, 37)).astype(dtype)
    x = lazy.asarray(a)
    for q in (0.01, 0.2, 0.49, 0.5, 0.51, 0.8, 0.99, [0.33, 0.66]):
        got, want = lnp.quantile(x, q, axis=1).numpy(), np.quantile(a, q, axis=1)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(got.dtype.str.replace("f", "u")),
                                      want.view(want.dtype.str.replace("f", "u")))
    same_values(lnp.percentile(x, 37.5), np.percentile(a, 37.5))


def test_a_median_is_one_sort_and_fused_arithmetic(fresh_log):
    """Nothing runs at the call; the plan is the sort and one kernel reading the
    middle pair, and np.median on a tensor is the same code."""
    a = sample((6, 8), "float32", np.random.default_rng(1))
    x = lazy.asarray(a)
    m = np.median(x * 2, axis=1)
    assert isinstance(m, lazy.Tensor) and len(lazy.log) == 0
    assert [k.name for k in lazy.explain(m).kernels] == \
        ["e0_mul", "sort_1", "e2_add_truediv_ne_where"]
    same_values(m, np.median(a * 2, axis=1))
    assert lazy.log.counters.fallbacks == 0


def test_out_and_errors_at_the_call():
    a = np.arange(12.0).reshape(3, 4)
    x = lazy.asarray(a)
    into = lnp.empty(3, dtype=lnp.float64)
    assert lnp.median(x, axis=1, out=into) is into
    np.testing.assert_array_equal(into.numpy(), np.median(a, axis=1))
    with pytest.raises(ValueError, match=r"Quantiles must be in the range \[0, 1\]"):
        lnp.quantile(x, 1.5)
    with pytest.raises(ValueError, match=r"Percentiles must be in the range \[0, 100\]"):
        lnp.percentile(x, [-1, 50])


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_other_methods_and_empty_input_are_numpy_fallbacks(fallback_log):
    """What is not native says so in the log and gives NumPy's result."""
    a = np.arange(10.0)
    x = lazy.asarray(a)
    same_values(lnp.quantile(x, 0.3, method="lower"), np.quantile(a, 0.3, method="lower"))
    same_values(lnp.percentile(x, 40, method="nearest"), np.percentile(a, 40, method="nearest"))
    same_values(lnp.quantile(x, []), np.quantile(a, []))  # no places: NumPy's empty result
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert np.isnan(lnp.median(lazy.asarray(np.zeros(0))).item())
    reasons = [r.reason for r in lazy.log if r.backend == "numpy" and r.reason.startswith("fall")]
    assert reasons == ["fallback: quantile not lowered", "fallback: percentile not lowered",
                       "fallback: quantile not lowered", "fallback: median not lowered"]
