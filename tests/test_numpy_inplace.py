"""NumPy's functions that write their first argument (copyto, fill_diagonal,
put, putmask, place, put_along_axis) on tensors: lazy writes with NumPy's results and errors, called as
lazy.numpy functions or as NumPy's own (through __array_function__, as a
script under `python -m lazy` calls them). They used to write a read-only
host copy and raise."""
from __future__ import annotations

import numpy as np
import pytest

import lazy
import lazy.numpy as lnp


def _both(step, base=None):
    """Run `step(module, array)` on a NumPy array and on a tensor of the same
    values, through lazy.numpy and through NumPy's own function; compare."""
    base = np.arange(12.0).reshape(3, 4) if base is None else base
    want = base.copy()
    step(np, want)
    for mod in (lnp, np):
        t = lnp.asarray(base.copy())
        lazy.log.clear()
        assert step(mod, t) is None
        assert len(lazy.log) == 0, "a kernel ran before a sync"
        assert t.dtype.name == want.dtype.name
        np.testing.assert_array_equal(t.numpy(), want)


MASK = np.arange(12).reshape(3, 4) % 5 == 0


@pytest.mark.parametrize("step", [
    lambda m, x: m.copyto(x, 1.5),
    lambda m, x: m.copyto(x, np.arange(4)),
    lambda m, x: m.copyto(x, np.arange(4.0), where=x > 5),
    lambda m, x: m.copyto(x, np.arange(4.0), where=[True, False, True, False]),
    lambda m, x: m.copyto(x[::-1, 1:3], np.array([[7.0], [8.0], [9.0]])),
    lambda m, x: m.fill_diagonal(x, 5),
    lambda m, x: m.fill_diagonal(x, [7, 8]),
    lambda m, x: m.fill_diagonal(x.T, 9, wrap=True),
    lambda m, x: m.fill_diagonal(x[:, ::-1], -1),
    lambda m, x: m.put(x, [0, -1, 5], [1, 2, 3]),
    lambda m, x: m.put(x, [0, 0, 3], [1, 2, 3]),          # the last write wins
    lambda m, x: m.put(x, [1, 2, 3, 4], [6, 7]),          # values repeat
    lambda m, x: m.put(x, [13, -20], [1, 2], mode="wrap"),
    lambda m, x: m.put(x, [13, -20], [1, 2], mode="clip"),
    lambda m, x: m.put(x.T, [1, 2], 7),
    lambda m, x: m.putmask(x, MASK, [-1.0, -2.0, -3.0]),  # values repeat by position
    lambda m, x: m.putmask(x.T, MASK.T, 0.0),
    lambda m, x: m.place(x, MASK, [-1.0, -2.0]),          # by count of true positions
    lambda m, x: m.place(x[:, ::-1], MASK, [5.0]),
    lambda m, x: m.put_along_axis(x, np.array([[0, 3], [1, 1], [2, -1]]), -1.0, axis=1),
    lambda m, x: m.put_along_axis(x, np.array([[2, 0, 1, 2]]), np.arange(4.0), axis=0),
    lambda m, x: m.put_along_axis(x.T, np.array([[1], [0], [2], [1]]), 9.0, axis=-1),
    lambda m, x: m.put_along_axis(x, np.array([0, 11, 5]), np.array([1.0, 2.0, 3.0]), None)])
def test_inplace_functions_match_numpy(step):
    _both(step)


@pytest.mark.parametrize("shape, wrap", [((5, 3), True), ((5, 3), False), ((3, 3, 3), False),
                                         ((2, 6), True), ((4, 4), False)])
def test_fill_diagonal_shapes(shape, wrap):
    _both(lambda m, x: m.fill_diagonal(x, [1, 2], wrap=wrap), np.zeros(shape))


def test_copyto_casting_as_numpy():
    """A Python number is weak (1 into int32 passes, 1.5 does not); arrays
    and NumPy scalars are cast by dtype."""
    t = lnp.zeros(3, dtype=lnp.int32)
    np.copyto(t, 1)
    np.testing.assert_array_equal(t.numpy(), [1, 1, 1])
    for src in (1.5, np.float64(2.0), np.array([1.0, 2.0, 3.0])):
        with pytest.raises(TypeError):
            np.copyto(np.zeros(3, np.int32), src)
        with pytest.raises(TypeError, match=r"dtype\('float64'\) to dtype\('int32'\)"):
            lnp.copyto(t, src)
    with pytest.raises(TypeError, match="rule 'safe'"):
        lnp.copyto(t, lnp.asarray(np.array([1, 2, 3])), casting="safe")
    lnp.copyto(t, 2.7, casting="unsafe")
    np.testing.assert_array_equal(t.numpy(), [2, 2, 2])


@pytest.mark.parametrize("call, error", [
    (lambda m, x: m.copyto(x, np.arange(3.0)), ValueError),
    (lambda m, x: m.copyto(x, 1.0, where=np.array([1, 0, 1, 0])), TypeError),
    (lambda m, x: m.fill_diagonal(x[:, 0], 9), ValueError),
    (lambda m, x: m.fill_diagonal(np.zeros((2, 3, 2)) if m is np else lnp.zeros((2, 3, 2)), 1),
     ValueError),
    (lambda m, x: m.put(x, [12], [1]), IndexError),
    (lambda m, x: m.put(x, [-13], [1]), IndexError),
    (lambda m, x: m.putmask(x, MASK[:2], 1.0), ValueError),
    (lambda m, x: m.place(x, MASK, []), ValueError),
    (lambda m, x: m.put_along_axis(x, np.array([[4]] * 3), 1.0, axis=1), IndexError),
    (lambda m, x: m.put_along_axis(x, np.array([[1.0]] * 3), 1.0, axis=1), IndexError),
    (lambda m, x: m.put_along_axis(x, np.array([1]), 1.0, axis=1), ValueError)])
def test_inplace_functions_refuse_what_numpy_refuses(call, error):
    with pytest.raises(error):
        call(np, np.zeros((3, 4)))
    t = lnp.zeros((3, 4))
    with pytest.raises(error):
        call(lnp, t)
    np.testing.assert_array_equal(t.numpy(), np.zeros((3, 4)))


def test_inplace_writes_are_seen_by_views_in_program_order():
    a = np.zeros((3, 3))
    t = lnp.asarray(a)
    row = t[1]
    before = row * 1.0
    np.fill_diagonal(t, 4.0)
    after = row * 1.0
    np.put(t, [4], [9.0])
    np.testing.assert_array_equal(before.numpy(), [0, 0, 0])
    np.testing.assert_array_equal(after.numpy(), [0, 4, 0])
    np.testing.assert_array_equal(row.numpy(), [0, 9, 0])
    np.testing.assert_array_equal(a, [[4, 0, 0], [0, 9, 0], [0, 0, 4]])


SPECIAL = np.array([np.nan, 1.5, -np.inf, np.inf, -0.0, np.nan])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
@pytest.mark.parametrize("kw", [{}, {"nan": -1.0, "posinf": 7, "neginf": np.float64(-8)},
                                {"posinf": 0.0}])
def test_nan_to_num_matches_numpy_and_writes_in_place_with_copy_false(dtype, kw):
    """Through the fallback, copy=False wrote a read-only host copy and raised.
    The values are cast to the tensor's dtype (an np.float64 never promotes
    float32); views see the in-place write in program order."""
    base = SPECIAL.astype(dtype) if dtype.startswith("float") else np.arange(6).astype(dtype)
    for mod in (lnp, np):
        t = lnp.asarray(base.copy())
        view = t[1:]
        before = view * 1
        copied = mod.nan_to_num(t, **kw)
        same_as = np.nan_to_num(base.copy(), **kw)
        assert copied.dtype.name == dtype
        np.testing.assert_array_equal(copied.numpy(), same_as)
        assert mod.nan_to_num(t, copy=False, **kw) is t
        np.testing.assert_array_equal(before.numpy(), (base[1:] * 1))
        np.testing.assert_array_equal(view.numpy(), same_as[1:])
        np.testing.assert_array_equal(t.numpy(), same_as)
        assert np.signbit(t.numpy()[4]) == np.signbit(same_as[4])


def test_nan_to_num_of_a_numpy_array_with_copy_false_writes_that_array():
    a = SPECIAL.copy()
    assert lnp.nan_to_num(a, copy=False) is a
    np.testing.assert_array_equal(a, np.nan_to_num(SPECIAL))
