"""One row of a reduction: the inner loops that ReductionLoops
(reduce_loops.py) runs per output element when the row is read as vectors.

Each folds `cnt` elements, `x_at(j)` the j-th, into a carry, most in blocks
(`loops.over_blocks`) so that what LLVM vectorizes stays a plain reduction
and what must be exact (compensated sums, NaN, logsumexp's rescale) runs
once per block: blocked float32 and compensated float64 sums, the strided
sum, logsumexp, nanmax/nanmin, max/min, and several sibling reductions
in one loop.
"""
from __future__ import annotations

from llvmlite import ir

from scheduler.dtypes import float32, float64

from .codegen import _Gen
from .loops import _ZERO, over_blocks
from .lowering import I1, I64, const, intrinsic
from .reduction import cut

LSE_BLOCK = 1024  # logsumexp row block: 4-8 KB, still in L1 for the second (exp) sweep
SUM_BLOCK = 1024  # float32 sum row block: summed in float32, then added in float64
SUM_BLOCK64 = 512  # float64 sum row block: summed in vector lanes, added with compensation


def blocked_lse(g: _Gen, acc, x_at, cnt: ir.Value, carry: list[ir.Value]) -> list[ir.Value]:
    """logsumexp over one row of `cnt` elements, LSE_BLOCK at a time.

    An element-wise online update (running max, rescaled sum) carries a
    dependence LLVM cannot vectorize; per block, the max is a plain
    vectorized max, then sum(exp(x - max)) a vectorized sum over the same
    elements while they are in L1, and the pair is rescaled once per block.
    """
    b, bd = g.b, acc.block_dtype

    def block(jb, je, c):
        mx = intrinsic(b, "llvm.maximum", const(bd, 0.0).type, 2)
        bmax = g.counted_loop(jb, je, [const(bd, float("-inf"))],
                              lambda j, mc: [b.call(mx, [mc[0], x_at(j)])])[0]

        def block_sum(shift: ir.Value) -> ir.Value:
            def add(j, sc):
                r = b.fadd(sc[0], acc.block_exp(b, b.fsub(x_at(j), shift)))
                r.flags.append("reassoc")
                return [r]
            return g.counted_loop(jb, je, [const(bd, 0.0)], add)[0]

        return acc.lse_block(b, c, bmax, block_sum)

    return over_blocks(g, cnt, LSE_BLOCK, carry, block)


def nan_extreme(g: _Gen, op: str, x_at, cnt: ir.Value, carry: list[ir.Value]
                ) -> list[ir.Value]:
    """nanmax/nanmin over one row: the extreme of its elements with NaN read
    as -inf (+inf), and whether any is not NaN, in one loop; the row then
    joins the carry by maxNum (minNum) if it had one.

    A maxnum loop over the elements themselves (Accumulator.update, used
    elsewhere) LLVM vectorizes only behind a check that leaves the vector
    loop for the scalar one at the first NaN: a 4096 x 4096 float32 row
    nanmax took 1.2 ms without NaNs and 20 ms with 10% of them. With the
    NaNs replaced, LLVM sees no NaN operand and drops the check. "Any not
    NaN" is a maxnum too, of 1.0 or 0.0: LLVM 22 vectorizes a maxnum
    reduction beside another maxnum, not beside an or, add or umax one."""
    b = g.b
    found = g.counted_loop(_ZERO, cnt, nan_start(op, carry[0].type),
                           lambda j, c: nan_step(b, op, c, x_at(j)))
    return [nan_fold(b, op, carry[0], found)]


def count_row(g: _Gen, x_at, cnt: ir.Value, carry: list[ir.Value], hint: str | None
              ) -> list[ir.Value]:
    """An integer count of true values (x_at(j) a bool) over one row: each
    block's count in int32 lanes, 16 to a vector where int64 gives 8, added
    to the int64 carry once per block."""
    b = g.b
    i32 = ir.IntType(32)

    def block(jb, je, c):
        n = g.counted_loop(jb, je, [ir.Constant(i32, 0)],
                           lambda j, bc: [_count(b, bc[0], x_at(j))], hint)[0]
        return [_count(b, c[0], n)]

    return over_blocks(g, cnt, SUM_BLOCK, carry, block)


def _count(b: ir.IRBuilder, total: ir.Value, part: ir.Value) -> ir.Value:
    """total + part, part (a bool, or a narrower count) widened to total's type."""
    return b.add(total, b.zext(part, total.type))


def _widen_add(b: ir.IRBuilder, total: ir.Value, part: ir.Value) -> ir.Value:
    """A float32 block's sum into the float64 carry."""
    return b.fadd(total, b.fpext(part, ir.DoubleType()))


def nan_start(op: str, ty: ir.Type) -> list[ir.Value]:
    """nan_extreme's carry before the first element: the fill, and nothing seen."""
    return [ir.Constant(ty, float("-inf") if op == "nanmax" else float("inf")),
            ir.Constant(ty, 0.0)]


def nan_step(b: ir.IRBuilder, op: str, c: list[ir.Value], x: ir.Value) -> list[ir.Value]:
    """One element into nan_extreme's carry: NaN read as the fill; 1.0 seen if not NaN."""
    ty = x.type
    fill, zero = nan_start(op, ty)
    fn = intrinsic(b, "llvm.maxnum" if op == "nanmax" else "llvm.minnum", ty, 2)
    ordered = b.fcmp_ordered("ord", x, x)
    return [b.call(fn, [c[0], b.select(ordered, x, fill)]),
            b.call(intrinsic(b, "llvm.maxnum", ty, 2),
                   [c[1], b.select(ordered, ir.Constant(ty, 1.0), zero)])]


def nan_fold(b: ir.IRBuilder, op: str, acc: ir.Value, found: list[ir.Value]) -> ir.Value:
    """The running nanmax/nanmin joined with a stretch's nan_step carry (if it had a number)."""
    m, seen = found
    fn = intrinsic(b, "llvm.maxnum" if op == "nanmax" else "llvm.minnum", acc.type, 2)
    return b.select(b.fcmp_ordered(">", seen, ir.Constant(seen.type, 0.0)),
                    b.call(fn, [acc, m]), acc)


class _Sibling:
    """How one reduction of a kernel of siblings walks a row (sibling_row):
    the row's carry, a block's carry, one element, and the block's fold."""

    def __init__(self, acc, leader: int | None, hint: str | None):
        self.acc, self.leader = acc, leader  # leader: an earlier extreme of the same values
        self.kind = self._kind(acc, hint)

    @staticmethod
    def _kind(acc, hint: str | None) -> str:
        op, d = acc.op, acc.acc
        if not d.is_float:
            return "count" if acc.counted is not None else "plain"
        if op == "sum":  # float32 lanes only when the row is read as vectors: at a runtime
            # stride ("scalar") a float32 block would add one element at a time in float32
            narrow = acc.red.expr.dtype == float32 and d == float64 and hint != "scalar"
            return "sum32" if narrow else "sum"
        if op in ("nanmax", "nanmin"):
            return "nan"
        return "extreme" if op in ("max", "min") else "plain"

    def row_start(self, c: list[ir.Value]) -> list[ir.Value]:
        return c + [ir.Constant(c[0].type, 0.0)] if self.kind == "sum" else c

    def block_start(self, row: list[ir.Value]) -> list[ir.Value]:
        k, a = self.kind, self.acc
        if k in ("sum", "sum32"):
            return [const(float32 if k == "sum32" else a.acc, 0.0)]
        if k == "count":
            return [ir.Constant(ir.IntType(32), 0)]
        if k == "nan":
            return nan_start(a.op, row[0].type)
        if k == "extreme":
            return a.block_start()[:1 if self.leader is not None else None]
        return row

    def step(self, b: ir.IRBuilder, c: list[ir.Value], x: ir.Value) -> list[ir.Value]:
        k, a = self.kind, self.acc
        if k == "sum32":  # float32 lanes, as blocked_sum32
            return [_fadd(b, c[0], x)]
        if k == "count":  # x is the counted bool: int32 lanes, as count_row
            return [_count(b, c[0], x)]
        x = a.convert(b, x, a.red.expr.dtype)
        if k == "sum":
            return [_fadd(b, c[0], x)]
        if k == "nan":
            return nan_step(b, a.op, c, x)
        if k == "extreme":  # a follower's "is NaN" is its leader's: left unused here
            return a.block_step(b, c + [ir.Constant(I1, 0)] * (len(c) == 1), x)[:len(c)]
        return a.update(b, c, x)

    def fold(self, b: ir.IRBuilder, row: list[ir.Value], found: list[list[ir.Value]],
             me: int) -> list[ir.Value]:
        k, a, f = self.kind, self.acc, found[me]
        if k == "sum":
            return neumaier(b, row, f[0])
        if k == "sum32":
            return [_widen_add(b, row[0], f[0])]
        if k == "count":
            return [_count(b, row[0], f[0])]
        if k == "nan":
            return [nan_fold(b, a.op, row[0], f)]
        if k == "extreme":
            flag = found[self.leader][1] if self.leader is not None else f[1]
            return a.update(b, row, a.block_extreme(b, [f[0], flag]))
        return f

    def finish(self, b: ir.IRBuilder, row: list[ir.Value]) -> list[ir.Value]:
        return [b.fadd(*row)] if self.kind == "sum" else row


def sibling_row(g: _Gen, acc, xs_at, cnt: ir.Value, carry: list[ir.Value],
                hint: str | None) -> list[ir.Value]:
    """Every reduction of a kernel of siblings over one row, in one loop,
    SUM_BLOCK64 elements at a time (xs_at(j): each one's element as it is,
    or for a count the bool it counts).

    Each keeps the form its own row loop gives it, so a kernel of siblings
    is as accurate as a kernel each: a float sum adds a block in lanes and
    joins the row by Neumaier's addition (float32 data: float32 lanes, the
    block added in float64, as blocked_sum32), a count adds int32 lanes
    (count_row), a float nanmax/nanmin reads
    NaN as the fill beside a "seen" maxnum (nan_extreme), a float max/min
    takes a block's extreme by compare-and-select beside an "is NaN" or
    (Accumulator.block_step, argmax's blocks), and the others update the
    carry per element. A max and a min of the same values share one "is
    NaN". The min and max of 16.8M float32, one process, another busy on
    the second core: 9.7 ms with llvm.minimum/maximum per element (each a
    min, an unordered compare and a blend on x86: compute-bound), 7.0
    blocked with an "is NaN" each (two such ors, 4-way interleaved, took
    eight mask registers and spilled them), 6.1 sharing one; 4.4 for the
    max alone. For one max alone the block form measured no faster (memory-
    bound), so it keeps llvm.maximum."""
    b = g.b
    sibs: list[_Sibling] = []
    for a in acc.each:
        lead = next((n for n, o in enumerate(sibs) if o.kind == "extreme" and o.leader is None
                     and o.acc.red.expr is a.red.expr), None)
        sibs.append(_Sibling(a, lead, hint))

    rows0 = [sb.row_start(c) for sb, c in zip(sibs, acc.split(carry))]
    row_widths = [len(r) for r in rows0]
    block_widths = [len(sb.block_start(r)) for sb, r in zip(sibs, rows0)]

    def block(jb, je, rc):
        rows = cut(rc, row_widths)
        start = [v for sb, r in zip(sibs, rows) for v in sb.block_start(r)]

        def step(j, c):
            return [v for sb, cc, x in zip(sibs, cut(c, block_widths), xs_at(j))
                    for v in sb.step(b, cc, x)]

        found = cut(g.counted_loop(jb, je, start, step, hint), block_widths)
        return [v for n, (sb, r) in enumerate(zip(sibs, rows)) for v in sb.fold(b, r, found, n)]

    done = over_blocks(g, cnt, SUM_BLOCK64, [v for r in rows0 for v in r], block)
    return [v for sb, r in zip(sibs, cut(done, row_widths)) for v in sb.finish(b, r)]


def strided_sum(g: _Gen, x_at, cnt: ir.Value, carry: list[ir.Value]) -> list[ir.Value]:
    """A float sum over one row read at a runtime stride, in the accumulator
    dtype (float64 for float32 data), into four accumulators taken in turn.

    Such a row is read one element at a time. Into one accumulator each add
    would wait for the one before it (4 cycles); a float32 block sum
    (blocked_sum32) there once added 10,000 values of 0.1 one at a time in
    float32, 1e-5 off where NumPy's pairwise sum is 1e-7 off.
    """
    b, four = g.b, ir.Constant(I64, 4)
    quads = b.udiv(cnt, four)
    zero = ir.Constant(carry[0].type, 0.0)

    def quad(q, accs):
        j = g.mul(q, four)
        return [_fadd(b, a, x_at(b.add(j, ir.Constant(I64, k)))) for k, a in enumerate(accs)]

    s = g.counted_loop(ir.Constant(I64, 0), quads, [carry[0], zero, zero, zero], quad, "scalar")
    total = _fadd(b, _fadd(b, s[0], s[1]), _fadd(b, s[2], s[3]))
    return g.counted_loop(g.mul(quads, four), cnt, [total],
                          lambda j, c: [_fadd(b, c[0], x_at(j))], "scalar")


def compensated_sum(g: _Gen, x_at, cnt: ir.Value, carry: list[ir.Value],
                    hint: str | None) -> list[ir.Value]:
    """A sum in the accumulator dtype (float64 data, or integers for a mean)
    over one row read as vectors, SUM_BLOCK64 elements at a time.

    Within a block the lanes add in any order (`reassoc`: it vectorizes);
    each block's sum joins the carry by Neumaier's compensated addition,
    whose plain `fadd`s LLVM may not reorder. One long vector loop instead
    let every lane add its share of the whole row in turn: 4M values of 0.1
    came out 2e-13 off, where NumPy's pairwise sum is 3e-16 off. No page
    prefetch (blocked_sum32 has one): on memory without huge pages, float64
    sums of 8M elements measured the same with and without it.
    """
    b = g.b
    zero = ir.Constant(carry[0].type, 0.0)

    def block(jb, je, c):
        x = g.counted_loop(jb, je, [zero], lambda j, sc: [_fadd(b, sc[0], x_at(j))], hint)[0]
        return neumaier(b, c, x)

    total, comp = over_blocks(g, cnt, SUM_BLOCK64, [carry[0], zero], block)
    return [b.fadd(total, comp)]


def neumaier(b: ir.IRBuilder, carry: list[ir.Value], x: ir.Value) -> list[ir.Value]:
    """(sum, compensation) + x by Neumaier's compensated addition; its plain
    `fadd`s (no `reassoc`) keep LLVM from folding the compensation away.
    Once the sum is inf or NaN the correction is 0: `inf - inf` would make
    it NaN and turn a sum of inf into NaN."""
    s, comp = carry
    fabs = intrinsic(b, "llvm.fabs", s.type, 1)
    t = b.fadd(s, x)
    big, small = (b.select(b.fcmp_ordered(">=", b.call(fabs, [s]), b.call(fabs, [x])), u, v)
                  for u, v in ((s, x), (x, s)))
    finite = b.fcmp_ordered("<", b.call(fabs, [t]), ir.Constant(s.type, float("inf")))
    fix = b.select(finite, b.fadd(b.fsub(big, t), small), ir.Constant(s.type, 0.0))
    return [t, b.fadd(comp, fix)]


def _fadd(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    r = b.fadd(x, y)
    r.flags.append("reassoc")
    return r


def blocked_sum32(g: _Gen, x_at, cnt: ir.Value, carry: list[ir.Value],
                  ahead: list[ir.Value] = ()) -> list[ir.Value]:
    """A float32 sum over one row, SUM_BLOCK elements at a time.

    Converting every element to float64 costs a conversion per element and
    halves the vector width; within a block the float32 sum vectorizes 16
    lanes wide with interleaved accumulators (each lane adds only a few
    dozen elements, so float32 rounding stays near the last bit), and each
    block's sum is added to the float64 carry: still far more accurate than
    a plain float32 loop over the row. A block is 4 KB, one page: `ahead`'s
    rows get one prefetch per full block (loops.prefetch_ahead).
    """
    b = g.b

    def block(jb, je, c):
        s = g.counted_loop(jb, je, [const(float32, 0.0)],
                           lambda j, sc: [_fadd(b, sc[0], x_at(j))])[0]
        return [_widen_add(b, c[0], s)]

    return over_blocks(g, cnt, SUM_BLOCK, carry, block, ahead)
