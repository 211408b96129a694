"""Thread-parallel launch of compiled kernels.

Every split is just a different control block (see codegen.py) for the
same compiled function; a launch hands the table of blocks to the native
thread pool (threadpool.py), whose threads take them in turn:

* small work (< `SMALL` elements) runs on the calling thread, and so do
  kernels with an `Output.pos` (stores at computed positions), which must
  run in C order so that the last of duplicate positions wins, as in NumPy;
* elementwise kernels, and reductions with enough outputs to balance,
  split the flat out range into a few chunks per thread: if another
  process slows one core, its thread simply takes fewer chunks;
* reductions with few outputs and a long reduce range split the reduce
  range into up to 4 parts per thread, taken in turn: each part writes
  partial accumulators (value, and index for argmax/argmin), then the
  caller folds them in part order (mode 2) and runs the epilogue. Only
  float sums/products can differ with the thread count, by rounding.

An elementwise output at least as large as the private caches of the
threads that write it is written with streaming stores (loops.TILE_STREAM):
by the time such a kernel ends, a normally stored output has already been
pushed out of those caches, so keeping it there buys little, and skipping
the read of each line before it is overwritten saves a quarter of the
traffic of `b + s * c` (docs/cpu_backend.md, "Streaming stores", has the
measurements).
"""
from __future__ import annotations

import glob
import math
import os
from dataclasses import dataclass
from functools import lru_cache

import llvmlite.binding as llvm
import numpy as np

from scheduler.kernel_ir import Kernel, Launch

from .codegen import MODE_FINAL, MODE_FULL, MODE_PARTIAL
from .dispatch import LaunchRecord, launch_record
from .loops import (STREAM_BLOCK, TILE_ROWS, TILE_SQUARE, TILE_STREAM, ew_tile_eligible,
                    ew_tile_units, stream_eligible)
from .reduce_loops import MAX_TILE, tile_eligible
from .reduction import Accumulators
from .threadpool import MAX_CHUNKS, ThreadPool

SMALL = 1 << 16          # below this much work a kernel runs on the calling thread
CHUNKS_PER_THREAD = 4    # out-range splits are dealt out in this many chunks per thread
MIN_CHUNK = 1 << 15      # ... each at least this much work (a chunk costs ~10 us to deal)
MIN_REDUCE_PART = 1 << 14  # reduce elements per thread worth a partial split
ALIGN = 64               # chunk boundaries on multiples of this (cache lines, vectors)
DEFAULT_PRIVATE = 1 << 20  # private cache per CPU when the system does not say


def _addr(x: np.ndarray) -> int:
    return x.__array_interface__["data"][0]


def default_threads() -> int:
    env = os.environ.get("LAZY_NUM_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    return max(1, os.cpu_count() or 1)


def _chunks(n: int, parts: int, align: int = ALIGN) -> list[tuple[int, int]]:
    """Split [0, n) into at most `parts` (and MAX_CHUNKS) non-empty ranges on
    `align` boundaries."""
    step = -(-n // min(parts, MAX_CHUNKS))
    step = -(-step // align) * align if step > align else step
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def choose_tile(kernel: Kernel, launch: Launch, order: str = "auto",
                threads: int | None = None) -> int:
    """Loop order: elementwise kernels see _choose_ew_tile; reductions
    (reduce_loops.py): 1 = tiled along the out axis.

    Tiled when some full-space input is contiguous along the innermost out
    axis and none is contiguous along the innermost reduce axis, e.g. a
    column sum. An input the same all along the innermost out axis (stride
    0 there: the weights of a weighted column sum) does not count: it is
    one value per reduce step either way. `order` "tiled"/"per-element"
    forces it (tests, experiments).
    `threads` (default: default_threads()) sets the streaming threshold.
    """
    if kernel.reduce is None:
        return _choose_ew_tile(kernel, launch, order, threads or default_threads())
    if not tile_eligible(kernel):
        return 0
    if order != "auto":
        return int(order == "tiled")
    shape, n_out = launch.shape, kernel.n_out
    if shape[n_out - 1] < 8:
        return 0
    along_out = False
    for inp, views in zip(kernel.inputs, launch.inputs):
        if inp.space != "full" or inp.iota or inp.indirect:
            continue
        st = views[0].strides
        if abs(st[-1]) == 1 and shape[-1] > 1 and st[n_out - 1] != 0:
            return 0
        along_out |= abs(st[n_out - 1]) == 1
    return int(along_out)


def _choose_ew_tile(kernel: Kernel, launch: Launch, order: str, threads: int) -> int:
    """Elementwise loop order (loops.py): TILE_SQUARE, tiles over the last two
    axes; TILE_STREAM, rows with streaming stores; TILE_ROWS, plain rows.

    Tiled when some plain operand (input or output) is strided along the last
    axis by a cache line or more and steps less along the axis before it
    (`A.T`: strides (1, n)): row order would fetch a line per element of it.
    Streamed when the output is at least `stream_min_bytes(threads)` and
    its rows are at least a block (STREAM_BLOCK bytes): a shorter row never
    holds one, and only pays the streamed row's setup (P * w[:, None] with
    P of 1M x 3 float32: 3.6 ms streamed, 1.9 not).
    """
    if order != "per-element" and ew_tile_eligible(kernel) and \
            (order == "tiled" or _strided_last(kernel, launch)):
        return TILE_SQUARE
    if stream_eligible(kernel, triple=_triple()):
        isz = kernel.outputs[0].dtype.itemsize
        if math.prod(launch.shape) * isz >= stream_min_bytes(threads) and \
                launch.shape[-1] * isz >= STREAM_BLOCK:
            return TILE_STREAM
    return TILE_ROWS


def _strided_last(kernel: Kernel, launch: Launch) -> bool:
    shape = launch.shape
    if shape[-1] < 2 or shape[-2] < 2:
        return False
    ops = [(inp.dtype.itemsize, views[0].strides) for inp, views in zip(kernel.inputs, launch.inputs)
           if not (inp.chain or inp.iota or inp.indirect)]
    ops += [(o.dtype.itemsize, v.strides) for o, v in zip(kernel.outputs, launch.outputs)]
    return any(abs(st[-1]) * isz >= 64 and abs(st[-2]) < abs(st[-1]) for isz, st in ops)


def _triple() -> str:
    """The target the JIT compiles for (jit.py's target machine uses it too)."""
    return llvm.get_process_triple()


@lru_cache(maxsize=None)
def stream_min_bytes(threads: int) -> int:
    """Outputs this large are streamed: what the private caches of `threads`
    CPUs hold together (LAZY_STREAM_BYTES overrides it). The shared
    last-level cache does not count: in a virtual machine sysfs gives the
    whole socket's (260 MB on the 2-CPU host of docs/performance.md, where
    streaming already wins from 4-8 MB)."""
    env = os.environ.get("LAZY_STREAM_BYTES", "").strip()
    if env.isdigit():
        return int(env)
    return threads * private_cache_bytes()


def private_cache_bytes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> int:
    """The largest share of one CPU in a cache below the last level (sysfs:
    each cache's size over the CPUs listed as sharing it, so an L2 shared
    by two hyperthreads counts half); the last level's share when it is
    the only level."""
    caches = []
    for d in glob.glob(os.path.join(root, "index*")):
        try:
            level = int(_read(d, "level"))
            size = _parse_size(_read(d, "size"))
            sharing = _count_cpus(_read(d, "shared_cpu_list"))
        except (OSError, ValueError):
            continue
        caches.append((level, size // max(1, sharing)))
    if not caches:
        return DEFAULT_PRIVATE
    last = max(level for level, _ in caches)
    below = [share for level, share in caches if level < last]
    return max(below) if below else max(share for _, share in caches)


def _read(directory: str, name: str) -> str:
    with open(os.path.join(directory, name)) as f:
        return f.read().strip()


def _parse_size(text: str) -> int:
    """sysfs cache sizes: "48K", "2048K", "260M"."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    return int(text.rstrip("KMGkmg")) * scale


def _count_cpus(text: str) -> int:
    """How many CPUs a sysfs list names: "0-1", "0,64", "0-3,8-11"."""
    n = 0
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def _table(row: list[int], col: int, ranges: list[tuple[int, int]]) -> np.ndarray:
    """Control blocks (codegen.CTL), one per range: `row` with the range
    written at columns col, col + 1."""
    t = np.empty((len(ranges), len(row)), np.int64)
    t[:] = row
    t[:, col:col + 2] = ranges
    return t


@dataclass(frozen=True)
class Split:
    """How one launch shape runs: made once per (kernel, launch), reused by
    every run of a cached schedule. The blocks are read-only to kernels."""
    table: np.ndarray                  # control blocks, one per chunk (rows of CTL)
    partial_bytes: tuple[int, ...]     # per partial-buffer slot of the kernel (0: unused)
    final: np.ndarray | None = None    # the fold of the partials (reduce-range split)

    def record(self, args: np.ndarray, scalars: np.ndarray) -> LaunchRecord:
        """What dispatch.lazy_launch reads for this split with these packed
        arguments (it holds addresses: keep the arrays alive beside it)."""
        return launch_record(_addr(args), _addr(scalars), _addr(self.table), len(self.table),
                             0 if self.final is None else _addr(self.final),
                             list(self.partial_bytes))


class Launcher:
    """Owns the thread pool; one per backend instance."""

    def __init__(self, threads: int | None = None):
        self.threads = threads if threads else default_threads()
        self.pool = ThreadPool(self.threads)
        self.pool.prepare()

    def split(self, kernel: Kernel, shape: tuple[int, ...], in_order: bool,
              tile: int = 0) -> Split | None:
        """The control blocks for `shape`; None when there is nothing to run."""
        nout = math.prod(shape[: kernel.n_out])
        red = kernel.reduce
        nred = math.prod(shape[kernel.n_out:]) if red is not None else 1
        if nout == 0:
            return None
        # bytes per partial value, one per partial-buffer slot of the kernel
        part_sizes = [d.itemsize for d in Accumulators(kernel.reductions).partial_dtypes]
        work = nout * max(nred, 1)
        # Output.pos stores must happen in C order (the last duplicate wins): one thread.
        threads = self.threads if work >= SMALL and not in_order else 1
        if red is not None and tile:
            return self._split_tiled(nout, nred, threads, part_sizes)
        if red is None or nout >= 4 * threads or nred < 2 * MIN_REDUCE_PART:
            # the elementwise tiled order counts rows of tiles, not elements
            units, align = (ew_tile_units(shape), 1) if red is None and tile == TILE_SQUARE \
                else (nout, ALIGN)
            # more chunks than threads, taken in turn: a thread slowed by another
            # process takes fewer, instead of the whole kernel waiting for its half
            parts = 1 if threads == 1 else \
                min(threads * CHUNKS_PER_THREAD, max(threads, work // MIN_CHUNK))
            return Split(_table([MODE_FULL, 0, 0, 0, nred, 0, 1, nout, tile], 1,
                                _chunks(units, parts, align)), (0,) * len(part_sizes))
        ranges = _chunks(nred, min(threads * CHUNKS_PER_THREAD, nred // MIN_REDUCE_PART))
        n = len(ranges)
        table = _table([MODE_PARTIAL, 0, nout, 0, 0, 0, n, nout, tile], 3, ranges)
        table[:, 5] = np.arange(n)
        final = np.array([MODE_FINAL, 0, nout, 0, nred, 0, n, nout, 0], np.int64)
        return Split(table, tuple(size * n * nout for size in part_sizes), final)

    def _split_tiled(self, nout: int, nred: int, threads: int, part_sizes: list[int]) -> Split:
        """A reduction in tiled order (a column reduction): each thread takes
        whole rows (reduce steps) of all nout outputs when they fit one tile,
        so every step reads one contiguous run: split the reduce range, fold
        the partials after. Wider outputs split the out range into chunks,
        each chunk one tile where it fits."""
        if threads == 1 or nout > MAX_TILE or nred < 4 * threads:
            parts = 1 if threads == 1 else min(threads * CHUNKS_PER_THREAD,
                                               max(threads, nout * nred // MIN_CHUNK))
            ranges = _chunks(nout, parts, ALIGN)
            width = min(MAX_TILE, max(hi - lo for lo, hi in ranges))
            return Split(_table([MODE_FULL, 0, 0, 0, nred, 0, 1, nout, width], 1, ranges),
                         (0,) * len(part_sizes))
        ranges = _chunks(nred, min(threads * CHUNKS_PER_THREAD, max(threads, nred // 64)), 1)
        n = len(ranges)
        table = _table([MODE_PARTIAL, 0, nout, 0, 0, 0, n, nout, nout], 3, ranges)
        table[:, 5] = np.arange(n)
        final = np.array([MODE_FINAL, 0, nout, 0, nred, 0, n, nout, 0], np.int64)
        return Split(table, tuple(size * n * nout for size in part_sizes), final)

    def shutdown(self) -> None:
        self.pool.shutdown()
