"""Kernel IR -> LLVM IR (llvmlite.ir).

Every kernel becomes one function with the same C signature, so one
native launcher (dispatch.py) calls them all:

    void k(i64* launch, i8** bufs, i64* ctl, i64* scalars)

`launch` is `pack_launch`'s int64 array (sizes, strides, offsets), `bufs`
holds input pointers, output pointers, then (reductions) the partial-result
buffers, `scalars` holds `pack_launch`'s bit patterns, and `ctl` is the
control block below, which lets the launcher split work over threads
without another compiled variant:

    ctl = [mode, start, end, rstart, rend, part, nparts, nout, tile]

The out space is walked as a flat range [start, end) cut into rows of the
innermost axis: the range's first row finds its multi-index by division,
each later row adds one to it (a division per row cost 2.9 -> 2.0 ms on
1M x 3 rows), then a tight inner loop runs over the last axis whose strides
are compile-time 1, 0 or -1 when `inner` says so (that is what lets it
vectorize), runtime otherwise.
Reductions walk the flattened reduce range [rstart, rend) the same way, the
innermost reduce axis being the hot loop. Modes (reductions only):
0 = reduce and run the epilogue, 1 = store per-thread partials at
`part * nout + o`, 2 = fold `nparts` partials and run the epilogue.
`tile` selects the reduction loop order (see reduce_loops.py); in
elementwise kernels of rank >= 2 it selects the tiled order over the last
two axes (loops.py), where [start, end) then counts tiles, not elements.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from llvmlite import ir

from scheduler.dtypes import bool_ as _BOOL, float64 as _F64, int64 as _I64
from scheduler.kernel_ir import Cast, Expr, Gather, Kernel, Op, arg_layout, postorder
from scheduler.ops import ELEMENTWISE, op_compute_dtype

from . import simd
from .lowering import F64, I8, I64, cast, emit_op, like, mem_type
from .reduction import Accumulators

CTL = ("mode", "start", "end", "rstart", "rend", "part", "nparts", "nout", "tile")
MODE_FULL, MODE_PARTIAL, MODE_FINAL = 0, 1, 2

# Loop hints: `!llvm.loop` properties, by name, that keep LLVM from spending
# compile time (a third to a half of it) on loop copies that never run or
# never pay: "scalar" for loops that run a handful of iterations or whose
# hot path cannot vectorize, "novec" for the latter when unrolling pays
# (the tiled transpose), "remainder" for vectorizable loops whose scalar
# copy only finishes a row (fewer than VF x interleave elements), which
# runtime unrolling would only make bigger. (Not `llvm.loop.unroll.disable`
# there: it also turns off interleaving, which reductions need.) Loops
# around other loops are never unrolled ("outer"). "simd": a loop the
# generator has vectorized itself (simd.py).
LOOP_HINTS: dict[str, tuple[tuple[str, bool | None], ...]] = {
    "scalar": (("llvm.loop.vectorize.enable", False), ("llvm.loop.unroll.disable", None)),
    "novec": (("llvm.loop.vectorize.enable", False),),
    "remainder": (("llvm.loop.unroll.runtime.disable", None),),
    "simd": (("llvm.loop.vectorize.enable", False), ("llvm.loop.unroll.runtime.disable", None)),
    "outer": (("llvm.loop.unroll.disable", None),),
}

RowFn = Callable[[ir.Value, list[ir.Value], ir.Value], object]
ElemFn = Callable[[object, ir.Value, list[ir.Value], object], list[ir.Value]]


class Ptr(NamedTuple):
    """A direct element pointer (plain views) as opposed to an i64 position.

    Rows of plain views are addressed as `gep(row_ptr, j * stride)`: SCEV then
    sees a no-wrap pointer recurrence, which LLVM needs to form interleaved
    (wide load + shuffle) accesses for constant strides such as 2. `step`
    is that stride when it is a compile-time constant: a vector load
    (simd.py) reads `lanes` elements from `p` on at that step.
    """
    p: ir.Value
    step: int | None = None


class Hoisted(NamedTuple):
    """An input's value for a whole row, loaded before the row's inner loop:
    its inner stride is the constant 0 (`x[:, None]`, a row's index in a
    gather). LLVM cannot hoist that load itself (the row's stores might
    alias it), and a load left inside keeps the loop from vectorizing."""
    value: ir.Value


class _LoopID(ir.values.MDValue):
    """A loop's `!llvm.loop` node, `distinct !{self, properties...}`: LLVM
    wants the self reference, which `ir.Module.add_metadata` cannot build."""

    def __init__(self, module: ir.Module, props: list[ir.values.MDValue]):
        super().__init__(module, props, name=str(len(module.metadata)))

    def descr(self, buf: list[str]) -> None:
        refs = ", ".join([self.get_reference()] + [p.get_reference() for p in self.operands])
        buf += (f"distinct !{{{refs}}}", "\n")

    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)


def function_name(kernel: Kernel, variant: int | str | None = None) -> str:
    """Symbol name: from the structural key (Kernel.digest() uses repr, which
    recurses and fails on deep expressions)."""
    from .keys import key_digest, structural_key, variant_key
    return f"lazy_{key_digest(variant_key(structural_key(kernel), variant))}"


class _Gen:
    def __init__(self, k: Kernel, triple: str = "", data_layout: str = "",
                 variant: int | str | None = None):
        from .keys import STREAM
        self.k, self.lay = k, arg_layout(k)
        self.alias = variant if isinstance(variant, int) else None
        self.stream = variant == STREAM
        self.mod = ir.Module(name=function_name(k, variant))
        if triple:
            self.mod.triple = triple
        if data_layout:
            self.mod.data_layout = data_layout
        p64 = I64.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [p64, I8.as_pointer().as_pointer(), p64, p64])
        self.fn = ir.Function(self.mod, fnty, name=self.mod.name)
        self.fn.attributes.add("nounwind")
        self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        launch, bufs, ctl, scal = self.fn.args
        b = self.b
        self.a = [b.load(b.gep(launch, [ir.Constant(I64, i)]), name=f"a{i}")
                  for i in range(self.lay.size)]
        self.ctl = {n: b.load(b.gep(ctl, [ir.Constant(I64, i)]), name=n) for i, n in enumerate(CTL)}
        self.acc = Accumulators(k.reductions) if k.reduce is not None else None
        self.nloops = 0  # loops emitted so far: a loop whose body adds one is "outer"
        self.lanes: int | None = None  # set while emitting a simd.py vector loop body
        self.rem: ir.Value | None = None  # ... and its lanes in the row, in a masked step
        dts = [i.dtype for i in k.inputs] + [o.dtype for o in k.outputs]
        dts += self.acc.partial_dtypes if self.acc else []
        self.ptr = []
        for i, d in enumerate(dts):
            raw = b.load(b.gep(bufs, [ir.Constant(I64, i)]))
            self.ptr.append(b.bitcast(raw, mem_type(d).as_pointer()))
        self.scalars = []
        for i, d in enumerate(k.scalars):
            bits = b.load(b.gep(scal, [ir.Constant(I64, i)]))
            if d.is_float:
                self.scalars.append(cast(b, b.bitcast(bits, F64), _F64, d))
            else:
                self.scalars.append(cast(b, bits, _I64, d))

    # -- helpers -----------------------------------------------------------------------
    def shape(self, lo: int, hi: int) -> list[ir.Value]:
        """Domain extents of axes [lo, hi); a rank-0 space is one virtual axis of 1."""
        return self.a[lo:hi] or [ir.Constant(I64, 1)]

    def add(self, x: ir.Value, y: ir.Value) -> ir.Value:
        """Index arithmetic: nsw tells SCEV positions never wrap, which the
        vectorizer needs to see constant-stride (interleaved) accesses."""
        v = self.b.add(x, y)
        v.flags.append("nsw")
        return v

    def mul(self, x: ir.Value, y: ir.Value) -> ir.Value:
        v = self.b.mul(x, y)
        v.flags.append("nsw")
        return v

    def dot(self, base: ir.Value, idx: list[ir.Value], strides: list[ir.Value]) -> ir.Value:
        for i, s in zip(idx, strides):
            base = self.add(base, self.mul(i, s))
        return base

    def _divisor(self, n: ir.Value) -> ir.Value:
        """`n`, or 1 where it is 0. A zero extent means an empty range, whose
        first-row index is never used, but LLVM may hoist the division above
        the emptiness check, and x86 traps on division by zero (SIGFPE)."""
        return self.b.select(self.b.icmp_unsigned("==", n, ir.Constant(I64, 0)),
                             ir.Constant(I64, 1), n)

    def loop_range(self, start: ir.Value, end: ir.Value, shape: list[ir.Value],
                   carry: list[ir.Value], row_fn: RowFn, elem_fn: ElemFn,
                   versions: tuple = (), check: Callable | None = None,
                   row_body: Callable | None = None,
                   hint: Callable[[object], str | None] | None = None) -> list[ir.Value]:
        """Flat range over `shape` (C order) as rows x innermost axis.

        row_fn(flat, outer_idx, col) runs once per row; elem_fn(row_state, j,
        carry, tag) per element and returns the new carry, which is returned at
        the end. For each tag in `versions` a specialized copy of the inner loop
        is emitted and taken for rows where check(row_state, tag) holds; the
        generic copy (tag None) runs otherwise. `row_body(row_state, cnt, carry,
        tag)`, when given, emits the whole inner loop itself (blocked argmax);
        else `hint(tag)` names LOOP_HINTS for that copy of the inner loop.
        """
        b = self.b
        multi = len(shape) > 1  # else one row: the range already lies inside it
        if multi:  # the first row's multi-index; later rows step it (no division per row)
            n_last = shape[-1]
            last = self._divisor(n_last)
            row, col0 = b.udiv(start, last), b.urem(start, last)
            idx0 = []
            for n in reversed(shape[1:-1]):
                n = self._divisor(n)
                idx0.append(b.urem(row, n))
                row = b.udiv(row, n)
            idx0 = [row] + idx0[::-1]
        pre = b.block
        self.nloops += 1
        head, body = b.append_basic_block("row"), b.append_basic_block("row.body")
        done = b.append_basic_block("row.done")
        b.branch(head)
        b.position_at_end(head)
        flat = b.phi(I64, name="flat")
        flat.add_incoming(start, pre)
        rc = [b.phi(v.type) for v in carry]
        for p, v in zip(rc, carry):
            p.add_incoming(v, pre)
        if multi:
            col, idx = b.phi(I64, name="col"), [b.phi(I64) for _ in idx0]
            for p, v in zip([col, *idx], [col0, *idx0]):
                p.add_incoming(v, pre)
        b.cbranch(b.icmp_signed("<", flat, end), body, done)
        b.position_at_end(body)
        left = b.sub(end, flat)
        if multi:
            cnt = b.sub(n_last, col)
            cnt = b.select(b.icmp_signed("<", left, cnt), left, cnt)
        else:
            col, cnt, idx = flat, left, []
        state = row_fn(flat, idx, col)
        nxt = b.append_basic_block("row.next")
        exits = []
        for tag in list(versions) + [None]:
            if tag is not None:  # a specialized copy of the inner loop, taken when check holds
                take, other = b.append_basic_block(f"inner.v{tag}"), b.append_basic_block("vchk")
                b.cbranch(check(state, tag), take, other)
                b.position_at_end(take)
            if row_body is not None:
                new = row_body(state, cnt, rc, tag)
            else:
                new = self.counted_loop(ir.Constant(I64, 0), cnt, rc,
                                        lambda j, c, tag=tag: elem_fn(state, j, c, tag),
                                        hint(tag) if hint is not None else None)
            exits.append((b.block, new))
            b.branch(nxt)
            if tag is not None:
                b.position_at_end(other)
        self.fn.blocks.remove(nxt)
        self.fn.blocks.append(nxt)
        b.position_at_end(nxt)
        for n, p in enumerate(rc):
            q = b.phi(p.type)
            for latch, new in exits:
                q.add_incoming(new[n], latch)
            p.add_incoming(q, nxt)
        flat.add_incoming(self.add(flat, cnt), nxt)
        if multi:  # the next row starts at column 0: add 1 to the multi-index, carrying
            col.add_incoming(ir.Constant(I64, 0), nxt)
            step = ir.Constant(I64, 1)
            for d in reversed(range(len(idx))):
                v = self.add(idx[d], step)
                if d > 0:
                    wrap = b.icmp_signed("==", v, shape[d])
                    v = b.select(wrap, ir.Constant(I64, 0), v)
                    step = b.zext(wrap, I64)
                idx[d].add_incoming(v, nxt)
        b.branch(head).set_metadata("llvm.loop", self.loop_id(["outer"]))
        # keep `done` last so later code is laid out after the loop
        self.fn.blocks.remove(done)
        self.fn.blocks.append(done)
        b.position_at_end(done)
        return list(rc)

    def loop_id(self, hints: list[str]) -> _LoopID:
        """A fresh loop ID carrying LOOP_HINTS of `hints` (each loop needs its own)."""
        props = []
        for name, flag in dict(p for h in hints for p in LOOP_HINTS[h]).items():
            ops = [ir.MetaDataString(self.mod, name)]
            if flag is not None:
                ops.append(ir.Constant(ir.IntType(1), int(flag)))
            props.append(self.mod.add_metadata(ops))
        return _LoopID(self.mod, props)

    def counted_loop(self, lo: ir.Value, hi: ir.Value, carry: list[ir.Value],
                     body: Callable[[ir.Value, list[ir.Value]], list[ir.Value]],
                     hint: str | None = None) -> list[ir.Value]:
        """for j in [lo, hi): carry = body(j, carry); returns the final carry.
        `hint` names LOOP_HINTS for the loop."""
        b = self.b
        pre = b.block
        self.nloops += 1
        nloops = self.nloops
        loop, exit_ = b.append_basic_block("loop"), b.append_basic_block("loop.exit")
        b.cbranch(b.icmp_signed("<", lo, hi), loop, exit_)
        b.position_at_end(loop)
        j = b.phi(I64, name="j")
        j.add_incoming(lo, pre)
        c = [b.phi(v.type) for v in carry]
        for p, v in zip(c, carry):
            p.add_incoming(v, pre)
        new = body(j, c)
        j1 = self.add(j, ir.Constant(I64, 1))
        latch = b.block
        j.add_incoming(j1, latch)
        for p, v in zip(c, new):
            p.add_incoming(v, latch)
        hints = ([hint] if hint else []) + (["outer"] if self.nloops > nloops else [])
        latch_br = b.cbranch(b.icmp_signed("<", j1, hi), loop, exit_)
        if hints:
            latch_br.set_metadata("llvm.loop", self.loop_id(hints))
        self.fn.blocks.remove(exit_)
        self.fn.blocks.append(exit_)
        b.position_at_end(exit_)
        out = []
        for v, n in zip(carry, new):
            p = b.phi(v.type)
            p.add_incoming(v, pre)
            p.add_incoming(n, latch)
            out.append(p)
        return out

    def position(self, i: int, first: ir.Value) -> ir.Value:
        """Chained views: unravel over each view's shape, apply its strides."""
        b = self.b
        pos = first
        for slot in self.lay.inputs[i][1:]:
            acc, q = self.a[slot.offset], pos
            for d in reversed(range(slot.rank)):
                n, s = self.a[slot.shape + d], self.a[slot.strides + d]
                dig = b.urem(q, n) if d else q
                if d:
                    q = b.udiv(q, n)
                acc = self.add(acc, self.mul(dig, s))
            pos = acc
        return pos

    def splat(self, v: ir.Value) -> ir.Value:
        """A row-invariant value as an operand of the code being emitted:
        itself, or in every lane inside a vector loop."""
        return simd.splat(self.b, v, self.lanes) if self.lanes else v

    def load(self, i: int, loc: "ir.Value | Ptr") -> tuple[ir.Value, object]:
        """Value of input i at a position (through its chain) or a direct pointer
        (and the `lanes` elements from there on, inside a vector loop)."""
        inp = self.k.inputs[i]
        if isinstance(loc, Hoisted):
            return self.splat(loc.value), inp.dtype
        if isinstance(loc, Ptr):
            v = simd.load(self.b, loc.p, loc.step, self.lanes, self.rem) if self.lanes \
                else self.b.load(loc.p)
        else:
            pos = self.position(i, loc)
            if inp.iota:
                return pos, _I64
            v = self.b.load(self.b.gep(self.ptr[i], [pos], inbounds=True))
        if inp.dtype.is_bool:
            v = self.b.icmp_unsigned("!=", v, ir.Constant(v.type, 0))
        return v, inp.dtype

    def gather(self, i: int, pos: ir.Value, pos_dtype) -> ir.Value:
        """Input i at an absolute element position (its views are not used)."""
        b = self.b
        v = b.load(b.gep(self.ptr[i], [cast(b, pos, pos_dtype, _I64)], inbounds=True))
        if self.k.inputs[i].dtype.is_bool:
            v = b.icmp_unsigned("!=", v, ir.Constant(I8, 0))
        return v

    def evaluate(self, roots: list[Expr], leaf: Callable[[Expr], ir.Value]) -> dict[int, ir.Value]:
        """Emit `roots` in postorder, each shared node once."""
        b, vals = self.b, {}
        for e in postorder(roots):
            if isinstance(e, Op):
                prim = ELEMENTWISE[e.name]
                comp = op_compute_dtype(e.name, [a.dtype for a in e.args])
                args = [cast(b, vals[id(a)], a.dtype,
                             _BOOL if e.name == "where" and n == 0 else comp)
                        for n, a in enumerate(e.args)]
                v = emit_op(b, e.name, comp, args)
                v = cast(b, v, prim.result_dtype(comp), e.dtype)
            elif isinstance(e, Cast):
                v = cast(b, vals[id(e.x)], e.x.dtype, e.dtype)
            elif isinstance(e, Gather):
                v = cast(b, self.gather(e.input, vals[id(e.pos)], e.pos.dtype),
                         self.k.inputs[e.input].dtype, e.dtype)
            else:
                v = leaf(e)
            vals[id(e)] = v
        return vals

    def out_roots(self) -> list[Expr]:
        """What the epilogue evaluates: every output's value and position."""
        k = self.k
        return [o.expr for o in k.outputs] + [o.pos for o in k.outputs if o.pos is not None]

    def store_outputs(self, vals: dict[int, ir.Value], locs: list) -> None:
        """Store every output at its view location, or at `Output.pos` when set.

        `vals` must hold every output's expr and pos: all values of an element
        are computed before any of its stores, so an output that shares memory
        with an input it reads at the same element (an in-place write) sees
        the old value.
        """
        b = self.b
        nin = len(self.k.inputs)
        for n, (o, loc) in enumerate(zip(self.k.outputs, locs)):
            v = cast(b, vals[id(o.expr)], o.expr.dtype, o.dtype)
            if o.dtype.is_bool:
                v = b.zext(v, like(v.type, I8))
            if self.lanes:  # simd.lanes admits only plain, row-contiguous outputs
                simd.store(b, v, loc.p, self.rem)
                continue
            if o.pos is not None:
                at = cast(b, vals[id(o.pos)], o.pos.dtype, _I64)
                ptr = b.gep(self.ptr[nin + n], [at], inbounds=True)
            elif isinstance(loc, Ptr):
                ptr = loc.p
            else:
                ptr = b.gep(self.ptr[nin + n], [loc], inbounds=True)
            b.store(v, ptr)


def generate(kernel: Kernel, triple: str = "", data_layout: str = "",
             variant: int | str | None = None) -> ir.Module:
    """The LLVM module holding `kernel`'s entry point `function_name(kernel, variant)`.

    `variant` (loops.py): an input index, the in-place variant, with an extra
    inner-loop copy for rows where that input is read exactly where the
    output is written; keys.STREAM, the variant that can write its output
    with streaming stores (ctl.tile == TILE_STREAM).
    """
    from .loops import emit_body
    from .sincos import keep_variants
    g = _Gen(kernel, triple, data_layout, variant)
    emit_body(g)
    g.b.ret_void()
    keep_variants(g.mod)
    return g.mod
