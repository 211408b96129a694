"""sin, cos and tan through LLVM's vector-function ABI.

vmath's sin/cos are straight-line code, so a vectorized loop runs the exact
reduction that only large arguments need on every lane: 20M float32 sines
took ~60 ms against NumPy's ~20, which reduces cheaply and branches to a
slow path only for large arguments. A loop the vectorizer widens cannot
branch per vector, but a function it calls can. So a sin is a call of
`lazy_sinf` (float32) or `lazy_sind` (float64), whose call site names our
own vector versions (`vector-function-abi-variant`, one per width in
_KIND's widths). The vectorizer calls `lazy_sinf_v<N>` on N lanes at a
time; that function takes a short reduction when every lane is below the
kind's limit, and vmath's exact path otherwise (float32: one 16-lane copy
per module, which every version calls; float64, whose exact reduction reads
a table: lane by lane through the scalar function). The scalar function
(remainder loops, loops that do not vectorize) branches the same way per
element. Results are the same either way: the short reductions are exact
enough below their limits (see `_fast`).
"""
from __future__ import annotations

import math
from fractions import Fraction

from llvmlite import ir

from .lowering import F32, F64, I1, I64, element, intrinsic, like
from .vmath import _c, _k_cos, _k_sin, _pi_scaled, _sincos, fabs

# per dtype: name suffix, vector widths offered, lanes of the shared exact
# path (0: lane by lane), |x| below which the short reduction is taken
_KIND = {F32: ("f", (4, 8, 16), 16, 2.0 ** 17), F64: ("d", (2, 4, 8), 0, 2.0 ** 20)}
FAST_LIMIT = {"float32": _KIND[F32][3], "float64": _KIND[F64][3]}

# fdlibm's pi/2 in three pieces of 33 bits (each followed by its rounded
# rest), for float64's short reduction (e_rem_pio2.c, the medium case)
_PIO2 = ((1.57079632673412561417e+00, 6.07710050650619224932e-11),
         (6.07710050630396597660e-11, 2.02226624879595063154e-21),
         (2.02226624871116645580e-21, 8.47842766036889956997e-32))


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
    """sin, cos or tan (`fn`) of a float value, as a call the vectorizer can
    widen; of a vector (simd.py's loops), a call of the vector version."""
    suffix, widths = _KIND[element(x.type)][:2]
    name = f"lazy_{fn}{suffix}"
    func = b.module.globals.get(name) or _define(b.module, name, fn, element(x.type))
    if isinstance(x.type, ir.VectorType):
        return b.call(b.module.globals[f"{name}_v{x.type.count}"], [x])
    instr = b.call(func, [x])
    variants = ",".join(f"_ZGV_LLVM_N{n}v_{name}({name}_v{n})" for n in widths)
    instr.attributes = _StringAttr(f'"vector-function-abi-variant"="{variants}"')
    return instr


def keep_variants(mod: ir.Module) -> None:
    """List the vector functions in `llvm.compiler.used`: until the vectorizer
    has placed calls to them, nothing calls them, and they must survive."""
    fns = [g for g in mod.globals.values() if isinstance(g, ir.Function) and
           g.name.startswith(tuple(f"lazy_{f}{k}_v" for f in ("sin", "cos", "tan")
                                   for k in "fd"))]
    if fns:
        ty = ir.ArrayType(ir.PointerType(), len(fns))
        used = ir.GlobalVariable(mod, ty, "llvm.compiler.used")
        used.linkage, used.section = "appending", "llvm.metadata"
        used.initializer = ir.Constant(ty, fns)


def _function(mod: ir.Module, name: str, ty: ir.Type) -> tuple[ir.Function, ir.IRBuilder]:
    fn = ir.Function(mod, ir.FunctionType(ty, [ty]), name)
    fn.linkage = "internal"
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def _define(mod: ir.Module, name: str, fn_name: str, ty: ir.Type) -> ir.Function:
    """The scalar function, its vector versions and the exact path they share."""
    _, widths, lanes, limit = _KIND[ty]
    fn, b = _function(mod, name, ty)
    fn.attributes.add("noinline")  # the vectorizer needs the call, not its body
    if lanes:
        exact, eb = _function(mod, f"{name}_exact", ir.VectorType(ty, lanes))
        exact.attributes.add("noinline")  # one copy of the long code per module
        eb.ret(_sincos(eb, exact.args[0], fn_name))
        slow = slow_vector = lambda b, x: _call_exact(b, exact, x)  # noqa: E731
    else:
        slow = lambda b, x: _sincos(b, x, fn_name)  # noqa: E731
        slow_vector = lambda b, x: _lane_by_lane(b, fn, x)  # noqa: E731
    _fast_or_exact(b, fn.args[0], slow, fn_name, limit)
    for n in widths:
        vec, vb = _function(mod, f"{name}_v{n}", ir.VectorType(ty, n))
        _fast_or_exact(vb, vec.args[0], slow_vector, fn_name, limit)
    return fn


def _fast_or_exact(b: ir.IRBuilder, x: ir.Value, slow, fn: str, limit: float) -> None:
    """The body of a scalar or vector function of its argument x: the short
    reduction unless some lane is at least `limit` (or NaN), else `slow`."""
    xd = b.fpext(x, like(x.type, F64)) if element(x.type) == F32 else x
    large = b.fcmp_unordered(">=", fabs(b, xd), _c(xd.type, limit))
    if isinstance(x.type, ir.VectorType):
        n = x.type.count
        large = b.icmp_unsigned("!=", b.bitcast(large, ir.IntType(n)), ir.Constant(ir.IntType(n), 0))
    with b.if_then(large, likely=False):
        b.ret(slow(b, x))
    v = _fast(b, xd, fn) if element(x.type) == F32 else _fast64(b, xd, fn)
    b.ret(b.fptrunc(v, x.type) if element(x.type) == F32 else v)


def _lane_by_lane(b: ir.IRBuilder, scalar: ir.Function, x: ir.Value) -> ir.Value:
    """scalar(x) on each lane of x (the rare slow path of float64 vectors)."""
    i32 = ir.IntType(32)
    out = ir.Constant(x.type, ir.Undefined)
    for i in range(x.type.count):
        out = b.insert_element(out, b.call(scalar, [b.extract_element(x, i32(i))]), i32(i))
    return out


def _call_exact(b: ir.IRBuilder, exact: ir.Function, x: ir.Value) -> ir.Value:
    """exact(x) for a scalar or an n-lane x, through the exact path's lanes."""
    i32 = ir.IntType(32)
    lanes = exact.args[0].type.count
    if not isinstance(x.type, ir.VectorType):
        wide = b.insert_element(ir.Constant(exact.args[0].type, ir.Undefined), x, i32(0))
        return b.extract_element(b.call(exact, [wide]), i32(0))
    n = x.type.count
    if n == lanes:
        return b.call(exact, [x])
    wide = b.shuffle_vector(x, x, ir.Constant(ir.VectorType(i32, lanes),
                                              [i % n for i in range(lanes)]))
    out = b.call(exact, [wide])
    return b.shuffle_vector(out, out, ir.Constant(ir.VectorType(i32, n), list(range(n))))


def _fast64(b: ir.IRBuilder, x: ir.Value, fn: str) -> ir.Value:
    """sin, cos or tan of a float64 x (scalar or vector), |x| < 2**20:
    fdlibm's medium-size reduction (e_rem_pio2.c): x - k pi/2 with pi/2's
    first 33 bits (exact), then its next 33 bits and the rounding error
    carried (good to ~118 bits), and where that left r more than 2**49 times
    smaller than x, the third 33 bits too (~151 bits; the third step drops
    the second's rounding term, so it is taken only there, as fdlibm does);
    then the fdlibm kernels on r = r_hi + r_lo."""
    ty = x.type
    k = b.call(intrinsic(b, "llvm.rint", ty, 1), [b.fmul(x, _c(ty, 2 / math.pi))])
    (p1, _), (p2, p2t), (p3, p3t) = _PIO2

    def step(r, p, pt):  # r - k (p + pt), the rounding of r - k p carried in w
        w = b.fmul(k, _c(ty, p))
        r2 = b.fsub(r, w)
        return r2, b.fsub(b.fmul(k, _c(ty, pt)), b.fsub(b.fsub(r, r2), w))
    r, w = step(b.fsub(x, b.fmul(k, _c(ty, p1))), p2, p2t)
    r3, w3 = step(r, p3, p3t)
    tiny = b.fcmp_ordered("<", fabs(b, b.fsub(r, w)), b.fmul(fabs(b, x), _c(ty, 2.0 ** -49)))
    r, w = b.select(tiny, r3, r), b.select(tiny, w3, w)
    hi = b.fsub(r, w)
    lo = b.fsub(b.fsub(r, hi), w)
    return _quadrant(b, x, k, _k_sin(b, hi, lo), _k_cos(b, hi, lo), fn)


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
    zero = _c(ty, 0.0)
    return _quadrant(b, x, k, _k_sin(b, r, zero), _k_cos(b, r, zero), fn)


def _quadrant(b: ir.IRBuilder, x: ir.Value, k: ir.Value, s: ir.Value, c: ir.Value,
              fn: str) -> ir.Value:
    """fn(x) from sin and cos of r = x - k pi/2."""
    ty = x.type
    ity, bty = like(ty, I64), like(ty, I1)
    q = b.fptosi(k, ity)
    odd = b.trunc(q, bty)                                   # quadrant 1 or 3: swap sin/cos
    flip = b.trunc(b.lshr(q, ir.Constant(ity, 1)), bty)     # quadrant 2 or 3: negate sin
    zero = _c(ty, 0.0)
    if fn == "tan":  # s/c, -c/s (period pi)
        return b.select(b.fcmp_ordered("==", x, zero), x,
                        b.select(odd, b.fneg(b.fdiv(c, s)), b.fdiv(s, c)))
    if fn == "sin":  # +s, +c, -s, -c; and sin(-0.0) = -0.0
        v, neg = b.select(odd, c, s), flip
    else:            # +c, -s, -c, +s
        v, neg = b.select(odd, s, c), b.xor(flip, odd)
    v = b.select(neg, b.fneg(v), v)
    return b.select(b.fcmp_ordered("==", x, zero), x, v) if fn == "sin" else v
