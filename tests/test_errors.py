"""Errors raise when the op is built (not at sync), name the shapes or values, and leave
every other pending tensor valid and syncable."""
from __future__ import annotations

import numpy as np
import pytest

import lazy
from conftest import assert_close

pytestmark = pytest.mark.usefixtures("strict_fallback")


def _x():
    return lazy.arange(12, dtype=lazy.float32).reshape(3, 4)


# (id, builder, exception type, regex the message must match)
ERRORS = [
    ("broadcast", lambda x: x + lazy.ones(5), ValueError, r"\(3, 4\).*\(5,\)"),
    ("broadcast_3", lambda x: lazy.where(x > 0, x, lazy.ones(2, 1, 3)), ValueError,
     r"\(2, 1, 3\)"),
    ("broadcast_to", lambda x: x.broadcast_to((4, 4)), ValueError, r"\(3, 4\).*\(4, 4\)"),
    ("broadcast_to_fewer_dims", lambda x: x.broadcast_to((4,)), ValueError, r"\(3, 4\)"),
    ("expand", lambda x: x.expand(2, 5, 4), ValueError, r"5.*3|3.*5"),
    ("expand_fewer", lambda x: x.expand(4), ValueError, r"1.*2|2.*1|dimensions"),
    ("reshape", lambda x: x.reshape(5, 3), ValueError, r"12.*\(5, 3\)"),
    ("reshape_two_unknown", lambda x: x.reshape(-1, -1), ValueError, r"-1|unknown"),
    ("view_non_viewable", lambda x: x.T.view(12), ValueError, r"view"),
    ("permute_len", lambda x: x.permute(0), ValueError, r"permute"),
    ("permute_dup", lambda x: x.permute(0, 0), ValueError, r"permutation|\(0, 0\)"),
    ("permute_range", lambda x: x.permute(0, 2), IndexError, r"2"),
    ("transpose_range", lambda x: x.transpose(0, 5), IndexError, r"5"),
    ("squeeze_non_one", lambda x: x.squeeze(0), ValueError, r"axis 0|size"),
    ("unsqueeze_range", lambda x: x.unsqueeze(4), IndexError,
     r"dim 4 .*unsqueeze of a tensor of 2 dimensions .*\[-3, 2\]"),
    ("narrow_range", lambda x: x.narrow(1, 2, 3), IndexError, r"start 2.*length 3|size 4"),
    ("narrow_dim", lambda x: x.narrow(2, 0, 1), IndexError, r"2"),
    ("narrow_float_start", lambda x: x.narrow(1, lazy.tensor(1.5), 1), TypeError,
     r"narrow: start must be an int, got Tensor"),
    ("narrow_float_length", lambda x: x.narrow(1, 0, 2.0), TypeError,
     r"narrow: length must be an int, got float"),
    ("select_range", lambda x: x.select(0, 3), IndexError, r"index 3.*size 3"),
    ("select_neg_range", lambda x: x.select(1, -5), IndexError, r"-5.*size 4"),
    ("index_range", lambda x: x[3], IndexError, r"index 3.*axis 0.*size 3"),
    ("index_range_2", lambda x: x[0, 4], IndexError, r"index 4.*axis 1.*size 4"),
    ("index_neg_range", lambda x: x[:, -5], IndexError, r"-5"),
    ("too_many_indices", lambda x: x[0, 0, 0], IndexError, r"too many indices"),
    ("two_ellipses", lambda x: x[..., ...], IndexError, r"ellipsis"),
    ("index_float", lambda x: x[1.5], IndexError, r"1.5|integers"),
    ("index_bool_array", lambda x: x[np.array([True, False])], IndexError,
     r"boolean index did not match.*size of axis is 3"),
    ("slice_step_zero", lambda x: x[::0], ValueError, r"step"),
    ("diagonal_1d", lambda x: x[0].diagonal(), ValueError, r"\(4,\)"),
    ("diagonal_same", lambda x: x.diagonal(0, 1, 1), ValueError, r"same|1"),
    ("as_strided_oob", lambda x: x.as_strided((4, 4), (4, 1)), IndexError, r"out of bounds"),
    ("as_strided_len", lambda x: x.as_strided((4, 4), (4,)), ValueError, r"\(4, 4\).*\(4,\)"),
    ("sum_axis", lambda x: x.sum(2), np.exceptions.AxisError, r"axis 2 .*2 dimensions"),
    ("sum_bool_axis", lambda x: x.sum(True), TypeError, r"axis must be an int, got bool"),
    ("sum_bool_in_axes", lambda x: x.sum((0, True)), TypeError, r"got bool"),
    ("sum_bool_dim", lambda x: x.sum(dim=False), TypeError, r"got bool"),
    ("sum_axis_neg", lambda x: x.sum(-3), IndexError, r"-3"),
    ("sum_dup_axes", lambda x: x.sum((0, 0)), ValueError, r"duplicate"),
    ("mean_axis", lambda x: x.mean(axis=(0, 5)), IndexError, r"5"),
    ("argmax_tuple", lambda x: x.argmax((0, 1)), TypeError, r"argmax"),
    ("max_empty", lambda x: x[:0].max(), ValueError, r"zero-size|identity"),
    ("matmul_inner", lambda x: x @ lazy.ones(3, 2), ValueError, r"\(3, 4\).*\(3, 2\)"),
    ("matmul_batch", lambda x: x.reshape(3, 1, 4).expand(3, 2, 4) @ lazy.ones(2, 4, 2),
     ValueError, r"broadcast|\(3,\).*\(2,\)"),
    ("dtype_astype", lambda x: x.astype(np.float16), TypeError, r"float16"),
    ("dtype_asarray", lambda x: lazy.asarray(np.zeros(3, np.uint8)), TypeError, r"uint8"),
    ("dtype_zeros", lambda x: lazy.zeros(2, dtype="complex128"), TypeError, r"complex128"),
    ("dtype_bad_name", lambda x: lazy.ones(2, dtype="float8"), TypeError, r"float8"),
    ("invert_float", lambda x: ~x, TypeError, r"invert.*float32"),
    ("and_float", lambda x: x & x, TypeError, r"float32"),
    ("bool_sub", lambda x: (x > 1) - (x > 2), TypeError, r"bool"),
    ("neg_bool", lambda x: -(x > 1), TypeError, r"bool"),
    ("int_neg_pow", lambda x: x.long() ** -2, ValueError, r"negative"),
    ("scalar_overflow", lambda x: x.int() + 2**40, OverflowError, r"1099511627776.*int32"),
    ("rand_int", lambda x: lazy.rand(2, dtype=lazy.int32), TypeError, r"int32"),
    ("negative_shape", lambda x: lazy.ones(2, -3), ValueError, r"-3"),
    ("linspace_num", lambda x: lazy.linspace(0, 1, -1), ValueError, r"-1"),
    ("item_many", lambda x: x.item(), ValueError, r"12"),
    ("bool_many", lambda x: bool(x), ValueError, r"ambiguous"),
    ("index_from_float_tensor", lambda x: [1, 2][x[0, 1]], TypeError, r"float32"),
    ("clip_nothing", lambda x: x.clip(), ValueError, r"min.*max"),
    ("eye_negative", lambda x: lazy.eye(-1), ValueError, r"eye: n.*-1"),
    ("eye_negative_m", lambda x: lazy.eye(3, -2), ValueError, r"eye: m.*-2"),
    ("eye_float", lambda x: lazy.eye(2.5), TypeError, r"eye: n.*2.5"),
    ("linspace_float_num", lambda x: lazy.linspace(0, 1, 2.5), TypeError, r"num.*2.5"),
    ("full_none", lambda x: lazy.full(3, None), TypeError, r"None"),
    ("tensor_int_overflow", lambda x: lazy.tensor([2**40], dtype="int32"), OverflowError,
     r"1099511627776.*int32"),
    ("tensor_nan_to_int", lambda x: lazy.asarray([1.5, float("nan")], dtype="int32"),
     ValueError, r"NaN"),
    ("broadcast_shapes_negative", lambda x: lazy.broadcast_shapes((1,), (-1,)), ValueError,
     r"negative.*\(-1,\)"),
    ("broadcast_to_negative", lambda x: x[:1].broadcast_to((2, -3)), ValueError,
     r"\(2, -3\).*negative"),
    ("unfold_float", lambda x: x.unfold(1, 2.5, 1), TypeError, r"unfold: size.*2.5"),
    ("unfold_negative", lambda x: x.unfold(1, -1, 1), ValueError, r"size.*-1"),
    ("diagonal_float", lambda x: x.diagonal(1.5), TypeError, r"offset.*1.5"),
    ("as_strided_float", lambda x: x.as_strided((2,), (1,), 1.5), TypeError,
     r"storage_offset.*1.5"),
    ("sync_not_a_tensor", lambda x: lazy.sync(x, "a"), TypeError, r"sync\(\) takes tensors.*str"),
]


def test_numpy_integers_are_axes_and_sizes_as_in_numpy():
    """NumPy's integer scalars work wherever an int axis or size does (np.int64
    from a shape or an argmax is what NumPy code passes)."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x, i = lazy.asarray(a), np.int64(1)
    assert_close(x.sum(i), a.sum(1))
    assert_close(x.sum(axis=(np.int64(0),)), a.sum(axis=(0,)))
    assert_close(x.mean(i), a.mean(1))
    assert_close(x.argmax(np.int32(0)), a.argmax(0))
    assert_close(x.unsqueeze(i), a[:, None])
    assert_close(x.diagonal(i), a.diagonal(1))
    assert_close(x.unfold(i, np.int64(2), np.int64(2)), np.stack([a[:, 0:2], a[:, 2:4]], 1))
    assert_close(lazy.eye(np.int64(3), k=i), np.eye(3, k=1, dtype=np.float32))
    assert_close(lazy.linspace(0, 1, np.int64(5)), np.linspace(0, 1, 5, dtype=np.float32))


def test_bool_axis_is_refused_after_the_same_int_axis_was_used():
    """True == 1 and hash alike, so the cache of reduction plans must not answer
    `sum(True)` with `sum(1)`'s plan (NumPy refuses a bool axis)."""
    x = _x()
    assert x.sum(1).shape == (3,) and x.sum((0, 1)).shape == ()
    for build in (lambda: x.sum(True), lambda: x.max(axis=(False, True)),
                  lambda: x.sum(dim=True)):
        with pytest.raises(TypeError, match="got bool"):
            build()
    with pytest.raises(TypeError):
        np.zeros((3, 4)).sum(True)


def test_axis_errors_are_numpys_axis_error_and_pytorchs_index_error():
    """An axis out of range raises NumPy's AxisError, which is both the ValueError
    NumPy code catches and the IndexError PyTorch code catches."""
    x = _x()
    for build in (lambda: x.sum(2), lambda: x.transpose(0, 5), lambda: x.argmax(-3)):
        with pytest.raises(np.exceptions.AxisError) as info:
            build()
        assert isinstance(info.value, IndexError) and isinstance(info.value, ValueError)
    with pytest.raises(np.exceptions.AxisError):
        np.zeros((3, 4)).sum(2)


@pytest.mark.parametrize("name, build, exc, pattern", ERRORS, ids=[e[0] for e in ERRORS])
def test_error_at_build_time(name, build, exc, pattern):
    x = _x()
    other = lazy.arange(5) * 3 + 1  # an unrelated pending tensor
    assert x._buf.pending and other._buf.pending
    syncs = len(lazy.log.syncs)
    with pytest.raises(exc, match=pattern):
        build(x)
    if name not in ("item_many", "bool_many"):
        assert len(lazy.log.syncs) == syncs, "the error must come from building, not a sync"
        assert x._buf.pending  # nothing ran
    # every other pending tensor still syncs to the right value
    assert_close(other, np.arange(5) * 3 + 1)
    assert_close(x * 2, np.arange(12, dtype=np.float32).reshape(3, 4) * 2)


def test_errors_match_numpy_exception_kinds():
    """Where NumPy raises for the same op, lazyrt raises a compatible exception."""
    a = np.arange(12.0).reshape(3, 4)
    t = lazy.asarray(a)
    for f in (lambda v: v[3], lambda v: v[0, 4], lambda v: v[0, 0, 0]):
        with pytest.raises(IndexError):
            f(a)
        with pytest.raises(IndexError):
            f(t)
    for f in (lambda v: v + np.ones(5), lambda v: v.reshape(5, 3),
              lambda v: np.broadcast_to(v, (4, 4)) if isinstance(v, np.ndarray)
              else v.broadcast_to((4, 4))):
        with pytest.raises(ValueError):
            f(a)
        with pytest.raises(ValueError):
            f(t)
    with pytest.raises(ValueError):
        a @ np.ones((3, 2))
    with pytest.raises(ValueError):
        t @ lazy.ones(3, 2)


def test_many_errors_then_everything_syncs():
    a = lazy.arange(6).reshape(2, 3) + 1
    b = a.T * 2
    c = (a.float() / 2).exp().sum(0)
    for bad in (lambda: a + lazy.ones(4), lambda: a.T.view(6), lambda: a[5], lambda: c.sum(3),
                lambda: a.astype("float16"), lambda: a @ a, lambda: ~c):
        with pytest.raises((ValueError, IndexError, TypeError)):
            bad()
    ref = np.arange(6).reshape(2, 3) + 1
    lazy.sync(a, b, c)
    assert_close(a, ref)
    assert_close(b, ref.T * 2)
    assert_close(c, np.exp(ref.astype(np.float32) / 2).sum(0))


def test_error_message_names_user_line():
    """The op records the user's file:line; a sync failure would report it."""
    x = lazy.arange(3) + 1
    lazy.log.clear()
    x.sync()
    ops = [o for r in lazy.log for o in r.ops]
    assert any(o.startswith("add@test_errors.py:") for o in ops), ops


def test_reduce_nonempty_axis_of_empty_tensor():
    """NumPy: max over the non-empty axis of a (0, 3) array is an empty (0,) array."""
    t = lazy.zeros(0, 3)
    for op in ("max", "min", "argmax", "argmin"):
        out = getattr(t, op)(1)
        try:
            assert out.shape == (0,)
            assert out.numpy().shape == (0,)
        finally:
            del out  # a failing pending tensor must not outlive the test (global syncs)


def test_reduce_0d_tensor_along_dim_0():
    """dim 0 of a 0-d tensor is accepted (as PyTorch); it must reduce, not crash."""
    t = lazy.tensor(3.0)
    for op in ("sum", "max", "mean", "prod"):
        assert getattr(t, op)(0).item() == 3.0
    assert t.argmax(0).item() == 0
