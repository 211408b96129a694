"""Deferred execution: nothing runs before a sync; what each sync does."""
import copy
import gc
import pickle
import os
import sys
import warnings
import weakref

import numpy as np
import pytest

import lazy


pytestmark = pytest.mark.usefixtures("fresh_log")


def data(*shape):
    """Ready-made inputs: not random tensors, which are lazy ops themselves
    (their kernels would show in the log this module reads)."""
    return lazy.asarray(np.random.default_rng(0).random(shape, dtype=np.float32))


def test_nothing_runs_before_sync():
    x = data(100)
    y = lazy.exp(x) * 2 + x.sum()
    z = y.reshape(10, 10).T[2:, ::-1].max(axis=0)
    assert len(lazy.log) == 0 and lazy.log.syncs == []
    assert y._buf.pending and z._buf.pending
    lazy.sync()
    assert len(lazy.log) > 0
    assert not y._buf.pending and not z._buf.pending
    assert [s.cause for s in lazy.log.syncs] == ["sync()"]


def test_sync_without_arguments_realizes_every_live_tensor_in_one_schedule():
    x = data(10)
    a, b, c = x + 1, x * 2, lazy.sqrt(x)
    lazy.sync()
    assert len(lazy.log.syncs) == 1
    assert not any(t._buf.pending for t in (a, b, c))


def test_dropped_tensors_are_not_computed():
    x = lazy.rand(10)
    keep = x + 1
    _ = lazy.exp(x)  # rebound below: the exp result dies
    _ = None
    lazy.sync()
    ops = [op.split("@")[0] for k in lazy.log for op in k.ops]
    assert "exp" not in ops and not keep._buf.pending


def test_sync_of_given_tensors_leaves_others_pending():
    x = lazy.rand(10)
    a, b = x + 1, x + 2
    lazy.sync(a)
    assert not a._buf.pending and b._buf.pending
    b.sync()
    assert not b._buf.pending
    np.testing.assert_allclose(b.numpy(), x.numpy() + 2)


@pytest.mark.parametrize("read, cause", [
    (lambda t: t.numpy(), "implicit: numpy()"),
    (lambda t: t.tolist(), "implicit: tolist()"),
    (lambda t: np.asarray(t), "implicit: __array__"),
    (lambda t: repr(t), "implicit: repr"),
    (lambda t: str(t), "implicit: str"),
    (lambda t: t[0].item(), "implicit: item()"),
    (lambda t: bool(t[0]), "implicit: __bool__"),
    (lambda t: float(t[0]), "implicit: __float__"),
    (lambda t: int(t[0]), "implicit: __int__"),
    (lambda t: [1, 2, 3][t[0].astype(lazy.int64) % 2], "implicit: __index__"),
    (lambda t: f"{t.sum():.3f}", "implicit: format"),
    (lambda t: 3.0 in t, "implicit: __contains__"),
    (lambda t: pickle.dumps(t), "implicit: pickle"),
    (lambda t: copy.deepcopy(t), "implicit: pickle"),  # where: this file, not copy.py
])
def test_reading_values_syncs_implicitly_and_logs_the_cause(read, cause):
    t = lazy.arange(4) * 1.5
    read(t)
    (s,) = lazy.log.syncs
    assert s.cause == cause
    assert s.where.startswith("test_sync.py:")
    assert lazy.log.counters.implicit_syncs == 1


def test_implicit_sync_warn_and_error(monkeypatch):
    t = lazy.arange(3) + 1
    monkeypatch.setenv("LAZY_IMPLICIT_SYNC", "warn")
    with pytest.warns(UserWarning, match=r"implicit sync: numpy\(\) at test_sync.py:\d+") as w:
        t.numpy()
    line = sys._getframe().f_lineno - 1
    # attributed to this line, as the message says, so a filter on the user's module applies
    assert [(os.path.basename(r.filename), r.lineno) for r in w] == [("test_sync.py", line)]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="implicit sync", module="test_sync")
        with pytest.raises(UserWarning):
            (lazy.arange(3) + 3).numpy()
    u = lazy.arange(3) + 2
    monkeypatch.setenv("LAZY_IMPLICIT_SYNC", "error")
    with pytest.raises(lazy.ImplicitSyncError, match="tolist"):
        u.tolist()
    assert u._buf.pending  # nothing was lost
    u.sync()  # an explicit sync is always allowed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert u.tolist() == [2, 3, 4]


def test_pending_graph_cap_syncs_automatically():
    lazy.config.max_pending_nodes = 50
    try:
        x = data(5)
        y = x
        for _ in range(120):
            y = y * 1.0001
    finally:
        lazy.config.max_pending_nodes = None
    causes = [s.cause for s in lazy.log.syncs]
    assert len(causes) >= 2 and all(c.startswith("auto: ") for c in causes)
    assert lazy.log.counters.auto_syncs == len(causes)
    np.testing.assert_allclose(y.numpy(), x.numpy() * 1.0001 ** 120, rtol=1e-4)


def test_tensor_that_cannot_be_computed_does_not_break_automatic_syncs():
    """An automatic sync computes every other pending tensor, warns once at the user's
    line, and leaves the failing one pending: later ops build without error and only
    syncing the failing tensor raises."""
    lazy.config.max_pending_nodes = 5
    try:
        good = lazy.arange(4) * 2
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bad = lazy.ones(2**61) + 1  # 2**63 bytes: no machine can allocate it
            ys = [lazy.arange(3) + i for i in range(20)]
    finally:
        lazy.config.max_pending_nodes = None
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert caught[0].category is RuntimeWarning and caught[0].filename == __file__
    assert "could not be computed" in str(caught[0].message)
    assert "array is too big" in str(caught[0].message)
    assert lazy.log.counters.auto_syncs >= 3
    assert not good._buf.pending and bad._buf.pending
    np.testing.assert_array_equal(good.numpy(), np.arange(4) * 2)
    np.testing.assert_array_equal(ys[-1].numpy(), np.arange(3) + 19)
    with pytest.raises(lazy.KernelError, match="array is too big"):
        bad.sync()
    # The failure's traceback holds the buffer in a reference cycle; collect it,
    # or the next test's `lazy.sync()` (of everything pending) meets it again.
    gone = weakref.ref(bad._buf)
    del bad
    gc.collect()
    assert gone() is None


def test_write_to_a_dropped_tensor_over_shared_memory_still_runs():
    """A write into memory someone else sees (an asarray'd array, a numpy() view)
    is an effect: it runs at the next sync even when every tensor of that storage
    was dropped (a dropped pending result is otherwise never computed)."""
    a = np.zeros(4)
    lazy.asarray(a).add_(1)
    c = np.zeros(4)
    lazy.asarray(c)[1:3] = 5
    t = lazy.asarray(np.zeros(1 << 18))
    view = t.numpy()
    t += 1
    kept = t * 1  # a reader of the middle version
    t += 1
    del t
    lazy.sync()
    np.testing.assert_array_equal(a, np.ones(4))
    np.testing.assert_array_equal(c, [0, 5, 5, 0])
    assert view[0] == 2.0 and kept.numpy()[0] == 1.0
    from lazy import runtime
    assert not runtime._writes  # nothing is held once the writes ran


def test_syncs_from_several_threads_run_each_write_once():
    """Syncs are serialized: two threads syncing the same pending write at once ran
    it twice (x += 1 gave 2), and automatic syncs realizing other threads' tensors
    did the same. Every thread's values must be NumPy's."""
    import threading
    x = lazy.asarray(np.zeros(1 << 20))
    x.sync()
    x += 1
    start = threading.Barrier(4)
    errors = []

    def sync_all():
        start.wait()
        lazy.sync()

    def own_tensors(seed):
        try:
            start.wait()
            for _ in range(5):
                y = lazy.asarray(np.zeros(1000))
                for _ in range(5):
                    y += 1
                if y.numpy()[0] != 5.0:
                    errors.append((seed, y.numpy()[0]))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append((seed, e))
    lazy.config.max_pending_nodes = 3
    try:
        threads = [threading.Thread(target=sync_all) for _ in range(2)] + \
            [threading.Thread(target=own_tensors, args=(i,)) for i in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        lazy.config.max_pending_nodes = None
    assert not errors, errors
    assert x.numpy()[0] == 1.0


def test_chain_of_100k_pending_ops_syncs_without_recursion_error():
    lazy.config.max_pending_nodes = 1_000_000
    try:
        x = lazy.arange(8)
        y = x
        for _ in range(100_000):
            y = y + 1
        lazy.sync(y)
    finally:
        lazy.config.max_pending_nodes = None
    record = lazy.log.syncs[-1]  # the chain, its constant operands and arange; CSE
    assert (record.nodes, record.merged) == (200_001, 99_999)  # keeps one constant
    np.testing.assert_array_equal(y.numpy(), np.arange(8) + 100_000)


def test_no_cyclic_collection_runs_inside_a_sync_and_the_gc_is_restored(monkeypatch):
    """A sync holds the cyclic GC off (full collections walked the whole
    pending graph: 44% of a 100k-op sync); the GC's state is the program's
    again after it, after a failing sync too, and a GC the program turned
    off stays off."""
    import scheduler.realize as realize_mod
    seen = []

    def watch(phase, info):
        if phase == "start":
            seen.append(info["generation"])
    real = realize_mod._run_step

    def collecting(step, *args):
        gc.collect()  # an explicit collect still runs; the threshold-triggered ones do not
        seen.append(gc.isenabled())
        return real(step, *args)
    monkeypatch.setattr(realize_mod, "_run_step", collecting)
    gc.callbacks.append(watch)
    try:
        assert gc.isenabled()
        lazy.sync(lazy.arange(5) + 1)
        assert seen == [2, False] and gc.isenabled()
        gc.disable()
        try:
            lazy.sync(lazy.arange(5) + 2)
            assert not gc.isenabled()
        finally:
            gc.enable()
    finally:
        gc.callbacks.remove(watch)
    monkeypatch.setattr(realize_mod, "_run_step", lambda *a: 1 / 0)
    with pytest.raises(lazy.KernelError):
        lazy.sync(lazy.arange(5) + 3)
    assert gc.isenabled()


def test_error_at_build_time_loses_no_pending_tensor():
    x = lazy.arange(6).reshape(2, 3)
    good = x * 2 + 1
    with pytest.raises(ValueError, match=r"\(2, 3\) \(4,\)"):
        _ = good + lazy.arange(4)
    with pytest.raises(IndexError, match="out of bounds"):
        _ = good[5]
    np.testing.assert_array_equal(good.numpy(), np.arange(6).reshape(2, 3) * 2 + 1)


def test_failing_kernel_keeps_other_pending_tensors_valid(monkeypatch):
    import scheduler.realize as realize_mod
    x = lazy.arange(5)
    first = x + 1
    second = x * 3
    calls = []
    real = realize_mod._run_step

    def flaky(step, *args):
        calls.append(step.name)
        if len(calls) == 2:
            raise OSError("simulated device failure")
        return real(step, *args)

    monkeypatch.setattr(realize_mod, "_run_step", flaky)
    with pytest.raises(lazy.KernelError, match=r"test_sync.py:\d+"):
        lazy.sync(first, second)
    monkeypatch.setattr(realize_mod, "_run_step", real)
    lazy.sync()
    np.testing.assert_array_equal(first.numpy(), np.arange(5) + 1)
    np.testing.assert_array_equal(second.numpy(), np.arange(5) * 3)


def test_explain_runs_nothing_and_shows_llvm_ir():
    x = data(1000, 2)
    y = x[:, 0] ** 2 + x[:, 1] ** 3
    plan = lazy.explain(y)
    assert len(lazy.log) == 0 and y._buf.pending
    (k,) = plan.kernels
    assert k.backend == "llvm" and k.reason and k.ops
    assert "define" in k.source and "fmul" in k.source
    text = str(plan)
    assert k.name in text and "llvm" in text


def test_explain_shows_the_kernels_a_sync_of_one_element_runs():
    """`e = (x * 2)[1, 2]` is one element copied out of the realized
    product (runtime.scheduled); explain showed a kernel `e0_mul_copy` that
    no sync runs."""
    x = data(3, 4)
    e = (x * 2)[1, 2]
    planned = [(k.name, k.ops) for k in lazy.explain(e).kernels]
    e.sync()
    assert planned == [(k.kernel, k.ops) for k in lazy.log] == [("e0_mul", planned[0][1])]


def test_numpy_shares_memory_with_storage_after_sync():
    base = lazy.arange(24, dtype=lazy.float32).reshape(4, 6) + 0
    v = base.T[::2, 1:]
    lazy.sync()
    b, w = base.numpy(), v.numpy()
    assert np.shares_memory(b, w)
    assert w.strides == tuple(s * 4 for s in v.stride())
    np.testing.assert_array_equal(w, b.T[::2, 1:])


def test_asarray_shares_numpy_memory():
    a = np.arange(20.0).reshape(4, 5)[::-1, ::2]
    t = lazy.asarray(a)
    assert np.shares_memory(t.numpy(), a)
    assert t.stride() == (-5, 2)
    np.testing.assert_array_equal(t.numpy(), a)


def test_a_0d_tensor_formats_rounds_and_divmods_as_a_numpy_scalar():
    """`f"{loss:.4f}"`, `round(acc, 3)` and `divmod` on what a NumPy
    reduction returns (a scalar there, a 0-d tensor here)."""
    a = np.array([1.5, 2.25, 3.0])
    m, nm = lazy.asarray(a).mean(), a.mean()
    for spec in (".3f", "e", "", "10.2g"):
        assert format(m, spec) == format(nm, spec)
    assert f"{lazy.asarray(np.array(7)):d}" == "7" and f"{lazy.asarray(np.array(True))}" == "True"
    assert round(m) == round(nm) == 2 and type(round(m)) is int
    assert round(m, 1).item() == round(nm, 1)
    v = lazy.asarray(np.array([0.125, 2.5, -1.5]))
    assert round(v).tolist() == np.round(v.numpy()).tolist()  # n-d: a tensor (PyTorch)
    with pytest.raises(TypeError, match=r"format string '.2f'.*shape \(3,\)"):
        f"{v:.2f}"
    assert f"{v}" == str(v.numpy())
    i = lazy.asarray(np.array([7, -7, 5]))
    for x, y in ((i, 3), (i, -2), (10, i)):
        q, r = divmod(x, y)
        nq, nr = divmod(np.asarray(x.numpy() if isinstance(x, lazy.Tensor) else x),
                        np.asarray(y.numpy() if isinstance(y, lazy.Tensor) else y))
        assert q.tolist() == nq.tolist() and r.tolist() == nr.tolist()


def test_unary_plus_is_a_new_tensor():
    a = lazy.asarray(np.array([1.0, 2.0]))
    b = +a
    b[0] = 9
    assert b is not a and a.tolist() == [1.0, 2.0] and b.tolist() == [9.0, 2.0]
    with pytest.raises(TypeError, match="bool"):
        +lazy.asarray(np.array([True]))


def test_pickled_tensors_keep_values_layout_and_shared_storage():
    """Pickling syncs and stores each storage once: views pickled together
    share one storage again when loaded, with their strides and offsets. A
    pending tensor, or a realized one that a pending op reads, raised
    TypeError (the graph's weak references do not pickle)."""
    base = lazy.asarray(np.arange(12.0).reshape(3, 4))
    reader = base * 2                                   # pending: base has a reader
    views = [base, base.T[1:, ::-1], reader, reader[2, 1:3], base[1, 2]]
    loaded = pickle.loads(pickle.dumps(views))
    for got, want in zip(loaded, views):
        assert (got.shape, got.stride(), got.dtype) == (want.shape, want.stride(), want.dtype)
        assert got._view.offset == want._view.offset
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert loaded[0]._storage is loaded[1]._storage and loaded[2]._storage is loaded[3]._storage
    assert loaded[0]._storage is not base._storage
    loaded[1][0, 0] = -1.0                              # a write through one loaded view...
    assert loaded[0][2, 1].item() == -1.0               # ...shows in the other
    assert base[2, 1].item() == 9.0


def test_copy_shares_the_storage_without_a_sync_and_deepcopy_owns_one():
    t = lazy.asarray(np.arange(4.0)) + 1
    c = copy.copy(t)
    assert c._storage is t._storage and t._buf.pending and not lazy.log.syncs
    d = copy.deepcopy([t, t[1:]])
    assert d[1]._storage is d[0]._storage is not t._storage
    d[0][1] = 0.0
    np.testing.assert_array_equal(d[1].numpy(), [0.0, 3.0, 4.0])
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0, 4.0])


def test_an_element_of_a_constant_read_by_another_pending_op_syncs():
    """`x[0]` of a pending constant, also read by `y`: planning `y` folded the
    element into a constant, and the element copy then found no source
    (ValueError from inside sync)."""
    x = lazy.zeros(8)
    e = x[0]
    y = e + 1
    lazy.sync()
    assert (e.item(), y.item()) == (0.0, 1.0)
