"""bincount (lazy/counting.py, cpu_backend/histogram.py) against NumPy's:
counts and weight sums over random data, both the one-thread and the
per-thread-histogram paths, NumPy's errors at the call, the one sync for
the length, the deferred count fusing with what reads it, and the
emulated GPU (CuPy's bincount)."""
from __future__ import annotations

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
             ((xs,), {"minlength": -1}, ValueError, "must not be negative"),
             ((xs,), {"minlength": 2.5}, TypeError, "minlength must be an int")]
    for args, kw, kind, message in cases:
        with pytest.raises(kind):
            np.bincount(*args, **kw)
        with pytest.raises(kind, match=message):
            lnp.bincount(lazy.asarray(args[0]), **kw)
    assert lnp.bincount(x).shape == (4,)


def test_one_sync_for_the_length_then_a_deferred_kernel():
    """x is computed by a kernel; bincount syncs it once (its min and max)
    and builds a node; the count runs at the next sync, logged as an extern
    LLVM kernel, and what reads it fuses after it."""
    a = lazy.asarray(np.arange(50))
    x = (a * 7) % 11
    lazy.log.clear()
    counts = lnp.bincount(x, minlength=12)
    assert [s.cause for s in lazy.log.syncs] == ["implicit: bincount"]
    assert counts._buf.pending and counts.shape == (12,)
    y = counts * 2 + 1
    lazy.sync(y)
    last = [k for k in lazy.log if k.sync_id == lazy.log.syncs[-1].id]
    assert [k.kernel.split("_")[0] for k in last] == ["bincount", "e1"]
    assert last[0].backend == "llvm" and "a histogram per thread" in last[0].reason
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
