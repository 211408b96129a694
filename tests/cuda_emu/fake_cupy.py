"""A stand-in for the slice of CuPy that CUDABackend uses, backed by NumPy
arrays and the host emulation, so CI (no GPU) runs CUDABackend.compile and
.run end to end: RawModule, argument binding by parameter, partial buffers
and every launch strategy. Install with `install(monkeypatch, libs)`.
"""
from __future__ import annotations

import sys
import types

import numpy as np

from . import emulator

SMS = 2
ndarray = np.ndarray
LIBS: dict = {}  # kernel name -> prebuilt emulation library (else built on demand)
compiled: list[str] = []  # kernel names RawModule was asked to compile


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


class RawModule:
    def __init__(self, code: str, options=(), **kw):
        name, _ = emulator.signature(code)
        compiled.append(name)
        self.options = tuple(options)
        self.lib = LIBS.get(name) or emulator.build([code])

    def get_function(self, name: str):
        lib = self.lib

        def launch(grid, block, args):
            emulator.launch_raw(lib, name, grid[0], block[0], list(args))
        return launch


class _Device:
    def __init__(self, i: int = 0):
        self.id = i
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
    return sys.modules[__name__]
