"""searchsorted on the CPU: a branchless binary search, several keys at once.

The kernel IR has no search, so `searchsorted` is an extern kernel
(lazy/sorting.py), and this is the code that runs it on the CPU: one small
function per (side, dtype), generated here and compiled by the JIT (cached
in memory and on disk like kernels). NumPy's search branches on every
comparison, which mispredicts half the time on random keys, and looks for
one key at a time, so each cache miss in the sorted array stalls it
alone. Here each step is a select, not a branch:

    base, n = 0, len(a)
    while n > 1: half = n // 2; base += half if a[base + half] goes left of key else 0; n -= half
    position = base + (a[base] goes left of key)

and GROUP keys walk the array in lockstep, so their cache misses overlap.
The selects must stay selects in machine code: it is compiled without
x86's cmov converter (jit.without_lsr's `keep_cmov`), which made them
branches for integer keys.
The step count depends on len(a) alone, so every key takes the same path.
"Goes left" is NumPy's order, NaNs last: on side "left" a[i] < key, on
side "right" not key < a[i]. The thread pool runs the function by chunks
of keys.
"""
from __future__ import annotations

import time

import numpy as np
from llvmlite import ir

from scheduler.backend import CompileInfo

from .dispatch import for_range
from .extern_abi import I64, TYPES, Frame, chunk_table, launch, less
from .jit import JIT
from .launch import CHUNKS_PER_THREAD, SMALL, Launcher, _chunks

GROUP = 32  # keys searched in lockstep: their cache misses overlap (1M keys into 10M
# float32: 8 -> 102 ms, 16 -> 58, 32 -> 30, 64 -> 27 but compiling in 305 ms, not 120)


def _goes_left(b: ir.IRBuilder, side: str, dtype: str, item: ir.Value, key: ir.Value) -> ir.Value:
    """Whether the key's position is after `item`."""
    if side == "left":
        return less(b, dtype, item, key)
    return b.not_(less(b, dtype, key, item))


def search_ir(side: str, dtype: str, triple: str, data_layout: str) -> str:
    """void lazy_searchsorted_<side>_<dtype>(i64* args, T** ptrs, i64* ctl, i8*),
    the kernels' ABI: args (len(a), a's stride in elements), ptrs (a, keys,
    out), keys and out contiguous, a not empty; a chunk searches keys
    [ctl[1], ctl[2])."""
    t = TYPES[dtype]
    frame = Frame(function_name(side, dtype), triple, data_layout)
    fn, b = frame.function, frame.b
    n, stride = frame.fields(frame.args, (0, 1))
    k0, k1 = frame.fields(frame.ctl, (1, 2))
    a, keys, out = frame.pointers(t, t, I64)
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    group = ir.Constant(I64, GROUP)

    def item(base: ir.Value) -> ir.Value:
        return b.load(b.gep(a, [b.mul(base, stride)]))

    def search(first: ir.Value, count: int) -> None:
        """out[first + j] for the `count` keys from `first`, in lockstep."""
        found = fn.append_basic_block("found")
        key = [b.load(b.gep(keys, [b.add(first, ir.Constant(I64, j))])) for j in range(count)]
        pre = b.block
        head, body = fn.append_basic_block("halve"), fn.append_basic_block("halve.body")
        b.branch(head)
        b.position_at_end(head)
        size = b.phi(I64, "n")
        bases = [b.phi(I64, f"base{j}") for j in range(count)]
        size.add_incoming(n, pre)
        for p in bases:
            p.add_incoming(zero, pre)
        b.cbranch(b.icmp_signed(">", size, one), body, found)
        b.position_at_end(body)
        half = b.ashr(size, one)
        for p, k in zip(bases, key):
            moved = b.add(p, half)
            p.add_incoming(b.select(_goes_left(b, side, dtype, item(moved), k), moved, p), body)
        size.add_incoming(b.sub(size, half), body)
        b.branch(head)
        b.position_at_end(found)
        for j, (p, k) in enumerate(zip(bases, key)):
            after = b.zext(_goes_left(b, side, dtype, item(p), k), I64)
            b.store(b.add(p, after), b.gep(out, [b.add(first, ir.Constant(I64, j))]))

    full = b.sub(k1, b.srem(b.sub(k1, k0), group))
    groups = b.sdiv(b.sub(full, k0), group)
    for_range(b, zero, groups, lambda g: search(b.add(k0, b.mul(g, group)), GROUP))
    for_range(b, full, k1, lambda k: search(k, 1))
    return frame.finish()


def function_name(side: str, dtype: str) -> str:
    return f"lazy_searchsorted_{side}_{dtype}"


def run_search(jit: JIT, launcher: Launcher, a: np.ndarray, v: np.ndarray, side: str,
               out: np.ndarray) -> tuple[float, CompileInfo]:
    """out = positions of v's elements in sorted 1-D `a` (same dtype as v;
    out: contiguous int64 of v's shape), on the launcher's threads; returns
    (run ms, how the function was found)."""
    dtype = a.dtype.name
    addr, info = jit.compile_function(f"searchsorted {side} {dtype} cmov",
                                      function_name(side, dtype),
                                      lambda triple, layout: search_ir(side, dtype, triple, layout),
                                      keep_cmov=True)
    t0 = time.perf_counter()
    if not a.size:  # every key goes first; nothing to read
        out[...] = 0
    elif v.size:
        keys = np.ascontiguousarray(v).reshape(-1)
        threads = launcher.threads if keys.size * max(a.size, 2).bit_length() >= SMALL else 1
        ranges = _chunks(keys.size, threads * CHUNKS_PER_THREAD, GROUP)
        args = np.array([a.size, a.strides[0] // a.itemsize], np.int64)
        launch(launcher, addr, args, chunk_table(ranges), (a, keys, out))
    return (time.perf_counter() - t0) * 1e3, info
