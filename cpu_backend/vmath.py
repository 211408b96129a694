"""Vectorizable exp, log and tanh (float32/float64), as straight-line IR.

`llvm.exp`/`llvm.tanh` lower to scalar libm calls, which keeps a loop from
vectorizing: tanh over 10M float32 took 128 ms against NumPy's 8 ms (NumPy
has SIMD versions). These are the Cephes algorithms (Cody-Waite reduction by
ln 2, a polynomial or Padé form, then scaling by 2**n through the exponent
bits), written only with ops LLVM vectorizes: about 1 ulp, with NaN, +-inf,
overflow and subnormal results handled. log uses the atanh series. Others
(sin, cos, pow) stay libm calls.
"""
from __future__ import annotations

import math

from llvmlite import ir

from .lowering import F32, I32, I64, intrinsic

# Cephes expf: exp(r) = 1 + r + r^2 P(r) for |r| <= ln2/2; exp: Pade form in r^2.
_EXPF_P = [1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2,
           1.6666665459E-1, 5.0000001201E-1]
_EXP_P = [1.26177193074810590878E-4, 3.02994407707441961300E-2, 9.99999999999999999910E-1]
_EXP_Q = [3.00198505138664455042E-6, 2.52448340349684104192E-3, 2.27265548208155028766E-1,
          2.00000000000000000009E0]


def _c(ty: ir.Type, v: float) -> ir.Constant:
    return ir.Constant(ty, v)


def _horner(b: ir.IRBuilder, x: ir.Value, coeffs: list[float]) -> ir.Value:
    acc = _c(x.type, coeffs[0])
    for c in coeffs[1:]:
        acc = b.fadd(b.fmul(acc, x), _c(x.type, c))
    return acc


def _pow2(b: ir.IRBuilder, n: ir.Value, ty: ir.Type) -> ir.Value:
    """2**n for n in the normal exponent range, from the bits."""
    if ty == F32:
        bits = b.shl(b.add(n, ir.Constant(I32, 127)), ir.Constant(I32, 23))
    else:
        bits = b.shl(b.add(n, ir.Constant(I64, 1023)), ir.Constant(I64, 52))
    return b.bitcast(bits, ty)


def exp(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    ty = x.type
    it = I32 if ty == F32 else I64
    if ty == F32:
        hi, lo, c1, c2 = 88.72283935546875, -103.97208404541016, 0.693359375, -2.12194440e-4
    else:
        hi, lo = 709.782712893384, -745.1332191019412
        c1, c2 = 6.93145751953125E-1, 1.42860682030941723212E-6
    rint = intrinsic(b, "llvm.rint", ty, 1)
    xc = b.select(b.fcmp_ordered(">", x, _c(ty, hi)), _c(ty, hi), x)
    xc = b.select(b.fcmp_ordered("<", xc, _c(ty, lo)), _c(ty, lo), xc)
    n = b.call(rint, [b.fmul(xc, _c(ty, 1 / math.log(2)))])
    r = b.fsub(b.fsub(xc, b.fmul(n, _c(ty, c1))), b.fmul(n, _c(ty, c2)))
    if ty == F32:
        rr = b.fmul(r, r)
        p = b.fadd(b.fadd(b.fmul(_horner(b, r, _EXPF_P), rr), r), _c(ty, 1.0))
    else:
        rr = b.fmul(r, r)
        px = b.fmul(r, _horner(b, rr, _EXP_P))
        q = b.fdiv(px, b.fsub(_horner(b, rr, _EXP_Q), px))
        p = b.fadd(_c(ty, 1.0), b.fmul(_c(ty, 2.0), q))
    ni = b.fptosi(n, it)
    half = b.ashr(ni, ir.Constant(it, 1))  # 2**n as 2**half * 2**(n-half): subnormals, 2**128
    res = b.fmul(b.fmul(p, _pow2(b, half, ty)), _pow2(b, b.sub(ni, half), ty))
    res = b.select(b.fcmp_ordered(">", x, _c(ty, hi)), _c(ty, math.inf), res)
    res = b.select(b.fcmp_ordered("<", x, _c(ty, lo)), _c(ty, 0.0), res)
    return b.select(b.fcmp_unordered("uno", x, x), x, res)


_TANH = [21844 / 6081075, -1382 / 155925, 62 / 2835, -17 / 315, 2 / 15, -1 / 3]


def tanh32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """|x| < 0.5: odd Taylor polynomial to x**13; else sign(x)(1 - 2/(e^2|x| + 1))."""
    ty = x.type
    ax = b.call(intrinsic(b, "llvm.fabs", ty, 1), [x])
    xx = b.fmul(x, x)
    small = b.fadd(x, b.fmul(b.fmul(x, xx), _horner(b, xx, _TANH)))
    e = exp(b, b.fmul(ax, _c(ty, 2.0)))
    big = b.fsub(_c(ty, 1.0), b.fdiv(_c(ty, 2.0), b.fadd(e, _c(ty, 1.0))))
    big = b.call(intrinsic(b, "llvm.copysign", ty, 2), [big, x])
    small = b.select(b.fcmp_ordered("==", x, _c(ty, 0.0)), x, small)  # keep -0.0
    return b.select(b.fcmp_ordered("<", ax, _c(ty, 0.5)), small, big)


_TANH_P = [-9.64399179425052238628E-1, -9.92877231001918586564E1, -1.61468768441708447952E3]
_TANH_Q = [1.0, 1.12811678491632931402E2, 2.23548839060100448583E3, 4.84406305325125486048E3]


def tanh64(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """Cephes tanh: |x| < 0.625: x + x^3 P(x^2)/Q(x^2); else sign(x)(1 - 2/(e^2|x| + 1))."""
    ty = x.type
    ax = b.call(intrinsic(b, "llvm.fabs", ty, 1), [x])
    xx = b.fmul(x, x)
    ratio = b.fdiv(_horner(b, xx, _TANH_P), _horner(b, xx, _TANH_Q))
    small = b.fadd(x, b.fmul(b.fmul(x, xx), ratio))
    e = exp(b, b.fmul(ax, _c(ty, 2.0)))
    big = b.fsub(_c(ty, 1.0), b.fdiv(_c(ty, 2.0), b.fadd(e, _c(ty, 1.0))))
    big = b.call(intrinsic(b, "llvm.copysign", ty, 2), [big, x])
    small = b.select(b.fcmp_ordered("==", x, _c(ty, 0.0)), x, small)  # keep -0.0
    return b.select(b.fcmp_ordered("<", ax, _c(ty, 0.625)), small, big)


def log(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """log(x) = e ln2 + 2 atanh(s), s = (m-1)/(m+1), m in [sqrt(1/2), sqrt(2)).

    |s| <= 0.1716, so the atanh series in s^2 (coefficients 1/(2k+1)) needs 5
    terms for float32 and 11 for float64; ln2 is split so e*ln2_hi is exact.
    """
    ty = x.type
    f32 = ty == F32
    it, mant, bias = (I32, 23, 127) if f32 else (I64, 52, 1023)
    tiny = 2.0 ** (-126 if f32 else -1022)
    sub = b.fcmp_ordered("<", x, _c(ty, tiny))
    xs = b.select(sub, b.fmul(x, _c(ty, 2.0 ** mant)), x)  # subnormals -> normal
    bits = b.bitcast(xs, it)
    e = b.sub(b.and_(b.lshr(bits, ir.Constant(it, mant)), ir.Constant(it, 0xFF if f32 else 0x7FF)),
              ir.Constant(it, bias))
    e = b.sub(e, b.select(sub, ir.Constant(it, mant), ir.Constant(it, 0)))
    m = b.bitcast(b.or_(b.and_(bits, ir.Constant(it, (1 << mant) - 1)),
                        ir.Constant(it, bias << mant)), ty)  # [1, 2)
    big = b.fcmp_ordered(">", m, _c(ty, math.sqrt(2.0)))
    m = b.select(big, b.fmul(m, _c(ty, 0.5)), m)
    e = b.add(e, b.zext(big, it))
    s = b.fdiv(b.fsub(m, _c(ty, 1.0)), b.fadd(m, _c(ty, 1.0)))
    s2 = b.fmul(s, s)
    terms = 5 if f32 else 11
    poly = _horner(b, s2, [1.0 / (2 * k + 1) for k in range(terms, 0, -1)])
    two_s = b.fmul(s, _c(ty, 2.0))
    lm = b.fadd(two_s, b.fmul(b.fmul(two_s, s2), poly))
    fe = b.sitofp(e, ty)
    r = b.fadd(b.fmul(fe, _c(ty, 0.693359375)),
               b.fadd(lm, b.fmul(fe, _c(ty, -2.121944400546905827679e-4))))
    r = b.select(b.fcmp_ordered("==", x, _c(ty, math.inf)), x, r)
    r = b.select(b.fcmp_ordered("==", x, _c(ty, 0.0)), _c(ty, -math.inf), r)
    r = b.select(b.fcmp_ordered("<", x, _c(ty, 0.0)), _c(ty, math.nan), r)
    return b.select(b.fcmp_unordered("uno", x, x), x, r)
