"""Backend choice: which backend runs each kernel, and the reason logged.

CPU kernels go to the LLVM JIT when it is available and supports the
kernel; otherwise to the NumPy interpreter, logged as a fallback (an error
under LAZY_FALLBACK=error). Matrix products are extern kernels that call
the BLAS NumPy links against.
"""
from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import numpy as np

from . import interpret
from .backend import Backend, CompileInfo
from .config import config
from .dtypes import DType
from .kernel_ir import Kernel, Launch


class FallbackError(RuntimeError):
    """A kernel would fall back to NumPy while LAZY_FALLBACK=error."""


class NumpyBackend:
    """Runs kernel IR through the reference interpreter (no compilation)."""
    name = "numpy"
    device = "cpu"

    def available(self) -> tuple[bool, str]:
        return True, "always"

    def supports(self, kernel: Kernel) -> tuple[bool, str]:
        return True, "reference interpreter"

    def compile(self, kernel: Kernel) -> tuple[Any, CompileInfo]:
        return None, CompileInfo("-", 0.0)

    def source(self, kernel: Kernel) -> str:
        return repr(kernel)

    def run(self, compiled: Any, kernel: Kernel, launch: Launch,
            inputs: list, outputs: list) -> None:
        interpret.run(kernel, launch, inputs, outputs)

    def allocate(self, size: int, dtype: DType) -> np.ndarray:
        return np.empty(size, dtype.np)

    def cost(self, kernel: Kernel, launch: Launch) -> float:
        return float(np.prod(launch.shape)) * 20.0



@lru_cache(maxsize=None)
def _llvm() -> tuple[Backend | None, str]:
    """The LLVM backend, built once; (None, why) when it cannot load."""
    try:
        from cpu_backend import CPUBackend
        backend = CPUBackend()
    except Exception as e:  # a broken llvmlite install must not break lazyrt
        return None, f"llvm unavailable: {type(e).__name__}: {e}"
    ok, why = backend.available()
    return (backend, why) if ok else (None, f"llvm unavailable: {why}")


NUMPY = NumpyBackend()


def blas_name() -> str:
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{info.get('name', 'blas')} {info.get('version', '')}".strip()
    except Exception:
        return "blas"


def choose(kernel: Kernel, device: str) -> tuple[Backend, str]:
    """Backend for one kernel on `device`, with the reason to log."""
    llvm, why = _llvm()
    if llvm is not None:
        ok, not_ok = llvm.supports(kernel)
        if ok:
            return llvm, f"{device} tensors: LLVM JIT ({why})"
        why = f"llvm does not support this kernel: {not_ok}"
    if config.fallback == "error":
        raise FallbackError(f"kernel would fall back to NumPy ({why}) and LAZY_FALLBACK=error")
    return NUMPY, f"fallback: {why}"


def run_extern(op: str, inputs: list[np.ndarray], out: np.ndarray) -> float:
    """Run an extern kernel; returns milliseconds."""
    t = time.perf_counter()
    if op == "matmul":
        np.matmul(inputs[0], inputs[1], out=out)
    else:
        raise NotImplementedError(op)
    return (time.perf_counter() - t) * 1e3
