"""`lazy.explain`: the plan a sync would run, without running anything."""
from __future__ import annotations

from dataclasses import dataclass, field

from scheduler.backends import (FallbackError, choose, cuda_backend, device_status,
                                extern_backend)
from scheduler.matmul_fusion import fused_reason
from scheduler.realize import plan

from . import runtime
from .tensor import Tensor


@dataclass(frozen=True)
class PlannedKernel:
    name: str
    backend: str
    reason: str       # why this backend
    fusion: str       # why this kernel's output is written to memory
    ops: tuple[str, ...]
    source: str       # generated code (LLVM IR on CPU)
    recomputed: tuple[str, ...] = ()  # values computed here and in other kernels, not written


@dataclass
class Plan:
    kernels: list[PlannedKernel] = field(default_factory=list)
    nodes: int = 0
    merged: int = 0
    folded: int = 0
    rewritten: int = 0

    def __str__(self) -> str:
        rw = f", {self.rewritten} rewritten" if self.rewritten else ""
        lines = [f"plan: {self.nodes} pending nodes ({self.merged} merged, {self.folded} "
                 f"folded{rw}) -> {len(self.kernels)} kernels"]
        for k in self.kernels:
            lines.append(f"  {k.name}: {k.backend} ({k.reason}); output kept because: "
                         f"{k.fusion}")
            lines.append(f"    ops: {', '.join(k.ops)}")
            lines += [f"    recomputed here, not written: {note}" for note in k.recomputed]
        return "\n".join(lines)


def explain(*tensors: Tensor, device: str | None = None) -> Plan:
    """Schedule the given (or all live) pending tensors and describe each kernel.

    `device="cuda"` shows what the CUDA backend would run for the same graph,
    with its CUDA C as `source`: no GPU or driver needed.
    """
    with runtime._sync_lock:  # planning rewrites the graph a sync in another thread walks
        bufs = [t._buf for t in tensors if t._buf.pending] if tensors else runtime.live_pending()
        sched = plan(runtime.scheduled(bufs)[0])
    out = Plan(nodes=sched.nodes, merged=sched.merged, folded=sched.folded,
               rewritten=sched.rewritten)
    for step in sched.steps:
        if step.kernel is None:
            op = step.group.root.node.op
            if op == "to_device":
                backend, reason, source = "copy", "transfer", ""
            elif device == "cuda":
                from cuda_backend import extern_backend as cuda_extern_backend
                (backend, reason), source = cuda_extern_backend(op), ""
            else:
                (backend, reason), source = extern_backend(op), ""
        elif device == "cuda":
            cuda = cuda_backend()
            if cuda is None:
                raise RuntimeError("explain(device='cuda'): the cuda_backend package failed "
                                   "to import")
            ok, why = cuda.supports(step.kernel)
            backend, source = "cuda", cuda.source(step.kernel)
            reason = f"{'supported' if ok else why}; {device_status('cuda')[1]}"
        else:
            try:
                b, reason = choose(step.kernel, step.group.root.device)
                backend, source = b.name, b.source(step.kernel)
            except FallbackError as e:
                backend, reason, source = "none", str(e), ""
            if step.core_input is not None:  # scheduler/matmul_fusion.py
                backend = f"blas+{backend}"
                reason = fused_reason(step.a_prologue is not None, step.b_prologue is not None,
                                      reason)
        out.kernels.append(PlannedKernel(step.name, backend, reason, step.group.why,
                                         step.ops, source, tuple(step.group.recomputed)))
    return out
