"""np.interp (lazy/numpy/_searching.py) against NumPy's, bit for bit: its C
loop's cases (outside the samples, on a sample, the last sample, NaN, the
retry where the slope gives NaN, one sample point) over random samples
with repeats and infinities; lazy (no sync); the fallbacks; the emulated
GPU."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazy
import lazy.numpy as lnp
from cuda_lazy_helpers import check, on_cuda


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 9), repeats=st.booleans(), infinite=st.booleans(),
       ends=st.sampled_from([{}, {"left": -7.5, "right": 9.0}, {"left": np.nan}]),
       x_dtype=st.sampled_from(["float64", "float32", "int64"]), seed=st.integers(0, 2**16))
def test_matches_numpy_bit_for_bit(n, repeats, infinite, ends, x_dtype, seed):
    rng = np.random.default_rng(seed)
    xp = np.sort(rng.integers(-5, 5, n).astype(float) if repeats else rng.standard_normal(n))
    fp = rng.standard_normal(n)
    if infinite:
        fp[rng.random(n) < 0.3] = np.inf
    x = np.concatenate([rng.standard_normal(40) * 4, xp]).astype(x_dtype)
    if x_dtype != "int64":
        x = np.concatenate([x, np.array([np.nan, np.inf, -np.inf], x_dtype)])
    with np.errstate(all="ignore"):
        want = np.interp(x, xp, fp, **ends)
    lazy.log.clear()
    got = lnp.interp(lazy.asarray(x), lazy.asarray(xp), fp, **ends)
    assert lazy.log.syncs == [] and got.dtype.name == "float64"
    np.testing.assert_array_equal(got.numpy(), want)


def test_scalars_errors_and_fallbacks(fallback_log):
    assert float(lnp.interp(2.5, [1, 2, 3], [3, 2, 0])) == np.interp(2.5, [1, 2, 3], [3, 2, 0])
    with pytest.raises(ValueError, match="same length"):
        lnp.interp(lazy.asarray([1.0]), [1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="array of sample points is empty"):
        lnp.interp(lazy.asarray([1.0]), [], [])
    x = np.linspace(-3, 8, 23)
    got = lnp.interp(lazy.asarray(x), [0.0, 1.0, 2.5], [1.0, 3.0, -1.0], period=3)
    np.testing.assert_array_equal(got.numpy(), np.interp(x, [0.0, 1.0, 2.5], [1.0, 3.0, -1.0],
                                                         period=3))
    assert lazy.log.counters.fallbacks == 1
    assert [r.reason for r in lazy.log if r.backend == "numpy"] == [
        "fallback: interp not lowered"]


def test_on_the_emulated_gpu(cuda):
    rng = np.random.default_rng(2)
    xp, fp = np.sort(rng.standard_normal(12)), rng.standard_normal(12)
    x = rng.standard_normal(300) * 2
    check(lnp.interp(on_cuda(x), on_cuda(xp), on_cuda(fp)), np.interp(x, xp, fp), rtol=0,
          atol=0)
