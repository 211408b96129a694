"""The reduction loop nest, in two loop orders chosen per launch.

Per-element order (ctl.tile == 0): for each output element, reduce over the
flattened reduce range with the innermost reduce axis as the hot loop. Best
when the data is contiguous along the reduce axis (row sums, softmax rows).

Tiled order (ctl.tile = the tile width, at most MAX_TILE): for a tile of
that many consecutive outputs along the innermost out axis, keep the
accumulators in a stack array and, for each reduce element, update the
whole tile; that inner loop runs along the *out* axis, so a column
reduction (`x.sum(axis=0)`, strides (1, n)) reads memory contiguously and
vectorizes instead of striding by n. The launcher picks it when the data is
contiguous along the out axis and not along the reduce axis, with tiles as
wide as the rows it hands out (launch.py), so each reduce step reads one
long run of memory. Mode 2 (fold partials) always uses per-element order.
"""
from __future__ import annotations

from llvmlite import ir

from scheduler.dtypes import float32, float64
from scheduler.kernel_ir import Kernel, Load, postorder

from .codegen import MODE_FINAL, MODE_PARTIAL, Ptr, _Gen
from .loops import (_ZERO, _at, _fixed_view, _leaf, _row_base, _row_loc, _stride_versions,
                    _strides, blocked_arg, inner_hint, over_blocks)
from .lowering import I64, cast, const, intrinsic

MAX_TILE = 4096  # outputs per tile: float64 accumulators fill 32 KB of stack (per type)
LSE_BLOCK = 1024  # logsumexp row block: 4-8 KB, still in L1 for the second (exp) sweep
SUM_BLOCK = 1024  # float32 sum row block: summed in float32, then added in float64
SUM_BLOCK64 = 512  # float64 sum row block: summed in vector lanes, added with compensation
SUM_ROWS = 16     # float32 column sums (tiled order): reduce steps summed in float32 per flush


def tile_eligible(k: Kernel) -> bool:
    """Whether the tiled order is compiled at all: it needs an out axis and is
    never chosen when some input is contiguous along the reduce axis (inner 1,
    or -1 when reversed), so those kernels skip it (it roughly doubles compile
    time). An input the same all along the innermost out axis (`out_inner`
    0) does not count: in `(w[:, None] * A).sum(0)` w is one value per
    reduce step either way, and A is read down its columns. So when every
    input is such (a full sum: one out element, stride 0), no input can be
    contiguous along the out axis and the tiled order is never chosen."""
    full = [i for i in k.inputs if i.space == "full" and not i.iota and not i.indirect]
    return k.reduce is not None and k.n_out > 0 and \
        any(i.out_inner != 0 for i in full) and \
        not any(i.inner in (1, -1) and i.out_inner != 0 for i in full)


class ReductionLoops:
    def __init__(self, g: _Gen):
        self.g, self.b, self.acc = g, g.b, g.acc
        k = self.k = g.k
        self.red = k.reduce
        self.nout, self.nd, self.nin = k.n_out, k.ndim, len(k.inputs)
        self.full = [i for i, inp in enumerate(k.inputs) if inp.space == "full"]
        # a float32 sum: float32 blocks added into a float64 carry (blocked_sum32, tiled_reduce)
        self.sum32 = self.red.op == "sum" and self.red.expr.dtype == float32 and \
            self.acc.acc == float64
        # out-axes strides of every input and output; reduce-axes strides of full inputs
        self.o_views = []
        for i, inp in enumerate(k.inputs):
            slot = g.lay.inputs[i][0]
            st = _strides(g, slot, 0, self.nout, inp.inner)
            if inp.out_inner is not None:
                st[-1] = ir.Constant(I64, inp.out_inner)
            self.o_views.append((slot, st))
        self.o_views += [(s, _strides(g, s, 0, self.nout, o.inner))
                         for s, o in zip(g.lay.outputs, k.outputs)]
        self.r_st = {i: _strides(g, g.lay.inputs[i][0], self.nout, self.nd, k.inputs[i].inner)
                     for i in self.full}
        self.pre_loads = sorted({e.input for e in postorder([self.red.expr])
                                 if isinstance(e, Load) and k.inputs[e.input].space == "out"})
        self.out_inputs = [i for i in range(self.nin) if k.inputs[i].space == "out"]

    def so(self, n: int) -> ir.Value:
        """Stride of view n (inputs, then outputs) along the innermost out axis."""
        return self.o_views[n][1][-1]

    # -- driver ------------------------------------------------------------------------
    def emit(self) -> None:
        g, b = self.g, self.b

        def orow(flat, idx, col):
            bases = [_row_base(g, g.a[slot.offset], idx, col, st) for slot, st in self.o_views]
            return flat, [p if n in self.full else _row_loc(g, n, p) for n, p in enumerate(bases)]

        if not tile_eligible(self.k):
            g.loop_range(g.ctl["start"], g.ctl["end"], g.shape(0, self.nout), [], orow,
                         lambda state, j, c, tag: self.element(state, j))
            return

        def row_body(state, cnt, carry, tag):
            tiled, plain = b.append_basic_block("tiled"), b.append_basic_block("per_elem")
            join = b.append_basic_block("row.end")
            b.cbranch(b.icmp_signed("!=", g.ctl["tile"], _ZERO), tiled, plain)
            b.position_at_end(tiled)
            self.tiled_row(state, cnt)
            b.branch(join)
            b.position_at_end(plain)
            g.counted_loop(_ZERO, cnt, [], lambda j, c: self.element(state, j))
            b.branch(join)
            g.fn.blocks.remove(join)
            g.fn.blocks.append(join)
            b.position_at_end(join)
            return []

        g.loop_range(g.ctl["start"], g.ctl["end"], g.shape(0, self.nout), [], orow, None,
                     row_body=row_body)

    # -- per-element order ------------------------------------------------------------------
    def element(self, state, j) -> list:
        g, b = self.g, self.b
        oflat, bases = state
        locs = [_at(g, base, j, self.so(n)) for n, base in enumerate(bases)]
        flat_o = g.add(oflat, j)
        cache: dict[int, ir.Value] = {}
        out_pos = {i: locs[i] for i in self.out_inputs}
        pre = _leaf(g, out_pos, cache)
        for i in self.pre_loads:
            pre(Load(i, self.k.inputs[i].dtype))
        is_final = b.icmp_signed("==", g.ctl["mode"], ir.Constant(I64, MODE_FINAL))
        bb_red, bb_fin = b.append_basic_block("reduce"), b.append_basic_block("final")
        b.cbranch(is_final, bb_fin, bb_red)
        b.position_at_end(bb_red)
        c_red = self.reduce_range(locs, cache)
        end_red = b.block
        b.position_at_end(bb_fin)
        c_fin = self.combine(flat_o)
        end_fin = b.block
        join = b.append_basic_block("join")
        b.branch(join)
        b.position_at_end(end_red)
        b.branch(join)
        b.position_at_end(join)
        c = []
        for x, y in zip(c_red, c_fin):
            p = b.phi(x.type)
            p.add_incoming(x, end_red)
            p.add_incoming(y, end_fin)
            c.append(p)
        self.finish(c, out_pos, locs[self.nin:], flat_o, cache)
        return []

    def reduce_range(self, opos, cache) -> list[ir.Value]:
        g, b, acc, red, full, r_st = self.g, self.b, self.acc, self.red, self.full, self.r_st
        versions, check, pick = _stride_versions(g, [r_st[i][-1] for i in full],
                                                  [_fixed_view(g, i) for i in full])

        def rrow(rflat, idx, col):
            return rflat, {i: _row_loc(g, i, _row_base(g, opos[i], idx, col, r_st[i]))
                           for i in full}

        def x_at(state, jr, tag, dtype=acc.acc):
            pos = {i: _at(g, state[1][i], jr, pick(n, tag)) for n, i in enumerate(full)}
            x = g.evaluate([red.expr], _leaf(g, pos, dict(cache)))[id(red.expr)]
            return cast(b, x, red.expr.dtype, dtype)

        def relem(state, jr, carry, tag):
            return acc.update(b, carry, x_at(state, jr, tag), g.add(state[0], jr))

        def arg_row(state, cnt, carry, tag):
            return blocked_arg(g, acc, lambda j: x_at(state, j, tag), state[0], cnt, carry)

        def lse_row(state, cnt, carry, tag):
            return blocked_lse(g, acc, lambda j: x_at(state, j, tag, acc.block_dtype), cnt, carry)

        def nan_row(state, cnt, carry, tag):
            return nan_extreme(g, acc.op, lambda j: x_at(state, j, tag), cnt, carry)

        def unit_rows(state, tag) -> list[ir.Value]:  # rows read at stride 1, by pointer
            return [state[1][i].p for n, i in enumerate(full) if isinstance(state[1][i], Ptr)
                    and isinstance(pick(n, tag), ir.Constant) and pick(n, tag).constant == 1]

        def hint(tag) -> str | None:
            return inner_hint(g, [pick(n, tag) for n in range(len(full))], full)

        def sum_row(state, cnt, carry, tag):
            if hint(tag) == "scalar":  # a runtime stride: no vector lanes
                return strided_sum(g, lambda j: x_at(state, j, tag), cnt, carry)
            if self.sum32:
                return blocked_sum32(g, lambda j: x_at(state, j, tag, red.expr.dtype), cnt,
                                     carry, unit_rows(state, tag))
            return compensated_sum(g, lambda j: x_at(state, j, tag), cnt, carry, hint(tag))

        rs = g.ctl["rstart"]
        float_sum = red.op == "sum" and acc.acc.is_float
        row = arg_row if acc.is_arg else lse_row if acc.is_lse else sum_row if float_sum else \
            nan_row if red.op in ("nanmax", "nanmin") and acc.acc.is_float else None
        return g.loop_range(rs, g.ctl["rend"], g.shape(self.nout, self.nd), acc.init(rs), rrow,
                            relem, versions, check, row, hint)

    def combine(self, flat_o) -> list[ir.Value]:
        """Mode 2: fold the per-thread partials, in thread order.

        Float sums fold with Neumaier's compensation: the part count grows
        with the thread count (4 per thread), and a plain fold of 61 parts
        (16 threads) left a float64 sum of 1M values of 0.1 further off
        than NumPy's pairwise sum."""
        g, b, acc = self.g, self.b, self.acc
        base = self.nin + len(self.k.outputs)

        def parts_at(p):
            slot = g.add(g.mul(p, g.ctl["nout"]), flat_o)
            return [acc.from_mem(b, b.load(b.gep(g.ptr[base + q], [slot])), d)
                    for q, d in enumerate(acc.partial_dtypes)]

        if self.red.op == "sum" and acc.acc.is_float:
            init = acc.init(_ZERO)
            zero = ir.Constant(init[0].type, 0.0)
            s, comp = g.counted_loop(_ZERO, g.ctl["nparts"], [init[0], zero],
                                     lambda p, c: neumaier(b, c, parts_at(p)[0]), "scalar")
            return [b.fadd(s, comp)]

        def body(p, carry):
            return acc.combine(b, carry, parts_at(p), b.icmp_signed("==", p, _ZERO))

        return g.counted_loop(_ZERO, g.ctl["nparts"], acc.init(_ZERO), body, "scalar")

    def finish(self, c, out_pos, out_locs, flat_o, cache) -> None:
        """Mode 1: store partials; else run the epilogue and store the outputs."""
        g, b, acc, k = self.g, self.b, self.acc, self.k
        bb_part, bb_epi = b.append_basic_block("partial"), b.append_basic_block("epilogue")
        cont = b.append_basic_block("cont")
        b.cbranch(b.icmp_signed("==", g.ctl["mode"], ir.Constant(I64, MODE_PARTIAL)),
                  bb_part, bb_epi)
        b.position_at_end(bb_part)
        slot = g.add(g.mul(g.ctl["part"], g.ctl["nout"]), flat_o)
        for q, (v, d) in enumerate(zip(c, acc.partial_dtypes)):
            b.store(acc.to_mem(b, v, d), b.gep(g.ptr[self.nin + len(k.outputs) + q], [slot]))
        b.branch(cont)
        b.position_at_end(bb_epi)
        vals = g.evaluate(g.out_roots(), _leaf(g, out_pos, cache, lambda e: acc.result(b, c, e)))
        g.store_outputs(vals, out_locs)
        b.branch(cont)
        b.position_at_end(cont)

    # -- tiled order ------------------------------------------------------------------------
    def tiled_row(self, state, cnt) -> None:
        g, b, acc = self.g, self.b, self.acc
        oflat, bases = state
        entry = ir.IRBuilder(g.fn.blocks[0])
        entry.position_at_start(g.fn.blocks[0])
        arrays = [entry.alloca(t, size=MAX_TILE) for t in acc.types]
        # float32 sums: SUM_ROWS steps in float32, then flushed into the float64 tile
        f32 = entry.alloca(ir.FloatType(), size=MAX_TILE) if self.sum32 else None
        tsz = g.ctl["tile"]

        def tile(ti, _):
            t0 = g.mul(ti, tsz)
            tn = b.sub(cnt, t0)
            tn = b.select(b.icmp_signed("<", tsz, tn), tsz, tn)
            start = [_at(g, base, t0, self.so(n)) for n, base in enumerate(bases)]
            init = acc.init(g.ctl["rstart"])

            def zero(t, _):
                for a, v in zip(arrays, init):
                    b.store(v, b.gep(a, [t]))
                if f32 is not None:
                    b.store(const(float32, 0.0), b.gep(f32, [t]))
                return []
            g.counted_loop(_ZERO, tn, [], zero, "scalar")
            self.tiled_reduce(start, tn, arrays, f32)

            def epi(t, _):
                c = [b.load(b.gep(a, [t])) for a in arrays]
                locs = [_at(g, s, t, self.so(n)) for n, s in enumerate(start)]
                out_pos = {i: locs[i] for i in self.out_inputs}
                flat_o = g.add(g.add(oflat, t0), t)
                self.finish(c, out_pos, locs[self.nin:], flat_o, {})
                return []
            g.counted_loop(_ZERO, tn, [], epi, "scalar")  # once per output: not worth code
            return []

        ntiles = b.udiv(b.add(cnt, b.sub(tsz, ir.Constant(I64, 1))), tsz)
        g.counted_loop(_ZERO, ntiles, [], tile)

    def tiled_reduce(self, start, tn, arrays, f32=None) -> None:
        """for each reduce element r: for t in tile: acc[t] = update(acc[t], x(t, r)).

        With `f32` (a float32 sum): f32[t] += x(t, r) instead, and every
        SUM_ROWS steps (and at the end) f32 is added into the float64 tile
        and zeroed. As in blocked_sum32, each float32 partial adds only a
        few elements, and the loop runs 16 float32 lanes wide with no
        conversion per element (docs/cpu_backend.md has the numbers)."""
        g, b, acc, red, full, r_st = self.g, self.b, self.acc, self.red, self.full, self.r_st

        def rrow(rflat, idx, col):
            return rflat, {i: _row_base(g, start[i], idx, col, r_st[i]) for i in full}

        def flush():
            def add(t, _):
                p32, p64 = b.gep(f32, [t]), b.gep(arrays[0], [t])
                b.store(b.fadd(b.load(p64), b.fpext(b.load(p32), ir.DoubleType())), p64)
                b.store(const(float32, 0.0), p32)
                return []
            g.counted_loop(_ZERO, tn, [], add)

        def relem(state, jr, _c, tag):
            rflat, rb = state
            rloc = {i: _row_loc(g, i, _at(g, rb[i], jr, r_st[i][-1])) for i in full}
            index = g.add(rflat, jr)

            def per_t(t, _):
                pos = {i: _at(g, rloc[i], t, self.so(i)) for i in full}
                pos.update({i: _at(g, start[i], t, self.so(i)) for i in self.out_inputs})
                x = g.evaluate([red.expr], _leaf(g, pos, {}))[id(red.expr)]
                if f32 is not None:
                    p = b.gep(f32, [t])
                    b.store(b.fadd(b.load(p), x), p)
                    return []
                x = acc.convert(b, x, red.expr.dtype)
                ptrs = [b.gep(a, [t]) for a in arrays]
                new = acc.update(b, [b.load(p) for p in ptrs], x, index)
                for p, v in zip(ptrs, new):
                    b.store(v, p)
                return []
            g.counted_loop(_ZERO, tn, [], per_t)
            if f32 is not None:
                last = b.icmp_signed("==", b.and_(b.sub(index, g.ctl["rstart"]),
                                                  ir.Constant(I64, SUM_ROWS - 1)),
                                     ir.Constant(I64, SUM_ROWS - 1))
                with b.if_then(last):
                    flush()
            return []

        g.loop_range(g.ctl["rstart"], g.ctl["rend"], g.shape(self.nout, self.nd), [], rrow, relem)
        if f32 is not None:
            flush()


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
    ty = carry[0].type
    fn = intrinsic(b, "llvm.maxnum" if op == "nanmax" else "llvm.minnum", ty, 2)
    seen_max = intrinsic(b, "llvm.maxnum", ty, 2)
    fill = ir.Constant(ty, float("-inf") if op == "nanmax" else float("inf"))
    zero, one = ir.Constant(ty, 0.0), ir.Constant(ty, 1.0)

    def step(j, c):
        x = x_at(j)
        ordered = b.fcmp_ordered("ord", x, x)
        return [b.call(fn, [c[0], b.select(ordered, x, fill)]),
                b.call(seen_max, [c[1], b.select(ordered, one, zero)])]

    m, seen = g.counted_loop(_ZERO, cnt, [fill, zero], step)
    return [b.select(b.fcmp_ordered(">", seen, zero), b.call(fn, [carry[0], m]), carry[0])]


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
        return [b.fadd(c[0], b.fpext(s, ir.DoubleType()))]

    return over_blocks(g, cnt, SUM_BLOCK, carry, block, ahead)
