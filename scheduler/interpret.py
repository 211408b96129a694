"""Run a Kernel with NumPy: the reference semantics of the kernel IR.

Used for constant folding, as the `numpy` fallback backend, and by tests
as the oracle every compiled backend is compared against. Slow on purpose:
it materializes index arrays for the whole domain.
"""
from __future__ import annotations

import math

import numpy as np

from .kernel_ir import Cast, Expr, Gather, Kernel, Launch, Load, Op, Reduced, Scalar, postorder
from .ops import ELEMENTWISE, REDUCTIONS, logsumexp_part
from .view import View


def positions(first: View, chain: list[View], shape: tuple[int, ...]) -> np.ndarray:
    """Element position of each index of `shape` through a view chain."""
    pos = np.full(shape, first.offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(shape, first.strides)):
        if s:
            pos = pos + np.arange(n, dtype=np.int64).reshape(
                (n,) + (1,) * (len(shape) - d - 1)) * s
    for v in chain:
        digits = np.unravel_index(pos, v.shape) if v.shape else ()
        nxt = np.full(pos.shape, v.offset, dtype=np.int64)
        for dig, s in zip(digits, v.strides):
            nxt = nxt + dig * s
        pos = nxt
    return pos


def _evaluate(roots: list[Expr], leaf) -> dict[int, np.ndarray]:
    values: dict[int, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for e in postorder(roots):
            if isinstance(e, Op):
                args = [values[id(a)] for a in e.args]
                r = ELEMENTWISE[e.name].numpy(*args)
            elif isinstance(e, Cast):
                r = values[id(e.x)].astype(e.dtype.np)
            elif isinstance(e, Gather):
                r = leaf(e)[values[id(e.pos)]]
            else:
                r = leaf(e)
            values[id(e)] = np.asarray(r).astype(e.dtype.np, copy=False)
    return values


def _reduce(op: str, x: np.ndarray, acc, n_out_shape, part: str) -> np.ndarray:
    extent = math.prod(x.shape[len(n_out_shape):])
    flat = x.reshape(tuple(n_out_shape) + (extent,))
    red = REDUCTIONS[op]
    if part:  # only logsumexp has parts (ops.Reduction.parts)
        return logsumexp_part(part, flat, axis=-1)
    if op in ("sum", "prod"):
        return red.numpy(flat, axis=-1, dtype=acc.np)
    return red.numpy(flat, axis=-1)


def run(kernel: Kernel, launch: Launch, inputs: list[np.ndarray | None],
        outputs: list[np.ndarray]) -> None:
    """Evaluate `kernel`; inputs/outputs are flat 1-D arrays (None for iota)."""
    shape = tuple(launch.shape)
    out_shape = shape[: kernel.n_out]
    loaded: dict[tuple[int, str], np.ndarray] = {}

    def load(i: int, space: str) -> np.ndarray:
        if (i, space) not in loaded:
            views = launch.inputs[i]
            sp = shape if space == "full" else out_shape
            pos = positions(views[0], views[1:], sp)
            loaded[(i, space)] = pos if kernel.inputs[i].iota else inputs[i][pos]
        return loaded[(i, space)]

    reduced: dict[tuple[int, str], np.ndarray] = {}  # by (index, part)
    xs = []  # each reduction's elements over the whole domain

    def leaf_full(e: Expr):
        if isinstance(e, Gather):
            return inputs[e.input]
        if isinstance(e, Load):
            return load(e.input, "full")
        if isinstance(e, Scalar):
            return np.array(launch.scalars[e.slot], dtype=e.dtype.np)
        raise ValueError(f"{e} is not allowed in a reduction prologue")

    if kernel.reductions:
        values = _evaluate([r.expr for r in kernel.reductions], leaf_full)
        for r in kernel.reductions:
            xs.append(np.broadcast_to(values[id(r.expr)], shape))
            if xs[-1].size == 0 and math.prod(out_shape) and REDUCTIONS[r.op].identity is None:
                raise ValueError(f"zero-size reduction with {r.op}, which has no identity")

    def leaf_out(e: Expr):
        if isinstance(e, Gather):
            return inputs[e.input]
        if isinstance(e, Load):
            return load(e.input, kernel.inputs[e.input].space)
        if isinstance(e, Scalar):
            return np.array(launch.scalars[e.slot], dtype=e.dtype.np)
        if isinstance(e, Reduced):
            key = (e.index, e.part)
            if key not in reduced:
                r = kernel.reductions[e.index]
                reduced[key] = np.asarray(_reduce(r.op, xs[e.index], r.acc, out_shape, e.part))
            return reduced[key]
        raise TypeError(e)

    roots = [o.expr for o in kernel.outputs] + [o.pos for o in kernel.outputs if o.pos is not None]
    values = _evaluate(roots, leaf_out)
    for o, view, dst in zip(kernel.outputs, launch.outputs, outputs):
        if math.prod(out_shape) == 0:
            continue
        v = np.broadcast_to(values[id(o.expr)], out_shape).astype(o.dtype.np)
        if o.pos is None:
            dst[positions(view, [], out_shape)] = v
        else:  # C order, so the last of duplicate positions wins, as in NumPy
            dst[np.broadcast_to(values[id(o.pos)], out_shape).reshape(-1)] = v.reshape(-1)
