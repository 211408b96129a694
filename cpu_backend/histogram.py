"""bincount on the CPU: each thread counts its share of the values into a
histogram of its own, and the histograms are summed.

The kernel IR has no scatter-add (two elements of one loop may land in the
same bin), so `bincount` is an extern kernel (lazy/counting.py) and this
is its code: one small function per (dtype, weighted), generated here and
compiled by the JIT like search.py's. NumPy's bincount is one thread; here
a chunk of the values per thread counts into row `ctl[3]` of a table of
per-thread histograms (int64 counts, or float64 sums of the weights), and
NumPy sums the rows. A bin's weights are then added in chunk order, each
chunk's in element order: the same terms as NumPy's sum, grouped by
thread, so a float64 sum may differ from NumPy's in its last bits.
Histograms many times larger than the values would cost more to clear and
add than the count itself: then one thread counts into `out` directly.
"""
from __future__ import annotations

import time

import numpy as np
from llvmlite import ir

from scheduler.backend import CompileInfo

from .dispatch import for_range
from .extern_abi import I64, TYPES, Frame, chunk_table, launch
from .jit import JIT
from .launch import SMALL, Launcher

F64 = ir.DoubleType()


def bincount_ir(dtype: str, weighted: bool, triple: str, data_layout: str) -> str:
    """void lazy_bincount_<dtype>[_w](i64* args, i8** ptrs, i64* ctl, i8*):
    args (bins); ptrs (values, weights, histograms), contiguous, every
    value in [0, bins); a chunk counts values [ctl[1], ctl[2]) into
    histogram row ctl[3]."""
    frame = Frame(function_name(dtype, weighted), triple, data_layout)
    b = frame.b
    bins, = frame.fields(frame.args, (0,))
    k0, k1, row = frame.fields(frame.ctl, (1, 2, 3))
    values, weights, hist = frame.pointers(TYPES[dtype], F64, F64 if weighted else I64)
    hist = b.gep(hist, [b.mul(row, bins)])

    def count(k: ir.Value) -> None:
        v = b.load(b.gep(values, [k]))
        at = b.gep(hist, [v if dtype == "int64" else
                          b.zext(v, I64) if dtype == "bool" else b.sext(v, I64)])
        if weighted:
            b.store(b.fadd(b.load(at), b.load(b.gep(weights, [k]))), at)
        else:
            b.store(b.add(b.load(at), ir.Constant(I64, 1)), at)

    for_range(b, k0, k1, count)
    return frame.finish()


def function_name(dtype: str, weighted: bool) -> str:
    return f"lazy_bincount_{dtype}{'_w' if weighted else ''}"


def run_bincount(jit: JIT, launcher: Launcher, values: np.ndarray, weights: np.ndarray | None,
                 out: np.ndarray) -> tuple[float, CompileInfo]:
    """out[i] = how many of `values` (1-D integers or bools in [0, len(out)))
    are i, or the sum of their `weights` (float64, values' length); out is
    contiguous int64, or float64 with weights. Returns (run ms, how the
    function was found)."""
    dtype, weighted = values.dtype.name, weights is not None
    addr, info = jit.compile_function(
        f"bincount {dtype} {'weighted' if weighted else 'counts'}",
        function_name(dtype, weighted),
        lambda triple, layout: bincount_ir(dtype, weighted, triple, layout))
    t0 = time.perf_counter()
    n, bins = values.size, out.size
    values = np.ascontiguousarray(values).reshape(-1)
    weights = values if weights is None else np.ascontiguousarray(weights).reshape(-1)
    threads = launcher.threads if n >= SMALL and n >= 4 * bins * launcher.threads else 1
    cuts = [n * t // threads for t in range(threads + 1)]
    ranges = [(lo, hi, t) for t, (lo, hi) in enumerate(zip(cuts, cuts[1:]))]
    table = out.reshape(1, bins) if threads == 1 else np.empty((threads, bins), out.dtype)
    table[...] = 0
    if n:
        launch(launcher, addr, np.array([bins], np.int64), chunk_table(ranges),
               (values, weights, table))
    if threads > 1:
        np.sum(table, axis=0, out=out)
    return (time.perf_counter() - t0) * 1e3, info
