"""The op-build fast path keeps every behaviour: where ops were built, live
tensors, readers of buffers, cached checks and promotion, constants.

docs/performance_history.md ("Op-build overhead") says what the fast path does and
what it costs; these tests pin what it must not change.
"""
from __future__ import annotations

import copy
import gc
import pickle
import sys
import warnings

import numpy as np
import pytest

import lazy
from lazy import runtime
from scheduler.dtypes import ALL, float32, float64
from scheduler.view import View

pytestmark = pytest.mark.usefixtures("fresh_log")


def _build_in_a_loop():
    """Ops built on one line of a frame that runs on: each keeps its own line."""
    x = lazy.asarray(np.arange(4, dtype=np.float32))
    out = []
    for i in range(2):
        out.append(x * 2.0 + i)  # the ops' line
        line = sys._getframe().f_lineno - 1
    sum(range(3))  # the frame moves on before anything formats a location
    return out, line


def test_location_is_the_users_line_when_the_op_was_built():
    (y0, y1), line = _build_in_a_loop()
    assert y0._buf.node.where == f"test_op_build.py:{line}"
    assert y1._buf.node.op == "add" and y1._buf.node.where == f"test_op_build.py:{line}"
    const = y1._buf.node.srcs[1][0].node
    assert const.op == "const" and const.where == f"test_op_build.py:{line}"
    lazy.sync(y1)
    (rec,) = list(lazy.log)
    assert rec.ops == (f"mul@test_op_build.py:{line}", f"add@test_op_build.py:{line}")
    np.testing.assert_array_equal(y1.numpy(), np.arange(4, dtype=np.float32) * 2 + 1)


def test_build_errors_are_raised_every_time_with_their_message():
    a, b = lazy.ones(2, 3), lazy.ones(4)
    for _ in range(2):  # a failed check is never cached as a plan
        with pytest.raises(ValueError, match=r"\(2, 3\) \(4,\)"):
            a + b
        with pytest.raises(TypeError, match="neg"):
            -lazy.ones(3, dtype=lazy.bool)
    with pytest.raises(OverflowError):
        lazy.ones(3, dtype=lazy.int32) + 2**40


def test_same_signature_different_values_and_layouts():
    """Plans are shared per (op, dtypes, shapes); views and values are per op."""
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = lazy.asarray(base)
    for view, ref in ((x, base), (x.T.T, base), (x[:, ::-1], base[:, ::-1])):
        got = view + lazy.asarray(np.ones(4, np.float32))
        np.testing.assert_array_equal(got.numpy(), ref + 1)
    for value in (0.1, -0.0, 3.5e38, float("nan")):  # rounded to float32 as NumPy does
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # both overflow 3.5e38 to inf
            ref = np.float32(value)
            got = (lazy.ones(1) * value).numpy()[0]
        assert (got == ref or np.isnan(ref) and np.isnan(got)) and \
            np.signbit(got) == np.signbit(ref)


def test_float32_constant_overflow_warns_like_numpy():
    with pytest.warns(RuntimeWarning, match="overflow"):
        y = lazy.ones(2) * 1e300
    assert np.isinf(y.numpy()).all()


def test_live_tensors_are_synced_in_creation_order_after_ids_are_reused():
    xs = [lazy.arange(3) + i for i in range(6)]
    del xs[1], xs[2]  # dead storages: their ids may be reused by the next ones
    xs += [lazy.arange(3) * 10 + i for i in range(4)]
    pending = runtime.live_pending()
    assert pending == [x._buf for x in xs]
    lazy.sync()
    assert all(not x._buf.pending for x in xs)
    del xs
    gc.collect()
    assert runtime.live_pending() == []


def test_a_full_sync_forgets_the_storages_that_died():
    """After many storages lived at once and died, the table of live ones
    shrinks at the next `lazy.sync()`, not only when it grows again: every
    full sync walks it (50,000 dead entries made each one take 2.7 ms)."""
    xs = [lazy.arange(3) + i for i in range(3000)]
    lazy.sync()
    keep = xs[::1000]
    del xs
    gc.collect()
    assert len(runtime._live) >= 3000  # the dead ones are still listed
    y = keep[0] * 2
    lazy.sync()
    assert len(runtime._live) <= 10 and runtime._sweep_at == 1024
    assert {id(r()) for r in runtime._live.values()} >= {id(t._storage) for t in [*keep, y]}
    assert y.numpy().tolist() == [0, 2, 4]


def test_readers_are_weak_and_counted_once():
    x = lazy.arange(5)
    buf = x._buf
    assert buf.live_readers() == []
    y = x + 1
    assert buf.live_readers() == [y._buf.node]
    keep = [x * i for i in range(100)]  # a list of readers, swept as it grows
    del y
    assert len(buf.live_readers()) == 100
    for _ in range(1000):
        x + 2  # a reader dropped at once: swept once the list doubles
    assert len(buf.readers) < 200
    node = keep[0]._buf.node
    buf.add_reader(node)  # as CSE re-adds a rewired node
    assert len(buf.live_readers()) == 100
    del keep, node
    assert buf.live_readers() == []
    z = x - 1  # the only reader was dropped: the next one replaces it
    assert buf.live_readers() == [z._buf.node]


def test_dtypes_are_singletons_through_copies_and_pickles():
    for d in ALL:
        assert copy.deepcopy(d) is d and pickle.loads(pickle.dumps(d)) is d
        assert d.np == np.dtype(d.name)
    assert float32 == lazy.float32 and float32 is not float64 and float32 != float64


def test_dtypes_compare_print_and_call_as_numpy_dtypes():
    """What NumPy code does with `x.dtype` (it runs unchanged under `python -m lazy`)."""
    import lazy.numpy as lnp
    t = lazy.asarray(np.arange(3, dtype=np.float32))
    for same in ("float32", "f4", np.float32, np.dtype("float32")):
        assert t.dtype == same and not (t.dtype != same)
    for other in ("float64", np.int32, None, 3, "no such dtype", lazy.float64):
        assert t.dtype != other and not (t.dtype == other)
    assert lazy.int64 == int and lazy.float64 == float and lazy.bool == bool
    assert str(t.dtype) == f"{t.dtype}" == "float32" and repr(t.dtype) == "lazy.float32"
    assert np.dtype(lazy.int32) == np.int32 and np.zeros(2, lazy.int64).dtype == np.int64
    assert {lazy.float32: 1}[t.dtype] == 1  # still hashed by identity
    assert t.dtype.type is np.float32 and t.dtype.char == "f" and t.dtype.str == "<f4"
    s = lnp.float32(1.5)
    assert type(s) is np.float32 and s == 1.5 and type(lnp.bool(0)) is np.bool_
    c = lnp.int64(t)
    assert isinstance(c, lazy.Tensor) and c.dtype == lazy.int64 and c.tolist() == [0, 1, 2]
    assert lnp.float64(np.arange(2)).dtype == np.float64  # an ndarray stays one, as in NumPy
    assert lnp.issubdtype(t.dtype, lnp.floating) and not lnp.issubdtype(t, lnp.integer)
    assert lnp.issubdtype(lazy.int32, np.signedinteger) and lnp.issubdtype("int64", lnp.number)
    with pytest.raises(AttributeError, match="float16"):
        lnp.float16


def test_shared_contiguous_views_hold_python_ints():
    v = View.contiguous((np.int64(2), np.int64(3)))
    assert v == View((2, 3), (3, 1)) and all(type(n) is int for n in v.shape + v.strides)
    assert View.contiguous((2, 3)) is View.contiguous([2, 3])
    assert View.contiguous((2, 3), 5) == View((2, 3), (3, 1), 5)
    assert View.filled((2, 3)) == View((2, 3), (0, 0), 0)
