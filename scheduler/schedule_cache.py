"""Reusing whole schedules: a loop that builds the same graph skips planning.

A training step or a simulation loop builds the same graph every
iteration. Its key is the graph's structure: ops, static arguments and
constant values (not those of `param` nodes, run-time scalars such as a
random tensor's seed and first counter), dtypes, shapes, devices, every
view, where each op was built, which inputs are the same storage, and which
buffers the sync asked for, plus the fusion setting `max_kernel_ops`.
Sizes are in the views, so a new shape is a new key. On a hit the
stored plan is re-instantiated over the new graph's buffers: the passes,
fusion and lowering are skipped, and kernels come from the backends'
caches. What depends on run-time state (in-place or copy for writes,
memory recycling) is still decided when each kernel runs.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

from .config import config
from .group import Group
from .graph import Buffer, const_key
from .lowering import Step
from .matmul_fusion import MatmulCore

Ref = int  # >= 0: index into the gathered order; < 0: -(j + 1) into the external inputs


def graph_key(order: list[Buffer], targets: list[Buffer]) -> tuple[tuple, list[Buffer]]:
    """(structural key, realized inputs in canonical order) of a gathered graph."""
    index = {id(b): i for i, b in enumerate(order)}
    ext_index: dict[int, int] = {}
    externals: list[Buffer] = []
    parts = []
    for b in order:
        n = b.node
        srcs = []
        for sb, v in n.srcs:
            i = index.get(id(sb))
            if i is None:
                j = ext_index.get(id(sb))
                if j is None:
                    j = ext_index[id(sb)] = len(externals)
                    externals.append(sb)
                srcs.append((-j - 1, sb.dtype, sb.size, sb.device, v))
            else:
                srcs.append((i, v))
        arg = const_key(n.arg) if n.op == "const" else None if n.op == "param" else n.arg
        parts.append((n.op, arg, n.dtype, n.shape, b.device, n.where, tuple(srcs)))
    wanted = tuple(sorted(index[id(t)] for t in targets))
    return (tuple(parts), wanted, config.max_kernel_ops), externals


@dataclass(frozen=True)
class _StepTemplate:
    name: str
    kind: str
    why: str
    root: Ref
    members: tuple[Ref, ...]
    reduce: Ref | None
    siblings: tuple[Ref, ...]
    inputs: tuple[Ref | None, ...]
    base: Ref | None
    kernel: object
    launch: object
    ops: tuple[str, ...]
    extra: tuple[Ref, ...]
    out_index: tuple[int, ...]
    params: tuple[tuple[int, Ref], ...]
    core: tuple | None = None       # fused matmul: (mm, a, a view, b, b view) as refs
    a_prologue: "_StepTemplate | None" = None
    b_prologue: "_StepTemplate | None" = None
    core_input: int | None = None


@dataclass(frozen=True)
class Template:
    steps: tuple[_StepTemplate, ...]
    aliases: tuple[tuple[Ref, Ref], ...]
    nodes: int
    merged: int
    folded: int


def templatize(steps: list[Step], aliases: list, order: list[Buffer], externals: list[Buffer],
               nodes: int, merged: int, folded: int) -> Template:
    index = {id(b): i for i, b in enumerate(order)}
    index.update({id(b): -j - 1 for j, b in enumerate(externals)})
    return Template(tuple(_template(s, index) for s in steps),
                    tuple((_ref(d, index), _ref(f, index)) for d, f in aliases),
                    nodes, merged, folded)


def _ref(b: Buffer | None, index: dict[int, Ref]) -> Ref | None:
    return None if b is None else index[id(b)]


def _template(s: Step, index: dict[int, Ref]) -> _StepTemplate:
    # Module-level on purpose, as are _step and buffer_at: a nested function that
    # calls itself is a reference cycle, which would keep this graph's buffers
    # (and their memory, which the pool recycles) alive until the next GC.
    def ref(b):
        return _ref(b, index)
    c = s.group.core
    core = None if c is None else (ref(c.mm), ref(c.a), c.a_view, ref(c.b), c.b_view)
    return _StepTemplate(
        s.name, s.group.kind, s.group.why, ref(s.group.root),
        tuple(ref(m) for m in s.group.members), ref(s.group.reduce),
        tuple(ref(r) for r in s.group.siblings),
        tuple(ref(b) for b in s.inputs), ref(s.base), s.kernel, s.launch, s.ops,
        tuple(ref(b) for b in s.group.extra), s.out_index,
        tuple((slot, ref(b)) for slot, b in s.params), core,
        _template(s.a_prologue, index) if s.a_prologue else None,
        _template(s.b_prologue, index) if s.b_prologue else None, s.core_input)


def instantiate(t: Template, order: list[Buffer], externals: list[Buffer]) -> tuple[list, list]:
    """(steps, aliases) of the template over this graph's buffers."""
    bufs = (order, externals)
    return ([_step(s, bufs) for s in t.steps],
            [(buffer_at(d, bufs), buffer_at(f, bufs)) for d, f in t.aliases])


def buffer_at(r: Ref | None, bufs: tuple[list[Buffer], list[Buffer]]) -> Buffer | None:
    """The buffer a template's ref names in one graph: (gathered order, externals)."""
    order, externals = bufs
    return None if r is None else (order[r] if r >= 0 else externals[-r - 1])


def _step(s: _StepTemplate, bufs: tuple[list[Buffer], list[Buffer]]) -> Step:
    def buf(r):
        return buffer_at(r, bufs)
    root = buf(s.root)
    extra = [buf(e) for e in s.extra]
    group = Group(root=root, why=s.why, kind=s.kind,
                  members=[buf(m) for m in s.members], reduce=buf(s.reduce),
                  siblings=[buf(r) for r in s.siblings], extra=extra)
    params = tuple((slot, buf(r)) for slot, r in s.params)
    launch = s.launch
    if params:  # this graph's values for the run-time scalars
        scalars = list(launch.scalars)
        for slot, b in params:
            scalars[slot] = b.node.arg
        launch = replace(launch, scalars=scalars)
    a_pro = _step(s.a_prologue, bufs) if s.a_prologue else None
    b_pro = _step(s.b_prologue, bufs) if s.b_prologue else None
    if s.core is not None:
        mm, a, av, b, bv = s.core
        group.core = MatmulCore(buf(mm), buf(a), av, buf(b), bv, a_pro.group if a_pro else None,
                                b_pro.group if b_pro else None)
    return Step(s.name, group, [root, *extra], [buf(i) for i in s.inputs], s.kernel,
                launch, s.ops, buf(s.base), s.out_index, params, a_pro, b_pro, s.core_input)


class ScheduleCache:
    """A bounded LRU map from graph keys to templates."""

    def __init__(self, size: int = 256):
        self.size = size
        self._map: OrderedDict[tuple, Template] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> Template | None:
        with self._lock:
            t = self._map.get(key)
            if t is not None:
                self._map.move_to_end(key)
            return t

    def put(self, key: tuple, template: Template) -> None:
        with self._lock:
            self._map[key] = template
            while len(self._map) > self.size:
                self._map.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._map.clear()

    def values(self) -> list:
        with self._lock:
            return list(self._map.values())


cache = ScheduleCache()
