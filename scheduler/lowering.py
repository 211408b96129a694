"""Turn a fused group into Kernel IR (structure) plus a Launch (numbers).

Each inlined node is evaluated through a *path*: views that map a kernel
index to the node's own element. Reading a source through its view
extends the path; `compose` folds the two views into one when strides can
say it, otherwise the view is chained (an unravel at run time). Then the
domain is collapsed: size-1 axes dropped and neighbours merged where every
operand's strides allow, so contiguous work becomes one flat loop whatever
its shape, and a new shape reuses the compiled kernel.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .dtypes import DType
from .group import Group
from .graph import Buffer, const_key
from .kernel_ir import (Cast, Expr, Gather, Input, Kernel, Launch, Load, Op, Output, Reduce,
                        Reduced, Scalar)
from .ops import REDUCTIONS
from .view import Path, View, contiguous_strides, extend


@dataclass
class Step:
    """One kernel of a plan: IR and launch numbers, or an extern call."""
    name: str
    group: Group
    outputs: list[Buffer]
    inputs: list[Buffer | None] = field(default_factory=list)  # None: iota
    kernel: Kernel | None = None
    launch: Launch | None = None
    ops: tuple[str, ...] = ()   # user ops covered, "name@file:line"
    base: Buffer | None = None  # writes: the old version the output starts from
    out_index: tuple[int, ...] = (0,)  # kernel output i writes outputs[out_index[i]]
    params: tuple[tuple[int, Buffer], ...] = ()  # (scalar slot, `param` node it reads)
    a_prologue: "Step | None" = None  # matmul epilogue steps: the kernel computing a's panels
    b_prologue: "Step | None" = None  # matmul epilogue steps: the kernel computing all of b
    core_input: int | None = None   # matmul epilogue steps: the input that is the product


def _op_names(group: Group) -> tuple[str, ...]:
    nodes = [group.root] if group.kind == "extern" else group.members
    return tuple(f"{b.node.arg[0] if b.node.op == 'reduce' else b.node.op}@{b.node.where}"
                 for b in nodes)


class _Builder:
    def __init__(self, group: Group):
        self.group = group
        self.inputs: list[tuple[Buffer, str, Path]] = []
        self.input_index: dict[tuple, int] = {}
        self.scalars: list[tuple[DType, object]] = []
        self.scalar_index: dict[tuple, int] = {}
        self.params: list[tuple[int, Buffer]] = []
        self.memo: dict[tuple, Expr] = {}
        self.member_ids = {id(m) for m in group.members}
        reductions = [group.reduce, *group.siblings] if group.reduce is not None else []
        self.reduced = {id(r): n for n, r in enumerate(reductions)}  # -> Reduced.index

    def _input(self, buf: Buffer, space: str, path: Path | None, dtype: DType) -> Load:
        """Register a read of `buf` (path None: only at computed positions)."""
        key = (id(buf), space, path)
        if key not in self.input_index:
            self.input_index[key] = len(self.inputs)
            self.inputs.append((buf, space, path))
        return Load(self.input_index[key], dtype)

    def _scalar(self, value: object, dtype: DType) -> Scalar:
        key = (const_key(value), dtype)
        if key not in self.scalar_index:
            self.scalar_index[key] = len(self.scalars)
            self.scalars.append((dtype, value))
        return Scalar(self.scalar_index[key], dtype)

    def _param(self, buf: Buffer) -> Scalar:
        """A slot of its own per `param` node: its value changes between runs of
        the same plan, so it is never shared with an equal constant."""
        key = ("param", id(buf))
        if key not in self.scalar_index:
            self.scalar_index[key] = len(self.scalars)
            self.scalars.append((buf.dtype, buf.node.arg))
            self.params.append((self.scalar_index[key], buf))
        return Scalar(self.scalar_index[key], buf.dtype)

    def _leaf(self, buf: Buffer, path: Path, space: str) -> Expr | None:
        if id(buf) in self.reduced and space == "out":
            return Reduced(buf.dtype, index=self.reduced[id(buf)])
        if buf.pending and buf.node.op == "const":
            return self._scalar(buf.node.arg, buf.dtype)
        if buf.pending and buf.node.op == "param":
            return self._param(buf)
        if buf.pending and id(buf) in self.member_ids and buf.node.op != "iota":
            return None  # inlined: expand its node
        return self._input(buf, space, path, buf.dtype)

    def build(self, buf: Buffer, path: Path, space: str) -> Expr:
        """Expression for `buf` at `path`, iteratively and with shared subtrees."""
        stack = [(buf, path)]
        while stack:
            b, p = stack[-1]
            key = (id(b), p, space)
            if key in self.memo:
                stack.pop()
                continue
            leaf = self._leaf(b, p, space)
            if leaf is not None:
                self.memo[key] = leaf
                stack.pop()
                continue
            node = b.node
            srcs = node.srcs[1:] if node.op == "gather" else node.srcs  # gather: base is indirect
            kids = [(sb, extend(p, sv)) for sb, sv in srcs]
            missing = [k for k in kids if (id(k[0]), k[1], space) not in self.memo]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            args = tuple(self.memo[(id(sb), sp, space)] for sb, sp in kids)
            if node.op == "gather":
                base = node.srcs[0][0]
                load = self._input(base, space, None, base.dtype)
                self.memo[key] = Gather(load.input, args[0], node.dtype)
            elif node.op == "cast":
                self.memo[key] = Cast(args[0], node.dtype)
            else:
                self.memo[key] = Op(node.op, args, node.dtype)
        return self.memo[(id(buf), path, space)]


def _collapse(shape: list[int], n_out: int, full: list[list[int]], out: list[list[int]]):
    """Drop size-1 axes and merge neighbours that every operand walks as one.

    `full` holds stride lists over all axes, `out` over the first n_out.
    Returns the new shape and n_out; stride lists are rewritten in place.
    Each region (out axes, reduce axes) keeps at least one axis.
    """
    regions = [list(range(n_out)), list(range(n_out, len(shape)))]
    new_regions = []
    for r, axes in enumerate(regions):
        kept = [a for a in axes if shape[a] != 1] or axes[:1]
        merged: list[list[int]] = []
        for a in kept:
            if merged:
                prev = merged[-1][-1]
                ok = shape[a] != 0 and shape[prev] != 0 and all(
                    s[prev] == s[a] * shape[a] for s in full) and (
                    r == 1 or all(s[prev] == s[a] * shape[a] for s in out))
                if ok:
                    merged[-1].append(a)
                    continue
            merged.append([a])
        new_regions.append(merged)
    groups = new_regions[0] + new_regions[1]
    new_shape = [_prod(shape[a] for a in g) for g in groups]
    for s in full:
        s[:] = [s[g[-1]] for g in groups]
    for s in out:
        s[:] = [s[g[-1]] for g in new_regions[0]]
    return new_shape, len(new_regions[0])


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


# Innermost strides fixed at compile time: 1 (contiguous rows), 0 (a row
# broadcast along them) and -1 (a reversed row, `flip`, `x[::-1]`). A fixed
# stride lets LLVM vectorize the inner loop (reversed loads are one permute
# each); any other stride is read at run time (see cpu_backend/loops.py).
FIXED_INNER = (0, 1, -1)


def _inner(strides: list[int]) -> int | None:
    s = strides[-1] if strides else None
    return s if s in FIXED_INNER else None


def lower(group: Group, name_index: int) -> Step:
    root = group.root
    if group.kind == "extern":
        return Step(f"{root.node.op}_{name_index}", group, [root],
                    inputs=[b for b, _ in root.node.srcs], ops=_op_names(group))
    b = _Builder(group)
    pos, base, siblings = None, None, ()
    if group.kind == "scatter":  # write values through a view (or at positions) of `base`
        node = root.node
        base, (vbuf, vview) = node.srcs[0][0], node.srcs[1]
        domain, n_out, reduce = list(vview.shape), len(vview.shape), None
        out_shape = tuple(domain)
        start = (View.contiguous(out_shape),)
        epilogue = b.build(vbuf, extend(start, vview), "full")
        if node.arg is None:
            pbuf, pview = node.srcs[2]
            pos = b.build(pbuf, extend(start, pview), "full")
        out_views = [node.arg if node.arg is not None else View.contiguous(out_shape)]
    elif group.kind == "reduce":
        axes = group.reduce.node.arg[1]
        in_shape = group.reduce.node.srcs[0][1].shape  # siblings share it and the axes
        out_axes = [d for d in range(len(in_shape)) if d not in axes]
        perm = out_axes + list(axes)
        cs = contiguous_strides(in_shape)
        domain = [in_shape[d] for d in perm]
        n_out = len(out_axes)
        first = View(tuple(domain), tuple(cs[d] for d in perm), 0)
        reduces = []
        for red in (r.node for r in [group.reduce, *group.siblings]):
            op, (src, src_view) = red.arg[0], red.srcs[0]
            prologue = b.build(src, extend((first,), src_view), "full")
            reduces.append(Reduce(op, prologue, REDUCTIONS[op].acc_dtype(src.dtype), red.dtype))
        reduce, siblings = reduces[0], tuple(reduces[1:])
    else:
        domain, n_out, reduce = list(root.node.shape), len(root.node.shape), None
    space = "out" if reduce else "full"
    parts = root.node.arg[2] if root.node.op == "reduce" and len(root.node.arg) > 2 else ()
    if group.kind != "scatter":
        out_shape = tuple(domain[:n_out])
    # (dtype, value, position, index in outputs, (kernel output it follows, delta) or None)
    if parts:  # the root is the reduction: one output per part, interleaved on its last axis
        step = tuple(len(parts) * s for s in contiguous_strides(out_shape))
        specs = [(root.dtype, Reduced(root.dtype, p), None, 0, (0, i) if i else None)
                 for i, p in enumerate(parts)]
        out_views = [View(out_shape, step, i) for i in range(len(parts))]
    else:
        if group.kind != "scatter":
            epilogue = b.build(root, (View.contiguous(out_shape),), space)
            out_views = [View.contiguous(out_shape)]
        specs = [(root.dtype, epilogue, pos, 0, None)]
    for n, buf in enumerate(group.extra, 1):  # each read of it, written where it is read
        paths = sorted((p for bid, p, sp in b.memo if bid == id(buf) and sp == space),
                       key=lambda p: p[0].offset)
        if id(buf) in b.reduced or not paths:  # a sibling reduction, or the root of a
            paths = [(View.contiguous(out_shape),)]  # kernel merged in: written whole,
            b.build(buf, paths[0], space)  # in storage order
        lead = len(specs)
        for i, p in enumerate(paths):
            follow = (lead, p[0].offset - paths[0][0].offset) if i else None
            specs.append((buf.dtype, b.memo[(id(buf), p, space)], None, n, follow))
            out_views.append(p[0])
    space_shape = {"full": tuple(domain), "out": tuple(domain[:n_out])}
    indirect = [p is None for _, _, p in b.inputs]
    b.inputs = [(buf, sp, p if p is not None else
                 (View(space_shape[sp], (0,) * len(space_shape[sp]), 0),))
                for buf, sp, p in b.inputs]  # indirect reads use no view

    if n_out == 0:  # kernels always have at least one out axis
        domain, n_out = [1] + domain, 1
        b.inputs = [(buf, sp, (View((1,) + p[0].shape, (0,) + p[0].strides, p[0].offset),) + p[1:]
                     if sp == "full" else (View((1,), (0,), p[0].offset),) + p[1:])
                    for buf, sp, p in b.inputs]
        out_views = [View((1,), (0,), v.offset) for v in out_views]
    full_strides = [list(p[0].strides) for _, sp, p in b.inputs if sp == "full"]
    out_strides = [list(p[0].strides) for _, sp, p in b.inputs if sp == "out"]
    out_strides += [list(v.strides) for v in out_views]
    shape, n_out = _collapse(domain, n_out, full_strides, out_strides)
    full_it, out_it = iter(full_strides), iter(out_strides)
    inputs, launch_views, bufs = [], [], []
    for i, (buf, sp, p) in enumerate(b.inputs):
        strides = next(full_it) if sp == "full" else next(out_it)
        rank = len(shape) if sp == "full" else n_out
        first = View(tuple(shape[:rank]), tuple(strides), p[0].offset)
        iota = not indirect[i] and buf.pending and buf.node.op == "iota"  # gathers need memory
        out_inner = 0 if reduce and sp == "full" and strides[n_out - 1] == 0 else None
        inputs.append(Input(buf.dtype, sp, tuple(v.ndim for v in p[1:]), _inner(strides), iota,
                            indirect[i], out_inner))
        launch_views.append([first, *p[1:]])
        bufs.append(None if iota else buf)
    outputs, out_launch = [], []
    for (dtype, value, at, _, follow), v in zip(specs, out_views):
        strides = next(out_it)
        follows, delta = follow if follow else (None, 0)
        outputs.append(Output(dtype, value, _inner(strides), at, follows, delta))
        out_launch.append(View(tuple(shape[:n_out]), tuple(strides), v.offset))
    kernel = Kernel(len(shape), len(shape) - n_out, tuple(inputs),
                    tuple(d for d, _ in b.scalars), reduce, tuple(outputs), siblings)
    launch = Launch(tuple(shape), launch_views, out_launch, [v for _, v in b.scalars])
    ops = _op_names(group)
    label = "_".join(dict.fromkeys(o.split("@")[0] for o in ops))
    if len(label) > 40:  # cut at an op boundary
        label = label[:label.rfind("_", 0, 40)] + "_etc"
    kind = "s" if base is not None else "r" if reduce else "e"
    step = Step(f"{kind}{name_index}_{label}", group, [root, *group.extra], bufs, kernel, launch,
                ops, base, tuple(s[3] for s in specs), tuple(b.params))
    if group.core is not None:  # runs with a BLAS matmul, panel by panel (matmul_fusion)
        core = group.core
        step.a_prologue = lower(core.a_prologue, name_index) if core.a_prologue else None
        step.b_prologue = lower(core.b_prologue, name_index) if core.b_prologue else None
        step.core_input = next(i for i, (buf, _, _) in enumerate(b.inputs) if buf is core.mm)
        pro = tuple(op for p in (step.a_prologue, step.b_prologue) if p for op in p.ops)
        step.ops = pro + (f"matmul@{core.mm.node.where}",) + ops
        step.name = f"m{name_index}_matmul_{label}"
    return step
