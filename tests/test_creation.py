"""Creation functions and tensor attributes, compared with NumPy (and PyTorch defaults)."""
from __future__ import annotations

import numpy as np
import pytest

import lazy
from conftest import assert_close, assert_layout_like, backends_used, np_strides

pytestmark = pytest.mark.usefixtures("strict_fallback")


# -- tensor / asarray ---------------------------------------------------------------------------
@pytest.mark.parametrize("data, dtype", [
    ([1, 2, 3], "int64"),
    ([[1, 2], [3, 4]], "int64"),
    ([1.0, 2.5], "float32"),          # Python floats: float32, as PyTorch
    ([1, 2.5], "float32"),
    ([[True, False]], "bool"),
    (3, "int64"),
    (2.5, "float32"),
    (True, "bool"),
    ([], "float32"),
    ([[[]]], "float32"),
])
def test_tensor_from_python(data, dtype):
    t = lazy.tensor(data)
    expected = np.asarray(data).astype(dtype)
    assert isinstance(t, lazy.Tensor)
    assert_close(t, expected, dtype=dtype)
    assert t.ndim == expected.ndim
    assert t.size == expected.size
    a = lazy.asarray(data)
    assert_close(a, expected, dtype=dtype)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_tensor_from_python_with_dtype(dtype):
    data = [[0, 1, 2], [3, 0, 5]]
    for d in (dtype, getattr(lazy, dtype if dtype != "bool" else "bool_"), np.dtype(dtype)):
        t = lazy.tensor(data, dtype=d)
        assert_close(t, np.asarray(data).astype(dtype))
        assert t.dtype == getattr(lazy, dtype)
    assert lazy.bool is lazy.bool_


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_tensor_from_numpy_copies(dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    t = lazy.tensor(a)
    assert_close(t, a)
    assert t.dtype.name == dtype  # NumPy arrays keep their dtype
    assert not np.shares_memory(t.numpy(), a)
    before = a.copy()
    a[...] = a[::-1, ::-1] if dtype != "bool" else ~a
    np.testing.assert_array_equal(t.numpy(), before)


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_asarray_shares_numpy_memory(dtype):
    a = np.arange(12).reshape(3, 4).astype(dtype)
    t = lazy.asarray(a)
    assert t.dtype.name == dtype
    got = t.numpy()
    assert np.shares_memory(got, a)
    assert got.strides == a.strides
    assert t.stride() == np_strides(a)
    assert t.storage_offset() == 0
    assert t.is_contiguous()


@pytest.mark.parametrize("index", [
    (slice(None, None, 2), slice(None)),
    (slice(None), slice(None, None, -1)),
    (slice(1, None), slice(3, 0, -2)),
    (slice(None, None, -1), 1),
])
def test_asarray_shares_noncontiguous_numpy(index):
    base = np.arange(40, dtype=np.float64).reshape(5, 8)
    a = base[index]
    t = lazy.asarray(a)
    assert_close(t, a)
    got = t.numpy()
    assert np.shares_memory(got, base)
    assert got.strides == a.strides
    assert_layout_like(t, a)
    # Computing on a strided NumPy-backed tensor reads through the strides.
    assert_close(t * 2 + 1, a * 2 + 1)


def test_asarray_transposed_and_broadcast_numpy():
    base = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = lazy.asarray(base.T)
    assert t.stride() == (1, 3)
    assert not t.is_contiguous()
    assert np.shares_memory(t.numpy(), base)
    b = np.broadcast_to(np.arange(3, dtype=np.int64), (4, 3))
    tb = lazy.asarray(b)
    assert tb.stride() == (0, 1)
    assert_close(tb + 0, b)


def test_asarray_sees_later_numpy_writes():
    a = np.zeros(4, np.float32)
    t = lazy.asarray(a)
    a[2] = 7
    assert t.numpy()[2] == 7


def test_asarray_dtype_converts_and_tensor_passthrough():
    a = np.arange(4, dtype=np.int64)
    t = lazy.asarray(a, dtype=lazy.float64)
    assert_close(t, a.astype(np.float64))
    assert not np.shares_memory(t.numpy(), a)
    u = lazy.asarray(a)
    assert lazy.asarray(u) is u
    v = lazy.asarray(u, dtype="int32")
    assert_close(v, a.astype(np.int32))


def test_asarray_numpy_scalar():
    t = lazy.asarray(np.float64(2.5))
    assert t.shape == () and t.dtype == lazy.float64
    assert t.item() == 2.5
    assert lazy.asarray(np.int32(3)).dtype == lazy.int32


@pytest.mark.parametrize("bad", [np.float16, np.uint8, np.int8, np.complex64, np.uint64])
def test_unsupported_numpy_dtypes(bad):
    a = np.zeros(3, bad)
    with pytest.raises(TypeError, match="dtype"):
        lazy.asarray(a)
    with pytest.raises(TypeError, match="dtype"):
        lazy.tensor(a)


def test_ragged_or_non_numeric_lists_raise():
    with pytest.raises((TypeError, ValueError)):
        lazy.tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        lazy.tensor([object()])


# -- constants -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 2, 1, 3)])
def test_zeros_ones_full_shapes(shape):
    assert_close(lazy.zeros(*shape), np.zeros(shape, np.float32))
    assert_close(lazy.ones(shape), np.ones(shape, np.float32))
    assert_close(lazy.full(shape, 7), np.full(shape, 7, np.int64))
    assert_close(lazy.full(shape, 2.5), np.full(shape, 2.5, np.float32))
    assert_close(lazy.full(shape, True), np.full(shape, True))
    e = lazy.empty(*shape)
    assert e.shape == shape and e.dtype == lazy.float32
    assert e.numpy().shape == shape


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_creation_dtypes(dtype):
    d = getattr(lazy, dtype)
    assert_close(lazy.zeros(2, 3, dtype=d), np.zeros((2, 3), dtype))
    assert_close(lazy.ones((2, 3), dtype=dtype), np.ones((2, 3), dtype))
    assert_close(lazy.full((4,), 1, dtype=d), np.full(4, 1, dtype))
    assert lazy.empty(3, dtype=d).dtype == d
    base = lazy.full((2, 2), 3, dtype=d)
    assert_close(lazy.zeros_like(base), np.zeros((2, 2), dtype))
    assert_close(lazy.ones_like(base), np.ones((2, 2), dtype))
    assert_close(lazy.full_like(base, 0), np.full((2, 2), 0, dtype))
    assert_close(lazy.zeros_like(base, dtype=lazy.float64), np.zeros((2, 2)))


def test_full_like_keeps_dtype_and_converts_value():
    t = lazy.zeros(3, dtype=lazy.int32)
    assert_close(lazy.full_like(t, 5), np.full(3, 5, np.int32))
    f = lazy.zeros(2, 2)
    assert_close(lazy.full_like(f, 1.5), np.full((2, 2), 1.5, np.float32))


@pytest.mark.parametrize("value", [np.int32(7), np.float64(0.1), np.bool_(False)])
def test_full_keeps_a_numpy_scalars_dtype(value):
    """NumPy scalars are strong, here as in arithmetic: their dtype, not PyTorch's defaults."""
    assert_close(lazy.full((2, 3), value), np.full((2, 3), value), rtol=0, atol=0)
    assert_close(lazy.full_like(lazy.zeros(3), value), np.full(3, value, np.float32))


def test_full_values_exact():
    assert_close(lazy.full((3,), 2**40), np.full(3, 2**40, np.int64))
    assert_close(lazy.full((3,), -0.1, dtype=lazy.float64), np.full(3, -0.1))
    assert_close(lazy.full((2,), 0.1), np.full(2, 0.1, np.float32), rtol=0, atol=0)


def test_negative_shapes_raise():
    with pytest.raises(ValueError, match="-1"):
        lazy.zeros(2, -1)
    with pytest.raises(ValueError):
        lazy.full((-3,), 1.0)
    with pytest.raises(TypeError):
        lazy.ones(2.5)


# -- ranges --------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [(5,), (0,), (2, 9), (2, 9, 3), (9, 2, -2), (5, 2), (-3, 4),
                                  (10, 0, -1), (0, 10, 7)])
def test_arange_int(args):
    assert_close(lazy.arange(*args), np.arange(*args))


@pytest.mark.parametrize("args", [(0.0, 1.0, 0.1), (2.5,), (-1.0, 1.0, 0.25), (1, 2, 0.3),
                                  (5.0, 0.0, -0.5), (0.5, 3)])
def test_arange_float_is_float32(args):
    """float32 by default, stepping in float32 as NumPy's float32 arange."""
    assert_close(lazy.arange(*args), np.arange(*args, dtype=np.float32), rtol=0, atol=0)


@pytest.mark.parametrize("args, dtype", [((0, 5, 1.5), "int64"), ((0, 3, 0.5), "int64"),
                                         ((5, 0, -1.5), "int64"), ((0.5, 3.7, 1.1), "int32"),
                                         ((0, 1, 0.1), "float32"), ((0.1, 7, 0.3), "float64")])
def test_arange_follows_numpy_not_torch_for_float_steps(args, dtype):
    """`lazy.arange(0, 5, 1.5, dtype=int64)` gave [0, 1, 3, 4], neither NumPy's
    [0, 1, 2, 3] nor PyTorch's [0, 1, 2, 3, 4] (which truncates the arguments
    first). lazy.arange documents itself as NumPy's, so it takes NumPy's rule."""
    assert_close(lazy.arange(*args, dtype=dtype), np.arange(*args, dtype=dtype), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["int32", "float64", "float32", "int64"])
def test_arange_dtype(dtype):
    assert_close(lazy.arange(3, 20, 4, dtype=dtype), np.arange(3, 20, 4, dtype=dtype))
    assert_close(lazy.arange(-2.0, 2.0, 0.5, dtype=dtype) if dtype.startswith("float")
                 else lazy.arange(-6, 6, dtype=dtype),
                 np.arange(-2.0, 2.0, 0.5, dtype=dtype) if dtype.startswith("float")
                 else np.arange(-6, 6, dtype=dtype))


def test_arange_zero_step():
    with pytest.raises(ValueError, match="step"):
        lazy.arange(0, 5, 0)


@pytest.mark.parametrize("args, kw", [((0, 1, 5), {}), ((0, 1), {}), ((-2, 3, 1), {}),
                                      ((1, 0, 7), {}), ((0, 10, 4), {"endpoint": False}),
                                      ((3, 4, 0), {}), ((0.1, 0.7, 13), {}), ((5, 5, 3), {})])
def test_linspace(args, kw):
    assert_close(lazy.linspace(*args, **kw), np.linspace(*args, **kw).astype(np.float32))
    assert_close(lazy.linspace(*args, dtype=lazy.float64, **kw), np.linspace(*args, **kw))


def test_linspace_endpoint_exact():
    t = lazy.linspace(0.1, 0.7, 13, dtype=lazy.float64).numpy()
    assert t[-1] == 0.7 and t[0] == 0.1


@pytest.mark.parametrize("args", [(3,), (3, 5), (4, 2), (4, 4, 1), (4, 4, -2), (3, 5, 7),
                                  (0,), (2, 3, -5)])
def test_eye(args):
    n = args[0]
    m = args[1] if len(args) > 1 else None
    k = args[2] if len(args) > 2 else 0
    assert_close(lazy.eye(n, m, k), np.eye(n, m, k, dtype=np.float32))
    assert_close(lazy.eye(n, m, k=k, dtype=lazy.int32), np.eye(n, m, k, dtype=np.int32))
    assert_close(lazy.eye(n, m, k=k, dtype=lazy.bool), np.eye(n, m, k, dtype=bool))


# -- random ----------------------------------------------------------------------------------
def test_manual_seed_reproducible():
    lazy.manual_seed(123)
    a, b = lazy.rand(3, 4).numpy().copy(), lazy.randn(5).numpy().copy()
    lazy.manual_seed(123)
    a2, b2 = lazy.rand(3, 4).numpy(), lazy.randn(5).numpy()
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)
    lazy.manual_seed(124)
    assert not np.array_equal(lazy.rand(3, 4).numpy(), a)


@pytest.mark.parametrize("dtype", [None, lazy.float32, lazy.float64])
def test_rand_randn_ranges_and_dtypes(dtype):
    lazy.manual_seed(0)
    r = lazy.rand(200, 50, dtype=dtype)
    n = lazy.randn((100, 100), dtype=dtype)
    want = "float32" if dtype is None else dtype.name
    assert r.dtype.name == want and n.dtype.name == want
    assert r.shape == (200, 50) and n.shape == (100, 100)
    rv, nv = r.numpy(), n.numpy()
    assert rv.min() >= 0 and rv.max() < 1
    assert abs(rv.mean() - 0.5) < 0.02
    assert abs(nv.mean()) < 0.05 and abs(nv.std() - 1) < 0.05
    assert len(np.unique(rv)) > 9000


def test_rand_zero_size_and_int_dtype():
    assert lazy.rand(0, 3).shape == (0, 3)
    assert lazy.randn().shape == ()
    with pytest.raises(TypeError):
        lazy.rand(3, dtype=lazy.int64)


# -- attributes ----------------------------------------------------------------------------
def test_attributes():
    t = lazy.zeros(2, 3, 4, dtype=lazy.int32)
    assert t.shape == (2, 3, 4) and type(t.shape) is tuple
    assert t.ndim == 3 and t.dim() == 3
    assert t.size == 24 and t.numel() == 24
    assert t.dtype == lazy.int32 and t.dtype.name == "int32"
    assert t.device == "cpu"
    assert t.T.shape == (4, 3, 2)
    assert t.stride() == (12, 4, 1)
    assert t.stride(1) == 4 and t.stride(-1) == 1
    assert t.storage_offset() == 0
    assert t.is_contiguous()
    assert len(t) == 2
    s = lazy.tensor(3.0)
    assert s.shape == () and s.ndim == 0 and s.size == 1 and s.T.shape == ()
    assert float(s) == 3.0 and int(s) == 3 and bool(s)
    assert lazy.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]


def test_device_argument():
    assert lazy.zeros(2, device="cpu").device == "cpu"
    with pytest.raises(ValueError, match="device"):
        lazy.zeros(2, device="tpu")


def test_creation_uses_llvm_and_is_lazy():
    lazy.log.clear()
    z = lazy.arange(10) * 2
    e = lazy.eye(3)
    assert len(lazy.log) == 0
    assert z._buf.pending and e._buf.pending
    lazy.sync(z, e)
    assert len(lazy.log) >= 1
    assert set(backends_used()) == {"llvm"}
    assert_close(z, np.arange(10) * 2)
    assert_close(e, np.eye(3, dtype=np.float32))


@pytest.mark.parametrize("k", [2**63 - 1, -(2**63), 3, -3, 7])
def test_eye_with_a_diagonal_outside_the_matrix_is_zeros(k):
    np.testing.assert_array_equal(lazy.eye(3, 3, k).numpy(), np.eye(3, 3, k, dtype=np.float32))
