"""Kernel IR: the one interface between the scheduler and the backends.

A `Kernel` is structure only: iteration rank, inputs (dtype and how their
views are shaped), a scalar expression tree, an optional reduction and the
outputs. Sizes, strides, offsets and constant values are runtime arguments
(`Launch`), packed by `pack_launch` into one int64 array whose layout
`ArgLayout` gives. So one compiled kernel serves every shape with the same
structure, and a `Kernel` is its own cache key.

Iteration domain: `ndim` axes; the last `n_reduce` are reduced. Loads in
the "full" space index all `ndim` axes; loads in the "out" space and all
outputs index only the first `ndim - n_reduce` axes (epilogue work that
runs once per output element).

Position of input i at a domain index: first view (offset + sum(idx*stride)),
then for each chained view: unravel that position over the view's shape
(C order) and apply its strides and offset. A load of an `iota` input
yields the position itself (int64) instead of reading memory: that is how
`arange`, `eye` and `linspace` fuse through views.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Union

import numpy as np

from .dtypes import DType
from .view import View


# -- expressions ---------------------------------------------------------------
@dataclass(frozen=True)
class Load:
    input: int
    dtype: DType


@dataclass(frozen=True)
class Scalar:
    slot: int  # runtime constant: Launch.scalars[slot]
    dtype: DType


@dataclass(frozen=True)
class Op:
    name: str  # a key of scheduler.ops.ELEMENTWISE; operands already share a dtype
    args: tuple["Expr", ...]
    dtype: DType


@dataclass(frozen=True)
class Cast:
    x: "Expr"
    dtype: DType


@dataclass(frozen=True)
class Gather:
    """Read input `input` at the element position `pos` (an int64 expression).

    Advanced indexing: positions are data, so the input's views are not
    used; `pos` is absolute within the input's flat storage.
    """
    input: int
    pos: "Expr"
    dtype: DType


@dataclass(frozen=True)
class Reduced:
    """The kernel's reduction result, readable only by outputs (epilogue).

    `part` "" is the result; another names a part of the accumulator that
    the op lists (ops.Reduction.parts: logsumexp's "max" and "log_sum"),
    so one pass can give a softmax both. `index` picks the reduction in
    `Kernel.reductions` (0: `Kernel.reduce`, then its siblings)."""
    dtype: DType
    part: str = ""
    index: int = 0


Expr = Union[Load, Scalar, Op, Cast, Gather, Reduced]


def children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Op):
        return e.args
    if isinstance(e, Cast):
        return (e.x,)
    if isinstance(e, Gather):
        return (e.pos,)
    return ()


def postorder(roots: list[Expr]) -> list[Expr]:
    """Unique nodes, children before parents, without recursion."""
    order: list[Expr] = []
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(r, False) for r in reversed(roots)]
    while stack:
        e, expanded = stack.pop()
        if id(e) in seen:
            continue
        if expanded:
            seen.add(id(e))
            order.append(e)
            continue
        stack.append((e, True))
        stack.extend((c, False) for c in reversed(children(e)) if id(c) not in seen)
    return order


# -- kernel structure ------------------------------------------------------------
@dataclass(frozen=True)
class Input:
    dtype: DType
    space: str = "full"          # "full" or "out"
    chain: tuple[int, ...] = ()  # ranks of the views applied after the first
    inner: int | None = None     # innermost stride of the first view when fixed
                                 # at compile time (0, 1 or -1), else None: runtime
    iota: bool = False           # the value is the position itself
    indirect: bool = False       # read only by Gather at computed positions
    out_inner: int | None = None  # reductions: 0 when a full input is the same all along
                                  # the innermost out axis (stride 0), else None: runtime.
                                  # A column sum's tiled loop runs along that axis, and a
                                  # runtime 0 there keeps LLVM from vectorizing it


@dataclass(frozen=True)
class Reduce:
    op: str      # a key of scheduler.ops.REDUCTIONS
    expr: Expr   # per domain element (full space)
    acc: DType   # accumulator dtype
    dtype: DType  # dtype of Reduced; argmax/argmin give int64 flat index


@dataclass(frozen=True)
class Output:
    dtype: DType
    expr: Expr
    inner: int | None = None  # innermost output stride when fixed (1 or -1), else runtime
    pos: Expr | None = None   # advanced-index writes: store at this element
                              # position instead of through the output view;
                              # run in order, so the last duplicate wins (NumPy)
    follows: int | None = None  # extra outputs tiling one buffer: this output's view
    delta: int = 0              # is output `follows`'s view shifted by `delta` elements
                                # (backends may address it from that one: LLVM then
                                # sees one interleaved store stream, not two)


@dataclass(frozen=True)
class Kernel:
    ndim: int
    n_reduce: int
    inputs: tuple[Input, ...]
    scalars: tuple[DType, ...]
    reduce: Reduce | None
    outputs: tuple[Output, ...]
    # more reductions over the same domain, run in the same loop (`x.min()` and
    # `x.max()` read x once); ops.SIBLING_REDUCTIONS only, none with parts
    siblings: tuple[Reduce, ...] = ()

    @property
    def reductions(self) -> tuple[Reduce, ...]:
        """Every reduction of the kernel; `Reduced.index` counts in it."""
        return ((self.reduce,) if self.reduce is not None else ()) + self.siblings

    @property
    def n_out(self) -> int:
        return self.ndim - self.n_reduce

    def space_rank(self, space: str) -> int:
        return self.ndim if space == "full" else self.n_out

    def digest(self) -> str:
        """Stable structural hash (names the compiled function, keys disk caches)."""
        return hashlib.sha1(self.describe().encode()).hexdigest()[:16]

    def describe(self) -> str:
        """The structure as text, one expression node a line, in post-order.

        Iterative, so deep trees cost no recursion (repr() of a nested
        dataclass would).
        """
        roots = [o.expr for o in self.outputs] + [o.pos for o in self.outputs if o.pos is not None]
        roots += [r.expr for r in self.reductions]
        order = postorder(roots)
        index = {id(e): n for n, e in enumerate(order)}
        lines = [f"{self.ndim} {self.n_reduce} {self.inputs!r} {self.scalars!r}"]
        for e in order:
            kids = [index[id(c)] for c in children(e)]
            tag = e.name if isinstance(e, Op) else getattr(e, "input", getattr(e, "slot",
                                                                           getattr(e, "part", "")))
            if isinstance(e, Reduced) and e.index:
                tag = f"{tag}#{e.index}"
            lines.append(f"{type(e).__name__} {tag} {e.dtype.name} {kids}")
        for r in self.reductions:
            lines.append(f"reduce {r.op} {r.acc.name} {r.dtype.name} {index[id(r.expr)]}")
        lines += [f"out {o.dtype.name} {o.inner} {index[id(o.expr)]} "
                  f"{index[id(o.pos)] if o.pos is not None else '-'} {o.follows} {o.delta}"
                  for o in self.outputs]
        return "\n".join(lines)


# -- runtime arguments -----------------------------------------------------------
@dataclass
class Launch:
    shape: tuple[int, ...]                  # the iteration domain
    inputs: list[list[View]]                # per input: first view, then chained views
    outputs: list[View]                     # per output: view over the out space
    scalars: list[object] = field(default_factory=list)


@dataclass(frozen=True)
class ViewSlot:
    """Where one view's numbers sit in the packed int64 array."""
    shape: int | None  # index of shape[0] (chained views only), else None
    strides: int
    offset: int
    rank: int


@dataclass(frozen=True)
class ArgLayout:
    shape: int                            # index of domain shape[0]
    inputs: tuple[tuple[ViewSlot, ...], ...]
    outputs: tuple[ViewSlot, ...]
    size: int


def arg_layout(k: Kernel) -> ArgLayout:
    pos = k.ndim
    inputs = []
    for inp in k.inputs:
        rank = k.space_rank(inp.space)
        slots = [ViewSlot(None, pos, pos + rank, rank)]
        pos += rank + 1
        for r in inp.chain:
            slots.append(ViewSlot(pos, pos + r, pos + 2 * r, r))
            pos += 2 * r + 1
        inputs.append(tuple(slots))
    outputs = []
    for _ in k.outputs:
        outputs.append(ViewSlot(None, pos, pos + k.n_out, k.n_out))
        pos += k.n_out + 1
    return ArgLayout(0, tuple(inputs), tuple(outputs), pos)


def pack_launch(k: Kernel, launch: Launch) -> tuple[np.ndarray, np.ndarray]:
    """(int64 sizes/strides/offsets, int64 scalar bit patterns)."""
    layout = arg_layout(k)
    a = np.empty(max(layout.size, 1), np.int64)
    a[: k.ndim] = launch.shape
    for slots, views in zip(layout.inputs, launch.inputs):
        for slot, v in zip(slots, views):
            if slot.shape is not None:
                a[slot.shape: slot.shape + slot.rank] = v.shape
            a[slot.strides: slot.strides + slot.rank] = v.strides
            a[slot.offset] = v.offset
    for slot, v in zip(layout.outputs, launch.outputs):
        a[slot.strides: slot.strides + slot.rank] = v.strides
        a[slot.offset] = v.offset
    s = np.zeros(max(len(k.scalars), 1), np.int64)
    for i, (d, value) in enumerate(zip(k.scalars, launch.scalars)):
        s[i:i + 1] = np.array([value], dtype=d.np).astype(
            np.float64 if d.is_float else np.int64).view(np.int64)
    return a, s
