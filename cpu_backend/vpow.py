"""Vectorizable float pow(x, y) (float32 and float64), as straight-line IR.

Why: `llvm.pow` lowers to one libm call per element, which keeps the loop
scalar: 4M float32 took 14-27 ms on two threads against NumPy's 3.6 ms
(NumPy has AVX-512 versions), float64 32-56 against 11.5. glibc's vector
`powf` was tried before and was slower than NumPy (docs/performance.md).

How: |x|**y = exp(y ln|x|), with ln|x| = e ln2 + 2 atanh(s), s = (m-1)/(m+1)
for |x| = 2**e m, m in [sqrt(1/2), sqrt(2)), then exp by reduction by ln 2
and a Taylor polynomial. The error of ln|x| is multiplied by |y ln|x||
(up to ~745), so:

- float32 runs in float64 and rounds once: ln to ~2**-39 (relative) and
  exp to ~2**-37 leave the result within ~0.51 ulp of float32 (shorter
  series than full float64 accuracy would need);
- float64 carries ln|x| and y ln|x| as double-doubles (hi + lo, with FMA
  for the exact product errors; the series' terms down to s^5 too), so
  the result is within ~0.9 ulp.

NaN results are the canonical quiet NaN, except that a NaN operand's bits
pass through (as x + y gives them).

The special cases of C99 Annex F, which NumPy follows (pow(x, 0) = 1 even
for NaN x, pow(1, y) = 1 even for NaN y, pow(-1, +-inf) = 1, signed zeros
and infinities for odd integer y, NaN for a negative base with a non-integer
finite y), are selects on the core result; the core itself only ever sees
finite positive |x| and finite y, so no lane computes from inf or NaN.
"""
from __future__ import annotations

import math

from llvmlite import ir

from .lowering import F32, F64, I1, I64, intrinsic
from .vmath import _c, _estrin, _horner, fabs, split_sqrt2

# fdlibm's split of ln 2: e * _LN2_HI is exact for |e| < 2**20
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10
# exp(r) - 1 - r = r^2 (1/2! + r/3! + ...), |r| <= ln2/2: the first term
# left out is 2**-58 (float64) and 2**-37 (float32) of the result
_EXP_TAYLOR64 = [1 / math.factorial(n) for n in range(13, 1, -1)]
_EXP_TAYLOR32 = [1 / math.factorial(n) for n in range(9, 1, -1)]
# 2 atanh(s) = 2s + 2s^3 (1/3 + s^2/5 + ...), |s| <= 0.1716: the first term
# left out is 2**-80 (float64) and 2**-39 (float32) of 2s. float64 sums
# (2/3) s^3 and (2/5) s^5 as double-doubles and the rest from 2 s^7 / 7 on
_ATANH64 = [1 / (2 * k + 1) for k in range(13, 2, -1)]
_TWO_THIRDS = (2 / 3, 3.700743415417188e-17)  # as double-doubles
_TWO_FIFTHS = (2 / 5, -2.2204460492503132e-17)
_ATANH32 = [1 / (2 * k + 1) for k in range(6, 0, -1)]


def _fma(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
    return b.call(intrinsic(b, "llvm.fma", x.type, 3), [x, y, z])


def _dd_mul(b: ir.IRBuilder, x: tuple, y: tuple) -> tuple[ir.Value, ir.Value]:
    """The product of two double-doubles (hi, lo), to about 2**-104 of it."""
    p = b.fmul(x[0], y[0])
    err = _fma(b, x[0], y[0], b.fneg(p))  # exact
    return p, b.fadd(err, b.fadd(b.fmul(x[0], y[1]), b.fmul(x[1], y[0])))


def _exp_dd(b: ir.IRBuilder, t_hi: ir.Value, t_lo: ir.Value, taylor: list[float],
            f64_result: bool) -> ir.Value:
    """exp(t_hi + t_lo) for -746 <= t_hi <= 710 (0 and inf beyond float64's range).

    t = n ln2 + r: t_hi - n ln2_hi is exact, and the low parts join r after
    it. For a float64 result, 1 + r_hi is split exactly (Fast2Sum), so e^r
    is rounded once, and 2**n is applied in two halves, so that overflow and
    subnormal results come out (a subnormal one is rounded from the 53-bit
    e^r, a second rounding). For a float32 result |t| <= 300: 2**n is one
    normal double, and a double's roundings are far below float32's."""
    n = b.call(intrinsic(b, "llvm.rint", F64, 1), [b.fmul(t_hi, _c(F64, 1 / math.log(2)))])
    r_hi = b.fsub(t_hi, b.fmul(n, _c(F64, _LN2_HI)))
    r_lo = b.fsub(t_lo, b.fmul(n, _c(F64, _LN2_LO)))
    r = b.fadd(r_hi, r_lo)
    tail = b.fadd(r_lo, b.fmul(b.fmul(r, r), _estrin(b, r, taylor, fused=True)))  # e^r-1-r_hi
    one = _c(F64, 1.0)
    ni = b.fptosi(n, I64)

    def pow2(k: ir.Value) -> ir.Value:
        return b.bitcast(b.shl(b.add(k, ir.Constant(I64, 1023)), ir.Constant(I64, 52)), F64)
    if not f64_result:
        return b.fmul(b.fadd(one, b.fadd(r_hi, tail)), pow2(ni))
    head = b.fadd(one, r_hi)  # |r_hi| < 1: Fast2Sum
    p = b.fadd(head, b.fadd(b.fsub(r_hi, b.fsub(head, one)), tail))
    n1 = b.ashr(ni, ir.Constant(I64, 1))
    return b.fmul(b.fmul(p, pow2(n1)), pow2(b.sub(ni, n1)))


def _clamp(b: ir.IRBuilder, t: ir.Value, lo: float, hi: float) -> ir.Value:
    t = b.select(b.fcmp_ordered(">", t, _c(F64, hi)), _c(F64, hi), t)
    return b.select(b.fcmp_ordered("<", t, _c(F64, lo)), _c(F64, lo), t)


def _core32(b: ir.IRBuilder, ax: ir.Value, y: ir.Value) -> ir.Value:
    """|x|**y in float64 to ~2**-35 (float32 needs 2**-24), for finite
    positive ax and finite y (doubles)."""
    fe, m = split_sqrt2(b, ax)
    s = b.fdiv(b.fsub(m, _c(F64, 1.0)), b.fadd(m, _c(F64, 1.0)))
    s2 = b.fmul(s, s)
    two_s = b.fmul(s, _c(F64, 2.0))
    lm = b.fadd(two_s, b.fmul(b.fmul(two_s, s2), _horner(b, s2, _ATANH32, fused=True)))
    ln = b.fadd(b.fmul(fe, _c(F64, _LN2_HI)), b.fadd(lm, b.fmul(fe, _c(F64, _LN2_LO))))
    # float32 results are 0 or inf far inside +-300: clamping keeps 2**n in range
    t = _clamp(b, b.fmul(y, ln), -300.0, 300.0)
    return _exp_dd(b, t, _c(F64, 0.0), _EXP_TAYLOR32, f64_result=False)


def _core64(b: ir.IRBuilder, ax: ir.Value, y: ir.Value) -> ir.Value:
    """|x|**y to ~0.9 ulp, for finite positive ax and finite y: ln|x| and
    y ln|x| as double-doubles."""
    fe, m = split_sqrt2(b, ax)
    a = b.fsub(m, _c(F64, 1.0))  # exact (Sterbenz)
    d_hi = b.fadd(m, _c(F64, 1.0))
    d_lo = b.fsub(m, b.fsub(d_hi, _c(F64, 1.0)))  # m + 1 = d_hi + d_lo exactly
    s = b.fdiv(a, d_hi)
    # a - s (d_hi + d_lo): the first product's error is exact through FMA
    s_lo = b.fdiv(b.fsub(_fma(b, b.fneg(s), d_hi, a), b.fmul(s, d_lo)), d_hi)
    # 2 atanh(s) = 2s + (2/3) s^3 + (2/5) s^5 + 2 s^7 (1/7 + s^2/9 + ...): the
    # first three terms as double-doubles, the rest plain (|s| <= 0.1716)
    s1 = (s, s_lo)
    s2 = _dd_mul(b, s1, s1)
    s3 = _dd_mul(b, s2, s1)
    s5 = _dd_mul(b, s3, s2)
    u = _dd_mul(b, s3, tuple(_c(F64, c) for c in _TWO_THIRDS))
    v = _dd_mul(b, s5, tuple(_c(F64, c) for c in _TWO_FIFTHS))
    two = _c(F64, 2.0)
    rest = b.fmul(b.fmul(b.fmul(s5[0], s2[0]), two), _horner(b, s2[0], _ATANH64, fused=True))
    # e ln2_hi (exact) + 2s + u + v, each a Fast2Sum (the running sum is the
    # larger operand, or zero); their errors join the low part
    head = b.fmul(fe, _c(F64, _LN2_HI))
    lo = b.fadd(b.fadd(b.fmul(s_lo, two), b.fadd(u[1], v[1])),
                b.fadd(rest, b.fmul(fe, _c(F64, _LN2_LO))))
    for term in (b.fmul(s, two), u[0], v[0]):
        total = b.fadd(head, term)
        lo = b.fadd(lo, b.fsub(term, b.fsub(total, head)))
        head = total
    l_hi = b.fadd(head, lo)
    l_lo = b.fsub(lo, b.fsub(l_hi, head))
    t_hi = b.fmul(y, l_hi)
    t_lo = b.fadd(_fma(b, y, l_hi, b.fneg(t_hi)), b.fmul(y, l_lo))
    tc = _clamp(b, t_hi, -746.0, 710.0)  # beyond: 0 or inf, and t_lo may be inf/NaN
    t_lo = b.select(b.fcmp_ordered("==", tc, t_hi), t_lo, _c(F64, 0.0))
    return _exp_dd(b, tc, t_lo, _EXP_TAYLOR64, f64_result=True)


def pow_(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """x**y for float32 or float64 scalars (the loop vectorizer widens it)."""
    ty = x.type
    inf = math.inf
    ax, ay = fabs(b, x), fabs(b, y)
    ok_x = b.and_(b.fcmp_ordered(">", ax, _c(ty, 0.0)), b.fcmp_ordered("<", ax, _c(ty, inf)))
    finite_y = b.fcmp_ordered("<", ay, _c(ty, inf))
    axs = b.select(ok_x, ax, _c(ty, 1.0))
    ys = b.select(finite_y, y, _c(ty, 0.0))
    if ty == F32:
        mag = b.fptrunc(_core32(b, b.fpext(axs, F64), b.fpext(ys, F64)), F32)
    else:
        mag = _core64(b, axs, ys)
    # |x|**y where x is 0 or inf, or y is +-inf
    y_neg = b.fcmp_ordered("<", y, _c(ty, 0.0))
    zero, one, pinf, ninf = (_c(ty, v) for v in (0.0, 1.0, inf, -inf))
    mag = b.select(b.fcmp_ordered("==", ax, zero), b.select(y_neg, pinf, zero), mag)
    mag = b.select(b.fcmp_ordered("==", ax, pinf), b.select(y_neg, zero, pinf), mag)
    below, above = b.fcmp_ordered("<", ax, one), b.fcmp_ordered(">", ax, one)
    mag = b.select(b.fcmp_ordered("==", y, pinf),
                   b.select(below, zero, b.select(above, pinf, one)), mag)
    mag = b.select(b.fcmp_ordered("==", y, ninf),  # pow(-1, +-inf) = 1 comes out here
                   b.select(below, pinf, b.select(above, zero, one)), mag)
    # a negative base (-0.0 and -inf too): the sign of an odd integer power
    trunc_fn = intrinsic(b, "llvm.trunc", ty, 1)
    y_int = b.fcmp_ordered("==", b.call(trunc_fn, [y]), y)  # inf counts, as an even one
    y_half = b.fmul(y, _c(ty, 0.5))
    y_odd = b.and_(y_int, b.fcmp_ordered("!=", b.call(trunc_fn, [y_half]), y_half))
    ity = ir.IntType(32 if ty == F32 else 64)
    x_neg = b.icmp_signed("<", b.bitcast(x, ity), ir.Constant(ity, 0))
    res = b.select(b.and_(x_neg, y_odd), b.fneg(mag), mag)
    invalid = b.and_(b.and_(b.fcmp_ordered("<", x, zero), b.fcmp_ordered(">", x, ninf)),
                     b.and_(finite_y, b.xor(y_int, ir.Constant(I1, 1))))
    res = b.select(invalid, _c(ty, math.nan), res)
    res = b.select(b.fcmp_unordered("uno", x, y), b.fadd(x, y), res)  # the NaN's own bits
    return b.select(b.or_(b.fcmp_ordered("==", x, one), b.fcmp_ordered("==", y, zero)), one, res)
