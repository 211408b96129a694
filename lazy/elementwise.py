"""Elementwise ops: NumPy broadcasting and promotion, checked when built.

Operands are broadcast with stride-0 views and cast to the op's compute
dtype (casts are nodes too, and fuse away). Python scalars are "weak"
(NEP 50): `float32_tensor * 2.0` stays float32. Scalar exponents 0, 1, 2,
3, 0.5 and -1 become multiplications, sqrt or a division, as in NumPy.
"""
from __future__ import annotations

import numpy as np

from scheduler.dtypes import DType, as_dtype, bool_, result_type
from scheduler.ops import ELEMENTWISE

from . import runtime
from .tensor import Tensor, asarray_like

Scalar = (bool, int, float)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcasting rule; the error names every shape involved."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        sizes = {s[len(s) - ndim + d] for s in shapes if len(s) - ndim + d >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            shown = " ".join(str(tuple(s)) for s in shapes)
            raise ValueError(f"operands could not be broadcast together with shapes {shown}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _is_scalar(x: object) -> bool:
    return isinstance(x, Scalar) and not isinstance(x, np.generic)


def const(value: object, dtype: DType, shape: tuple[int, ...], device: str) -> Tensor:
    """A constant read through a stride-0 view: it fuses as a kernel argument."""
    value = np.asarray(value, dtype=dtype.np).item()  # NumPy's overflow checks
    t = runtime.make("const", (), value, dtype, (), device)
    return t.broadcast_to(shape) if shape else t


def cast(t: Tensor, dtype: DType) -> Tensor:
    if t.dtype == dtype:
        return t
    return runtime.make("cast", ((t._buf, t._view),), dtype, dtype, t.shape, t.device)


def _operands(args: tuple) -> tuple[list, str]:
    tensors = [a for a in args if isinstance(a, Tensor)]
    device = tensors[0].device
    for t in tensors[1:]:
        if t.device != device:
            raise ValueError(f"expected all tensors on the same device, but found {device} "
                             f"and {t.device}")
    out = []
    for a in args:
        if isinstance(a, Tensor) or _is_scalar(a):
            out.append(a)
        else:
            out.append(asarray_like(a, device))
    return out, device


def apply(op: str, *args: object) -> Tensor:
    """Build `op` over tensors and Python scalars (at least one tensor)."""
    prim = ELEMENTWISE[op]
    operands, device = _operands(args)
    dtypes = [a.dtype if isinstance(a, Tensor) else a for a in operands]
    if op == "where":
        cond, operands, dtypes = operands[0], operands[1:], dtypes[1:]
        if isinstance(cond, Tensor) and cond.dtype != bool_:
            cond = cast(cond, bool_)
    compute = prim.compute_dtype(result_type(*dtypes))
    shape = broadcast_shapes(*[a.shape for a in operands if isinstance(a, Tensor)],
                             *([cond.shape] if op == "where" and isinstance(cond, Tensor) else []))
    if op == "where":
        operands = [cond] + operands
    srcs = []
    for i, a in enumerate(operands):
        want = bool_ if op == "where" and i == 0 else compute
        t = const(a, want, (), device) if not isinstance(a, Tensor) else cast(a, want)
        v = t._view.expand(shape) if t.shape != shape else t._view
        srcs.append((t._buf, v))
    return runtime.make(op, tuple(srcs), None, prim.result_dtype(compute), shape, device)


def power(a: object, b: object) -> Tensor:
    """`a ** b`, with NumPy's fast paths for common scalar exponents."""
    if isinstance(a, Tensor) and _is_scalar(b) and not isinstance(b, bool):
        dtype = result_type(a.dtype, b)
        if dtype.is_int and b < 0:
            raise ValueError("Integers to negative integer powers are not allowed.")
        if b == 2:
            x = cast(a, dtype)
            return apply("mul", x, x)
        if b == 3:
            x = cast(a, dtype)
            return apply("mul", apply("mul", x, x), x)
        if b == 1:
            return cast(a, dtype) if a.dtype != dtype else apply("copy", a)
        if b == 0.5 and dtype.is_float:
            return apply("sqrt", cast(a, dtype))
        if b == -1 and dtype.is_float:
            return apply("truediv", 1, cast(a, dtype))
    return apply("pow", a, b)


def clip(t: Tensor, min: object = None, max: object = None) -> Tensor:
    if min is None and max is None:
        raise ValueError("clip: at least one of min and max must be given")
    out = t
    if min is not None:
        out = apply("maximum", out, min)
    if max is not None:
        out = apply("minimum", out, max)
    return out


def astype(t: Tensor, dtype: object) -> Tensor:
    """A new tensor of `dtype` (always a new buffer, as NumPy's astype)."""
    dtype = as_dtype(dtype)
    return cast(t, dtype) if t.dtype != dtype else apply("copy", t)
