"""Counter-based random numbers (Philox4x32-10) as straight-line LLVM IR.

The emitters of the `philox_*` ops (`scheduler/ops.py` holds the NumPy
reference and says how words become numbers). Every step is an integer or
IEEE float64 operation LLVM vectorizes: the 32x32->64 multiplies are i64
multiplies of zero-extended i32 words (vpmuludq), the key schedule depends
only on the seed and is hoisted out of the loop. Uniforms are bit-identical
to the reference. Normals use the reference's exact reduction of
cos(2 pi u2) and vmath's log and fdlibm sin/cos kernels: within an ulp or
two of NumPy in float64, and the same bits in float32 except where the
float64 value sits within that error of a float32 rounding boundary.
"""
from __future__ import annotations

from llvmlite import ir

from scheduler.ops import PHILOX_M, PHILOX_W

from .lowering import F32, F64, I32, I64, intrinsic
from .vmath import _k_cos, _k_sin, log

_TWO_PI = 6.283185307179586


def _i32(v: int) -> ir.Constant:
    return ir.Constant(I32, v)


def _i64(v: int) -> ir.Constant:
    return ir.Constant(I64, v)


def words(b: ir.IRBuilder, counter: ir.Value, seed: ir.Value) -> list[ir.Value]:
    """The four i32 output words of philox4x32_10((counter lo, hi, 0, 0), seed)."""
    c = [b.trunc(counter, I32), b.trunc(b.lshr(counter, _i64(32)), I32), _i32(0), _i32(0)]
    k0, k1 = b.trunc(seed, I32), b.trunc(b.lshr(seed, _i64(32)), I32)
    m0, m1 = _i64(PHILOX_M[0]), _i64(PHILOX_M[1])
    for r in range(10):
        if r:
            k0, k1 = b.add(k0, _i32(PHILOX_W[0])), b.add(k1, _i32(PHILOX_W[1]))
        p0 = b.mul(b.zext(c[0], I64), m0)
        p1 = b.mul(b.zext(c[2], I64), m1)
        hi0, lo0 = b.trunc(b.lshr(p0, _i64(32)), I32), b.trunc(p0, I32)
        hi1, lo1 = b.trunc(b.lshr(p1, _i64(32)), I32), b.trunc(p1, I32)
        c = [b.xor(b.xor(hi1, c[1]), k0), lo1, b.xor(b.xor(hi0, c[3]), k1), lo0]
    return c


def _bits53(b: ir.IRBuilder, hi: ir.Value, lo: ir.Value) -> ir.Value:
    """float64 of the top 53 bits of (hi << 32 | lo) (exact)."""
    x = b.or_(b.shl(b.zext(hi, I64), _i64(21)), b.lshr(b.zext(lo, I64), _i64(11)))
    return b.sitofp(x, F64)


def uniform_f32(b: ir.IRBuilder, d, counter: ir.Value, seed: ir.Value) -> ir.Value:
    w = words(b, counter, seed)
    return b.fmul(b.sitofp(b.lshr(w[0], _i32(8)), F32), ir.Constant(F32, 2.0 ** -24))


def uniform_f64(b: ir.IRBuilder, d, counter: ir.Value, seed: ir.Value) -> ir.Value:
    w = words(b, counter, seed)
    return b.fmul(_bits53(b, w[1], w[0]), ir.Constant(F64, 2.0 ** -53))


def _cos_2pi(b: ir.IRBuilder, u: ir.Value) -> ir.Value:
    """cos(2 pi u), u in [0, 1): the reference's reduction (ops.cos_2pi)."""
    c = lambda v: ir.Constant(F64, v)  # noqa: E731
    q = b.call(intrinsic(b, "llvm.floor", F64, 1), [b.fmul(u, c(4.0))])
    r = b.fsub(u, b.fmul(q, c(0.25)))
    swap = b.fcmp_ordered(">", r, c(0.125))
    t = b.fmul(b.select(swap, b.fsub(c(0.25), r), r), c(_TWO_PI))
    qi = b.fptosi(q, I32)
    odd = b.trunc(qi, ir.IntType(1))
    v = b.select(b.icmp_unsigned("==", odd, swap), _k_cos(b, t, c(0.0)), _k_sin(b, t, c(0.0)))
    neg = b.icmp_unsigned("==", b.and_(b.add(qi, _i32(1)), _i32(2)), _i32(2))  # q in {1, 2}
    return b.select(neg, b.fneg(v), v)


def _box_muller(b: ir.IRBuilder, u1: ir.Value, u2: ir.Value) -> ir.Value:
    rad = b.call(intrinsic(b, "llvm.sqrt", F64, 1), [b.fmul(ir.Constant(F64, -2.0), log(b, u1))])
    return b.fmul(rad, _cos_2pi(b, u2))


def normal_f32(b: ir.IRBuilder, d, counter: ir.Value, seed: ir.Value) -> ir.Value:
    w = words(b, counter, seed)
    scale = ir.Constant(F64, 2.0 ** -32)
    u1 = b.fmul(b.sitofp(b.add(b.zext(w[0], I64), _i64(1)), F64), scale)
    u2 = b.fmul(b.sitofp(b.zext(w[1], I64), F64), scale)
    return b.fptrunc(_box_muller(b, u1, u2), F32)


def normal_f64(b: ir.IRBuilder, d, counter: ir.Value, seed: ir.Value) -> ir.Value:
    w = words(b, counter, seed)
    scale = ir.Constant(F64, 2.0 ** -53)
    u1 = b.fmul(b.fadd(_bits53(b, w[1], w[0]), ir.Constant(F64, 1.0)), scale)
    u2 = b.fmul(_bits53(b, w[3], w[2]), scale)
    return _box_muller(b, u1, u2)


EMITTERS = {
    "philox_uniform_f32": uniform_f32,
    "philox_uniform_f64": uniform_f64,
    "philox_normal_f32": normal_f32,
    "philox_normal_f64": normal_f64,
}
