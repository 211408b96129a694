"""Reductions over one axis, several axes or all, against NumPy: values, dtypes, shapes."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazy
from conftest import DTYPE_NAMES, assert_close, backends_used, sample
from cpu_backend import CPUBackend
from cpu_backend_helpers import BE, BE_TILED, assert_same, run_both

pytestmark = pytest.mark.usefixtures("strict_fallback")

RNG = np.random.default_rng(99)
OPS = ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all"]
AXES_3D = [None, 0, -2, (0, 2), (2, 0, 1), (), (-1, -3)]


def np_reduce(op, a, axis, keepdims):
    """NumPy's result (argmax/argmin as int64)."""
    if op in ("argmax", "argmin"):
        out = getattr(np, op)(a, axis=axis, keepdims=keepdims)
        return np.asarray(out).astype(np.int64)
    if op == "mean":
        with np.errstate(all="ignore"):
            return np.asarray(np.mean(a, axis=axis, keepdims=keepdims))
    return np.asarray(getattr(np, op)(a, axis=axis, keepdims=keepdims))


def _data(dt, shape):
    a = sample(shape, dt, RNG, low=-3, high=4)
    return a


def _check_reduction(op, a, axis):
    t = lazy.asarray(a)
    if op in ("argmax", "argmin") and isinstance(axis, tuple):
        with pytest.raises(TypeError):
            getattr(t, op)(axis=axis)
        return
    for keep in (False, True):
        expected = np_reduce(op, a, axis, keep)
        tol = dict(rtol=1e-4) if op == "prod" else {}
        assert_close(getattr(t, op)(axis, keep), expected, **tol)
        assert_close(getattr(t, op)(axis=axis, keepdims=keep), expected, **tol)
        assert_close(getattr(t, op)(dim=axis, keepdim=keep), expected, **tol)
        assert_close(getattr(lazy, op)(t, axis=axis, keepdims=keep), expected, **tol)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", DTYPE_NAMES)
def test_reduction_dtypes(op, dt):
    """Every op on every dtype (NumPy's result dtypes), reducing all axes and an inner one."""
    a = _data(dt, (3, 4, 5))
    for axis in (None, 1):
        _check_reduction(op, a, axis)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axis", AXES_3D, ids=str)
def test_reduction_axes(op, axis):
    """Every axis form: negative, unsorted tuples, empty tuple, all axes."""
    _check_reduction(op, _data("float64", (3, 4, 5)), axis)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("shape, axis", [((7,), 0), ((7,), None), ((), None), ((), 0),
                                         ((1, 1), None), ((2, 1, 3), 1), ((65, 33), 0),
                                         ((65, 33), 1), ((1000,), None), ((4, 300), (0, 1))])
def test_reduction_shapes(op, shape, axis):
    a = _data("float32", shape)
    if op in ("argmax", "argmin") and isinstance(axis, tuple):
        return
    # NumPy has no axis 0 on a 0-d array; lazyrt accepts dim 0 there as PyTorch does
    expected = np_reduce(op, a, None if shape == () else axis, False)
    tol = dict(rtol=1e-4, atol=1e-4) if op in ("prod", "sum", "mean") else {}
    assert_close(getattr(lazy.asarray(a), op)(axis), expected, **tol)


@pytest.mark.parametrize("op", ["sum", "prod", "any", "all", "mean"])
@pytest.mark.parametrize("shape, axis", [((0,), None), ((0, 3), 0), ((0, 3), 1), ((3, 0), None),
                                         ((2, 0, 3), (0, 1))])
def test_empty_reductions_with_identity(op, shape, axis):
    a = np.zeros(shape, np.float32)
    expected = np_reduce(op, a, axis, False)
    assert_close(getattr(lazy.asarray(a), op)(axis), expected)


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
def test_empty_reductions_without_identity_raise(op):
    t = lazy.zeros(0, 3)
    with pytest.raises(ValueError, match="identity"):
        getattr(t, op)(0)
    with pytest.raises(ValueError, match="identity"):
        getattr(t, op)()
    # reducing the non-empty axis of an empty tensor is fine (as NumPy)
    out = getattr(t, op)(1)
    try:
        assert_close(out, np_reduce(op, np.zeros((0, 3), np.float32), 1, False))
    finally:
        del out  # a failing pending tensor must not outlive the test (global syncs)


@pytest.mark.parametrize("dt", ["int32", "int64", "float32", "float64"])
def test_argmax_ties_and_first_occurrence(dt):
    a = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [0, -1, 5, 5]], dt)
    t = lazy.asarray(a)
    for axis in (None, 0, 1):
        assert_close(t.argmax(axis), np.asarray(np.argmax(a, axis)).astype(np.int64))
        assert_close(t.argmin(axis), np.asarray(np.argmin(a, axis)).astype(np.int64))


ARG_POOLS = {"ties": [-1.0, 0.0, -0.0, 2.0, 2.0], "inf": [-np.inf, np.inf, 1.0, -0.0],
             "nan": [np.nan, 3.0, -np.inf, 0.0] + [3.0] * 40}


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 3), n=st.integers(1, 1300), pool=st.sampled_from(sorted(ARG_POOLS)),
       dt=st.sampled_from(["float32", "float64", "int32"]), seed=st.integers(0, 2**32 - 1))
def test_argmax_argmin_long_rows_like_numpy(rows, n, pool, dt, seed):
    """Rows of several 256-element blocks (the blocked scan, cpu_backend/loops.py)
    full of ties, signed zeros, infinities and NaNs: the first occurrence, and
    the first NaN, exactly as NumPy, per row and over the whole array."""
    vals = np.array(ARG_POOLS[pool])
    if dt == "int32":
        vals = np.nan_to_num(vals, posinf=9, neginf=-9).astype(np.int32)
    a = np.random.default_rng(seed).choice(vals, (rows, n)).astype(dt)
    t = lazy.asarray(a)
    for axis in (None, 0, 1):
        for op in ("argmax", "argmin"):
            got = getattr(t, op)(axis).numpy()
            np.testing.assert_array_equal(got, getattr(np, op)(a, axis), err_msg=f"{op} axis={axis}")


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_argmax_first_nan_in_a_later_block(dt):
    """A NaN after the row's max, past the first 256-element block, still wins."""
    a = np.full((3, 700), 3.0, dt)
    a[0, 400], a[1, 5], a[1, 699], a[2, 255] = np.nan, 7.0, np.nan, np.nan
    t = lazy.asarray(a)
    for op in ("argmax", "argmin"):
        np.testing.assert_array_equal(getattr(t, op)(1).numpy(), [400, 699, 255])
        assert int(getattr(t, op)().numpy()) == 400  # row 0 holds the first NaN


def test_argmax_none_is_flat_index_keepdims():
    a = _data("float64", (3, 4, 5))
    t = lazy.asarray(a)
    assert_close(t.argmax(), np.int64(np.argmax(a)))
    assert_close(t.argmin(keepdims=True), np.argmin(a, keepdims=True).astype(np.int64))
    v = t.permute(2, 0, 1)[::-1]
    assert_close(v.argmax(), np.int64(np.argmax(a.transpose(2, 0, 1)[::-1])))


def test_nan_handling_like_numpy():
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -1.0]], np.float32)
    t = lazy.asarray(a)
    for op in ("max", "min", "sum", "mean", "prod", "argmax", "argmin", "any", "all"):
        for axis in (None, 0, 1):
            assert_close(getattr(t, op)(axis), np_reduce(op, a, axis, False))
    inf = np.array([np.inf, -np.inf, 1.0], np.float64)
    assert_close(lazy.asarray(inf).sum(), np.sum(inf))
    assert_close(lazy.asarray(inf).max(), np.max(inf))


def test_integer_sum_overflow_and_accumulator():
    a = np.full(10, 2**31 - 1, np.int32)
    assert_close(lazy.asarray(a).sum(), np.sum(a))  # int64 accumulation, as NumPy
    b = np.full(4, 2**62, np.int64)
    assert_close(lazy.asarray(b).sum(), np.sum(b))  # wraps as NumPy does
    assert_close(lazy.asarray(np.arange(1, 21, dtype=np.int64)).prod(),
                 np.prod(np.arange(1, 21, dtype=np.int64)))


@pytest.mark.parametrize("op", ["sum", "prod"])
@pytest.mark.parametrize("src, dt", [
    (np.array([2**62, 2**62]), "float64"),                 # int64 would wrap
    (np.array([1000] * 7, np.int32), "float64"),           # 1e21
    (np.array([0.5, 0.7, 1.6]), "int64"),                  # each truncated first: 1
    (np.array([2**32, 2**32]), "bool"),
    (np.arange(12, dtype=np.int64).reshape(3, 4) - 5, "int32"),
    (np.linspace(-2, 3, 12, dtype=np.float32).reshape(3, 4), "float64"),
])
def test_sum_and_prod_dtype_casts_the_input_first_as_numpy(op, src, dt):
    """`x.sum(dtype=d)` accumulates in d and returns d (NumPy and PyTorch), for
    lazyrt, NumPy and torch dtypes alike; other reductions take no dtype."""
    t = lazy.asarray(src)
    with np.errstate(all="ignore"):
        for axis in (None, -1):
            want = getattr(np, op)(src, axis=axis, dtype=dt)
            for d in (dt, np.dtype(dt), getattr(lazy, dt if dt != "bool" else "bool_")):
                got = getattr(t, op)(axis=axis, dtype=d)
                assert got.dtype.name == want.dtype.name
                if want.dtype.kind == "f":  # the order of the products may differ
                    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
                else:
                    np.testing.assert_array_equal(got.numpy(), want)
    for name in ("max", "min", "argmax", "argmin", "any", "all"):
        with pytest.raises(TypeError, match="dtype"):
            getattr(t, name)(dtype=dt)


def test_float32_sum_accuracy():
    a = RNG.random(100_000).astype(np.float32)
    got = lazy.asarray(a).sum().item()
    exact = np.sum(a.astype(np.float64))
    assert abs(got - exact) <= abs(np.sum(a) - exact) + 1e-6 * exact
    assert lazy.asarray(a).sum().dtype == lazy.float32


@pytest.mark.parametrize("layout", [
    lambda a: a[::3],                                       # a runtime stride
    lambda a: a[::2],                                       # the stride-2 loop version
    lambda a: a[::-1],                                      # reversed
    lambda a: a,                                            # contiguous
    lambda a: a.reshape(300, 100).T,                        # full sum of a transpose
    lambda a: a.reshape(30, 1000)[:, ::3],                  # row sums, strided rows
], ids=["stride3", "stride2", "reversed", "contiguous", "transpose", "strided-rows"])
def test_float32_sums_are_accurate_whatever_the_layout(layout):
    """A float32 sum adds in float64 (or, along memory the loop reads as
    vectors, in float32 blocks spread over many lanes). Strided rows once
    went through the float32 blocks too, one element at a time: 0.1 summed
    10,000 times at stride 3 came out 1e-5 off, a hundred times NumPy's error."""
    a = np.full(30_000, 0.1, np.float32)
    axis = -1 if layout(a).ndim == 2 and layout(a).shape[0] == 30 else None
    ref = layout(a)
    got = layout(lazy.asarray(a)).sum(axis=axis).numpy()
    exact = ref.sum(axis=axis, dtype=np.float64)
    bar = np.abs(ref.sum(axis=axis) - exact) + 1e-7 * exact  # NumPy's own error, and a little
    assert np.all(np.abs(got - exact) <= bar), (got, exact, ref.sum(axis=axis))


@pytest.mark.parametrize("layout", [
    lambda a: a,                                            # contiguous
    lambda a: a[::-1],                                      # reversed
    lambda a: a[::2],                                       # stride 2 (vector lanes)
    lambda a: a.reshape(4, 250_000),                        # row sums
], ids=["contiguous", "reversed", "stride2", "rows"])
def test_float64_sums_are_as_accurate_as_numpys(layout):
    """A float64 row read as vectors adds blocks of 512 in vector lanes and
    the blocks' sums with compensation. One long vector loop once left each
    lane adding its share of the row in turn: 4M values of 0.1 came out
    2e-13 off, where NumPy's pairwise sum is 3e-16 off."""
    a = np.full(1_000_000, 0.1)
    ref = layout(a)
    axis = -1 if ref.ndim == 2 else None
    got = np.atleast_1d(layout(lazy.asarray(a)).sum(axis=axis).numpy())
    exact = np.array([math.fsum(r) for r in np.atleast_2d(ref)])
    bar = np.abs(np.atleast_1d(ref.sum(axis=axis)) - exact) + 4 * np.spacing(exact)
    assert np.all(np.abs(got - exact) <= bar), (got, exact, ref.sum(axis=axis))


@pytest.mark.parametrize("n", [3, 700, 100_003])
@pytest.mark.parametrize("special", [[np.inf], [-np.inf], [np.inf, -np.inf], [np.nan]])
def test_float64_sums_with_infinities_are_numpys(n, special):
    """Compensated sums once turned a sum reaching inf into NaN (inf - inf in the
    correction term): rows, full sums (partials folded) and means, as NumPy's."""
    a = np.random.default_rng(n).random((4, n))
    a[1, n // 2] = special[0]
    a[2, :: max(1, n // 3)] = special[-1]
    a[3, -1] = special[0]
    t = lazy.asarray(a)
    with np.errstate(invalid="ignore"):
        for got, want in [(t.sum(axis=1), a.sum(axis=1)), (t.mean(axis=1), a.mean(axis=1)),
                          (t.sum(), a.sum()), (t.T.sum(axis=0), a.T.sum(axis=0))]:
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_integer_means_add_in_float64_as_accurately_as_numpy():
    """The mean of integers adds them in float64 (NumPy's rule): past 2**53
    the sum rounds, and once rounded at every add of a long row the mean of
    3M values of 2**40 + 1 came out 0.30 off (NumPy: exact)."""
    a = np.full(3_000_000, 2**40 + 1, np.int64)
    assert lazy.asarray(a).mean().item() == a.mean() == 2**40 + 1
    b = np.random.default_rng(3).integers(0, 2**45, (3, 1_000_001))
    exact = np.array([sum(int(v) for v in r) / r.size for r in b])  # exact int sum, one rounding
    bar = np.abs(b.mean(axis=1) - exact) + 2 * np.spacing(np.abs(exact))
    assert np.all(np.abs(lazy.asarray(b).mean(axis=1).numpy() - exact) <= bar)


@pytest.mark.parametrize("view, npview", [
    (lambda x: x.T, lambda a: a.T),
    (lambda x: x[::-1, 1::2], lambda a: a[::-1, 1::2]),
    (lambda x: x[:, :1].expand(6, 5), lambda a: np.broadcast_to(a[:, :1], (6, 5))),
    (lambda x: x.reshape(3, 2, 5).permute(2, 0, 1), lambda a: a.reshape(3, 2, 5).transpose(2, 0, 1)),
    (lambda x: x.diagonal()[None], lambda a: a.diagonal()[None]),
], ids=["T", "slices", "expand", "permute", "diagonal"])
@pytest.mark.parametrize("op", OPS)
def test_reduction_of_views(view, npview, op):
    a = np.arange(30, dtype=np.float64).reshape(6, 5) - 13.5
    t, ref = view(lazy.asarray(a)), npview(a)
    assert_close(getattr(t, op)(0), np_reduce(op, ref, 0, False))
    assert_close(getattr(t * 1, op)(-1), np_reduce(op, ref, -1, False))  # fused producer


def test_reduction_of_pending_and_fused_producers():
    x = lazy.arange(24, dtype=lazy.float32).reshape(2, 3, 4)
    lazy.log.clear()
    y = ((x - 5.0) ** 2).sum(axis=(0, 2)) / 3.0 + x.max()
    z = (x > 10).any(1)
    w = x.mean()
    assert len(lazy.log) == 0
    lazy.sync(y, z, w)
    assert set(backends_used()) == {"llvm"}
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert_close(y, ((a - 5) ** 2).sum(axis=(0, 2)) / np.float32(3) + a.max())
    assert_close(z, (a > 10).any(1))
    assert_close(w, a.mean())


def test_reductions_accept_tuples_lists_and_dim_names():
    a = _data("int32", (2, 3, 4))
    t = lazy.asarray(a)
    assert_close(t.sum([0, 2]), a.sum((0, 2)))
    assert_close(t.sum(dim=(1, 2), keepdim=True), a.sum((1, 2), keepdims=True))
    assert_close(lazy.sum(a, 1), a.sum(1))  # NumPy input to the function
    assert_close(lazy.mean(t, dim=-1), a.mean(-1))
    with pytest.raises(TypeError):
        t.sum(axis=0, dim=0)


def test_scalar_results_and_item():
    t = lazy.asarray(np.array([[1, 2], [3, 4]], np.int64))
    s = t.sum()
    assert s.shape == () and s.item() == 10 and int(s) == 10
    assert t.max().item() == 4 and t.argmax().item() == 3
    assert bool(t.any()) and bool((t > 0).all()) and not bool((t > 3).all())
    assert float(t.mean()) == 2.5


def test_float32_sum_of_16m_values_meets_the_float64_bar():
    """NumPy's pairwise float32 summation is the bar; a naive accumulator fails it."""
    rng = np.random.default_rng(7)
    a = rng.random(1 << 24, dtype=np.float32)
    got = lazy.asarray(a).sum().item()
    want = a.sum(dtype=np.float64)
    assert abs(got - want) / want < 1e-6
    naive = np.cumsum(a, dtype=np.float32)[-1]  # one float32 accumulator
    assert abs(naive - want) / want > 1e-6  # the bar is meaningful


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("ddof", [0, 1])
def test_var_and_std_methods_follow_numpy(axis, ddof):
    """`x.var()`/`x.std()` as NumPy's methods: ddof 0 unless asked (not torch's 1)."""
    xn = np.random.default_rng(3).standard_normal((4, 5))
    x = lazy.asarray(xn)
    np.testing.assert_allclose(x.var(axis, ddof=ddof).numpy(), xn.var(axis, ddof=ddof))
    np.testing.assert_allclose(x.std(axis, ddof=ddof, keepdims=True).numpy(),
                               xn.std(axis, ddof=ddof, keepdims=True))


def test_cached_build_plans_depend_on_every_argument():
    """reductions._plan caches per (op, axis, dim, keepdims, dtype, shape, src
    dtype): each variant still gets its own shape, dtype and checks."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = lazy.asarray(a)
    for _ in range(2):  # the second round is served from the cache
        assert t.sum(axis=1).shape == (3,)
        assert t.sum(axis=1, keepdims=True).shape == (3, 1)
        assert t.sum(dim=0).shape == (4,)
        assert t.sum(axis=(0, 1)).shape == ()
        assert t.sum(axis=[0, 1]).shape == ()   # a list: the uncached path
        assert lazy.asarray(a.astype(np.int32)).sum(axis=1).dtype == lazy.int64
        np.testing.assert_array_equal(t.max(axis=0).numpy(), a.max(axis=0))
        with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
            lazy.zeros((3, 0)).max(axis=1)       # same op and axis, another shape: checked
        with pytest.raises(TypeError, match="either axis or dim"):
            t.sum(axis=0, dim=1)
        with pytest.raises(IndexError):
            t.sum(axis=2)


@pytest.mark.parametrize("view", ["plain", "transposed"])
def test_a_full_sum_compiles_no_tiled_order(view):
    """A full sum has one out element, which every input reads with stride 0
    (`out_inner` 0), so choose_tile can never pick the tiled order: it is not
    compiled (it doubled the kernel's compile time)."""
    from cpu_backend.reduce_loops import tile_eligible
    from scheduler.realize import plan
    a = np.random.default_rng(9).standard_normal((300, 257)).astype(np.float32)
    x = lazy.asarray(a) if view == "plain" else lazy.asarray(a).T
    r = x.sum()
    [step] = plan([r._buf]).steps
    assert {i.out_inner for i in step.kernel.inputs} == {0}
    assert not tile_eligible(step.kernel)
    np.testing.assert_allclose(r.numpy(), a.astype(np.float64).sum(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_weighted_column_sum_is_tiled(dtype):
    """`(w[:, None] * A).sum(0)`: w is contiguous along the reduce axis but the
    same for every output. It is marked so (`out_inner` 0), does not keep the
    tiled order from A's columns, and its constant stride lets that loop
    vectorize (it ran 25x slower, striding down A, before)."""
    from cpu_backend.launch import choose_tile
    from cpu_backend.reduce_loops import tile_eligible
    from scheduler.realize import plan
    rng = np.random.default_rng(8)
    a = rng.standard_normal((300, 257)).astype(dtype)
    w = rng.standard_normal(300).astype(dtype)
    r = (lazy.asarray(w)[:, None] * lazy.asarray(a)).sum(0)
    [step] = plan([r._buf]).steps
    k = step.kernel
    assert {(i.inner, i.out_inner) for i in k.inputs} == {(1, 0), (None, None)}
    assert choose_tile(k, step.launch) == 1
    assert tile_eligible(k)
    want = (w[:, None].astype(np.float64) * a).sum(0)
    scale = np.abs(w[:, None] * a).sum(0).max()  # rounding goes by the terms' size
    tol = (1e-6 if dtype == "float32" else 1e-14) * scale
    np.testing.assert_allclose(r.numpy(), want, atol=tol)
    ins = [b.array for b in step.inputs]
    for be in (BE, BE_TILED, CPUBackend(num_threads=2)):  # either order, any split
        ours, ref = run_both(k, step.launch, ins, [257], be)
        assert_same(ours, ref, exact=False)
