"""A stand-in for the slice of CuPy that CUDABackend uses, backed by NumPy
arrays and the host emulation, so CI (no GPU) runs CUDABackend.compile and
.run end to end: NVRTC to a cubin for sm_80 and the disk cache (real),
argument binding by parameter, partial buffers and every launch strategy
(emulated). Install with `install(monkeypatch, libs)`.
"""
from __future__ import annotations

import sys
import types

import numpy as np

from . import emulator

SMS = 2
ndarray = np.ndarray
LIBS: dict = {}  # kernel name -> emulation library holding it
compiled: list[str] = []  # kernel names loaded


def empty(n, dtype=np.float64):
    return np.empty(n, dtype)


def full(n, value, dtype=None):
    return np.full(n, value, dtype)


def zeros(n, dtype=np.float64):
    return np.zeros(n, dtype)


def asarray(x, dtype=None):
    return np.asarray(x, dtype)


def ascontiguousarray(x):
    return np.ascontiguousarray(x)


def load_function(image: bytes, name: str):
    """Stands in for backend.load_function: the NVRTC image is real (compiled in
    CI), the launch runs the same kernel's source under the emulation."""
    assert image, "empty image"
    compiled.append(name)
    lib = LIBS[name]

    def launch(grid, block, args):
        emulator.launch_raw(lib, name, grid[0], block[0], list(args))
    return None, launch


class _Device:
    def __init__(self, i: int = 0):
        self.id = i
        self.compute_capability = "80"
        self.attributes = {"MultiProcessorCount": SMS}


cuda = types.SimpleNamespace(
    Device=_Device,
    get_current_stream=lambda: types.SimpleNamespace(synchronize=lambda: None))
__version__ = "fake"


def install(monkeypatch, libs: dict | None = None) -> types.ModuleType:
    from cuda_backend import backend
    LIBS.clear()
    LIBS.update(libs or {})
    compiled.clear()
    monkeypatch.setitem(sys.modules, "cupy", sys.modules[__name__])
    backend._sm_count.cache_clear()
    monkeypatch.setattr(backend, "_sm_count", lambda i: SMS)
    monkeypatch.setattr(backend, "load_function", load_function)
    return sys.modules[__name__]
