"""Per-op LLVM emitters: the CPU backend's registration for the op table.

`EMITTERS` maps every name of `scheduler.ops.ELEMENTWISE` to a function
`(builder, dtype, *args) -> value`, where `dtype` is the operands' (compute)
dtype. Semantics follow the NumPy reference in `scheduler/ops.py`, with the
choices NumPy leaves to the platform pinned to what NumPy does on x86-64:
integer division by zero gives 0 (never a trap), `INT_MIN // -1` wraps,
float->int casts out of range or NaN give INT_MIN. Register types: bool is
i1 (i8 in memory), so boolean `add`/`mul` are logical or/and.

Everything here is straight-line selects except integer `pow` (a square-
and-multiply loop), so an inner loop made of these ops stays vectorizable;
the float math (exp, log, sin, pow...) is in vmath.py, sincos.py,
invtrig.py and vpow.py, written without libm calls for the same reason.
The `philox_*` random-number ops live in philox.py.
"""
from __future__ import annotations

import math
from typing import Callable

from llvmlite import ir

from scheduler.dtypes import DType

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()

Emitter = Callable[..., ir.Value]


def reg_type(d: DType) -> ir.Type:
    """Type a value of `d` has in registers (bool is i1)."""
    return {"bool": I1, "int32": I32, "int64": I64, "float32": F32, "float64": F64}[d.name]


def mem_type(d: DType) -> ir.Type:
    """Type a value of `d` has in memory (bool is one byte, like NumPy)."""
    return I8 if d.is_bool else reg_type(d)


def const(d: DType, value: object) -> ir.Constant:
    return ir.Constant(reg_type(d), value)


def element(ty: ir.Type) -> ir.Type:
    """The scalar type of a vector type (a scalar type is its own)."""
    return ty.element if isinstance(ty, ir.VectorType) else ty


def like(ty: ir.Type, scalar: ir.Type) -> ir.Type:
    """`scalar`, or a vector of it as wide as vector type `ty`: the emitters
    take scalars or vectors (simd.py's loops), and a constant of a vector
    type is a splat."""
    return ir.VectorType(scalar, ty.count) if isinstance(ty, ir.VectorType) else scalar


def intrinsic(b: ir.IRBuilder, name: str, ty: ir.Type, nargs: int) -> ir.Function:
    """Declare (once per module) an overloaded intrinsic such as llvm.exp.f32
    (or llvm.rint.v16f64 for a vector type)."""
    names = {F32: "f32", F64: "f64", I32: "i32", I64: "i64", I1: "i1"}
    suffix = f"v{ty.count}{names[ty.element]}" if isinstance(ty, ir.VectorType) else names[ty]
    full = f"{name}.{suffix}"
    mod = b.module
    fn = mod.globals.get(full)
    if fn is None:
        fn = ir.Function(mod, ir.FunctionType(ty, [ty] * nargs), name=full)
    return fn


def _call(name: str) -> Emitter:
    def emit(b: ir.IRBuilder, d: DType, *args: ir.Value) -> ir.Value:
        return b.call(intrinsic(b, name, args[0].type, len(args)), list(args))
    return emit


# -- casts ---------------------------------------------------------------------------
def cast(b: ir.IRBuilder, x: ir.Value, src: DType, dst: DType) -> ir.Value:
    """NumPy `astype` semantics between the five dtypes."""
    if src == dst:
        return x
    st, dt = like(x.type, reg_type(src)), like(x.type, reg_type(dst))
    if dst.is_bool:  # "!= 0"; NaN is truthy
        if src.is_float:
            return b.fcmp_unordered("!=", x, ir.Constant(st, 0.0))
        return b.icmp_unsigned("!=", x, ir.Constant(st, 0))
    if src.is_bool:
        return b.uitofp(x, dt) if dst.is_float else b.zext(x, dt)
    if src.is_int and dst.is_int:
        return b.sext(x, dt) if dst.itemsize > src.itemsize else b.trunc(x, dt)
    if src.is_int:
        return b.sitofp(x, dt)
    if dst.is_float:
        return b.fpext(x, dt) if dst.itemsize > src.itemsize else b.fptrunc(x, dt)
    # float -> int: out of range / NaN give INT_MIN, as x86 cvtt* (and NumPy) do.
    bits = dst.itemsize * 8
    lo, hi = ir.Constant(st, -float(2 ** (bits - 1))), ir.Constant(st, float(2 ** (bits - 1)))
    ok = b.and_(b.fcmp_ordered(">=", x, lo), b.fcmp_ordered("<", x, hi))
    v = b.freeze(b.fptosi(x, dt))
    return b.select(ok, v, ir.Constant(dt, -(2 ** (bits - 1))))


def _freeze_patch() -> None:
    """llvmlite has no `freeze`; out-of-range fptosi is poison, so add it."""
    if hasattr(ir.IRBuilder, "freeze"):
        return

    class Freeze(ir.Instruction):
        def __init__(self, parent, val, name=""):
            super().__init__(parent, val.type, "freeze", [val], name=name)

        def descr(self, buf):
            v = self.operands[0]
            buf.append(f"freeze {v.type} {v.get_reference()}\n")

    def freeze(self, val, name=""):
        instr = Freeze(self.block, val, name)
        self._insert(instr)
        return instr

    ir.IRBuilder.freeze = freeze


_freeze_patch()


# -- arithmetic ------------------------------------------------------------------------
def _by_kind(b_op: Emitter | None, i_op: Emitter | None, f_op: Emitter | None) -> Emitter:
    def emit(b: ir.IRBuilder, d: DType, *args: ir.Value) -> ir.Value:
        fn = {"b": b_op, "i": i_op, "f": f_op}[d.kind]
        if fn is None:
            raise TypeError(f"no lowering for {d.name}")
        return fn(b, d, *args)
    return emit


def _neg(b, d, x):
    return b.fneg(x) if d.is_float else b.sub(ir.Constant(x.type, 0), x)


def _abs(b, d, x):
    if d.is_bool:
        return x
    if d.is_float:
        return _call("llvm.fabs")(b, d, x)
    return b.select(b.icmp_signed("<", x, ir.Constant(x.type, 0)), _neg(b, d, x), x)


def _exp(b, d, x):
    from .vmath import exp
    return exp(b, x)


def _expm1(b, d, x):
    from .vmath import expm1
    return expm1(b, x)


def _fpow(b, d, x, y):
    from .vpow import pow_
    return pow_(b, x, y)


def _log(b, d, x):
    from .vmath import log
    return log(b, x)


def _log_base(name: str, inv_ln: float) -> Emitter:
    """log2/log10, exact at exact powers (log10(1000) == 3, log2(8) == 3: digit
    and bit counts), where log(x) * (1/ln base) is off by an ulp or two.
    float32: that product in float64, rounded once (vectorized). float64
    log10: vmath's log10_64, within about half an ulp and so exact at every
    power of ten a double holds exactly (10**-22 .. 10**22, tested); float64
    log2: the C library's function (a scalar call, about NumPy's speed)."""
    def emit(b, d, x):
        if element(x.type) == F32:
            wty = like(x.type, F64)
            wide = b.fmul(_log(b, d, b.fpext(x, wty)), ir.Constant(wty, inv_ln))
            return b.fptrunc(wide, x.type)
        if name == "log10":
            from .vmath import log10_64
            return log10_64(b, x)
        return _libm(name)(b, d, x)
    return emit


def _trig(name: str) -> Emitter:
    """sin/cos/tan: sincos.py's calls, which the vectorizer widens."""
    def emit(b, d, x):
        from . import sincos
        return sincos.call(b, x, name)
    return emit


def _tanh(b, d, x):
    from .vmath import tanh32, tanh64
    return tanh32(b, x) if d.itemsize == 4 else tanh64(b, x)


def _invtrig():
    from . import invtrig  # imports this module: at call time
    return invtrig


def _libm(name: str) -> Emitter:
    """A call to C's `name` (float64) or `name`f (float32), resolved in the process's libm.

    For functions with no LLVM intrinsic and no vmath/invtrig version (nextafter): a
    scalar call, so a loop holding one does not vectorize, but it fuses.
    """
    def emit(b: ir.IRBuilder, d: DType, *args: ir.Value) -> ir.Value:
        ty = args[0].type
        full = name + ("f" if ty == F32 else "")
        fn = b.module.globals.get(full)
        if fn is None:
            fn = ir.Function(b.module, ir.FunctionType(ty, [ty] * len(args)), name=full)
        return b.call(fn, list(args))
    return emit


def _signbit(b, d, x):
    """The sign bit itself (true for -0.0 and negative NaNs), as np.signbit."""
    bits = like(x.type, I32 if element(x.type) == F32 else I64)
    return b.icmp_signed("<", b.bitcast(x, bits), ir.Constant(bits, 0))


def _sigmoid(b, d, x):
    one = ir.Constant(x.type, 1.0)
    return b.fdiv(one, b.fadd(one, _exp(b, d, b.fneg(x))))


def _int_div_guard(b, x, y):
    """Divisor made safe for sdiv/srem: 0 and -1 become 1 (handled by selects)."""
    zero, m1 = ir.Constant(y.type, 0), ir.Constant(y.type, -1)
    is0, ism1 = b.icmp_signed("==", y, zero), b.icmp_signed("==", y, m1)
    safe = b.select(b.or_(is0, ism1), ir.Constant(y.type, 1), y)
    return is0, ism1, safe


def _floor_divmod(b, x, y):
    """(x // y, x % y) with Python's floor semantics, for y not 0 or -1,
    without an integer division instruction (none is vectorized on x86):
    a float64 estimate of the floor quotient, refined once from the exact
    integer remainder (an int64 x is rounded to float64, which can leave
    the first estimate off by up to |x| 2**-52 / |y|), then moved by one
    until the remainder has y's sign and is smaller than |y|."""
    ty = x.type
    fty = like(ty, F64)
    floor = intrinsic(b, "llvm.floor", fty, 1)
    # INT64_MAX // 1 estimates 2**63, which fptosi would make poison: cap it
    # at the largest double below 2**63 (the refinement adds the rest)
    cap = ir.Constant(fty, float(2**63 - 1024))
    yd = b.sitofp(y, fty)

    def estimate(v):  # floor(v / y), as an integer
        e = b.call(floor, [b.fdiv(b.sitofp(v, fty), yd)])
        return b.fptosi(b.select(b.fcmp_ordered(">", e, cap), cap, e), ty)
    q = estimate(x)
    r = b.sub(x, b.mul(q, y))
    if element(ty).width > 32:  # the remainder is exact; its quotient by y is small
        q1 = estimate(r)
        q, r = b.add(q, q1), b.sub(r, b.mul(q1, y))
    zero, one = ir.Constant(ty, 0), ir.Constant(ty, 1)
    y_neg = b.icmp_signed("<", y, zero)
    # remainder of the wrong sign: one quotient too many
    over = b.and_(b.icmp_signed("!=", r, zero), b.xor(b.icmp_signed("<", r, zero), y_neg))
    q, r = b.select(over, b.sub(q, one), q), b.select(over, b.add(r, y), r)
    # remainder as large as |y|: one quotient too few
    under = b.select(y_neg, b.icmp_signed("<=", r, y), b.icmp_signed(">=", r, y))
    return b.select(under, b.add(q, one), q), b.select(under, b.sub(r, y), r)


def _ifloordiv(b, d, x, y):
    zero = ir.Constant(x.type, 0)
    is0, ism1, safe = _int_div_guard(b, x, y)
    q = _floor_divmod(b, x, safe)[0]
    q = b.select(ism1, b.sub(zero, x), q)  # x // -1 == -x (wraps for INT_MIN)
    return b.select(is0, zero, q)


def _imod(b, d, x, y):
    zero = ir.Constant(x.type, 0)
    is0, ism1, safe = _int_div_guard(b, x, y)
    r = _floor_divmod(b, x, safe)[1]
    return b.select(b.or_(is0, ism1), zero, r)


def _fdivmod(b, d, a, c):
    """NumPy's npy_divmod: (floor quotient, remainder with the divisor's sign)."""
    ty = a.type
    z, one, half = ir.Constant(ty, 0.0), ir.Constant(ty, 1.0), ir.Constant(ty, 0.5)
    copysign = intrinsic(b, "llvm.copysign", ty, 2)
    floor = intrinsic(b, "llvm.floor", ty, 1)
    mod = b.frem(a, c)
    bzero = b.fcmp_ordered("==", c, z)
    div = b.fdiv(b.fsub(a, mod), c)
    mod_nz = b.fcmp_unordered("!=", mod, z)
    flip = b.and_(mod_nz, b.xor(b.fcmp_ordered("<", c, z), b.fcmp_ordered("<", mod, z)))
    mod2 = b.select(flip, b.fadd(mod, c), mod)
    div = b.select(flip, b.fsub(div, one), div)
    mod2 = b.select(mod_nz, mod2, b.call(copysign, [z, c]))
    fl = b.call(floor, [div])
    fl = b.select(b.fcmp_ordered(">", b.fsub(div, fl), half), b.fadd(fl, one), fl)
    quot = b.fdiv(a, c)
    fl = b.select(b.fcmp_unordered("!=", div, z), fl, b.call(copysign, [z, quot]))
    return b.select(bzero, quot, fl), b.select(bzero, mod, mod2)


def _ffloordiv(b, d, a, c):
    return _fdivmod(b, d, a, c)[0]


def _fmod(b, d, a, c):
    return _fdivmod(b, d, a, c)[1]


def _ipow(b, d, x, n):
    """Square-and-multiply. NumPy raises on negative exponents; we give the
    truncated integer answer (1 for x == 1, +-1 for x == -1, else 0)."""
    ty = x.type
    one, zero = ir.Constant(ty, 1), ir.Constant(ty, 0)
    pre = b.block
    loop = b.append_basic_block("pow.loop")
    body = b.append_basic_block("pow.body")
    done = b.append_basic_block("pow.done")
    b.branch(loop)
    b.position_at_end(loop)
    r, base, e = b.phi(ty), b.phi(ty), b.phi(ty)
    r.add_incoming(one, pre)
    base.add_incoming(x, pre)
    e.add_incoming(n, pre)
    b.cbranch(b.icmp_signed(">", e, zero), body, done)
    b.position_at_end(body)
    odd = b.trunc(e, I1)
    r.add_incoming(b.select(odd, b.mul(r, base), r), body)
    base.add_incoming(b.mul(base, base), body)
    e.add_incoming(b.lshr(e, one), body)
    b.branch(loop)
    b.position_at_end(done)
    neg_val = b.select(b.icmp_signed("==", x, one), one,
                       b.select(b.icmp_signed("==", x, ir.Constant(ty, -1)),
                                b.select(b.trunc(n, I1), ir.Constant(ty, -1), one), zero))
    return b.select(b.icmp_signed("<", n, zero), neg_val, r)


def _minmax(pred: str) -> Emitter:
    """np.maximum / np.minimum: NaN propagates, and of two equal values
    (0.0 and -0.0) the second is the result, as NumPy's x86 loops give
    (`maximum(0.0, -0.0)` is -0.0); llvm.maximum would order -0.0 below
    0.0. For floats the inner select is x86's own max/min instruction."""
    def emit(b, d, x, y):
        if d.is_float:
            return b.select(b.fcmp_unordered("uno", x, x), x,
                            b.select(b.fcmp_ordered(pred, x, y), x, y))
        cmp = b.icmp_unsigned if d.is_bool else b.icmp_signed
        return b.select(cmp(pred, x, y), x, y)
    return emit


def _compare(pred: str) -> Emitter:
    def emit(b, d, x, y):
        if d.is_float:
            if pred == "!=":
                return b.fcmp_unordered(pred, x, y)  # NaN != NaN is True
            return b.fcmp_ordered(pred, x, y)
        if d.is_bool:
            return b.icmp_unsigned(pred, x, y)
        return b.icmp_signed(pred, x, y)
    return emit


EMITTERS: dict[str, Emitter] = {
    "copy": lambda b, d, x: x,
    "neg": _neg,
    "abs": _abs,
    "exp": _exp,  # vmath.py: vectorizable, unlike the libm call llvm.exp becomes
    "expm1": _expm1,  # vmath.py too
    "log": _log,  # vmath.py too
    "sqrt": _call("llvm.sqrt"),
    "sin": _trig("sin"),  # sincos.py/vmath.py: exact reduction, no libm call
    "cos": _trig("cos"),
    "tan": _trig("tan"),
    "tanh": _tanh,  # vmath.py too
    "sigmoid": _sigmoid,
    "asin": lambda b, d, x: _invtrig().asin(b, x),  # invtrig.py: vectorizable, unlike libm
    "acos": lambda b, d, x: _invtrig().acos(b, x),
    "atan": lambda b, d, x: _invtrig().atan(b, x),
    "atan2": lambda b, d, y, x: _invtrig().atan2(b, y, x),
    "floor": _call("llvm.floor"),  # one vroundps/vrndscale each
    "ceil": _call("llvm.ceil"),
    "trunc": _call("llvm.trunc"),
    "rint": _call("llvm.roundeven"),  # ties to even whatever the rounding mode
    "nextafter": _libm("nextafter"),
    "log2": _log_base("log2", 1.0 / math.log(2.0)),
    "log10": _log_base("log10", 1.0 / math.log(10.0)),
    "copysign": _call("llvm.copysign"),
    "signbit": _signbit,
    "invert": lambda b, d, x: b.xor(x, ir.Constant(x.type, -1 if d.is_int else 1)),
    "add": _by_kind(lambda b, d, x, y: b.or_(x, y), lambda b, d, x, y: b.add(x, y),
                    lambda b, d, x, y: b.fadd(x, y)),
    "sub": _by_kind(None, lambda b, d, x, y: b.sub(x, y), lambda b, d, x, y: b.fsub(x, y)),
    "mul": _by_kind(lambda b, d, x, y: b.and_(x, y), lambda b, d, x, y: b.mul(x, y),
                    lambda b, d, x, y: b.fmul(x, y)),
    "truediv": _by_kind(None, None, lambda b, d, x, y: b.fdiv(x, y)),
    "floordiv": _by_kind(None, _ifloordiv, _ffloordiv),
    "mod": _by_kind(None, _imod, _fmod),
    "pow": _by_kind(None, _ipow, _fpow),  # vpow.py: vectorizable, unlike libm pow
    "maximum": _minmax(">"),
    "minimum": _minmax("<"),
    "eq": _compare("=="),
    "ne": _compare("!="),
    "lt": _compare("<"),
    "le": _compare("<="),
    "gt": _compare(">"),
    "ge": _compare(">="),
    "and": lambda b, d, x, y: b.and_(x, y),
    "or": lambda b, d, x, y: b.or_(x, y),
    "xor": lambda b, d, x, y: b.xor(x, y),
    "where": lambda b, d, c, x, y: b.select(c, x, y),
}


def _register_philox() -> None:
    from .philox import EMITTERS as PHILOX  # counter-based rand/randn (philox.py)
    EMITTERS.update(PHILOX)


_register_philox()


def emit_op(b: ir.IRBuilder, name: str, dtype: DType, args: list[ir.Value]) -> ir.Value:
    """Emit op `name` whose operands have compute dtype `dtype`."""
    return EMITTERS[name](b, dtype, *args)
