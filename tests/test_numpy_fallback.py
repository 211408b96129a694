"""lazy.fallback.numpy_fallback: visible, logged, and an error under LAZY_FALLBACK=error."""
from __future__ import annotations

import numpy as np
import pytest

import lazy
from lazy.fallback import numpy_fallback


def test_fallback_runs_numpy_and_logs_one_record(fallback_log):
    x = lazy.asarray(np.array([3.0, 1.0, 2.0], np.float32)) * 2  # pending input
    y = numpy_fallback("sort", np.sort, (x,), {})
    assert isinstance(y, lazy.Tensor) and y.dtype == lazy.float32 and y.device == "cpu"
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0, 6.0])
    recs = [r for r in lazy.log if r.backend == "numpy"]
    assert len(recs) == 1
    rec = recs[0]
    assert rec.reason == "fallback: sort not lowered"
    assert rec.kernel == "fallback_sort" and rec.ops[0].startswith("sort@test_numpy_fallback.py:")
    assert rec.where.startswith("test_numpy_fallback.py:")
    assert lazy.log.counters.fallbacks == 1
    causes = [s.cause for s in lazy.log.syncs]
    assert causes == ["fallback: sort", "fallback: sort"]  # the input's kernel, then NumPy


def test_fallback_error_mode_raises_before_running(monkeypatch):
    monkeypatch.setenv("LAZY_FALLBACK", "error")
    lazy.sync()
    lazy.log.clear()
    x = lazy.asarray(np.arange(4.0)) + 1
    with pytest.raises(lazy.FallbackError, match="argsort"):
        numpy_fallback("argsort", np.argsort, (x,), {})
    assert x._buf.pending and len(lazy.log) == 0
    np.testing.assert_array_equal(x.numpy(), [1, 2, 3, 4])


def test_fallback_containers_kwargs_and_scalars(fallback_log):
    a, b = lazy.asarray(np.arange(3)), lazy.asarray(np.arange(3, 6))
    out = numpy_fallback("concatenate", np.concatenate, ([a, b],), {"axis": 0})
    np.testing.assert_array_equal(out.numpy(), np.arange(6))
    xs, ys = numpy_fallback("meshgrid", np.meshgrid, (a, b), {"indexing": "ij"})
    np.testing.assert_array_equal(xs.numpy(), np.meshgrid(np.arange(3), np.arange(3, 6),
                                                          indexing="ij")[0])
    assert numpy_fallback("array_equal", np.array_equal, (a, a), {}) is True
    n = numpy_fallback("count_nonzero", np.count_nonzero, (a,), {})
    assert isinstance(n, lazy.Tensor) and n.shape == () and n.item() == 2
    u = numpy_fallback("unique_counts", np.unique_counts, (lazy.asarray(np.array([2, 1, 2])),),
                       {})
    assert type(u).__name__ == "UniqueCountsResult"
    np.testing.assert_array_equal(u.values.numpy(), [1, 2])
    np.testing.assert_array_equal(u.counts.numpy(), [1, 2])
    assert lazy.log.counters.fallbacks == 5


def test_fallback_result_is_a_copy_not_a_view_of_the_input(fallback_log):
    base = np.arange(4.0)
    x = lazy.asarray(base)
    y = numpy_fallback("flip", np.flip, (x,), {})
    y[0] = 100.0
    np.testing.assert_array_equal(base, [0, 1, 2, 3])
    np.testing.assert_array_equal(y.numpy(), [100, 2, 1, 0])


def test_fallback_unsupported_result_dtype_is_a_type_error(fallback_log):
    x = lazy.asarray(np.arange(3))
    with pytest.raises(TypeError, match="unsupported dtype"):
        numpy_fallback("astype_u8", lambda a: a.astype(np.uint8), (x,), {})


@pytest.mark.parametrize("call, shape", [
    (lambda xp, t, o: np.median(t, out=o), ()),
    (lambda xp, t, o: xp.median(t, out=o), ()),
    (lambda xp, t, o: xp.median(t, None, o), ()),            # out= by position
    (lambda xp, t, o: np.percentile(t, [10, 50], out=o), (2,)),
    (lambda xp, t, o: np.fix(t, out=o), (4,)),
    (lambda xp, t, o: np.fix(t, out=o[1:]), (5,)),           # into a view: the base changes
    (lambda xp, t, o: np.fix(t[:3], out=o[0]), (2, 3))])      # broadcasts, as NumPy's ufunc
def test_fallback_out_gets_a_lazy_write_and_is_returned(fallback_log, call, shape):
    import lazy.numpy as lnp
    x = np.array([-1.5, 2.5, 3.25, 0.5])
    o_np, o_lz = np.full(shape, 7.0), lnp.full(shape, 7.0)
    expected, got = call(np, x, o_np), call(lnp, lnp.asarray(x), o_lz)
    assert isinstance(got, lazy.Tensor)
    np.testing.assert_array_equal(got.numpy(), np.asarray(expected))
    np.testing.assert_array_equal(o_lz.numpy(), o_np)
    assert (got is o_lz) == (expected is o_np)


def test_fallback_out_keeps_numpys_shape_and_casting_checks(fallback_log):
    import lazy.numpy as lnp
    t = lnp.asarray([1.5, 2.0, 3.0])
    with pytest.raises(ValueError, match="wrong number of dimensions"):
        np.ptp(t, out=lnp.zeros(3))
    with pytest.raises(TypeError, match="Cannot cast"):
        np.fix(t, out=lnp.zeros(3, dtype=lnp.int64))
    with pytest.raises(ValueError, match="wrong number of dimensions"):
        np.ptp(t.numpy(), out=np.zeros(3))
    with pytest.raises(TypeError, match="Cannot cast"):
        np.fix(t.numpy(), out=np.zeros(3, dtype=np.int64))
