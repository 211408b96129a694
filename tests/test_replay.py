"""Replays (scheduler/replay.py): a schedule of plain CPU kernels that ran in
full once is run again by binding the new graph's buffers straight to its
kernels. It must compute and log exactly what the full path does, and
schedules it cannot serve must keep taking the full path."""
import numpy as np
import pytest

import lazy
import scheduler.realize as realize
from scheduler.replay import replays

pytestmark = pytest.mark.usefixtures("fresh_log")

N = 1 << 19  # 2 MiB of float32: split across threads, and above the memory pool's minimum


def program(x, y):
    """Two kernels: a row reduction, then an elementwise kernel reading it."""
    m = x.max(axis=1, keepdims=True)
    return lazy.exp(x - m) * y, (x * 2).sum(axis=1)


def reference(x, y):
    return np.exp(x - x.max(axis=1, keepdims=True)) * y, (x * 2).sum(axis=1)


def run(seed, monkeypatch=None):
    rng = np.random.default_rng(seed)
    xn = rng.standard_normal((N // 64, 64)).astype(np.float32)
    yn = rng.standard_normal((N // 64, 64)).astype(np.float32)
    a, b = program(lazy.asarray(xn), lazy.asarray(yn))
    lazy.sync(a, b)
    want_a, want_b = reference(xn, yn)
    np.testing.assert_allclose(a.numpy(), want_a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.numpy(), want_b, rtol=1e-5, atol=1e-4)
    return a, b


def records_of_last_sync():
    sid = lazy.log.syncs[-1].id
    return [k for k in lazy.log if k.sync_id == sid]


def no_full_path(monkeypatch):
    """Make the full path of a schedule-cache hit fail if it is taken."""
    def fail(*a, **k):
        raise AssertionError("the full path ran where a replay should have")
    monkeypatch.setattr(realize, "instantiate", fail)


def test_a_seen_schedule_replays_and_logs_as_the_full_path(monkeypatch):
    run(0)                                   # miss: planned, run in full, replay kept
    full = records_of_last_sync()
    run(1)                                   # hit: replayed
    no_full_path(monkeypatch)
    run(2)                                   # hit: replayed, instantiate never called
    replayed = records_of_last_sync()
    assert lazy.log.syncs[-1].schedule == "hit"
    assert len(replayed) == len(full) == 3  # max, then exp(x - m) * y; the sum
    for f, r in zip(full, replayed):
        assert (r.kernel, r.ops, r.device, r.backend, r.reason, r.nbytes) == \
            (f.kernel, f.ops, f.device, f.backend, f.reason, f.nbytes)
        assert r.cache == "hit" and r.compile_ms == 0.0
    assert lazy.log.syncs[-1].kernels == 3


def test_replayed_outputs_are_recycled_when_dropped(monkeypatch):
    import gc

    from scheduler.pool import pool
    run(0)
    run(1)
    no_full_path(monkeypatch)
    pool.clear()
    a, b = run(2)
    address, size = a._buf.array.ctypes.data, a._buf.size
    del a, b
    gc.collect()
    back = pool.take(size, np.dtype(np.float32))   # the dead result's memory is in the pool
    assert back is not None and back.ctypes.data == address


def test_writes_and_random_scalars_take_the_full_path():
    for seed in range(3):
        x = lazy.asarray(np.arange(N, dtype=np.float32))
        x[::2] *= 3                          # a write: in place or a copy, per run
        lazy.manual_seed(seed)
        r = lazy.rand(N)                     # run-time scalars: seed, counter
        y = x + r
        lazy.sync(y)
        want = np.arange(N, dtype=np.float32)
        want[::2] *= 3
        np.testing.assert_allclose(y.numpy(), want + r.numpy(), rtol=1e-6)
    names = [rs.name for r in replays.entries() for rs in r.steps]
    assert not any("scatter" in n or "philox" in n for n in names), names


def test_a_failing_replayed_kernel_names_its_ops_and_loses_nothing(monkeypatch):
    replays.clear()
    run(0)
    run(1)
    keep = lazy.asarray(np.ones(4, np.float32)) + 1     # pending, unrelated
    replay, = [r for r in replays.entries() if len(r.steps) == 3]
    backend = replay.steps[0].choice.backend

    def broken(*a, **k):
        raise RuntimeError("injected")
    monkeypatch.setattr(backend, "run", broken)
    rng = np.random.default_rng(9)
    x = lazy.asarray(rng.standard_normal((N // 64, 64)).astype(np.float32))
    a, b = program(x, x)
    with pytest.raises(realize.KernelError, match=r"kernel .* failed: RuntimeError: injected "
                                                   r"\(ops built at .*test_replay.py"):
        lazy.sync(a, b)
    assert a._buf.pending and b._buf.pending
    monkeypatch.undo()
    np.testing.assert_allclose(keep.numpy(), 2.0)
    want_a, want_b = reference(x.numpy(), x.numpy())
    np.testing.assert_allclose(a.numpy(), want_a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.numpy(), want_b, rtol=1e-5, atol=1e-4)


def test_a_cuda_schedule_replays_and_logs_as_the_full_path(cuda):
    """CUDA kernels replay too (the emulated device here, tests/cuda_lazy_helpers.py):
    the same records as the full path, device memory out, nothing re-planned."""
    hosts = [np.random.default_rng(s).standard_normal((64, 33)).astype(np.float32)
             for s in range(3)]
    xs = [lazy.tensor(xn, device="cuda").sync() for xn in hosts]  # transfers: full path

    def step(x):
        y = lazy.exp(x - x.max(axis=1, keepdims=True)) * 2
        lazy.sync(y)
        return y, records_of_last_sync()
    (y0, full), (y1, _) = step(xs[0]), step(xs[1])
    with pytest.MonkeyPatch.context() as mp:
        no_full_path(mp)
        y2, replayed = step(xs[2])
    for y, xn in zip((y0, y1, y2), hosts):
        assert type(y._buf.array) is type(xs[0]._buf.array)  # device memory
        np.testing.assert_allclose(y.numpy(), np.exp(xn - xn.max(axis=1, keepdims=True)) * 2,
                                   rtol=1e-5)
    assert len(replayed) == len(full) == 2  # the row max, then exp(x - m) * 2
    for f, r in zip(full, replayed):
        assert (r.kernel, r.ops, r.device, r.backend, r.reason, r.nbytes) == \
            (f.kernel, f.ops, "cuda", "cuda", f.reason, f.nbytes)
        assert r.cache == "hit" and r.compile_ms == 0.0
    # the replayed launches' plans and packed arguments are kept by the backend
    replay = [r for r in replays.entries() if r.steps[0].choice.backend.name == "cuda"][-1]
    kept = replay.steps[0].choice.backend._plans.held()
    assert all(any(launch is s.launch for launch in kept) for s in replay.steps)
