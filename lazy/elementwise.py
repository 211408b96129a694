"""Elementwise ops: NumPy broadcasting and promotion, checked when built.

Operands are broadcast with stride-0 views and cast to the op's compute
dtype (casts are nodes too, and fuse away). Python scalars are "weak"
(NEP 50): `float32_tensor * 2.0` stays float32. Scalar exponents 0, 1, 2,
3, 0.5 and -1 become multiplications, sqrt or a division, as in NumPy.
"""
from __future__ import annotations

import math
import struct
from functools import lru_cache

import numpy as np

from scheduler.dtypes import DType, as_dtype, bool_, float32, float64, promote, result_type
from scheduler.graph import user_site
from scheduler.ops import ELEMENTWISE
from scheduler.view import View

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
    if out and min(out) < 0:
        shown = " ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"negative dimensions are not allowed: shapes {shown}")
    return tuple(out)


def is_weak_scalar(x: object) -> bool:
    """A Python number: "weak" in promotion (NEP 50), unlike a NumPy scalar."""
    return isinstance(x, Scalar) and not isinstance(x, np.generic)


_F32 = struct.Struct("f")


def _exact(value: object, dtype: DType) -> bool | int | float:
    """`value` as `dtype` holds it (float32 rounds), with NumPy's overflow checks.

    A Python float into a float tensor, the most common scalar operand, skips
    NumPy's call overhead: float64 holds it as is, and a float32 store rounds
    it as NumPy's cast does; an overflow to inf goes to NumPy, which warns.
    """
    if type(value) is float:
        if dtype is float64:
            return value
        if dtype is float32:
            rounded = _F32.unpack(_F32.pack(value))[0]
            if not math.isinf(rounded) or math.isinf(value):
                return rounded
    return np.asarray(value, dtype=dtype.np).item()


def const(value: object, dtype: DType, shape: tuple[int, ...], device: str) -> Tensor:
    """A constant read through a stride-0 view: it fuses as a kernel argument."""
    t = runtime.make("const", (), _exact(value, dtype), dtype, (), device)
    return t.broadcast_to(shape) if shape else t


def filled(value: object, dtype: DType, shape: tuple[int, ...], device: str) -> Tensor:
    """A result of `shape` whose elements all equal `value`, each its own (a
    copy of `const`'s view, so writing one element writes only that one)."""
    return apply("copy", const(value, dtype, shape, device))


def cast(t: Tensor, dtype: DType) -> Tensor:
    if t.dtype is dtype:
        return t
    return runtime.make("cast", ((t._buf, t._view),), dtype, dtype, t.shape, t.device)


def _as_tensors(args: tuple) -> list:
    """Operands that are neither tensors nor Python scalars (NumPy arrays and
    scalars, nested lists) become tensors: strong operands, as in NumPy. A
    NumPy scalar is a constant of its dtype on the tensors' device (a kernel
    argument), so `x * np.float32(2)` works on CUDA as on the CPU."""
    device = [a for a in args if isinstance(a, Tensor)][0].device
    return [a if isinstance(a, Tensor) or is_weak_scalar(a) else
            _strong_operand(_strong_scalar(a, args), device) for a in args]


def _strong_operand(a: object, device: str) -> Tensor:
    if isinstance(a, np.generic) or (isinstance(a, np.ndarray) and a.ndim == 0):
        return const(a.item(), as_dtype(a.dtype), (), device)
    return asarray_like(a, device)


def _strong_scalar(a: object, args: tuple) -> object:
    """A NumPy scalar of a dtype lazyrt lacks (`np.uint8(3)`, `np.float16(1)`)
    as its value in NumPy's result dtype with the tensor operands: exact (the
    result dtype holds the scalar's), and the same promotion. A result dtype
    lazyrt lacks (`int32 + float16`) raises TypeError naming it."""
    if not isinstance(a, np.generic):
        return a
    try:
        as_dtype(a.dtype)
        return a
    except TypeError:
        pass
    want = np.result_type(*(x.dtype.np for x in args if isinstance(x, Tensor)), a.dtype)
    as_dtype(want)
    return np.asarray(a, dtype=want)


@lru_cache(maxsize=4096)
def _plan(signature: tuple) -> tuple[tuple[DType, ...], tuple[int, ...], DType, View]:
    """Check `op` over its operands and plan it: (the dtype each operand is
    cast to, the broadcast shape, the result dtype, the stride-0 view a
    scalar operand is read through).

    `signature` is `(op, *operands)`, each operand a tensor's `(dtype,
    shape)` or a Python scalar's type. Promotion of weak scalars depends on
    their type alone, so the plan is cached per signature: a loop pays for
    the rules once. Errors are raised (never cached) with the same messages.
    """
    op, *operands = signature
    prim = ELEMENTWISE[op]
    kinds = [o[0] if isinstance(o, tuple) else o for o in operands]
    shapes = [o[1] for o in operands if isinstance(o, tuple)]
    if op == "where":  # the condition takes no part in promotion; its shape goes last
        kinds = kinds[1:]
        if isinstance(operands[0], tuple):
            shapes = shapes[1:] + shapes[:1]
    compute = prim.compute_dtype(promote(tuple(kinds)))
    shape = broadcast_shapes(*shapes)
    dtypes = (bool_,) + (compute,) * len(kinds) if op == "where" else (compute,) * len(kinds)
    return dtypes, shape, prim.result_dtype(compute), View.filled(shape)


_COMPARISONS = frozenset(("eq", "ne", "lt", "le", "gt", "ge"))


def _compare_out_of_range(op: str, scalar_first: bool, above: bool) -> bool:
    """`x op v` (or `v op x`) for every x of an integer dtype and a Python
    int v beyond its range: NumPy 2 compares such an int exactly (in
    arithmetic it raises OverflowError, and so does lazyrt)."""
    if op in ("eq", "ne"):
        return op == "ne"
    right_is_larger = above != scalar_first
    return (op in ("lt", "le")) == right_is_larger


def never_equal(x: object) -> bool:
    """None or a string: no number equals it. NumPy's `==` and `!=` answer
    elementwise (all False, all True), PyTorch's with a Python bool; lazyrt
    follows NumPy, as its operators do; other ops raise TypeError."""
    return x is None or isinstance(x, (str, bytes))


def _non_number(op: str, args: tuple) -> Tensor:
    """`op` with None or a string operand: `==` all False, `!=` all True (in the
    tensors' broadcast shape), any other op a TypeError naming the operand."""
    if op not in ("eq", "ne"):
        bad = next(type(x).__name__ for x in args if never_equal(x))
        raise TypeError(f"{op}: unsupported operand of type {bad}; expected a tensor, a "
                        f"number, a NumPy array or nested lists")
    tensors = [a for a in args if isinstance(a, Tensor)]
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return filled(op == "ne", bool_, shape, tensors[0].device)


def apply(op: str, *args: object) -> Tensor:
    """Build `op` over tensors and Python scalars (at least one tensor).

    The per-op hot path: checks and promotion come from `_plan`'s cache.
    """
    signature: list = [op]
    device = None
    for a in args:
        if isinstance(a, Tensor):
            buf = a._storage.buf
            if device is None:
                device = buf.device
            elif buf.device != device:
                raise ValueError(f"expected all tensors on the same device, but found "
                                 f"{device} and {buf.device}")
            signature.append((buf.dtype, a._view.shape))
        elif isinstance(a, Scalar) and not isinstance(a, np.generic):  # `is_weak_scalar`
            signature.append(type(a))
        else:
            if any(never_equal(x) for x in args):
                return _non_number(op, args)
            return apply(op, *_as_tensors(args))
    if device is None:
        return apply(op, *_as_tensors(args))
    dtypes, shape, result, scalar_view = _plan(tuple(signature))
    site = user_site()  # found here, a short walk up: every node this op builds shares it
    srcs = []
    for a, dtype in zip(args, dtypes):
        if isinstance(a, Tensor):
            if a._storage.buf.dtype is not dtype:
                a = cast(a, dtype)
            view = a._view
            srcs.append((a._storage.buf, view if view.shape == shape else view.expand(shape)))
        else:  # a Python scalar: a constant node read through a stride-0 view
            try:
                value = _exact(a, dtype)
            except OverflowError:
                if op not in _COMPARISONS or not all(x.dtype.is_int for x in args
                                                       if isinstance(x, Tensor)):
                    raise  # NumPy too (a bool tensor compares as int64, and raises)
                answer = _compare_out_of_range(op, a is args[0], a > 0)
                return filled(answer, bool_, shape, device)
            const_buf = runtime.pending("const", (), value, dtype, (), device, site)
            srcs.append((const_buf, scalar_view))
            runtime.count_node()
    return runtime.make(op, tuple(srcs), None, result, shape, device, site)


def power(a: object, b: object) -> Tensor:
    """`a ** b`, with NumPy's fast paths for common scalar exponents."""
    if isinstance(a, Tensor) and not a.dtype.is_float and isinstance(b, np.integer) and b < 0:
        # a NumPy integer exponent is known now, as a Python int is (NumPy raises)
        raise ValueError("Integers to negative integer powers are not allowed.")
    if isinstance(a, Tensor) and is_weak_scalar(b) and not isinstance(b, bool):
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
    """NumPy's clip, signs of zero included: with both bounds an element
    equal to one is kept, with one bound it is `maximum(x, min)` or
    `minimum(x, max)`, which return the bound on a tie. A Python int bound
    beyond an integer dtype's range that cannot bind is dropped, as NumPy 2
    drops it (`clip(int32, 0, 2**31)`); one that would bind raises."""
    if min is None and max is None:
        raise ValueError("clip: at least one of min and max must be given")
    both = min is not None and max is not None
    out = t
    if min is not None and not _never_binds(t.dtype, min, -1):
        out = apply("maximum", min, out) if both else apply("maximum", out, min)
    if max is not None and not _never_binds(t.dtype, max, 1):
        out = apply("minimum", max, out) if both else apply("minimum", out, max)
    return out if out is not t else apply("copy", t)


def _never_binds(dtype: DType, bound: object, side: int) -> bool:
    """A Python int bound past the dtype's end on its own side (-1: below the minimum)."""
    if type(bound) is not int or not dtype.is_int:
        return False
    info = np.iinfo(dtype.np)
    return bound < info.min if side < 0 else bound > info.max


def astype(t: Tensor, dtype: object) -> Tensor:
    """A new tensor of `dtype` (always a new buffer, as NumPy's astype)."""
    dtype = as_dtype(dtype)
    return cast(t, dtype) if t.dtype != dtype else apply("copy", t)
