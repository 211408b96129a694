"""Fusing elementwise work around a BLAS matmul, one row panel at a time.

BLAS cannot run our expressions, but it can multiply a panel of rows. So a
2-D `c = a @ b` whose only reader is one elementwise kernel (the epilogue:
`maximum(c + bias, 0)`) and whose operands are elementwise expressions read
only by the matmul (the prologues: `2 * x`) run as one step. `b`'s prologue
writes all of `b` into a reused scratch first (every panel needs all of
it); then, for each panel of rows, `a`'s prologue writes that panel of `a`
into a small scratch, BLAS multiplies it into a scratch panel of `c`, and
the epilogue kernel reads that panel while it is still in cache and writes
the result rows. Neither `a`'s expression nor `c` is ever written whole to
memory, and `b`'s only to scratch that the next sync reuses.

The decisions are named functions whose reasons `lazy.explain` shows; the
panel arithmetic (`slice_rows`) is pure and works on collapsed launches.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import threading

import numpy as np

from .group import Group, is_trivial
from .graph import Buffer
from .kernel_ir import Launch
from .pool import empty
from .view import View

# A panel of a's and c's rows together. Each BLAS call packs all of b again,
# so panels are as large as the last-level cache allows, not L2-sized: a
# 2048 x 2048 float32 product is one panel, a 4096 one is four.
PANEL_BYTES = 32 << 20
MIN_PANEL_ROWS = 64  # fewer rows and BLAS spends its time packing b
_scratch = threading.local()  # per thread: two threads' syncs must not share panels


@dataclass
class MatmulCore:
    """What a fused step multiplies: a times b, either computed by its prologue group."""
    mm: Buffer                  # the matmul node's buffer (never written)
    a: Buffer
    a_view: View
    b: Buffer
    b_view: View
    a_prologue: Group | None = None
    b_prologue: Group | None = None


def _readers(groups: list[Group]) -> dict[int, list[tuple[Group, View]]]:
    """id(buffer) -> (group, view) for every read inside the planned kernels."""
    out: dict[int, list[tuple[Group, View]]] = {}
    for g in groups:
        nodes = [g.root.node] if g.kind == "extern" else [m.node for m in g.members]
        for n in nodes:
            for src, view in n.srcs:
                out.setdefault(id(src), []).append((g, view))
    return out


def why_not_epilogue(mm_group: Group, readers: list[tuple[Group, View]]) -> str | None:
    """None if the matmul's only reader can take it as a per-panel epilogue."""
    mm = mm_group.root
    if mm.node.op != "matmul" or mm.device != "cpu":
        return "extern"
    if mm_group.why != "extern":
        return mm_group.why  # requested or read by several kernels: it must exist
    if len(mm.node.shape) != 2 or any(v.ndim != 2 for _, v in mm.node.srcs):
        return "batched matmul"
    consumers = {id(g) for g, _ in readers}
    if len(consumers) != 1:
        return f"read by {len(consumers)} kernels"
    g = readers[0][0]
    if g.kind != "elementwise" or g.extra or g.core is not None:
        return f"reader is a {g.kind} kernel"
    if g.root.node.shape != mm.node.shape or not g.trivial or \
            not all(is_trivial(v, mm) for _, v in readers):
        return "epilogue reads the product through a view"
    return None


def why_not_prologue(x: Buffer, view: View, readers: dict, groups_by_root: dict) -> str | None:
    """None if the operand `x` is an elementwise kernel of its own, read only
    by the matmul, whole and in storage order."""
    g = groups_by_root.get(id(x))
    if g is None or g.kind != "elementwise" or g.extra or g.why != "extern":
        return "not an elementwise kernel read only by the matmul"
    if len(readers.get(id(x), ())) != 1 or not is_trivial(view, x) or len(x.node.shape) != 2:
        return "read through a view or by others"
    return None


def fuse_matmuls(groups: list[Group]) -> list[Group]:
    """Fold eligible matmul kernels (and their operands' prologues) into their epilogues."""
    readers = _readers(groups)
    by_root = {id(g.root): g for g in groups}
    dropped: set[int] = set()
    for g in groups:
        if g.kind != "extern" or why_not_epilogue(g, readers.get(id(g.root), [])) is not None:
            continue
        mm = g.root
        (a, av), (b, bv) = mm.node.srcs
        epilogue = readers[id(mm)][0][0]
        core = MatmulCore(mm, a, av, b, bv)
        if a.pending and why_not_prologue(a, av, readers, by_root) is None:
            core.a_prologue = by_root[id(a)]
            dropped.add(id(core.a_prologue))
        if b.pending and why_not_prologue(b, bv, readers, by_root) is None:
            core.b_prologue = by_root[id(b)]
            dropped.add(id(core.b_prologue))
        epilogue.core = core
        dropped.add(id(g))
    return [g for g in groups if id(g) not in dropped]


def scratch(name: str, size: int, dtype: np.dtype) -> np.ndarray:
    """A reused panel array: fresh pages every sync would cost more than the epilogue."""
    arrays = _scratch.__dict__.setdefault("arrays", {})
    key = (name, np.dtype(dtype).str)
    arr = arrays.get(key)
    if arr is None or arr.size < size:
        arr = arrays[key] = empty(size, dtype)
    return arr[:size]


def fused_reason(a_prologue: bool, b_prologue: bool, kernel_reason: str) -> str:
    """The log's (and explain's) reason for a fused matmul step."""
    from .backends import blas_name
    parts = ["a's prologue"] * a_prologue + ["b's prologue"] * b_prologue + ["epilogue"]
    fused = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return (f"extern matmul: NumPy's BLAS ({blas_name()}) on row panels; "
            f"{fused} fused: {kernel_reason}")


def panel_rows(m: int, k: int, n: int, itemsize: int) -> int:
    """Rows per panel: a's and c's panels together fill about PANEL_BYTES."""
    return max(1, min(m, max(MIN_PANEL_ROWS, PANEL_BYTES // max(1, (k + n) * itemsize))))


def slice_rows(launch: Launch, rows: int, r0: int, r1: int, keep: set[int] = frozenset(),
               shift_outputs: bool = True) -> Launch:
    """The launch restricted to rows r0:r1 of an elementwise domain of `rows` rows.

    Lowering may have merged the row axis with the axes after it; the rows
    are still a contiguous range of the first (merged) axis. Inputs in
    `keep` (and the outputs, unless shifted) are panel scratch arrays whose
    row r0 sits at their own offset.
    """
    if rows <= 1:
        return launch
    per_row = launch.shape[0] // rows
    start, count = r0 * per_row, (r1 - r0) * per_row

    def cut(v: View, shift: bool) -> View:
        off = v.offset + start * v.strides[0] if shift else v.offset
        return View((count,) + v.shape[1:], v.strides, off)

    inputs = [[cut(vs[0], i not in keep), *vs[1:]] for i, vs in enumerate(launch.inputs)]
    outputs = [cut(v, shift_outputs) for v in launch.outputs]
    return replace(launch, shape=(count,) + launch.shape[1:], inputs=inputs, outputs=outputs)
