"""Matrix products: NumPy's matmul shape rules, run as an extern BLAS kernel.

1-D operands are promoted to matrices and the added axis is dropped from
the result; batch axes broadcast with stride-0 views.
"""
from __future__ import annotations

from scheduler.dtypes import result_type

from . import elementwise, runtime
from .tensor import Tensor, asarray_like


def matmul(a: object, b: object) -> Tensor:
    device = a.device if isinstance(a, Tensor) else b.device
    a = a if isinstance(a, Tensor) else asarray_like(a, device)
    b = b if isinstance(b, Tensor) else asarray_like(b, device)
    if a.device != b.device:
        raise ValueError(f"expected all tensors on the same device, but found {a.device} "
                         f"and {b.device}")
    for i, t in enumerate((a, b)):
        if t.ndim == 0:
            raise ValueError(f"matmul: input operand {i} is 0-dimensional (shape {t.shape}); "
                             f"matmul needs at least 1 dimension, use * for scalars")
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(1) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned: "
                         f"{a2.shape[-1]} (last dim of the first) != {b2.shape[-2]} "
                         f"({'only' if b.ndim == 1 else 'second-to-last'} dim of the second)")
    batch = elementwise.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    dtype = result_type(a.dtype, b.dtype)
    a2, b2 = elementwise.cast(a2, dtype), elementwise.cast(b2, dtype)
    n, k, m = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    av = a2._view.expand(batch + (n, k))
    bv = b2._view.expand(batch + (k, m))
    out = runtime.make("matmul", ((a2._buf, av), (b2._buf, bv)), None, dtype,
                       batch + (n, m), device)
    if a.ndim == 1:
        out = out.squeeze(-2)
    if b.ndim == 1:
        out = out.squeeze(-1)
    return out
