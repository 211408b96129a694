"""NumPy's memory `order` on copies, casts, reshapes and ravels: the values,
dtypes and strides of each result against NumPy's, and which results share
memory with their input."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazy
import lazy.numpy as lnp
from conftest import backends_used

pytestmark = pytest.mark.usefixtures("strict_fallback")

ORDERS = ["C", "F", "A", "K"]


def byte_strides(t: lazy.Tensor) -> tuple[int, ...]:
    return tuple(s * t.dtype.np.itemsize for s in t.stride())


def same(got: lazy.Tensor, expected: np.ndarray) -> None:
    """Values, dtype, shape and the layout (strides) NumPy gives."""
    assert got.dtype.np == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)
    assert byte_strides(got) == expected.strides, (byte_strides(got), expected.strides)


@st.composite
def strided_views(draw):
    """A view of a 3-d float64 array: any axis order, steps of 1, 2 or -1."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=3, max_size=3)))
    steps = tuple(draw(st.sampled_from([1, 2, -1])) for _ in shape)
    axes = tuple(draw(st.permutations(range(3))))
    def view(a):
        return a[tuple(slice(None, None, s) for s in steps)].transpose(axes)
    return shape, view


@settings(max_examples=80, deadline=None)
@given(strided_views(), st.sampled_from(ORDERS))
def test_copies_and_casts_are_laid_out_as_numpys(case, order):
    shape, view = case
    a = np.arange(np.prod(shape) * 8, dtype=np.float64).reshape(tuple(2 * n for n in shape))
    v, t = view(a), view(lnp.asarray(a))
    same(t.copy(order), v.copy(order))
    same(lnp.copy(t, order=order), np.copy(v, order=order))
    same(t.astype(np.float32, order=order), v.astype(np.float32, order=order))
    same(t.astype(np.int64, order), v.astype(np.int64, order))


def test_defaults_are_numpys():
    """ndarray.copy is C-ordered, np.copy and astype keep the layout (K)."""
    a = np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1)
    t = lnp.asarray(np.arange(24.0).reshape(2, 3, 4)).transpose(2, 0, 1)
    same(t.copy(), a.copy())
    same(lnp.copy(t), np.copy(a))
    same(t.astype(np.float32), a.astype(np.float32))
    same(lnp.astype(t, lnp.int64), np.astype(a, np.int64))
    same(lnp.copy(a.T), np.copy(a.T))  # a NumPy operand keeps its layout too
    b = np.broadcast_to(np.arange(3.0), (4, 3))  # a broadcast axis goes last in K order
    same(lnp.copy(lnp.broadcast_to(lnp.arange(3.0), (4, 3))), np.copy(b))


def _row(shape) -> list[float]:
    """A fill value that broadcasts along the last axis of `shape`."""
    return [float(i) for i in range(1, shape[-1] + 1)]


LIKE = {  # name: (lazy call, NumPy call) of (prototype, result shape, order=, shape=)
    "zeros_like": (lambda t, _, **kw: lnp.zeros_like(t, **kw),
                   lambda a, _, **kw: np.zeros_like(a, **kw)),
    "ones_like int32": (lambda t, _, **kw: lnp.ones_like(t, np.int32, **kw),
                        lambda a, _, **kw: np.ones_like(a, np.int32, **kw)),
    "full_like": (lambda t, _, **kw: lnp.full_like(t, 2.5, **kw),
                  lambda a, _, **kw: np.full_like(a, 2.5, **kw)),
    "full_like of an array": (lambda t, out, **kw: lnp.full_like(t, _row(out), **kw),
                              lambda a, out, **kw: np.full_like(a, _row(out), **kw)),
}


@settings(max_examples=100, deadline=None)
@given(strided_views(), st.sampled_from(ORDERS), st.sampled_from(sorted(LIKE)),
       st.sampled_from([None, (2, 3, 2), (3, 2, 2, 2), (4, 2)]))
def test_like_functions_are_laid_out_as_numpys(case, order, name, shape):
    """order= and shape= of the `_like` functions: K follows the prototype's
    axis order when the new shape has its ndim (any sizes), C otherwise; A
    is F for a Fortran-ordered prototype. Values, dtype and strides."""
    view_shape, view = case
    a = np.arange(np.prod(view_shape) * 8, dtype=np.float64).reshape(
        tuple(2 * n for n in view_shape))
    v, t = view(a), view(lnp.asarray(a))
    lazy_like, numpy_like = LIKE[name]
    kw = {"order": order} if shape is None else {"order": order, "shape": shape}
    out = v.shape if shape is None else shape
    same(lazy_like(t, out, **kw), numpy_like(v, out, **kw))
    e, expected = lnp.empty_like(t, **kw), np.empty_like(v, **kw)
    assert e.dtype.np == expected.dtype and e.shape == expected.shape
    assert byte_strides(e) == expected.strides


def test_like_functions_take_numpys_positional_order_and_check_it():
    a = np.arange(6.0).reshape(2, 3).T
    t = lnp.asarray(np.arange(6.0).reshape(2, 3)).T
    same(lnp.zeros_like(t, np.float32, "C", True, (3, 2)), np.zeros_like(a, np.float32, "C", True, (3, 2)))
    same(lnp.full_like(t, 7, None, "F"), np.full_like(a, 7, None, "F"))
    same(lnp.ones_like(t), np.ones_like(a))  # K by default: a transposed prototype's layout
    with pytest.raises(ValueError, match="order must be one of"):
        lnp.zeros_like(t, order="X")


def test_a_copy_in_fortran_order_is_one_kernel_and_nothing_runs_before_sync():
    t = lnp.asarray(np.arange(12.0).reshape(3, 4)) * 2
    lazy.log.clear()
    f = t.copy("F")
    assert len(lazy.log) == 0
    lazy.sync(f)
    assert len(lazy.log) == 1 and set(backends_used()) == {"llvm"}
    assert f.stride() == (1, 3)


@pytest.mark.parametrize("make", [
    lambda xp, a: a.astype(a.dtype, copy=False),
    lambda xp, a: a.T.astype(a.dtype, copy=False),
    lambda xp, a: a.T.astype(a.dtype, order="F", copy=False),
    lambda xp, a: a.T.astype(a.dtype, order="C", copy=False),
    lambda xp, a: a.T.astype(a.dtype, order="A", copy=False),
    lambda xp, a: a[:, ::2].astype(a.dtype, order="A", copy=False),
    lambda xp, a: a.astype(xp.float32, copy=False),
], ids=["same", "T", "T F", "T C", "T A", "strided A", "new dtype"])
def test_astype_copy_false_returns_the_array_exactly_when_numpy_does(make):
    """NumPy's rule: copy=False hands back the array itself when its dtype
    and layout already satisfy the call. A write through the result shows
    in the input exactly then."""
    a = np.arange(12.0).reshape(3, 4)
    t = lnp.asarray(a.copy())
    expected, got = make(np, a), make(lnp, t)
    np.testing.assert_array_equal(got.numpy(), expected)
    assert byte_strides(got) == expected.strides
    expected[...] = -1
    got[...] = -1
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("casting", ["no", "equiv", "safe", "same_kind"])
def test_astype_refuses_casts_its_rule_forbids_as_numpy(casting):
    a = np.arange(4.0)
    with pytest.raises(TypeError) as expected:
        a.astype(np.int32, casting=casting)
    with pytest.raises(TypeError) as got:
        lnp.asarray(a).astype(np.int32, casting=casting)
    assert str(got.value) == str(expected.value)
    same(lnp.asarray(a).astype(np.float64, casting=casting), a.astype(np.float64))


RESHAPES = [
    ("reshape F", lambda a: a.reshape(4, 3, order="F")),
    ("reshape F tuple", lambda a: a.reshape((2, 6), order="F")),
    ("reshape F of T", lambda a: a.T.reshape(6, 2, order="F")),
    ("reshape A of T", lambda a: a.T.reshape(2, 6, order="A")),
    ("ravel F", lambda a: a.ravel("F")),
    ("ravel F of T", lambda a: a.T.ravel("F")),
    ("ravel K of T", lambda a: a.T.ravel(order="K")),
    ("ravel A of T", lambda a: a.T.ravel("A")),
    ("ravel C of T", lambda a: a.T.ravel("C")),
    ("flatten F", lambda a: a.flatten("F")),
    ("flatten C", lambda a: a.flatten(order="C")),
    ("flatten F of T", lambda a: a.T.flatten("F")),
]


@pytest.mark.parametrize("name, f", RESHAPES, ids=[r[0] for r in RESHAPES])
def test_reshape_ravel_and_flatten_take_numpys_order(name, f):
    """Values and strides as NumPy's, and a view exactly when NumPy's is one
    (flatten: never)."""
    a = np.arange(12.0).reshape(3, 4)
    t = lnp.asarray(a.copy())
    expected, got = f(a), f(t)
    same(got, expected)
    expected[...] = -1
    got[...] = -1
    np.testing.assert_array_equal(t.numpy(), a)


def test_torch_flatten_and_reshape_are_unchanged():
    t = lazy.arange(24).reshape(2, 3, 4)
    assert t.flatten(1).shape == (2, 12) and t.flatten(0, 1).shape == (6, 4)
    assert t.reshape(4, 6).shape == (4, 6) and t.reshape((6, 4)).shape == (6, 4)
    with pytest.raises(ValueError, match="order 'K' is not permitted"):
        t.reshape(4, 6, order="K")
    with pytest.raises(ValueError, match="order must be one of"):
        t.ravel("X")


def test_asfortranarray_and_require_f_copy_in_fortran_order():
    a = np.arange(24.0).reshape(2, 3, 4)
    same(lnp.asfortranarray(lnp.asarray(a)), np.asfortranarray(a))
    same(lnp.require(lnp.asarray(a), requirements="F"), np.require(a, requirements="F"))
    same(lnp.require(lnp.asarray(a), requirements=["F", "O"]),
         np.require(a, requirements=["F", "O"]))


@pytest.mark.parametrize("dtype", [np.int32, "int64", lazy.float32, np.dtype("float64")])
def test_view_of_a_dtype_says_it_cannot_reinterpret_memory(dtype):
    with pytest.raises(TypeError, match="cannot reinterpret a tensor's memory.*astype"):
        lazy.zeros(4).view(dtype)
