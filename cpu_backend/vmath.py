"""Vectorizable exp, log, tanh, sin and cos (float32/float64), as straight-line IR.

`llvm.exp`/`llvm.tanh` lower to scalar libm calls, which keeps a loop from
vectorizing: tanh over 10M float32 took 128 ms against NumPy's 8 ms (NumPy
has SIMD versions). exp/tanh are the Cephes algorithms (Cody-Waite reduction
by ln 2, a polynomial or Padé form, then scaling by 2**n through the exponent
bits), written only with ops LLVM vectorizes: about 1 ulp, with NaN, +-inf,
overflow and subnormal results handled; expm1 is a Taylor series near 0.
log uses the atanh series. sin/cos:
a branch-free exact reduction (float64: Payne-Hanek in 64-bit integer
arithmetic, valid up to 1e308; float32: exact float64 products with pieces
of 2/pi) and the fdlibm kernels, computed in float64 (float32 rounds once
at the end): within 1 ulp of NumPy for random bit patterns of both dtypes.
pow is in vpow.py.
"""
from __future__ import annotations

import math

from llvmlite import ir

from .lowering import F32, F64, I32, I64, element, intrinsic, like

# Cephes expf: exp(r) = 1 + r + r^2 P(r) for |r| <= ln2/2; exp: Pade form in r^2.
_EXPF_P = [1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2,
           1.6666665459E-1, 5.0000001201E-1]
_EXP_P = [1.26177193074810590878E-4, 3.02994407707441961300E-2, 9.99999999999999999910E-1]
_EXP_Q = [3.00198505138664455042E-6, 2.52448340349684104192E-3, 2.27265548208155028766E-1,
          2.00000000000000000009E0]


def _c(ty: ir.Type, v: float) -> ir.Constant:
    return ir.Constant(ty, v)


def fabs(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """|x| of a float scalar or vector."""
    return b.call(intrinsic(b, "llvm.fabs", x.type, 1), [x])


def _mad(b: ir.IRBuilder, x: ir.Value, y: ir.Value, z: ir.Value, fused: bool) -> ir.Value:
    """x*y + z; `fused`: as one FMA where the target has it (llvm.fmuladd),
    fewer instructions and no less accurate."""
    if fused:
        return b.call(intrinsic(b, "llvm.fmuladd", x.type, 3), [x, y, z])
    return b.fadd(b.fmul(x, y), z)


def _horner(b: ir.IRBuilder, x: ir.Value, coeffs: list[float], fused: bool = False) -> ir.Value:
    acc = _c(x.type, coeffs[0])
    for c in coeffs[1:]:
        acc = _mad(b, acc, x, _c(x.type, c), fused)
    return acc


def _estrin(b: ir.IRBuilder, x: ir.Value, coeffs: list[float], fused: bool = False) -> ir.Value:
    """The polynomial `_horner` evaluates (coefficients highest power
    first), in Estrin's order: pairs c_i + c_(i+1) x, then pairs of those
    with x^2, x^4, ...: a dependency chain of log2(degree) steps instead of
    degree steps, for long polynomials that would be latency-bound."""
    c = [_c(x.type, v) for v in reversed(coeffs)]
    terms = [_mad(b, c[i + 1], x, c[i], fused) if i + 1 < len(c) else c[i]
             for i in range(0, len(c), 2)]
    power = b.fmul(x, x)
    while len(terms) > 1:
        terms = [_mad(b, terms[i + 1], power, terms[i], fused) if i + 1 < len(terms)
                 else terms[i] for i in range(0, len(terms), 2)]
        power = b.fmul(power, power)
    return terms[0]


def _pow2(b: ir.IRBuilder, n: ir.Value, ty: ir.Type) -> ir.Value:
    """2**n for n in the normal exponent range, from the bits."""
    if element(ty) == F32:
        bits = b.shl(b.add(n, ir.Constant(n.type, 127)), ir.Constant(n.type, 23))
    else:
        bits = b.shl(b.add(n, ir.Constant(n.type, 1023)), ir.Constant(n.type, 52))
    return b.bitcast(bits, ty)


def exp(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    ty = x.type
    f32 = element(ty) == F32
    it = like(ty, I32 if f32 else I64)
    if f32:
        hi, lo, c1, c2 = 88.72283935546875, -103.97208404541016, 0.693359375, -2.12194440e-4
    else:
        hi, lo = 709.782712893384, -745.1332191019412
        c1, c2 = 6.93145751953125E-1, 1.42860682030941723212E-6
    rint = intrinsic(b, "llvm.rint", ty, 1)
    xc = b.select(b.fcmp_ordered(">", x, _c(ty, hi)), _c(ty, hi), x)
    xc = b.select(b.fcmp_ordered("<", xc, _c(ty, lo)), _c(ty, lo), xc)
    n = b.call(rint, [b.fmul(xc, _c(ty, 1 / math.log(2)))])
    r = b.fsub(b.fsub(xc, b.fmul(n, _c(ty, c1))), b.fmul(n, _c(ty, c2)))
    if f32:
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


# expm1 near 0: x + x^2 (1/2! + x/3! + ... + x^23/25!), the Taylor series
# to where its terms fall below float64's last bit for |x| <= 2
_EXPM1_TAYLOR = [1 / math.factorial(n) for n in range(25, 1, -1)]
# float32's, in float64 after reduction by ln 2 (|r| <= 0.35): to 2^-30
_EXPM1F_TAYLOR = [1 / math.factorial(n) for n in range(9, 1, -1)]


def expm1(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """exp(x) - 1 without cancellation near 0 (-0.0 kept, NaN passed).

    float64: for -1/2 <= x <= 2 the Taylor series as x + x^2 P(x), exact
    in its leading term (further down its alternating terms cancel);
    beyond, exp(x) - 1, which cancels little there (|e^x - 1| > 0.39). float32, in float64 and rounded once: x = n ln2 + r, then
    2^n (e^r - 1) + (2^n - 1) with a short series for e^r - 1 (float32
    needs 30 bits of it, not 53), no float64 exp."""
    ty = x.type
    if element(ty) == F32:
        dt = like(ty, F64)
        wide = b.fpext(x, dt)
        xc = b.select(b.fcmp_ordered(">", wide, _c(dt, 100.0)), _c(dt, 100.0), wide)
        xc = b.select(b.fcmp_ordered("<", xc, _c(dt, -150.0)), _c(dt, -150.0), xc)
        n = b.call(intrinsic(b, "llvm.rint", dt, 1), [b.fmul(xc, _c(dt, 1 / math.log(2)))])
        r = b.fsub(xc, b.fmul(n, _c(dt, math.log(2))))
        em1 = b.fadd(r, b.fmul(b.fmul(r, r), _estrin(b, r, _EXPM1F_TAYLOR)))
        scale = _pow2(b, b.fptosi(n, like(ty, I64)), dt)
        out = b.fptrunc(b.fadd(b.fmul(scale, em1), b.fsub(scale, _c(dt, 1.0))), ty)
    else:
        small = b.fadd(x, b.fmul(b.fmul(x, x), _estrin(b, x, _EXPM1_TAYLOR)))
        big = b.fsub(exp(b, x), _c(ty, 1.0))
        near = b.and_(b.fcmp_ordered(">=", x, _c(ty, -0.5)), b.fcmp_ordered("<=", x, _c(ty, 2.0)))
        out = b.select(near, small, big)
    keep = b.or_(b.fcmp_ordered("==", x, _c(ty, 0.0)), b.fcmp_unordered("uno", x, x))
    return b.select(keep, x, out)


_TANH = [21844 / 6081075, -1382 / 155925, 62 / 2835, -17 / 315, 2 / 15, -1 / 3]


def tanh32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """|x| < 0.5: odd Taylor polynomial to x**13; else sign(x)(1 - 2/(e^2|x| + 1))."""
    ty = x.type
    ax = fabs(b, x)
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
    ax = fabs(b, x)
    xx = b.fmul(x, x)
    ratio = b.fdiv(_horner(b, xx, _TANH_P), _horner(b, xx, _TANH_Q))
    small = b.fadd(x, b.fmul(b.fmul(x, xx), ratio))
    e = exp(b, b.fmul(ax, _c(ty, 2.0)))
    big = b.fsub(_c(ty, 1.0), b.fdiv(_c(ty, 2.0), b.fadd(e, _c(ty, 1.0))))
    big = b.call(intrinsic(b, "llvm.copysign", ty, 2), [big, x])
    small = b.select(b.fcmp_ordered("==", x, _c(ty, 0.0)), x, small)  # keep -0.0
    return b.select(b.fcmp_ordered("<", ax, _c(ty, 0.625)), small, big)


def split_sqrt2(b: ir.IRBuilder, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(e, m), e an integer in x's float type, with x = 2**e m and m in
    [sqrt(1/2), sqrt(2)), for finite positive x (subnormals included): the
    reduction of log and of pow (vpow.py)."""
    ty = x.type
    f32 = element(ty) == F32
    it, mant, bias = (like(ty, I32), 23, 127) if f32 else (like(ty, I64), 52, 1023)
    tiny = 2.0 ** (-126 if f32 else -1022)
    sub = b.fcmp_ordered("<", x, _c(ty, tiny))
    xs = b.select(sub, b.fmul(x, _c(ty, 2.0 ** mant)), x)  # subnormals -> normal
    bits = b.bitcast(xs, it)
    e = b.sub(b.and_(b.lshr(bits, ir.Constant(it, mant)), ir.Constant(it, 0xFF if f32 else 0x7FF)),
              ir.Constant(it, bias))
    e = b.sub(e, b.select(sub, ir.Constant(it, mant), ir.Constant(it, 0)))
    m = b.bitcast(b.or_(b.and_(bits, ir.Constant(it, (1 << mant) - 1)),
                        ir.Constant(it, bias << mant)), ty)  # [1, 2)
    halve = b.fcmp_ordered(">", m, _c(ty, math.sqrt(2.0)))
    m = b.select(halve, b.fmul(m, _c(ty, 0.5)), m)
    return b.sitofp(b.add(e, b.zext(halve, it)), ty), m


def log(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """log(x) = e ln2 + 2 atanh(s), s = (m-1)/(m+1), m in [sqrt(1/2), sqrt(2)).

    |s| <= 0.1716, so the atanh series in s^2 (coefficients 1/(2k+1)) needs 5
    terms for float32 and 11 for float64; ln2 is split so e*ln2_hi is exact.
    """
    ty = x.type
    f32 = element(ty) == F32
    fe, m = split_sqrt2(b, x)
    s = b.fdiv(b.fsub(m, _c(ty, 1.0)), b.fadd(m, _c(ty, 1.0)))
    s2 = b.fmul(s, s)
    terms = 5 if f32 else 11
    poly = _horner(b, s2, [1.0 / (2 * k + 1) for k in range(terms, 0, -1)])
    two_s = b.fmul(s, _c(ty, 2.0))
    lm = b.fadd(two_s, b.fmul(b.fmul(two_s, s2), poly))
    r = b.fadd(b.fmul(fe, _c(ty, 0.693359375)),
               b.fadd(lm, b.fmul(fe, _c(ty, -2.121944400546905827679e-4))))
    return _log_specials(b, x, r)


def _log_specials(b: ir.IRBuilder, x: ir.Value, r: ir.Value) -> ir.Value:
    """A logarithm `r` of finite positive `x`, with C's answers elsewhere:
    log(inf) = inf, log(+-0) = -inf, log(x < 0) = NaN, NaN passed through."""
    ty = x.type
    r = b.select(b.fcmp_ordered("==", x, _c(ty, math.inf)), x, r)
    r = b.select(b.fcmp_ordered("==", x, _c(ty, 0.0)), _c(ty, -math.inf), r)
    r = b.select(b.fcmp_ordered("<", x, _c(ty, 0.0)), _c(ty, math.nan), r)
    return b.select(b.fcmp_unordered("uno", x, x), x, r)


_LOG10_2 = (0.3010299956640665, -8.532344317057107e-14)  # hi has 40 bits: e * hi is exact
_INV_LN10 = (0.4342944819032518, 1.098319650216765e-17)   # 1/ln 10, hi + lo (from mpmath)


def log10_64(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """float64 log10 within about half an ulp, vectorizable.

    `log(x) * (1/ln 10)` rounds twice on top of log's own ulp or two: 3-5 ulp
    off near x = 1. Here log(m) = 2s + 2s s^2 P(s^2) keeps s = (m-1)/(m+1)'s
    division remainder (s_lo), the product with 1/ln 10 is a double-double
    (FMA-exact), e log10(2) is split so that e * hi is exact, and the last
    sum is a TwoSum.
    """
    one = _c(x.type, 1.0)
    fma = intrinsic(b, "llvm.fma", x.type, 3)
    fe, m = split_sqrt2(b, x)
    f = b.fsub(m, one)                      # exact: m is within a factor 2 of 1
    g, g_lo = _two_sum(b, m, one)           # m + 1 == g + g_lo exactly
    inv = b.fdiv(one, g)                    # the one division
    s = b.fmul(f, inv)
    rem = b.fsub(b.call(fma, [b.fneg(s), g, f]), b.fmul(s, g_lo))
    s_lo = b.fmul(rem, inv)                 # f / (m + 1) == s + s_lo, nearly exactly
    s2 = b.fmul(s, s)
    poly = _horner(b, s2, [1.0 / (2 * k + 1) for k in range(11, 0, -1)])
    t = b.fmul(s, _c(x.type, 2.0))             # exact
    tail = b.fadd(b.fmul(s_lo, _c(x.type, 2.0)), b.fmul(b.fmul(t, s2), poly))
    c_hi, c_lo = _c(x.type, _INV_LN10[0]), _c(x.type, _INV_LN10[1])
    p = b.fmul(t, c_hi)
    low = b.fadd(b.fadd(b.call(fma, [t, c_hi, b.fneg(p)]), b.fmul(t, c_lo)), b.fmul(tail, c_hi))
    hi, err = _two_sum(b, b.fmul(fe, _c(x.type, _LOG10_2[0])), p)
    r = b.fadd(hi, b.fadd(err, b.fadd(low, b.fmul(fe, _c(x.type, _LOG10_2[1])))))
    return _log_specials(b, x, r)


# -- sin / cos ---------------------------------------------------------------------------
# Reduction x = n pi/2 + r, |r| <= pi/4, for every finite x without branches or
# libm calls: Payne-Hanek in 64-bit integers (x's 53-bit mantissa times a
# 192-bit window of 2/pi chosen by the exponent, from a table of 64-bit
# words). Then the fdlibm kernels on the double-double r. float32 runs in
# float64 and rounds once at the end. About 0.5-1 ulp everywhere, including
# |x| near 1e308, where NumPy/libm are exact too.
_ZBITS = 64         # zero bits before 2/pi in the table: window start e - 54 + 64 >= 0
_WORDS = 21         # covers the largest exponent (inf/NaN lanes too: e = 1024)


def _pi_scaled(prec: int) -> int:
    """pi * 2**prec, to within a few units (Machin's formula)."""
    def atan_inv(n: int) -> int:  # atan(1/n) * 2**prec
        total, term, k, sign = 0, (1 << prec) // n, 1, 1
        while term:
            total += sign * (term // k)
            term //= n * n
            k += 2
            sign = -sign
        return total
    return 16 * atan_inv(5) - 4 * atan_inv(239)


def _two_over_pi_words() -> list[int]:
    """64-bit words of (64 zero bits, then the bits of 2/pi), exact."""
    nbits = 64 * (_WORDS - 1)
    prec = nbits + 128
    bits = (1 << (nbits + 1 + prec)) // _pi_scaled(prec)  # floor(2/pi * 2**nbits)
    return [0] + [(bits >> (64 * (_WORDS - 2 - k))) & (2**64 - 1) for k in range(_WORDS - 1)]


_TWO_OVER_PI = _two_over_pi_words()
_MASK64 = 2**64 - 1


def _u64(v: int) -> ir.Constant:
    """An i64 constant from an unsigned 64-bit value."""
    return ir.Constant(I64, v - 2**64 if v >= 2**63 else v)


def _table(b: ir.IRBuilder) -> ir.GlobalVariable:
    mod = b.module
    g = mod.globals.get("lazy_two_over_pi")
    if g is None:
        ty = ir.ArrayType(I64, _WORDS)
        g = ir.GlobalVariable(mod, ty, name="lazy_two_over_pi")
        g.global_constant = True
        g.linkage = "internal"
        g.initializer = ir.Constant(ty, [_u64(w) for w in _TWO_OVER_PI])
    return g


def _mul_wide(b: ir.IRBuilder, a: ir.Value, w: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(high, low) 64-bit words of a * w, a < 2**53, in 32-bit pieces (no i128,
    which would stop the loop vectorizer)."""
    m32, s32 = _u64(0xFFFFFFFF), ir.Constant(I64, 32)
    al, ah = b.and_(a, m32), b.lshr(a, s32)
    wl, wh = b.and_(w, m32), b.lshr(w, s32)
    ll, lh, hl, hh = b.mul(al, wl), b.mul(al, wh), b.mul(ah, wl), b.mul(ah, wh)
    mid = b.add(b.add(b.lshr(ll, s32), b.and_(lh, m32)), b.and_(hl, m32))
    lo = b.or_(b.shl(mid, s32), b.and_(ll, m32))
    hi = b.add(b.add(hh, b.lshr(lh, s32)), b.add(b.lshr(hl, s32), b.lshr(mid, s32)))
    return hi, lo


def _split(b: ir.IRBuilder, a: ir.Value) -> tuple[ir.Value, ir.Value]:
    """Veltkamp split of a double into two 26-bit halves (exact)."""
    t = b.fmul(a, _c(a.type, 134217729.0))
    hi = b.fsub(t, b.fsub(t, a))
    return hi, b.fsub(a, hi)


def _two_sum(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(x + y rounded, its rounding error), exactly (Knuth's TwoSum)."""
    s = b.fadd(x, y)
    v = b.fsub(s, x)
    return s, b.fadd(b.fsub(x, b.fsub(s, v)), b.fsub(y, v))


_PIO2_HI, _PIO2_LO = 1.5707963267948966, 6.123233995736766e-17


def _rem_pio2(b: ir.IRBuilder, ax: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """|x| (double) -> (n mod 4 as i64, r_hi, r_lo) with |x| = n pi/2 + r."""
    bits = b.bitcast(ax, I64)
    e = b.sub(b.lshr(bits, ir.Constant(I64, 52)), ir.Constant(I64, 1023))
    m = b.or_(b.and_(bits, _u64(2**52 - 1)), _u64(2**52))
    j = b.add(e, ir.Constant(I64, _ZBITS - 54))  # bits of 2/pi that only add multiples of 4
    lo_j, hi_j = ir.Constant(I64, 0), ir.Constant(I64, 64 * (_WORDS - 4))
    j = b.select(b.icmp_signed("<", j, lo_j), lo_j, j)  # lanes |x| < pi/4 are discarded
    j = b.select(b.icmp_signed(">", j, hi_j), hi_j, j)
    q, s = b.lshr(j, ir.Constant(I64, 6)), b.and_(j, ir.Constant(I64, 63))
    tab = _table(b)
    t = [b.load(b.gep(tab, [ir.Constant(I32, 0), b.add(q, ir.Constant(I64, k))], inbounds=True))
         for k in range(4)]
    rs = b.sub(ir.Constant(I64, 63), s)  # (t >> (64 - s)) as (t >> (63 - s)) >> 1: s may be 0
    one = ir.Constant(I64, 1)
    w = [b.or_(b.shl(t[k], s), b.lshr(b.lshr(t[k + 1], rs), one)) for k in range(3)]
    # low 192 bits of m * (w0 w1 w2): |x| 2/pi mod 4 = (T2 T1 T0) / 2**190
    h2, _ = _mul_wide(b, m, w[2])
    h1, l1 = _mul_wide(b, m, w[1])
    l0 = b.mul(m, w[0])
    t1 = b.add(h2, l1)
    t2 = b.add(b.add(h1, l0), b.zext(b.icmp_unsigned("<", t1, l1), I64))
    n = b.lshr(b.add(t2, _u64(2**61)), ir.Constant(I64, 62))  # nearest quadrant, mod 4
    rh = b.sub(t2, b.shl(n, ir.Constant(I64, 62)))  # signed: f * 2**126 = rh * 2**64 + t1
    # f in three exactly convertible pieces: 40 + 53 + 33 bits
    a1 = b.ashr(rh, ir.Constant(I64, 22))
    p2 = b.or_(b.shl(b.and_(rh, _u64(2**22 - 1)), ir.Constant(I64, 31)),
               b.lshr(t1, ir.Constant(I64, 33)))
    p3 = b.and_(t1, _u64(2**33 - 1))
    d1 = b.fmul(b.sitofp(a1, F64), _c(F64, 2.0 ** -40))
    d2 = b.fmul(b.sitofp(p2, F64), _c(F64, 2.0 ** -93))
    d3 = b.fmul(b.sitofp(p3, F64), _c(F64, 2.0 ** -126))
    s1, e1 = _two_sum(b, d1, d2)
    fh, fl = _two_sum(b, s1, b.fadd(e1, d3))
    return _unreduced_if_small(b, ax, n, fh, fl)


def _unreduced_if_small(b: ir.IRBuilder, ax: ir.Value, n: ir.Value, fh: ir.Value,
                        fl: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(n, r_hi, r_lo) with r = f pi/2 for f = fh + fl, |f| <= 1/2; but |x| itself
    when |x| <= pi/4 (no reduction at all: also every subnormal, zero)."""
    ty = ax.type
    # r = f * pi/2 in double-double (Dekker product: no FMA needed)
    ph = b.fmul(fh, _c(ty, _PIO2_HI))
    ah, al = _split(b, fh)
    bh, bl = _split(b, _c(ty, _PIO2_HI))
    err = b.fadd(b.fadd(b.fadd(b.fsub(b.fmul(ah, bh), ph), b.fmul(ah, bl)), b.fmul(al, bh)),
                 b.fmul(al, bl))
    err = b.fadd(err, b.fadd(b.fmul(fh, _c(ty, _PIO2_LO)), b.fmul(fl, _c(ty, _PIO2_HI))))
    rhi, rlo = _two_sum(b, ph, err)
    small = b.fcmp_ordered("<=", ax, _c(ty, math.pi / 4))
    return (b.select(small, ir.Constant(n.type, 0), n), b.select(small, ax, rhi),
            b.select(small, _c(ty, 0.0), rlo))


def _two_over_pi_pieces(bits: int, count: int) -> list[float]:
    """2/pi's binary digits after the point, `bits` at a time, each piece a
    double (exact: an integer below 2**bits times a power of two)."""
    total = 64 * (_WORDS - 1)
    big = sum(w << (64 * (_WORDS - 2 - k)) for k, w in enumerate(_TWO_OVER_PI[1:]))
    return [math.ldexp((big >> (total - bits * (j + 1))) & ((1 << bits) - 1), -bits * (j + 1))
            for j in range(count)]


# float32 |x| < 2**128 has a 24-bit mantissa, so |x| times a 28-bit piece of
# 2/pi is exact in a double; eight pieces leave out less than 2**128 * 2**-224.
_PIECES = _two_over_pi_pieces(28, 8)


def _rem_pio2_f32(b: ir.IRBuilder, ax: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """_rem_pio2 for |x| that is a float32 value: |x| 2/pi mod 4 as a sum of
    exact products, each taken mod 4 exactly (p - 4 floor(p/4)), added in
    double-double. Only float64 multiplies, adds and floors (no table, no
    64-bit integer multiplies), so `ax` may also be a vector (sincos.py)."""
    ty = ax.type
    floor = intrinsic(b, "llvm.floor", ty, 1)
    s, e = None, _c(ty, 0.0)
    for piece in _PIECES:
        p = b.fmul(ax, _c(ty, piece))
        m = b.fsub(p, b.fmul(b.call(floor, [b.fmul(p, _c(ty, 0.25))]), _c(ty, 4.0)))
        if s is None:
            s = m
        else:
            s, err = _two_sum(b, s, m)
            e = b.fadd(e, err)
    q = b.call(intrinsic(b, "llvm.rint", ty, 1), [s])  # nearest quadrant (< 32)
    fh, fl = _two_sum(b, b.fsub(s, q), e)
    ity = like(ty, I64)
    n = b.and_(b.fptosi(q, ity), ir.Constant(ity, 3))
    return _unreduced_if_small(b, ax, n, fh, fl)


_S = [1.58969099521155010221e-10, -2.50507602534068634195e-08, 2.75573137070700676789e-06,
      -1.98412698298579493134e-04, 8.33333333332248946124e-03]
_S1 = -1.66666666666666324348e-01
_C_LO = [-1.13596475577881948265e-11, 2.08757232129817482790e-09, -2.75573143513906633035e-07]
_C_HI = [2.48015872894767294178e-05, -1.38888888888741095749e-03, 4.16666666666666019037e-02]


def _k_sin(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """fdlibm __kernel_sin(x, y, 1): sin(x + y), |x| <= pi/4 (x scalar or vector)."""
    z = b.fmul(x, x)
    v = b.fmul(z, x)
    r = _horner(b, z, _S)
    inner = b.fsub(b.fmul(z, b.fsub(b.fmul(_c(x.type, 0.5), y), b.fmul(v, r))), y)
    return b.fsub(x, b.fsub(inner, b.fmul(v, _c(x.type, _S1))))


def _k_cos(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """FreeBSD __kernel_cos(x, y): cos(x + y), |x| <= pi/4 (x scalar or vector)."""
    one = _c(x.type, 1.0)
    z = b.fmul(x, x)
    w = b.fmul(z, z)
    r = b.fadd(b.fmul(z, _horner(b, z, _C_HI)), b.fmul(b.fmul(w, w), _horner(b, z, _C_LO)))
    hz = b.fmul(_c(x.type, 0.5), z)
    w = b.fsub(one, hz)
    return b.fadd(w, b.fadd(b.fsub(b.fsub(one, w), hz), b.fsub(b.fmul(z, r), b.fmul(x, y))))


def _sincos(b: ir.IRBuilder, x: ir.Value, fn: str) -> ir.Value:
    """sin, cos or tan (`fn`) of a float64 value, or of float32 values (scalar
    or vector)."""
    ty = x.type
    single = element(ty) != F64
    dty = like(ty, F64)
    xd = b.fpext(x, dty) if single else x
    ax = fabs(b, xd)
    n, rh, rl = (_rem_pio2_f32 if single else _rem_pio2)(b, ax)
    ks, kc = _k_sin(b, rh, rl), _k_cos(b, rh, rl)
    odd = b.trunc(n, like(ty, ir.IntType(1)))           # quadrant 1 or 3: swap sin/cos
    flip = b.icmp_unsigned("!=", b.and_(n, ir.Constant(n.type, 2)), ir.Constant(n.type, 0))
    zero = _c(dty, 0.0)
    if fn == "sin":    # +s, +c, -s, -c; odd in x
        v = b.select(odd, kc, ks)
        neg = b.xor(flip, b.fcmp_ordered("<", xd, zero))
    elif fn == "cos":  # +c, -s, -c, +s; even in x
        v = b.select(odd, ks, kc)
        neg = b.xor(flip, odd)
    else:              # tan: s/c, -c/s (period pi); odd in x
        v = b.select(odd, b.fneg(b.fdiv(kc, ks)), b.fdiv(ks, kc))
        neg = b.fcmp_ordered("<", xd, zero)
    v = b.select(neg, b.fneg(v), v)
    v = b.select(b.fcmp_ordered("==", xd, zero), _c(dty, 1.0) if fn == "cos" else xd, v)
    v = b.select(b.fcmp_ordered("ord", b.fsub(xd, xd), zero), v, b.fsub(xd, xd))
    return b.fptrunc(v, ty) if single else v


def sin(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _sincos(b, x, "sin")


def cos(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _sincos(b, x, "cos")


def tan(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _sincos(b, x, "tan")
