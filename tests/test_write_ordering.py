"""Lazy ordering of reads and writes, and the in-place vs copy decision the log shows."""
from __future__ import annotations

import numpy as np
import pytest

import lazy
from conftest import assert_close
from write_helpers import E, pair, write_reasons

pytestmark = pytest.mark.usefixtures("strict_fallback")


# -- lazy ordering --------------------------------------------------------------------------
def test_computed_before_write_keeps_old_values():
    t, a = pair((4, 5), "float64", seed=1)
    lazy.sync()
    before = t * 2
    s_before = t.sum()
    v = t[1:, 2]  # a view: sees the write
    g = t[[0, 3]]  # advanced read: a copy, keeps the old values
    lazy.log.clear()
    t[1:3] = 100
    assert len(lazy.log) == 0  # building a write runs nothing
    after = t * 2
    a_old = a.copy()
    a[1:3] = 100
    assert_close(before, a_old * 2)
    assert_close(after, a * 2)
    assert_close(s_before, a_old.sum())
    assert_close(v, a[1:, 2])
    assert_close(g, a_old[[0, 3]])
    assert_close(t, a)


def test_many_versions_each_keep_their_values():
    t, a = pair((6,), "int64", pending=True)
    kept = []
    ops = [(lambda x: x.__setitem__(0, 1), lambda b: b.__setitem__(0, 1)),
           (lambda x: x.__iadd__(1), lambda b: b.__iadd__(1)),
           (lambda x: x.__setitem__(slice(None, None, 2), 5),
            lambda b: b.__setitem__(slice(None, None, 2), 5)),
           (lambda x: x.mul_(-1), lambda b: b.__imul__(-1)),
           (lambda x: x[::-1].__setitem__(slice(None, 3), 9),
            lambda b: b[::-1].__setitem__(slice(None, 3), 9)),
           (lambda x: x.fill_(3), lambda b: b.fill(3))]
    for i, (op, npop) in enumerate(ops):
        op(t)
        npop(a)
        kept.append((t + 0, a.copy()))
        if i == 2:
            lazy.sync(kept[1][0])  # a partial sync in the middle changes nothing
    for k, ref in kept:
        assert_close(k, ref)
    assert_close(t, a)


def test_read_write_interleaving_of_overlapping_views():
    t, a = pair((8,), "float64", seed=3)
    lo, hi = t[:6], t[2:]
    r1, e1 = lo * 1, a[:6] * 1
    hi[...] = lo + 1  # reads the old values of the overlap
    a[2:] = a[:6] + 1
    r2, e2 = hi.sum(), a[2:].sum()
    lo[::2] = hi[::-2]
    a[:6][::2] = a[2:][::-2]
    r3, e3 = t + 0, a.copy()
    t[1:] = t[:-1]
    a[1:] = a[:-1]
    r4, e4 = lo - hi, a[:6] - a[2:]
    hi[::3] *= lo[1::3]
    a[2:][::3] *= a[:6][1::3]
    assert_close(t, a)
    assert_close(hi, a[2:])
    assert_close(lo, a[:6])
    for r, e in ((r1, e1), (r2, e2), (r3, e3), (r4, e4)):
        assert_close(r, e)


def test_read_of_pending_view_after_sync_then_write():
    t, a = pair((3, 3), "float32", pending=True)
    d = t.diagonal()
    lazy.sync()
    old = d.numpy().copy()
    y = d + 1  # built from the current version
    t.fill_(0)
    np.testing.assert_array_equal(y.numpy(), old + 1)
    assert_close(d, np.zeros(3, np.float32))


def test_write_does_not_sync_and_error_keeps_pending():
    t, a = pair((4,), "float64", pending=True)
    lazy.log.clear()
    t[0] = 9
    t += 1
    assert len(lazy.log) == 0 and not lazy.log.syncs
    with pytest.raises(ValueError):
        t[1:] = np.ones(2)
    a[0] = 9
    a += 1
    assert_close(t, a)


# -- in place vs copy, visible in the log ---------------------------------------------------------
def test_iadd_alone_runs_in_place():
    t = lazy.arange(10, dtype=lazy.float64) * 1
    lazy.sync()
    before = t.numpy()
    lazy.log.clear()
    t += 1
    lazy.sync()
    reasons = write_reasons()
    assert len(reasons) == 1 and reasons[0].endswith("; write in place"), reasons
    assert np.shares_memory(before, t.numpy())
    np.testing.assert_array_equal(before, np.arange(10) + 1.0)  # the same memory, updated


def test_pending_reader_forces_copy():
    t = lazy.arange(10) * 1
    lazy.sync()
    y = t * 2
    lazy.log.clear()
    t[0] = 5
    lazy.sync()
    reasons = write_reasons()
    assert len(reasons) == 1 and "; write copy: " in reasons[0], reasons
    assert "pending" in reasons[0]
    np.testing.assert_array_equal(y.numpy(), np.arange(10) * 2)
    np.testing.assert_array_equal(t.numpy(), np.r_[5, np.arange(1, 10)])


def test_shift_copies_and_matches_numpy():
    t = lazy.arange(10) * 1
    lazy.sync()
    lazy.log.clear()
    t[1:] = t[:-1]
    lazy.sync()
    reasons = write_reasons()
    assert len(reasons) == 1 and "; write copy: " in reasons[0], reasons
    a = np.arange(10)
    a[1:] = a[:-1]
    assert_close(t, a)


@pytest.mark.parametrize("name, fn, npfn", [
    ("strided_imul", lambda t: t[::2].__imul__(3), lambda a: a[::2].__imul__(3)),
    ("disjoint_copy", lambda t: t[0::2].__setitem__(E, t[1::2]),
     lambda a: a[0::2].__setitem__(E, a[1::2])),
    ("fill", lambda t: t.fill_(2), lambda a: a.fill(2)),
    ("view_iadd", lambda t: t.reshape(2, 5).T.__iadd__(1), lambda a: a.reshape(2, 5).T.__iadd__(1)),
])
def test_in_place_when_safe(name, fn, npfn):
    t = lazy.arange(10) * 1
    lazy.sync()
    lazy.log.clear()
    fn(t)
    lazy.sync()
    reasons = write_reasons()
    assert reasons and all(r.endswith("; write in place") for r in reasons), reasons
    a = np.arange(10)
    npfn(a)
    assert_close(t, a)


def test_live_view_of_old_version_does_not_force_a_copy():
    """Views see the new version: they are not readers of the old one."""
    t = lazy.arange(6) * 1
    v = t[2:]
    lazy.sync()
    lazy.log.clear()
    t[0] = 7
    lazy.sync()
    assert write_reasons()[-1].endswith("; write in place")
    np.testing.assert_array_equal(v.numpy(), np.arange(2, 6))


def test_write_kernels_are_named_s():
    t = lazy.zeros(5)
    lazy.sync()
    lazy.log.clear()
    t[1] = 2
    lazy.sync()
    names = [r.kernel for r in lazy.log]
    assert names and all(n.startswith("s") for n in names), names
    assert all(r.backend == "llvm" for r in lazy.log)


def test_setitem_from_fused_expression_is_one_kernel():
    x = lazy.zeros(10, dtype=lazy.float64) + 0
    a = lazy.arange(10, dtype=lazy.float64) * 1.5
    lazy.sync(x, a)
    lazy.log.clear()
    x[1:-1] = a[2:] + a[:-2]
    lazy.sync()
    assert len(lazy.log) == 1, lazy.log.table()
    assert lazy.log[0].kernel.startswith("s")
    ref = np.arange(10) * 1.5
    expected = np.zeros(10)
    expected[1:-1] = ref[2:] + ref[:-2]
    assert_close(x, expected)


def test_chained_writes_on_pending_storage_then_one_sync():
    t = lazy.zeros((4, 4), dtype=lazy.int32)
    a = np.zeros((4, 4), np.int32)
    for i in range(4):
        t[i, i:] = i + 1
        a[i, i:] = i + 1
    t.T[0] += 10
    a.T[0] += 10
    lazy.log.clear()
    lazy.sync()
    assert lazy.log.counters.syncs == 1
    assert all(r.backend == "llvm" for r in lazy.log)
    assert_close(t, a)





EQUAL_THEN_WRITTEN = [  # (id, make one tensor from x, write it): the same in NumPy and lazyrt
    ("zeros_buffers", lambda x, m: m.zeros(3), lambda t, x: t.__iadd__(x * 0.5)),
    ("clones", lambda x, m: x.copy() if m is np else x.clone(),
     lambda t, x: t.__setitem__(0, -1.0)),
    ("same_expression", lambda x, m: x * 2, lambda t, x: t.__iadd__(3)),
]


@pytest.mark.parametrize("name, make, write", EQUAL_THEN_WRITTEN,
                         ids=[e[0] for e in EQUAL_THEN_WRITTEN])
@pytest.mark.parametrize("order", ["write_second", "write_first"])
def test_write_to_one_of_two_equal_tensors_leaves_the_other(name, make, write, order):
    """Two tensors built by the same expression are one computation to the CSE pass;
    a write to one of them may run in place, so it must not land in the other's
    memory (b = zeros(3); c = zeros(3); c += 1 used to change b), whichever of the
    two was built first."""
    a = np.arange(3.0)
    x = lazy.asarray(a.copy())
    mod = type("lazy_ns", (), {"zeros": staticmethod(lambda n: lazy.zeros(n, dtype=lazy.float64))})
    results = []
    for m, src in ((np, a), (mod, x)):
        kept, written = make(src, m), make(src, m)
        if order == "write_first":
            kept, written = written, kept
        write(written, src)
        results.append((kept, written))
    lazy.sync()
    (np_kept, np_written), (lz_kept, lz_written) = results
    assert_close(lz_kept, np_kept)
    assert_close(lz_written, np_written)
