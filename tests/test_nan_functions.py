"""NumPy's NaN-ignoring functions (lazy/numpy/_nan.py) against NumPy itself:
values, dtypes and shapes over random data with NaNs, infinities and
all-NaN slices; NumPy's errors; the kernels they fuse into; and the
`nanmax`/`nanmin` reductions on every loop the CPU backend has (rows,
tiled columns, strided rows, a full reduction split across threads) and
on the emulated CUDA device."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazy
import lazy.numpy as lnp
from cuda_lazy_helpers import assert_ran_on_cuda, check_all, on_cuda

REDUCING = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanmedian"]
SCANS = ["nancumsum", "nancumprod"]
TOL = {"float32": 2e-5, "float64": 1e-12}


def with_nans(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Values with NaNs (some slices all NaN), infinities and signed zeros."""
    a = rng.standard_normal(shape).astype(dtype)
    if a.dtype.kind != "f" or a.size == 0:
        return (a * 4).astype(dtype)
    a[rng.random(shape) < 0.3] = np.nan
    flat = a.reshape(-1)
    flat[rng.integers(0, a.size, 2)] = [np.inf, -np.inf]
    flat[rng.integers(0, a.size)] = -0.0
    if a.ndim > 1:  # an all-NaN slice along every later axis; not the first (below)
        a[rng.integers(1, shape[0]) if shape[0] > 1 else 0] = np.nan
    return a


def numpy_of(name: str, a: np.ndarray, *args, **kw) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices, no dof
        return np.asarray(getattr(np, name)(a, *args, **kw))


def same(got: lazy.Tensor, want: np.ndarray, dtype: str) -> None:
    assert got.dtype.name == want.dtype.name and got.shape == want.shape
    values = got.numpy()
    if want.dtype.kind == "f":
        np.testing.assert_allclose(values, want, rtol=TOL.get(dtype, 1e-12), atol=1e-6,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(values, want)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(REDUCING), dtype=st.sampled_from(["float32", "float64", "int64"]),
       shape=st.sampled_from([(7,), (4, 9), (3, 5, 6)]), data=st.data())
def test_reductions_match_numpy(name, dtype, shape, data):
    a = with_nans(np.random.default_rng(data.draw(st.integers(0, 2**16))), shape, dtype)
    axes = [None] + list(range(a.ndim)) + ([(0, a.ndim - 1)] if a.ndim > 1 else [])
    axis = data.draw(st.sampled_from(axes))
    kw = {"axis": axis, "keepdims": data.draw(st.booleans())}
    if name in ("nanvar", "nanstd"):
        kw["ddof"] = data.draw(st.sampled_from([0, 1, 3]))
    same(getattr(lnp, name)(lazy.asarray(a), **kw), numpy_of(name, a, **kw), dtype)


@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_scans_match_numpy(name, dtype, axis):
    a = with_nans(np.random.default_rng(3), (5, 8), dtype)
    a[np.isinf(a)] = 2.0  # a product through inf and 0 is NaN either way; keep it finite
    same(getattr(lnp, name)(lazy.asarray(a), axis=axis), numpy_of(name, a, axis=axis), dtype)


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_argextremes_match_numpy_and_refuse_all_nan_slices(name, axis):
    """NaN reads as -inf (+inf) as in NumPy, so [nan, -inf] gives 0; an
    all-NaN slice raises NumPy's ValueError at the call, after one implicit
    sync that also computed the indices."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 7))
    a[rng.random(a.shape) < 0.3] = np.nan
    a[:, 0] = [np.nan, 1, 2, 3, 4, 5]
    a[0, 1] = -np.inf
    a[0, 2:] = np.nan
    a[1:5, 3] = np.nan
    a[5, 1:] = np.arange(6.0)  # every column has a number
    t = lazy.asarray(a)
    lazy.log.clear()
    got = getattr(lnp, name)(t, axis=axis)
    [sync] = lazy.log.syncs
    assert sync.cause == f"implicit: {name}'s all-NaN check"
    assert not got._buf.pending  # realized in that sync
    np.testing.assert_array_equal(got.numpy(), numpy_of(name, a, axis=axis))
    a[2] = np.nan
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        getattr(lnp, name)(lazy.asarray(a), axis=1)
    with pytest.raises(ValueError, match="All-NaN slice encountered"):
        getattr(np, name)(a, axis=1)


def test_where_initial_and_out_as_numpy():
    rng = np.random.default_rng(5)
    a = with_nans(rng, (5, 6), "float64")
    m = rng.random(a.shape) < 0.6
    t = lazy.asarray(a)
    for name in ("nanmax", "nanmin"):
        for kw in ({"initial": -1.5}, {"initial": 0.25, "where": m}, {"axis": 0, "initial": 9}):
            same(getattr(lnp, name)(t, **kw), numpy_of(name, a, **kw), "float64")
        with pytest.raises(ValueError, match="to use a where mask one has to specify 'initial'"):
            getattr(lnp, name)(t, where=m)
        with pytest.raises(ValueError, match="zero-size array to reduction operation f"):
            getattr(lnp, name)(lazy.zeros((0, 3), dtype="float64"), axis=0)
        same(getattr(lnp, name)(lazy.zeros((0, 3), dtype="float64"), axis=0, initial=2.0),
             numpy_of(name, np.zeros((0, 3)), axis=0, initial=2.0), "float64")
    for name in ("nansum", "nanprod"):
        kw = {"axis": 1, "where": m, "initial": 2.0}
        same(getattr(lnp, name)(t, **kw), numpy_of(name, a, **kw), "float64")
    for name in ("nanmean", "nanvar", "nanstd"):
        same(getattr(lnp, name)(t, axis=1, where=m), numpy_of(name, a, axis=1, where=m),
             "float64")
    same(lnp.nanmean(t.astype("float32"), dtype="float64"),
         numpy_of("nanmean", a.astype(np.float32), dtype=np.float64), "float64")
    with pytest.raises(TypeError, match="dtype must be inexact"):
        lnp.nanmean(t, dtype="int64")
    out = lazy.zeros(6, dtype="float64")
    assert lnp.nansum(t, axis=0, out=out) is out
    same(out, numpy_of("nansum", a, axis=0), "float64")


def test_numpy_functions_dispatch_natively(monkeypatch):
    """np.nanmax(tensor) and the rest run lazyrt's own: nothing runs before
    the sync, and no fallback runs under LAZY_FALLBACK=error."""
    monkeypatch.setenv("LAZY_FALLBACK", "error")
    a = with_nans(np.random.default_rng(6), (4, 5), "float32")
    t = lazy.asarray(a)
    lazy.log.clear()
    results = [(getattr(np, n)(t, axis=1), n) for n in REDUCING + SCANS]
    assert all(isinstance(r, lazy.Tensor) for r, _ in results)
    assert lazy.log.syncs == [] and lazy.log.counters.fallbacks == 0
    for r, n in results:
        same(r, numpy_of(n, a, axis=1), "float32")


def kernels_of(t: lazy.Tensor) -> list:
    lazy.log.clear()
    lazy.sync(t)
    return list(lazy.log)


def test_kernels_they_fuse_into():
    """nanmax and nansum are one kernel, with the expression they reduce
    fused in; nanmean too: its sum and its count are sibling reductions in
    one loop, read by the division after it (docs/fusion.md), reading the
    data once."""
    a = with_nans(np.random.default_rng(7), (64, 300), "float32")
    t = lazy.asarray(a)
    nbytes = a.nbytes + a.shape[0] * 16  # and a few values per row (a count, a sum)
    for name in ("nanmax", "nanmin", "nansum", "nanmean"):
        ks = kernels_of(getattr(lnp, name)(t * 2, axis=1))
        assert len(ks) == 1, (name, [k.kernel for k in ks])
        assert all(k.nbytes <= nbytes for k in ks), (name, [k.nbytes for k in ks])  # a once


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
def test_nan_extremes_on_every_loop(name, dtype):
    """Rows (the NaN-replacing row loop), a full reduction big enough to be
    split across threads, columns (the tiled order, the per-element update),
    rows read at a runtime stride, and data with no NaN at all."""
    rng = np.random.default_rng(8)
    a = with_nans(rng, (300, 1030), dtype)
    big = with_nans(rng, (2, 400_000), dtype)
    clean = rng.standard_normal((50, 70)).astype(dtype)
    t, tb, tc = lazy.asarray(a), lazy.asarray(big), lazy.asarray(clean)
    cases = [(t, a, 1), (t, a, None), (t, a, 0), (tb, big, None), (tb, big, 1),
             (t[:, ::3], a[:, ::3], 1), (t.T, a.T, 1), (tc, clean, 1), (tc, clean, None)]
    for x, ref, axis in cases:
        got = getattr(lnp, name)(x, axis=axis)
        np.testing.assert_array_equal(got.numpy(), numpy_of(name, ref, axis=axis))


def test_on_the_emulated_gpu(cuda):
    """The nanmax/nanmin reductions (fmax/fmin in CUDA C, NaN as identity)
    and the other NaN functions, compiled by NVRTC and run emulated."""
    rng = np.random.default_rng(9)
    a = with_nans(rng, (6, 40), "float64")
    i = rng.integers(-5, 5, (6, 40)).astype(np.int32)
    x, xi = on_cuda(a), on_cuda(i)
    lazy.log.clear()
    cases = [(getattr(lnp, n)(x, axis=ax), numpy_of(n, a, axis=ax))
             for n in ("nanmax", "nanmin", "nansum", "nanmean", "nanstd", "nanmedian")
             for ax in (None, 0, 1)]
    cases += [(lnp.nanquantile(x, [0.2, 0.9], axis=1), numpy_of("nanquantile", a, [0.2, 0.9],
                                                                axis=1))]
    cases += [(lnp.nanmax(xi, axis=1), i.max(axis=1)), (lnp.nancumsum(x, axis=1),
                                                        numpy_of("nancumsum", a, axis=1))]
    check_all(cases)
    assert_ran_on_cuda()


ORDER = [("nanmedian", None), ("nanquantile", 0.3), ("nanquantile", [0.0, 0.25, 1.0]),
         ("nanquantile", np.float64(0.77)), ("nanpercentile", 42), ("nanpercentile", [10, 90.5]),
         ("nanquantile", 1), ("nanquantile", np.array([0, 1]))]


@settings(max_examples=50, deadline=None)
@given(which=st.sampled_from(ORDER), dtype=st.sampled_from(["float32", "float64", "int64"]),
       case=st.sampled_from([((7, 13), 1), ((7, 13), 0), ((7, 13), None), ((3, 4, 5), (0, 2)),
                             ((40,), None), ((5, 700), 1)]),
       keepdims=st.booleans(), seed=st.integers(0, 2**16))
def test_order_statistics_match_numpy_bit_for_bit(which, dtype, case, keepdims, seed):
    """nanmedian, nanquantile, nanpercentile: each row's numbers (a row of
    NaNs gives NaN), NumPy's arithmetic step for step, so the values are
    NumPy's exactly; rows of 700 take NumPy's other nanmedian path. The
    first slice is never all NaN: NumPy's result dtype then comes from it
    (docs/numpy.md, "NaN-ignoring functions")."""
    name, q = which
    shape, axis = case
    a = with_nans(np.random.default_rng(seed), shape, dtype)
    args = () if q is None else (q,)
    t = lazy.asarray(a)
    lazy.log.clear()
    got = getattr(lnp, name)(t, *args, axis=axis, keepdims=keepdims)
    assert lazy.log.syncs == []  # lazy: sorts, counts and gathers, no sync
    want = numpy_of(name, a, *args, axis=axis, keepdims=keepdims)
    assert got.dtype.name == want.dtype.name and got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_order_statistics_fallbacks(fallback_log):
    """Other methods, weights and empty input stay NumPy's, logged."""
    a = with_nans(np.random.default_rng(11), (4, 6), "float64")
    t = lazy.asarray(a)
    for name, args, kw in (("nanquantile", (0.4,), {"method": "nearest"}),
                           ("nanpercentile", (50,), {"method": "lower", "axis": 1}),
                           ("nanmedian", (), {})):
        data = a if name != "nanmedian" else np.zeros((0, 3))
        with warnings.catch_warnings():  # NumPy's own, for the empty input
            warnings.simplefilter("ignore", RuntimeWarning)
            got = getattr(lnp, name)(t if name != "nanmedian" else lazy.asarray(data), *args,
                                     **kw)
        np.testing.assert_array_equal(np.asarray(got.numpy()), numpy_of(name, data, *args, **kw))
    assert lazy.log.counters.fallbacks == 3
