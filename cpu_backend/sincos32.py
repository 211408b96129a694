"""float32 sin, cos and tan through LLVM's vector-function ABI.

vmath's sin/cos are straight-line code, so a vectorized loop runs the exact
reduction that only large arguments need on every lane: 20M float32 sines
took ~60 ms against NumPy's ~20, which reduces cheaply and branches to a
slow path only for large arguments. A loop the vectorizer widens cannot
branch per vector, but a function it calls can. So a float32 sin is a call
of `lazy_sinf`, whose call site names our own vector versions
(`vector-function-abi-variant`, one per width in WIDTHS). The vectorizer
calls `lazy_sinf_v<N>` on N lanes at a time; that function takes a short
reduction when every lane is below FAST_LIMIT and vmath's exact path on all
lanes otherwise (one 16-lane copy of it per module, which every version
calls); the scalar function (remainder loops, loops that do not vectorize)
branches the same way per element. Results are the same either
way: the short reduction is exact enough below FAST_LIMIT (see `_fast`).
"""
from __future__ import annotations

import math
from fractions import Fraction

from llvmlite import ir

from .lowering import F32, F64, I1, I64, intrinsic
from .vmath import _c, _k_cos, _k_sin, _like, _pi_scaled, _sincos

WIDTHS = (4, 8, 16)     # vector versions offered to the vectorizer
EXACT_LANES = 16        # the exact path is compiled once, this wide
FAST_LIMIT = 2.0 ** 17  # |x| below this takes the short reduction


def _pio2_pieces() -> tuple[float, float, float]:
    """pi/2 = C1 + C2 + C3 (+ 2**-160): C1 with 33 significant bits, so that
    k * C1 is exact for |k| < 2**20, and C2, C3 the next doubles' worth."""
    prec = 200
    half_pi = Fraction(_pi_scaled(prec), 2 ** (prec + 1))
    c1 = Fraction(math.floor(half_pi * 2 ** 32), 2 ** 32)
    c2 = float(half_pi - c1)
    return float(c1), c2, float(half_pi - c1 - Fraction(c2))


_C1, _C2, _C3 = _pio2_pieces()


class _StringAttr(ir.instructions.CallInstrAttributes):
    """A call-site `"key"="value"` attribute (llvmlite knows only keyword ones)."""

    def __init__(self, text: str):
        set.__init__(self)
        set.add(self, text)


def call(b: ir.IRBuilder, x: ir.Value, fn: str) -> ir.Value:
    """sin, cos or tan (`fn`) of a float32 value, as a call the vectorizer can widen."""
    name = f"lazy_{fn}f"
    func = b.module.globals.get(name) or _define(b.module, name, fn)
    instr = b.call(func, [x])
    variants = ",".join(f"_ZGV_LLVM_N{n}v_{name}({name}_v{n})" for n in WIDTHS)
    instr.attributes = _StringAttr(f'"vector-function-abi-variant"="{variants}"')
    return instr


def keep_variants(mod: ir.Module) -> None:
    """List the vector functions in `llvm.compiler.used`: until the vectorizer
    has placed calls to them, nothing calls them, and they must survive."""
    fns = [g for g in mod.globals.values() if isinstance(g, ir.Function) and
           g.name.startswith(("lazy_sinf_v", "lazy_cosf_v", "lazy_tanf_v"))]
    if fns:
        ty = ir.ArrayType(ir.PointerType(), len(fns))
        used = ir.GlobalVariable(mod, ty, "llvm.compiler.used")
        used.linkage, used.section = "appending", "llvm.metadata"
        used.initializer = ir.Constant(ty, fns)


def _function(mod: ir.Module, name: str, ty: ir.Type) -> tuple[ir.Function, ir.IRBuilder]:
    fn = ir.Function(mod, ir.FunctionType(ty, [ty]), name)
    fn.linkage = "internal"
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def _define(mod: ir.Module, name: str, fn_name: str) -> ir.Function:
    """The scalar function, its vector versions and the exact path they share."""
    exact, b = _function(mod, f"{name}_exact", ir.VectorType(F32, EXACT_LANES))
    exact.attributes.add("noinline")  # one copy of the long code per module
    b.ret(_sincos(b, exact.args[0], fn_name))
    fn, b = _function(mod, name, F32)
    fn.attributes.add("noinline")  # the vectorizer needs the call, not its body
    _fast_or_exact(b, fn.args[0], exact, fn_name)
    for n in WIDTHS:
        vec, vb = _function(mod, f"{name}_v{n}", ir.VectorType(F32, n))
        _fast_or_exact(vb, vec.args[0], exact, fn_name)
    return fn


def _fast_or_exact(b: ir.IRBuilder, x: ir.Value, exact: ir.Function, fn: str) -> None:
    """The body of a scalar or vector function of its argument x: the short
    reduction unless some lane is at least FAST_LIMIT (or NaN)."""
    xd = b.fpext(x, _like(x.type, F64))
    large = b.fcmp_unordered(">=", _fabs(b, xd), _c(xd.type, FAST_LIMIT))
    if isinstance(x.type, ir.VectorType):
        n = x.type.count
        large = b.icmp_unsigned("!=", b.bitcast(large, ir.IntType(n)), ir.Constant(ir.IntType(n), 0))
    with b.if_then(large, likely=False):
        b.ret(_call_exact(b, exact, x))
    b.ret(b.fptrunc(_fast(b, xd, fn), x.type))


def _call_exact(b: ir.IRBuilder, exact: ir.Function, x: ir.Value) -> ir.Value:
    """exact(x) for a scalar or an n-lane x, through its EXACT_LANES lanes."""
    i32 = ir.IntType(32)
    if not isinstance(x.type, ir.VectorType):
        wide = b.insert_element(ir.Constant(exact.args[0].type, ir.Undefined), x, i32(0))
        return b.extract_element(b.call(exact, [wide]), i32(0))
    n = x.type.count
    if n == EXACT_LANES:
        return b.call(exact, [x])
    lanes = ir.VectorType(i32, EXACT_LANES)
    wide = b.shuffle_vector(x, x, ir.Constant(lanes, [i % n for i in range(EXACT_LANES)]))
    out = b.call(exact, [wide])
    return b.shuffle_vector(out, out, ir.Constant(ir.VectorType(i32, n), list(range(n))))


def _fabs(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.call(intrinsic(b, "llvm.fabs", x.type, 1), [x])


def _fast(b: ir.IRBuilder, x: ir.Value, fn: str) -> ir.Value:
    """sin, cos or tan of a float32 value x (in double, scalar or vector), |x| <
    FAST_LIMIT: k = nearest integer to x 2/pi (|k| < 2**17), r = x - k pi/2
    with k C1 exact and x - k C1 exact (Sterbenz), so r's error is that of
    k C2, about 2**-69, far below float32's closest approach to a multiple of
    pi/2 in this range; then the fdlibm kernels in double."""
    ty = x.type
    k = b.call(intrinsic(b, "llvm.rint", ty, 1), [b.fmul(x, _c(ty, 2 / math.pi))])
    r = b.fsub(b.fsub(b.fsub(x, b.fmul(k, _c(ty, _C1))), b.fmul(k, _c(ty, _C2))),
               b.fmul(k, _c(ty, _C3)))
    ity = I64 if ty == F64 else ir.VectorType(I64, ty.count)
    bty = I1 if ty == F64 else ir.VectorType(I1, ty.count)
    q = b.fptosi(k, ity)
    odd = b.trunc(q, bty)                                   # quadrant 1 or 3: swap sin/cos
    flip = b.trunc(b.lshr(q, ir.Constant(ity, 1)), bty)     # quadrant 2 or 3: negate sin
    zero = _c(ty, 0.0)
    s, c = _k_sin(b, r, zero), _k_cos(b, r, zero)
    if fn == "tan":  # s/c, -c/s (period pi)
        return b.select(b.fcmp_ordered("==", x, zero), x,
                        b.select(odd, b.fneg(b.fdiv(c, s)), b.fdiv(s, c)))
    if fn == "sin":  # +s, +c, -s, -c; and sin(-0.0) = -0.0
        v, neg = b.select(odd, c, s), flip
    else:            # +c, -s, -c, +s
        v, neg = b.select(odd, s, c), b.xor(flip, odd)
    v = b.select(neg, b.fneg(v), v)
    return b.select(b.fcmp_ordered("==", x, zero), x, v) if fn == "sin" else v
