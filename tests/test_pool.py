"""Output arrays start on a cache line; those of dead tensors are recycled,
never while anything still sees them."""
import gc

import numpy as np

import lazy
import lazy.numpy as lnp
from scheduler.pool import ALIGN, ALIGN_MIN_BYTES, empty, pool

N = 1 << 19  # 2 MiB of float32: above the pool's minimum size


def compute(x):
    y = x * 3 + 1
    lazy.sync(y)
    return y


def test_dead_output_memory_is_reused(fresh_log):
    pool.clear()
    x = lazy.rand(N)
    y = compute(x)
    address = y._buf.array.ctypes.data
    del y
    gc.collect()
    z = compute(x)
    assert z._buf.array.ctypes.data == address
    np.testing.assert_allclose(z.numpy(), x.numpy() * 3 + 1, rtol=1e-6)


def test_memory_a_user_still_sees_is_never_reused(fresh_log):
    pool.clear()
    x = lazy.rand(N)
    y = compute(x)
    seen = y.numpy()           # a NumPy view of y's memory
    del y
    gc.collect()
    z = x - 5                  # would reuse y's array if it were free
    lazy.sync(z)
    assert not np.shares_memory(seen, z.numpy())
    np.testing.assert_allclose(seen, x.numpy() * 3 + 1, rtol=1e-6)


def test_a_view_of_a_view_still_keeps_memory_from_reuse(fresh_log):
    """NumPy collapses a view's base to the array owning the memory; the aligned
    array must stay that base, or the pool's reference count would miss this view."""
    pool.clear()
    x = lazy.rand(N)
    y = compute(x)
    seen = y.numpy()[::2][1:]
    del y
    gc.collect()
    z = x - 5
    lazy.sync(z)
    assert not np.shares_memory(seen, z.numpy())
    np.testing.assert_allclose(seen, (x.numpy() * 3 + 1)[::2][1:], rtol=1e-6)


def test_large_outputs_start_on_a_cache_line(fresh_log):
    """A (n, 64) float32 output's rows then each hold whole 64-byte lines for the
    streaming stores; NumPy's own large arrays start 16 bytes past one."""
    pool.clear()
    x = lazy.rand(N // 64, 64)
    outs = [x * 2, lnp.sort(x, axis=1), x @ lazy.ones((64, 64))]
    lazy.sync(*outs)
    outs.append(x + 1)  # a recycled array is one of these: still aligned
    del outs[0]
    gc.collect()
    lazy.sync(outs[-1])
    for y in outs:
        assert y._buf.array.ctypes.data % ALIGN == 0
    for size in (ALIGN_MIN_BYTES // 8, ALIGN_MIN_BYTES // 8 + 3, 10 ** 6 + 1):
        a = empty(size, np.dtype(np.float64))
        assert a.shape == (size,) and a.dtype == np.float64 and a.flags.writeable
        assert a.ctypes.data % ALIGN == 0
    assert empty(7, np.dtype(np.int32)).shape == (7,)


def test_pool_can_be_turned_off(fresh_log, monkeypatch):
    monkeypatch.setenv("LAZY_POOL_MB", "0")
    pool.clear()
    x = lazy.rand(N)
    y = compute(x)
    del y
    gc.collect()
    assert pool.take(N, np.dtype(np.float32)) is None


def test_give_reentered_by_a_finalizer_does_not_deadlock(monkeypatch):
    """`give` runs from weakref finalizers and allocates under its lock; a garbage
    collection there can run another buffer's finalizer, which calls `give` again on
    the same thread (it used to block forever on a non-reentrant lock)."""
    import threading
    from scheduler.pool import Pool
    p = Pool()
    outer, inner = np.empty(1 << 18), np.empty(1 << 18)
    real_limit = Pool.limit

    def limit():
        if not hasattr(limit, "entered"):
            limit.entered = True
            p.give(inner)  # what a collection inside give would do
        return real_limit()
    monkeypatch.setattr(p, "limit", limit)
    worker = threading.Thread(target=p.give, args=(outer,), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert not worker.is_alive(), "give deadlocked when re-entered"
    assert p._bytes == outer.nbytes + inner.nbytes
