"""Advanced indexing: integer-array and boolean-mask reads (gathers: copies, with NumPy's
result shapes), advanced-index assignment, take/take_along_axis/gather/index_select/
masked_fill/nonzero, bounds errors at build time, and index syncs in the log."""
from __future__ import annotations

import numpy as np
import pytest

import lazy
from conftest import DTYPE_NAMES, assert_close, sample

pytestmark = pytest.mark.usefixtures("strict_fallback")

E = Ellipsis
SHAPE = (4, 5, 6)


def base(shape=SHAPE, dtype="float64", pending=False, seed=0):
    a = sample(shape, dtype, np.random.default_rng(seed))
    t = lazy.tensor(a)
    if pending:
        t = t + (False if dtype == "bool" else 0)
    return t, a.copy()


def _convert(k, how: str):
    """One index component as a list, a NumPy array or a lazy tensor."""
    if not isinstance(k, np.ndarray) or k.ndim == 0:
        return k
    if how == "list":
        return k.tolist()
    if how == "tensor":
        return lazy.tensor(k)
    if how == "tensor_int32":
        return lazy.tensor(k.astype(np.int32) if k.dtype.kind == "i" else k)
    if how == "pending_tensor":
        return lazy.tensor(k) | False if k.dtype == bool else lazy.tensor(k) + 0
    return k


def convert(key, how: str):
    if isinstance(key, tuple):
        return tuple(_convert(k, how) for k in key)
    return _convert(key, how)


_A = np.arange(np.prod(SHAPE)).reshape(SHAPE)
I = np.array  # noqa: E741

READ_KEYS = [
    ("list", I([1, 0, 3])),
    ("negative", I([-1, 0, -4])),
    ("duplicates", I([2, 2, 0, 2])),
    ("index_2d", I([[0, 1], [3, 2]])),
    ("axis1", (slice(None), I([4, 0, -2]))),
    ("last_axis_ellipsis", (E, I([5, 0]))),
    ("idx_slice_slice", (I([3, 1]), slice(None), slice(1, 3))),
    ("slice_neg_step_idx", (slice(None, None, -1), I([1, 1]), slice(None, None, 2))),
    ("adjacent_pair", (slice(None), I([0, 4]), I([5, 1]))),
    ("non_adjacent", (I([0, 3]), slice(None), I([5, 1]))),
    ("non_adjacent_ellipsis", (I([0, 3, 2]), E, I([5, 1, 0]))),
    ("int_and_array_non_adjacent", (1, slice(None), I([0, 2]))),
    ("int_and_array_adjacent", (slice(1, 3), 2, I([0, 2, 4]))),
    ("broadcast_indices", (I([[0], [3]]), I([[1, 2, 4]]))),
    ("broadcast_non_adjacent", (I([[0], [3]]), slice(None, 2), I([1, 2, 4]))),
    ("none_before", (None, I([1, 2]), slice(2, 4))),
    ("none_between", (I([1, 2]), None, slice(2, 4))),
    ("all_three", (I([0, 1]), I([1, 2]), I([2, 3]))),
    ("mask_full", _A % 3 == 0),
    ("mask_leading", (_A[:, :, 0] % 2 == 1)),
    ("mask_axis0", I([True, False, True, True])),
    ("mask_axis1", (slice(None), I([False, True, True, False, True]))),
    ("mask_last_ellipsis", (E, I([True, False, False, True, True, False]))),
    ("mask_and_index", (I([True, False, True, False]), slice(None), I([1, 5]))),
    ("mask_empty", np.zeros(SHAPE, bool)),
    ("mask_then_none", (I([False, True, True, False]), None)),
    ("bool_scalar_true", True),
    ("bool_scalar_false", False),
]
R_IDS = [k[0] for k in READ_KEYS]
HOWS = ["numpy", "list", "tensor", "tensor_int32", "pending_tensor"]
READ_CASES = [(n, k, HOWS[i % len(HOWS)]) for i, (n, k) in enumerate(READ_KEYS)]


def check_gather(r: lazy.Tensor, t: lazy.Tensor, expected: np.ndarray) -> None:
    """`r` has NumPy's result and is a copy: no memory shared with `t`."""
    assert r.shape == expected.shape
    assert r._buf is not t._buf
    assert not lazy.shares_memory(r, t)
    assert_close(r, expected)
    assert not np.shares_memory(r.numpy(), t.numpy())


@pytest.mark.parametrize("name, key", READ_KEYS, ids=R_IDS)
def test_read_numpy_key(name, key):
    t, a = base(seed=1)
    check_gather(t[key], t, a[key])


@pytest.mark.parametrize("name, key, how", READ_CASES, ids=[f"{c[0]}-{c[2]}" for c in READ_CASES])
def test_read_other_index_forms(name, key, how):
    t, a = base(pending=True, seed=2)
    r = t[convert(key, how)]
    check_gather(r, t, a[key])


@pytest.mark.parametrize("name, key", READ_KEYS[::3], ids=R_IDS[::3])
def test_read_from_a_view(name, key):
    """Positions come from the view's strides: index a transposed, reversed, offset view."""
    big_t, big_a = base((6, 6, 7), "int64", seed=3)
    t = big_t.permute(1, 0, 2)[1:, ::-1][:, 1:, 1:]  # shape (5, 5, 6) -> take (4, 5, 6)
    a = big_a.transpose(1, 0, 2)[1:, ::-1][:, 1:, 1:]
    t, a = t[:4], a[:4]
    assert t.shape == a.shape == SHAPE
    r = t[key]
    check_gather(r, big_t, a[key])


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_read_every_dtype(dtype):
    t, a = base((5, 4), dtype, seed=4)
    for key in [I([4, 0, 0]), (slice(None), I([3, 1])), a.any(axis=1) if dtype == "bool"
                else (a[:, 0] > 0)]:
        check_gather(t[key], t, a[key])


def test_empty_list_index():
    """NumPy and PyTorch accept `t[[]]` (an empty selection)."""
    t, a = base((3, 4), "int32")
    check_gather(t[[]], t, a[[]])
    check_gather(t[:, []], t, a[:, []])


def test_empty_integer_array_index():
    t, a = base((3, 4), "int32")
    idx = np.zeros(0, np.int64)
    check_gather(t[idx], t, a[idx])
    check_gather(t[lazy.tensor(idx)], t, a[idx])


def test_read_of_0d_and_empty_tensors():
    t = lazy.tensor(np.float64(3.5))
    a = np.array(3.5)
    for key in (True, False, (None, True)):
        check_gather(t[key], t, a[key])
    z, az = base((0, 3), "float32")
    check_gather(z[I([], dtype=np.int64)], z, az[I([], dtype=np.int64)])
    check_gather(z[:, I([2, 0])], z, az[:, I([2, 0])])


def test_gather_is_a_copy_that_keeps_its_values():
    t, a = base((5, 3), "float64", seed=5)
    r = t[[4, 0, 4]]
    m = t[t > 0]
    a_old = a.copy()
    t[...] = -1  # written after the reads were built: they keep the old values
    a[...] = -1
    assert_close(r, a_old[[4, 0, 4]])
    assert_close(m, a_old[a_old > 0])
    r[0] = 100  # writing the copy leaves the base alone
    assert_close(t, a)
    expected = a_old[[4, 0, 4]]
    expected[0] = 100
    assert_close(r, expected)


@pytest.mark.parametrize("wrap", [np.array, lazy.tensor], ids=["ndarray", "tensor"])
def test_a_0d_integer_array_index_is_advanced_a_copy(wrap):
    """NumPy counts a 0-d integer array as an advanced index: `a[np.array(1)]`
    is a copy of the row. It was a view here, so writing it wrote the base."""
    t, a = base((3, 4), "float64", seed=6)
    for key in ((wrap(1),), (wrap(-1), slice(1, None)), (slice(None), wrap(2))):
        r = t[key]
        assert_close(r, a[tuple(np.asarray(k) if not isinstance(k, slice) else k for k in key)])
        r[...] = 100.0
        assert_close(t, a)
    t[wrap(2)] = 7.0
    a[np.array(2)] = 7.0
    assert_close(t, a)


def test_gather_fuses_into_consumer():
    t = lazy.arange(20, dtype=lazy.float64).reshape(4, 5) * 1
    lazy.sync()
    lazy.log.clear()
    y = t[[3, 0, 1]] * 2 + 1
    lazy.sync()
    assert len(lazy.log) == 1, lazy.log.table()
    a = np.arange(20.0).reshape(4, 5)
    assert_close(y, a[[3, 0, 1]] * 2 + 1)
    assert all(r.backend == "llvm" for r in lazy.log)


# -- bounds and type errors, at the building line --------------------------------------------
@pytest.mark.parametrize("key, match", [
    ([0, 4], "index 4 is out of bounds for axis 0 with size 4"),
    ([-5], "index -5 is out of bounds for axis 0 with size 4"),
    ((slice(None), [1, 7]), "index 7 is out of bounds for axis 1 with size 5"),
    ((slice(None), slice(None), np.array([[6]])),
     "index 6 is out of bounds for axis 2 with size 6"),
    ((0, slice(None), [-7]), "index -7 is out of bounds for axis 2 with size 6"),
    (np.array([True, False]), "boolean index did not match"),
    ((slice(None), np.ones(4, bool)), "boolean index did not match"),
    (([0, 1], [0, 1, 2]), "shape mismatch|broadcast"),
    ([0.5, 1], "integer|boolean"),
    (np.array([1.0]), "integer|boolean"),
    (([0], 0, 0, 0), "too many indices"),
])
def test_read_errors_at_build_time(key, match):
    t, a = base(pending=True)
    other = t * 2
    lazy.log.clear()
    with pytest.raises(IndexError, match=match):
        t[key]
    with pytest.raises(IndexError, match=match):
        t[key] = 1
    assert len(lazy.log) == 0  # nothing ran: the checks need no values
    assert_close(t, a)
    assert_close(other, a * 2)


@pytest.mark.parametrize("key", [
    np.array([3, -1, 0, 3, -10]), np.array([[1, 2], [-3, 0]]), np.array([], np.int64),
    np.array([9], np.uint64), np.array([True, False] * 5), np.zeros(10, bool)])
@pytest.mark.parametrize("view", ["whole", "reversed", "strided"])
def test_one_dimensional_fast_positions(key, view):
    """x[idx] and x[mask] on a 1-D tensor take their positions straight from
    the key (no arange of the whole axis): same values, shapes, writes and
    errors as NumPy, through views with negative and non-unit strides too."""
    a = np.arange(30, dtype=np.float64) * 1.5
    t = lazy.tensor(a)
    sel = {"whole": slice(None), "reversed": slice(None, None, -1), "strided": slice(1, None, 3)}
    tv, av = t[sel[view]], a[sel[view]]
    assert av.shape == (10,) or view != "strided"
    if view != "strided" and key.dtype == bool:
        with pytest.raises(IndexError, match="boolean index did not match"):
            tv[key]
        return
    np.testing.assert_array_equal(tv[key].numpy(), av[key])
    tv[key] = -1.0
    av = av.copy()
    av[key] = -1.0
    np.testing.assert_array_equal(tv.numpy(), av)
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size"):
        tv[np.array([0, len(av)])]


def test_index_tensor_errors():
    t, a = base((4, 5), "int64")
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 4"):
        t[lazy.tensor([1, 9])]
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 5"):
        t[:, lazy.arange(6)]
    with pytest.raises(IndexError):
        t[lazy.tensor([1.0, 2.0])]
    with pytest.raises(IndexError, match="boolean index did not match"):
        t[lazy.tensor([True, False])]
    assert_close(t, a)


# -- advanced-index assignment ---------------------------------------------------------------
WRITE_KEYS = [
    ("list", I([3, 0])),
    ("negative", I([-1, -3])),
    ("index_2d", I([[0, 2], [1, 3]])),
    ("idx_slice", (I([2, 0]), slice(1, 4))),
    ("slice_idx", (slice(None, None, -2), I([4, 0, 1]))),
    ("non_adjacent", (I([0, 3]), slice(None), I([5, 1]))),
    ("int_and_array", (1, slice(None), I([0, 2]))),
    ("broadcast_indices", (I([[0], [3]]), I([[1, 2, 4]]))),
    ("ellipsis", (E, I([5, 0]))),
    ("mask_full", _A % 4 == 1),
    ("mask_leading", (_A[:, :, 0] % 3 == 0)),
    ("mask_axis1", (slice(None), I([False, True, True, False, True]))),
]
W_IDS = [k[0] for k in WRITE_KEYS]
VALUE_KINDS = ["scalar", "numpy", "numpy_bcast", "tensor", "list"]


def _value(kind: str, shape, dtype: str, rng):
    if kind == "scalar":
        return -7, -7
    if kind == "numpy":
        v = sample(shape, dtype, rng)
        return v, v
    if kind == "numpy_bcast":
        v = sample(shape[-1:], dtype, rng)
        return v, v
    v = sample(shape, dtype, rng)
    return (lazy.tensor(v) if kind == "tensor" else v.tolist()), v


@pytest.mark.parametrize("kind", VALUE_KINDS)
@pytest.mark.parametrize("name, key", WRITE_KEYS, ids=W_IDS)
def test_setitem_advanced(name, key, kind):
    rng = np.random.default_rng(len(name))
    dtype = "float64" if len(name) % 2 else "int64"
    t, a = base(dtype=dtype, seed=6)
    view = t.T[::-1]  # a view from before the write sees it
    lv, nv = _value(kind, a[key].shape, dtype, rng)
    t[convert(key, ("numpy", "list", "tensor")[len(kind) % 3])] = lv
    a[key] = nv
    assert_close(t, a)
    assert_close(view, a.T[::-1])


def test_setitem_duplicate_indices_last_wins():
    t, a = base((6,), "int64")
    t[[1, 1, 3, 1]] = [5, 6, 7, 8]
    a[[1, 1, 3, 1]] = [5, 6, 7, 8]
    assert_close(t, a)
    t2, a2 = base((3, 4), "float64")
    idx = lazy.tensor([[2, 0], [2, 2]])
    t2[idx, 1:3] = np.arange(8.0).reshape(2, 2, 2)
    a2[np.array([[2, 0], [2, 2]]), 1:3] = np.arange(8.0).reshape(2, 2, 2)
    assert_close(t2, a2)


def test_augmented_assignment_with_duplicates_applies_once():
    """`x[idx] += 1` is x[idx] = x[idx] + 1: a duplicate gets one increment (NumPy)."""
    t, a = base((5,), "int64")
    t[[0, 0, 2]] += 1
    a[[0, 0, 2]] += 1
    t[t > 0] *= 3
    a[a > 0] *= 3
    assert_close(t, a)


def test_setitem_mask_from_the_tensor_itself():
    t, a = base((4, 5), "float64", pending=True, seed=8)
    t[t < 0] = 0
    a[a < 0] = 0
    t[(t > 1) & (t < 3)] = lazy.tensor(-1.5, dtype=lazy.float64)
    a[(a > 1) & (a < 3)] = -1.5
    n = int((a == 0).sum())
    t[t == 0] = np.arange(n, dtype=np.float64)
    a[a == 0] = np.arange(n, dtype=np.float64)
    assert_close(t, a)


def test_setitem_advanced_through_a_view_changes_base_and_other_views():
    t, a = base((4, 6), "float64", seed=9)
    col = t[:, 2]
    v = t.T[1:]
    v[[0, 3]] = 9.5
    a.T[1:][[0, 3]] = 9.5
    t[1:].diagonal()[[0, 2]] = -4
    a[1, 0] = a[3, 2] = -4
    v[:, [True, False, False, True]] += 1
    a.T[1:][:, [True, False, False, True]] += 1
    assert_close(t, a)
    assert_close(col, a[:, 2])
    assert_close(v, a.T[1:])


def test_setitem_advanced_casts_and_broadcasts():
    t, a = base((3, 4), "int32")
    t[[0, 2]] = np.array([1.75, -2.5, 3.0, 0.5])  # float -> int truncates, as NumPy
    a[[0, 2]] = np.array([1.75, -2.5, 3.0, 0.5])
    t[[1], 1:] = lazy.tensor([[True], ])
    a[[1], 1:] = np.array([[True]])
    assert_close(t, a)
    with pytest.raises(ValueError, match="broadcast"):
        t[[0, 1]] = np.ones(3)
    with pytest.raises(ValueError):
        t[t > 0] = np.ones(1000)
    assert_close(t, a)


def test_advanced_write_ordering():
    t, a = base((6,), "float64", pending=True)
    before = t * 1
    g = t[[5, 4]]
    t[[0, 5]] = [10.0, 20.0]
    after = t[[5, 4]]
    a_old = a.copy()
    a[[0, 5]] = [10.0, 20.0]
    assert_close(before, a_old)
    assert_close(g, a_old[[5, 4]])
    assert_close(after, a[[5, 4]])
    assert_close(t, a)


def test_advanced_write_is_logged_as_write_kernel():
    t = lazy.zeros(8, dtype=lazy.int64) + 0
    lazy.sync()
    lazy.log.clear()
    t[[1, 5, 1]] = 3
    lazy.sync()
    writes = [r for r in lazy.log if r.kernel.startswith("s")]
    assert writes, lazy.log.table()
    import re
    assert all(re.search(r"; write (in place|copy: .+)$", r.reason) for r in writes)
    assert_close(t, np.array([0, 3, 0, 0, 0, 3, 0, 0]))


# -- take / take_along_axis / gather / index_select / masked_fill / nonzero --------------------
@pytest.mark.parametrize("indices, axis", [
    (I([5, 0, -1, 3]), None), (I([[1, 2], [0, 23]]), None), (I([3, 0, 3]), 0),
    (I([-1, 1]), 1), (I([[4], [0]]), -1), (I(2), 2), (I([], dtype=np.int64), 1),
])
def test_take(indices, axis):
    t, a = base((4, 5, 6), "float32", seed=10)
    expected = np.take(a, indices, axis=axis)
    r = lazy.take(t, indices, axis=axis)
    check_gather(r, t, expected)
    check_gather(t.take(lazy.tensor(indices), axis), t, expected)
    with pytest.raises(IndexError):
        lazy.take(t, [a.size if axis is None else a.shape[axis]], axis=axis)


@pytest.mark.parametrize("indices", [[], [[]], (), [[], []]])
@pytest.mark.parametrize("axis", [None, 1])
def test_take_of_an_empty_list_is_empty_as_in_numpy(indices, axis):
    """`np.asarray([])` is float64; NumPy's take still reads an empty list
    as integer indices (an empty float64 *array* it refuses, and so do we)."""
    t, a = base((4, 5, 6), "float32", seed=10)
    check_gather(lazy.take(t, indices, axis=axis), t, np.take(a, indices, axis=axis))
    with pytest.raises(IndexError, match="integers"):
        lazy.take(t, np.array([]), axis=axis)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis(axis):
    t, a = base((3, 4, 5), "int64", seed=11)
    idx = np.argsort(a, axis=axis)
    check_gather(lazy.take_along_axis(t, idx, axis), t, np.take_along_axis(a, idx, axis))
    first = np.take(idx, [0], axis=axis)  # size-1 along axis: broadcasting as NumPy
    check_gather(lazy.take_along_axis(t, lazy.tensor(first), axis), t,
                 np.take_along_axis(a, first, axis))
    with pytest.raises(ValueError):
        lazy.take_along_axis(t, idx[0], axis)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_vs_torch(dim):
    import torch
    t, a = base((3, 4, 5), "float64", seed=12)
    rng = np.random.default_rng(dim + 3)
    d = dim % 3
    ishape = [2, 3, 4]
    ishape[d] = 6
    idx = rng.integers(0, a.shape[d], ishape)
    expected = torch.gather(torch.from_numpy(a), dim, torch.from_numpy(idx)).numpy()
    check_gather(lazy.gather(t, dim, idx), t, expected)
    check_gather(t.gather(dim, lazy.tensor(idx)), t, expected)
    # from a transposed view: positions follow the view's strides
    idx_t = rng.integers(0, a.T.shape[d], [5, 4, 3][:d] + [2] + [5, 4, 3][d + 1:])
    check_gather(t.T.gather(dim, idx_t), t,
                 torch.gather(torch.from_numpy(a).permute(2, 1, 0), dim,
                              torch.from_numpy(idx_t)).numpy())
    bad = idx.copy()
    bad.flat[0] = a.shape[d]
    with pytest.raises(IndexError, match="out of bounds"):
        t.gather(dim, bad)
    with pytest.raises(ValueError):
        t.gather(dim, idx[0])


@pytest.mark.parametrize("dim", [0, 1, 2, -2])
def test_index_select_vs_torch(dim):
    import torch
    t, a = base((3, 4, 5), "int32", seed=13)
    idx = np.array([2, 0, 2, 1])
    tt = torch.from_numpy(a)
    expected = torch.index_select(tt, dim, torch.from_numpy(idx)).numpy()
    check_gather(lazy.index_select(t, dim, idx), t, expected)
    check_gather(t.index_select(dim, lazy.tensor(idx)), t, expected)
    check_gather(t.index_select(dim, np.array(1)), t,
                 torch.index_select(tt, dim, torch.tensor(1)).numpy())
    with pytest.raises(IndexError):
        t.index_select(dim, [0, a.shape[dim]])


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "bool"])
def test_masked_fill_vs_torch(dtype):
    import torch
    t, a = base((3, 4), dtype, seed=14, pending=True)
    mask = sample((3, 4), "bool", np.random.default_rng(1))
    row_mask = np.array([True, False, False, True])
    value = True if dtype == "bool" else 2.5 if dtype.startswith("float") else -3
    tt = torch.from_numpy(a.copy())
    lazy.log.clear()
    r1 = t.masked_fill(mask, value)
    r2 = lazy.masked_fill(t, lazy.tensor(row_mask), value)
    r3 = t.masked_fill(lazy.tensor(mask), lazy.tensor(value))
    assert not lazy.log.syncs  # a lazy where: no sync
    assert_close(r1, tt.masked_fill(torch.from_numpy(mask), value).numpy())
    assert_close(r2, tt.masked_fill(torch.from_numpy(row_mask), value).numpy())
    assert_close(r3, tt.masked_fill(torch.from_numpy(mask), value).numpy())
    assert_close(t, a)  # out of place: t unchanged
    with pytest.raises(TypeError):
        t.masked_fill(mask.astype(np.int64), value)
    with pytest.raises(ValueError):
        t.masked_fill(np.ones((2, 4), bool), value)


@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4)])
def test_nonzero_vs_numpy(shape):
    t, a = base(shape, "int64", seed=15, pending=True)
    lazy.log.clear()
    got = lazy.nonzero(t > 0)
    assert [s.cause for s in lazy.log.syncs] == ["implicit: nonzero"]
    expected = np.nonzero(a > 0)
    assert isinstance(got, tuple) and len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_close(g, e, dtype="int64")
    method = t.nonzero()
    for g, e in zip(method, np.nonzero(a)):
        assert_close(g, e, dtype="int64")
    # the index tuple reads the same elements as the mask
    check_gather(t[got], t, a[a > 0])
    check_gather(t[lazy.nonzero(t < -100)], t, a[a < -100])


# -- index syncs are logged sync points ----------------------------------------------------------
def test_mask_read_is_a_logged_sync_point():
    t = lazy.arange(12, dtype=lazy.float64).reshape(3, 4) * 1.5
    lazy.log.clear()
    mask = t > 4
    assert not lazy.log.syncs
    r = t[mask]  # data-dependent shape: must sync the mask here
    causes = [s.cause for s in lazy.log.syncs]
    assert causes == ["implicit: boolean mask index"], causes
    assert lazy.log.counters.implicit_syncs == 1
    a = np.arange(12.0).reshape(3, 4) * 1.5
    assert r.shape == a[a > 4].shape
    assert_close(r, a[a > 4])
    assert lazy.log.syncs[0].where.startswith("test_advanced_indexing.py:") or \
        "test_advanced_indexing.py" in lazy.log.syncs[0].where


def test_index_tensor_read_is_a_logged_sync_point():
    t = lazy.arange(10) * 1
    idx = lazy.arange(5) * 2
    lazy.log.clear()
    r = t[idx]
    assert [s.cause for s in lazy.log.syncs] == ["implicit: index tensor"]
    assert_close(r, np.arange(0, 10, 2))


def test_realized_index_tensor_needs_no_sync():
    t = lazy.arange(10) * 1
    idx = lazy.tensor([3, 1])
    mask = lazy.tensor(np.arange(10) % 3 == 0)
    lazy.log.clear()
    r, m = t[idx], t[mask]
    assert not lazy.log.syncs
    assert_close(r, [3, 1])
    assert_close(m, [0, 3, 6, 9])


def test_mask_sync_errors_under_implicit_sync_error(monkeypatch):
    t = lazy.arange(6) * 1
    mask = t > 2
    monkeypatch.setenv("LAZY_IMPLICIT_SYNC", "error")
    with pytest.raises(lazy.ImplicitSyncError, match="boolean mask index"):
        t[mask]
    with pytest.raises(lazy.ImplicitSyncError, match="index tensor"):
        t[t * 0]
    monkeypatch.setenv("LAZY_IMPLICIT_SYNC", "allow")
    lazy.sync(mask)  # explicit sync is always allowed; then no implicit one is needed
    monkeypatch.setenv("LAZY_IMPLICIT_SYNC", "error")
    r = t[mask]
    monkeypatch.setenv("LAZY_IMPLICIT_SYNC", "allow")
    assert_close(r, [3, 4, 5])
