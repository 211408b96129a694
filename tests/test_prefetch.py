"""Prefetching across 4 KB pages (loops.prefetch_ahead): float32 sums ask
for a line PAGE_PREFETCH bytes ahead of each full block of a unit-stride
row. Which kernels carry it is read from the generated IR. That a
prefetch past the end of the data, into memory that cannot be read,
changes nothing is checked against NumPy with the data ending right at an
inaccessible guard region."""

from __future__ import annotations

import ctypes
import mmap
import sys

import numpy as np
import pytest

import lazy
from cpu_backend import CPUBackend
from cpu_backend import loops
from cpu_backend.codegen import generate
from scheduler.dtypes import float32, float64

from cpu_backend_helpers import reduce_kernel, run_reduce

PREFETCH = "call void @\"llvm.prefetch"


def _ir(k) -> str:
    return str(generate(k, "x86_64-unknown-linux-gnu", ""))


def test_float32_sums_over_unit_stride_rows_prefetch():
    assert PREFETCH in _ir(reduce_kernel("sum", float32))
    assert PREFETCH in _ir(reduce_kernel("sum", float32, n_reduce=2, ndim=2))


def test_no_prefetch_elsewhere():
    # a runtime inner stride (its copies: stride 2 and generic) never reads a unit-stride row
    assert PREFETCH not in _ir(reduce_kernel("sum", float32, inner=None))
    # float64 sums measured no faster with it, maxima are not blocked, logsumexp measured slower
    for op, d in (("sum", float64), ("max", float32), ("logsumexp", float32)):
        assert PREFETCH not in _ir(reduce_kernel(op, d)), (op, d)


def test_page_prefetch_zero_turns_it_off(monkeypatch):
    monkeypatch.setattr(loops, "PAGE_PREFETCH", 0)
    assert PREFETCH not in _ir(reduce_kernel("sum", float32))


@pytest.fixture
def guarded():
    """`take(n)`: a float32 array of n elements whose last byte is followed by
    more than PAGE_PREFETCH bytes that cannot be read (PROT_NONE)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("mprotect through ctypes is set up for Linux here")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    maps = []

    def take(n: int) -> np.ndarray:
        page = mmap.PAGESIZE
        data = -(-n * 4 // page) * page
        guard = loops.PAGE_PREFETCH + 4 * page
        m = mmap.mmap(-1, data + guard, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        maps.append(m)
        base = ctypes.addressof(ctypes.c_char.from_buffer(m))
        assert libc.mprotect(base + data, guard, 0) == 0, ctypes.get_errno()
        return np.frombuffer(m, np.float32, n, data - n * 4)

    yield take
    for m in maps:
        try:
            m.close()
        except BufferError:  # an array still views it: left to the garbage collector
            pass


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(3, 4096), (2, 5000), (1, 1 << 16), (40, 1024)])
def test_sums_next_to_unreadable_memory(guarded, threads, shape):
    a = guarded(shape[0] * shape[1]).reshape(shape)
    a[...] = np.random.default_rng(shape[1]).standard_normal(shape, dtype=np.float32)
    ours, ref = run_reduce(reduce_kernel("sum", float32), shape, a.reshape(-1),
                           CPUBackend(num_threads=threads))
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(ours[0], a.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-3)


def test_lazy_sum_and_softmax_next_to_unreadable_memory(guarded):
    a = guarded(64 * 4096).reshape(64, 4096)
    a[...] = np.random.default_rng(0).standard_normal(a.shape, dtype=np.float32)
    t = lazy.asarray(a)
    np.testing.assert_allclose(t.sum(axis=1).numpy(), a.astype(np.float64).sum(axis=1),
                               rtol=1e-5, atol=1e-3)
    assert float(t.sum()) == pytest.approx(float(a.astype(np.float64).sum()), abs=1e-2)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(lazy.softmax(t, axis=1).numpy(), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-5, atol=1e-7)
