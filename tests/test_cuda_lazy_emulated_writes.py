"""The whole lazy pipeline on device "cuda", without a GPU: writes (basic
and advanced setitem, in-place or copy), indexed reads and device mixing.

Only CuPy is faked (tests/cuda_lazy_helpers.py says how). The rest of the
pipeline: test_cuda_lazy_emulated.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import lazy
from conftest import sample
from cuda_emu import fake_cupy
from cuda_lazy_helpers import BE, assert_ran_on_cuda, check, on_cuda, write_reasons
from scheduler.realize import plan


# -- writes ----------------------------------------------------------------------------------
def test_setitem_basic_on_cuda(cuda):
    rng = np.random.default_rng(8)
    a = sample((4, 6), "float64", rng)
    x = on_cuda(a)
    lazy.log.clear()
    x[1:3, ::2] = 5.0
    a[1:3, ::2] = 5.0
    x[0] = lazy.arange(6, device="cuda")
    a[0] = np.arange(6)
    x[::-1, -1] = x[:, 0]  # reads the old version
    a[::-1, -1] = a[:, 0].copy()
    x[2:, 1:3] = on_cuda(np.array([[9.0], [8.0]]))  # broadcast value from the device
    a[2:, 1:3] = np.array([[9.0], [8.0]])
    check(x, a)
    assert_ran_on_cuda()
    assert write_reasons() and all("; write " in r for r in write_reasons())


def test_inplace_vs_copy_decision_is_logged(cuda):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = on_cuda(a)
    memory = x._buf.array
    lazy.log.clear()
    x += 1
    x[:, ::2] *= 3
    x.sync()
    assert x._buf.array is memory  # the device memory was reused
    a += 1
    a[:, ::2] *= 3
    assert write_reasons() and all(r.endswith("; write in place") for r in write_reasons())
    check(x, a)
    # the old version is still read by a pending op: copied first
    lazy.log.clear()
    y = x * 2
    x[0] = 100
    x.sync()
    assert write_reasons()[-1].endswith(
        "; write copy: the old version is still read by 1 pending op(s)"), write_reasons()
    check(y, a * 2)
    a[0] = 100
    check(x, a)
    # a shift reads elements it overwrites: copied first, as NumPy's semantics need
    lazy.log.clear()
    x[1:] = x[:-1]
    x.sync()
    a[1:] = a[:-1].copy()
    assert write_reasons()[-1].endswith("; write copy: the kernel reads elements it overwrites")
    check(x, a)
    assert x._buf.array is memory  # the old values were copied aside: x keeps its memory


def test_setitem_advanced_on_cuda(cuda):
    """Integer-array and boolean-mask writes into a cuda tensor (NumPy's semantics)."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = on_cuda(a)
    lazy.log.clear()
    x[[0, 2]] = 7.0
    a[[0, 2]] = 7.0
    x[x > 7.5] = 0.0
    a[a > 7.5] = 0.0
    x[[1, 1, 2], [0, 3, 1]] = on_cuda(np.array([1.0, 2.0, 3.0], np.float32))
    a[[1, 1, 2], [0, 3, 1]] = np.array([1.0, 2.0, 3.0], np.float32)
    check(x, a)
    assert_ran_on_cuda()
    assert write_reasons()


@pytest.mark.parametrize("computed", [False, True])
def test_advanced_indexing_read_on_cuda(cuda, computed, monkeypatch):
    """Integer-array and boolean-mask reads of a cuda tensor: gathers on the
    device, with positions from the host or computed in the kernel."""
    if computed:
        monkeypatch.setattr(lazy.indexing, "COMPUTED_POSITIONS", 0)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = on_cuda(a)
    lazy.log.clear()
    check(x[[2, 0]], a[[2, 0]])
    check(x[x < 5], a[a < 5])
    check(x[:, [3, 1]] * 2, a[:, [3, 1]] * 2)
    check(x.T[1:, ::-1][a.T[1:, ::-1] > 4], a.T[1:, ::-1][a.T[1:, ::-1] > 4])
    assert_ran_on_cuda()


def test_cuda_backend_runs_or_refuses_index_kernels(cuda):
    """The scatter-at-positions and gather kernels advanced indexing makes: CUDABackend
    either says it cannot run them (supports) or runs them right; never wrong values."""
    base = np.zeros(6, np.float32)
    x = lazy.asarray(base.copy(), device="cpu")
    x[[4, 1]] = lazy.asarray(np.array([1.0, 2.0], np.float32), device="cpu")
    g = lazy.asarray(np.arange(6, dtype=np.float32), device="cpu")[[2, 0, 5]]
    base[[4, 1]] = [1.0, 2.0]
    for t, want in ((x, base), (g, np.array([2.0, 0.0, 5.0], np.float32))):
        [step] = plan([t._buf]).steps
        ok, why = BE.supports(step.kernel)
        if not ok:
            continue  # refused with a reason: the scheduler reports it, nothing runs
        ins = [None if b is None else cuda.asarray(b.array) for b in step.inputs]
        outs = [cuda.zeros(b.size, b.dtype.np) for b in step.outputs]
        if step.base is not None:  # a write: the kernel stores into the old version
            outs = [cuda.asarray(step.base.array).copy()]
        compiled, _ = BE.compile(step.kernel)
        BE.run(compiled, step.kernel, step.launch, ins, outs)
        np.testing.assert_array_equal(outs[0].get(), want, err_msg=f"{step.name} ({why})")
    lazy.sync()


def test_a_too_big_device_array_fails_alone_with_numpys_words(cuda):
    """2**63 bytes on the device: the kernel fails with NumPy's "array is too big"
    (CuPy's allocator would say "can't convert negative value to size_t"), and the
    tensors synced beside it are computed."""
    good = lazy.arange(4, device="cuda") * 2
    bad = lazy.ones(2**61, dtype=lazy.float64, device="cuda") + 1
    with pytest.raises(lazy.KernelError, match="array is too big: 2305843009213693952 elements"):
        lazy.sync(good, bad)
    assert bad._buf.pending and not good._buf.pending
    check(good, np.arange(4) * 2)
    del bad


# -- devices mixed in one op -----------------------------------------------------------------
def test_mixing_devices_raises_at_build_time(cuda):
    g = lazy.ones(3, device="cuda")
    c = lazy.ones(3, device="cpu")
    cases = [lambda: g + c, lambda: c * g, lambda: lazy.where(g > 0, g, c),
             lambda: lazy.maximum(c, g), lambda: g @ c, lambda: c @ g,
             lambda: g.__setitem__(slice(None), c), lambda: c.__setitem__(0, g[0]),
             lambda: g.add_(c), lambda: g + np.ones(3, np.float32)]
    for make in cases:
        with pytest.raises(ValueError) as e:
            make()
        msg = str(e.value)
        assert "cpu" in msg and "cuda" in msg and "device" in msg, msg
    assert len(lazy.log) == 0  # nothing ran: the checks are at build time
    check(g + g, np.full(3, 2, np.float32))  # and nothing pending was lost
    np.testing.assert_array_equal(c.numpy(), np.ones(3, np.float32))


def test_equal_graphs_on_two_devices_synced_together_stay_apart(cuda):
    """Duplicate merging keys on the device: equal constants and ops on the
    CPU and the GPU in one sync are two computations (the cuda result used
    to be the CPU's host array, and the other way round)."""
    a = lazy.zeros(3, device="cpu") + 1
    b = lazy.zeros(3, device="cuda") + 1
    i_cpu = lazy.arange(4, device="cpu") != lazy.arange(4, device="cpu")
    i_gpu = lazy.arange(4, device="cuda") != lazy.arange(4, device="cuda")
    lazy.sync(a, b, i_cpu, i_gpu)
    assert isinstance(b._buf.array, fake_cupy.DeviceArray)
    assert isinstance(i_gpu._buf.array, fake_cupy.DeviceArray)
    assert type(a._buf.array) is np.ndarray and type(i_cpu._buf.array) is np.ndarray
    check(b, np.ones(3, np.float32))
    check(i_gpu, np.zeros(4, bool))
    np.testing.assert_array_equal(a.numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(i_cpu.numpy(), np.zeros(4, bool))
