"""Running sums and products (cumsum, cumprod) on the CPU: an LLVM loop nest.

The kernel IR has no scan, so a scan is an extern kernel (lazy/scan.py),
and this is the code that runs it: one small function per (op, dtype),
generated here, compiled by the JIT (cached in memory and on disk like
kernels), called on the scan's input as a strided block (outer, length,
inner) with the scanned axis in the middle:

    out[o, 0, i] = x[o, 0, i]
    out[o, l, i] = out[o, l - 1, i] op x[o, l, i]

It accumulates in the data's dtype, element after element, as NumPy's
cumsum does, so the results are NumPy's to the bit. With inner == 1 (the
last axis, or a 1-D input) each row is one dependency chain, kept in a
register; otherwise the inner loop runs across independent lanes, which
LLVM vectorizes. Chains that lie across memory (`A.T` along its rows: each
step a page further on) are scanned as lanes instead, 64 to a chunk, so a
step reads neighbouring elements and the 64 rows of `out` being written
stay in the cache (4096 x 4096 float32: 67 -> 40 ms).

The function has the kernels' ABI, and the thread pool runs it by chunks
of rows, or of lanes when there is one row; one long chain (a 1-D scan)
runs on one thread: splitting it would take a two-pass scan, which
changes the rounding (not built).
"""
from __future__ import annotations

import math
import time

import numpy as np
from llvmlite import ir

from scheduler.backend import CompileInfo

from .dispatch import for_range
from .extern_abi import I64, TYPES, Frame, chunk_table, launch
from .jit import JIT
from .launch import ALIGN, CHUNKS_PER_THREAD, SMALL, Launcher, _chunks
from .threadpool import MAX_CHUNKS

LANE_BLOCK = 64  # lanes of a transposed scan per chunk: 64 rows of out, 64 lines of cache


def _combine(b: ir.IRBuilder, op: str, dtype: str, acc: ir.Value, x: ir.Value) -> ir.Value:
    """acc op x, as NumPy's add/multiply on `dtype` (on bool: or, and)."""
    if dtype == "bool":
        return b.or_(acc, x) if op == "cumsum" else b.and_(acc, x)
    if dtype.startswith("float"):
        return b.fadd(acc, x) if op == "cumsum" else b.fmul(acc, x)
    return b.add(acc, x) if op == "cumsum" else b.mul(acc, x)


def scan_ir(op: str, dtype: str, triple: str, data_layout: str) -> str:
    """void lazy_scan_<op>_<dtype>(i64* args, T** ptrs, i64* ctl, i8* unused),
    the kernels' ABI, so that the thread pool runs it by chunks: args are
    (outer, length, inner, x's three strides, out's three strides), in
    elements, ptrs (x, out); a chunk (ctl) scans outer rows [ctl[1],
    ctl[2]) and inner lanes [ctl[3], ctl[4]). With inner == 1 out's rows
    must be contiguous (out stride 1 along the scan)."""
    t = TYPES[dtype]
    frame = Frame(function_name(op, dtype), triple, data_layout)
    fn, b = frame.function, frame.b
    _, length, inner, xs0, xs1, xs2, os0, os1, os2 = frame.fields(frame.args, range(9))
    o0, o1, j0, j1 = frame.fields(frame.ctl, (1, 2, 3, 4))
    x, out = frame.pointers(t, t)
    one = ir.Constant(I64, 1)
    chain, lanes, end = (fn.append_basic_block(n) for n in ("chain", "lanes", "end"))
    b.cbranch(b.icmp_signed("==", inner, one), chain, lanes)

    # inner == 1: one dependency chain per row, the running value in a register
    b.position_at_end(chain)

    def chain_row(o: ir.Value) -> None:
        xo, oo = b.gep(x, [b.mul(o, xs0)]), b.gep(out, [b.mul(o, os0)])
        first = b.load(xo)
        b.store(first, oo)
        pre = b.block
        head, body, done = (fn.append_basic_block(f"l.{n}") for n in ("head", "body", "done"))
        b.branch(head)
        b.position_at_end(head)
        i, acc = b.phi(I64, "l"), b.phi(t, "acc")
        i.add_incoming(one, pre)
        acc.add_incoming(first, pre)
        b.cbranch(b.icmp_signed("<", i, length), body, done)
        b.position_at_end(body)
        nxt = _combine(b, op, dtype, acc, b.load(b.gep(xo, [b.mul(i, xs1)])))
        b.store(nxt, b.gep(oo, [i]))
        i.add_incoming(b.add(i, one), body)
        acc.add_incoming(nxt, body)
        b.branch(head)
        b.position_at_end(done)
    for_range(b, o0, o1, chain_row)
    b.branch(end)

    # inner > 1: step l reads step l - 1 of `out` across independent lanes
    b.position_at_end(lanes)

    def lane_rows(o: ir.Value) -> None:
        xo, oo = b.gep(x, [b.mul(o, xs0)]), b.gep(out, [b.mul(o, os0)])
        for_range(b, j0, j1, lambda j: b.store(b.load(b.gep(xo, [b.mul(j, xs2)])),
                                               b.gep(oo, [b.mul(j, os2)])))

        def step(m: ir.Value) -> None:
            xl, prev = b.gep(xo, [b.mul(m, xs1)]), b.gep(oo, [b.mul(b.sub(m, one), os1)])
            cur = b.gep(prev, [os1])

            def lane(j: ir.Value) -> None:
                value = _combine(b, op, dtype, b.load(b.gep(prev, [b.mul(j, os2)])),
                                 b.load(b.gep(xl, [b.mul(j, xs2)])))
                b.store(value, b.gep(cur, [b.mul(j, os2)]))
            for_range(b, j0, j1, lane)
        for_range(b, one, length, step)
    for_range(b, o0, o1, lane_rows)
    b.branch(end)
    b.position_at_end(end)
    return frame.finish()


def function_name(op: str, dtype: str) -> str:
    return f"lazy_scan_{op}_{dtype}"


def _merged(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int] | None:
    """(size, stride) of axes that one stride walks in C order (size-1 axes
    ignored), or None when they do not."""
    kept = [(n, s) for n, s in zip(shape, strides) if n != 1]
    size = math.prod(shape)
    if not kept:
        return size, 0
    for (_, s), (n2, s2) in zip(kept, kept[1:]):
        if s != s2 * n2:
            return None
    return size, kept[-1][1]


def _block(x: np.ndarray, axis: int) -> tuple[tuple[int, int, int], tuple[int, int, int]] | None:
    """x as (outer, length, inner) sizes and element strides, the scanned
    axis in the middle; None when the outer or inner axes do not merge."""
    strides = tuple(s // x.itemsize for s in x.strides)
    outer = _merged(x.shape[:axis], strides[:axis])
    inner = _merged(x.shape[axis + 1:], strides[axis + 1:])
    if outer is None or inner is None:
        return None
    return (outer[0], x.shape[axis], inner[0]), (outer[1], strides[axis], inner[1])


def _split(outer: int, inner: int, threads: int) -> list[tuple[int, int, int, int]]:
    """Chunks (outer rows, inner lanes) for `threads`: rows are independent, and
    so are lanes; one long chain (a 1-D scan) is one chunk."""
    parts = threads * CHUNKS_PER_THREAD
    if threads > 1 and outer >= 2:
        return [(lo, hi, 0, inner) for lo, hi in _chunks(outer, min(parts, outer), 1)]
    if threads > 1 and inner >= 2 * ALIGN:
        return [(0, outer, lo, hi) for lo, hi in _chunks(inner, min(parts, inner // ALIGN))]
    return [(0, outer, 0, inner)]


def run_scan(jit: JIT, launcher: Launcher, op: str, x: np.ndarray, axis: int, out: np.ndarray
             ) -> tuple[float, CompileInfo]:
    """out = op's scan of `x` along `axis` (out: contiguous, x's shape and
    dtype), on the launcher's threads; returns (run ms, how the function
    was found)."""
    dtype = x.dtype.name
    addr, info = jit.compile_function(f"scan {op} {dtype}", function_name(op, dtype),
                                      lambda triple, layout: scan_ir(op, dtype, triple, layout))
    t0 = time.perf_counter()
    if x.size:
        block3 = _block(x, axis)
        if block3 is None:  # axes no one stride walks: a C-ordered copy
            x = np.ascontiguousarray(x)
            block3 = _block(x, axis)
        (n_out, length, n_in), xs = block3
        os_ = (length * n_in, n_in, 1)
        if n_in == 1 and n_out > 1 and abs(xs[0]) < abs(xs[1]):
            # chains that lie across memory (`A.T` along its rows): scanned as
            # lanes instead, so each step reads neighbouring elements, in blocks
            # of lanes whose rows of `out` stay in the cache
            n_out, n_in, xs, os_ = 1, n_out, (0, xs[1], xs[0]), (0, 1, length)
            block = max(LANE_BLOCK, -(-n_in // MAX_CHUNKS))
            ranges = [(0, 1, lo, min(n_in, lo + block)) for lo in range(0, n_in, block)]
        else:
            ranges = _split(n_out, n_in, launcher.threads if x.size >= SMALL else 1)
        args = np.array([n_out, length, n_in, *xs, *os_], np.int64)
        launch(launcher, addr, args, chunk_table(ranges), (x, out))
    return (time.perf_counter() - t0) * 1e3, info
