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
                    _strides, blocked_arg, inner_hint)
from .lowering import I64, cast, const, intrinsic
from .reduction import cut
from .row_loops import (blocked_lse, blocked_sum32, compensated_sum, count_row, nan_extreme,
                        neumaier, sibling_row, strided_sum)

MAX_TILE = 4096  # outputs per tile: float64 accumulators fill 32 KB of stack (per type)
SUM_ROWS = 16     # float32 column sums (tiled order): reduce steps summed in float32 per flush
LSE_ROWS = 64     # logsumexp down columns (tiled order): reduce steps per block


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
        self.reds = k.reductions
        self.one = g.acc.one  # the only accumulator, when one: the row loops specialized per op
        self.nout, self.nd, self.nin = k.n_out, k.ndim, len(k.inputs)
        self.full = [i for i, inp in enumerate(k.inputs) if inp.space == "full"]
        # a float32 sum: float32 blocks added into a float64 carry (blocked_sum32, tiled_reduce)
        self.sum32 = self.one is not None and self.one.op == "sum" and \
            self.reds[0].expr.dtype == float32 and self.one.acc == float64
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
        self.pre_loads = sorted({e.input for e in postorder([r.expr for r in self.reds])
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
        g, b, acc, one, reds, full, r_st = \
            self.g, self.b, self.acc, self.one, self.reds, self.full, self.r_st
        versions, check, pick = _stride_versions(g, [r_st[i][-1] for i in full],
                                                  [_fixed_view(g, i) for i in full])

        def rrow(rflat, idx, col):
            return rflat, {i: _row_loc(g, i, _row_base(g, opos[i], idx, col, r_st[i]))
                           for i in full}

        def xs_at(state, jr, tag, counts=False) -> list[ir.Value]:
            """Each reduction's element as it is (with `counts`: the bool a count counts)."""
            pos = {i: _at(g, state[1][i], jr, pick(n, tag)) for n, i in enumerate(full)}
            roots = [a.counted if counts and a.counted is not None else a.red.expr
                     for a in acc.each]
            vals = g.evaluate(roots, _leaf(g, pos, dict(cache)))
            return [vals[id(e)] for e in roots]

        def x_at(state, jr, tag, dtype=None):  # the only reduction's, in `dtype` or its acc's
            return cast(b, xs_at(state, jr, tag)[0], reds[0].expr.dtype, dtype or one.acc)

        def relem(state, jr, carry, tag):
            return acc.update(b, carry, acc.convert(b, xs_at(state, jr, tag)),
                              g.add(state[0], jr))

        def arg_row(state, cnt, carry, tag):
            return blocked_arg(g, one, lambda j: x_at(state, j, tag), state[0], cnt, carry)

        def lse_row(state, cnt, carry, tag):
            return blocked_lse(g, one, lambda j: x_at(state, j, tag, one.block_dtype), cnt, carry)

        def nan_row(state, cnt, carry, tag):
            return nan_extreme(g, one.op, lambda j: x_at(state, j, tag), cnt, carry)

        def sibling_rows(state, cnt, carry, tag):
            return sibling_row(g, acc, lambda j: xs_at(state, j, tag, counts=True), cnt, carry,
                               hint(tag))

        def count_rows(state, cnt, carry, tag):
            if hint(tag) == "scalar":  # a runtime stride: no vector lanes to widen
                return g.counted_loop(_ZERO, cnt, carry,
                                      lambda j, c: relem(state, j, c, tag), "scalar")
            return count_row(g, lambda j: xs_at(state, j, tag, counts=True)[0], cnt, carry,
                             hint(tag))

        def unit_rows(state, tag) -> list[ir.Value]:  # rows read at stride 1, by pointer
            return [state[1][i].p for n, i in enumerate(full) if isinstance(state[1][i], Ptr)
                    and isinstance(pick(n, tag), ir.Constant) and pick(n, tag).constant == 1]

        def hint(tag) -> str | None:
            return inner_hint(g, [pick(n, tag) for n in range(len(full))], full)

        def sum_row(state, cnt, carry, tag):
            if hint(tag) == "scalar":  # a runtime stride: no vector lanes
                return strided_sum(g, lambda j: x_at(state, j, tag), cnt, carry)
            if self.sum32:
                return blocked_sum32(g, lambda j: x_at(state, j, tag, float32), cnt,
                                     carry, unit_rows(state, tag))
            return compensated_sum(g, lambda j: x_at(state, j, tag), cnt, carry, hint(tag))

        rs = g.ctl["rstart"]
        if one is None:
            row = sibling_rows
        else:
            float_sum = one.op == "sum" and one.acc.is_float
            row = arg_row if one.is_arg else lse_row if one.is_lse else \
                sum_row if float_sum else \
                nan_row if one.op in ("nanmax", "nanmin") and one.acc.is_float else \
                count_rows if one.counted is not None else None
        return g.loop_range(rs, g.ctl["rend"], g.shape(self.nout, self.nd), acc.init(rs), rrow,
                            relem, versions, check, row, hint)

    def combine(self, flat_o) -> list[ir.Value]:
        """Mode 2: fold the per-thread partials, in thread order.

        Float sums fold with Neumaier's compensation (a second register
        each): the part count grows with the thread count (4 per thread),
        and a plain fold of 61 parts (16 threads) left a float64 sum of 1M
        values of 0.1 further off than NumPy's pairwise sum."""
        g, b, acc = self.g, self.b, self.acc
        base = self.nin + len(self.k.outputs)
        sums = [a.op == "sum" and a.acc.is_float for a in acc.each]

        def parts_at(p):
            slot = g.add(g.mul(p, g.ctl["nout"]), flat_o)
            return acc.split([acc.from_mem(b, b.load(b.gep(g.ptr[base + q], [slot])), d)
                              for q, d in enumerate(acc.partial_dtypes)])

        widths = [2 if is_sum else len(a.partial_dtypes) for a, is_sum in zip(acc.each, sums)]

        def body(p, carry):
            first = b.icmp_signed("==", p, _ZERO)
            return [v for a, is_sum, c, x in zip(acc.each, sums, cut(carry, widths), parts_at(p))
                    for v in (neumaier(b, c, x[0]) if is_sum else a.combine(b, c, x, first))]

        init = [v for a, is_sum, c in zip(acc.each, sums, acc.split(acc.init(_ZERO)))
                for v in (c + [ir.Constant(c[0].type, 0.0)] if is_sum else c)]
        folded = cut(g.counted_loop(_ZERO, g.ctl["nparts"], init, body, "scalar"), widths)
        return [v for is_sum, c in zip(sums, folded) for v in ([b.fadd(*c)] if is_sum else c)]

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
        g, b, acc = self.g, self.b, self.acc
        if self.one is not None and self.one.is_lse:
            self.tiled_lse(start, tn, arrays)
            return

        def flush():
            def add(t, _):
                p32, p64 = b.gep(f32, [t]), b.gep(arrays[0], [t])
                b.store(b.fadd(b.load(p64), b.fpext(b.load(p32), ir.DoubleType())), p64)
                b.store(const(float32, 0.0), p32)
                return []
            g.counted_loop(_ZERO, tn, [], add)

        def step(t, index, xs):
            if f32 is not None:
                p = b.gep(f32, [t])
                b.store(b.fadd(b.load(p), xs[0]), p)
                return
            ptrs = [b.gep(a, [t]) for a in arrays]
            new = acc.update(b, [b.load(p) for p in ptrs], acc.convert(b, xs), index)
            for p, v in zip(ptrs, new):
                b.store(v, p)

        def after_row(index):
            last = b.icmp_signed("==", b.and_(b.sub(index, g.ctl["rstart"]),
                                              ir.Constant(I64, SUM_ROWS - 1)),
                                 ir.Constant(I64, SUM_ROWS - 1))
            with b.if_then(last):
                flush()

        self.down_tile(start, tn, g.ctl["rstart"], g.ctl["rend"], step,
                       after_row if f32 is not None else None)
        if f32 is not None:
            flush()

    def tiled_lse(self, start, tn, arrays) -> None:
        """logsumexp down a tile's columns, LSE_ROWS reduce steps at a time,
        as the row loop does along a row (row_loops.blocked_lse): per block,
        each column's max (a plain vector max), then its sum of exp(x -
        shift) over the same elements while they are in cache, folded into
        the (max, sum) pair once per block. An update of the pair per
        element costs an exp in float64: a 4096 x 4096 float32 logsumexp
        over axis 0 took 23.6 ms that way, against 6.3 over axis 1."""
        g, b, one = self.g, self.b, self.one
        bd, xd = one.block_dtype, one.red.expr.dtype
        entry = ir.IRBuilder(g.fn.blocks[0])
        entry.position_at_start(g.fn.blocks[0])
        bmax, shift, bsum = (entry.alloca(const(bd, 0.0).type, size=MAX_TILE) for _ in range(3))
        mx = intrinsic(b, "llvm.maximum", const(bd, 0.0).type, 2)
        rstart, rend = g.ctl["rstart"], g.ctl["rend"]
        rows = ir.Constant(I64, LSE_ROWS)

        def per_column(fn):
            def body(t, _):
                fn(t, [b.load(b.gep(a, [t])) for a in arrays])
                return []
            g.counted_loop(_ZERO, tn, [], body)

        def start_block(t, carry):
            b.store(const(bd, float("-inf")), b.gep(bmax, [t]))
            b.store(const(bd, 0.0), b.gep(bsum, [t]))

        def to_max(t, index, xs):
            p = b.gep(bmax, [t])
            b.store(b.call(mx, [b.load(p), cast(b, xs[0], xd, bd)]), p)

        def set_shift(t, carry):
            b.store(one.lse_shift(b, carry[0], b.load(b.gep(bmax, [t]))), b.gep(shift, [t]))

        def to_sum(t, index, xs):
            p = b.gep(bsum, [t])
            x = cast(b, xs[0], xd, bd)
            r = b.fadd(b.load(p), one.block_exp(b, b.fsub(x, b.load(b.gep(shift, [t])))))
            r.flags.append("reassoc")
            b.store(r, p)

        def fold(t, carry):
            new = one.lse_fold(b, carry, b.load(b.gep(bmax, [t])), b.load(b.gep(bsum, [t])))
            for a, v in zip(arrays, new):
                b.store(v, b.gep(a, [t]))

        def block(bi, _):
            rb = b.add(rstart, g.mul(bi, rows))
            re = b.add(rb, rows)
            re = b.select(b.icmp_signed("<", rend, re), rend, re)
            per_column(start_block)
            self.down_tile(start, tn, rb, re, to_max)
            per_column(set_shift)
            self.down_tile(start, tn, rb, re, to_sum)
            per_column(fold)
            return []

        nblocks = b.udiv(b.add(b.sub(rend, rstart), ir.Constant(I64, LSE_ROWS - 1)), rows)
        g.counted_loop(_ZERO, nblocks, [], block)

    def down_tile(self, start, tn, r0, r1, step, after_row=None) -> None:
        """for each reduce element r in [r0, r1): for t in tile: step(t, r, xs),
        xs the reductions' elements at (t, r); then after_row(r)."""
        g, reds, full, r_st = self.g, self.reds, self.full, self.r_st

        def rrow(rflat, idx, col):
            return rflat, {i: _row_base(g, start[i], idx, col, r_st[i]) for i in full}

        def relem(state, jr, _c, tag):
            rflat, rb = state
            rloc = {i: _row_loc(g, i, _at(g, rb[i], jr, r_st[i][-1])) for i in full}
            index = g.add(rflat, jr)

            def per_t(t, _):
                pos = {i: _at(g, rloc[i], t, self.so(i)) for i in full}
                pos.update({i: _at(g, start[i], t, self.so(i)) for i in self.out_inputs})
                vals = g.evaluate([r.expr for r in reds], _leaf(g, pos, {}))
                step(t, index, [vals[id(r.expr)] for r in reds])
                return []
            g.counted_loop(_ZERO, tn, [], per_t)
            if after_row is not None:
                after_row(index)
            return []

        g.loop_range(r0, r1, g.shape(self.nout, self.nd), [], rrow, relem)
