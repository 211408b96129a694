"""Running sums and products (`cumsum`, `cumprod`) as deferred extern kernels.

A scan was a NumPy fallback, which syncs its input at the call and so cuts
the graph in two. Here it is a node like any other: nothing runs until a
sync, what it reads is computed by the kernels before it, and what reads
it fuses after it. There is no scan in the kernel IR yet, so the scan
itself runs as an extern kernel (as matmul runs on BLAS): an LLVM loop
of the CPU backend (cpu_backend/scan.py), CuPy's on a GPU, logged as such
(docs/numpy.md, "Scans").
"""
from __future__ import annotations

from scheduler.dtypes import as_dtype, sum_result
from scheduler.view import normalize_dim

from . import elementwise, runtime
from .creation import full
from .tensor import Tensor


def scan(t: Tensor, op: str, axis: int | None = None, dtype: object = None, *,
         dim: int | None = None, include_initial: bool = False) -> Tensor:
    """NumPy's `cumsum`/`cumprod` (axis None flattens, in C order) and
    PyTorch's (`dim`). The result dtype is NumPy's sum dtype (bool and ints
    give int64), or `dtype`, which the input is cast to first, so that is
    what the scan accumulates in. `include_initial` (the array API's
    `cumulative_sum`) puts the identity first along the axis."""
    if axis is not None and dim is not None:
        raise TypeError(f"{op}: pass either axis or dim, not both")
    axis = dim if axis is None else axis
    want = sum_result(t.dtype) if dtype is None else as_dtype(dtype)
    if axis is None:
        t = t.reshape(-1)
        axis = 0
    else:
        axis = normalize_dim(axis, t.ndim, "axis")
        if t.ndim == 0:  # NumPy: a 0-d input scans as one element
            t = t.reshape(1)
    if t.dtype != want:
        t = elementwise.astype(t, want)
    out = runtime.make(op, ((t._buf, t._view),), axis, want, t.shape, t.device)
    if not include_initial:
        return out
    return _with_initial(out, op, axis)


def _with_initial(out: Tensor, op: str, axis: int) -> Tensor:
    """`out` with the identity (0 or 1) prepended along `axis`, as one lazy write."""
    shape = list(out.shape)
    shape[axis] += 1
    res = full(tuple(shape), 0 if op == "cumsum" else 1, dtype=out.dtype, device=out.device)
    index = tuple(slice(1, None) if d == axis else slice(None) for d in range(out.ndim))
    res[index] = out
    return res
