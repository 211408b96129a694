"""Writes into memory the caller's NumPy arrays own: `lazy.asarray` shares
memory (as `torch.from_numpy` does), so in-place writes land in the array,
whether the write goes in place or copies the old values aside, and two
`asarray`s over one array keep program order between them.

Split from test_writes.py (writes through views of lazyrt's own storages).
"""
from __future__ import annotations

import numpy as np
import pytest

import lazy
from conftest import assert_close
from write_helpers import E, write_reasons

pytestmark = pytest.mark.usefixtures("strict_fallback")

def test_asarray_write_reaches_the_numpy_array():
    """asarray shares memory, so an in-place write lands in the array (torch.from_numpy)."""
    a = np.arange(6.0)
    t = lazy.asarray(a)
    t[1:3] = -1
    t += 1
    lazy.sync()
    np.testing.assert_array_equal(a, [1, 0, 0, 4, 5, 6])
    assert_close(t, a)


COPY_PATH_WRITES = [  # (id, write, why the old values are needed)
    ("pending_reader", lambda t: t.__iadd__(1), "pending op"),
    ("shift", lambda t: t.__setitem__(slice(1, None), t[:-1]), "overwrites"),
    ("reversed", lambda t: t.__setitem__(E, t[::-1]), "overwrites"),
]


@pytest.mark.parametrize("name, write, why", COPY_PATH_WRITES, ids=[w[0] for w in COPY_PATH_WRITES])
def test_copy_path_write_still_reaches_shared_memory(name, write, why):
    """A write that must keep the old values copies them aside and writes the memory
    itself: the asarray'd array and an earlier numpy() show it (as NumPy's own array
    would), while an op built before the write reads the old values."""
    a = np.arange(6.0)
    t = lazy.asarray(a)
    seen = t.numpy()
    before = t * 2 if name == "pending_reader" else None
    lazy.log.clear()
    write(t)
    t.sync()  # only t: `before` stays pending, a reader of the old version
    (reason,) = write_reasons()
    assert "; write copy: " in reason and why in reason, reason
    ref = np.arange(6.0)
    write(ref)
    np.testing.assert_array_equal(a, ref)
    np.testing.assert_array_equal(seen, ref)
    assert np.shares_memory(t.numpy(), a)
    if before is not None:
        assert_close(before, np.arange(6.0) * 2)


@pytest.mark.parametrize("source, why", [
    (lambda a, t: a, "; write in place"),
    (lambda a, t: lazy.asarray(a), "the kernel reads elements it overwrites"),
    (lambda a, t: lazy.asarray(t.numpy()), "reading a copy of 1 input(s) sharing its memory")],
    ids=["the_array", "another_asarray", "asarray_of_its_numpy_view"])
def test_write_reading_other_tensor_over_same_memory_matches_numpy(source, why):
    """`t = asarray(a); t[1:] = v[:-1]` with v over t's memory: the shift reads
    the old values, as NumPy's does. The array itself as the value is copied
    when the write is built (an operand); a second `asarray(a)` is a view of
    t's own storage, so the write copies the elements it overwrites; an
    `asarray` of the read-only `t.numpy()` is another storage over the same
    memory, which the kernel reads a copy of."""
    a = np.arange(6.0)
    t = lazy.asarray(a)
    lazy.log.clear()
    t[1:] = source(a, t)[:-1]
    lazy.sync()
    (reason,) = write_reasons()
    assert why in reason, reason
    expected = np.arange(6.0)
    expected[1:] = expected[:-1]
    np.testing.assert_array_equal(a, expected)
    assert_close(t, expected)


def test_asarray_twice_over_one_array_is_one_storage_in_program_order():
    """Two `asarray`s over one array (or part of it) are views of one storage,
    so writes through one and reads through the other keep program order, as
    NumPy's (and torch.from_numpy's) do. They were two storages: a pending
    write through one was not seen by a read through the other."""
    a = np.zeros(4)
    t1, t2 = lazy.asarray(a), lazy.asarray(a)
    t1[0] = 5.0
    np.testing.assert_array_equal(t2.numpy(), [5.0, 0, 0, 0])
    b = np.zeros(4)
    u1, u2 = lazy.asarray(b), lazy.asarray(b[1:])
    u1[1] = 7.0
    y = u2 * 2           # reads the 7
    u1[1] = 9.0          # a later write: y must not see it
    np.testing.assert_array_equal(y.numpy(), [14.0, 0, 0])
    lazy.sync()
    np.testing.assert_array_equal(b, [0, 9.0, 0, 0])
    assert u2._storage is u1._storage


@pytest.mark.parametrize("view", [lambda a: a, lambda a: a[1:, ::-1], lambda a: a.T,
                                  lambda a: a[::2, 1:3], lambda a: a[:, 2]],
                         ids=["same", "reversed", "transposed", "strided", "column"])
def test_writes_through_two_asarrays_of_one_array_match_numpy(view):
    """Alternate writes and reads through `asarray(a)` and `asarray(view(a))`,
    nothing synced in between, against the same steps on NumPy views."""
    base = np.arange(12.0).reshape(3, 4)
    ref = base.copy()
    a = base.copy()
    t, v = lazy.asarray(a), lazy.asarray(view(a))
    rt, rv = ref, view(ref)
    reads = []
    for step in range(3):
        t *= 2.0
        rt *= 2.0
        v += float(step)
        rv += float(step)
        reads.append((v * 1.0, rv.copy()))
        reads.append((t.sum(), rt.sum()))
    for got, want in reads:
        assert_close(got, want)
    lazy.sync()
    np.testing.assert_array_equal(a, ref)


@pytest.mark.parametrize("second", [
    lambda a: lazy.from_dlpack(a), lambda a: lazy.from_dlpack(a[1:]),
    lambda a: lazy.asarray(np.from_dlpack(a)), lambda a: lazy.asarray(a)])
@pytest.mark.parametrize("first", [lambda a: lazy.asarray(a), lambda a: lazy.from_dlpack(a)],
                         ids=["asarray", "from_dlpack"])
def test_memory_exported_through_dlpack_is_the_same_storage(first, second):
    """Every DLPack export has an owner of its own (a capsule), so the owner
    alone did not find the storage: `from_dlpack(a)` twice were two storages
    and a read built before a write through the other saw the write."""
    a = np.arange(4.0)
    t = first(a)
    u = second(a)
    assert u._storage is t._storage
    y = u * 1        # built before the write: the old values
    t += 1
    lazy.sync(t)
    np.testing.assert_array_equal(y.numpy(), np.arange(4.0)[-y.shape[0]:])


def test_two_numpy_views_of_one_torch_tensor_are_one_storage():
    torch = pytest.importorskip("torch")
    tt = torch.arange(4.0, dtype=torch.float64)
    t, u = lazy.asarray(tt.numpy()), lazy.asarray(tt.numpy())  # each a new base object
    y = u * 1
    t += 1
    np.testing.assert_array_equal(y.numpy(), [0, 1, 2, 3])
    lazy.sync()
    assert tt.tolist() == [1, 2, 3, 4]


def test_a_numpy_operand_reads_a_pending_write_into_its_memory():
    """An ndarray operand is read when the op is built, in program order: with
    a lazy write into its memory still pending, that is the written version
    (the operand was copied as the memory still was, before the write)."""
    a = np.arange(4.0)
    t = lazy.asarray(a)
    t[0] = 100.0
    z = lazy.zeros(4, dtype=lazy.float64) + a
    c = lazy.tensor(a)
    t[1] = 50.0      # later: z and c must not see it
    np.testing.assert_array_equal(z.numpy(), [100, 1, 2, 3])
    np.testing.assert_array_equal(c.numpy(), [100, 1, 2, 3])
    c[2] = -1.0      # c is a copy of its own
    lazy.sync()
    np.testing.assert_array_equal(a, [100, 50, 2, 3])
    b = np.arange(4.0)
    s = lazy.asarray(b) * 0 + b   # nothing pending: a copy of the memory now
    b[0] = 9.0
    np.testing.assert_array_equal(s.numpy(), [0, 1, 2, 3])


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_a_write_whose_kernel_fails_keeps_the_arrays_memory(monkeypatch, error):
    """A write that must keep the old values moves them to a copy before its
    kernel compiles; a failed compile (or Ctrl-C) left the tensor on that
    copy, so the retried write never reached the array given to asarray."""
    from cpu_backend.backend import CPUBackend
    real, armed = CPUBackend.compile, [True]

    def compile_once_failing(self, kernel):
        if armed and armed.pop():
            raise error("compile failed")
        return real(self, kernel)
    monkeypatch.setattr(CPUBackend, "compile", compile_once_failing)
    a = np.zeros(8)
    t = lazy.asarray(a)
    keep = t * 1.0   # reads the old values: the write copies them aside
    t += 1.0
    with pytest.raises((lazy.KernelError, KeyboardInterrupt)):
        lazy.sync(t)
    lazy.sync()
    np.testing.assert_array_equal(a, np.ones(8))
    np.testing.assert_array_equal(keep.numpy(), np.zeros(8))
    assert t.numpy().base is not None and np.shares_memory(t.numpy(), a)


def test_asarray_over_other_dtype_or_read_only_memory_is_its_own_storage():
    """Only writeable memory in the same dtype becomes a view of the storage
    that holds it; a read-only array's storage writes to a copy, so sharing
    it would make the second tensor see writes the array never gets."""
    a = np.arange(4.0)
    t = lazy.asarray(a)
    assert lazy.asarray(a.view(np.int64))._storage is not t._storage
    ro = np.arange(4.0)
    ro.flags.writeable = False
    r1, r2 = lazy.asarray(ro), lazy.asarray(ro)
    assert r2._storage is not r1._storage
    r1 += 1
    np.testing.assert_array_equal(r2.numpy(), np.arange(4.0))
    np.testing.assert_array_equal(r1.numpy(), np.arange(4.0) + 1)


def test_asarray_lets_the_memory_go_with_its_last_storage():
    """The table's entry must not keep the array alive once its storage is
    gone; the entry itself goes at the next `asarray`."""
    import gc
    import weakref
    from lazy import host
    a = np.zeros(3)
    key, alive = id(a), weakref.ref(a)
    t = lazy.asarray(a)
    del a
    assert key in host._WRAPPED and alive() is not None  # the storage holds it
    del t
    gc.collect()
    assert alive() is None
    lazy.asarray(np.ones(2))
    assert key not in host._WRAPPED


@pytest.mark.parametrize("name, view", [("strided", lambda a: a[::2]),
                                        ("transposed", lambda a: a.T),
                                        ("reversed", lambda a: a[::-1]),
                                        ("column", lambda a: a[:, 1])])
def test_asarray_of_non_contiguous_array_write_reaches_the_array(name, view):
    """Shared memory (torch.from_numpy also shares non-contiguous arrays) means an
    in-place write lands in the caller's array, whatever its strides."""
    a = np.arange(12.0).reshape(4, 3)
    av = view(a)
    t = lazy.asarray(av)
    assert lazy.shares_memory(t, lazy.asarray(a))
    t[1] = -1
    t += 1
    expected = np.arange(12.0).reshape(4, 3)
    ev = view(expected)
    ev[1] = -1
    ev += 1
    lazy.sync()
    np.testing.assert_array_equal(a, expected)
    assert_close(t, ev)


def test_asarray_of_readonly_array_is_not_written():
    a = np.arange(6.0)
    a.flags.writeable = False
    t = lazy.asarray(a)
    t[0] = 100
    lazy.log.clear()
    lazy.sync()
    np.testing.assert_array_equal(a, np.arange(6.0))
    assert_close(t, np.r_[100.0, np.arange(1.0, 6.0)])
    assert any("write copy" in r and "read-only" in r for r in write_reasons()), write_reasons()


@pytest.mark.parametrize("dtype", [">f4", ">f8", ">i4", ">i8"])
def test_array_in_the_other_byte_order_is_a_native_copy(dtype):
    """Kernels read native byte order: a big-endian array is copied into it
    when wrapped (by `asarray` too), so it computes as NumPy does. It used to
    be accepted and fail at sync ("input 0 is >f4, kernel expects float32")."""
    a = np.arange(6, dtype=dtype).reshape(2, 3)
    t = lazy.asarray(a)
    assert t.dtype == a.dtype.newbyteorder("=").name
    assert_close(t * 2 + 1, a * 2 + 1)
    assert_close(lazy.tensor(a).sum(axis=1), a.sum(axis=1))
    z = np.zeros((2, 3), bool)
    assert_close(lazy.asarray(z) + a[::-1], z + a[::-1])   # an operand, through a view
    t += 1  # the copy is written; the array keeps its values
    lazy.sync()
    np.testing.assert_array_equal(a, np.arange(6).reshape(2, 3))
    assert_close(t, (np.arange(6).reshape(2, 3) + 1).astype(t.dtype.np))


class _HookedTable(dict):
    """host._WRAPPED whose lookups of one key run `hook` first, once: the
    point where a collection may run a weakref callback in the middle of
    a walk over the entries."""
    def __init__(self, table: dict, key: int, hook):
        super().__init__(table)
        self.key, self.hook = key, hook

    def get(self, key, default=None):
        if key == self.key and self.hook is not None:
            hook, self.hook = self.hook, None
            hook()
        return dict.get(self, key, default)


def test_a_storage_dying_while_asarray_walks_the_foreign_entries(monkeypatch):
    """`asarray` of an array no storage holds walks the entries whose owner
    is not an ndarray (DLPack exports). Building that list allocates, so the
    collector may run the weakref callback of a storage that just died. The
    callback once removed its key from the set being walked ("Set changed
    size during iteration"); now it only drops the entry's memory, and the
    next `asarray` removes the entry. Here the walk drops the last reference."""
    import gc
    import weakref
    from lazy import host
    keep = lazy.from_dlpack(np.arange(3.0))
    memory = np.arange(4.0)
    alive = weakref.ref(memory)
    doomed = [lazy.from_dlpack(memory)]
    del memory
    doomed_key = next(k for k, es in host._WRAPPED.items() if es[0][0]() is doomed[0]._storage)
    assert doomed_key in host._FOREIGN and len(host._FOREIGN) >= 2

    def drop():
        doomed.clear()
        gc.collect()
    monkeypatch.setattr(host, "_WRAPPED", _HookedTable(host._WRAPPED, doomed_key, drop))
    a = np.arange(5.0)
    t = lazy.asarray(a)
    assert not doomed and alive() is None
    lazy.asarray(np.arange(2.0))
    assert doomed_key not in host._WRAPPED and doomed_key not in host._FOREIGN
    t += 1
    lazy.sync()
    np.testing.assert_array_equal(a, np.arange(5.0) + 1)
    np.testing.assert_array_equal(keep.numpy(), np.arange(3.0))


class _HookedEntries(list):
    """An entry list whose walk runs `hook` after its first `at` items, once."""
    def __init__(self, entries, at: int, hook):
        super().__init__(entries)
        self.at, self.hook = at, hook

    def __iter__(self):
        for i, e in enumerate(list.__iter__(self)):
            if i == self.at and self.hook is not None:
                hook, self.hook = self.hook, None
                hook()
            yield e


def test_storages_over_one_array_dying_inside_each_others_cleanup(monkeypatch):
    """Storages over one array in three dtypes are three entries of one key.
    When one dies, the next `asarray` rebuilds the key's list from the live
    ones; a second dying in the middle of that (the rebuild allocates) after
    the rebuild passed it must be pruned too, or its entry would stay."""
    import gc
    from lazy import host
    a = np.zeros(4)
    ts = [lazy.asarray(a), lazy.asarray(a.view(np.int64)), lazy.asarray(a.view(np.int32))]
    key = id(a)
    assert len(host._WRAPPED[key]) == 3

    def drop_second():
        ts[1] = None
        gc.collect()
    host._WRAPPED[key] = _HookedEntries(host._WRAPPED[key], 2, drop_second)  # after passing it
    ts[0] = None
    gc.collect()
    lazy.asarray(np.zeros(2))  # prunes
    assert [e[0]() for e in host._WRAPPED[key]] == [ts[2]._storage]
    ts[2] += 1
    lazy.sync()
    np.testing.assert_array_equal(a.view(np.int32), np.ones(8))


def test_two_threads_wrapping_one_array_at_once_share_one_storage(monkeypatch):
    """The look-up and the insert are one step: a second thread's `asarray`
    of the same array, started while the first is between them, waits and
    finds the first's storage. Two storages over one memory would not order
    a write through one against a read through the other."""
    import threading
    from lazy import host
    a = np.zeros(5)
    got = {}
    second = threading.Thread(target=lambda: got.setdefault("second", lazy.asarray(a)))
    wrap = host.buffer_and_view

    def slow_wrap(*args, **kwargs):
        if not second.is_alive() and "second" not in got:
            second.start()
            second.join(timeout=0.2)  # on a check-then-act, it finishes here
        return wrap(*args, **kwargs)
    monkeypatch.setattr(host, "buffer_and_view", slow_wrap)
    first = lazy.asarray(a)
    second.join()
    assert got["second"]._storage is first._storage
    first += 1
    assert_close(got["second"] * 2, np.full(5, 2.0))
