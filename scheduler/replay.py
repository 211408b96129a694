"""Replays: the short path of a sync whose schedule was run before.

A schedule-cache hit still instantiates every step, asks the backends
again which one runs each kernel, looks the kernel up in the JIT cache and
recomputes what the log records. For a schedule of plain CPU kernels all
of that comes out the same every time, so after one full run its answers
are kept here, beside the template, and the next hit binds the graph's
buffers straight to the kernels. On this machine that is half of a small
sync's Python, and far more after a big array operation has evicted the
caches (docs/performance_history.md, "Issue 5: where it stands (2026-11-21,
after the performance work)").

Only schedules whose every step is a kernel chosen for LLVM on the CPU or
for CUDA on the GPU (no writes into a base, no fused matmul, no run-time
scalars, no small-work or fallback choice, no duplicate outputs to copy,
nothing empty) are replayed; the rest always take the full path. What
depends on run-time state (memory recycling) is still decided per run, as
on the full path. On an H100 the full path of a one-kernel CUDA sync cost
0.2-0.8 ms of host time (the CUDA backend's `supports` walks the kernel,
and its cache key is a digest of it) for kernels that ran in 0.05 ms.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .lowering import Step
from .schedule_cache import Ref, ScheduleCache, Template


REPLAYED = {("cpu", "llvm"), ("cuda", "cuda")}  # (device, backend) a replay may run


@dataclass(frozen=True)
class Choice:
    """What the full path decided for one kernel step, and what it logged."""
    backend: Any
    reason: str
    compiled: Any
    nbytes: int


@dataclass(frozen=True)
class ReplayStep:
    name: str
    ops: tuple[str, ...]
    kernel: Any
    launch: Any
    inputs: tuple[Ref | None, ...]
    outputs: tuple[Ref, ...]        # the root, then the extra outputs
    out_index: tuple[int, ...]
    choice: Choice


@dataclass(frozen=True)
class Replay:
    steps: tuple[ReplayStep, ...]


def why_not_replay(step: Step, choice: Choice | None) -> str | None:
    """Why this step must take the full path every time (None: it need not)."""
    if choice is None:
        return "not a single kernel (extern, or a fused matmul)"
    if (step.group.root.device, choice.backend.name) not in REPLAYED:
        return "not an LLVM kernel on the CPU or a CUDA kernel on the GPU"
    if choice.reason.startswith(("small work", "fallback")):
        return "the backend choice depends on run-time history"
    if step.base is not None:
        return "a write: in place or a copy is decided per run"
    if step.params:
        return "run-time scalars change the launch"
    if any(b.size == 0 for b in step.outputs):
        return "an empty output"
    return None


def replay_of(template: Template, steps: list[Step],
              choices: list[Choice | None]) -> Replay | None:
    """The replay of a schedule that just ran in full, or None."""
    if template.aliases or not steps or len(steps) != len(template.steps):
        return None
    out = []
    for st, step, choice in zip(template.steps, steps, choices):
        if why_not_replay(step, choice) is not None:
            return None
        out.append(ReplayStep(st.name, st.ops, st.kernel, st.launch, st.inputs,
                              (st.root, *st.extra), st.out_index, choice))
    return Replay(tuple(out))


class Replays:
    """Replays by template identity, in a bounded LRU map like the schedule
    cache's (the entry holds its template, so the id stays its own)."""

    def __init__(self, size: int = 256):
        self._map = ScheduleCache(size)

    def get(self, template: Template) -> Replay | None:
        hit = self._map.get(id(template))
        return hit[1] if hit is not None and hit[0] is template else None

    def put(self, template: Template, replay: Replay) -> None:
        self._map.put(id(template), (template, replay))

    def clear(self) -> None:
        self._map.clear()

    def entries(self) -> list[Replay]:
        """The replays held now (tests)."""
        return [r for _, r in self._map.values()]


replays = Replays()
