"""lazy.numpy's creation, manipulation and linear-algebra functions against NumPy.

Native functions run under LAZY_FALLBACK=error (`fresh_log`); views are
checked to share memory where NumPy's do, and copies to be lazy.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import lazy
import lazy.numpy as lnp
from conftest import assert_close, same

pytestmark = pytest.mark.usefixtures("fresh_log")


# -- creation ------------------------------------------------------------------------
def test_creation_defaults_follow_numpy():
    same(lnp.zeros((2, 3)), np.zeros((2, 3)))
    same(lnp.ones(4, dtype=lnp.int32), np.ones(4, np.int32))
    same(lnp.full((2,), 1.5), np.full((2,), 1.5))
    same(lnp.full((2,), 7), np.full((2,), 7))
    same(lnp.full((2,), True), np.full((2,), True))
    same(lnp.arange(5), np.arange(5))
    same(lnp.arange(1.0, 2.0, 0.25), np.arange(1.0, 2.0, 0.25))
    same(lnp.arange(10, 1, -3), np.arange(10, 1, -3))
    same(lnp.eye(3, 4, k=1), np.eye(3, 4, k=1))
    same(lnp.identity(2, dtype="int64"), np.identity(2, dtype=np.int64))
    assert_close(lnp.linspace(0, 1, num=7), np.linspace(0, 1, 7))
    assert_close(lnp.linspace(0, 1, num=4, endpoint=False), np.linspace(0, 1, 4, endpoint=False))
    same(lnp.linspace(-3, 3, num=5, dtype=lnp.int64), np.linspace(-3, 3, 5, dtype=np.int64))
    x = lnp.asarray(np.arange(6.0).reshape(2, 3))
    same(lnp.zeros_like(x), np.zeros((2, 3)))
    same(lnp.ones_like(x, dtype=lnp.bool), np.ones((2, 3), bool))
    same(lnp.full_like(x, 4), np.full((2, 3), 4.0))
    e = lnp.empty_like(x)
    assert e.shape == (2, 3) and e.dtype == lnp.float64
    a = np.arange(6.0).reshape(2, 3)  # NumPy's shape= keeps the dtype, not the shape
    same(lnp.zeros_like(x, shape=(4,)), np.zeros_like(a, shape=(4,)))
    same(lnp.ones_like(x, dtype=lnp.int32, shape=3), np.ones_like(a, dtype=np.int32, shape=3))
    same(lnp.full_like(x, [1.0, 2.0], shape=(3, 2)), np.full_like(a, [1.0, 2.0], shape=(3, 2)))
    assert lnp.empty_like(x, shape=(1, 5)).shape == (1, 5)
    assert lnp.empty((2, 2), dtype=lnp.int32).dtype == lnp.int32


@pytest.mark.parametrize("value", [np.int32(7), np.int64(-3), np.float32(1.5), np.float64(2.5),
                                   np.bool_(True)])
def test_full_takes_a_numpy_scalars_dtype(value):
    """A NumPy scalar is strong: `np.full(3, np.int32(7))` is int32, not int64."""
    same(lnp.full((2, 3), value), np.full((2, 3), value))
    same(lnp.full(3, value, dtype=lnp.float32), np.full(3, value, dtype=np.float32))
    x = lnp.zeros((2, 2), dtype=lnp.int32)
    same(lnp.full_like(x, value), np.full_like(np.zeros((2, 2), np.int32), value))


@pytest.mark.parametrize("shape, fill, dtype", [
    ((2, 3), np.array([1, -2, 3]), None), ((2, 3), [1.5, 2, 3], None),
    (4, np.array(5, np.int32), None), ((3, 2), np.array([[7], [8], [9]]), np.float32),
    ((2, 2), [True, False], None), ((2, 2), [1.7, -2.2], np.int32)])
def test_full_with_an_array_fill_broadcasts_and_copies(shape, fill, dtype):
    """NumPy broadcasts an array fill value (its dtype unless `dtype` is
    given) into a new array; lazy.numpy raised TypeError."""
    got = lnp.full(shape, fill, dtype)
    same(got, np.full(shape, fill, dtype))
    assert got.is_contiguous()
    x = lnp.zeros(shape, dtype=lnp.int32)
    same(lnp.full_like(x, fill), np.full_like(np.zeros(shape, np.int32), fill))


def test_full_with_an_array_fill_is_a_copy_and_checks_the_shape():
    src = lnp.asarray(np.array([1.0, 2.0]))
    got = lnp.full((2, 2), src)
    src[0] = 9.0
    same(got, np.full((2, 2), [1.0, 2.0]))
    with pytest.raises(ValueError, match=r"shape \(3,\) to shape \(2, 2\)"):
        lnp.full((2, 2), [1, 2, 3])


@pytest.mark.parametrize("value", [np.uint8(3), np.int16(-2), np.float16(1.5)])
def test_full_with_a_numpy_scalar_of_a_dtype_lazyrt_lacks_takes_its_kinds_default(value):
    """uint8, int16, float16 have no lazyrt dtype: the kind's default (int64,
    float64 here; float32 in the PyTorch-like lazy.full), values kept."""
    got = lnp.full(3, value)
    assert got.dtype == (lnp.float64 if isinstance(value, np.floating) else lnp.int64)
    np.testing.assert_array_equal(got.numpy(), np.full(3, value))
    assert lazy.full((2,), value).dtype == (lazy.float32 if isinstance(value, np.floating)
                                            else lazy.int64)


@pytest.mark.parametrize("start, stop", [(np.float32(0), np.float32(1)), (np.float32(0.1), 2),
                                         (np.int32(0), 1), (np.bool_(False), 3),
                                         (np.float32(0), np.float64(1)), (0, 1),
                                         (np.array(0.0), 1.0), (np.array(0, np.float32), 1)])
def test_linspace_dtype_from_start_and_stop(start, stop):
    """NumPy promotes start and stop with a float: float32 scalars give float32."""
    assert_close(lnp.linspace(start, stop, num=7), np.linspace(start, stop, 7))
    assert_close(lnp.linspace(start, stop, num=4, endpoint=False),
                 np.linspace(start, stop, 4, endpoint=False))


ARANGES = [((0, 5, 1.5), np.int64), ((0, 3, 0.5), np.int64), ((5, 0, -1.5), np.int64),
           ((0.5, 3.7, 1.1), np.int32), ((-2.5, 4, 0.7), np.int32), ((0, 1, 0.1), np.float32),
           ((0.1, 7, 0.3), np.float64), ((-27.560290529937042, 100, 100.67243153057943),
                                         np.float32), ((0, 2), np.bool_), ((1, 3), np.bool_),
           ((0.0, 1.0, 0.5), np.bool_), ((3, 20, 4), np.float32)]


@pytest.mark.parametrize("args, dtype", ARANGES)
def test_arange_computes_numpys_values_in_the_result_dtype(args, dtype):
    """`arange(0, 5, 1.5, dtype=int64)` gave [0, 1, 3, 4] (the float values
    truncated; NumPy: [0, 1, 2, 3], first + i*delta in int64), and float32
    ranges stepped in float64 (`arange(0, 1, 0.1, dtype=float32)[-1]` was
    0.9, NumPy's 0.90000004). The float32 case starting at -27.56 is one
    where first + delta misses dtype(start + step), NumPy's second value."""
    same(lnp.arange(*args, dtype=dtype), np.arange(*args, dtype=dtype))


def test_arange_of_bools_refuses_more_than_two_values():
    """A bool arange of length 3 gave [False, True, True]; NumPy raises TypeError."""
    msg = "arange\\(\\) is only supported for booleans when the result has at most length 2"
    with pytest.raises(TypeError, match=msg):
        np.arange(0, 3, dtype=np.bool_)
    with pytest.raises(TypeError, match=msg):
        lnp.arange(0, 3, dtype=lnp.bool)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e30, -1e19])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_full_of_a_float_that_no_int_holds_casts_it_as_numpy(value, dtype):
    """`full(2, nan, dtype=int64)` raised ValueError; NumPy casts unsafely
    (the dtype's minimum) and warns."""
    with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
        want = np.full(2, value, dtype=dtype)
    with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
        same(lnp.full(2, value, dtype=dtype), want)
    with pytest.warns(RuntimeWarning, match="invalid value encountered in cast"):
        same(lnp.full_like(lnp.zeros(2, dtype=dtype), value), want)


def test_asarray_array_and_copy_semantics():
    a = np.arange(4.0)
    shared = lnp.asarray(a)
    assert lazy.shares_memory(shared, lnp.asarray(a)) or np.shares_memory(shared.numpy(), a)
    copied = lnp.asarray(a, copy=True)
    assert not np.shares_memory(copied.numpy(), a)
    assert not np.shares_memory(lnp.array(a).numpy(), a)
    with pytest.raises(ValueError, match="copy=False"):
        lnp.asarray([1, 2], copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        lnp.asarray(shared, dtype=lnp.float32, copy=False)
    assert lnp.asarray(shared) is shared
    same(lnp.asarray([[1, 2], [3, 4]]), np.asarray([[1, 2], [3, 4]]))
    same(lnp.asarray([1.0, 2.0]), np.asarray([1.0, 2.0]))  # float64, as NumPy
    same(lnp.asarray(3.5), np.asarray(3.5))
    same(lnp.array([1, 2], ndmin=2), np.array([1, 2], ndmin=2))


@pytest.mark.parametrize("bad", [np.array([1], np.uint8), np.array([1], np.int8),
                                 np.array([1], np.float16), np.array([1j]), [1j]])
def test_unsupported_dtypes_raise_type_error(bad):
    with pytest.raises(TypeError, match="lazyrt supports bool, int32, int64, float32, float64"):
        lnp.asarray(bad)
    with pytest.raises(TypeError, match="unsupported dtype"):
        lnp.zeros(3, dtype=np.uint8)


def test_meshgrid_tril_triu():
    x, y = np.arange(3), np.arange(4.0)
    for indexing in ("xy", "ij"):
        same(lnp.meshgrid(lnp.asarray(x), lnp.asarray(y), indexing=indexing),
             np.meshgrid(x, y, indexing=indexing))
    z = np.arange(2)
    same(lnp.meshgrid(*map(lnp.asarray, (x, y, z))), np.meshgrid(x, y, z))
    m = np.arange(24.0).reshape(2, 3, 4)
    for k in (-1, 0, 2):
        same(lnp.tril(lnp.asarray(m), k=k), np.tril(m, k))
        same(lnp.triu(lnp.asarray(m), k=k), np.triu(m, k))
    with pytest.raises(ValueError, match="at least 2-D"):
        lnp.tril(lnp.asarray(np.arange(3)))


# -- manipulation ----------------------------------------------------------------------
def test_views_share_memory_and_match_numpy():
    a = np.arange(24).reshape(2, 3, 4)
    x = lnp.asarray(a)
    cases = [
        (lnp.flip(x), np.flip(a)), (lnp.flip(x, axis=1), np.flip(a, 1)),
        (lnp.flip(x, axis=(0, 2)), np.flip(a, (0, 2))),
        (lnp.moveaxis(x, 0, -1), np.moveaxis(a, 0, -1)),
        (lnp.moveaxis(x, (0, 1), (2, 0)), np.moveaxis(a, (0, 1), (2, 0))),
        (lnp.permute_dims(x, (2, 0, 1)), np.permute_dims(a, (2, 0, 1))),
        (lnp.transpose(x), np.transpose(a)), (lnp.swapaxes(x, 0, 2), np.swapaxes(a, 0, 2)),
        (lnp.matrix_transpose(x), np.matrix_transpose(a)), (x.mT, a.mT),
        (lnp.expand_dims(x, axis=1), np.expand_dims(a, 1)),
        (lnp.expand_dims(x, axis=(0, -1)), np.expand_dims(a, (0, -1))),
        (lnp.squeeze(lnp.expand_dims(x, axis=0), axis=0), a),
        (lnp.reshape(x, (4, 6)), a.reshape(4, 6)), (lnp.ravel(x), a.ravel()),
        (lnp.broadcast_to(x[:, :1], (2, 3, 4)), np.broadcast_to(a[:, :1], (2, 3, 4))),
    ]
    for got, want in cases:
        same(got, want)
        assert got._storage is x._storage  # a view: no copy, no node
    same(lnp.unstack(x, axis=1), np.unstack(a, axis=1))
    same(lnp.broadcast_arrays(x, lnp.asarray(np.arange(4))),
         np.broadcast_arrays(a, np.arange(4)))
    same(lnp.split(lnp.asarray(np.arange(9)), 3), np.split(np.arange(9), 3))
    same(lnp.split(lnp.asarray(np.arange(9)), [2, 5]), np.split(np.arange(9), [2, 5]))


OPERAND_READS = {
    "maximum": lambda np_, v: np_.maximum(v, 0.0), "add": lambda np_, v: np_.add(v, 1),
    "where": lambda np_, v: np_.where(v > 2, v, 0.0), "exp": lambda np_, v: np_.exp(v),
    "clip": lambda np_, v: np_.clip(v, 2, 3), "sum": lambda np_, v: np_.sum(v),
    "concatenate": lambda np_, v: np_.concatenate([v, v]), "stack": lambda np_, v: np_.stack([v]),
    "matmul": lambda np_, v: np_.matmul(v, v), "take": lambda np_, v: np_.take(v, [3, 0]),
    "argmin": lambda np_, v: np_.argmin(v),
    "reshape_copy": lambda np_, v: np_.reshape(v, (2, 2), copy=True),
}


@pytest.mark.parametrize("name", sorted(OPERAND_READS))
def test_functions_read_an_ndarray_operand_when_called(name):
    """The caller may reuse its array before the sync: NumPy read it at the
    call, and so must lazy.numpy (docs/semantics.md). They shared its
    memory and read it at the sync: `np.maximum(v, 0)` then `v[:] = -1`
    gave zeros."""
    f = OPERAND_READS[name]
    v = np.arange(1.0, 5.0)
    got = f(lnp, v)
    want = f(np, v.copy())
    v[:] = -1.0
    assert_close(got, want)


def test_view_functions_of_an_ndarray_still_share_its_memory():
    """What NumPy returns as a view of its input stays one: a write to the
    array before the sync shows in it, as in NumPy."""
    v = np.arange(6.0)
    views = [lnp.reshape(v, (2, 3)), lnp.flip(v), lnp.expand_dims(v, 0), lnp.split(v, 2)[1]]
    v[0], v[5] = -1.0, -6.0
    same(views, [v.reshape(2, 3), np.flip(v), np.expand_dims(v, 0), np.split(v, 2)[1]])


def test_reshape_copy_flag():
    t = lnp.asarray(np.arange(6).reshape(2, 3)).T
    with pytest.raises(ValueError, match="view size is not compatible"):
        lnp.reshape(t, (6,), copy=False)
    same(lnp.reshape(t, (6,)), np.arange(6).reshape(2, 3).T.reshape(6))
    base = lnp.asarray(np.arange(4))
    c = lnp.reshape(base, (2, 2), copy=True)
    assert c._storage is not base._storage
    same(c, np.arange(4).reshape(2, 2))


def test_concat_stack_are_lazy_writes():
    a, b = np.arange(6.0).reshape(2, 3), np.arange(3, dtype=np.int32).reshape(1, 3)
    x, y = lnp.asarray(a), lnp.asarray(b)
    lazy.log.clear()
    c = lnp.concat([x * 2, y], axis=0)
    assert len(lazy.log) == 0  # nothing ran yet
    same(c, np.concat([a * 2, b], axis=0))
    assert all(r.backend == "llvm" for r in lazy.log)
    same(lnp.concat([x, x], axis=None), np.concat([a, a], axis=None))
    same(lnp.concatenate((x, x), axis=1), np.concatenate((a, a), axis=1))
    same(lnp.stack([x, x + 1], axis=1), np.stack([a, a + 1], axis=1))
    same(lnp.stack([x, x], axis=-1), np.stack([a, a], axis=-1))
    same(lnp.vstack([np.arange(3), np.arange(3)]), np.vstack([np.arange(3), np.arange(3)]))
    same(lnp.hstack([np.arange(3), np.arange(2)]), np.hstack([np.arange(3), np.arange(2)]))
    with pytest.raises(ValueError, match="along dimension 1, the array at index 0 has size 3 "
                                         "and the array at index 1 has size 2"):
        lnp.concat([x, lnp.asarray(np.zeros((2, 2)))])
    with pytest.raises(ValueError, match="same shape"):
        lnp.stack([x, y])


def test_repeat_tile_roll():
    a = np.arange(6).reshape(2, 3)
    x = lnp.asarray(a)
    same(lnp.repeat(x, 2), np.repeat(a, 2))
    same(lnp.repeat(x, 3, axis=1), np.repeat(a, 3, axis=1))
    same(lnp.repeat(x, [1, 0, 2], axis=1), np.repeat(a, [1, 0, 2], axis=1))
    same(lnp.repeat(x, 0, axis=0), np.repeat(a, 0, axis=0))
    for reps in (2, (2, 1), (1, 2, 2), (0, 3)):
        same(lnp.tile(x, reps), np.tile(a, reps))
    for shift, axis in ((1, None), (-4, None), (1, 0), (2, 1), ((1, 2), (0, 1)), (5, -1)):
        same(lnp.roll(x, shift, axis=axis), np.roll(a, shift, axis=axis))
    with pytest.raises(ValueError, match="negative"):
        lnp.tile(x, -1)


Z = np.asarray(5.0)  # a 0-d array: it has no axes


@pytest.mark.parametrize("name, call", [
    ("flip", lambda m, x: m.flip(x, axis=0)), ("flip", lambda m, x: m.flip(x, axis=(-1,))),
    ("squeeze", lambda m, x: m.squeeze(x, axis=(0,))), ("squeeze", lambda m, x: m.squeeze(x, 1)),
    ("roll", lambda m, x: m.roll(x, 1, axis=0)), ("swapaxes", lambda m, x: m.swapaxes(x, 0, 0)),
    ("moveaxis", lambda m, x: m.moveaxis(x, 0, -1))])
def test_0d_manipulations_refuse_axes_the_input_lacks(name, call):
    """`flip(5.0, axis=0)` returned 5.0, `squeeze(5.0, axis=(0,))` and `roll`
    raised IndexError, `swapaxes` IndexError, `moveaxis` ValueError: NumPy
    raises AxisError, as lazyrt now does."""
    with pytest.raises(np.exceptions.AxisError, match="out of bounds for array of dimension 0"):
        call(np, Z)
    for m in (lnp, np):
        with pytest.raises(np.exceptions.AxisError, match="axis -?[01] is out of bounds for "
                                                          "array of dimension 0"):
            call(m, lnp.asarray(Z))


@pytest.mark.parametrize("call", [lambda m, x: m.squeeze(x, axis=0),
                                  lambda m, x: m.squeeze(x, axis=-1),
                                  lambda m, x: m.repeat(x, 3, axis=0),
                                  lambda m, x: m.repeat(x, 3, axis=-1),
                                  lambda m, x: m.flip(x)])
def test_0d_manipulations_take_the_axes_numpy_takes(call):
    """`squeeze(5.0, axis=0)` raised IndexError and `repeat(5.0, 3, axis=0)`
    AxisError; NumPy takes both (repeat as of a 1-d array: [5, 5, 5])."""
    same(call(lnp, lnp.asarray(Z)), call(np, Z))
    same(call(np, lnp.asarray(Z)), call(np, Z))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("decimals", [400, -400, 309, -309, 39, -39, 23, 25, -23, 3])
def test_round_with_huge_decimals_matches_numpy(dtype, decimals):
    """`round(x, decimals=400)` raised OverflowError (from 10.0 ** 400), where
    NumPy gives NaN; and 10.0 ** 23 differs in its last bit from NumPy's
    power of ten, so decimals=23 rounded differently."""
    rng = np.random.default_rng(3)
    a = np.concatenate([rng.normal(size=200) * 10.0 ** rng.integers(-30, 30, 200),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1.5]]).astype(dtype)
    with np.errstate(all="ignore"):
        want = np.round(a, decimals)
        got = lnp.round(lnp.asarray(a), decimals=decimals)
        same(got, want)
        same(np.round(lnp.asarray(a), decimals), want)
    np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))


def test_atleast_nd_and_ascontiguousarray_are_views_as_in_numpy(fresh_log):
    for a in (np.array(5.0), np.arange(3.0), np.arange(6.0).reshape(2, 3),
              np.arange(24.0).reshape(2, 3, 4)):
        x = lnp.asarray(a)
        for name in ("atleast_1d", "atleast_2d", "atleast_3d", "ascontiguousarray"):
            got, want = getattr(lnp, name)(x), getattr(np, name)(a)
            same(got, want)
            assert lazy.shares_memory(got, x) == np.shares_memory(want, a), (name, a.shape)
    x = lnp.asarray(np.arange(6.0).reshape(2, 3))
    y = lnp.ascontiguousarray(x)
    y[0, 0] = 9  # the same memory, as NumPy's: the write shows in x
    assert x[0, 0].item() == 9.0
    t = lnp.ascontiguousarray(x.T)
    assert t.is_contiguous() and not lazy.shares_memory(t, x)
    assert lnp.ascontiguousarray(x, dtype=np.float32).dtype == lnp.float32
    assert [v.shape for v in lnp.atleast_2d(x[0], x)] == [(1, 3), (2, 3)]
    assert lazy.log.counters.fallbacks == 0


@pytest.mark.parametrize("make", [lambda x: lnp.roll(x, 0), lambda x: lnp.roll(x, 3, axis=1),
                                  lambda x: lnp.tile(x, 1), lambda x: lnp.tile(x, (1, 1)),
                                  lambda x: lnp.repeat(x, 1, axis=0), lambda x: lnp.roll(x, 6)],
                         ids=["roll0", "roll_full_turn", "tile1", "tile11", "repeat1", "roll_n"])
def test_functions_that_build_arrays_never_return_the_input(make):
    """NumPy's roll, tile and repeat always make a new array, even when no
    element moves: writing to the result must not change the input."""
    a = np.arange(6).reshape(2, 3)
    x = lnp.asarray(a.copy())
    y = make(x)
    y[0, 0] = 100
    assert x.tolist() == a.tolist() and y[0, 0].item() == 100


shapes = hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)


@settings(max_examples=20, deadline=None)
@given(a=hnp.arrays(np.int64, shapes, elements=st.integers(-9, 9)), data=st.data())
def test_manipulation_property(a, data):
    x = lnp.asarray(a)
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1), label="axis")
    shift = data.draw(st.integers(-5, 5), label="shift")
    same(lnp.roll(x, shift, axis=axis), np.roll(a, shift, axis=axis))
    same(lnp.flip(x, axis=axis), np.flip(a, axis=axis))
    same(lnp.concat([x, x], axis=axis), np.concat([a, a], axis=axis))
    same(lnp.repeat(x, 2, axis=axis), np.repeat(a, 2, axis=axis))
    same(lnp.diff(x, axis=axis), np.diff(a, axis=axis))


# -- linear algebra -----------------------------------------------------------------
def test_linalg_matches_numpy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 3, 2))
    x, y = lnp.asarray(a), lnp.asarray(b)
    tol = dict(rtol=1e-12, atol=1e-12)
    assert_close(lnp.tensordot(x, y, axes=([1, 2], [1, 0])),
                 np.tensordot(a, b, axes=([1, 2], [1, 0])), **tol)
    assert_close(lnp.tensordot(x, y, axes=1), np.tensordot(a, b, axes=1), **tol)
    assert_close(lnp.tensordot(x[0], x[1].T, axes=0), np.tensordot(a[0], a[1].T, axes=0), **tol)
    assert_close(lnp.matmul(x, y[:, :, 0].T.reshape(4, 3)[:, :1]),
                 np.matmul(a, b[:, :, 0].T.reshape(4, 3)[:, :1]), **tol)
    assert_close(lnp.vecdot(x, x), np.vecdot(a, a), **tol)
    assert_close(lnp.vecdot(x, x[0:1], axis=1), np.vecdot(a, a[0:1], axis=1), **tol)
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    same(lnp.vecdot(lnp.asarray(i), lnp.asarray(i)), np.vecdot(i, i))
    assert_close(lnp.dot(x[0], y[:, 0, :]), np.dot(a[0], b[:, 0, :]), **tol)
    bt = b.transpose(1, 0, 2)
    assert_close(lnp.dot(x, lnp.asarray(bt)), np.dot(a, bt), **tol)
    assert_close(lnp.dot(x[0, 0], x[1, 1]), np.dot(a[0, 0], a[1, 1]), **tol)
    assert_close(lnp.inner(x, x), np.inner(a, a), **tol)
    assert_close(lnp.outer(x[0, 0], x[1, 1]), np.outer(a[0, 0], a[1, 1]), **tol)
    assert_close(lnp.trace(x[0]), np.trace(a[0]), **tol)
    with pytest.raises(ValueError, match="shape-mismatch for sum"):
        lnp.tensordot(x, y, axes=([0], [0]))
    with pytest.raises(ValueError, match="not aligned"):
        lnp.matmul(x, x)
    with pytest.raises(ValueError, match="contracted axis has size 4 in x1"):
        lnp.vecdot(x, y)


def test_take_and_take_along_axis():
    a = np.arange(12.0).reshape(3, 4)
    x = lnp.asarray(a)
    same(lnp.take(x, lnp.asarray(np.array([2, 0])), axis=1), np.take(a, [2, 0], axis=1))
    same(lnp.take(x, [5, 1]), np.take(a, [5, 1]))
    idx = np.argsort(-a, axis=1)
    same(lnp.take_along_axis(x, lnp.asarray(idx), axis=1), np.take_along_axis(a, idx, axis=1))
    same(lnp.take_along_axis(x, idx), np.take_along_axis(a, idx, axis=-1))
    with pytest.raises(IndexError, match="out of bounds"):
        lnp.take(x, [7], axis=1)


def test_take_bool_indices_count_as_0_and_1_and_take_along_axis_none_flattens():
    """NumPy casts take's bool indices to intp (not a mask); axis=None takes from a.ravel()."""
    a = np.arange(12.0).reshape(3, 4)
    x = lnp.asarray(a)
    flags = np.array([True, False, True])
    same(lnp.take(x, flags), np.take(a, flags))
    same(np.take(x, lnp.asarray(flags[:2]), axis=1), np.take(a, flags[:2], axis=1))
    same(lnp.take(x, np.True_), np.take(a, np.True_))
    flat = np.array([11, 0, -1, 5])
    same(lnp.take_along_axis(x, flat, axis=None), np.take_along_axis(a, flat, axis=None))
    same(np.take_along_axis(x, lnp.asarray(flat), axis=None), np.take_along_axis(a, flat, axis=None))
    with pytest.raises(ValueError, match="axis=None the indices must be 1-D"):
        lnp.take_along_axis(x, flat.reshape(2, 2), axis=None)
    with pytest.raises(IndexError, match="must be integers"):
        lnp.take_along_axis(x, np.array([[True], [False], [True]]), axis=1)


# -- results that must be arrays of their own, views that must be views ---------------
@pytest.mark.parametrize("fn, a", [
    (lambda m, x: m.isnan(x), np.array([1, 2, 3])), (lambda m, x: m.isinf(x), np.array([1, 2])),
    (lambda m, x: m.isfinite(x), np.array([[1, 2], [3, 4]], np.int32)),
    (lambda m, x: m.signbit(x), np.array([True, False, True]))])
def test_constant_results_have_elements_of_their_own(fn, a):
    """isnan of ints, signbit of bools, ... were one constant seen through a
    stride-0 view: writing one element wrote all of them."""
    want, got = fn(np, a.copy()), fn(lnp, lnp.asarray(a))
    same(got, want)
    assert got.stride() == tuple(s // want.itemsize for s in want.strides)
    idx = (0,) * want.ndim
    want[idx] = not want[idx] if want.dtype == bool else want[idx] + 1
    got[idx] = not bool(got[idx]) if got.dtype == lnp.bool else got[idx] + 1
    same(got, want)


def test_imag_of_real_data_has_elements_of_its_own():
    """NumPy's is read-only; lazyrt's is writable, so one element must be one."""
    im = lnp.imag(lnp.asarray(np.array([1.0, 2.0, 3.0])))
    assert im.stride() == (1,)
    im[0] = 1.0
    same(im, np.array([1.0, 0.0, 0.0]))


@pytest.mark.parametrize("view", [lambda a: a, lambda a: a[::-1], lambda a: a[::2],
                                  lambda a: a[::-1, ::-1], lambda a: a[:, ::2], lambda a: a.T],
                         ids=["contiguous", "reversed", "strided", "both_flipped", "columns",
                              "transposed"])
@pytest.mark.parametrize("ravel", [lambda x: x.ravel(), lambda x: lnp.ravel(x)])
def test_ravel_is_a_view_only_of_contiguous_input(view, ravel):
    """NumPy's (and PyTorch's) ravel copies unless the input is C-contiguous;
    lazyrt's was always a view, so a later write to the base showed through."""
    base = np.arange(12.0).reshape(3, 4)
    t = lnp.asarray(base.copy())
    want = view(base).ravel()
    got = ravel(view(t))
    base[0, 0], t[0, 0] = 99.0, 99.0
    same(got, want)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.diagonal(x, 1, 1, 2), lambda m, x: m.diagonal(x, -1, 2, 0),
    lambda m, x: m.flipud(x), lambda m, x: m.fliplr(x),
    lambda m, x: m.rot90(x), lambda m, x: m.rot90(x, 2, (1, 2)), lambda m, x: m.rot90(x, -1, (2, 0)),
    lambda m, x: m.array_split(x, 3, axis=2), lambda m, x: m.array_split(x, [1, 3], axis=1),
    lambda m, x: m.hsplit(x, 3), lambda m, x: m.vsplit(x, [1])])
def test_view_functions_are_native_views(fn):
    """diagonal, flipud, fliplr, rot90 and the splits were NumPy fallbacks,
    copies, so a later write to the base did not show through them (and a
    write through them was lost). Values, shapes and strides against NumPy."""
    base = np.arange(24.0).reshape(2, 3, 4)
    t = lnp.asarray(base.copy())
    want, got = fn(np, base), fn(lnp, t)  # a NumPy fallback raises here (fresh_log)
    base[...] = -base
    t[...] = -t
    for w, g in zip(*((want, got) if isinstance(want, list) else ([want], [got]))):
        same(g, w)
        assert g.stride() == tuple(s // w.itemsize for s in w.strides)


def test_rot90_and_splits_refuse_what_numpy_refuses():
    for m, x in ((np, np.zeros((2, 3))), (lnp, lnp.zeros((2, 3)))):
        with pytest.raises(ValueError, match="Axes must be different"):
            m.rot90(x, 1, (0, 0))
        with pytest.raises(ValueError, match="number sections must be larger than 0"):
            m.array_split(x, 0)
        with pytest.raises(ValueError, match="equal division"):
            m.split(x, 4, axis=1)
        with pytest.raises(ValueError, match="vsplit only works"):
            m.vsplit(x[0], 2)
        with pytest.raises(ValueError, match="Input must be >= 2-d"):
            m.fliplr(x[0])
