"""The emulated CUDA device that the `test_cuda_lazy_emulated*` modules run on.

Everything runs for real except the GPU: `lazy` builds the graph, the
scheduler fuses and plans it and picks the CUDA backend, CUDABackend
generates CUDA C and compiles it with NVRTC to an sm_80 cubin (disk cache
included), binds the arguments and plans the launch; transfers go through
`cuda_backend.to_device`/`to_host`/`device_view` (DLPack export too), matmul
(and cumsum, cumprod) through `cuda_backend.run_extern`. Only CuPy is
replaced, by `tests/cuda_emu/fake_cupy.py`:
device arrays hold NumPy memory but refuse implicit conversion to NumPy (as
CuPy's do), and each kernel launch runs the generated CUDA C under the host
emulation of the CUDA thread model (`tests/cuda_emu/cuda_emu.h`).

Emulation libraries are cached by source hash; one CUDABackend (`BE`)
serves every test, so kernels repeat as in-memory cache hits. The tests
compare with NumPy and read `lazy.log` (the helpers below) to check which
backend ran each kernel ("cuda", "cublas", "cupy", "copy").
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterator

import numpy as np
import pytest

import lazy
from lazy import runtime
from cuda_backend import CUDABackend
from cuda_backend import backend as cuda_backend_module
from cuda_backend import nvrtc
from cuda_emu import fake_cupy
from scheduler import backends
from scheduler.log import log as _log

BE = CUDABackend()  # one backend for every test: its in-memory kernel cache spans them
GPU = "Emulated GPU (sm_80, 2 SMs), CuPy fake"  # what probe() reports for the fake device
TOL = {"float32": dict(rtol=2e-6, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}


def emulated_cuda(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The `cuda` fixture's body (conftest.py): device "cuda" is usable for one
    test. CuPy is the fake, the probe runs against it, and scheduler.backends
    hands out BE; all restored after. Yields the fake CuPy module."""
    lazy.sync()  # nothing pending from earlier tests runs under the fake
    nvrtc.version()  # load CuPy's real NVRTC binding (it imports parts of cupy) before the fake
    notes = list(_log.notes)
    cp = fake_cupy.install_device(monkeypatch)
    # probe, cuda_backend and _cuda_status are lru_cached: patch fresh copies in, so the
    # cached answers of the real (GPU-less) machine are untouched and come back afterwards
    monkeypatch.setattr(cuda_backend_module, "probe",
                        lru_cache(maxsize=1)(cuda_backend_module.probe.__wrapped__))
    monkeypatch.setattr(backends, "cuda_backend", lambda: BE)
    monkeypatch.setattr(backends, "_cuda_status", lru_cache(maxsize=1)(lambda: BE.available()))
    monkeypatch.setenv("LAZY_FALLBACK", "error")
    monkeypatch.delenv("LAZY_DEVICE", raising=False)
    lazy.log.clear()
    yield cp
    try:
        lazy.sync()  # whatever a test left pending runs now, while CUDA is still "there"
    finally:
        # A failed test's traceback keeps its tensors alive; pending ones it could not
        # compute must not make every later `lazy.sync()` (CUDA gone) fail: untrack them.
        for key, ref in list(runtime._live.items()):
            st = ref()
            if st is not None and st.buf.pending:
                runtime._live.pop(key, None)
        _log.notes[:] = notes  # the default-device note must not reach other tests
        lazy.log.clear()


def on_cuda(a: np.ndarray) -> lazy.Tensor:
    """A cuda tensor holding a copy of `a` (a logged transfer), realized now."""
    t = lazy.tensor(a, device="cuda").sync()
    assert t.device == "cuda" and isinstance(t._buf.array, fake_cupy.DeviceArray)
    return t


def records(backend: str | None = None) -> list:
    return [r for r in lazy.log if backend is None or r.backend == backend]


def backends_of() -> list[str]:
    return [r.backend for r in lazy.log]


def host(t: lazy.Tensor) -> np.ndarray:
    """t.numpy(), checked to be a host copy (a plain ndarray, never device memory)."""
    got = t.numpy()
    assert type(got) is np.ndarray
    return got


def check(t: lazy.Tensor, want, rtol=None, atol=None) -> np.ndarray:
    """Values, shape and dtype of cuda tensor `t` against NumPy's `want`."""
    want = np.asarray(want)
    assert t.device == "cuda"
    assert t.dtype.name == want.dtype.name, (t.dtype.name, want.dtype.name)
    assert t.shape == want.shape, (t.shape, want.shape)
    got = host(t)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        tol = dict(TOL[want.dtype.name])
        tol.update({k: v for k, v in (("rtol", rtol), ("atol", atol)) if v is not None})
        np.testing.assert_allclose(got, want, equal_nan=True, **tol)
    else:
        np.testing.assert_array_equal(got, want)
    return got


def check_all(pairs, f32_rtol=None, f32_atol=None) -> None:
    """One sync for every tensor (their kernels build for the emulation together), then
    `check` each against its NumPy result (the tolerances given are for float32 ones)."""
    lazy.sync(*[t for t, _ in pairs])
    for t, want in pairs:
        f32 = t.dtype.name == "float32"
        check(t, want, rtol=f32_rtol if f32 else None, atol=f32_atol if f32 else None)


def assert_ran_on_cuda(n: int | None = None) -> None:
    """Every compute kernel in the log ran on device cuda with backend cuda (n of them)."""
    ks = [r for r in lazy.log if r.backend not in ("copy", "cublas", "cupy")]
    assert all(r.device == "cuda" and r.backend == "cuda" for r in ks), lazy.log.table()
    for r in ks:
        assert r.reason.startswith("cuda tensors: CUDA C via NVRTC (" + GPU), r.reason
        assert r.cache == "hit" or r.cache.startswith(("miss", "disk")), r.cache
    if n is not None:
        assert len(ks) == n, lazy.log.table()


def copies() -> list[tuple[str, int]]:
    """(direction, nbytes) of each logged transfer."""
    out = []
    for r in records("copy"):
        m = re.fullmatch(r"transfer (cpu|cuda) -> (cpu|cuda)", r.reason)
        assert m, r.reason
        out.append((f"{m[1]}->{m[2]}", r.nbytes))
    return out


def write_reasons() -> list[str]:
    return [r.reason for r in records("cuda") if r.kernel.startswith("s")]
