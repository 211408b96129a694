"""Sync: plan the pending graph into kernels and run them, logging each.

`plan` is pure scheduling (passes, fusion, lowering) and backs both
`realize` and `lazy.explain`. A schedule that ran in full before and is
only plain CPU kernels is replayed instead (replay.py: same kernels, same
log, less Python). A failing kernel leaves every buffer it did not finish
pending, with its graph intact, so nothing else is lost.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .backend import CompileInfo
from .backends import FallbackError, choose, extern_backend, run_extern, transfer
from .fusion import fuse
from .matmul_fusion import fuse_matmuls, fused_reason, panel_rows, scratch, slice_rows
from .graph import Buffer, host_view
from .view import View
from .inplace import aliased_inputs, can_write_in_place
from .log import KernelRecord, SyncRecord, log
from .pool import empty, pool
from .replay import Choice, Replay, replay_of, replays
from .schedule_cache import (Template, buffer_at, cache as schedule_cache, graph_key, instantiate,
                             templatize)
from .small_work import small_work
from .lowering import Step, lower
from .passes import fold_constants, gather, merge_duplicates, rewrite_softmax


class KernelError(RuntimeError):
    """A kernel failed while running; names the user lines that built it."""


@dataclass
class Schedule:
    steps: list[Step]
    nodes: int
    merged: int
    folded: int
    aliases: list[tuple[Buffer, Buffer]] = field(default_factory=list)  # (requested dup, first)
    cached: bool = False  # the plan came from the schedule cache
    rewritten: int = 0    # graph rewrites (passes.rewrite_softmax)
    template: Template | None = None  # the cached form of this plan


def plan(targets: list[Buffer]) -> Schedule:
    """Passes, fusion and lowering; a graph with a known structure reuses its plan."""
    return _plan(targets, *_lookup(targets))


def _lookup(targets: list[Buffer]) -> tuple[list[Buffer], tuple, list[Buffer],
                                           Template | None, int]:
    """(gathered graph, its key, its realized inputs, the cached template or
    None, graph rewrites made)."""
    order = gather(targets)
    rewritten = rewrite_softmax(order, {id(t) for t in targets})
    if rewritten:  # the rewritten graph is what is keyed, cached and planned
        order = gather(targets)
    key, externals = graph_key(order, targets)
    return order, key, externals, schedule_cache.get(key), rewritten


def _plan(targets: list[Buffer], order: list[Buffer], key: tuple, externals: list[Buffer],
          template: Template | None, rewritten: int) -> Schedule:
    if template is not None:
        steps, aliases = instantiate(template, order, externals)
        return Schedule(steps, template.nodes, template.merged, template.folded, aliases, True,
                        rewritten, template)
    kept, alias = merge_duplicates(order)
    folded = fold_constants(kept)
    requested = {id(alias.get(id(t), t)) for t in targets}
    groups = fuse_matmuls(fuse(kept, requested))
    steps = [lower(g, i) for i, g in enumerate(groups)]
    # A duplicate someone asked for gets its own copy: two tensors computed
    # separately must not share storage (writes through one would show in the other).
    aliases = [(t, alias[id(t)]) for t in targets if id(t) in alias]
    merged = len(order) - len(kept)
    template = templatize(steps, aliases, order, externals, len(order), merged, folded)
    schedule_cache.put(key, template)
    return Schedule(steps, len(order), merged, folded, aliases, rewritten=rewritten,
                    template=template)


def _nbytes(step: Step) -> int:
    """Bytes read and written; a read through a view counts only what it touches."""
    out = sum(b.size * b.dtype.itemsize for b in step.outputs)
    if step.core_input is not None:  # a fused matmul: the product itself is never in memory
        core = step.group.core
        reads = [b for i, b in enumerate(step.inputs) if i != step.core_input and b is not None]
        for pro, operand in ((step.a_prologue, core.a), (step.b_prologue, core.b)):
            reads += [b for b in pro.inputs if b is not None] if pro else [operand]
        return out + sum(b.size * b.dtype.itemsize for b in reads)
    if step.launch is None:
        return out + sum(min(b.size, v.size) * b.dtype.itemsize for b, v in _extern_srcs(step))
    n = 1
    for s in step.launch.shape:
        n *= s
    return out + sum(min(b.size, n) * b.dtype.itemsize for b in step.inputs if b is not None)


def _extern_srcs(step: Step) -> list[tuple[Buffer, View]]:
    """An extern step's (buffer, view) operands. The buffers are the step's
    inputs, not the node's own edges: on a schedule-cache hit those still
    name a duplicate that the cached plan merged away and never computes."""
    return [(b, v) for b, (_, v) in zip(step.inputs, step.group.root.node.srcs)]


def _allocate(backend, buf: Buffer) -> object:
    """Output memory: on the CPU, a dead buffer's array of the same size when one
    is free; else the backend's (device memory for CUDA)."""
    if backend.device == "cpu":
        arr = pool.take(buf.size, buf.dtype.np)
        if arr is not None:
            return arr
    return backend.allocate(buf.size, buf.dtype)


def _timed_run(backend, compiled, kernel, launch, ins: list, outs: list) -> float:
    """Milliseconds of one kernel run. CUDA launches are asynchronous: the stream
    is waited on, so the log times the kernel, not the launch."""
    t = time.perf_counter()
    backend.run(compiled, kernel, launch, ins, outs)
    if backend.device == "cuda":
        from cuda_backend import synchronize
        synchronize()
    return (time.perf_counter() - t) * 1e3


def _write_target(step: Step, held: Callable[[], set[int]]) -> tuple[np.ndarray, str]:
    """The array a write's kernel stores into: the old version's memory.

    When the old values are still needed, they are copied aside and the old
    version reads the copy from then on, so the tensor keeps its memory (a
    NumPy array given to `asarray`, or one `numpy()` returned, sees the
    write as NumPy would). Read-only memory can't be written: the new
    version gets a copy instead.
    """
    base = step.base
    ok, why = can_write_in_place(step, held())
    if ok:
        return base.array, why
    if not getattr(base.array.flags, "writeable", True):  # CuPy arrays are always writable
        return base.array.copy(), why
    memory, base.array = base.array, base.array.copy()
    return memory, why


def _compile_prologue(backend, pro: Step | None, info: CompileInfo) -> tuple[object, CompileInfo]:
    """A matmul prologue's compiled kernel (None without one); its compile
    time joins the step's."""
    if pro is None:
        return None, info
    compiled, pro_info = backend.compile(pro.kernel)
    return compiled, CompileInfo(info.cache, info.ms + pro_info.ms, info.new)


def _run_matmul(step: Step, backend) -> tuple[list[np.ndarray], CompileInfo, float]:
    """`b`'s prologue kernel into a scratch b, then BLAS on row panels, each
    followed by the epilogue kernel on that panel (and preceded by `a`'s
    prologue kernel writing that panel of a)."""
    core = step.group.core
    (m, k), n = core.a_view.shape, core.b_view.shape[1]
    dtype = core.mm.dtype
    compiled, info = backend.compile(step.kernel)
    pro_a, pro_b = step.a_prologue, step.b_prologue
    a_compiled, info = _compile_prologue(backend, pro_a, info)
    b_compiled, info = _compile_prologue(backend, pro_b, info)
    outs = [_allocate(backend, b) for b in step.outputs]
    rows = panel_rows(m, k, n, dtype.itemsize)
    a_panel = scratch("a", rows * k, core.a.dtype.np) if pro_a is not None else None
    c_panel = scratch("c", rows * n, dtype.np)
    a_host = None if pro_a is not None else host_view(core.a.array, core.a_view)
    ins = [None if b is None else b.array for b in step.inputs]
    ins[step.core_input] = c_panel
    t = time.perf_counter()
    if pro_b is not None:  # every panel multiplies by all of b: computed once, whole
        b_host = scratch("b", k * n, core.b.dtype.np)
        backend.run(b_compiled, pro_b.kernel, pro_b.launch,
                    [None if b is None else b.array for b in pro_b.inputs], [b_host])
        b_host = b_host.reshape(k, n)
    else:
        b_host = host_view(core.b.array, core.b_view)
    run_ms = (time.perf_counter() - t) * 1e3
    for r0 in range(0, m, rows):
        r1 = min(m, r0 + rows)
        t = time.perf_counter()
        if pro_a is not None:
            backend.run(a_compiled, pro_a.kernel,
                        slice_rows(pro_a.launch, m, r0, r1, shift_outputs=False),
                        [None if b is None else b.array for b in pro_a.inputs], [a_panel])
            a_rows = a_panel[:(r1 - r0) * k].reshape(r1 - r0, k)
        else:
            a_rows = a_host[r0:r1]
        np.matmul(a_rows, b_host, out=c_panel[:(r1 - r0) * n].reshape(r1 - r0, n))
        backend.run(compiled, step.kernel,
                    slice_rows(step.launch, m, r0, r1, keep={step.core_input}), ins,
                    [outs[i] for i in step.out_index])
        run_ms += (time.perf_counter() - t) * 1e3
    return outs, info, run_ms


def _run_step(step: Step, sync_id: int, cause: str, where: str,
              held: Callable[[], set[int]]) -> Choice | None:
    """Run one step and log it; returns what was chosen for a kernel step
    (replay.py keeps it), None for the others."""
    root = step.group.root
    device = root.device
    if step.kernel is None:  # extern: a transfer or a library call
        node = root.node
        srcs = _extern_srcs(step)
        nbytes = _nbytes(step)
        t = time.perf_counter()
        info = CompileInfo("-", 0.0)
        if node.op == "to_device":
            (src, view), = srcs
            root.array = transfer(src.array, view, src.device, device)
            backend, reason = "copy", f"transfer {src.device} -> {device}"
            run_ms = (time.perf_counter() - t) * 1e3
        elif device == "cuda":
            from cuda_backend import device_view, extern_backend as cuda_backend_of
            from cuda_backend import run_extern as cuda_extern
            import cupy
            out = cupy.empty(node.shape, root.dtype.np)
            run_ms = cuda_extern(node.op, [device_view(b.array, v) for b, v in srcs], out,
                                 node.arg)
            root.array = out.reshape(-1)
            backend, reason = cuda_backend_of(node.op)
        else:
            flat = pool.take(root.size, root.dtype.np)  # recycled memory: no page faults
            flat = empty(root.size, root.dtype.np) if flat is None else flat
            run_ms, info = run_extern(node.op, [host_view(b.array, v) for b, v in srcs],
                                      flat.reshape(node.shape), node.arg)
            _finish([root], [flat], True)
            backend, reason = extern_backend(node.op)
        root.node = None
        log.add_kernel(KernelRecord(sync_id, cause, where, step.name, step.ops, device, backend,
                                    reason, _cache_text(info), info.ms, run_ms, nbytes))
        return None
    fused = step.core_input is not None  # a matmul with its prologue/epilogue kernels
    backend, reason = choose(step.kernel, device, None if fused else step.launch)
    compiled = None
    if fused:
        outs, info, run_ms = _run_matmul(step, backend)
        reason = fused_reason(step.a_prologue is not None, step.b_prologue is not None, reason)
        name = "blas+" + backend.name
    else:
        outs, info, run_ms, reason, compiled = _run_kernel(step, backend, reason, held)
        name = backend.name
    if reason.startswith("small work"):
        small_work.pay(step.kernel, run_ms)
    _finish(step.outputs, outs, device == "cpu" and step.base is None)
    nbytes = _nbytes(step)
    log.add_kernel(KernelRecord(sync_id, cause, where, step.name, step.ops, device,
                                name, reason, _cache_text(info), info.ms, run_ms, nbytes))
    return None if fused else Choice(backend, reason, compiled, nbytes)


def _cache_text(info: CompileInfo) -> str:
    """The log's cache field: "hit", "miss (what was new)", "disk", "-"."""
    return info.cache + (f" ({info.new})" if info.new else "")


def _finish(bufs: list[Buffer], arrays: list, recycle: bool) -> None:
    """The buffers now hold their values; CPU memory goes back to the pool
    when its buffer dies."""
    for b, arr in zip(bufs, arrays):
        b.array, b.node = arr, None
        if recycle:
            pool.recycle_when_dead(b, arr)


def _run_kernel(step: Step, backend, reason: str, held: Callable[[], set[int]]
                ) -> tuple[list, CompileInfo, float, str, object]:
    """Allocate (or pick the write target), compile and run one kernel."""
    if step.base is not None:
        memory = step.base.array
        target, how = _write_target(step, held)  # may move the old version aside first
        try:
            return _compile_and_run(step, backend, reason, how, target)
        except BaseException:  # a compile error, Ctrl-C: the tensor keeps its memory
            if step.base.array is not memory:  # moved aside: the old values go back
                memory[...] = step.base.array
                step.base.array = memory
            raise
    return _compile_and_run(step, backend, reason, None, None)


def _compile_and_run(step: Step, backend, reason: str, how: str | None, target: object
                     ) -> tuple[list, CompileInfo, float, str, object]:
    """`_run_kernel` once a write's target (None for new outputs) is chosen."""
    ins = [None if b is None else b.array for b in step.inputs]
    if target is not None:
        outs, reason = [target], f"{reason}; write {how}"
        aliased = aliased_inputs(step, target)
        for i in aliased:
            ins[i] = ins[i].copy()
        if aliased:
            reason += f", reading a copy of {len(aliased)} input(s) sharing its memory"
    else:
        outs = [_allocate(backend, b) for b in step.outputs]
    if all(b.size == 0 for b in step.outputs):  # empty result: nothing to compute
        return outs, CompileInfo("-", 0.0), 0.0, reason, None
    compiled, info = backend.compile(step.kernel)
    if info.cache.startswith("miss") and backend.name == "llvm":
        small_work.observe_compile(info.ms)
    run_ms = _timed_run(backend, compiled, step.kernel, step.launch, ins,
                        [outs[i] for i in step.out_index])
    return outs, info, run_ms, reason, compiled


def _once(fn: Callable[[], set[int]]) -> Callable[[], set[int]]:
    """fn's value, computed on the first call (`lru_cache` costs a wrapper
    object per sync, and most syncs never ask)."""
    memo: list[set[int]] = []

    def get() -> set[int]:
        if not memo:
            memo.append(fn())
        return memo[0]
    return get


def realize(targets: list[Buffer], cause: str, where: str,
            held: Callable[[], set[int]] = frozenset) -> SyncRecord:
    """Compute every pending buffer in `targets` (and what they need).

    `held()` gives the ids of buffers live tensors still view: values a
    write must not overwrite even if this sync does not ask for them. It is
    called only when a write runs (it walks every live tensor).
    """
    t0 = time.perf_counter()
    order, key, externals, template, rewritten = _lookup(targets)
    replay = replays.get(template) if template is not None else None
    if replay is not None:
        return _replay(replay, (order, externals), template, rewritten, cause, where, t0)
    sched = _plan(targets, order, key, externals, template, rewritten)
    held = _once(held)  # computed once per sync, if at all
    sync_id = log.new_sync_id()
    done = 0
    choices = []
    try:
        for step in sched.steps:
            try:
                choices.append(_run_step(step, sync_id, cause, where, held))
            except FallbackError:
                raise
            except Exception as e:
                raise _kernel_error(step.name, step.ops, e) from e
            done += 1
            step.group.members.clear()  # release inlined nodes: they no longer read anything
            for pro in (step.a_prologue, step.b_prologue):
                if pro is not None:
                    pro.group.members.clear()
    finally:
        for dup, first in sched.aliases:
            if not first.pending and dup.pending:
                dup.array, dup.node = first.array.copy(), None
        rec = SyncRecord(sync_id, cause, where, sched.nodes, done,
                         (time.perf_counter() - t0) * 1e3, sched.merged, sched.folded,
                         "hit" if sched.cached else "miss", sched.rewritten)
        log.add_sync(rec)
    found = replay_of(sched.template, sched.steps, choices)
    if found is not None:
        replays.put(sched.template, found)
    return rec


def _replay(replay: Replay, bufs: tuple[list[Buffer], list[Buffer]], template: Template,
            rewritten: int, cause: str, where: str, t0: float) -> SyncRecord:
    """Run a schedule that ran in full before: its kernels, bound to this
    graph's buffers, logged as the full path logs them (replay.py)."""
    sync_id = log.new_sync_id()
    done = 0
    try:
        for rs in replay.steps:
            c = rs.choice
            outputs = [buffer_at(r, bufs) for r in rs.outputs]
            try:
                outs = [_allocate(c.backend, b) for b in outputs]
                ins = [None if r is None else buffer_at(r, bufs).array for r in rs.inputs]
                run_ms = _timed_run(c.backend, c.compiled, rs.kernel, rs.launch, ins,
                                    [outs[i] for i in rs.out_index])
            except Exception as e:
                raise _kernel_error(rs.name, rs.ops, e) from e
            device = c.backend.device
            _finish(outputs, outs, device == "cpu")
            log.add_kernel(KernelRecord(sync_id, cause, where, rs.name, rs.ops, device,
                                        c.backend.name, c.reason, "hit", 0.0, run_ms, c.nbytes))
            done += 1
    finally:
        rec = SyncRecord(sync_id, cause, where, template.nodes, done,
                         (time.perf_counter() - t0) * 1e3, template.merged, template.folded,
                         "hit", rewritten)
        log.add_sync(rec)
    return rec


def _kernel_error(name: str, ops: tuple[str, ...], e: Exception) -> KernelError:
    built = ", ".join(sorted({op.split("@", 1)[1] for op in ops}))
    return KernelError(f"kernel {name} failed: {type(e).__name__}: {e} (ops built at {built})")
