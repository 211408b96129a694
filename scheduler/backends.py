"""Backend choice: which backend runs each kernel, and the reason logged.

CPU kernels go to the LLVM JIT when it is available and supports the
kernel; otherwise to the NumPy interpreter, logged as a fallback (an error
under LAZY_FALLBACK=error). CUDA kernels go to the CUDA backend (CuPy
RawKernel). Matrix products are extern kernels: the BLAS NumPy links
against on CPU, cuBLAS on CUDA; so are the scans (cumsum, cumprod): the
CPU backend's own loop (NumPy's without LLVM), CuPy's on CUDA; and so are
sort, argsort and searchsorted: NumPy's, rows over threads (sorting.py),
CuPy's on CUDA. Backends
load lazily, at first use, and a backend that cannot load is a reason in
the log, never an import error.
"""
from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import numpy as np

from . import interpret, sorting
from .backend import Backend, CompileInfo
from .config import config
from .dtypes import DType
from .kernel_ir import Kernel, Launch
from .ops import SCANS, SORTS


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


@lru_cache(maxsize=None)
def cuda_backend() -> Any:
    """The CUDA backend object (its `source()` works with no GPU), or None."""
    try:
        from cuda_backend import CUDABackend
        return CUDABackend()
    except Exception:  # noqa: BLE001 - reported by device_status
        return None


@lru_cache(maxsize=None)
def _cuda_status() -> tuple[bool, str]:
    backend = cuda_backend()
    if backend is None:
        return False, "cuda unavailable: the cuda_backend package failed to import"
    return backend.available()


def device_status(device: str) -> tuple[bool, str]:
    """(usable, what was found or why not) for "cpu" or "cuda"."""
    if device == "cpu":
        llvm, why = _llvm()
        return True, why if llvm is not None else f"NumPy fallback ({why})"
    return _cuda_status()


def default_device() -> tuple[str, str]:
    """The device tensors get when none is named, and why (LAZY_DEVICE, else CUDA if usable)."""
    import os
    env = os.environ.get("LAZY_DEVICE", "").strip()
    if env:
        return env, "LAZY_DEVICE"
    ok, why = _cuda_status()
    return ("cuda", why) if ok else ("cpu", why)


def blas_name() -> str:
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{info.get('name', 'blas')} {info.get('version', '')}".strip()
    except Exception:
        return "blas"


def choose(kernel: Kernel, device: str, launch: Launch | None = None) -> tuple[Backend, str]:
    """Backend for one kernel on `device`, with the reason to log.

    With a `launch` and LAZY_SMALL_WORK=1, a CPU kernel not compiled yet may
    run through the NumPy interpreter while that is cheaper (small_work.py).
    """
    if device == "cuda":
        ok, why = _cuda_status()
        backend = cuda_backend()
        if not ok:
            raise RuntimeError(why)
        ok, not_ok = backend.supports(kernel)
        if not ok:
            raise RuntimeError(f"the CUDA backend cannot run this kernel: {not_ok}")
        return backend, f"cuda tensors: CUDA C via NVRTC ({why})"
    llvm, why = _llvm()
    if llvm is not None:
        ok, note = llvm.supports(kernel)
        if ok and launch is not None and config.small_work and llvm.jit.lookup(kernel) is None:
            from .small_work import small_work
            reason = small_work.interpret(kernel, launch)
            if reason is not None:
                return NUMPY, reason
        if ok:
            extra = note.split("; ", 1)[1] if "; " in note else ""  # e.g. "run on one thread"
            return llvm, f"{device} tensors: LLVM JIT ({why})" + (f"; {extra}" if extra else "")
        why = f"llvm does not support this kernel: {note}"
    if config.fallback == "error":
        raise FallbackError(f"kernel would fall back to NumPy ({why}) and LAZY_FALLBACK=error")
    return NUMPY, f"fallback: {why}"


def extern_backend(op: str) -> tuple[str, str]:
    """(backend, reason) that the log gives an extern kernel on the CPU."""
    if op == "matmul":
        return "blas", f"extern matmul: NumPy's BLAS ({blas_name()})"
    llvm, why = _llvm()
    if op == "searchsorted" and llvm is not None:
        return "llvm", (f"extern searchsorted: an LLVM binary search, keys in lockstep over "
                        f"{llvm.num_threads} threads (the kernel IR has no search)")
    if op == "bincount":
        if llvm is None:
            return "numpy", f"extern bincount: NumPy's bincount ({why})"
        return "llvm", (f"extern bincount: an LLVM counting loop, a histogram per thread "
                        f"(of {llvm.num_threads}), summed (the kernel IR has no scatter-add)")
    if op in SORTS:
        what = "its keys" if op == "searchsorted" else "whole rows"
        if op == "sort" and llvm is not None:
            what += " (one row: buckets by value, split by an LLVM loop)"
        n = _sort_threads()
        return "numpy", (f"extern {op}: NumPy's {op}, {what} over {n} thread{'s' * (n > 1)} "
                         f"from {sorting.MIN_SPLIT} elements (the kernel IR has no sort)")
    if llvm is None:
        return "numpy", f"extern {op}: NumPy's {op} ({why})"
    return "llvm", f"extern {op}: an LLVM loop, in NumPy's order (the kernel IR has no scan)"


def _sort_threads() -> int:
    """The sorts' threads: the CPU backend's count (1 where it cannot load)."""
    llvm, _ = _llvm()
    return 1 if llvm is None else llvm.num_threads


def run_extern(op: str, inputs: list[np.ndarray], out: np.ndarray, arg: Any = None
               ) -> tuple[float, CompileInfo]:
    """Run an extern kernel on host arrays (`arg`: the node's, as ops.py says);
    returns (run milliseconds, what was compiled for it). The CPU backend is
    looked up before the clock starts: its start-up, once per process, is
    not this step's run."""
    llvm, _ = _llvm()
    t = time.perf_counter()
    if op == "matmul":
        np.matmul(inputs[0], inputs[1], out=out)
    elif op in SCANS:
        if llvm is not None:
            return llvm.scan(op, inputs[0], arg, out)
        SCANS[op](inputs[0], axis=arg, out=out)
    elif op == "searchsorted" and llvm is not None:
        return llvm.searchsorted(inputs[0], inputs[1], arg, out)
    elif op in SORTS:
        return _run_sort(llvm, op, inputs, out, arg, t)
    elif op == "bincount":
        weights = inputs[1] if len(inputs) > 1 else None
        if llvm is not None:
            return llvm.bincount(inputs[0], weights, out)
        out[...] = np.bincount(inputs[0], weights, minlength=arg)
    else:
        raise NotImplementedError(op)
    return (time.perf_counter() - t) * 1e3, CompileInfo("-", 0.0)


def _run_sort(llvm: Backend | None, op: str, inputs: list[np.ndarray], out: np.ndarray,
              arg: Any, t: float) -> tuple[float, CompileInfo]:
    """A sort on host arrays (sorting.py) begun at `t`; a long row's split by
    value is the CPU backend's LLVM function, whose compile, when there is
    one, is the step's (not part of its run time)."""
    compiled: list[CompileInfo] = []

    def partition(x: np.ndarray, splitters: np.ndarray, into: np.ndarray) -> list[int]:
        bounds, info = llvm.partition(x, splitters, into)
        compiled.append(info)
        return bounds
    sorting.run(op, inputs, out, arg, _sort_threads(), None if llvm is None else partition)
    info = compiled[0] if compiled else CompileInfo("-", 0.0)
    return (time.perf_counter() - t) * 1e3 - info.ms, info


def transfer(array: Any, view: Any, src: str, dst: str) -> Any:
    """Copy the elements `view` selects from `src` to `dst`, as a flat contiguous array."""
    from .graph import host_view
    if src == "cpu" and dst == "cuda":
        from cuda_backend import to_device
        return to_device(np.ascontiguousarray(host_view(array, view))).reshape(-1)
    if src == "cuda" and dst == "cpu":
        from cuda_backend import device_view, to_host
        return np.ascontiguousarray(to_host(device_view(array, view))).reshape(-1)
    raise ValueError(f"no transfer from {src} to {dst}")
