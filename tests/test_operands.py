"""Operands that are neither tensors nor Python numbers, converted as NumPy
converts them: lists (float64, not PyTorch's float32; ints past int64
refused), list values in setitem (straight into the destination's dtype) and
NumPy scalars of dtypes lazyrt lacks (promoted exactly to NumPy's result
dtype). Split from test_elementwise.py.
"""
from __future__ import annotations

import operator

import numpy as np
import pytest

import lazy
from conftest import assert_close


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_list_operands_convert_as_numpy(dtype):
    """A list operand is a NumPy array (float64 for floats, strong): it became
    PyTorch's float32, so `x // [0.3]` on float64 gave 29 where NumPy gives 30."""
    a = np.array([9.0, 1.0, -4.0]).astype(dtype)
    floats, ints = [0.3, 0.1, 0.7], [2, -3, 5]
    for other in (floats, ints, [[0.1], [2.5]]):
        for op in (operator.floordiv, operator.add, operator.eq, operator.mul, operator.lt):
            got, want = op(lazy.asarray(a), other), op(a, other)
            assert_close(got, want)
            assert got.dtype.np == want.dtype, (op, other)
            assert_close(op(other, lazy.asarray(a)), op(other, a))
    if dtype.startswith("float"):  # float64's 9 // 0.1 is 89
        t, b = lazy.tensor(a), a.copy()
        t //= [0.1, 0.2, 0.3]
        b //= [0.1, 0.2, 0.3]
        assert_close(t, b)
    with pytest.raises(OverflowError, match="do not fit int64"):
        lazy.asarray(np.array([-2, 0])) + [2**63, 2**63]  # NumPy's uint64, which lazyrt lacks


def test_list_values_in_setitem_convert_straight_into_the_dtype():
    """NumPy converts a list value into the destination's dtype: [0.1, 0.2]
    into float64 was rounded through float32, and [2**40] wrapped in int32."""
    f, a = lazy.zeros(3, dtype=lazy.float64), np.zeros(3)
    f[:] = a[:] = [0.1, 0.2, 2.0**64]
    assert f.tolist() == a.tolist()
    f[1:] = a[1:] = [1e-300, 7]
    assert f.tolist() == a.tolist()
    i = lazy.zeros(2, dtype=lazy.int32)
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        i[:] = [2**40, 1]
    i[:] = [1.7, -2.5]
    assert i.tolist() == [1, -2]


@pytest.mark.parametrize("dtype, scalar", [
    (np.float32, np.uint8(3)), (np.int32, np.int8(1)), (np.int64, np.uint8(3)),
    (np.float32, np.float16(1)), (np.int32, np.float16(1)), (np.int64, np.uint64(3))])
def test_numpy_scalar_of_a_dtype_lazyrt_lacks_promotes_as_numpy(dtype, scalar):
    """A NumPy scalar is strong (NEP 50); one of a dtype lazyrt lacks raised
    TypeError in operators, though NumPy's result dtype is one lazyrt has."""
    import lazy.numpy as lnp
    a = np.arange(-2, 3).astype(dtype)
    t = lnp.asarray(a)
    ops = [(lambda x: x + scalar,) * 2, (lambda x: x * scalar,) * 2,
           (lambda x: x < scalar,) * 2, (lambda x: x - scalar,) * 2,
           (lambda x: lnp.add(x, scalar), lambda x: np.add(x, scalar)),  # the functions
           (lambda x: lnp.maximum(scalar, x), lambda x: np.maximum(scalar, x))]  # raised
    for lazy_op, numpy_op in ops:
        got, want = lazy_op(t), numpy_op(a)
        assert got.dtype.name == want.dtype.name
        np.testing.assert_array_equal(got.numpy(), want)
