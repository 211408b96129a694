"""Accumulator rules for the eight reductions, as LLVM IR.

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
"""
from __future__ import annotations

from llvmlite import ir

from scheduler.dtypes import DType, int64
from scheduler.kernel_ir import Reduce

from .lowering import I1, cast, const, intrinsic, mem_type, reg_type


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

    @property
    def types(self) -> list[ir.Type]:
        t = [reg_type(self.acc)]
        return t + [reg_type(int64)] if self.is_arg else t

    @property
    def partial_dtypes(self) -> list[DType]:
        return [self.acc, int64] if self.is_arg else [self.acc]

    def init(self, first_index: ir.Value) -> list[ir.Value]:
        d, op = self.acc, self.op
        if op == "sum":
            v = const(d, 0.0 if d.is_float else 0)
        elif op == "prod":
            v = const(d, 1.0 if d.is_float else 1)
        elif op in ("max", "argmax"):
            v = _extreme(d, high=False)
        elif op in ("min", "argmin"):
            v = _extreme(d, high=True)
        else:  # any / all
            v = ir.Constant(I1, 1 if op == "all" else 0)
        return [v, first_index] if self.is_arg else [v]

    def convert(self, b: ir.IRBuilder, x: ir.Value, src: DType) -> ir.Value:
        """An element of the reduced expression, in the accumulator dtype."""
        return cast(b, x, src, self.acc)

    def update(self, b: ir.IRBuilder, carry: list[ir.Value], x: ir.Value,
               index: ir.Value | None = None, force: ir.Value | None = None) -> list[ir.Value]:
        d, op, acc = self.acc, self.op, carry[0]
        if op in ("sum", "prod"):
            if d.is_float:
                r = b.fadd(acc, x) if op == "sum" else b.fmul(acc, x)
                r.flags.append("reassoc")
                return [r]
            return [b.add(acc, x) if op == "sum" else b.mul(acc, x)]
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
        return self.update(b, carry, parts[0])

    # -- blocked argmax/argmin: vectorized block extreme, then a scan when it wins --
    def block_identity(self) -> ir.Value:
        return _extreme(self.acc, high=self.op == "argmin")

    def block_extreme(self, b: ir.IRBuilder, m: ir.Value, x: ir.Value) -> ir.Value:
        """max/min of a block (NaN-propagating), a plain reduction LLVM vectorizes."""
        d, is_max = self.acc, self.op == "argmax"
        if d.is_float:
            fn = intrinsic(b, "llvm.maximum" if is_max else "llvm.minimum", m.type, 2)
            return b.call(fn, [m, x])
        if d.is_bool:
            return b.or_(m, x) if is_max else b.and_(m, x)
        return b.select(b.icmp_signed(">" if is_max else "<", x, m), x, m)

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

    def result(self, b: ir.IRBuilder, carry: list[ir.Value]) -> ir.Value:
        """The `Reduced` value, in the Reduce's result dtype."""
        if self.is_arg:
            return cast(b, carry[1], int64, self.red.dtype)
        return cast(b, carry[0], self.acc, self.red.dtype)

    # partial buffers hold the carry in memory types
    def to_mem(self, b: ir.IRBuilder, v: ir.Value, d: DType) -> ir.Value:
        return b.zext(v, mem_type(d)) if d.is_bool else v

    def from_mem(self, b: ir.IRBuilder, v: ir.Value, d: DType) -> ir.Value:
        return b.icmp_unsigned("!=", v, ir.Constant(v.type, 0)) if d.is_bool else v
