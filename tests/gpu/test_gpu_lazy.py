"""The whole lazy pipeline on a GPU: the real one where there is one, else the
emulated device of tests/cuda_lazy_helpers.py.

On a GPU machine CuPy is real: NVRTC cubins for the device's own arch, real
launches, cuBLAS, CuPy's scans and sorts, device memory and DLPack. Without
one, the same tests run the same lazyrt code against the CuPy stand-in, whose
launches run the generated CUDA C under the host emulation. Values, dtypes
and shapes are compared with NumPy, and the Philox streams with the CPU's for
the same seed (issue 5: the same numbers on the GPU too).
"""
from __future__ import annotations

import numpy as np
import pytest

import lazy
from scheduler.backends import device_status

OK, WHY = device_status("cuda")
pytestmark = pytest.mark.usefixtures("gpu", "fresh_log")


@pytest.fixture
def gpu(monkeypatch):
    """Device cuda: the real GPU, else the emulated one."""
    if OK:
        yield None
        return
    from cuda_lazy_helpers import emulated_cuda
    yield from emulated_cuda(monkeypatch)

TOL = {"float32": dict(rtol=2e-6, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}


def on_gpu(a: np.ndarray) -> lazy.Tensor:
    import cupy
    t = lazy.tensor(a, device="cuda").sync()
    assert t.device == "cuda" and isinstance(t._buf.array, cupy.ndarray)
    return t


def check(t: lazy.Tensor, want, **tol) -> None:
    want = np.asarray(want)
    assert t.device == "cuda"
    got = t.numpy()
    assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape, \
        (got.dtype, want.dtype, got.shape, want.shape)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, equal_nan=True, **{**TOL[want.dtype.name], **tol})
    else:
        np.testing.assert_array_equal(got, want)


def kernel_backends() -> set[str]:
    return {r.backend for r in lazy.log if r.backend != "copy"}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_philox_streams_match_the_cpu(dtype):
    """rand is the same bits on both devices for one seed; randn the same up to
    the devices' log/sin/cos (a few ulp)."""
    for make in (lazy.rand, lazy.randn):
        lazy.manual_seed(1234)
        gpu = make(100_003, 3, dtype=dtype, device="cuda")
        lazy.manual_seed(1234)
        cpu = make(100_003, 3, dtype=dtype, device="cpu")
        g, c = gpu.numpy(), cpu.numpy()
        assert g.dtype == c.dtype == np.dtype(dtype)
        if make is lazy.rand:
            np.testing.assert_array_equal(g, c)
        else:
            eps = np.finfo(dtype).eps
            np.testing.assert_allclose(g, c, rtol=8 * eps, atol=8 * eps)


def test_elementwise_promotion_and_views():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 200)).astype(np.float32)
    i = rng.integers(-50, 50, (300, 200)).astype(np.int32)
    d = rng.standard_normal(200)
    ta, ti, td = on_gpu(a), on_gpu(i), on_gpu(d)
    check(ta[::-2, 1::3] * 2 + ti[::-2, 1::3], a[::-2, 1::3] * 2 + i[::-2, 1::3])
    check(ta + td, a + d)
    check(ta[:200, :200] + ta[:200, :200].T, a[:200, :200] + a[:200, :200].T)
    check(lazy.where(ta > 0, lazy.sqrt(abs(ta)), lazy.exp(-ta)),
          np.where(a > 0, np.sqrt(np.abs(a)), np.exp(-a)))
    check(ti // 7 + ti % 7, i // 7 + i % 7)
    check(ta.T[5:50].reshape(-1)[::3], a.T[5:50].reshape(-1)[::3])
    assert kernel_backends() == {"cuda"}


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions_and_softmax(axis):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((513, 1031)).astype(np.float32)
    t = on_gpu(a)
    check(t.sum(axis=axis), a.sum(axis=axis, dtype=np.float64).astype(np.float32), rtol=1e-5,
          atol=1e-3)
    check(t.max(axis=axis), a.max(axis=axis))
    check(t.argmax(axis=axis), a.argmax(axis=axis))
    check(t.mean(axis=axis), a.mean(axis=axis, dtype=np.float64).astype(np.float32), rtol=1e-5)
    if axis is not None:
        e = np.exp(a - a.max(axis=axis, keepdims=True))
        check(lazy.softmax(t, axis=axis), e / e.sum(axis=axis, keepdims=True), rtol=1e-5)


def test_matmul_scan_and_sort_run_on_the_device():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((64, 33)), rng.standard_normal((33, 17))
    x = rng.standard_normal((40, 500)).astype(np.float32)
    ta, tb, tx = on_gpu(a), on_gpu(b), on_gpu(x)
    check(lazy.maximum(ta * 2 @ tb + 1, 0), np.maximum(a * 2 @ b + 1, 0))
    check(lazy.cumsum(tx * 1, dim=1), np.cumsum(x, axis=1), rtol=1e-5, atol=1e-4)
    check(lazy.sort(tx, dim=1)[0], np.sort(x, axis=1))
    check(tx.argsort(axis=0), np.argsort(x, axis=0, kind="stable"))
    s = np.sort(x.ravel())
    check(lazy.searchsorted(on_gpu(s), tx[:3]), np.searchsorted(s, x[:3]))
    assert {"cuda", "cublas", "cupy"} <= kernel_backends() <= {"cuda", "cublas", "cupy"}


def test_writes_through_views():
    a = np.arange(60, dtype=np.float64).reshape(6, 10)
    t = on_gpu(a)
    v = t[1::2, ::3]
    v += 100
    a[1::2, ::3] += 100
    t[0] = -1.0
    a[0] = -1.0
    t[t > 150] = 0
    a[a > 150] = 0
    check(t, a)
    check(v, a[1::2, ::3])


def test_float32_sum_of_16m_is_as_accurate_as_float64():
    x = np.random.default_rng(7).random(1 << 24, dtype=np.float32)
    exact = float(np.sum(x, dtype=np.float64))
    assert abs(on_gpu(x).sum().item() - exact) <= 1e-6 * exact


def test_dlpack_shares_device_memory():
    if not OK:  # the stand-in has no cupy.arange; test_cuda_lazy_emulated.py tests export
        pytest.skip(f"no CUDA device ({WHY})")
    import cupy
    a = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)
    t = lazy.from_dlpack(a)
    y = (t * 2)[:, 1:]
    back = cupy.from_dlpack(y.sync())
    np.testing.assert_array_equal(cupy.asnumpy(back), cupy.asnumpy(a * 2)[:, 1:])
    assert cupy.from_dlpack(t).data.ptr == a.data.ptr


def test_a_repeated_step_replays_on_the_device():
    x = on_gpu(np.linspace(-3, 3, 4096, dtype=np.float32).reshape(64, 64))
    for _ in range(3):
        y = lazy.exp(x - x.max(axis=1, keepdims=True))
        lazy.sync(y)
    assert lazy.log.syncs[-1].schedule == "hit"
    assert [r.cache for r in lazy.log][-2:] == ["hit", "hit"]
    xn = x.numpy()
    check(y, np.exp(xn - xn.max(axis=1, keepdims=True)))
