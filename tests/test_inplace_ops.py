"""In-place operators and methods against NumPy and PyTorch, with their dtype rules."""
from __future__ import annotations

import re

import numpy as np
import pytest

import lazy
from conftest import DTYPE_NAMES, assert_close, sample
from write_helpers import pair, writable

pytestmark = pytest.mark.usefixtures("strict_fallback")


# -- in-place operators and methods ------------------------------------------------------------
IOPS = [("iadd", "__iadd__", "+"), ("isub", "__isub__", "-"), ("imul", "__imul__", "*"),
        ("itruediv", "__itruediv__", "/"), ("ifloordiv", "__ifloordiv__", "//"),
        ("imod", "__imod__", "%"), ("ipow", "__ipow__", "**"), ("iand", "__iand__", "&"),
        ("ior", "__ior__", "|"), ("ixor", "__ixor__", "^")]


def _np_inplace(a: np.ndarray, method: str, other):
    """NumPy's `a op= other`; returns the exception NumPy raises, if any."""
    try:
        getattr(a, method)(other)
    except (TypeError, ValueError) as e:  # UFuncTypeError is a TypeError
        return e
    return None


def _operand(kind: str, dtype: str, rng):
    positive = True  # no division by zero, no negative integer powers
    if kind == "py_int":
        return 2
    if kind == "py_float":
        return 1.5
    if kind == "py_bool":
        return True
    other_dtype = dtype if kind in ("same_array", "same_tensor") else kind.split(":")[1]
    v = sample((3, 1), other_dtype, rng, positive=positive, high=4)
    if kind == "same_tensor" or kind.startswith("tensor"):
        return lazy.tensor(v), v
    return v, v


CROSS_OPERANDS = ["py_float", "py_bool", "same_array", "tensor:int64", "tensor:float32",
                  "array:float64", "array:int32", "tensor:bool"]
OPERANDS = ["py_int", "same_tensor"] + CROSS_OPERANDS


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("name, method, sym", IOPS, ids=[o[0] for o in IOPS])
def test_inplace_operator_vs_numpy(name, method, sym, dtype):
    """`t op= other` for every operand kind: NumPy's values, or TypeError where NumPy
    (and PyTorch) refuse to cast the result back to the tensor's dtype."""
    rng = np.random.default_rng(11)
    i = [o[0] for o in IOPS].index(name) + DTYPE_NAMES.index(dtype)
    computed = {("py_int", "same_tensor")[i % 2], CROSS_OPERANDS[i % len(CROSS_OPERANDS)]}
    for operand in OPERANDS:
        t, a = pair((3, 4), dtype, seed=9)
        if dtype != "bool":  # positive bases: integer ** and % stay well defined
            a = np.abs(a) + (a == 0)
            t = lazy.tensor(a)
        o = _operand(operand, dtype, rng)
        lo, no = o if isinstance(o, tuple) else (o, o)
        snapshot = a.copy()
        with np.errstate(all="ignore"):
            err = _np_inplace(a, method, no)
        if err is not None:
            with pytest.raises(TypeError):
                getattr(t, method)(lo)
            assert_close(t, snapshot)  # a refused in-place op writes nothing
            continue
        out = getattr(t, method)(lo)
        assert out is t
        assert t.dtype.name == dtype
        if operand in computed:  # values for a rotating subset: each one is a compile
            assert_close(t, a, rtol=1e-5 if dtype == "float32" else None), (operand, sym)


@pytest.mark.parametrize("dtype, op, value", [
    ("int32", "__itruediv__", 2), ("int64", "__iadd__", 1.5), ("int32", "__imul__", 0.5),
    ("int64", "__isub__", "float32"), ("bool", "__isub__", True), ("bool", "__iadd__", 1),
    ("float32", "__iand__", 1), ("float64", "__ixor__", True), ("int32", "__ipow__", 0.5),
    ("bool", "__itruediv__", True),
])
def test_inplace_dtype_errors_where_torch_raises(dtype, op, value):
    import torch
    a = np.ones((2, 3), dtype=dtype)
    tt = torch.from_numpy(a.copy())
    t = lazy.tensor(a)
    if value == "float32":
        lval, tval = lazy.ones((2, 3)), torch.ones((2, 3))
    else:
        lval = tval = value
    with pytest.raises((RuntimeError, TypeError)):
        getattr(tt, op)(tval)
    with pytest.raises(TypeError, match=dtype):
        getattr(t, op)(lval)
    assert_close(t, a)


def test_clamp_and_fill_dtype_and_shape_rules_as_torch():
    import torch
    a = np.array([1, 2, 3])
    # clamp_ of an int tensor with float bounds would need a float result: PyTorch (and
    # NumPy's clip with out=) refuse
    with pytest.raises(RuntimeError):
        torch.from_numpy(a.copy()).clamp_(0.5, 2.5)
    with pytest.raises(TypeError):
        np.clip(a.copy(), 0.5, 2.5, out=a.copy())
    t = lazy.tensor(a)
    with pytest.raises(TypeError, match="int64"):
        t.clamp_(0.5, 2.5)
    with pytest.raises(TypeError, match="int64"):
        t.clamp_(max=1.5)
    t.clamp_(1, 2)  # int bounds are fine
    assert_close(t, np.clip(a, 1, 2))
    # fill_ takes a number or a 0-d tensor, not a tensor to broadcast
    with pytest.raises(RuntimeError):
        torch.zeros(3, 4).fill_(torch.ones(4))
    f = lazy.zeros(3, 4)
    with pytest.raises((ValueError, RuntimeError)):
        f.fill_(lazy.ones(4))
    f.fill_(lazy.tensor(2.5))
    assert_close(f, np.full((3, 4), 2.5, np.float32))


@pytest.mark.parametrize("shape, other", [((3,), (1, 3)), ((3,), (2, 3)), ((1, 3), (2, 1)),
                                          ((2, 1), (1, 3))])
def test_inplace_result_must_keep_the_tensor_shape(shape, other):
    """The output of an augmented operator is not broadcast (NumPy and PyTorch
    refuse `a += ones(1, 3)` for `a` of shape (3,)); nothing is written."""
    import torch
    a = np.zeros(shape)
    with pytest.raises(ValueError, match="non-broadcastable output"):
        a += np.ones(other)
    with pytest.raises(RuntimeError):
        torch.zeros(shape).add_(torch.ones(other))
    t = lazy.zeros(*shape)
    with pytest.raises(ValueError, match=rf"shape {re.escape(str(shape))} doesn't match "
                                         rf"the broadcast shape"):
        t += lazy.ones(*other)
    assert_close(t, np.zeros(shape, np.float32))


@pytest.mark.parametrize("dtype, op, value", [
    ("int32", "__iadd__", "int64"), ("float32", "__imul__", "float64"),
    ("float32", "__iadd__", "int64"), ("int64", "__iadd__", "bool"),
    ("float64", "__itruediv__", "int32"),
])
def test_inplace_downcast_within_kind_is_allowed(dtype, op, value):
    """same_kind casts back are fine (NumPy and PyTorch): int32 += int64 stays int32."""
    import torch
    a = np.arange(1, 7, dtype=dtype).reshape(2, 3)
    b = np.arange(2, 8).reshape(2, 3).astype(value)
    tt = torch.from_numpy(a.copy())
    getattr(tt, op)(torch.from_numpy(b))
    t = lazy.tensor(a)
    getattr(t, op)(lazy.tensor(b))
    assert t.dtype.name == dtype
    assert_close(t, tt.numpy())


def test_inplace_methods_vs_torch():
    import torch
    rng = np.random.default_rng(4)
    a = sample((4, 5), "float32", rng)
    b = sample((5,), "float32", rng, positive=True)
    tt = torch.from_numpy(a.copy())
    t = lazy.tensor(a)
    steps = [
        lambda x, B: x.add_(B), lambda x, B: x.sub_(2), lambda x, B: x.mul_(B),
        lambda x, B: x.div_(B), lambda x, B: x.clamp_(-3, 4), lambda x, B: x.clamp_(min=-1),
        lambda x, B: x.clamp_(max=2.5), lambda x, B: x[1:].fill_(0.25),
        lambda x, B: x[:, 0].zero_(), lambda x, B: x.T[1].copy_(B[:4]),
        lambda x, B: x.add_(1).mul_(3), lambda x, B: x[::2].copy_(x[1::2]),
    ]
    for i, step in enumerate(steps):
        r1 = step(tt, torch.from_numpy(b.copy()))
        r2 = step(t, lazy.tensor(b))
        assert r2.shape == tuple(r1.shape)
        assert_close(t, tt.numpy(), rtol=1e-6), f"step {i}"


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_copy_casts_and_broadcasts_like_torch(dtype):
    import torch
    for src_dtype in DTYPE_NAMES:
        _check_copy_cast(torch, dtype, src_dtype)


def _check_copy_cast(torch, dtype, src_dtype):
    src = np.array([1.75, -2.5, 0.0, 3.0]).astype(src_dtype)
    base = np.zeros((3, 4), dtype=dtype)
    tt = torch.from_numpy(base.copy())
    tt[1:].copy_(torch.from_numpy(src.copy()))
    t = lazy.tensor(base)
    out = t[1:].copy_(lazy.tensor(src))
    assert out.shape == (2, 4)
    assert_close(t, tt.numpy())
    t.copy_(src)  # a NumPy array as the source
    tt.copy_(torch.from_numpy(src.copy()))
    assert_close(t, tt.numpy())


def test_copy_from_overlapping_view_of_itself_reads_old_values():
    t, a = pair((6,), "int64")
    t[::-1].copy_(t)
    a[::-1] = a.copy()
    assert_close(t, a)
    t2, a2 = pair((3, 3), "float64")
    t2.copy_(t2.T)
    a2[...] = a2.T.copy()
    assert_close(t2, a2)


def test_inplace_on_views_vs_numpy():
    t, a = pair((4, 6), "float64", seed=12)
    t[1:, ::2] += np.arange(3.0)
    a[1:, ::2] += np.arange(3.0)
    t.T[0] *= 2
    a.T[0] *= 2
    t.diagonal().add_(1)
    writable(a.diagonal(), a)[...] += 1
    t.select(1, 5).zero_()
    a[:, 5] = 0
    t.narrow(0, 1, 2).clamp_(0, 3)
    np.clip(a[1:3], 0, 3, out=a[1:3])
    t[::-1, 1] -= t[:, 2]
    a[::-1, 1] -= a[:, 2]
    t[2] /= 4
    a[2] /= 4
    t[..., 3:] **= 2
    a[..., 3:] **= 2
    t[1:] += t[:-1]  # overlapping operands: the old values are read (NumPy's guarantee)
    a[1:] += a[:-1]
    t[:, :-1] *= t[:, 1:]
    a[:, :-1] *= a[:, 1:]
    assert_close(t, a)


def test_numpy_result_is_read_only_and_shows_in_place_writes():
    t, a = pair((2, 3), "int64")
    got = t.numpy()
    assert not got.flags.writeable
    with pytest.raises(ValueError):
        got[0, 0] = 1
    t.fill_(4)  # nothing else reads the old version: written in place, visible in `got`
    lazy.sync()
    np.testing.assert_array_equal(t.numpy(), np.full((2, 3), 4))
    np.testing.assert_array_equal(got, np.full((2, 3), 4))


def test_integer_ops_in_place():
    t, a = pair((3, 4), "int32", seed=2)
    for op, v in [("__ifloordiv__", 2), ("__imod__", 3), ("__iand__", 6), ("__ior__", 1),
                  ("__ixor__", 5), ("__ipow__", 2), ("__ifloordiv__", 0), ("__imod__", 0)]:
        getattr(t, op)(v)
        with np.errstate(all="ignore"):
            getattr(a, op)(v)
        assert_close(t, a), op


def test_bool_in_place():
    t, a = pair((3, 4), "bool", seed=1)
    m = sample((3, 4), "bool", np.random.default_rng(7))
    for op in ("__iand__", "__ior__", "__ixor__", "__iadd__", "__imul__"):
        getattr(t, op)(m)
        getattr(a, op)(m)
        assert_close(t, a), op




def test_shift_and_matmul_in_place_follow_numpy():
    """`<<=`/`>>=` refuse a result their dtype can't hold (same_kind), as the other
    augmented operators; `@=` writes into the tensor (views see it), as NumPy's."""
    for method in ("__ilshift__", "__irshift__"):
        b = np.array([True, False])
        assert isinstance(_np_inplace(b.copy(), method, 1), TypeError)
        t = lazy.tensor(b)
        with pytest.raises(TypeError, match="bool"):
            getattr(t, method)(1)
        assert_close(t, b)
        a = np.array([1, 2, -8], np.int32)
        t = lazy.tensor(a)
        assert getattr(t, method)(2) is t and t.dtype.name == "int32"
        getattr(a, method)(2)
        assert_close(t, a)
    a = np.arange(6.0).reshape(2, 3)
    m = np.arange(9.0).reshape(3, 3) - 4
    t = lazy.tensor(a)
    row = t[1]
    t @= lazy.tensor(m)
    a @= m
    assert_close(t, a)
    assert_close(row, a[1])  # written in place: the view sees the product
    with pytest.raises(ValueError, match=r"\(2, 2\).*\(2, 3\)"):
        t @= lazy.tensor(np.ones((3, 2)))
    i = lazy.tensor(np.ones((2, 2), np.int64))
    with pytest.raises(TypeError, match="int64"):
        i @= lazy.tensor(np.ones((2, 2)))
    assert_close(t, a)  # the refused writes wrote nothing
