"""Vectorizable asin, acos, atan and atan2 (float32/float64), as straight-line IR.

They were libm calls, which keep a loop from vectorizing: 10M float32
arctan took 52 ms against NumPy's 9, arctan2 106 against 11. These are
Cephes' double-precision algorithms (a reduction to a small interval, a
rational approximation, Cephes' `MOREBITS` correction of the pi/2 and pi/4
constants), with every branch computed and selected, so they vectorize;
float32 is computed in float64 and rounded once. Signs go through
`copysign`, which keeps -0.0 and NaN as C does; atan2 follows C's special
cases (signed zeros, infinities).
"""
from __future__ import annotations

import math

from llvmlite import ir

from .lowering import F32, F64, intrinsic
from .vmath import fabs

_PIO2, _PIO4, _MOREBITS = math.pi / 2, math.pi / 4, 6.123233995736765886130e-17
_T3P8 = 2.41421356237309504880  # tan(3 pi / 8)

# Cephes atan.c: atan(x) = x + x^3 P(x^2)/Q(x^2) on |x| <= 0.66
_ATAN_P = [-8.750608600031904122785e-1, -1.615753718733365076637e1,
           -7.500855792314704667340e1, -1.228866684490136173410e2, -6.485021904942025371773e1]
_ATAN_Q = [2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
           4.853903996359136964868e2, 1.945506571482613964425e2]
# Cephes asin.c: |x| <= 0.625: x + x^3 P/Q; above: from sqrt(2 (1 - |x|)) and R/S
_ASIN_P = [4.253011369004428248960e-3, -6.019598008014123785661e-1, 5.444622390564711410273e0,
           -1.626247967210700244449e1, 1.956261983317594739197e1, -8.198089802484824371615e0]
_ASIN_Q = [-1.474091372988853791896e1, 7.049610280856842141659e1, -1.471791292232726029859e2,
           1.395105614657485689735e2, -4.918853881490881290097e1]
_ASIN_R = [2.967721961301243206100e-3, -5.634242780008963776856e-1, 6.968710824104713396794e0,
           -2.556901049652824852289e1, 2.853665548261061424989e1]
_ASIN_S = [-2.194779531642920639778e1, 1.470656354026814941758e2, -3.838770957603691357202e2,
           3.424398657913078477438e2]


def _k(v: float) -> ir.Constant:
    return ir.Constant(F64, v)


def _poly(b: ir.IRBuilder, x: ir.Value, coeffs: list[float], monic: bool = False) -> ir.Value:
    """Cephes polevl (coeffs[0] x^n + ...), or p1evl with a leading 1 when `monic`."""
    acc = _k(1.0) if monic else _k(coeffs[0])
    for c in coeffs if monic else coeffs[1:]:
        acc = b.fadd(b.fmul(acc, x), _k(c))
    return acc


def _f64(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return b.fpext(x, F64) if x.type == F32 else x


def _back(b: ir.IRBuilder, v: ir.Value, ty: ir.Type) -> ir.Value:
    return b.fptrunc(v, F32) if ty == F32 else v


def _copysign(b: ir.IRBuilder, mag: ir.Value, sign: ir.Value) -> ir.Value:
    return b.call(intrinsic(b, "llvm.copysign", F64, 2), [mag, sign])


def _atan_parts(b: ir.IRBuilder, a: ir.Value) -> tuple[ir.Value, ir.Value]:
    """atan(a) = base + small for a >= 0 (inf: pi/2; NaN: NaN), double: base
    is 0, pi/4 or pi/2 (rounded), small the rest, Cephes' MOREBITS included."""
    big = b.fcmp_ordered(">", a, _k(_T3P8))
    mid = b.and_(b.fcmp_ordered(">", a, _k(0.66)), b.not_(big))
    t = b.select(big, b.fdiv(_k(-1.0), a),
                 b.select(mid, b.fdiv(b.fsub(a, _k(1.0)), b.fadd(a, _k(1.0))), a))
    z = b.fmul(t, t)
    w = b.fdiv(b.fmul(z, _poly(b, z, _ATAN_P)), _poly(b, z, _ATAN_Q, monic=True))
    r = b.fadd(b.fmul(t, w), t)
    base = b.select(big, _k(_PIO2), b.select(mid, _k(_PIO4), _k(0.0)))
    more = b.select(big, _k(_MOREBITS), b.select(mid, _k(0.5 * _MOREBITS), _k(0.0)))
    return base, b.fadd(r, more)


def atan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    xd = _f64(b, x)
    base, small = _atan_parts(b, fabs(b, xd))
    return _back(b, _copysign(b, b.fadd(base, small), xd), x.type)


def _asin_d(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """asin of a double (NaN outside [-1, 1])."""
    a = fabs(b, x)
    # |x| > 0.625: pi/2 - 2 asin(sqrt((1 - a)/2)), in Cephes' split form
    zz = b.fsub(_k(1.0), a)
    p = b.fdiv(b.fmul(zz, _poly(b, zz, _ASIN_R)), _poly(b, zz, _ASIN_S, monic=True))
    s = b.call(intrinsic(b, "llvm.sqrt", F64, 1), [b.fadd(zz, zz)])
    hi = b.fadd(b.fsub(b.fsub(_k(_PIO4), s), b.fsub(b.fmul(s, p), _k(_MOREBITS))), _k(_PIO4))
    # |x| <= 0.625: a + a^3 P(a^2)/Q(a^2)
    z = b.fmul(a, a)
    lo = b.fadd(b.fmul(a, b.fdiv(b.fmul(z, _poly(b, z, _ASIN_P)),
                                 _poly(b, z, _ASIN_Q, monic=True))), a)
    big = b.fcmp_unordered(">", a, _k(0.625))  # NaN takes the branch that keeps it
    return _copysign(b, b.select(big, hi, lo), x)


def asin(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _back(b, _asin_d(b, _f64(b, x)), x.type)


def acos(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """x > 0.5: 2 asin(sqrt((1 - x)/2)); else pi/2 - asin(x) (Cephes acos.c)."""
    xd = _f64(b, x)
    high = b.fcmp_ordered(">", xd, _k(0.5))
    half = b.call(intrinsic(b, "llvm.sqrt", F64, 1), [b.fsub(_k(0.5), b.fmul(_k(0.5), xd))])
    s = _asin_d(b, b.select(high, half, xd))
    rest = b.fadd(b.fadd(b.fsub(_k(_PIO4), s), _k(_MOREBITS)), _k(_PIO4))
    return _back(b, b.select(high, b.fadd(s, s), rest), x.type)


def atan2(b: ir.IRBuilder, y: ir.Value, x: ir.Value) -> ir.Value:
    """C's atan2: atan(|y|/|x|), reflected to pi - a when x's sign bit is set
    (-0.0 included), then given y's sign; both zero or both infinite first
    set the ratio to 0 or 1, which C's special cases come out of."""
    yd, xd = _f64(b, y), _f64(b, x)
    ay, ax = fabs(b, yd), fabs(b, xd)
    inf = _k(math.inf)
    both_inf = b.and_(b.fcmp_ordered("==", ay, inf), b.fcmp_ordered("==", ax, inf))
    both_zero = b.and_(b.fcmp_ordered("==", ay, _k(0.0)), b.fcmp_ordered("==", ax, _k(0.0)))
    t = b.select(both_inf, _k(1.0), b.select(both_zero, _k(0.0), b.fdiv(ay, ax)))
    base, small = _atan_parts(b, t)
    x_neg = b.icmp_signed("<", b.bitcast(xd, ir.IntType(64)), ir.Constant(ir.IntType(64), 0))
    # pi - atan: (pi_hi - base) is exact, and pi's low part (2 MOREBITS) joins the small part
    a = b.select(x_neg, b.fadd(b.fsub(_k(math.pi), base), b.fsub(_k(2 * _MOREBITS), small)),
                 b.fadd(base, small))
    return _back(b, _copysign(b, a, yd), y.type)
