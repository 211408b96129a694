"""Extern kernels on CUDA: matrix products go to cuBLAS through CuPy, and
the scans (cumsum, cumprod), sorts (sort, argsort, searchsorted) and
bincount to CuPy's. CuPy's sorts are always stable, whatever NumPy kind was asked for
(docs/numpy.md, "Sorting").

The scheduler logs these with backend `cublas` or `cupy` and the reason
`extern_backend` gives. `device_view` is the CUDA twin of
`scheduler.graph.host_view`: a strided CuPy view over a flat device
buffer, so operands reach cuBLAS without a copy when their strides allow
it (CuPy copies otherwise).
"""
from __future__ import annotations

import time
from typing import Any, Callable

from scheduler.ops import SCANS, SORTS
from scheduler.view import View


def device_view(flat: Any, view: View) -> Any:
    """CuPy array with `view`'s shape, strides and offset over 1-D `flat`."""
    from cupy.lib.stride_tricks import as_strided
    item = flat.dtype.itemsize
    if view.size == 0:
        return flat[:0].reshape(view.shape)
    return as_strided(flat[view.offset:], shape=view.shape,
                      strides=tuple(s * item for s in view.strides))


def _synchronized_ms(call: Callable[[], object]) -> float:
    """Milliseconds of `call()` until the GPU has finished it."""
    import cupy
    t = time.perf_counter()
    call()
    cupy.cuda.get_current_stream().synchronize()
    return (time.perf_counter() - t) * 1e3


def matmul(a: Any, b: Any, out: Any) -> float:
    """out[...] = a @ b with cuBLAS (cupy.matmul); returns milliseconds, synchronized."""
    import cupy
    return _synchronized_ms(lambda: cupy.matmul(a, b, out=out))


def run_extern(op: str, inputs: list, out: Any, arg: Any = None) -> float:
    """CUDA counterpart of `scheduler.backends.run_extern` (`arg`: the node's)."""
    if op == "matmul":
        return matmul(inputs[0], inputs[1], out)
    if op in SCANS:
        import cupy
        return _synchronized_ms(lambda: getattr(cupy, op)(inputs[0], axis=arg, out=out))
    if op in SORTS:
        def into_out() -> None:
            out[...] = _sort(op, inputs, arg)
        return _synchronized_ms(into_out)
    if op == "bincount":
        def counted() -> None:
            out[...] = _bincount(inputs, arg)
        return _synchronized_ms(counted)
    raise NotImplementedError(f"no CUDA extern kernel for {op!r}")


def _sort(op: str, inputs: list, arg: Any) -> Any:
    """CuPy's sort, argsort or searchsorted (which take no `out`)."""
    import cupy
    if op == "searchsorted":
        return cupy.searchsorted(inputs[0], inputs[1], side=arg)
    return getattr(cupy, op)(inputs[0], axis=arg[0])  # stable: CuPy's only kind


def _bincount(inputs: list, bins: int) -> Any:
    """CuPy's bincount of inputs[0] (weighted by inputs[1], if any) into `bins`."""
    import cupy
    return cupy.bincount(inputs[0], inputs[1] if len(inputs) > 1 else None, minlength=bins)


def extern_backend(op: str) -> tuple[str, str]:
    """(backend, reason) that the log gives an extern kernel on CUDA."""
    if op == "matmul":
        return "cublas", cublas_reason()
    if op in SORTS:
        return "cupy", f"extern {op}: CuPy's {op}, a stable sort (the kernel IR has no sort)"
    if op == "bincount":
        return "cupy", "extern bincount: CuPy's bincount (the kernel IR has no scatter-add)"
    return "cupy", f"extern {op}: CuPy's {op} (the kernel IR has no scan)"


def cublas_reason() -> str:
    try:
        import cupy
        v = cupy.cuda.runtime.runtimeGetVersion()
        return f"extern matmul: cuBLAS via CuPy {cupy.__version__} (CUDA {v // 1000}.{v % 1000 // 10})"
    except Exception:  # noqa: BLE001 - only the log text
        return "extern matmul: cuBLAS via CuPy"
