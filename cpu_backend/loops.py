"""Loop-nest building blocks, the elementwise body, and blocked argmax.

Elementwise kernels have two loop orders, chosen per launch by ctl.tile
(launch.choose_tile): rows of the flat out range, or tiles over the last
two axes when an operand is strided along the last axis (`A + A.T`).

Locations are kept per row (a pointer for plain views, a position for
chained/iota ones) and stepped by `j * inner_stride`, so that when the inner
stride is a compile-time constant, 1, 0 or -1 (`Input.inner`, `Output.inner`),
the address is a plain affine induction LLVM vectorizes, or that simd.py
loads as whole vectors when the row qualifies (`inner` in `_elementwise`).
The reduction nest, which reuses these helpers, is in reduce_loops.py.

Large outputs are written with non-temporal (streaming) stores, ctl.tile =
TILE_STREAM: see `_streamed_rows`.
"""
from __future__ import annotations

from typing import Callable

from llvmlite import ir

from scheduler.kernel_ir import Expr, Kernel, Load, Reduced, Scalar, ViewSlot

from . import simd
from .codegen import Hoisted, Ptr, _Gen
from .lowering import I64, cast, mem_type

_ZERO = ir.Constant(I64, 0)
# Inner strides that get their own copy of an inner loop when every runtime
# stride equals it: constant strides let LLVM vectorize with interleaved
# (shuffled) loads, e.g. x[:, 0] of an (n, 2) array. Stride 1 needs no copy:
# a runtime stride is never 1 (`Input.inner` says so), and the generic copy
# stays scalar (inner_hint).
STRIDE_VERSIONS = (2,)

# ctl.tile of elementwise kernels: rows of the flat range, square tiles over
# the last two axes, or rows whose output is written with streaming stores
TILE_ROWS, TILE_SQUARE, TILE_STREAM = 0, 1, 2
STREAM_BLOCK = 256  # bytes of output computed into an L1 buffer, then streamed out
# Bytes (at unit stride) ahead of a streamed block that its inputs' lines are
# asked for, into L1 (`_prefetch_inputs`); 0 turns it off.
STREAM_PREFETCH = 4096


def _strides(g: _Gen, slot: ViewSlot, lo: int, hi: int, inner: int | None) -> list[ir.Value]:
    """Strides of axes [lo, hi) of a view; the view's innermost stride is the
    constant `inner` when given; a rank-0 range is one virtual axis, stride 0."""
    s = [g.a[slot.strides + d] for d in range(lo, hi)]
    if s and inner is not None and hi == slot.rank:
        s[-1] = ir.Constant(I64, inner)
    return s or [_ZERO]


def _row_base(g: _Gen, start: ir.Value, idx: list[ir.Value], col: ir.Value,
              st: list[ir.Value]) -> ir.Value:
    return g.add(g.dot(start, idx, st[:-1]), g.mul(col, st[-1]))


def _at(g: _Gen, loc, j: ir.Value, s: ir.Value):
    """Location of element j of a row: a Ptr steps by gep, a position by add."""
    zero = isinstance(s, ir.Constant) and s.constant == 0
    one = isinstance(s, ir.Constant) and s.constant == 1
    fixed = s.constant if isinstance(s, ir.Constant) else None
    if zero:
        return loc._replace(step=0) if isinstance(loc, Ptr) else loc
    step = j if one else g.mul(j, s)
    if isinstance(loc, Ptr):
        return Ptr(g.b.gep(loc.p, [step], inbounds=True), fixed)
    return g.add(loc, step)


def _fixed_view(g: _Gen, n: int) -> bool:
    """Buffer n (inputs, then outputs) is not addressed through its view: an
    indirect input (read only by Gather) or an output stored at Output.pos.
    Its (dummy) strides must not decide which inner-loop copy runs."""
    nin = len(g.k.inputs)
    return g.k.inputs[n].indirect if n < nin else g.k.outputs[n - nin].pos is not None


def _stride_versions(g: _Gen, inner: list[ir.Value], skip: list[bool] | None = None):
    """(versions, check, pick) for the runtime inner strides among `inner`
    (those with `skip[n]` set take no part: they keep their runtime value)."""
    runtime = [n for n, s in enumerate(inner)
               if not isinstance(s, ir.Constant) and not (skip and skip[n])]

    def check(_state, tag):
        ok = ir.Constant(ir.IntType(1), 1)
        for n in runtime:
            ok = g.b.and_(ok, g.b.icmp_signed("==", inner[n], ir.Constant(I64, tag)))
        return ok

    def pick(n: int, tag) -> ir.Value:
        return ir.Constant(I64, tag) if tag is not None and n in runtime else inner[n]

    return (STRIDE_VERSIONS if runtime else ()), check, pick


def inner_hint(g: _Gen, strides: list[ir.Value], views) -> str | None:
    """The LOOP_HINTS name for an inner loop over buffers `views` (inputs,
    then outputs) stepping by `strides`.

    A runtime stride is never 0, 1 or -1 (`Input.inner` would have fixed it), so
    the copy LLVM vectorizes behind a stride == 1 check would never run:
    "scalar" (unrolling that strided loop measured no faster either: 10M
    elements of stride 3, 4.2 ms both ways). With every stride a
    compile-time constant and plain views, the loop vectorizes without such
    checks and its scalar copy only finishes a row: "remainder". Buffers
    that are not addressed through their view take no part.
    """
    live = [(s, n) for s, n in zip(strides, views) if not _fixed_view(g, n)]
    if any(not isinstance(s, ir.Constant) for s, _ in live):
        return "scalar"
    return "remainder" if all(_plain(g, n) for _, n in live) else None


def _plain(g: _Gen, n: int) -> bool:
    """Buffer n (inputs, then outputs) is read/written without chain or iota."""
    if n >= len(g.k.inputs):
        return True
    inp = g.k.inputs[n]
    return not inp.chain and not inp.iota


def _row_loc(g: _Gen, n: int, base: ir.Value):
    """A row's start: a pointer for plain buffers, else the position."""
    return Ptr(g.b.gep(g.ptr[n], [base], inbounds=True)) if _plain(g, n) else base


def _leaf(g: _Gen, pos: dict[int, ir.Value], cache: dict[int, ir.Value],
          reduced: Callable[[Reduced], ir.Value] | None = None):
    def leaf(e: Expr) -> ir.Value:
        if isinstance(e, Load):
            if e.input not in cache:
                if e.input not in pos:
                    raise ValueError(f"input {e.input} is not readable here "
                                     "(a full-space load in an epilogue?)")
                v, d = g.load(e.input, pos[e.input])
                cache[e.input] = cast(g.b, v, d, e.dtype)
            return cache[e.input]
        if isinstance(e, Scalar):
            return g.splat(g.scalars[e.slot])
        if isinstance(e, Reduced) and reduced is not None:
            return reduced(e)
        raise ValueError(f"{e} cannot be evaluated here")
    return leaf


def emit_body(g: _Gen) -> None:
    if g.k.reduce is None:
        _elementwise(g)
    else:
        from .reduce_loops import ReductionLoops
        ReductionLoops(g).emit()


def _elementwise(g: _Gen) -> None:
    k = g.k
    nout = k.n_out
    in_st = [_strides(g, g.lay.inputs[i][0], 0, g.lay.inputs[i][0].rank, inp.inner)
             for i, inp in enumerate(k.inputs)]
    out_st = [_strides(g, s, 0, nout, o.inner) for s, o in zip(g.lay.outputs, k.outputs)]
    views = [(g.lay.inputs[i][0], in_st[i]) for i in range(len(k.inputs))]
    views += [(s, st) for s, st in zip(g.lay.outputs, out_st)]

    nin = len(k.inputs)
    aliases = _alias_candidates(g, in_st, out_st)
    hoist = [n for n, inp in enumerate(k.inputs)
             if inp.inner == 0 and not inp.indirect and n not in aliases]

    def row(flat, idx, col):
        locs = [_row_loc(g, n, _row_base(g, g.a[slot.offset], idx, col, st))
                for n, (slot, st) in enumerate(views)]
        for n in hoist:
            locs[n] = Hoisted(g.load(n, locs[n])[0])
        for n, o in enumerate(k.outputs):  # one base for outputs tiling one buffer
            lead = locs[len(k.inputs) + (o.follows or 0)]
            if o.follows is not None and isinstance(lead, Ptr):
                locs[len(k.inputs) + n] = Ptr(g.b.gep(lead.p, [ir.Constant(I64, o.delta)],
                                                      inbounds=True))
        return locs

    versions, check, pick = _stride_versions(g, [st[-1] for _, st in views],
                                             [_fixed_view(g, n) for n in range(len(views))])
    # (stride tag, aliased input): alias versions first, then stride-only ones
    tags = [(s, a) for a in aliases for s in list(versions) + [None]] + [(s, None) for s in versions]

    def vcheck(bases, tag):
        s, a = tag
        ok = check(bases, s) if s is not None else ir.Constant(ir.IntType(1), 1)
        if a is not None:
            same = g.b.icmp_unsigned("==", bases[a].p, bases[nin].p)
            if not isinstance(in_st[a][-1], ir.Constant) or \
                    not isinstance(out_st[0][-1], ir.Constant):
                same = g.b.and_(same, g.b.icmp_signed("==", in_st[a][-1], out_st[0][-1]))
            ok = g.b.and_(ok, same)
        return ok

    def elem(bases, j, carry, tag):
        s, a = tag if tag is not None else (None, None)
        pos = [_at(g, base, j, pick(n, s)) for n, base in enumerate(bases)]
        if a is not None:  # read where it is written: the same pointer, no alias check
            pos[a] = pos[nin]
        vals = g.evaluate(g.out_roots(), _leaf(g, dict(enumerate(pos[:nin])), {}))
        g.store_outputs(vals, pos[nin:])
        return []

    def hint(tag):
        s = tag[0] if tag is not None else None
        return inner_hint(g, [pick(n, s) for n in range(len(views))], range(len(views)))

    lanes = simd.lanes(k)

    def in_steps(tag) -> list:
        s = tag[0] if tag is not None else None
        return [None if inp.indirect or n in hoist else pick(n, s)
                for n, inp in enumerate(k.inputs)]

    def vector_fits(tag) -> bool:
        s = tag[0] if tag is not None else None
        return lanes is not None and \
            simd.steps_fit(in_steps(tag), [pick(n, s) for n in range(nin, len(views))])

    def inner(state, cnt, tag) -> None:
        """The inner loop over elements [0, cnt) of a row: simd.py's, or LLVM's to vectorize."""
        if vector_fits(tag):
            wide = any(isinstance(st, ir.Constant) and st.constant == 2 for st in in_steps(tag))
            simd.row_loop(g, cnt, lanes, lambda j: elem(state, j, [], tag), wide)
        else:
            g.counted_loop(_ZERO, cnt, [], lambda j, c: elem(state, j, c, tag), hint(tag))

    def rows(state, cnt, carry, tag):
        inner(state, cnt, tag)
        return carry

    stream = g.stream and stream_eligible(k, g.mod.triple)
    row_body = _streamed_rows(g, inner, pick) if stream else rows
    if not ew_tile_eligible(k):
        g.loop_range(g.ctl["start"], g.ctl["end"], g.shape(0, nout), [], row, elem, tags, vcheck,
                     row_body=row_body)
        _fence_streams(g, stream)
        return
    b = g.b
    tiled, plain = b.append_basic_block("ew.tiled"), b.append_basic_block("ew.rows")
    join = b.append_basic_block("ew.end")
    b.cbranch(b.icmp_signed("==", g.ctl["tile"], ir.Constant(I64, TILE_SQUARE)), tiled, plain)
    b.position_at_end(tiled)
    _tiled_elementwise(g, views, lambda locs, j: elem(locs, j, [], None))
    b.branch(join)
    b.position_at_end(plain)
    g.loop_range(g.ctl["start"], g.ctl["end"], g.shape(0, nout), [], row, elem, tags, vcheck,
                 row_body=row_body)
    _fence_streams(g, stream)
    b.branch(join)
    g.fn.blocks.remove(join)
    g.fn.blocks.append(join)
    b.position_at_end(join)


def stream_eligible(k: Kernel, triple: str) -> bool:
    """Whether an elementwise kernel has a streaming variant: one plain
    output, contiguous along the last axis, on x86-64 (whose `sfence` orders
    the streamed stores before the launch reports done). The in-place
    variant is another variant, so it never streams: it reads what it writes."""
    if k.reduce is not None or len(k.outputs) != 1:
        return False
    o = k.outputs[0]
    return o.pos is None and o.inner == 1 and o.follows is None and \
        triple.startswith("x86_64") and 64 % o.dtype.itemsize == 0


def _streamed_rows(g: _Gen, inner, pick):
    """The row loop of a kernel that may stream its output (ctl.tile ==
    TILE_STREAM). A row's output from its first 64-byte boundary on is cut
    into blocks of STREAM_BLOCK bytes; each block is computed into a stack
    buffer (L1) by a loop of fixed trip count, then copied out 64 bytes at a
    time with non-temporal stores. The head before the boundary and the
    tail after the last whole block (and whole rows when not streaming) are
    stored directly, by one loop over those two segments. Streaming skips
    the read a normal store makes of every output line it overwrites (a
    quarter of the traffic of `b + s * c`). Blocks are small because a long
    burst of streamed stores stalls on the write-combining buffers (4 KB
    blocks kept only a quarter of the gain, 256 B nearly all of it).
    Returns loop_range's `row_body`."""
    b, nin = g.b, len(g.k.inputs)
    ty = mem_type(g.k.outputs[0].dtype)
    isz = g.k.outputs[0].dtype.itemsize
    lanes, block = 64 // isz, STREAM_BLOCK // isz
    vec = ir.VectorType(ty, lanes)
    with b.goto_entry_block():
        buf = b.alloca(ir.ArrayType(ty, block), name="stream.buf")
        buf.align = 64
        on = b.icmp_signed("==", g.ctl["tile"], ir.Constant(I64, TILE_STREAM))
    tmp = b.bitcast(buf, ty.as_pointer())
    nt = g.mod.add_metadata([ir.Constant(ir.IntType(32), 1)])

    def c(n):
        return ir.Constant(I64, n)

    def shifted(state, lo, tag):
        s = tag[0] if tag is not None else None
        return [_at(g, base, lo, pick(i, s)) for i, base in enumerate(state)]

    def row_body(state, cnt, carry, tag):
        out0 = state[nin].p
        mis = b.and_(b.ptrtoint(out0, I64), c(63))
        fits = b.and_(on, b.icmp_unsigned("==", b.urem(mis, c(isz)), c(0)))
        to_align = b.udiv(b.and_(b.sub(c(64), mis), c(63)), c(isz))
        head = b.select(fits, b.select(b.icmp_signed("<", to_align, cnt), to_align, cnt), cnt)
        nblk = b.select(fits, b.udiv(b.sub(cnt, head), c(block)), c(0))
        tail = g.add(head, g.mul(nblk, c(block)))

        def one_block(_, carry):  # `lo` carried, not q * block: no multiply per block
            lo, = carry
            at = shifted(state, lo, tag)
            _prefetch_inputs(g, at, tag, pick)
            at[nin] = Ptr(tmp)
            inner(at, c(block), tag)
            out = b.gep(out0, [lo], inbounds=True)
            for v in range(block // lanes):
                src = b.bitcast(b.gep(tmp, [c(v * lanes)], inbounds=True), vec.as_pointer())
                dst = b.bitcast(b.gep(out, [c(v * lanes)], inbounds=True), vec.as_pointer())
                b.store(b.load(src, align=64), dst, align=64).set_metadata("nontemporal", nt)
            return [g.add(lo, c(block))]
        g.counted_loop(_ZERO, nblk, [head], one_block)

        def direct(seg, _):  # segment 0: [0, head); segment 1: [tail, cnt)
            first = b.icmp_signed("==", seg, _ZERO)
            lo = b.select(first, _ZERO, tail)
            hi = b.select(first, head, cnt)
            inner(shifted(state, lo, tag), b.sub(hi, lo), tag)
            return []
        g.counted_loop(_ZERO, c(2), [], direct)
        return carry

    return row_body


def _prefetch_inputs(g: _Gen, at: list, tag, pick) -> None:
    """Ask for the lines each plain input's part of this block covers,
    STREAM_PREFETCH bytes (times its stride) ahead, into L1. The hardware's stream
    prefetcher starts over at each 4 KB page and does not run far enough
    ahead for two threads reading at 30+ GB/s: W2 and W4 ran about 15%
    faster with it, W1 5-7%, the triad the same (docs/performance_history.md,
    "Streaming threshold from the private caches"). Only streamed blocks do
    this, so the base kernel is as before. The addresses may lie past the array: a prefetch never
    faults, and the GEPs are not `inbounds`.

    A block's input part is its output elements times the input's itemsize,
    times the stride when that is a compile-time constant (1, or one of
    STRIDE_VERSIONS): x[:, 0] of an (n, 2) float32 array reads 8 lines per
    block, not 4. Asking for only the first half left W1's kernel 3% slower
    (docs/performance_history.md, "Prefetching the whole strided block"). A run-time
    stride keeps the unit-stride span."""
    if not STREAM_PREFETCH:
        return
    b, s = g.b, tag[0] if tag is not None else None
    i8p = ir.IntType(8).as_pointer()
    block = STREAM_BLOCK // g.k.outputs[0].dtype.itemsize  # output elements
    for n, inp in enumerate(g.k.inputs):
        stride = pick(n, s)
        if not isinstance(at[n], Ptr) or inp.indirect or \
                (isinstance(stride, ir.Constant) and stride.constant == 0):
            continue
        ahead = ir.Constant(I64, STREAM_PREFETCH // inp.dtype.itemsize)
        first = b.bitcast(b.gep(at[n].p, [ahead if isinstance(stride, ir.Constant)
                                          and stride.constant == 1 else b.mul(ahead, stride)]), i8p)
        span = block * inp.dtype.itemsize * (stride.constant if isinstance(stride, ir.Constant)
                                             else 1)
        _prefetch(b, [b.gep(first, [ir.Constant(I64, line)])
                      for line in range(0, span, 64)], locality=3)


def _prefetch(b: ir.IRBuilder, addresses: list[ir.Value], locality: int) -> None:
    """llvm.prefetch of each i8* address, for reading (locality 3: L1, 2: L2)."""
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fn = b.module.globals.get("llvm.prefetch.p0") or ir.Function(
        b.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0")
    read, data = ir.Constant(i32, 0), ir.Constant(i32, 1)
    for at in addresses:
        b.call(fn, [at, read, ir.Constant(i32, locality), data])


def _fence_streams(g: _Gen, stream: bool) -> None:
    """sfence: streamed stores are weakly ordered; the launch's `done` count
    must not be seen before them."""
    if not stream:
        return
    fn = g.mod.globals.get("llvm.x86.sse.sfence") or \
        ir.Function(g.mod, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse.sfence")
    g.b.call(fn, [])


# Elementwise tiled order: square tiles of EW_TILE x EW_TILE over the last two
# axes, so an operand strided along the last axis (the A.T of `A + A.T`)
# reuses each cache line it touches across the tile's rows instead of
# fetching one line per element.
EW_TILE = 128    # rows of a tile
EW_TILE_C = 16   # columns of a tile


def ew_tile_eligible(k: Kernel) -> bool:
    """Whether an elementwise kernel compiles the tiled order at all: rank >= 2,
    in-order stores absent, and some operand whose innermost stride is not
    fixed at compile time (only such an operand can be strided by a lot)."""
    if k.reduce is not None or k.ndim < 2 or any(o.pos is not None for o in k.outputs):
        return False
    return any(i.inner is None and i.space == "full" and not i.iota and not i.indirect
               for i in k.inputs) or any(o.inner is None for o in k.outputs)


def ew_tile_units(shape) -> int:
    """Work units of the tiled order: tiles, over all outer indices. ctl
    start/end count these when ctl.tile is set."""
    outer = 1
    for n in shape[:-2]:
        outer *= n
    return outer * -(-shape[-2] // EW_TILE) * -(-shape[-1] // EW_TILE_C)


def _tiled_elementwise(g: _Gen, views, elem) -> None:
    """for each tile u in [start, end) (outer index, tile row, tile column,
    C order): for each row of the tile: the inner loop along the last axis
    over the tile's columns, elem(row_locations, j).

    Tiles are tall and narrow (EW_TILE x EW_TILE_C): the column-strided
    operand then touches EW_TILE_C lines per row, reused over the next rows
    (a line holds 64 / itemsize of its rows), and its lines sit in few cache
    sets when its stride is a power of two; wider tiles measured slower
    (64x64: 55 ms, 128x16: 25 ms for 4096^2 float32 A + A.T, one thread).
    """
    b = g.b
    shape = g.shape(0, g.k.ndim)
    nr, nc = shape[-2], shape[-1]
    tsz, csz = ir.Constant(I64, EW_TILE), ir.Constant(I64, EW_TILE_C)
    nrb = b.udiv(b.add(nr, ir.Constant(I64, EW_TILE - 1)), tsz)
    ncb = b.udiv(b.add(nc, ir.Constant(I64, EW_TILE_C - 1)), csz)

    def unit(u, _):
        cb, ob = b.urem(u, ncb), b.udiv(u, ncb)
        rb, ob = b.urem(ob, nrb), b.udiv(ob, nrb)
        idx = []
        for n in reversed(shape[1:-2]):
            idx.append(b.urem(ob, n))
            ob = b.udiv(ob, n)
        idx = ([ob] + idx[::-1]) if len(shape) > 2 else []
        r0, c0 = g.mul(rb, tsz), g.mul(cb, csz)
        rn = b.sub(nr, r0)
        rn = b.select(b.icmp_signed("<", tsz, rn), tsz, rn)
        cn = b.sub(nc, c0)
        cn = b.select(b.icmp_signed("<", csz, cn), csz, cn)
        cbase = [g.add(g.dot(g.a[slot.offset], idx, st[:-2]),
                       g.add(g.mul(r0, st[-2]), g.mul(c0, st[-1]))) for slot, st in views]

        def row(r, _):  # the column-strided operand keeps it scalar: "novec"
            locs = [_row_loc(g, n, g.add(cb_, g.mul(r, st[-2])))
                    for n, (cb_, (_s, st)) in enumerate(zip(cbase, views))]
            g.counted_loop(_ZERO, cn, [], lambda j, c: elem(locs, j), "novec")
            return []
        g.counted_loop(_ZERO, rn, [], row)
        return []

    g.counted_loop(g.ctl["start"], g.ctl["end"], [], unit)


def alias_candidate(k: Kernel, i: int) -> bool:
    """Input i may be the output's own memory, read where it is written (an
    in-place write such as `x[1:4] *= 2`), in a loop copy of its own: a plain
    full-space input of the only output's dtype, in an elementwise kernel."""
    if k.reduce is not None or len(k.outputs) != 1 or k.outputs[0].pos is not None:
        return False
    o, inp = k.outputs[0], k.inputs[i]
    if inp.chain or inp.iota or inp.indirect or inp.space != "full" or inp.dtype != o.dtype:
        return False
    return not (inp.inner is not None and o.inner is not None and inp.inner != o.inner)


def _alias_candidates(g: _Gen, in_st, out_st) -> list[int]:
    """The in-place variant's aliased input (`g.alias`), when it qualifies.

    LLVM's runtime alias check sends a loop whose load and store pointers are
    equal to its scalar copy (3x slower in cache), so the variant gets a copy
    of the inner loop, taken when that input's row pointer and inner stride
    equal the output's, that loads through the output's own pointer instead.
    Only kernels seen running in place compile it (backend.py), so ordinary
    kernels pay no compile time for it.
    """
    a = g.alias
    return [a] if a is not None and alias_candidate(g.k, a) else []


ARG_BLOCK = 256


# Bytes ahead of a float32 row sum's reads that each full block asks for
# one line of, into L2 (`prefetch_ahead`); 0 turns it off (the B side of
# benchmarks/codegen_ab.py --b no-page-prefetch).
PAGE_PREFETCH = 64 << 10


def over_blocks(g: _Gen, cnt: ir.Value, size: int, carry: list[ir.Value], body,
                ahead: list[ir.Value] = ()) -> list[ir.Value]:
    """Fold `body(jb, je, carry)` over [0, cnt) in blocks of `size` (the last
    one shorter): the skeleton of the blocked row reductions. `ahead`: row
    pointers of unit-stride inputs to prefetch for (`prefetch_ahead`)."""
    b = g.b
    bsz = ir.Constant(I64, size)
    nblocks = b.udiv(b.add(cnt, ir.Constant(I64, size - 1)), bsz)

    def block(blk, c):
        jb = g.mul(blk, bsz)
        je = b.add(jb, bsz)
        if ahead and PAGE_PREFETCH:  # full blocks only: a short row would ask once per row
            with b.if_then(b.icmp_signed("<=", je, cnt)):
                prefetch_ahead(b, ahead, jb)
        return body(jb, b.select(b.icmp_signed("<", cnt, je), cnt, je), c)

    return g.counted_loop(ir.Constant(I64, 0), nblocks, carry, block)


def prefetch_ahead(b: ir.IRBuilder, rows: list[ir.Value], j: ir.Value) -> None:
    """Ask for the line PAGE_PREFETCH bytes past element j of each row, into L2.

    The hardware's stream prefetcher stops at each 4 KB page, so a read
    stream over memory without transparent huge pages (a NumPy array on a
    system with THP off, np.memmap, memory from another allocator) starts
    every page with cache misses and a page walk. One `prefetcht1` per 4 KB
    block, 64 KB ahead, starts both early: float32 row and full sums read
    such memory 5-20% faster, and huge-page memory no slower. The
    logsumexp rows of a softmax measured 3-7% slower with it, so they do
    without (docs/performance_history.md, "Prefetching across 4 KB pages"). The
    address may lie past the array: a prefetch never faults, and the GEPs
    are not `inbounds`.
    """
    i8p = ir.IntType(8).as_pointer()
    _prefetch(b, [b.gep(b.bitcast(b.gep(p, [j]), i8p), [ir.Constant(I64, PAGE_PREFETCH)])
                  for p in rows], locality=2)


def blocked_arg(g: _Gen, acc, x_at, rflat: ir.Value, cnt: ir.Value,
                 carry: list[ir.Value]) -> list[ir.Value]:
    """argmax/argmin over one row of `cnt` elements, ARG_BLOCK at a time.

    The block extreme is a plain max/min LLVM vectorizes; only when it strictly
    beats the running best is the block scanned again, for the first element
    equal to it. That scan is a min-reduction of "offset if it matches, else
    ARG_BLOCK" over the block (in L1 by then), which vectorizes too; an
    early-exit loop would not. The strict compare across blocks and the first
    match within one give NumPy's first occurrence (the first NaN, once one
    is seen).
    """
    b = g.b
    i32 = ir.IntType(32)
    miss = ir.Constant(i32, ARG_BLOCK)

    def first_match(jb, je, m):
        def step(j, fc):
            off = b.trunc(b.sub(j, jb), i32)
            cand = b.select(acc.matches(b, x_at(j), m), off, miss)
            return [b.select(b.icmp_unsigned("<", cand, fc[0]), cand, fc[0])]
        return g.add(jb, b.zext(g.counted_loop(jb, je, [miss], step)[0], I64))

    def block(jb, je, c):
        m = acc.block_extreme(b, g.counted_loop(jb, je, acc.block_start(),
                                                lambda j, mc: acc.block_step(b, mc, x_at(j))))
        pre = b.block
        scan, join = b.append_basic_block("arg.scan"), b.append_basic_block("arg.join")
        b.cbranch(acc.beats(b, m, c[0]), scan, join)
        b.position_at_end(scan)
        idx = g.add(rflat, first_match(jb, je, m))
        found = b.block
        b.branch(join)
        b.position_at_end(join)
        best, where = b.phi(c[0].type), b.phi(I64)
        best.add_incoming(m, found)
        best.add_incoming(c[0], pre)
        where.add_incoming(idx, found)
        where.add_incoming(c[1], pre)
        return [best, where]

    return over_blocks(g, cnt, ARG_BLOCK, carry, block)
