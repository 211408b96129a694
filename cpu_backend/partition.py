"""Splitting data into buckets by value on the CPU: what lets a 1-D sort use
every thread.

A 1-D sort has one row, so splitting rows over threads (scheduler/
sorting.py) leaves it on one. Instead the data is first split by value into
as many buckets as there are threads, bucket b holding the elements between
splitters b - 1 and b; then each thread sorts one bucket with NumPy's sort,
and the sorted buckets side by side are the sorted whole (a sample sort).

This module does the split: one function per dtype, generated here and
compiled by the JIT like scan.py's, run by the pool in chunks of the data.
A first launch counts, per chunk, the elements at or above each splitter
(a vectorized pass per splitter); a second writes each element to its
bucket's next free place, chunk by chunk in order. So each bucket keeps the
elements in their original order, and a stable sort of each bucket is a
stable sort of the whole. The order is NumPy's (extern_abi.py's `less`): NaNs
above everything, so in the last bucket, and equal elements (-0.0 and
+0.0 too) in one bucket.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from scheduler.backend import CompileInfo

from .dispatch import for_range
from .extern_abi import I64, TYPES, Frame, chunk_table, launch, less
from .jit import JIT
from .launch import CHUNKS_PER_THREAD, Launcher, _chunks

COUNT, SCATTER = 0, 1  # the function's two modes (args[0])
MAX_BUCKETS = 64       # the scatter's array of places


def partition_ir(dtype: str, triple: str, data_layout: str) -> str:
    """void lazy_partition_<dtype>(i64* args, i8** ptrs, i64* ctl, i8*), the
    kernels' ABI: args (mode, number of splitters S), ptrs (x, splitters,
    out, table), x and out contiguous; a chunk covers x[ctl[1]:ctl[2]] and
    is chunk number ctl[3]. COUNT writes table[c * S + s] = how many of the
    chunk's elements are at or above splitter s; SCATTER reads table[c *
    (S + 1) + b] as where the chunk's elements of bucket b start in out."""
    t = TYPES[dtype]
    frame = Frame(function_name(dtype), triple, data_layout)
    fn, b = frame.function, frame.b
    mode, n_split = frame.fields(frame.args, (0, 1))
    lo, hi, chunk = frame.fields(frame.ctl, (1, 2, 3))
    x, splitters, out, table = frame.pointers(t, t, t, I64)
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    at_or_above = b.alloca(I64, name="count")
    place = b.alloca(I64, MAX_BUCKETS, name="place")  # each bucket's next free place
    counting, scattering, end = (fn.append_basic_block(n) for n in ("count", "scatter", "end"))
    b.cbranch(b.icmp_signed("==", mode, ir.Constant(I64, COUNT)), counting, scattering)

    def above(v: ir.Value, s: ir.Value) -> ir.Value:
        """1 if v is at or above splitter s (NumPy's order), else 0."""
        return b.zext(b.not_(less(b, dtype, v, b.load(b.gep(splitters, [s])))), I64)

    b.position_at_end(counting)

    def count(s: ir.Value) -> None:
        b.store(zero, at_or_above)
        for_range(b, lo, hi, lambda i: b.store(b.add(b.load(at_or_above),
                                                     above(b.load(b.gep(x, [i])), s)),
                                               at_or_above))
        b.store(b.load(at_or_above), b.gep(table, [b.add(b.mul(chunk, n_split), s)]))
    for_range(b, zero, n_split, count)
    b.branch(end)

    b.position_at_end(scattering)
    n_bucket = b.add(n_split, one)
    first = b.mul(chunk, n_bucket)
    for_range(b, zero, n_bucket, lambda k: b.store(b.load(b.gep(table, [b.add(first, k)])),
                                                   b.gep(place, [k])))

    def scatter(i: ir.Value) -> None:
        v = b.load(b.gep(x, [i]))
        b.store(zero, at_or_above)
        for_range(b, zero, n_split, lambda s: b.store(b.add(b.load(at_or_above), above(v, s)),
                                                      at_or_above))
        slot = b.gep(place, [b.load(at_or_above)])
        p = b.load(slot)
        b.store(v, b.gep(out, [p]))
        b.store(b.add(p, one), slot)
    for_range(b, lo, hi, scatter)
    b.branch(end)
    b.position_at_end(end)
    return frame.finish()


def function_name(dtype: str) -> str:
    return f"lazy_partition_{dtype}"


def partition(jit: JIT, launcher: Launcher, x: np.ndarray, splitters: np.ndarray,
              out: np.ndarray) -> tuple[list[int], CompileInfo]:
    """out = x's elements bucketed by `splitters` (sorted, same dtype, at most
    MAX_BUCKETS - 1), each bucket in x's order; returns the buckets' bounds
    in out (len(splitters) + 2 of them) and how the function was found. x
    and out: 1-D, contiguous."""
    if len(splitters) >= MAX_BUCKETS:
        raise ValueError(f"partition: at most {MAX_BUCKETS - 1} splitters, got {len(splitters)}")
    dtype = x.dtype.name
    addr, info = jit.compile_function(f"partition {dtype}", function_name(dtype),
                                   lambda triple, layout: partition_ir(dtype, triple, layout))
    ranges = _chunks(len(x), launcher.threads * CHUNKS_PER_THREAD)
    n_split = len(splitters)
    ctl = chunk_table([(lo, hi, c) for c, (lo, hi) in enumerate(ranges)])
    at_or_above = np.zeros((len(ranges), n_split), np.int64)
    launch(launcher, addr, np.array([COUNT, n_split], np.int64), ctl,
           (x, splitters, out, at_or_above))
    sizes = np.diff(ctl[:, 1:3], axis=1)
    edges = np.concatenate([sizes, at_or_above, np.zeros((len(ranges), 1), np.int64)], axis=1)
    counts = edges[:, :-1] - edges[:, 1:]  # [chunk, bucket]
    starts = np.concatenate([[0], np.cumsum(counts.sum(axis=0))])
    places = starts[:-1] + np.cumsum(counts, axis=0) - counts  # chunk c after chunks < c
    launch(launcher, addr, np.array([SCATTER, n_split], np.int64), ctl,
           (x, splitters, out, np.ascontiguousarray(places)))
    return [int(s) for s in starts], info
