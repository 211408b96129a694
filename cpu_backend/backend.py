"""CPUBackend: the LLVM-JIT backend behind the scheduler's Backend protocol.

Glue only: support checks, the JIT (jit.py), argument packing
(pack.py, a per-structure `pack_launch`) and the thread-parallel launcher (launch.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler.backend import CompileInfo, PerObject
from scheduler.dtypes import DType
from scheduler.kernel_ir import (Cast, Gather, Kernel, Launch, Load, Op, Reduced, Scalar,
                                 postorder)
from scheduler.ops import REDUCTIONS, SIBLING_REDUCTIONS, operand_error, part_error
from scheduler.pool import empty

from .jit import JIT, Compiled
from .dispatch import LaunchRecord
from .keys import STREAM
from .launch import Launcher, Split, choose_tile
from .loops import TILE_STREAM
from .pack import LaunchPlan
from .partition import partition
from .histogram import run_bincount
from .scan import run_scan
from .search import run_search
from .short_rows import Merge, merge
from .lowering import EMITTERS

_JIT: JIT | None = None


def _shared_jit() -> JIT:
    """One JIT (engine + cache) per process: compiled code is shared by all
    CPUBackend instances, whatever their thread counts."""
    global _JIT
    if _JIT is None:
        _JIT = JIT()
    return _JIT


class CPUBackend:
    name = "llvm"
    device = "cpu"

    def __init__(self, num_threads: int | None = None, jit: JIT | None = None,
                 loop_order: str = "auto"):
        """`num_threads` overrides LAZY_NUM_THREADS / os.cpu_count();
        `loop_order` ("auto", "tiled", "per-element") forces the reduction
        loop order, and the elementwise one (tiled over the last two axes or
        row by row), for tests and experiments."""
        self._jit = jit
        self.launcher = Launcher(num_threads)
        self.loop_order = loop_order
        self._supported: PerObject[Kernel, tuple[bool, str]] = PerObject(4096)
        self._prepared: PerObject[Launch, _Prepared] = PerObject(1024)

    @property
    def jit(self) -> JIT:
        if self._jit is None:
            self._jit = _shared_jit()
        return self._jit

    @property
    def num_threads(self) -> int:
        return self.launcher.threads

    def available(self) -> tuple[bool, str]:
        try:
            self.jit
        except Exception as e:  # noqa: BLE001 - report, never raise
            return False, f"llvmlite JIT unavailable: {e}"
        return True, f"llvmlite JIT for {self.jit.tm.triple} ({_cpu_name()})"

    def supports(self, kernel: Kernel) -> tuple[bool, str]:
        """(True, note) or (False, why): never raises, whatever the kernel.

        Remembered per kernel object: the scheduler asks before every run,
        and a reused schedule runs the same Kernel objects again.
        """
        answer = self._supported.get(kernel)
        return answer if answer is not None else self._supported.put(kernel, _checked(kernel))

    def compile(self, kernel: Kernel) -> tuple[Any, CompileInfo]:
        return self.jit.compile(kernel)

    def source(self, kernel: Kernel) -> str:
        return self.jit.ir(kernel)

    def run(self, compiled: Any, kernel: Kernel, launch: Launch,
            inputs: list[np.ndarray | None], outputs: list[np.ndarray]) -> None:
        if not isinstance(compiled, Compiled):
            compiled, _ = self.compile(kernel)
        plan = compiled.plan
        if plan is None:
            plan = compiled.plan = LaunchPlan.of(kernel)
        bufs: list[np.ndarray | None] = []
        for i, (t, x) in enumerate(zip(plan.in_np, inputs)):
            if t is None:  # iota
                bufs.append(None)
                continue
            x = np.ascontiguousarray(x)
            if x.dtype != t:
                raise TypeError(f"input {i} is {x.dtype}, kernel expects {t}")
            bufs.append(x)
        for i, (t, y) in enumerate(zip(plan.out_np, outputs)):
            if y.dtype != t or not y.flags.c_contiguous or not y.flags.writeable:
                raise TypeError(f"output {i} must be a writable contiguous {t} array")
            bufs.append(y)
        prepared = self._prepare(compiled, kernel, launch)
        m = prepared.merge
        if m is None:
            self._launch(compiled, prepared, bufs)
            return
        nin = len(inputs)
        self._launch(compiled, self._prepare(compiled, kernel, m.main),
                     m.main_inputs(bufs[:nin]) + bufs[nin:])
        if m.tail is not None:
            self._launch(compiled, self._prepare(compiled, kernel, m.tail), bufs)

    def _launch(self, compiled: Compiled, prepared: "_Prepared", bufs: list) -> None:
        """Run one prepared launch on the pool, in the variant it calls for."""
        if prepared.split is None:
            return
        variant = STREAM if prepared.stream else None
        if compiled.alias_inputs:  # an in-place write? then the variant that vectorizes it
            y = bufs[-1]
            for i in compiled.alias_inputs:
                if _same_memory(bufs[i], y):
                    variant = i  # (it never streams: it reads what it writes)
                    break
        if variant is not None:
            compiled = self.jit.variant(compiled, variant)
        self.launcher.pool.launch(compiled.address, prepared.record, tuple(bufs))

    def _prepare(self, compiled: Compiled, kernel: Kernel, launch: Launch) -> "_Prepared":
        """Packed arguments, loop order and thread split of one Launch object.

        A cached schedule runs the same Launch objects again, so this is
        remembered per object."""
        p = self._prepared.get(launch)
        if p is None or p.kernel is not kernel:
            p = self._prepared.put(launch, self._prepare_new(compiled, kernel, launch))
        return p

    def _prepare_new(self, compiled: Compiled, kernel: Kernel, launch: Launch) -> "_Prepared":
        shape = tuple(int(n) for n in launch.shape)
        red = kernel.reduce
        if red is not None and math.prod(shape) == 0 and REDUCTIONS[red.op].identity is None:
            raise ValueError(f"zero-size reduction with {red.op}, which has no identity")
        m = merge(kernel, launch)
        if m is not None:  # short rows: run k at a time (short_rows.py)
            return _Prepared(launch, kernel, None, None, None, None, merge=m)
        args, scalars = compiled.plan.pack(launch)
        tile = choose_tile(kernel, launch, self.loop_order, self.launcher.threads)
        split = self.launcher.split(kernel, shape, compiled.in_order, tile)
        return _Prepared(launch, kernel, args, scalars, split,
                         None if split is None else split.record(args, scalars),
                         tile == TILE_STREAM)

    def scan(self, op: str, x: np.ndarray, axis: int, out: np.ndarray) -> tuple[float, CompileInfo]:
        """An extern scan (cumsum, cumprod) of host array `x` into contiguous
        `out`: (run ms, compile info). scan.py says how."""
        return run_scan(self.jit, self.launcher, op, x, axis, out)

    def searchsorted(self, a: np.ndarray, v: np.ndarray, side: str, out: np.ndarray
                     ) -> tuple[float, CompileInfo]:
        """An extern searchsorted of keys `v` into sorted 1-D `a` (same dtype)
        into contiguous int64 `out`: (run ms, compile info). search.py says how."""
        return run_search(self.jit, self.launcher, a, v, side, out)

    def bincount(self, values: np.ndarray, weights: np.ndarray | None, out: np.ndarray
                 ) -> tuple[float, CompileInfo]:
        """An extern bincount of 1-D `values` (integers in [0, len(out))),
        weighted or not, into contiguous `out`: (run ms, compile info).
        histogram.py says how."""
        return run_bincount(self.jit, self.launcher, values, weights, out)

    def partition(self, x: np.ndarray, splitters: np.ndarray, out: np.ndarray
                  ) -> tuple[list[int], CompileInfo]:
        """x's elements into `out` by bucket between sorted `splitters`, each in
        x's order; returns the buckets' bounds and the compile (partition.py)."""
        return partition(self.jit, self.launcher, x, splitters, out)

    def allocate(self, size: int, dtype: DType) -> np.ndarray:
        return empty(size, dtype.np)


@dataclass(frozen=True)
class _Prepared:
    launch: Launch
    kernel: Kernel
    args: np.ndarray | None      # packed sizes, strides, offsets (read-only to kernels)
    scalars: np.ndarray | None
    split: Split | None   # None: an empty launch, nothing to run
    record: LaunchRecord | None  # what dispatch.lazy_launch reads: the above's addresses
    stream: bool = False  # the output is written with streaming stores (loops.py)
    merge: Merge | None = None  # run as two launches instead (short_rows.py)


def _same_memory(x: np.ndarray, y: np.ndarray) -> bool:
    """x may be y's memory (cheap: identity or a shared base, no address calls).
    Only picks the in-place variant, which checks row pointers at run time,
    so a false positive costs nothing but a compile; the scheduler passes the
    same array object for an in-place write."""
    return x is y or x.base is y or y.base is x or (x.base is not None and x.base is y.base)


def _checked(kernel: Kernel) -> tuple[bool, str]:
    """`_check`'s answer; a malformed kernel is "unsupported", never an exception."""
    try:
        return _check(kernel)
    except Exception as e:  # noqa: BLE001
        return False, f"malformed kernel: {type(e).__name__}: {e}"


def _check(kernel: Kernel) -> tuple[bool, str]:
    red, nin = kernel.reduce, len(kernel.inputs)
    if not 0 <= kernel.n_reduce <= kernel.ndim or (red is None and kernel.n_reduce):
        return False, f"inconsistent reduction: n_reduce={kernel.n_reduce}, reduce={red}"
    if red is not None and red.op not in REDUCTIONS:
        return False, f"no lowering for reduction {red.op!r}"
    if kernel.siblings and red is None:
        return False, "sibling reductions without a reduction"
    if kernel.siblings and any(r.op not in SIBLING_REDUCTIONS for r in kernel.reductions):
        return False, f"reductions {[r.op for r in kernel.reductions]} cannot share a loop " \
            f"(only {sorted(SIBLING_REDUCTIONS)})"
    for o in kernel.outputs:
        if o.pos is not None and red is not None:
            return False, "Output.pos in a reduction kernel"
        if o.pos is not None and not o.pos.dtype.is_int:
            return False, f"Output.pos must be an integer expression, not {o.pos.dtype.name}"
    roots = [r.expr for r in kernel.reductions] + [o.expr for o in kernel.outputs]
    roots += [o.pos for o in kernel.outputs if o.pos is not None]
    for e in postorder(roots):
        if isinstance(e, (Load, Gather)) and not 0 <= e.input < nin:
            return False, f"{type(e).__name__} of input {e.input}, but there are {nin} inputs"
        if isinstance(e, Scalar) and not 0 <= e.slot < len(kernel.scalars):
            return False, f"scalar slot {e.slot} out of range"
        if isinstance(e, Gather):
            if kernel.inputs[e.input].iota:
                return False, f"Gather from iota input {e.input} (no memory to read)"
            if not e.pos.dtype.is_int:
                return False, f"Gather position must be an integer expression, not {e.pos.dtype.name}"
        if isinstance(e, Op):
            if e.name not in EMITTERS:
                return False, f"no lowering for op {e.name!r}"
            why = operand_error(e.name, [a.dtype for a in e.args])
            if why:
                return False, why
        if not isinstance(e, (Load, Gather, Scalar, Op, Cast, Reduced)):
            return False, f"unknown expression node {type(e).__name__}"
    if any(isinstance(e, Reduced) for e in postorder([r.expr for r in kernel.reductions])):
        return False, "Reduced inside a reduction's own loop"
    for o in kernel.outputs:
        for e in postorder([o.expr] + ([o.pos] if o.pos is not None else [])):
            if isinstance(e, Load) and kernel.inputs[e.input].space == "full" \
                    and kernel.reduce is not None:
                return False, f"output reads full-space input {e.input} after a reduction"
            if isinstance(e, Reduced) and not 0 <= e.index < len(kernel.reductions):
                return False, f"Reduced of reduction {e.index}, but the kernel has " \
                    f"{len(kernel.reductions)}"
            if isinstance(e, Reduced) and part_error(kernel.reductions[e.index].op, e.part):
                return False, part_error(kernel.reductions[e.index].op, e.part)
    if any(o.pos is not None for o in kernel.outputs):
        return True, "all ops lowered; indexed stores run on one thread in C order"
    return True, "all ops lowered"




def _cpu_name() -> str:
    import llvmlite.binding as llvm
    return llvm.get_host_cpu_name()
