"""Writes: setitem with basic indices, writes through views and their errors, and
PyTorch's view semantics for the writes it allows or refuses.

Every case runs the same write on a NumPy array (or a torch tensor) and compares the
whole base afterwards, plus views of the base taken before the write. In-place
operators are in test_inplace_ops.py, ordering and in place vs copy in
test_write_ordering.py, writes into arrays given to `asarray` in
test_asarray_writes.py.
"""
from __future__ import annotations

import math
import numpy as np
import pytest

import lazy
from conftest import DTYPE_NAMES, assert_close, sample
from write_helpers import E, np_as_strided, pair, scalar_for, writable

pytestmark = pytest.mark.usefixtures("strict_fallback")


# -- setitem: basic indices x value kinds x dtypes ---------------------------------------------
BASIC_KEYS = [
    ("int", 1), ("neg_int", -1), ("two_ints", (2, -3)), ("slice", slice(1, 3)),
    ("slice_step", (slice(None, None, 2), slice(1, None, 3))),
    ("slice_neg_step", slice(None, None, -1)),
    ("slice_neg_step2", (slice(3, 0, -2), slice(-1, 0, -3))),
    ("slice_out_of_range", (slice(-100, 100), slice(2, 100))), ("slice_empty", slice(3, 1)),
    ("ellipsis", E), ("ellipsis_int", (E, 2)), ("int_ellipsis", (0, E)),
    ("none", (None, slice(1, 3))), ("none_mid", (slice(None), None, 3)),
    ("ellipsis_none", (E, None)), ("empty_tuple", ()), ("mixed", (-2, slice(None, None, -2))),
]
BASE_SHAPE = (4, 5)


def _np_dest(a: np.ndarray, key):
    """a[key] as an array (a view), also when the key selects one element."""
    k = key if isinstance(key, tuple) else (key,)
    return a[k + (E,)] if E not in k else a[k]


VALUE_KINDS = ["scalar", "numpy_scalar", "numpy", "numpy_bcast", "tensor", "tensor_pending",
               "list"]


def _value(kind: str, dest_shape, dtype: str, rng):
    """(value for lazy, value for NumPy) of `kind`, broadcastable to `dest_shape`."""
    if kind == "scalar":
        v = scalar_for(dtype)
        return v, v
    if kind == "numpy_scalar":
        v = np.array(scalar_for(dtype), dtype=dtype)[()]
        return v, v
    if kind == "numpy":
        v = sample(dest_shape, dtype, rng)
        return v, v
    if kind == "numpy_bcast":
        shape = (1,) * (len(dest_shape) > 0) + tuple(dest_shape[1:])
        v = sample(shape, dtype, rng)
        return v, v
    v = sample(dest_shape[-1:] if dest_shape else (), dtype, rng)  # broadcast over leading dims
    if kind == "tensor":
        return lazy.tensor(v), v
    if kind == "tensor_pending":
        return lazy.tensor(v) + (False if dtype == "bool" else 0), v
    return v.tolist(), v  # "list"


# every key with every value kind (one dtype; every dtype is crossed with every value
# kind below: each distinct kernel structure costs a compile)
SETITEM_CASES = [(name, key, kind, "float64" if i % 3 else "int32")
                 for i, (name, key) in enumerate(BASIC_KEYS) for kind in VALUE_KINDS]


@pytest.mark.parametrize("name, key, kind, dtype", SETITEM_CASES,
                         ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in SETITEM_CASES])
def test_setitem_basic(name, key, kind, dtype):
    rng = np.random.default_rng(len(name) * 31 + len(kind))
    t, a = pair(BASE_SHAPE, dtype, seed=3)
    other = t.T[::-1]  # another view, taken before the write
    dest = _np_dest(a, key)
    lv, nv = _value(kind, dest.shape, dtype, rng)
    t[key] = lv
    a[key] = nv
    assert_close(t, a)
    assert_close(other, a.T[::-1])
    assert_close(t[key], a[key])


@pytest.mark.parametrize("kind", VALUE_KINDS)
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_setitem_every_dtype_and_value_kind(dtype, kind):
    rng = np.random.default_rng(5)
    t, a = pair((3, 4, 5), dtype, seed=4)
    other = t.permute(2, 0, 1)
    for key in [(1, slice(None, None, -2)), (-1, -1, -1)]:
        lv, nv = _value(kind, _np_dest(a, key).shape, dtype, rng)
        t[key] = lv
        a[key] = nv
        assert_close(t, a), key
    assert_close(other, a.transpose(2, 0, 1))


@pytest.mark.parametrize("name, key", BASIC_KEYS, ids=[k[0] for k in BASIC_KEYS])
def test_setitem_basic_on_pending_base(name, key):
    t, a = pair((3, 4, 5), "float32", seed=1, pending=True)
    rng = np.random.default_rng(0)
    v = sample(_np_dest(a, key).shape, "float32", rng)
    t[key] = v
    a[key] = v
    assert t._buf.pending  # nothing ran
    assert_close(t, a)


@pytest.mark.parametrize("src, dst", [("float64", "int32"), ("float32", "int64"),
                                      ("int64", "float32"), ("int32", "bool"),
                                      ("float64", "bool"), ("bool", "float64"),
                                      ("int64", "int32"), ("float64", "float32")])
def test_setitem_casts_value_to_tensor_dtype(src, dst):
    """Values are cast to the tensor's dtype (NumPy setitem, PyTorch copy_)."""
    t, a = pair((3, 4), dst, seed=2)
    v = np.array([[1.75, -2.5, 0.0, 3.25]]).astype(src)
    t[1:] = v
    a[1:] = v
    assert_close(t, a)
    t[0] = lazy.tensor(v[0])
    a[0] = v[0]
    assert_close(t, a)
    assert t.dtype.name == dst


def test_setitem_python_scalars_cast():
    t, a = pair((5,), "int32")
    t[0], a[0] = 2.75, 2.75  # float into int truncates, as NumPy
    t[1], a[1] = -2.75, -2.75
    t[2], a[2] = True, True
    assert_close(t, a)
    b, ab = pair((3,), "bool")
    b[0], ab[0] = 2, 2
    b[1], ab[1] = 0.0, 0.0
    assert_close(b, ab)
    f, af = pair((2,), "float32")
    f[0], af[0] = 3, 3
    assert_close(f, af)


def test_python_int_out_of_range_raises_overflow_as_numpy():
    t, a = pair((3,), "int32")
    for write in (lambda x: x.__setitem__(0, 2**40), lambda x: x.__iadd__(2**40),
                  lambda x: x.__setitem__(slice(None), -2**31 - 1),
                  lambda x: x.__setitem__([1], 2**31)):
        with pytest.raises(OverflowError):
            write(a.copy())
        with pytest.raises(OverflowError):
            write(t)
    with pytest.raises(OverflowError):
        t.fill_(-2**31 - 1)
    assert_close(t, a)


@pytest.mark.parametrize("value", [np.int64(2**31 + 5), np.int64(-2**31 - 1), np.uint64(2**32),
                                   np.float64(1e10)], ids=["int64", "int64_low", "uint64", "float64"])
def test_numpy_scalar_out_of_range_raises_overflow_as_numpy(value):
    """A NumPy scalar's value is checked against the dtype as a Python
    number's is; it was cast, and np.int64(2**31 + 5) wrote -2147483643."""
    t, a = pair((3,), "int32")
    with pytest.raises(OverflowError):
        a[1] = value
    for write in (lambda: t.__setitem__(1, value), lambda: t.__setitem__([0, 2], value),
                  lambda: t.fill_(value)):
        with pytest.raises(OverflowError):
            write()
    t[1], a[1] = np.float32(3.75), np.float32(3.75)   # in range: truncated, as NumPy
    t[2], a[2] = np.int64(-7), np.int64(-7)
    assert_close(t, a)


def test_setitem_broadcast_errors_leave_everything_valid():
    t, a = pair((3, 4), "float64")
    pending = t * 2
    with pytest.raises(ValueError, match=r"\(3,\).*\(3, 4\)|\(3, 4\).*\(3,\)"):
        t[...] = np.ones(3)
    with pytest.raises(ValueError):
        t[0] = lazy.ones(5)
    with pytest.raises(ValueError):
        t[:, 1] = [[1, 2, 3]]  # (1, 3) -> (3,): NumPy refuses too
    with pytest.raises(IndexError):
        t[3] = 1
    with pytest.raises(IndexError):
        t[0, 0, 0] = 1
    assert_close(t, a)
    assert_close(pending, a * 2)


def test_setitem_value_with_leading_ones_broadcasts_down():
    """NumPy lets a value have extra leading size-1 axes."""
    t, a = pair((3, 4), "float64")
    v = np.arange(4.0).reshape(1, 1, 4)
    a[1] = v
    t[1] = v
    assert_close(t, a)


def test_setitem_leading_ones_where_numpy_refuses_follow_torch():
    """A 0-d destination and a boolean mask take a value with leading size-1
    axes, as PyTorch does (NumPy refuses these two; semantics.md says so)."""
    import torch
    mask = np.array([True, False, True])
    cases = [((), (), (1, 1)), ((3,), mask, (1, 2)), ((3,), mask, (1, 1, 1))]
    for shape, key, vshape in cases:
        t, a = pair(shape, "float64")
        ref = torch.from_numpy(np.array(a))
        value = np.arange(1.0, 1.0 + math.prod(vshape)).reshape(vshape)
        ref[torch.from_numpy(key) if isinstance(key, np.ndarray) else key] = \
            torch.from_numpy(value)
        t[lazy.asarray(key) if isinstance(key, np.ndarray) else key] = value
        assert_close(t, ref.numpy())


def test_setitem_0d_tensor():
    t = lazy.tensor(np.float64(2.5))
    a = np.array(2.5)
    t[...] = 4.0
    a[...] = 4.0
    assert_close(t, a)
    t[()] = lazy.tensor(1.5, dtype=lazy.float64)
    a[()] = 1.5
    assert_close(t, a)
    t.fill_(-1)
    a.fill(-1)
    assert_close(t, a)


def test_setitem_empty_selection_writes_nothing():
    t, a = pair((3, 4), "int64")
    t[2:1] = 5
    t[:, 4:] = np.zeros((3, 0))
    assert_close(t, a)


# -- writes through views ----------------------------------------------------------------------
# (name, base shape, view on lazy, view on NumPy); every view here has no internal overlap.
WRITE_VIEWS = [
    ("select", (4, 6), lambda t: t.select(1, 2), lambda a: a[:, 2]),
    ("select_neg", (4, 6), lambda t: t.select(0, -1), lambda a: a[-1]),
    ("narrow", (4, 6), lambda t: t.narrow(1, 1, 3), lambda a: a[:, 1:4]),
    ("narrow_neg", (4, 6), lambda t: t.narrow(0, -3, 2), lambda a: a[1:3]),
    ("slice_step", (4, 6), lambda t: t[1::2, ::3], lambda a: a[1::2, ::3]),
    ("slice_neg_step", (4, 6), lambda t: t[::-1, 4:0:-2], lambda a: a[::-1, 4:0:-2]),
    ("transpose", (4, 6), lambda t: t.transpose(0, 1), lambda a: a.T),
    ("T", (2, 3, 4), lambda t: t.T, lambda a: a.T),
    ("permute", (2, 3, 4), lambda t: t.permute(1, 2, 0), lambda a: a.transpose(1, 2, 0)),
    ("diagonal", (5, 5), lambda t: t.diagonal(), lambda a: a.diagonal()),
    ("diagonal_off", (4, 6), lambda t: t.diagonal(2), lambda a: a.diagonal(2)),
    ("diagonal_neg", (6, 4), lambda t: t.diagonal(-1), lambda a: a.diagonal(-1)),
    ("diagonal_dims", (3, 4, 5), lambda t: t.diagonal(1, 2, 0), lambda a: a.diagonal(1, 2, 0)),
    ("as_strided", (4, 6), lambda t: t.as_strided((3, 2), (6, 2), 1),
     lambda a: np_as_strided(a, (3, 2), (6, 2), 1)),
    ("as_strided_transposed", (4, 6), lambda t: t.as_strided((3, 4), (1, 6), 2),
     lambda a: np_as_strided(a, (3, 4), (1, 6), 2)),
    ("reshape_view", (4, 6), lambda t: t.reshape(2, 3, 4), lambda a: a.reshape(2, 3, 4)),
    ("view", (4, 6), lambda t: t.view(8, 3), lambda a: a.reshape(8, 3)),
    ("flatten", (2, 3, 4), lambda t: t.flatten(), lambda a: a.reshape(-1)),
    ("reshape_strided", (4, 6), lambda t: t[:, ::2].reshape(12),
     lambda a: a[:, ::2].reshape(12)),
    ("unsqueeze", (4, 6), lambda t: t.unsqueeze(1), lambda a: a[:, None]),
    ("squeeze", (4, 1, 6), lambda t: t.squeeze(1), lambda a: a.squeeze(1)),
    ("expand_size1", (4, 6), lambda t: t[:1].expand(1, 6), lambda a: a[:1]),
    ("unfold_disjoint", (12,), lambda t: t.unfold(0, 3, 4),
     lambda a: np_as_strided(a, (3, 3), (4, 1), 0)),
    ("unfold_2d", (4, 6), lambda t: t.unfold(1, 2, 2),
     lambda a: np_as_strided(a, (4, 3, 2), (6, 2, 1), 0)),
    ("chain_T_slice_diag", (5, 6), lambda t: t.T[1:].diagonal(), lambda a: a.T[1:].diagonal()),
    ("chain_reshape_slice_narrow", (4, 6), lambda t: t.reshape(2, 12)[:, ::3].narrow(1, 1, 2),
     lambda a: a.reshape(2, 12)[:, ::3][:, 1:3]),
    ("chain_select_flip_unsqueeze", (3, 4, 5), lambda t: t.select(2, 1)[::-1].unsqueeze(0).T,
     lambda a: a[:, :, 1][::-1][None].T),
    ("chain_permute_view", (2, 3, 4), lambda t: t.permute(1, 0, 2)[1:].select(1, 0).view(8),
     lambda a: a.transpose(1, 0, 2)[1:][:, 0].reshape(8)),
]
WV_IDS = [c[0] for c in WRITE_VIEWS]

WRITES = [
    ("setitem_scalar", lambda v: v.__setitem__(E, -3.5), lambda a: a.__setitem__(E, -3.5)),
    ("setitem_array", None, None),  # array of the view's shape, built in the test
    ("iadd", lambda v: v.__iadd__(10), lambda a: a.__iadd__(10)),
    ("mul_", lambda v: v.mul_(-2), lambda a: a.__imul__(-2)),
    ("fill_", lambda v: v.fill_(0.5), lambda a: a.fill(0.5)),
    ("zero_", lambda v: v.zero_(), lambda a: a.fill(0)),
    ("clamp_", lambda v: v.clamp_(-1, 2), lambda a: np.clip(a, -1, 2, out=a)),
]


@pytest.mark.parametrize("name, shape, fn, npfn", WRITE_VIEWS, ids=WV_IDS)
def test_write_through_view_changes_base_and_other_views(name, shape, fn, npfn):
    for wname, lw, nw in WRITES:
        t, a = pair(shape, "float64", seed=5)
        v, av = fn(t), writable(npfn(a), a)
        assert v._buf is t._buf
        others = [(t.reshape(-1), lambda b: b.reshape(-1)), (t[::-1], lambda b: b[::-1]),
                  (fn(t), npfn)]
        if wname == "setitem_array":
            val = np.arange(av.size, dtype=np.float64).reshape(av.shape) - 2.5
            v[...] = val
            av[...] = val
        else:
            lw(v)
            nw(av)
        assert np.shares_memory(av, a)
        assert_close(t, a), wname
        assert_close(v, av), wname
        for o, nf in others:
            assert_close(o, nf(a)), wname


@pytest.mark.parametrize("name, shape, fn, npfn", WRITE_VIEWS, ids=WV_IDS)
def test_write_through_view_of_pending_base(name, shape, fn, npfn):
    t, a = pair(shape, "int64", seed=6, pending=True)
    v, av = fn(t), writable(npfn(a), a)
    v += 100
    av += 100
    v[...] = v * 2  # reads the view just written
    av[...] = av * 2
    w = t.reshape(-1)
    assert t._buf.pending
    lazy.sync()
    assert_close(w, a.reshape(-1))
    assert_close(v, av)
    assert_close(t, a)


def test_view_created_after_write_and_view_of_view():
    t, a = pair((4, 6), "float32")
    row = t[1]
    t[1, 2:] = 9
    a[1, 2:] = 9
    col = t[:, 3]  # taken after the write
    col[::2] = -1
    a[:, 3][::2] = -1
    sub = row[1:4]
    sub += 1
    a[1][1:4] += 1
    assert_close(row, a[1])
    assert_close(col, a[:, 3])
    assert_close(t, a)


def test_views_are_still_views_after_sync_and_write():
    t, a = pair((3, 4), "float64")
    v = t[:, 1:3]
    lazy.sync()
    v[...] = 0
    a[:, 1:3] = 0
    lazy.sync()
    assert np.shares_memory(v.numpy(), t.numpy())
    assert lazy.shares_memory(v, t)
    assert_close(t, a)
    assert_close(v, a[:, 1:3])


# -- expanded / overlapping views: writes raise ------------------------------------------------
OVERLAP_VIEWS = [
    ("expand", lambda t: t[:1].expand(3, 4)),
    ("expand_new_axis", lambda t: t[0].expand(2, 4)),
    ("broadcast_to", lambda t: t[1].broadcast_to((5, 4))),
    ("expand_of_view", lambda t: t.T[2:3].expand(4, 3).T),
    ("as_strided_zero_stride", lambda t: t.as_strided((2, 3), (0, 1), 1)),
    ("as_strided_overlap", lambda t: t.as_strided((4, 3), (2, 1))),
    ("unfold_overlap", lambda t: t.reshape(-1).unfold(0, 3, 1)),
]
OVERLAP_WRITES = [
    ("setitem", lambda v: v.__setitem__(E, 1.0)),
    ("setitem_slice", lambda v: v.__setitem__(slice(None), 1.0)),
    ("iadd", lambda v: v.__iadd__(1)),
    ("add_", lambda v: v.add_(1)),
    ("fill_", lambda v: v.fill_(2)),
    ("zero_", lambda v: v.zero_()),
    ("copy_", lambda v: v.copy_(lazy.zeros(v.shape, dtype=lazy.float64))),
    ("clamp_", lambda v: v.clamp_(0, 1)),
]


@pytest.mark.parametrize("vname, fn", OVERLAP_VIEWS, ids=[v[0] for v in OVERLAP_VIEWS])
def test_write_into_overlapping_view_raises(vname, fn):
    t, a = pair((3, 4), "float64", seed=8)
    pending = t + 1
    v = fn(t)
    for wname, w in OVERLAP_WRITES:
        with pytest.raises(RuntimeError, match="memory location"):
            w(v)
    assert_close(t, a)  # nothing written; everything pending still valid
    assert_close(pending, a + 1)
    assert_close(v, fn(lazy.tensor(a)).numpy())


def test_write_into_part_of_expanded_view_without_overlap_is_allowed():
    """A select that removes the stride-0 axis leaves a view with no repeated elements."""
    t, a = pair((3, 4), "float64")
    v = t[:1].expand(3, 4)
    row = v[1]
    row[...] = 7
    a[0] = 7
    assert_close(t, a)
    assert_close(v, np.broadcast_to(a[:1], (3, 4)))


# -- PyTorch's view semantics: layout and which base element a write changes ---------------------
TORCH_VIEWS = [
    ("narrow", (5, 6), lambda t: t.narrow(1, 2, 3)),
    ("narrow0", (5, 6), lambda t: t.narrow(0, 1, 2)),
    ("select", (3, 4, 5), lambda t: t.select(1, 2)),
    ("select_neg", (3, 4, 5), lambda t: t.select(-1, -2)),
    ("unfold", (10,), lambda t: t.unfold(0, 3, 3)),
    ("unfold_gap", (11,), lambda t: t.unfold(0, 2, 4)),
    ("unfold_2d", (4, 7), lambda t: t.unfold(1, 3, 3)),
    ("unfold_dim0", (6, 3), lambda t: t.unfold(0, 2, 2)),
    ("diagonal", (4, 4), lambda t: t.diagonal()),
    ("diagonal_off", (4, 6), lambda t: t.diagonal(2)),
    ("diagonal_neg", (5, 3), lambda t: t.diagonal(-2)),
    ("diagonal_3d", (3, 4, 5), lambda t: t.diagonal(1, 2, 0)),
    ("as_strided", (4, 5), lambda t: t.as_strided((3, 3), (5, 1), 1)),
    ("as_strided_T", (4, 5), lambda t: t.as_strided((2, 3), (1, 5), 2)),
    ("as_strided_gap", (20,), lambda t: t.as_strided((2, 2, 2), (9, 4, 1), 3)),
    ("chain", (4, 6), lambda t: t.narrow(1, 1, 4).select(0, 2).unfold(0, 2, 2)),
    ("chain_T", (4, 6), lambda t: t.transpose(0, 1).narrow(0, 1, 3).diagonal()),
]


@pytest.mark.parametrize("name, shape, fn", TORCH_VIEWS, ids=[c[0] for c in TORCH_VIEWS])
def test_view_layout_and_write_match_torch(name, shape, fn):
    import torch
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    tb = torch.from_numpy(a.copy())
    lb = lazy.tensor(a)
    tv, lv = fn(tb), fn(lb)
    assert lv.shape == tuple(tv.shape)
    assert lv.stride() == tuple(tv.stride())
    assert lv.storage_offset() == tv.storage_offset()
    np.testing.assert_array_equal(lv.numpy(), tv.numpy())
    # the same writes in both: the bases must change at the same elements
    tv.add_(1000)
    lv.add_(1000)
    assert_close(lb, tb.numpy())
    tv[..., 0] = -1
    lv[..., 0] = -1
    assert_close(lb, tb.numpy())
    tv.mul_(torch.arange(tv.shape[-1], dtype=torch.float64))
    lv.mul_(lazy.arange(lv.shape[-1], dtype=lazy.float64))
    assert_close(lb, tb.numpy())
    assert_close(lv, tv.numpy())


@pytest.mark.parametrize("name, shape, fn", [
    ("expand", (3, 1), lambda t: t.expand(3, 4)),
    ("expand_lead", (4,), lambda t: t.expand(2, 4)),
    ("expand_view", (3, 4), lambda t: t[:, 1:2].expand(3, 5)),
])
def test_expand_layout_matches_torch_and_writes_raise(name, shape, fn):
    import torch
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    tb, lb = torch.from_numpy(a.copy()), lazy.tensor(a)
    tv, lv = fn(tb), fn(lb)
    assert lv.shape == tuple(tv.shape)
    assert lv.stride() == tuple(tv.stride())
    assert lv.storage_offset() == tv.storage_offset()
    np.testing.assert_array_equal(lv.numpy(), tv.numpy())
    for write in (lambda v: v.add_(1), lambda v: v.__setitem__(E, 1.0),
                  lambda v: v.copy_(v * 0)):
        with pytest.raises(RuntimeError):
            write(tv)
        with pytest.raises(RuntimeError, match="memory location"):
            write(lv)
    assert_close(lb, a)


@pytest.mark.parametrize("size, stride, offset", [
    ((4, 3), (2, 1), 0), ((3, 3), (1, 1), 2), ((2, 4), (3, 1), 1), ((5,), (0,), 0),
])
def test_as_strided_overlapping_windows(size, stride, offset):
    """Layout as PyTorch; writing into overlapping windows raises (documented)."""
    import torch
    a = np.arange(12, dtype=np.int64)
    tv = torch.from_numpy(a.copy()).as_strided(size, stride, offset)
    t = lazy.tensor(a)
    lv = t.as_strided(size, stride, offset)
    assert lv.shape == tuple(tv.shape) and lv.stride() == tuple(tv.stride())
    assert lv.storage_offset() == tv.storage_offset()
    np.testing.assert_array_equal(lv.numpy(), tv.numpy())
    np.testing.assert_array_equal(lv.numpy(), np_as_strided(a, size, stride, offset))
    with pytest.raises(RuntimeError, match="memory location"):
        lv += 1
    with pytest.raises(RuntimeError, match="memory location"):
        lv[...] = 0
    # reading overlapping windows is fine, and sees later writes to the base
    t[offset] = -5
    b = a.copy()
    b[offset] = -5
    np.testing.assert_array_equal(lv.numpy(), np_as_strided(b, size, stride, offset))


def test_unfold_overlapping_reads_and_sees_writes():
    import torch
    a = np.arange(8, dtype=np.float32)
    tb, lb = torch.from_numpy(a.copy()), lazy.tensor(a)
    tv, lv = tb.unfold(0, 3, 1), lb.unfold(0, 3, 1)
    assert lv.stride() == tuple(tv.stride()) and lv.shape == tuple(tv.shape)
    tb[3] = 100
    lb[3] = 100
    np.testing.assert_array_equal(lv.numpy(), tv.numpy())
    s = lv.sum(1)
    np.testing.assert_array_equal(s.numpy(), tv.sum(1).numpy())
