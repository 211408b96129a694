"""Thread-parallel launch of compiled kernels.

ctypes releases the GIL for the duration of a foreign call, so a plain
`concurrent.futures` pool gives real parallelism. Every split is just a
different control block (see codegen.py) for the same compiled function:

* small work (< `SMALL` elements) runs on the calling thread;
* elementwise kernels, and reductions with enough outputs to balance,
  split the flat out range;
* reductions with few outputs and a long reduce range split the reduce
  range: each thread writes partial accumulators (value, and index for
  argmax/argmin), then the caller folds them in thread order (mode 2)
  and runs the epilogue. Only float sums/products can differ with the
  thread count, by rounding.
"""
from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from scheduler.kernel_ir import Kernel, Launch

from .codegen import CTL, MODE_FINAL, MODE_FULL, MODE_PARTIAL
from .jit import Compiled
from .reduce_loops import tile_eligible
from .reduction import Accumulator

SMALL = 1 << 16          # below this much work a kernel runs on the calling thread
MIN_REDUCE_PART = 1 << 14  # reduce elements per thread worth a partial split
ALIGN = 64               # chunk boundaries on multiples of this (cache lines, vectors)


def default_threads() -> int:
    env = os.environ.get("LAZY_NUM_THREADS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    return max(1, os.cpu_count() or 1)


def _chunks(n: int, parts: int, align: int = ALIGN) -> list[tuple[int, int]]:
    """Split [0, n) into at most `parts` non-empty ranges on `align` boundaries."""
    step = -(-n // parts)
    step = -(-step // align) * align if step > align else step
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def choose_tile(kernel: Kernel, launch: Launch, order: str = "auto") -> int:
    """Reduction loop order (reduce_loops.py): 1 = tiled along the out axis.

    Tiled when some full-space input is contiguous along the innermost out
    axis and none is contiguous along the innermost reduce axis, e.g. a
    column sum; `order` "tiled"/"per-element" forces it (tests, experiments).
    """
    if not tile_eligible(kernel):
        return 0
    if order != "auto":
        return int(order == "tiled")
    shape, n_out = launch.shape, kernel.n_out
    if shape[n_out - 1] < 8:
        return 0
    along_out = False
    for inp, views in zip(kernel.inputs, launch.inputs):
        if inp.space != "full" or inp.iota:
            continue
        st = views[0].strides
        if abs(st[-1]) == 1 and shape[-1] > 1:
            return 0
        along_out |= abs(st[n_out - 1]) == 1
    return int(along_out)


class Launcher:
    """Owns the worker pool; one per backend instance."""

    def __init__(self, threads: int | None = None):
        self.threads = threads if threads else default_threads()
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._local = threading.local()

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="lazy-cpu",
                                                initializer=self._mark_worker)
            return self._pool

    def _mark_worker(self) -> None:
        self._local.worker = True

    def _parallel(self, calls: list) -> None:
        """Run the closures in `calls`: all but the last on the pool."""
        if len(calls) == 1 or getattr(self._local, "worker", False):
            for c in calls:
                c()
            return
        futures = [self._executor().submit(c) for c in calls[:-1]]
        calls[-1]()
        for f in futures:
            f.result()

    def launch(self, compiled: Compiled, kernel: Kernel, shape: tuple[int, ...],
               args: np.ndarray, scalars: np.ndarray, buffers: list[np.ndarray | None],
               tile: int = 0) -> None:
        nout = math.prod(shape[: kernel.n_out])
        nred = math.prod(shape[kernel.n_out:]) if kernel.reduce is not None else 1
        if nout == 0:
            return
        fn = compiled.fn
        keep = list(buffers)  # partial buffers must outlive the calls

        n_partial = len(Accumulator(kernel.reduce).partial_dtypes) if kernel.reduce else 0

        def pointers(extra: list[np.ndarray]) -> np.ndarray:
            p = [0 if x is None else x.ctypes.data for x in keep + extra]
            return np.array(p + [0] * (len(buffers) + n_partial - len(p)), np.uintp)

        def call(ptrs: np.ndarray, **ctl: int) -> None:
            c = np.zeros(len(CTL), np.int64)
            for k, v in ctl.items():
                c[CTL.index(k)] = v
            fn(args.ctypes.data, ptrs.ctypes.data, c.ctypes.data, scalars.ctypes.data)

        work = nout * max(nred, 1)
        threads = self.threads if work >= SMALL else 1
        base = dict(mode=MODE_FULL, rstart=0, rend=nred, nout=nout, nparts=1, tile=tile)
        if kernel.reduce is None or nout >= 4 * threads or nred < 2 * MIN_REDUCE_PART:
            ptrs = pointers([])
            parts = _chunks(nout, threads) if threads > 1 else [(0, nout)]
            self._parallel([lambda lo=lo, hi=hi: call(ptrs, start=lo, end=hi, **base)
                            for lo, hi in parts])
            return
        ranges = _chunks(nred, min(threads, nred // MIN_REDUCE_PART))
        acc = Accumulator(kernel.reduce)
        partial = [np.empty(len(ranges) * nout, d.np) for d in acc.partial_dtypes]
        ptrs = pointers(partial)
        base.update(start=0, end=nout, nparts=len(ranges))
        self._parallel([lambda p=p, lo=lo, hi=hi: call(ptrs, **{**base, "mode": MODE_PARTIAL,
                                                               "part": p, "rstart": lo,
                                                               "rend": hi})
                        for p, (lo, hi) in enumerate(ranges)])
        call(ptrs, **{**base, "mode": MODE_FINAL, "tile": 0})

    def shutdown(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
