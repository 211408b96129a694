"""`np.<ufunc>.at` on a tensor: NumPy's unbuffered update (a repeated index
is updated once per occurrence) as a logged NumPy fallback whose result is
written back lazily. Compared exactly with NumPy's own `at` on the same
data; views and pending readers of the tensor are checked for program
order, and a failing call for leaving the tensor as it was."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import lazy
import lazy.numpy as lnp

BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]


@settings(max_examples=60, deadline=None,  # the fixture only sets an environment variable
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(BINARY + ["negative"]),
       dtype=st.sampled_from([np.float64, np.float32, np.int64, np.int32]),
       shape=st.sampled_from([(7,), (3, 4)]),
       data=st.data())
def test_at_matches_numpy_with_repeated_indices(fallback_log, name, dtype, shape, data):
    """Indices with repeats and negatives, values as a number, a list or a
    tensor: the same result as NumPy's `at` on a copy, through `np.` and
    `lazy.numpy.`."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a = rng.integers(-9, 10, shape).astype(dtype)
    n = data.draw(st.integers(0, 12))
    idx = rng.integers(-shape[0], shape[0], n)
    values = rng.integers(-4, 5, (n,) + shape[1:]).astype(dtype)
    form = data.draw(st.sampled_from(["tensor", "list", "number"]))
    b = {"tensor": lnp.asarray(values), "list": values.tolist(),
         "number": dtype(3)}[form]
    operands = () if name == "negative" else (b,)
    expected = a.copy()
    t = lnp.asarray(a.copy())
    via = data.draw(st.sampled_from([np, lnp]))
    on_host = tuple(values if form == "tensor" else x for x in operands)
    try:
        getattr(np, name).at(expected, idx, *on_host)
    except ValueError as e:  # an empty list of values for rows of 4: NumPy refuses
        with pytest.raises(type(e)):
            getattr(via, name).at(t, idx, *operands)
        np.testing.assert_array_equal(t.numpy(), a)
        return
    getattr(via, name).at(t, idx, *operands)
    got = t.numpy()
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_views_and_pending_readers_see_it_in_program_order(fallback_log):
    a = np.arange(8.0)
    t = lnp.asarray(a.copy())
    before = t * 1          # pending: reads t's values before the update
    view = t[2:6]
    np.add.at(t, [2, 2, 3], 10.0)
    after = view * 1        # built after: reads the updated values
    np.add.at(a, [2, 2, 3], 10.0)
    np.testing.assert_array_equal(before.numpy(), np.arange(8.0))
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(view.numpy(), a[2:6])
    np.testing.assert_array_equal(after.numpy(), a[2:6])


def test_into_a_view_updates_its_base(fallback_log):
    a = np.arange(12.0).reshape(3, 4)
    t = lnp.asarray(a.copy())
    np.multiply.at(t[:, 1:], ([0, 0, 2], [1, 1, 0]), 2.0)
    np.multiply.at(a[:, 1:], ([0, 0, 2], [1, 1, 0]), 2.0)
    np.testing.assert_array_equal(t.numpy(), a)


def test_an_index_out_of_bounds_raises_and_writes_nothing(fallback_log):
    t = lnp.asarray(np.arange(5.0))
    pending = t + 1
    with pytest.raises(IndexError, match="out of bounds"):
        np.add.at(t, [0, 9], 1.0)
    np.testing.assert_array_equal(t.numpy(), np.arange(5.0))
    np.testing.assert_array_equal(pending.numpy(), np.arange(5.0) + 1)


def test_it_is_logged_as_a_fallback_and_refused_under_strict_fallback(monkeypatch,
                                                                      fallback_log):
    t = lnp.asarray(np.zeros(4))
    np.add.at(t, [1, 1], 1.0)
    assert [r.reason for r in lazy.log if r.backend == "numpy"] == ["fallback: add.at not lowered"]
    assert lazy.log.counters.fallbacks == 1
    monkeypatch.setenv("LAZY_FALLBACK", "error")
    with pytest.raises(lazy.FallbackError, match="add.at"):
        np.add.at(t, [0], 1.0)
    np.testing.assert_array_equal(t.numpy(), [0.0, 2.0, 0.0, 0.0])


def test_on_cuda_the_write_back_stays_on_the_device(cuda, fallback_log):
    """On device "cuda" (CuPy emulated, tests/cuda_lazy_helpers.py) the
    host copy is written back into the device tensor; so is a fallback's
    `out=` (both raised a device-mixing ValueError before 2026-11-22)."""
    from cuda_lazy_helpers import on_cuda
    a = np.arange(6.0)
    t = on_cuda(a.copy())
    np.add.at(t, [1, 1, 4], 2.0)
    np.add.at(a, [1, 1, 4], 2.0)
    assert t.device == "cuda"
    np.testing.assert_array_equal(t.numpy(), a)
    out = on_cuda(np.zeros(6))
    np.cumsum(t, out=out)
    assert out.device == "cuda"
    np.testing.assert_array_equal(out.numpy(), np.cumsum(a))
