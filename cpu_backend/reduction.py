"""Accumulator rules for the reductions, as LLVM IR.

One `Accumulator` knows, for one `Reduce`, the loop-carried registers
(value, plus the index for argmax/argmin), their identity, how one element
updates them, how per-thread partials combine (in thread order, so the
result does not depend on the thread count beyond float rounding of sums),
and how the carry becomes the `Reduced` value.

Why these forms: float sums/products carry the `reassoc` flag so LLVM's loop
vectorizer may reorder them (accuracy comes from the float64 accumulator of
float32 data); max/min use `llvm.maximum`/`llvm.minimum`, which propagate NaN
as NumPy does and still vectorize; argmax/argmin keep the first occurrence
(strict compare) and let the first NaN win, like `np.argmax`.

logsumexp carries the pair (m, s): the running max and the sum of
exp(x - m). Two pairs combine with one exp (the smaller max is rescaled to
the larger), so an element update, a thread's partial and a CUDA lane all
use the same rule; rows use the blocked form in row_loops.py (block max,
then a vectorized sum of exp(x - max) over the block while it is in L1).
While m is -inf, s is 0; once m is +inf or NaN, s no longer matters: the
result is m + log(s) for a finite m, else m (scipy's logsumexp).
"""
from __future__ import annotations

from typing import Callable

from llvmlite import ir

from scheduler.dtypes import DType, float32, int64
from scheduler.kernel_ir import Cast, Expr, Reduce, Reduced

from .lowering import I1, cast, const, intrinsic, mem_type, reg_type
from .vmath import exp, log

# Cephes expf (as vmath.exp): exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2, ln2 = C1 + C2
_EXPF_P = (1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2,
           1.6666665459E-1, 5.0000001201E-1)
_LN2_C1, _LN2_C2 = 0.693359375, -2.12194440e-4


def exp_nonpositive32(b: ir.IRBuilder, d: ir.Value) -> ir.Value:
    """exp(d) for float32 d <= 0 or NaN, the summand of a logsumexp block.

    vmath.exp's algorithm without its range handling, with fused multiply-adds:
    this exp is the whole cost of the reduction pass. d is clamped at -87.3
    (results under 1e-38 add nothing to a sum that is >= 1 once the max is
    finite), so 2**n stays a normal number; a NaN gives any value (the max,
    and so the result, is then NaN)."""
    t = d.type
    fma = intrinsic(b, "llvm.fmuladd", t, 3)
    d = b.call(intrinsic(b, "llvm.maxnum", t, 2), [d, ir.Constant(t, -87.3)])
    n = b.call(intrinsic(b, "llvm.rint", t, 1), [b.fmul(d, ir.Constant(t, 1.4426950408889634))])
    r = b.call(fma, [n, ir.Constant(t, -_LN2_C1), d])
    r = b.call(fma, [n, ir.Constant(t, -_LN2_C2), r])
    p = ir.Constant(t, _EXPF_P[0])
    for c in _EXPF_P[1:]:
        p = b.call(fma, [p, r, ir.Constant(t, c)])
    p = b.fadd(b.call(fma, [p, b.fmul(r, r), r]), ir.Constant(t, 1.0))
    bits = b.shl(b.add(b.fptosi(n, ir.IntType(32)), ir.Constant(ir.IntType(32), 127)),
                 ir.Constant(ir.IntType(32), 23))
    return b.fmul(p, b.bitcast(bits, t))


def _counted(red: Reduce) -> Expr | None:
    """The bool expression an integer sum counts (`(x > 0).sum()`, or a cast
    of one: nanmean's count), else None: its rows add int32 lanes per block
    (row_loops.count_row)."""
    e = red.expr
    if red.op != "sum" or not red.acc.is_int:
        return None
    if isinstance(e, Cast) and e.dtype.is_int:
        e = e.x
    return e if e.dtype.is_bool else None


def _extreme(d: DType, high: bool) -> ir.Constant:
    """Identity of max (high=False gives the lowest value) or min."""
    if d.is_float:
        return const(d, float("inf") if high else float("-inf"))
    if d.is_bool:
        return const(d, 1 if high else 0)
    bits = d.itemsize * 8
    return const(d, 2 ** (bits - 1) - 1 if high else -(2 ** (bits - 1)))


class Accumulator:
    """Loop-carried state of one reduction."""

    def __init__(self, red: Reduce):
        self.red = red
        self.op = red.op
        self.acc = red.acc
        self.is_arg = red.op in ("argmax", "argmin")
        self.is_lse = red.op == "logsumexp"
        self.counted = _counted(red)


    @property
    def types(self) -> list[ir.Type]:
        return [reg_type(d) for d in self.partial_dtypes]

    @property
    def partial_dtypes(self) -> list[DType]:
        if self.is_lse:
            return [self.acc, self.acc]
        return [self.acc, int64] if self.is_arg else [self.acc]

    def init(self, first_index: ir.Value) -> list[ir.Value]:
        d, op = self.acc, self.op
        if op == "sum":
            v = const(d, 0.0 if d.is_float else 0)
        elif op == "prod":
            v = const(d, 1.0 if d.is_float else 1)
        elif op in ("nanmax", "nanmin") and d.is_float:  # maxnum(NaN, x) is x: NaN if all are
            v = const(d, float("nan"))
        elif op in ("max", "argmax", "nanmax"):
            v = _extreme(d, high=False)
        elif op in ("min", "argmin", "nanmin"):
            v = _extreme(d, high=True)
        elif op == "logsumexp":
            return [_extreme(d, high=False), const(d, 0.0)]
        else:  # any / all
            v = ir.Constant(I1, 1 if op == "all" else 0)
        return [v, first_index] if self.is_arg else [v]

    def convert(self, b: ir.IRBuilder, x: ir.Value, src: DType) -> ir.Value:
        """An element of the reduced expression, in the accumulator dtype."""
        return cast(b, x, src, self.acc)

    def update(self, b: ir.IRBuilder, carry: list[ir.Value], x: ir.Value,
               index: ir.Value | None = None, force: ir.Value | None = None) -> list[ir.Value]:
        d, op, acc = self.acc, self.op, carry[0]
        if self.is_lse:  # the element is the pair (x, 1), or (-inf, 0)
            ninf = b.fcmp_ordered("==", x, _extreme(d, high=False))
            return self.lse_combine(b, carry, [x, b.select(ninf, const(d, 0.0), const(d, 1.0))])
        if op in ("sum", "prod"):
            if d.is_float:
                r = b.fadd(acc, x) if op == "sum" else b.fmul(acc, x)
                r.flags.append("reassoc")
                return [r]
            return [b.add(acc, x) if op == "sum" else b.mul(acc, x)]
        if op in ("nanmax", "nanmin") and d.is_float:  # IEEE maxNum/minNum
            fn = intrinsic(b, "llvm.maxnum" if op == "nanmax" else "llvm.minnum", acc.type, 2)
            return [b.call(fn, [acc, x])]
        op = {"nanmax": "max", "nanmin": "min"}.get(op, op)  # no NaN in bool and integers
        if op in ("any", "all") or (d.is_bool and op in ("max", "min")):
            return [b.or_(acc, x) if op in ("any", "max") else b.and_(acc, x)]
        if op in ("max", "min"):
            if d.is_float:
                fn = intrinsic(b, "llvm.maximum" if op == "max" else "llvm.minimum", acc.type, 2)
                return [b.call(fn, [acc, x])]
            return [b.select(b.icmp_signed(">" if op == "max" else "<", x, acc), x, acc)]
        # argmax / argmin: strict compare keeps the first occurrence; first NaN wins.
        pred = ">" if op == "argmax" else "<"
        if d.is_float:
            better = b.fcmp_ordered(pred, x, acc)
            better = b.or_(better, b.fcmp_unordered("uno", x, x))
            take = b.and_(better, b.fcmp_ordered("ord", acc, acc))
        elif d.is_bool:
            take = b.icmp_unsigned(pred, x, acc)
        else:
            take = b.icmp_signed(pred, x, acc)
        if force is not None:
            take = b.or_(take, force)
        return [b.select(take, x, acc), b.select(take, index, carry[1])]

    def combine(self, b: ir.IRBuilder, carry: list[ir.Value], parts: list[ir.Value],
                first: ir.Value) -> list[ir.Value]:
        """Fold one thread's partial (in thread order) into the carry."""
        if self.is_arg:
            return self.update(b, carry, parts[0], parts[1], force=first)
        if self.is_lse:
            return self.lse_combine(b, carry, parts)
        return self.update(b, carry, parts[0])

    # -- logsumexp: the (max, scaled sum) pair ------------------------------------------
    @property
    def block_dtype(self) -> DType:
        """Dtype of the blocked row loops: float32 data stays float32 there (16-wide
        exp); block results are widened to the float64 pair once per block."""
        return float32 if self.red.expr.dtype == float32 else self.acc

    def lse_combine(self, b: ir.IRBuilder, carry: list[ir.Value],
                    other: list[ir.Value]) -> list[ir.Value]:
        """(m1, s1) + (m2, s2): the smaller max is rescaled by exp(lo - M), once.

        lo - M is NaN only when both are the same infinity (scale 1) or a NaN
        is involved (the result is NaN whatever s is)."""
        (m1, s1), (m2, s2) = carry, other
        t = m1.type
        gt = b.fcmp_ordered(">", m2, m1)
        big = b.call(intrinsic(b, "llvm.maximum", t, 2), [m1, m2])
        d = b.fsub(b.select(gt, m1, m2), big)
        e = exp(b, b.select(b.fcmp_unordered("uno", d, d), ir.Constant(t, 0.0), d))
        return [big, b.select(gt, b.fadd(b.fmul(s1, e), s2), b.fadd(s1, b.fmul(s2, e)))]

    def block_exp(self, b: ir.IRBuilder, d: ir.Value) -> ir.Value:
        """exp(x - shift) in a block (d <= 0 or NaN)."""
        return exp_nonpositive32(b, d) if self.block_dtype == float32 else exp(b, d)

    def lse_block(self, b: ir.IRBuilder, carry: list[ir.Value], block_max: ir.Value,
                  block_sum: Callable[[ir.Value], ir.Value]) -> list[ir.Value]:
        """Fold a block into the pair: its max (block dtype), then
        block_sum(shift) = sum of exp(x - shift) over it, shift being the new
        max (0 while that is -inf, so -inf elements add exp(-inf) = 0)."""
        shift = self.lse_shift(b, carry[0], block_max)
        return self.lse_fold(b, carry, block_max, block_sum(shift))

    def lse_shift(self, b: ir.IRBuilder, m: ir.Value, block_max: ir.Value) -> ir.Value:
        """What a block's elements are shifted by (block dtype): the new max
        of the running max `m` and the block's, or 0 while that is -inf."""
        bd, d = self.block_dtype, self.acc
        big = b.call(intrinsic(b, "llvm.maximum", m.type, 2), [m, cast(b, block_max, bd, d)])
        shift = cast(b, big, d, bd)  # exact: a max of block-dtype values
        ninf = b.fcmp_ordered("==", shift, _extreme(bd, high=False))
        return b.select(ninf, const(bd, 0.0), shift)

    def lse_fold(self, b: ir.IRBuilder, carry: list[ir.Value], block_max: ir.Value,
                 block_sum: ir.Value) -> list[ir.Value]:
        """The pair after a block with this max and this sum of exp(x - shift)
        (`lse_shift`'s, both in block dtype): the old sum rescaled once."""
        bd, d = self.block_dtype, self.acc
        m, s = carry
        big = b.call(intrinsic(b, "llvm.maximum", m.type, 2), [m, cast(b, block_max, bd, d)])
        same = b.fcmp_ordered("==", m, big)  # also -inf == -inf: no rescale
        scale = b.select(same, const(d, 1.0), exp(b, b.fsub(m, big)))
        return [big, b.fadd(b.fmul(s, scale), cast(b, block_sum, bd, d))]

    def lse_result(self, b: ir.IRBuilder, carry: list[ir.Value], part: str) -> ir.Value:
        """m + log(s) for a finite max, else the max itself (-inf, +inf, NaN);
        part "log_sum": log(s) for a finite max, else NaN."""
        m, s = carry
        absm = b.call(intrinsic(b, "llvm.fabs", m.type, 1), [m])
        finite = b.fcmp_ordered("!=", absm, ir.Constant(m.type, float("inf")))
        if part == "log_sum":
            return b.select(finite, log(b, s), ir.Constant(m.type, float("nan")))
        return b.select(finite, b.fadd(m, log(b, s)), m)

    # -- blocked argmax/argmin: vectorized block extreme, then a scan when it wins;
    # -- max/min siblings take the block extreme the same way (row_loops.sibling_row)
    def block_start(self) -> list[ir.Value]:
        """The block scan's carry: the extreme so far (and, for floats, whether a NaN was seen)."""
        m = _extreme(self.acc, high=self.op in ("argmin", "min"))
        return [m, ir.Constant(ir.IntType(1), 0)] if self.acc.is_float else [m]

    def block_step(self, b: ir.IRBuilder, c: list[ir.Value], x: ir.Value) -> list[ir.Value]:
        """One element of the block's max/min, a plain reduction LLVM vectorizes.

        Floats keep the NaN apart: a compare-and-select that may ignore NaNs
        and the sign of zero (one vmaxps/vminps per vector) plus an or of
        `x is NaN`, instead of llvm.maximum, whose x86 lowering takes six
        instructions per vector and whose select chain LLVM would not treat
        as a reduction without those flags. The index never depends on the
        order of equal zeros: `beats` and `matches` compare them equal."""
        d, is_max = self.acc, self.op in ("argmax", "max")
        m = c[0]
        if d.is_float:  # nnan/nsz let LLVM see a max/min reduction; a NaN x makes m poison,
            fm = ("nnan", "nsz")  # which block_extreme then never reads (c[1] is set)
            better = b.fcmp_ordered(">" if is_max else "<", x, m, flags=fm)
            return [b.select(better, x, m, flags=fm), b.or_(c[1], b.fcmp_unordered("uno", x, x))]
        if d.is_bool:
            return [b.or_(m, x) if is_max else b.and_(m, x)]
        return [b.select(b.icmp_signed(">" if is_max else "<", x, m), x, m)]

    def block_extreme(self, b: ir.IRBuilder, c: list[ir.Value]) -> ir.Value:
        """The block's max/min from `block_step`'s carry: NaN once one was seen."""
        if not self.acc.is_float:
            return c[0]
        return b.select(c[1], ir.Constant(c[0].type, float("nan")), c[0])

    def beats(self, b: ir.IRBuilder, m: ir.Value, best: ir.Value) -> ir.Value:
        """Block extreme `m` strictly improves on `best` (a NaN beats all, once)."""
        pred = ">" if self.op == "argmax" else "<"
        if self.acc.is_float:
            better = b.or_(b.fcmp_ordered(pred, m, best), b.fcmp_unordered("uno", m, m))
            return b.and_(better, b.fcmp_ordered("ord", best, best))
        if self.acc.is_bool:
            return b.icmp_unsigned(pred, m, best)
        return b.icmp_signed(pred, m, best)

    def matches(self, b: ir.IRBuilder, x: ir.Value, m: ir.Value) -> ir.Value:
        """x is the block's extreme m (for a NaN extreme: x is NaN)."""
        if self.acc.is_float:
            return b.select(b.fcmp_unordered("uno", m, m), b.fcmp_unordered("uno", x, x),
                            b.fcmp_ordered("==", x, m))
        return b.icmp_unsigned("==", x, m)

    def result(self, b: ir.IRBuilder, carry: list[ir.Value], e: Reduced) -> ir.Value:
        """The value `e` reads (the result, or logsumexp's part "max" or
        "log_sum"), in e's dtype."""
        if self.is_arg:
            return cast(b, carry[1], int64, e.dtype)
        if self.is_lse and e.part != "max":
            return cast(b, self.lse_result(b, carry, e.part), self.acc, e.dtype)
        return cast(b, carry[0], self.acc, e.dtype)


def cut(values: list, widths: list[int]) -> list[list]:
    """`values` cut into consecutive pieces of `widths`: carries laid side by side."""
    out, at = [], 0
    for n in widths:
        out.append(values[at:at + n])
        at += n
    return out


class Accumulators:
    """The carries of all of a kernel's reductions (`Kernel.reductions`: one,
    or siblings sharing the loop), side by side: one Accumulator each, their
    registers and partial buffers concatenated in that order."""

    def __init__(self, reds: tuple[Reduce, ...]):
        self.each = [Accumulator(r) for r in reds]

    @property
    def one(self) -> Accumulator | None:
        """The only accumulator, when there is one: the loops specialized per op use it."""
        return self.each[0] if len(self.each) == 1 else None

    @property
    def types(self) -> list[ir.Type]:
        return [t for a in self.each for t in a.types]

    @property
    def partial_dtypes(self) -> list[DType]:
        return [d for a in self.each for d in a.partial_dtypes]

    def split(self, carry: list[ir.Value]) -> list[list[ir.Value]]:
        """The concatenated carry, cut into each accumulator's."""
        return cut(carry, [len(a.partial_dtypes) for a in self.each])

    def init(self, first_index: ir.Value) -> list[ir.Value]:
        return [v for a in self.each for v in a.init(first_index)]

    def convert(self, b: ir.IRBuilder, xs: list[ir.Value]) -> list[ir.Value]:
        """Each reduction's element, in its accumulator dtype."""
        return [a.convert(b, x, a.red.expr.dtype) for a, x in zip(self.each, xs)]

    def update(self, b: ir.IRBuilder, carry: list[ir.Value], xs: list[ir.Value],
               index: ir.Value | None = None) -> list[ir.Value]:
        return [v for a, c, x in zip(self.each, self.split(carry), xs)
                for v in a.update(b, c, x, index)]

    def result(self, b: ir.IRBuilder, carry: list[ir.Value], e: Reduced) -> ir.Value:
        return self.each[e.index].result(b, self.split(carry)[e.index], e)

    # partial buffers hold the carry in memory types
    def to_mem(self, b: ir.IRBuilder, v: ir.Value, d: DType) -> ir.Value:
        return b.zext(v, mem_type(d)) if d.is_bool else v

    def from_mem(self, b: ir.IRBuilder, v: ir.Value, d: DType) -> ir.Value:
        return b.icmp_unsigned("!=", v, ir.Constant(v.type, 0)) if d.is_bool else v
