"""NumPy's protocols on Tensor (ufuncs, array functions), DLPack, scalar conversions.

Differential against NumPy; "nothing ran" is read from the log, and so are
fallbacks and the causes of implicit syncs.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import lazy
from conftest import assert_close
from scheduler.backends import device_status

pytestmark = pytest.mark.usefixtures("fresh_log")

RNG = np.random.default_rng(0)
A = RNG.uniform(0.5, 2.0, (3, 4))            # positive: log and sqrt are defined
B = RNG.uniform(-2.0, 2.0, (3, 4))
I = RNG.integers(-5, 6, (3, 4))               # int64
J = RNG.integers(1, 4, (4,)).astype(np.int32)  # no zeros: // and %
P = RNG.integers(0, 2, (3, 4)).astype(bool)
Q = RNG.integers(0, 2, (4,)).astype(bool)


def nothing_ran() -> bool:
    return len(lazy.log) == 0 and lazy.log.counters.syncs == 0


def check(got: lazy.Tensor, expected: np.ndarray) -> None:
    assert isinstance(got, lazy.Tensor)
    assert nothing_ran(), lazy.log.table()
    value = got.numpy()
    assert value.dtype == np.asarray(expected).dtype and value.shape == np.shape(expected)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    lazy.log.clear()  # the next check starts from an empty log


def lazy_args(*arrays):
    return [lazy.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays]


UFUNC_CASES = [
    (np.add, A, B), (np.subtract, A, 2.5), (np.multiply, I, J), (np.divide, I, J),
    (np.floor_divide, I, J), (np.remainder, I, J), (np.power, A, B), (np.power, I, 2),
    (np.maximum, A, B), (np.minimum, I, J), (np.equal, I, J), (np.not_equal, A, B),
    (np.less, A, B), (np.less_equal, I, 0), (np.greater, A, 1.0), (np.greater_equal, I, J),
    (np.bitwise_and, I, J), (np.bitwise_or, P, Q), (np.bitwise_xor, I, 3),
    (np.logical_and, A, P), (np.logical_or, I, Q), (np.logical_xor, P, Q),
    (np.logical_not, I), (np.invert, P), (np.negative, B), (np.positive, I), (np.absolute, B),
    (np.exp, B), (np.log, A), (np.sqrt, A), (np.sin, B), (np.cos, I), (np.tanh, B),
    (np.square, I), (np.isnan, np.where(P, np.nan, B)),
]


@pytest.mark.parametrize("case", UFUNC_CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(UFUNC_CASES)])
def test_ufunc_is_lazy_and_matches_numpy(case):
    ufunc, *operands = case
    check(ufunc(*lazy_args(*operands)), ufunc(*operands))


def test_ufunc_keeps_numpys_promotion_for_mixed_operands():
    t32 = lazy.asarray(A.astype(np.float32))
    check(np.multiply(t32, 2.0), A.astype(np.float32) * 2.0)          # weak Python float
    check(np.add(t32, np.float64(1)), A.astype(np.float32) + np.float64(1))  # strong scalar
    check(np.add(lazy.asarray(I), [1.5, 2, 3, 4]), I + np.array([1.5, 2, 3, 4]))  # list: float64


def test_ndarray_on_the_left_dispatches_to_the_tensor():
    t = lazy.asarray(B)
    check(A + t, A + B)
    check(A < t, A < B)
    check(np.float64(3) * t, 3 * B)


@pytest.mark.parametrize("ufunc, src, kwargs", [
    (np.add, A, {}), (np.add, I, dict(axis=1)), (np.multiply, B, dict(axis=None)),
    (np.maximum, B, dict(axis=0, keepdims=True)), (np.minimum, I, dict(axis=(0, 1))),
    (np.logical_or, P, dict(axis=1)), (np.logical_and, P, {}),
])
def test_ufunc_reduce_maps_to_lazy_reductions(ufunc, src, kwargs):
    check(ufunc.reduce(lazy.asarray(src), **kwargs), ufunc.reduce(src, **kwargs))


def test_ufunc_outer_is_lazy():
    a, b = np.arange(3.0), np.arange(4).reshape(2, 2)
    check(np.multiply.outer(lazy.asarray(a), lazy.asarray(b)), np.multiply.outer(a, b))
    check(np.subtract.outer(lazy.asarray(a), 1), np.subtract.outer(a, 1))


def test_out_tensor_is_written_lazily():
    out = lazy.zeros(3, 4, dtype="float64")
    lazy.sync()
    lazy.log.clear()
    r = np.add(lazy.asarray(A), B, out=out)
    assert r is out and nothing_ran()
    np.testing.assert_allclose(out.numpy(), A + B)
    t = lazy.asarray(A.copy())
    lazy.log.clear()
    np.multiply(t, 2, out=t)  # in place, as `t *= 2`
    assert nothing_ran()
    np.testing.assert_allclose(t.numpy(), 2 * A)


def test_out_tensor_refuses_an_unsafe_cast():
    out = lazy.zeros(3, 4, dtype="int64")
    with pytest.raises(TypeError, match="same_kind"):
        np.add(lazy.asarray(A), 1, out=out)


def test_out_ndarray_gets_the_values_through_a_logged_sync():
    host = np.ones((3, 4))
    host += lazy.asarray(A) * 2  # np.add(host, t, out=(host,))
    np.testing.assert_allclose(host, 1 + 2 * A)
    assert [s.cause for s in lazy.log.syncs] == ["implicit: out="]


def test_ufunc_out_with_only_ndarray_inputs():
    out = lazy.zeros(3, 4, dtype="float64")
    np.subtract(A, B, out=out)
    np.testing.assert_allclose(out.numpy(), A - B)


def test_unlowered_ufunc_falls_back_visibly(allow_fallback):
    t = lazy.asarray(B)
    cases = [(lambda x: np.maximum.accumulate(x, axis=1), "maximum.accumulate"),
             (lambda x: np.add(x, 1, dtype=np.float32), "add"),
             (lambda x: np.add(x, np.ones(4, np.uint8)), "add")]
    for f, name in cases:
        lazy.log.clear()
        got = f(t)
        assert isinstance(got, lazy.Tensor)
        np.testing.assert_allclose(got.numpy(), f(B))
        assert [r.reason for r in lazy.log] == [f"fallback: {name} not lowered"]
        assert lazy.log.counters.fallbacks == 1


def test_unlowered_ufunc_is_an_error_under_strict_fallback():
    with pytest.raises(lazy.FallbackError, match="maximum.accumulate"):
        np.maximum.accumulate(lazy.asarray(B))  # add's and multiply's are scans
    assert nothing_ran()


def test_foreign_array_types_are_left_to_their_own_dispatch():
    class Other:
        def __array_ufunc__(self, *args, **kwargs):
            return "other"
    assert np.add(lazy.asarray(A), Other()) == "other"


# -- NumPy functions ------------------------------------------------------------------

C = RNG.uniform(-1.0, 1.0, (4, 2))
FUNCTION_CASES = [
    (lambda np_, x, y: np_.sum(x), (A, B)),
    (lambda np_, x, y: np_.sum(x, axis=(0, 1), keepdims=True), (A, B)),
    (lambda np_, x, y: np_.mean(x, axis=0), (A, B)),
    (lambda np_, x, y: np_.max(y, axis=1), (A, B)),
    (lambda np_, x, y: np_.reshape(x, (4, 3)), (A, B)),
    (lambda np_, x, y: np_.transpose(x), (A, B)),
    (lambda np_, x, y: np_.concatenate([x, y], axis=0), (A, B)),
    (lambda np_, x, y: np_.where(x > 1, x, y), (A, B)),
    (lambda np_, x, y: np_.matmul(x, y), (A, C)),
    (lambda np_, x, y: np_.dot(x, y), (A, C)),
    # NumPy's positional options and keyword names, on array-API signatures
    (lambda np_, x, y: np_.sum(x, 0), (A, B)),
    (lambda np_, x, y: np_.mean(x, 1, None, None, True), (A, B)),
    (lambda np_, x, y: np_.std(x, 0, ddof=1), (A, B)),
    (lambda np_, x, y: np_.clip(x, a_min=0.8, a_max=1.5), (A, B)),
    (lambda np_, x, y: np_.argmax(x, 1), (A, B)),
]


@pytest.mark.parametrize("case", range(len(FUNCTION_CASES)))
def test_numpy_function_dispatches_to_lazy_numpy(case):
    f, (x, y) = FUNCTION_CASES[case]
    check(f(np, lazy.asarray(x), lazy.asarray(y)), f(np, x, y))


def test_numpy_function_with_mixed_tensor_and_ndarray_arguments():
    check(np.concatenate([A, lazy.asarray(B)], axis=1), np.concatenate([A, B], axis=1))


def test_numpy_function_out_tensor():
    out = lazy.zeros(4, dtype="float64")
    lazy.sync()
    lazy.log.clear()
    assert np.sum(lazy.asarray(A), axis=0, out=out) is out
    np.testing.assert_allclose(out.numpy(), A.sum(axis=0))


def test_numpy_function_without_a_lazy_version_falls_back_visibly(allow_fallback):
    got = np.ptp(lazy.asarray(A) * 2, axis=0)
    np.testing.assert_allclose(got.numpy(), np.ptp(A * 2, axis=0))
    assert [r.reason for r in lazy.log if r.backend == "numpy"] == [
        "fallback: ptp not lowered"]
    assert lazy.log.counters.fallbacks == 1


def test_numpy_only_option_falls_back_visibly(allow_fallback):
    keep = np.ones((3, 4), bool)
    keep[:, 0] = False  # (var's where= is native, but not with an integer dtype=)
    got = np.var(lazy.asarray(I), axis=1, dtype=np.int64, where=keep)
    np.testing.assert_array_equal(got.numpy(), np.var(I, axis=1, dtype=np.int64, where=keep))
    assert [r.reason for r in lazy.log] == ["fallback: var not lowered"]


def test_array_metadata_does_not_sync():
    t = lazy.asarray(A) + 1
    assert (np.shape(t), np.ndim(t), np.size(t)) == ((3, 4), 2, 12)
    assert nothing_ran()


def test_numpy_function_without_a_lazy_version_is_an_error_under_strict_fallback():
    with pytest.raises(lazy.FallbackError, match="ptp"):
        np.ptp(lazy.asarray(A))


# -- scalar conversions -----------------------------------------------------------------

@pytest.mark.parametrize("convert, value, expected", [
    (bool, 1.0, True), (float, 2.5, 2.5), (int, 3.0, 3), (complex, 1.5, 1.5 + 0j),
    (lambda t: [10, 20, 30][t], 1, 20),
])
def test_scalar_conversion_syncs_and_is_logged(convert, value, expected):
    dtype = "int64" if isinstance(value, int) else "float64"
    t = lazy.full((), value, dtype=dtype) * 1
    assert convert(t) == expected
    name = getattr(convert, "__name__", "")
    cause = {"bool": "__bool__", "float": "__float__", "int": "__int__",
             "complex": "__complex__"}.get(name, "__index__")
    assert [s.cause for s in lazy.log.syncs] == [f"implicit: {cause}"]


def test_complex_of_a_multi_element_tensor_raises():
    with pytest.raises(ValueError, match="only tensors with one element"):
        complex(lazy.asarray(A))


# -- DLPack -------------------------------------------------------------------------------

def test_dlpack_export_to_numpy_shares_memory_and_strides():
    t = lazy.asarray(A) * 2
    assert t.__dlpack_device__() == (1, 0)
    v = t[:, ::2]
    n = np.from_dlpack(v)
    assert [s.cause for s in lazy.log.syncs] == ["implicit: __dlpack__"]
    assert np.shares_memory(n, t.numpy()) and n.strides == v.numpy().strides
    np.testing.assert_array_equal(n, 2 * A[:, ::2])
    assert not n.flags.writeable  # lazyrt's writes are versioned, as numpy()
    r = lazy.asarray(np.arange(12.0).reshape(3, 4))[::-1, 1:]
    np.testing.assert_array_equal(np.from_dlpack(r), np.arange(12.0).reshape(3, 4)[::-1, 1:])


def test_dlpack_export_copy_and_legacy_consumers():
    t = lazy.asarray(A)
    with pytest.raises(BufferError):
        t.__dlpack__()  # a pre-1.0 consumer cannot be told the memory is read-only
    c = np.from_dlpack(t, copy=True)
    assert c.flags.writeable and not np.shares_memory(c, t.numpy())


@pytest.mark.parametrize("dtype", ["bool", "int32", "int64", "float32", "float64"])
def test_dlpack_export_to_torch(dtype):
    t = lazy.asarray((I % 3).astype(dtype)).T
    tt = torch.from_dlpack(t)
    assert str(tt.dtype) == f"torch.{dtype}"
    assert tuple(tt.shape) == t.shape and tt.stride() == t.stride()
    assert tt.data_ptr() == t.numpy().__array_interface__["data"][0]
    np.testing.assert_array_equal(tt.numpy(), (I % 3).astype(dtype).T)


def test_from_dlpack_numpy_is_zero_copy():
    a = np.arange(24.0).reshape(4, 6)[1:, ::-2]
    t = lazy.from_dlpack(a)
    assert not t._buf.pending and nothing_ran()
    assert t.stride() == (6, -2) and np.shares_memory(t.numpy(), a)
    np.testing.assert_array_equal(t.numpy(), a)
    c = lazy.from_dlpack(a, copy=True)
    assert not np.shares_memory(c.numpy(), a)


def test_from_dlpack_torch_shares_memory_both_ways():
    src = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()  # a transposed view
    t = lazy.from_dlpack(src)
    assert t.dtype == lazy.float32 and t.shape == (4, 3) and t.stride() == src.stride()
    src[0, 0] = 100.0  # torch writes: the realized tensor reads the same memory
    assert t[0, 0].item() == 100.0
    t += 1  # an in-place write at sync: torch sees it
    t.sync()
    assert "write in place" in lazy.log[-1].reason
    np.testing.assert_array_equal(src.numpy(), np.arange(12.0).reshape(3, 4).T + 1
                                  + np.where(np.arange(12).reshape(3, 4).T == 0, 100, 0))


def test_from_dlpack_round_trip_and_errors():
    t = lazy.arange(5)
    assert lazy.from_dlpack(t) is t
    with pytest.raises(TypeError, match="__dlpack__"):
        lazy.from_dlpack([1, 2, 3])


@pytest.mark.skipif(not device_status("cuda")[0], reason="needs a CUDA device")
def test_dlpack_cupy_round_trip():
    import cupy
    a = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)[:, ::2]
    t = lazy.from_dlpack(a)
    assert t.device == "cuda" and t.stride() == (4, 2)
    back = cupy.from_dlpack(t)
    assert back.data.ptr == a.data.ptr and back.strides == a.strides
    np.testing.assert_array_equal(t.numpy(), cupy.asnumpy(a))
    assert t.__dlpack_device__()[0] == 2


def test_ufunc_where_with_out_keeps_out_elsewhere_and_casting_is_honoured():
    """np.exp(t, where=m, out=o): o keeps its old values where m is False (as NumPy);
    casting= is the rule for storing into out."""
    tn = np.linspace(-1, 1, 8)
    t, out = lazy.asarray(tn), lazy.full((8,), 7.0, dtype=lazy.float64)
    assert np.exp(t, where=t > 0, out=out) is out
    expected = np.full(8, 7.0)
    np.exp(tn, where=tn > 0, out=expected)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-15)  # exp: within an ulp
    it = lazy.asarray(np.arange(4, dtype=np.int64))
    with pytest.raises(TypeError, match="same_kind"):
        np.add(it, 1.5, out=it)
    np.add(it, 1.5, out=it, casting="unsafe")
    np.testing.assert_array_equal(it.numpy(), [1, 2, 3, 4])


def test_torch_devices_and_dtypes_name_lazy_ones():
    """PyTorch code passes torch.device and torch dtypes: they mean the same as the
    names ('cpu', 'float64'); a torch dtype lazyrt lacks is refused by name."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = lazy.asarray(a)
    assert x.to(torch.device("cpu")) is x
    for td, nd in [(torch.float64, np.float64), (torch.int32, np.int32),
                   (torch.bool, np.bool_), (torch.long, np.int64)]:
        y = x.to(td)
        assert y.dtype.name == np.dtype(nd).name
        assert_close(y, torch.from_numpy(a).to(td).numpy())
        assert lazy.zeros(2, dtype=td, device=torch.device("cpu")).dtype.name == y.dtype.name
    with pytest.raises(TypeError, match="torch.float16"):
        x.to(torch.float16)


SNAPSHOT_CASES = [  # (id, build from a tensor t and a NumPy array a, the same in NumPy)
    ("binary_op", lambda t, a: t + a, lambda n, a: n + a),
    ("reflected_op", lambda t, a: a * t, lambda n, a: a * n),
    ("lazy_function", lambda t, a: lazy.exp(a) + t, lambda n, a: np.exp(a) + n),
    ("numpy_ufunc", lambda t, a: np.maximum(t, a), lambda n, a: np.maximum(n, a)),
    ("where", lambda t, a: lazy.where(a > 2, t, a), lambda n, a: np.where(a > 2, n, a)),
    ("matmul", lambda t, a: t.reshape(2, 3) @ a.reshape(3, 2),
     lambda n, a: n.reshape(2, 3) @ a.reshape(3, 2)),
]


@pytest.mark.parametrize("name, build, ref", SNAPSHOT_CASES, ids=[c[0] for c in SNAPSHOT_CASES])
def test_numpy_operands_are_read_when_the_op_is_built(name, build, ref):
    """NumPy computes with an array's values at the call; a lazy op runs later, so
    an ndarray operand is copied when the op is built: writing the array before the
    sync changes nothing (`lazy.asarray` is the way to share memory)."""
    n = np.arange(6.0)
    a = np.arange(6.0)[::-1].copy()
    expected = ref(n, a.copy())
    t = lazy.asarray(n.copy())
    y = build(t, a)
    a[:] = -100.0
    assert_close(y, expected)


def test_large_index_array_is_read_when_the_gather_is_built():
    """A gather of >= 64k elements computes positions in its kernel from the index
    array; the array is copied when the gather is built, as any operand."""
    n = 1 << 17
    t = lazy.arange(n, dtype=lazy.float64) * 1
    idx = np.arange(n)[::-1].copy()
    g = t[idx]
    idx += 5
    assert_close(g, np.arange(n, dtype=np.float64)[::-1])


def test_numpy_view_of_a_tensor_as_operand_keeps_its_values():
    """`x.numpy()` is a read-only view of x's memory, which lazyrt itself writes in
    place; as an operand it is copied like any array."""
    x = lazy.arange(3, dtype=lazy.float64) * 1
    lazy.sync()
    y = lazy.arange(3, dtype=lazy.float64) + x.numpy()
    x += 1
    x.sync()  # before y: the write may run in place
    assert_close(y, np.arange(3.0) * 2)


@pytest.mark.parametrize("ufunc, a, b", [
    (np.divide, np.array([1.0, 2.0], np.float32), 2.5),           # float64, as NumPy's
    (np.add, np.array([1, 2], np.int32), 2**40),                  # int64, no OverflowError
    (np.subtract, 2.5, np.array([1.0, 2.0], np.float32)),
    (np.multiply, np.array([1, 2], np.int32), True)])
def test_ufunc_outer_makes_python_numbers_strong(ufunc, a, b):
    """outer converts its operands to arrays first, so NEP 50's weak scalars do not apply."""
    wrap = (lambda v: lazy.asarray(v) if isinstance(v, np.ndarray) else v)
    check(ufunc.outer(wrap(a), wrap(b)), ufunc.outer(a, b))
    import lazy.numpy as lnp
    check(getattr(lnp, ufunc.__name__).outer(wrap(a), wrap(b)), ufunc.outer(a, b))


def test_np_positive_of_bool_is_a_type_error_as_numpy():
    with pytest.raises(TypeError, match="positive"):
        np.positive(np.array([True]))
    with pytest.raises(TypeError, match="positive"):
        np.positive(lazy.asarray(np.array([True])))
    check(np.positive(lazy.asarray(I)), np.positive(I))


@pytest.mark.parametrize("call, shape", [
    (lambda xp, t: np.concatenate([t, t], out=xp.zeros((2, 6))), (2, 6)),
    (lambda xp, t: np.stack([t, t], out=xp.zeros((3, 2, 3))), (3, 2, 3)),
    (lambda xp, t: np.take(t, [2, 0], out=xp.zeros((3, 2), dtype=xp.int64)), (3, 2)),
    (lambda xp, t: np.sum(t, out=xp.zeros(2)), (2,))])
def test_function_out_needs_the_results_shape_as_numpy(call, shape):
    """Only functions whose out= is a ufunc's broadcast into it; NumPy refuses the rest."""
    import lazy.numpy as lnp
    x = np.array([1, 2, 3])
    with pytest.raises(ValueError):
        call(np, x)
    with pytest.raises(ValueError, match="output operand"):
        call(lnp, lazy.asarray(x))


def test_ufunc_based_function_out_broadcasts_the_inputs_as_numpy():
    import lazy.numpy as lnp
    x = np.array([1.0, 2.5, 4.0])
    for f in (lambda xp, t: np.clip(t, 2, 3, out=xp.zeros((2, 3))),
              lambda xp, t: xp.clip(t, 2, 3, out=xp.zeros((2, 3))),
              lambda xp, t: np.outer(t, t, out=xp.zeros((2, 3, 3)))):
        expected = f(np, x)
        got = f(lnp, lazy.asarray(x))
        assert isinstance(got, lazy.Tensor)
        check(got, expected)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float64"])
def test_logical_ufuncs_refuse_python_ints_past_int64_as_numpy(dtype):
    """NumPy converts a Python int to int64 before taking its truth value, so
    2**63 raises OverflowError beside any array; lazyrt returned True."""
    a = np.array([1, 0]).astype(dtype)
    t = lazy.asarray(a)
    for f in (np.logical_and, np.logical_or, np.logical_xor):
        for v in (2**63, -2**63 - 1):
            with pytest.raises(OverflowError):
                f(a, v)
            with pytest.raises(OverflowError):
                f(t, v)
        for v in (2**40, -5, 0):
            np.testing.assert_array_equal(f(t, v).numpy(), f(a, v))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64, np.float32, np.bool_])
def test_function_out_casting_is_each_functions_own_as_numpy(dtype, allow_fallback):
    """cumsum/cumprod cast unsafely into out (lazyrt refused int64 out of a float
    sum), argmax/argmin take an out dtype that casts safely to intp (lazyrt
    wrote 2.0 into float64), dot wants exactly its result dtype (lazyrt cast)."""
    a = np.array([1.5, 2.5, 5.0])
    t = lazy.asarray(a)

    def same_outcome(numpy_call, lazy_call):
        try:
            want = np.asarray(numpy_call()).tolist()
        except (TypeError, ValueError) as e:
            with pytest.raises(type(e)):
                lazy_call()
            return
        assert np.asarray(lazy_call()).tolist() == want
    for f in (np.cumsum, np.cumprod):
        same_outcome(lambda: f(a, out=np.zeros(3, dtype)),
                     lambda: f(t, out=lazy.zeros(3, dtype=dtype)))
    for f in (np.argmax, np.argmin):
        same_outcome(lambda: f(a, out=np.zeros((), dtype)),
                     lambda: f(t, out=lazy.zeros((), dtype=dtype)))
    b = np.ones((2, 2))
    same_outcome(lambda: np.dot(b, b, out=np.zeros((2, 2), dtype)),
                 lambda: np.dot(lazy.asarray(b), lazy.asarray(b),
                                out=lazy.zeros((2, 2), dtype=dtype)))
