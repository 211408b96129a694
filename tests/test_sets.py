"""The set functions (`unique`, `unique_all`, ...; lazy/sets.py): sorts and
kernels of ours around one sync, checked against NumPy. This module runs
under LAZY_FALLBACK=error, so none of them is a fallback."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazy
import lazy.numpy as lnp
from conftest import DTYPE_NAMES, sample
from test_sort import tricky

pytestmark = pytest.mark.usefixtures("strict_fallback")

FLAGS = [(False, False, False), (True, False, False), (False, True, False),
         (False, False, True), (True, True, True)]


def same_arrays(got: tuple, want: tuple, nans: np.ndarray | None = None,
                inverse_at: int | None = None) -> None:
    """Equal dtypes, shapes and values. At `inverse_at` is an inverse, and
    where `nans` marks distinct NaNs, any one-to-one choice of their
    indices is right: NumPy's argsort there is not stable, ours is."""
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert (g.dtype.name, g.shape) == (w.dtype.name, w.shape), (g, w)
        g = g.numpy()
        if i == inverse_at and nans is not None and nans.any():
            np.testing.assert_array_equal(np.sort(g[nans]), np.sort(w[nans]))
            g, w = g[~nans], w[~nans]
        np.testing.assert_array_equal(g, w)


def as_tuple(r: object) -> tuple:
    return r if isinstance(r, tuple) else (r,)


def check_all_forms(a: np.ndarray, x: lazy.Tensor) -> None:
    """Every set function of `x` against NumPy's of `a`."""
    nans = np.isnan(a) if a.dtype.kind == "f" else None
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        got, want = getattr(lnp, name)(x), getattr(np, name)(a)
        assert (type(got).__name__, got._fields) == (type(want).__name__, want._fields)
        at = got._fields.index("inverse_indices") if "inverse_indices" in got._fields else None
        same_arrays(got, want, nans, at)
    # NumPy 2.3's unique_values may give integers in hash order; ours are sorted
    same_arrays((lnp.unique_values(x),), (np.sort(np.unique_values(a)),))
    for flags in FLAGS:
        for equal_nan in (True, False):
            same_arrays(as_tuple(lnp.unique(x, *flags, equal_nan=equal_nan)),
                        as_tuple(np.unique(a, *flags, equal_nan=equal_nan)),
                        None if equal_nan else nans, 1 + flags[0] if flags[1] else None)


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from(DTYPE_NAMES), seed=st.integers(0, 2 ** 16),
       layout=st.sampled_from(["contiguous", "transposed", "sliced"]))
def test_set_functions_match_numpy(shape, dtype, seed, layout):
    """Values, first indices, inverse and counts, with ties, ±0, NaNs of
    several payloads, and inputs that are strided or offset views."""
    a = tricky(shape, dtype, np.random.default_rng(seed))
    x = lazy.asarray(a)
    if layout == "transposed":
        a, x = a.T, x.T
    elif layout == "sliced" and a.ndim:
        a, x = a[1::2], x[1::2]
    check_all_forms(a, x)


def test_many_values_split_over_threads_match_numpy():
    """Large enough that the argsort splits rows over threads and the kernels run in parts."""
    rng = np.random.default_rng(7)
    for a in (rng.integers(-500, 500, 300_000), sample((700, 600), "float32", rng)):
        check_all_forms(a, lazy.asarray(a))


def test_one_sync_then_lazy_kernels(fresh_log):
    """Nothing runs at the call but the one implicit sync that counts the
    runs; the results are pending after it and fuse with what reads them."""
    a = np.array([[3, 1, 3], [2, 1, 7]], np.int64)
    x = lazy.asarray(a) * 2
    assert len(lazy.log) == 0
    values, idx, inverse, counts = lnp.unique_all(x)
    assert [s.cause for s in lazy.log.syncs] == ["implicit: unique"]
    assert [r.kernel.split("_")[0] for r in lazy.log] == ["e0", "argsort", "e2", "e3"]
    assert values._buf.pending and idx._buf.pending and inverse._buf.pending
    y = values + 1
    np.testing.assert_array_equal(y.numpy(), np.unique(a * 2) + 1)
    assert len(lazy.log.syncs) == 2 and lazy.log.syncs[1].kernels == 1  # gather + add, fused
    lazy.sync(idx, inverse, counts)
    want = np.unique_all(a * 2)
    same_arrays((idx, inverse, counts), (want.indices, want.inverse_indices, want.counts))
    assert lazy.log.counters.fallbacks == 0


def test_the_searched_inverse_computes_the_input_once(fresh_log):
    """The inverse searches the input among the values after the sync; the
    sync keeps the input, so the kernel computing it runs once."""
    a = np.array([3.0, 1.0, 3.0, 2.0])
    values, inverse = lnp.unique(lnp.exp(lazy.asarray(a)) * 2, return_inverse=True)
    lazy.sync(values, inverse)
    assert [r.kernel.split("_")[0] for r in lazy.log].count("e0") == 2  # exp*2, then a gather
    assert sum("exp@" in " ".join(r.ops) for r in lazy.log) == 1
    want_v, want_i = np.unique(np.exp(a) * 2, return_inverse=True)
    np.testing.assert_array_equal(inverse.numpy(), want_i)
    np.testing.assert_allclose(values.numpy(), want_v)


def test_values_alone_sort_without_indices(fresh_log):
    x = lazy.asarray(np.array([4.0, 1.0, 4.0, np.nan, np.nan], np.float32))
    got = lnp.unique(x)
    sync = lazy.log.syncs[0]
    assert [r.kernel.split("_")[0] for r in lazy.log] == ["sort", "e1"], lazy.log.table()
    assert sync.cause == "implicit: unique"
    np.testing.assert_array_equal(got.numpy(), [1.0, 4.0, np.nan])


def test_implicit_sync_error_mode_raises_before_anything_runs(fresh_log, monkeypatch):
    monkeypatch.setenv("LAZY_IMPLICIT_SYNC", "error")
    x = lazy.asarray(np.array([2, 1, 2])) + 0
    with pytest.raises(lazy.ImplicitSyncError, match="implicit sync: unique at"):
        lnp.unique_values(x)
    assert len(lazy.log) == 0 and x._buf.pending


def test_other_pending_tensors_are_left_pending(fresh_log):
    """The sync computes what the unique reads, nothing else."""
    other = lazy.arange(5) * 3
    lnp.unique_counts(lazy.asarray(np.array([1, 1, 2])) + 1)
    assert other._buf.pending
    np.testing.assert_array_equal(other.numpy(), np.arange(5) * 3)


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(DTYPE_NAMES), axis=st.integers(-3, 2), seed=st.integers(0, 2 ** 16),
       transposed=st.booleans())
def test_unique_slices_match_numpy(shape, dtype, axis, seed, transposed):
    """unique(axis=): the distinct slices in NumPy's lexicographic order, with
    first indices, inverse and counts. Ties, ±0 (equal) and NaNs (never
    equal: NumPy compares the slices as records) included; a slice holding a
    NaN is its own, and which of two such identical slices gets which
    inverse entry is any one-to-one choice (NumPy's sort there is not
    stable)."""
    axis %= len(shape)
    a = tricky(shape, dtype, np.random.default_rng(seed))
    x = lazy.asarray(a)
    if transposed:
        a, x = a.T, x.T
    nans = None
    if a.dtype.kind == "f":
        nans = np.isnan(np.moveaxis(a, axis, 0).reshape(a.shape[axis], -1)).any(axis=1)
    for flags in FLAGS:
        same_arrays(as_tuple(lnp.unique(x, *flags, axis=axis)),
                    as_tuple(np.unique(a, *flags, axis=axis)),
                    nans, 1 + flags[0] if flags[1] else None)


def test_unique_rows_are_our_kernels_around_one_sync(fresh_log):
    """A stable argsort per column (the last first), a fused compare of the
    sorted rows, the one implicit sync; the results are pending after it."""
    a = np.array([[1, 2], [0, 5], [1, 2], [0, 4]])
    values, counts = lnp.unique(lazy.asarray(a) + 0, return_counts=True, axis=0)
    assert [s.cause for s in lazy.log.syncs] == ["implicit: unique"]
    kinds = [r.kernel.split("_")[0] for r in lazy.log]
    assert kinds.count("argsort") == 2 and kinds[-1].startswith("r"), kinds  # the any() last
    assert values._buf.pending and counts._buf.pending
    same_arrays((values, counts), np.unique(a, return_counts=True, axis=0))
    np.testing.assert_array_equal(lazy.unique(lazy.asarray(a), dim=0).numpy(),
                                  np.unique(a, axis=0))
    assert lazy.log.counters.fallbacks == 0


def test_empty_or_wide_slices_are_a_logged_fallback(fallback_log):
    """No slices, empty slices, or slices of more than MAX_SLICE elements (a
    sort each) keep NumPy's unique(axis=), and the log says so; a bad axis
    raises NumPy's AxisError at the call."""
    from lazy.sets import MAX_SLICE
    rng = np.random.default_rng(3)
    for a, axis in ((np.zeros((0, 3)), 0), (np.zeros((3, 0)), 0),
                    (rng.integers(0, 2, (4, MAX_SLICE + 1)), 0)):
        same_arrays(as_tuple(lnp.unique(lazy.asarray(a), return_counts=True, axis=axis)),
                    np.unique(a, return_counts=True, axis=axis))
    assert lazy.log.counters.fallbacks == 3
    with pytest.raises(np.exceptions.AxisError, match="axis 2"):
        lnp.unique(lazy.asarray(np.zeros((2, 2))), axis=2)


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 5), min_size=0, max_size=2).map(tuple),
       test_shape=st.lists(st.integers(0, 7), min_size=0, max_size=2).map(tuple),
       dtypes=st.tuples(st.sampled_from(DTYPE_NAMES), st.sampled_from(DTYPE_NAMES)),
       invert=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_isin_matches_numpy(shape, test_shape, dtypes, invert, seed):
    """Both operands with ties, ±0 and NaNs, in any two dtypes (compared in
    their common one), either empty, inverted or not."""
    rng = np.random.default_rng(seed)
    a, b = tricky(shape, dtypes[0], rng), tricky(test_shape, dtypes[1], rng)
    got = lnp.isin(lazy.asarray(a), lazy.asarray(b), invert=invert)
    want = np.isin(a, b, invert=invert)
    assert (got.dtype.name, got.shape) == (want.dtype.name, want.shape)
    np.testing.assert_array_equal(got.numpy(), want)


def test_isin_runs_nothing_until_a_sync(fresh_log):
    """No sync at the call (the result has the input's shape): a sort, a
    search and one fused compare, when the result is asked for."""
    x = lazy.asarray(np.array([[4, 1], [7, 2]])) * 2
    got = lnp.isin(x, lazy.asarray(np.array([2, 14, 3])))
    assert len(lazy.log) == 0 and got._buf.pending
    np.testing.assert_array_equal(got.numpy(), [[False, True], [True, False]])
    assert [s.cause for s in lazy.log.syncs] == ["implicit: numpy()"]
    kinds = [r.kernel.split("_")[0] for r in lazy.log]
    assert "sort" in kinds and "searchsorted" in kinds, kinds
    assert lazy.log.counters.fallbacks == 0
    with pytest.raises(ValueError, match="Invalid kind"):
        lnp.isin(x, [1], kind="hash")
    with pytest.raises(ValueError, match="only supported for boolean or integer"):
        lnp.isin(x, [1.5], kind="table")
    np.testing.assert_array_equal(lnp.isin(x, [8, 4], kind="table").numpy(),
                                  [[True, False], [False, True]])


@settings(max_examples=60, deadline=None)
@given(shapes=st.tuples(*[st.lists(st.integers(0, 5), min_size=0, max_size=2).map(tuple)] * 2),
       dtypes=st.tuples(st.sampled_from(DTYPE_NAMES), st.sampled_from(DTYPE_NAMES)),
       assume_unique=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_the_1d_set_functions_match_numpy(shapes, dtypes, assume_unique, seed):
    """union1d, intersect1d (with the indices too), setdiff1d and setxor1d:
    NumPy's values, dtypes and shapes, ties, ±0 and NaNs included, in any
    two dtypes. With `assume_unique` the inputs are made unique first, as
    NumPy asks of the caller."""
    rng = np.random.default_rng(seed)
    a, b = (tricky(shape, d, rng) for shape, d in zip(shapes, dtypes))
    if assume_unique:
        a, b = np.unique(a, equal_nan=False), np.unique(b, equal_nan=False)
    calls = [("union1d", {}), ("intersect1d", {"return_indices": True}),
             ("setdiff1d", {}), ("setxor1d", {})]
    if not assume_unique:
        calls.append(("intersect1d", {}))
    for name, kw in calls:
        if name != "union1d":
            kw = {**kw, "assume_unique": assume_unique}
        got = as_tuple(getattr(lnp, name)(lazy.asarray(a), lazy.asarray(b), **kw))
        same_arrays(got, as_tuple(getattr(np, name)(a, b, **kw)))


def test_union1d_and_torch_isin():
    """union1d is unique of both, flattened (NaNs one value); torch.isin's forms."""
    import torch
    a, b = np.array([3.0, 1.0, np.nan, -0.0]), np.array([[2.0, 1.0], [np.nan, 0.0]])
    np.testing.assert_array_equal(lnp.union1d(a, lazy.asarray(b)).numpy(), np.union1d(a, b))
    e, t = np.array([[1, 5, 3], [3, 9, 0]]), np.array([3, 0, 11])
    for invert in (False, True):
        np.testing.assert_array_equal(
            lazy.isin(lazy.asarray(e), lazy.asarray(t), invert=invert).numpy(),
            torch.isin(torch.from_numpy(e), torch.from_numpy(t), invert=invert).numpy())
    np.testing.assert_array_equal(lazy.isin(lazy.asarray(e), 3).numpy(),
                                  torch.isin(torch.from_numpy(e), 3).numpy())


def test_on_the_emulated_gpu(cuda):
    """The same kernels on device cuda: CuPy's argsort and scan, our gathers and
    scatter; unique rows, isin and setxor1d too."""
    from cuda_lazy_helpers import check
    a = np.array([[3.0, np.nan, 1.0], [np.nan, 3.0, -0.0], [0.0, 2.0, 3.0]])
    got, want = lnp.unique_all(lazy.asarray(a, device="cuda")), np.unique_all(a)
    for g, w in zip(got, want):
        check(g, w)
    check(lnp.unique(lazy.asarray(a, device="cuda"), return_counts=True)[1],
          np.unique(a, return_counts=True)[1])
    check(lnp.isin(lazy.asarray(a, device="cuda"), lazy.asarray([3.0, 0.0], device="cuda")),
          np.isin(a, [3.0, 0.0]))
    check(lnp.setxor1d(lazy.asarray(a, device="cuda"), lazy.asarray([3.0, 7.0], device="cuda")),
          np.setxor1d(a, [3.0, 7.0]))
    rows = np.array([[1.0, 2.0], [0.0, 5.0], [1.0, 2.0], [-0.0, 4.0]])
    got = lnp.unique(lazy.asarray(rows, device="cuda"), axis=0, return_index=True,
                     return_inverse=True, return_counts=True)
    for g, w in zip(got, np.unique(rows, axis=0, return_index=True, return_inverse=True,
                                   return_counts=True)):
        check(g, w)


def test_torch_forms_match_torch():
    """lazy.unique and x.unique() return what torch.unique does (NaNs distinct;
    slices along `dim` as NumPy's unique(axis=) gives them)."""
    import torch
    a = np.array([[3.0, np.nan, 1.0], [np.nan, 3.0, 2.0]], np.float32)
    x, t = lazy.asarray(a), torch.from_numpy(a)
    for inverse in (False, True):
        for counts in (False, True):
            got = as_tuple(lazy.unique(x, return_inverse=inverse, return_counts=counts))
            want = as_tuple(torch.unique(t, return_inverse=inverse, return_counts=counts))
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert g.shape == tuple(w.shape)
                np.testing.assert_array_equal(g.numpy(), w.numpy())
    np.testing.assert_array_equal(x.unique().numpy(), torch.unique(t).numpy())
    rows = np.array([[1, 2], [0, 5], [1, 2]])
    for inverse in (False, True):
        got = as_tuple(lazy.unique(lazy.asarray(rows), dim=0, return_inverse=inverse,
                                   return_counts=True))
        want = torch.unique(torch.from_numpy(rows), dim=0, return_inverse=inverse,
                            return_counts=True)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
