"""View ops and basic indexing: values, shapes, strides, offsets and shared memory.

Every case is checked against NumPy; the PyTorch tests at the end repeat the
stride/offset checks against torch when it is importable.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazy
from scheduler.interpret import positions
from scheduler.view import View, compose
from conftest import assert_close, assert_layout_like, backends_used, np_offset, np_strides

pytestmark = pytest.mark.usefixtures("strict_fallback")

E = Ellipsis
_ast = np.lib.stride_tricks.as_strided


def np_as_strided(base: np.ndarray, size, stride, offset):
    flat = base.reshape(-1)
    return _ast(flat[offset:], shape=size, strides=tuple(s * flat.itemsize for s in stride))


# (name, base shape, op on lazy/torch tensors, op on NumPy arrays)
VIEW_CASES = [
    ("int", (4, 5), lambda t: t[1], lambda a: a[1]),
    ("neg_int", (4, 5), lambda t: t[-1, -2, ...], lambda a: a[-1, -2, ...]),
    ("slice", (6, 5), lambda t: t[1:5], lambda a: a[1:5]),
    ("slice_step", (7, 5), lambda t: t[1::3, ::2], lambda a: a[1::3, ::2]),
    ("slice_neg_step", (6, 5), lambda t: t[::-1], lambda a: a[::-1]),
    ("slice_neg_step2", (6, 7), lambda t: t[4:0:-2, ::-3], lambda a: a[4:0:-2, ::-3]),
    ("slice_neg_bounds", (6, 7), lambda t: t[-2:, -5:-1:2], lambda a: a[-2:, -5:-1:2]),
    ("slice_out_of_range", (4, 3), lambda t: t[-100:100, 1:100], lambda a: a[-100:100, 1:100]),
    ("slice_empty", (4, 3), lambda t: t[3:1], lambda a: a[3:1]),
    ("slice_empty_neg", (4, 3), lambda t: t[1:3:-1], lambda a: a[1:3:-1]),
    ("ellipsis", (2, 3, 4), lambda t: t[..., 1], lambda a: a[..., 1]),
    ("ellipsis_mid", (2, 3, 4), lambda t: t[1, ..., ::-1], lambda a: a[1, ..., ::-1]),
    ("none", (3, 4), lambda t: t[None, :, None], lambda a: a[None, :, None]),
    ("none_int", (3, 4), lambda t: t[None, 2, ..., None], lambda a: a[None, 2, ..., None]),
    ("all_ints", (3, 4), lambda t: t[2, 3, ...], lambda a: a[2, 3, ...]),
    ("scalar_none", (), lambda t: t[None], lambda a: a[None]),
    ("scalar_ellipsis", (), lambda t: t[...], lambda a: a[...]),
    ("chain", (6, 8), lambda t: t[::-1][1:, ::3][::2], lambda a: a[::-1][1:, ::3][::2]),
    ("permute", (2, 3, 4), lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("permute_neg", (2, 3, 4), lambda t: t.permute(-1, -3, -2), lambda a: a.transpose(2, 0, 1)),
    ("transpose2", (2, 3, 4), lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("transpose_2d", (3, 5), lambda t: t.transpose(0, 1), lambda a: a.swapaxes(0, 1)),
    ("transpose_2d_neg", (3, 5), lambda t: t.transpose(-1, 0), lambda a: a.swapaxes(-1, 0)),
    ("T", (3, 5), lambda t: t.T, lambda a: a.T),
    ("T_3d", (2, 3, 4), lambda t: t.permute(2, 1, 0), lambda a: a.T),
    ("expand", (3, 1), lambda t: t.expand(2, 3, 4), lambda a: np.broadcast_to(a, (2, 3, 4))),
    ("expand_minus1", (1, 4), lambda t: t.expand(3, -1), lambda a: np.broadcast_to(a, (3, 4))),
    ("broadcast_to", (4,), lambda t: t.broadcast_to((3, 4)),
     lambda a: np.broadcast_to(a, (3, 4))),
    ("squeeze_all", (1, 3, 1, 2), lambda t: t.squeeze(), lambda a: a.squeeze()),
    ("squeeze_dim", (1, 3, 1, 2), lambda t: t.squeeze(2), lambda a: a.squeeze(2)),
    ("squeeze_neg", (1, 3, 1), lambda t: t.squeeze(-1), lambda a: a.squeeze(-1)),
    ("unsqueeze0", (3, 4), lambda t: t.unsqueeze(0), lambda a: a[None]),
    ("unsqueeze_mid", (3, 4), lambda t: t.unsqueeze(1), lambda a: a[:, None]),
    ("unsqueeze_end", (3, 4), lambda t: t.unsqueeze(-1), lambda a: a[..., None]),
    ("unsqueeze_strided", (4, 6), lambda t: t[::2, ::-3].unsqueeze(1),
     lambda a: a[::2, ::-3][:, None]),
    ("flatten", (2, 3, 4), lambda t: t.flatten(), lambda a: a.reshape(-1)),
    ("flatten_part", (2, 3, 4, 5), lambda t: t.flatten(1, 2), lambda a: a.reshape(2, 12, 5)),
    ("reshape", (2, 3, 4), lambda t: t.reshape(6, 4), lambda a: a.reshape(6, 4)),
    ("reshape_minus1", (2, 3, 4), lambda t: t.reshape(-1, 2), lambda a: a.reshape(-1, 2)),
    ("reshape_tuple", (2, 3, 4), lambda t: t.reshape((4, 1, 6)), lambda a: a.reshape(4, 1, 6)),
    ("view", (2, 3, 4), lambda t: t.view(3, 8), lambda a: a.reshape(3, 8)),
    ("reshape_strided_ok", (4, 6), lambda t: t[::2].reshape(2, 2, 3),
     lambda a: a[::2].reshape(2, 2, 3)),
    ("view_strided_ok", (4, 6), lambda t: t[:, ::2].view(4, 3, 1),
     lambda a: a[:, ::2].reshape(4, 3, 1)),
    ("view_split_transposed", (4, 6), lambda t: t.T.view(3, 2, 4),
     lambda a: a.T.reshape(3, 2, 4)),
    ("reshape_size1", (3, 1, 4), lambda t: t.permute(2, 1, 0).reshape(4, 3),
     lambda a: a.transpose(2, 1, 0).reshape(4, 3)),
    ("ravel_contig", (2, 3), lambda t: t.ravel(), lambda a: a.ravel()),
    ("narrow", (5, 6), lambda t: t.narrow(1, 2, 3), lambda a: a[:, 2:5]),
    ("narrow_neg_start", (5, 6), lambda t: t.narrow(0, -3, 2), lambda a: a[2:4]),
    ("narrow_empty", (5, 6), lambda t: t.narrow(0, 5, 0), lambda a: a[5:5]),
    # start as a NumPy integer or a 0-d tensor (PyTorch's): a tensor start used
    # to become the view's offset, and the first sync that read it never ended
    ("narrow_np_int_start", (5, 6), lambda t: t.narrow(1, np.int64(2), np.int32(3)),
     lambda a: a[:, 2:5]),
    ("narrow_tensor_start", (5, 6), lambda t: t.narrow(0, lazy.tensor(1), 2), lambda a: a[1:3]),
    ("select", (3, 4, 5), lambda t: t.select(1, 2), lambda a: a[:, 2]),
    ("select_neg", (3, 4, 5), lambda t: t.select(-1, -1), lambda a: a[..., -1]),
    ("diagonal", (4, 4), lambda t: t.diagonal(), lambda a: a.diagonal()),
    ("diagonal_off", (4, 6), lambda t: t.diagonal(2), lambda a: a.diagonal(2)),
    ("diagonal_neg", (5, 3), lambda t: t.diagonal(-2), lambda a: a.diagonal(-2)),
    ("diagonal_dims", (3, 4, 5), lambda t: t.diagonal(1, 2, 0),
     lambda a: a.diagonal(1, 2, 0)),
    ("diagonal_empty", (3, 4), lambda t: t.diagonal(7), lambda a: a.diagonal(7)),
    ("diagonal_of_view", (6, 6), lambda t: t[::-1, 1:].diagonal(-1),
     lambda a: a[::-1, 1:].diagonal(-1)),
    ("as_strided", (4, 5), lambda t: t.as_strided((3, 3), (5, 1), 1),
     lambda a: np_as_strided(a, (3, 3), (5, 1), 1)),
    ("as_strided_overlap", (10,), lambda t: t.as_strided((4, 3), (2, 1)),
     lambda a: np_as_strided(a, (4, 3), (2, 1), 0)),
    ("as_strided_zero", (4, 5), lambda t: t.as_strided((2, 3), (0, 2), 3),
     lambda a: np_as_strided(a, (2, 3), (0, 2), 3)),
    ("zero_size_axis", (0, 3), lambda t: t.T[1:], lambda a: a.T[1:]),
]
IDS = [c[0] for c in VIEW_CASES]


def _base(shape, dtype="float32"):
    a = np.arange(int(np.prod(shape))).astype(dtype)
    if dtype.startswith("float"):
        a *= 1.5
    return a.reshape(shape)


def check_view(v: lazy.Tensor, base: lazy.Tensor, a: np.ndarray, a_base: np.ndarray) -> None:
    """v is a view of `base` as `a` is of `a_base` (a_base contiguous)."""
    if a.size and not np.shares_memory(a, a_base):  # NumPy copies: a reshape that must copy
        assert v._buf is not base._buf
        assert_close(v, a)
        assert v.is_contiguous()
        return
    assert v._buf is base._buf, "a view op must not copy"
    assert_layout_like(v, a, a_base)
    lazy.sync(base)
    assert_close(v, a)
    got = v.numpy()
    if a.size:
        assert np.shares_memory(got, base.numpy())
        assert lazy.shares_memory(v, base)
        for d, n in enumerate(a.shape):
            if n > 1:
                assert got.strides[d] == a.strides[d], (got.strides, a.strides)


@pytest.mark.parametrize("name, shape, fn, npfn", VIEW_CASES, ids=IDS)
def test_view_of_numpy_backed_tensor(name, shape, fn, npfn):
    a = _base(shape)
    base = lazy.asarray(a)
    check_view(fn(base), base, npfn(a), a)


@pytest.mark.parametrize("name, shape, fn, npfn", VIEW_CASES, ids=IDS)
def test_view_of_pending_tensor(name, shape, fn, npfn):
    a = _base(shape, "int64")
    base = lazy.arange(int(np.prod(shape))).reshape(shape) * 1  # pending computed storage
    assert base._buf.pending
    v = fn(base)
    assert v._buf.pending  # building the view ran nothing
    check_view(v, base, npfn(a), a)


@pytest.mark.parametrize("name, shape, fn, npfn", VIEW_CASES, ids=IDS)
def test_view_read_by_kernel(name, shape, fn, npfn):
    """A view folded into a fused kernel's loads gives the same values."""
    a = _base(shape)
    base = lazy.arange(int(np.prod(shape)), dtype=lazy.float32).reshape(shape) * 1.5
    lazy.log.clear()
    out = fn(base) * 2 + 1
    expected = npfn(a) * 2 + 1
    assert_close(out, expected)
    assert out.is_contiguous()
    assert set(backends_used()) <= {"llvm"}


@pytest.mark.parametrize("name, shape, fn, npfn", VIEW_CASES, ids=IDS)
def test_view_of_view_of_offset_storage(name, shape, fn, npfn):
    """The same ops applied to a base that is itself an offset, reversed view."""
    big_shape = (shape[0] + 2,) + shape[1:] if shape else (3,)
    a_big = _base(big_shape, "float64")
    t_big = lazy.asarray(a_big)
    if shape:
        a, t = a_big[-2:0:-1], t_big[-2:0:-1]
    else:
        a, t = a_big[1, ...], t_big[1, ...]
    assert a.shape == t.shape == shape
    if name.startswith("as_strided"):
        return  # as_strided addresses storage directly: covered above
    expected = npfn(a)
    if name.startswith("view") and expected.size and not np.shares_memory(expected, a_big):
        with pytest.raises(ValueError, match="view"):
            fn(t)
        return
    v = fn(t)
    check_view(v, t_big, npfn(a), a_big)


@pytest.mark.parametrize("pending", [False, True], ids=["realized", "pending"])
def test_one_element_is_a_copy_as_numpy_scalars_are(pending):
    """`a[i, j]` (an int for every axis) is NumPy's scalar, a copy: a later
    write to `a` does not show in it, so the swap idiom works. PyTorch gives
    a 0-d view here; `a[i, j, ...]` is that view, in NumPy and lazyrt alike."""
    a = np.arange(12.0).reshape(3, 4)
    t = lazy.asarray(a.copy()) * 1 if pending else lazy.asarray(a.copy())
    x, v = t[1, 2], t[1, 2, ...]
    assert x.shape == () and not lazy.shares_memory(x, t) and lazy.shares_memory(v, t)
    t[1, 2] = -1
    assert x.item() == 6.0 and v.item() == -1.0
    tmp = t[0, 0]
    t[0, 0] = t[2, 3]
    t[2, 3] = tmp
    assert t[0, 0].item() == 11.0 and t[2, 3].item() == 0.0
    row = t[2]  # fewer ints than axes: still a view
    t[2, 1] += 100
    assert row.tolist() == [8.0, 109.0, 10.0, 0.0]
    z = lazy.asarray(np.array(5.0))
    w, zv = z[()], z[...]
    z[...] = 7
    assert w.item() == 5.0 and zv.item() == 7.0


def test_reading_every_element_of_a_pending_tensor_runs_one_kernel():
    """`a[i]` of a pending `a` is a copy node; reading it realizes `a` (as
    reading a view of it did) and copies the element out, so the loop does
    not run, or recompute `a`, once per element."""
    lazy.sync()
    lazy.log.clear()
    t = lazy.arange(50) * 2
    assert [int(t[i]) for i in range(50)] == list(range(0, 100, 2))
    assert [float(x) for x in lazy.arange(20) * 0.5] == [i * 0.5 for i in range(20)]
    items = list(lazy.arange(30) + 1)  # 30 pending element copies, then one sync of all
    lazy.sync()
    assert [x.item() for x in items] == list(range(1, 31))
    assert len(lazy.log) == 3 and lazy.log.counters.syncs == 3


def test_pytorch_in_place_methods_on_one_element_raise():
    """In PyTorch `t[1].fill_(9)` writes t; here t[1] is a copy, so it would
    silently write nothing: it raises and names the two ways that work."""
    t = lazy.asarray(np.arange(5.0))
    for name, call in (("fill_", lambda x: x.fill_(9)), ("add_", lambda x: x.add_(1)),
                       ("zero_", lambda x: x.zero_()), ("copy_", lambda x: x.copy_(x)),
                       ("clamp_", lambda x: x.clamp_(0, 1))):
        with pytest.raises(RuntimeError, match=rf"{name} on one element.*t\[i, j, \.\.\.\]"):
            call(t[1])
    x = t[3]
    x += 50  # NumPy code's `x += 50` on a scalar: x only
    t[2, ...].fill_(7)  # the 0-d view writes t
    assert x.item() == 53.0 and t.tolist() == [0.0, 1.0, 7.0, 3.0, 4.0]


def test_item_assignment_into_one_element_raises_as_numpy():
    """`t[1][...] = 5` wrote only the copy and was silently lost; NumPy's
    scalar refuses item assignment with a TypeError."""
    a = np.arange(5.0)
    t = lazy.asarray(a)
    def write_all(e):
        e[...] = 5

    def write_none(e):
        e[()] = 5

    for write in (write_all, write_none):
        with pytest.raises(TypeError):
            write(a[1])
        with pytest.raises(TypeError, match=r"does not support item assignment.*t\[i, j, \.\.\.\]"):
            write(t[1])
    t[1, ...][...] = 5  # the 0-d view writes t
    t[2:3][0] = 6
    assert t.tolist() == [0.0, 5.0, 6.0, 3.0, 4.0]


# -- reshape / view / contiguous -------------------------------------------------------------
def test_reshape_copies_when_strides_cannot_describe_it():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = lazy.asarray(a)
    r = t.T.reshape(12)
    assert r._buf is not t._buf
    assert_close(r, a.T.reshape(12))
    assert r.is_contiguous()
    assert not np.shares_memory(r.numpy(), a)
    assert not lazy.shares_memory(r, t)
    with pytest.raises(ValueError, match="view"):
        t.T.view(12)
    with pytest.raises(ValueError):
        t[:, :2].view(6)
    assert t[:, ::2].view(6).stride() == (2,)  # one arithmetic progression: a view
    v = t.view(2, 6)
    assert v._buf is t._buf


def test_reshape_infer_and_errors():
    t = lazy.zeros(2, 3, 4)
    assert t.reshape(-1).shape == (24,)
    assert t.reshape(4, -1).shape == (4, 6)
    assert lazy.zeros(0, 3).reshape(-1, 3).shape == (0, 3)
    assert lazy.reshape(t, (3, 8)).shape == (3, 8)
    assert lazy.reshape(t, 24).shape == (24,)
    with pytest.raises(ValueError, match=r"24.*\(5, 5\)|\(5, 5\).*24"):
        t.reshape(5, 5)
    with pytest.raises(ValueError):
        t.reshape(-1, -1)
    with pytest.raises(ValueError):
        t.view(7, -1)


def test_contiguous():
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    t = lazy.asarray(a)
    assert t.contiguous() is t
    p = t.permute(1, 2, 0)
    assert not p.is_contiguous()
    c = p.contiguous()
    assert c.is_contiguous()
    assert c.stride() == np_strides(np.ascontiguousarray(a.transpose(1, 2, 0)))
    assert_close(c, a.transpose(1, 2, 0))
    assert not np.shares_memory(c.numpy(), a)
    # size-1 axes and stride-0 axes
    assert not t[:, 1:2, :].is_contiguous()
    assert t[1:2].is_contiguous() and t[1, 1:2].is_contiguous()
    assert lazy.zeros(3, 1).expand(3, 4).is_contiguous() is False
    assert lazy.asarray(a[:1]).is_contiguous()


@pytest.mark.parametrize("key, contiguous", [
    ((slice(None),), True), ((0,), True), ((slice(None), 0), False),
    ((slice(None, None, -1),), False), ((slice(1, 2),), True), ((E, slice(0, 1)), False),
    ((slice(0, 1), slice(0, 1)), True), ((slice(0, 1), 0, slice(None)), True),
    ((slice(None), slice(0, 1), slice(0, 1)), False), ((slice(None), slice(None), 0), False),
])
def test_is_contiguous_matches_numpy(key, contiguous):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    v = lazy.asarray(a)[key]
    expected = a[key].flags.c_contiguous
    assert v.is_contiguous() == contiguous
    if a[key].ndim > 0 and a[key].size > 1:
        assert v.is_contiguous() == expected


# -- memory sharing -----------------------------------------------------------------------
def test_numpy_shares_memory_with_base_after_sync():
    x = lazy.arange(24, dtype=lazy.float64).reshape(4, 6) + 0.5
    v = x[1::2, ::-2]
    w = x.T[2]
    lazy.sync(v, w)
    base = x.numpy()
    for t, ref in ((v, base[1::2, ::-2]), (w, base.T[2])):
        got = t.numpy()
        assert np.shares_memory(got, base)
        assert got.strides == ref.strides
        assert np_offset(got, base) == t.storage_offset() - x.storage_offset()
        np.testing.assert_array_equal(got, ref)


def test_shares_memory():
    x = lazy.arange(20).reshape(4, 5) + 0
    assert lazy.shares_memory(x, x)
    assert lazy.shares_memory(x, x[1:, 2])
    assert lazy.shares_memory(x[::2], x[2])
    assert not lazy.shares_memory(x[::2], x[1::2])
    assert not lazy.shares_memory(x[:, :2], x[:, 2:])
    assert not lazy.shares_memory(x, x + 0)
    assert not lazy.shares_memory(x, lazy.arange(20))
    assert not lazy.shares_memory(x[:0], x)
    a = np.arange(10.0)
    t1, t2 = lazy.asarray(a[:6]), lazy.asarray(a[4:])
    assert lazy.shares_memory(t1, t2)
    assert not lazy.shares_memory(lazy.asarray(a[:4]), lazy.asarray(a[4:]))
    assert not lazy.shares_memory(lazy.asarray(a[::2]), lazy.asarray(a[1::2]))


def test_view_ops_run_nothing():
    x = lazy.arange(60).reshape(3, 4, 5) * 2
    lazy.log.clear()
    v = x.permute(2, 0, 1)[1:, ::-1].unsqueeze(0).expand(2, 4, 3, 4).narrow(3, 1, 2)
    v = v.select(0, 1).diagonal(0, 1, 2).unsqueeze(0).squeeze(0).T
    assert len(lazy.log) == 0
    assert v._buf is x._buf and x._buf.pending
    a = (np.arange(60).reshape(3, 4, 5) * 2).transpose(2, 0, 1)[1:, ::-1][None]
    a = np.broadcast_to(a, (2, 4, 3, 4))[..., 1:3][1].diagonal(0, 1, 2).T
    assert v.shape == a.shape
    np.testing.assert_array_equal(v.numpy(), a)
    assert set(backends_used()) == {"llvm"}


def test_functional_view_forms():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = lazy.asarray(a)
    assert_close(lazy.permute(t, (2, 0, 1)), a.transpose(2, 0, 1))
    assert_close(lazy.transpose(t), a.transpose())
    assert_close(lazy.transpose(t, (1, 0, 2)), a.transpose(1, 0, 2))
    assert_close(lazy.transpose(t, 0, 2), a.swapaxes(0, 2))
    assert_close(t.transpose(), a.transpose())
    assert_close(t.transpose(2, 0, 1), a.transpose(2, 0, 1))
    assert_close(lazy.squeeze(t[:1]), a[:1].squeeze())
    assert_close(lazy.unsqueeze(t, 1), a[:, None])
    assert_close(lazy.expand_dims(t, -1), np.expand_dims(a, -1))
    assert_close(lazy.broadcast_to(t[0, 0], (2, 4)), np.broadcast_to(a[0, 0], (2, 4)))
    assert_close(lazy.flatten(t, 1), a.reshape(2, 12))
    assert_close(lazy.narrow(t, 2, 1, 2), a[..., 1:3])
    assert_close(lazy.select(t, 0, 1), a[1])
    assert_close(lazy.diagonal(t, 0, 1, 2), a.diagonal(0, 1, 2))
    assert_close(lazy.as_strided(t, (2, 2), (1, 2)), np_as_strided(a, (2, 2), (1, 2), 0))
    assert_close(lazy.squeeze(t[:, :1, :1], (1, 2)), a[:, :1, :1].squeeze((1, 2)))


def test_transpose_pair_swaps_like_torch_on_2d():
    """`t.transpose(0, 1)` (PyTorch's two-dim form) swaps the axes of a matrix too."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = lazy.asarray(a)
    assert t.transpose(0, 1).shape == (3, 2)
    assert t.transpose(1, 0).shape == (3, 2)
    assert lazy.transpose(t, 0, 1).shape == (3, 2)
    np.testing.assert_array_equal(t.transpose(0, 1).numpy(), a.T)


def test_iteration_and_len():
    a = np.arange(6).reshape(3, 2)
    t = lazy.asarray(a)
    rows = list(t)
    assert len(rows) == 3
    for r, ref in zip(rows, a):
        assert r._buf is t._buf
        assert_close(r, ref)
    with pytest.raises(TypeError):
        len(lazy.tensor(1))


# -- PyTorch comparisons (duplicates the NumPy checks above when torch is importable) -------
# PyTorch has no negative slice steps; these cases are checked against NumPy only.
TORCH_CANNOT = {"slice_neg_step", "slice_neg_step2", "slice_empty_neg", "ellipsis_mid",
                "chain", "unsqueeze_strided", "diagonal_of_view"}
TORCH_CASES = [c for c in VIEW_CASES if c[0] not in TORCH_CANNOT]


@pytest.mark.parametrize("name, shape, fn, npfn", TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_view_strides_match_torch(name, shape, fn, npfn):
    import torch
    a = _base(shape)
    tt = torch.from_numpy(a.copy())
    t = lazy.asarray(a)
    expected = fn(tt)
    v = fn(t)
    assert v.shape == tuple(expected.shape)
    if v.size:  # offsets of empty views address nothing
        assert v.storage_offset() == expected.storage_offset()
    for d, n in enumerate(v.shape):
        if n > 1 and v.size:
            assert v.stride()[d] == expected.stride()[d], (v.stride(), expected.stride())
    assert v.is_contiguous() == expected.is_contiguous() or v.size <= 1
    np.testing.assert_array_equal(v.numpy(), expected.numpy())


def test_view_vs_reshape_copy_decisions_match_torch():
    import torch
    a = np.arange(48, dtype=np.float32).reshape(4, 3, 4)
    cases = [
        (lambda t: t.transpose(0, 1), (12, 4)),
        (lambda t: t.transpose(0, 1), (3, 16)),
        (lambda t: t[:, ::2], (4, 8)),
        (lambda t: t[:, :, ::2], (4, 6)),
        (lambda t: t[:, :, ::2], (24,)),
        (lambda t: t[::2], (2, 12)),
        (lambda t: t.permute(2, 0, 1), (4, 12)),
        (lambda t: t.permute(1, 2, 0), (12, 4)),
        (lambda t: t[:, :1].expand(4, 5, 4), (20, 4)),
        (lambda t: t[:, :1].expand(4, 5, 4), (4, 5, 2, 2)),
        (lambda t: t.narrow(2, 1, 2), (4, 3, 2, 1)),
        (lambda t: t.select(1, 1), (16,)),
    ]
    for fn, shape in cases:
        tv, lv = fn(torch.from_numpy(a.copy())), fn(lazy.asarray(a))
        try:
            expected = tv.view(*shape)
        except RuntimeError:
            with pytest.raises(ValueError):
                lv.view(*shape)
            r = lv.reshape(*shape)
            assert r._buf is not lv._buf
            np.testing.assert_array_equal(r.numpy(), tv.reshape(*shape).numpy())
            continue
        got = lv.view(*shape)
        assert got._buf is lv._buf
        assert got.storage_offset() == expected.storage_offset()
        for d, n in enumerate(shape):
            if n > 1:
                assert got.stride()[d] == expected.stride()[d], (shape, got.stride(),
                                                                 expected.stride())
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


@st.composite
def _composable(draw):
    """(outer, inner): inner any view (broadcast and reversed axes, an
    offset), outer a view of the contiguous layout of inner's shape, made
    by slicing, permuting, expanding or reshaping it."""
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=1, max_size=3)))
    strides = tuple(draw(st.sampled_from([0, 1, -1, 2, 3, 5])) for _ in shape)
    inner = View(shape, strides, draw(st.integers(0, 40)))
    outer = View.contiguous(shape)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["slice", "permute", "expand", "reshape"]))
        if op == "slice" and outer.ndim:
            d = draw(st.integers(0, outer.ndim - 1))
            n = outer.shape[d]
            start = draw(st.integers(0, n))
            outer = outer.slice(d, start, draw(st.integers(start, n)), draw(st.integers(1, 3)))
        elif op == "permute":
            outer = outer.permute(tuple(draw(st.permutations(range(outer.ndim)))))
        elif op == "expand":
            outer = outer.unsqueeze(0).expand((draw(st.integers(1, 3)),) + outer.shape)
        elif op == "reshape" and outer.size:
            flat = outer.reshape((outer.size,))
            outer = flat if flat is not None else outer
    return outer, inner


@settings(max_examples=300, deadline=None)
@given(_composable())
def test_compose_reads_what_the_chain_reads(views):
    """compose(outer, inner), when strides can say it, reads every element
    where reading through outer, then inner, does (or says None)."""
    outer, inner = views
    merged = compose(outer, inner)
    if merged is None:
        return
    assert merged.shape == outer.shape
    want = positions(outer, [inner], outer.shape)
    np.testing.assert_array_equal(positions(merged, [], outer.shape), want)
