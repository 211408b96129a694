"""Elementwise functions that map straight onto lazyrt's primitives.

Each one is a lazy, fusable node (or a few): NumPy broadcasting and NEP 50
promotion (Python scalars are weak), checked when built. Non-tensor
operands are converted with NumPy's defaults (`_helpers.operand`).
"""
from __future__ import annotations

import numpy as np

from scheduler.dtypes import bool_, int64, result_type

from .. import elementwise
from ..tensor import Tensor
from ._helpers import check_kind, operand, shared, store_out, tensor


def _apply(op: str, *args: object) -> Tensor:
    ops = [a if a is None else operand(a) for a in args]  # np.equal(x, None) is all False
    if not any(isinstance(a, Tensor) for a in ops):
        ops[0] = tensor(ops[0])
    return elementwise.apply(op, *ops)


def _unary(op: str, name: str, doc: str):
    def f(x: object, /) -> Tensor:
        return _apply(op, x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _binary(op: str, name: str, doc: str):
    def f(x1: object, x2: object, /) -> Tensor:
        return _apply(op, x1, x2)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


abs = _unary("abs", "abs", "|x|; keeps the dtype.")
exp = _unary("exp", "exp", "e**x (float64 for integers).")
log = _unary("log", "log", "Natural logarithm (float64 for integers).")
sqrt = _unary("sqrt", "sqrt", "Square root (float64 for integers).")
sin = _unary("sin", "sin", "Sine.")
cos = _unary("cos", "cos", "Cosine.")
tanh = _unary("tanh", "tanh", "Hyperbolic tangent.")
negative = _unary("neg", "negative", "-x (TypeError for bool, as NumPy).")
bitwise_invert = _unary("invert", "bitwise_invert", "~x for bool and integer tensors.")

add = _binary("add", "add", "x1 + x2.")
subtract = _binary("sub", "subtract", "x1 - x2.")
multiply = _binary("mul", "multiply", "x1 * x2.")
divide = _binary("truediv", "divide", "x1 / x2 (true division).")
floor_divide = _binary("floordiv", "floor_divide", "x1 // x2 (integer division by 0 gives 0).")
remainder = _binary("mod", "remainder", "x1 % x2 with the divisor's sign, as Python.")
maximum = _binary("maximum", "maximum", "Elementwise maximum (NaN propagates).")
minimum = _binary("minimum", "minimum", "Elementwise minimum (NaN propagates).")
equal = _binary("eq", "equal", "x1 == x2.")
not_equal = _binary("ne", "not_equal", "x1 != x2.")
less = _binary("lt", "less", "x1 < x2.")
less_equal = _binary("le", "less_equal", "x1 <= x2.")
greater = _binary("gt", "greater", "x1 > x2.")
greater_equal = _binary("ge", "greater_equal", "x1 >= x2.")
bitwise_and = _binary("and", "bitwise_and", "x1 & x2 for bool and integer tensors.")
bitwise_or = _binary("or", "bitwise_or", "x1 | x2 for bool and integer tensors.")
bitwise_xor = _binary("xor", "bitwise_xor", "x1 ^ x2 for bool and integer tensors.")


def pow(x1: object, x2: object, /) -> Tensor:
    """x1 ** x2 (small integer exponents become multiplications, as NumPy)."""
    a, b = operand(x1), operand(x2)
    if not isinstance(a, Tensor):
        return _apply("pow", a, b)
    # a NumPy integer stays a scalar: power raises for a negative one, as NumPy
    return elementwise.power(a, x2 if isinstance(x2, np.integer) else b)


def square(x: object, /) -> Tensor:
    """x * x, as x ** 2: bool gives int64 (NumPy: int8, which lazyrt lacks)."""
    return elementwise.power(tensor(x), 2)


def positive(x: object, /) -> Tensor:
    """+x: a copy (TypeError for bool, as NumPy)."""
    t = tensor(x)
    check_kind("positive", t, "if")
    return elementwise.apply("copy", t)


def reciprocal(x: object, /) -> Tensor:
    """1 / x in the floating dtype (the array API's rule; NumPy keeps ints)."""
    return elementwise.apply("truediv", 1, tensor(x))


def clip(x: object, /, min: object = None, max: object = None, out: object = None) -> Tensor:
    """`x` limited to [min, max]; either bound may be None (then it is not applied).
    `out=` is NumPy's: a lazy write into that tensor (or array), which is returned."""
    t = tensor(x)
    if min is None and max is None:
        result = elementwise.apply("copy", t)
    else:
        result = elementwise.clip(t, operand(min) if min is not None else None,
                                  operand(max) if max is not None else None)
    return store_out(result, out, "same_kind", "clip", exact=False)  # NumPy's clip ufunc


def _logical(op: str, name: str):
    def f(x1: object, x2: object, /) -> Tensor:
        a, b = operand(x1), operand(x2)
        a = elementwise.cast(a, bool_) if isinstance(a, Tensor) else bool(a)
        b = elementwise.cast(b, bool_) if isinstance(b, Tensor) else bool(b)
        return _apply(op, a, b)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Truth-value {name.split('_')[1]} (operands read as bools), a bool tensor."
    return f


logical_and = _logical("and", "logical_and")
logical_or = _logical("or", "logical_or")
logical_xor = _logical("xor", "logical_xor")


def logical_not(x: object, /) -> Tensor:
    return elementwise.apply("invert", elementwise.cast(tensor(x), bool_))


def _shift_operands(name: str, x1: object, x2: object) -> tuple[Tensor, Tensor, int]:
    """Both operands in the shift's dtype, and its width in bits. NumPy has no
    bool shift loop: bools shift as int8 (`bools << True` is int8), which lazyrt
    lacks, so bool with bool gives int64, as its other int8 results of bools
    (`**`, `//`); with an integer, the integer's dtype, as NumPy's."""
    a, b = operand(x1), operand(x2)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = tensor(a)
    d = result_type(*(v.dtype if isinstance(v, Tensor) else v for v in (a, b)))
    if d.is_bool:
        d = int64
    if not d.is_int:
        raise TypeError(f"{name}: expected integer operands, got dtype {d.name}")
    device = (a if isinstance(a, Tensor) else b).device
    a = elementwise.cast(a, d) if isinstance(a, Tensor) else elementwise.const(a, d, (), device)
    b = elementwise.cast(b, d) if isinstance(b, Tensor) else elementwise.const(b, d, (), device)
    return a, b, d.itemsize * 8


def bitwise_left_shift(x1: object, x2: object, /) -> Tensor:
    """x1 << x2 as x1 * 2**x2 (wrapping); shifts of the bit width or more, or
    negative ones (2**x2 is then 0), give 0 (NumPy)."""
    a, b, bits = _shift_operands("bitwise_left_shift", x1, x2)
    shifted = elementwise.apply("mul", a, elementwise.apply("pow", 2, b))
    return elementwise.apply("where", b >= bits, 0, shifted)


def bitwise_right_shift(x1: object, x2: object, /) -> Tensor:
    """Arithmetic x1 >> x2 as floor(x1 / 2**x2); wide or negative shifts give
    0 or -1 (NumPy)."""
    a, b, bits = _shift_operands("bitwise_right_shift", x1, x2)
    sign = elementwise.apply("where", a < 0, -1, 0)
    narrow = elementwise.apply("minimum", b, bits - 2)
    shifted = elementwise.apply("floordiv", a, elementwise.apply("pow", 2, narrow))
    wide = elementwise.apply("or", b >= bits - 1, b < 0)
    return elementwise.apply("where", wide, elementwise.cast(sign, a.dtype), shifted)


def conj(x: object, /) -> Tensor:
    """Complex conjugate: a copy (lazyrt has no complex dtypes)."""
    return elementwise.apply("copy", tensor(x))


def real(x: object, /) -> Tensor:
    """Real part: `x` itself, as NumPy's of a real array, so writes through it
    reach `x` (lazyrt has no complex dtypes)."""
    return shared(x)


def imag(x: object, /) -> Tensor:
    """Imaginary part: zeros of x's dtype (lazyrt has no complex dtypes)."""
    t = tensor(x)
    return elementwise.filled(0, t.dtype, t.shape, t.device)


def isnan(x: object, /) -> Tensor:
    """x != x for floats; all False for bool and integers."""
    t = tensor(x)
    if t.dtype.is_float:
        return elementwise.apply("ne", t, t)
    return elementwise.filled(False, bool_, t.shape, t.device)


def isinf(x: object, /) -> Tensor:
    t = tensor(x)
    if t.dtype.is_float:
        return elementwise.apply("eq", elementwise.apply("abs", t), np.inf)
    return elementwise.filled(False, bool_, t.shape, t.device)


def isfinite(x: object, /) -> Tensor:
    """(x - x) == 0: NaN for inf and NaN, 0 for every finite x."""
    t = tensor(x)
    if t.dtype.is_float:
        return elementwise.apply("eq", elementwise.apply("sub", t, t), 0.0)
    return elementwise.filled(True, bool_, t.shape, t.device)


__all__ = ["abs", "add", "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_or",
           "bitwise_right_shift", "bitwise_xor", "clip", "conj", "cos", "divide", "equal",
           "exp", "floor_divide", "greater", "greater_equal", "imag", "isfinite", "isinf",
           "isnan", "less", "less_equal", "log", "logical_and", "logical_not", "logical_or",
           "logical_xor", "maximum", "minimum", "multiply", "negative", "not_equal", "positive",
           "pow", "real", "reciprocal", "remainder", "sin", "sqrt", "square", "subtract",
           "tanh"]
