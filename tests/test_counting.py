"""bincount (lazy/counting.py, cpu_backend/histogram.py) against NumPy's:
counts and weight sums over random data, both the one-thread and the
per-thread-histogram paths, NumPy's errors at the call, the one sync for
the length, the deferred count fusing with what reads it, and the
emulated GPU (CuPy's bincount)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazy
import lazy.numpy as lnp
from cuda_lazy_helpers import check, on_cuda, records


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(["int64", "int32", "bool"]),
       n=st.sampled_from([0, 1, 17, 1000, 300_000]),
       high=st.sampled_from([1, 5, 300, 20_000]),
       weights=st.sampled_from([None, "float64", "float32", "int32"]),
       minlength=st.sampled_from([0, 3, 40_000]), seed=st.integers(0, 2**16))
def test_matches_numpy(dtype, n, high, weights, minlength, seed):
    """300,000 values into up to 300 bins take the per-thread histograms;
    the others one thread (small, or bins as many as the values)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, high, n).astype(dtype)
    w = None if weights is None else (rng.standard_normal(n) * 10).astype(weights)
    got = lnp.bincount(lazy.asarray(x), None if w is None else lazy.asarray(w), minlength)
    want = np.bincount(x, w, minlength)
    assert got.dtype.name == want.dtype.name and got.shape == want.shape
    if w is None:
        np.testing.assert_array_equal(got.numpy(), want)
    else:  # each thread's share summed, then the shares: NumPy's terms, grouped
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("weighted", [False, True])
def test_per_thread_histograms(weighted):
    """Enough values for every thread to count into a histogram of its own
    (cpu_backend/histogram.py), the histograms then summed."""
    rng = np.random.default_rng(5)
    x = rng.integers(0, 200, 400_000)
    w = rng.standard_normal(x.size) if weighted else None
    got = lazy.bincount(lazy.asarray(x), None if w is None else lazy.asarray(w))
    np.testing.assert_allclose(got.numpy(), np.bincount(x, w), rtol=1e-12, atol=1e-9)


def test_errors_at_the_call():
    """NumPy's errors, of NumPy's kinds, raised where bincount is called."""
    xs = np.array([0, 3, 1])
    x = lazy.asarray(xs)
    cases = [((np.array([1, -1, 2]),), {}, ValueError, "must have no negative elements"),
             ((np.zeros((2, 2), np.int64),), {}, ValueError, "1-D"),
             ((np.array([1.0]),), {}, TypeError,
              "Cannot cast array data from dtype\\('float64'\\) to dtype\\('int64'\\)"),
             ((xs,), {"weights": [1.0, 2.0]}, ValueError, "same length"),
             ((xs,), {"minlength": -1}, ValueError, "minlength must be non-negative"),
             ((xs,), {"minlength": 2.5}, TypeError, "minlength must be an int")]
    for args, kw, kind, message in cases:
        with pytest.raises(kind):
            np.bincount(*args, **kw)
        with pytest.raises(kind, match=message):
            lnp.bincount(lazy.asarray(args[0]), **kw)
    assert lnp.bincount(x).shape == (4,)


def test_one_sync_for_the_length_then_a_deferred_kernel():
    """bincount syncs x's min and max once (one kernel: sibling reductions,
    x computed inside it, not written) and builds a node; the count runs at
    the next sync after x's kernel, logged as an extern LLVM kernel, and
    what reads it fuses after it."""
    a = lazy.asarray(np.arange(50))
    x = (a * 7) % 11
    lazy.log.clear()
    counts = lnp.bincount(x, minlength=12)
    assert [s.cause for s in lazy.log.syncs] == ["implicit: bincount"]
    assert [k.ops for k in lazy.log] == [tuple(f"{op}@test_counting.py:{line}" for op, line in
                                         (("mul", 76), ("mod", 76), ("max", 78), ("min", 78)))]
    assert counts._buf.pending and counts.shape == (12,)
    y = counts * 2 + 1
    lazy.sync(y)
    last = [k for k in lazy.log if k.sync_id == lazy.log.syncs[-1].id]
    assert [k.kernel.split("_")[0] for k in last] == ["e0", "bincount", "e2"]
    assert last[1].backend == "llvm" and "a histogram per thread" in last[1].reason
    want = np.bincount((np.arange(50) * 7) % 11, minlength=12) * 2 + 1
    np.testing.assert_array_equal(y.numpy(), want)
    # PyTorch's name, and NumPy's function on a tensor: the same, never a fallback
    np.testing.assert_array_equal(lazy.bincount(x).numpy(), want[:11] // 2)
    assert isinstance(np.bincount(x), lazy.Tensor)
    assert lazy.log.counters.fallbacks == 0


def test_on_the_emulated_gpu(cuda):
    rng = np.random.default_rng(3)
    x, w = rng.integers(0, 9, 500), rng.random(500)
    lazy.log.clear()
    check(lnp.bincount(on_cuda(x)), np.bincount(x))
    check(lnp.bincount(on_cuda(x), on_cuda(w), minlength=12), np.bincount(x, w, 12))
    assert [r.backend for r in records("cupy")] == ["cupy", "cupy"]
    assert all("CuPy's bincount" in r.reason for r in records("cupy"))


# -- histogram: equal bins on top of bincount ------------------------------------------------
RANGES = [None, (-20, 20), (-2.5, 7.25), (np.float32(-1), np.float32(3)), (3, 3)]


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from(["float32", "float64", "int32", "int64"]),
       n=st.sampled_from([0, 1, 1000, 100_000]), bins=st.sampled_from([1, 7, 100]),
       range_=st.sampled_from(RANGES), weights=st.sampled_from([None, "float64", "float32"]),
       density=st.booleans(), same=st.booleans(), seed=st.integers(0, 2**16))
def test_histogram_matches_numpy(dtype, n, bins, range_, weights, density, same, seed):
    """Counts (exactly), or weight sums and densities (within rounding: NumPy
    adds float32 weights per block of 65536), and NumPy's own edges, with
    NumPy's dtypes: data spread wide, or all one value (the range widened
    by 0.5 each way)."""
    rng = np.random.default_rng(seed)
    a = np.full(n, 4).astype(dtype) if same else (rng.standard_normal(n) * 9).astype(dtype)
    w = None if weights is None else rng.random(n).astype(weights)
    kw = {"bins": bins, "range": range_, "density": density}
    got_c, got_e = lnp.histogram(lazy.asarray(a), weights=None if w is None else lazy.asarray(w),
                                 **kw)
    with np.errstate(invalid="ignore", divide="ignore"):  # density of an empty histogram
        want_c, want_e = np.histogram(a, weights=w, **kw)
    assert got_c.dtype.name == want_c.dtype.name and got_e.dtype.name == want_e.dtype.name
    np.testing.assert_array_equal(got_e.numpy(), want_e)
    if want_c.dtype.kind == "i":
        np.testing.assert_array_equal(got_c.numpy(), want_c)
    else:
        np.testing.assert_allclose(got_c.numpy(), want_c, rtol=2e-6, atol=1e-9, equal_nan=True)


def test_histogram_errors_fallbacks_and_syncs(fallback_log):
    """NumPy's errors at the call; bins given as edges or a rule, and bool
    data, are logged NumPy fallbacks; with a range there is no sync before
    the one that asks for the counts, without one a single sync for it."""
    a = np.array([0.5, 1.5, 2.5, np.nan])
    t = lazy.asarray(a)
    errors = [({"bins": 0}, "must be positive"),
              ({"range": (3, 1)}, "max must be larger than min"),
              ({"range": (0, np.inf)}, "supplied range of \\[0, inf\\] is not finite"),
              ({}, "autodetected range of \\[nan, nan\\] is not finite"),
              ({"range": (1, 1 + 1e-15), "bins": 100}, "Too many bins for data range"),
              ({"weights": [1.0]}, "same shape")]
    for kw, message in errors:
        with pytest.raises(ValueError):
            np.histogram(a, **kw)
        with pytest.raises(ValueError, match=message):
            lnp.histogram(t, **kw)
    for kw, data in (({"bins": "auto"}, a[:3]), ({"bins": [0, 1, 3]}, a[:3]),
                     ({}, np.array([True, False, True]))):
        with warnings.catch_warnings():  # NumPy's: "Converting input from bool to uint8"
            warnings.simplefilter("ignore", RuntimeWarning)
            got = lnp.histogram(lazy.asarray(data), **kw)
            np.testing.assert_array_equal(got[0].numpy(), np.histogram(data, **kw)[0])
    assert lazy.log.counters.fallbacks == 3
    lazy.log.clear()
    c, e = lnp.histogram(t, bins=3, range=(0, 3))  # the NaN is outside every bin
    assert lazy.log.syncs == [] and c._buf.pending
    np.testing.assert_array_equal(c.numpy(), [1, 1, 1])
    assert [k.kernel.split("_")[0] for k in lazy.log][-1] == "bincount"
    lazy.log.clear()
    lnp.histogram(lazy.asarray(a[:3]) * 2, bins=4)
    assert [s.cause for s in lazy.log.syncs] == ["implicit: histogram"]


def test_histogram_on_the_emulated_gpu(cuda):
    rng = np.random.default_rng(4)
    a = rng.standard_normal(3000)
    lazy.log.clear()
    c, e = lnp.histogram(on_cuda(a), bins=9, range=(-2, 2))
    want_c, want_e = np.histogram(a, bins=9, range=(-2, 2))
    check(c, want_c)
    check(e, want_e)
    assert [r.backend for r in records("cupy")] == ["cupy"]
