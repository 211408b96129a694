"""Graph passes run at every sync before fusion.

All walks are iterative: a chain of 100k pending ops must not hit
Python's recursion limit.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from .dtypes import DType
from .graph import Buffer, Node, const_key
from .ops import ELEMENTWISE
from .view import View


def gather(targets: list[Buffer]) -> list[Buffer]:
    """Pending buffers reachable from `targets`, producers before consumers.

    Only what the targets need is gathered: nodes nothing asked for are
    dead and never scheduled.
    """
    order: list[Buffer] = []
    state: dict[int, int] = {}  # 1: on stack, 2: done
    for t in targets:
        if not t.pending or state.get(id(t)) == 2:
            continue
        stack = [(t, False)]
        while stack:
            buf, expanded = stack.pop()
            if expanded:
                if state.get(id(buf)) != 2:
                    state[id(buf)] = 2
                    order.append(buf)
                continue
            if state.get(id(buf)):
                continue
            state[id(buf)] = 1
            stack.append((buf, True))
            for src, _ in buf.node.srcs:
                if src.pending and not state.get(id(src)):
                    stack.append((src, False))
    return order


def _key(buf: Buffer) -> tuple:
    """Equal for buffers that compute the same values on the same device
    (equal constants on the CPU and on a GPU are two buffers)."""
    node = buf.node
    if node.op == "param":  # equal today, maybe not when the plan is reused
        return ("param", id(node))
    arg = const_key(node.arg) if node.op == "const" else node.arg
    return (node.op, arg, node.dtype, node.shape, buf.device,
            tuple((id(b), v) for b, v in node.srcs))


def merge_duplicates(order: list[Buffer]) -> tuple[list[Buffer], dict[int, Buffer]]:
    """Common-subexpression elimination over the gathered graph.

    Returns the surviving buffers and a map from each merged duplicate's id
    to the buffer that computes it; consumers are rewired in place.

    The old version of a write (a scatter's first source) is never merged
    either way: the write may reuse its memory in place, which must not be
    the memory of an equal-valued tensor (`b = zeros(3); c = zeros(3);
    c += 1` would change b).
    """
    written = {id(buf.node.srcs[0][0]) for buf in order if buf.node.op == "scatter"}
    seen: dict[tuple, Buffer] = {}
    alias: dict[int, Buffer] = {}
    kept: list[Buffer] = []
    for buf in order:
        node = buf.node
        if any(id(b) in alias for b, _ in node.srcs):
            node.srcs = tuple((alias.get(id(b), b), v) for b, v in node.srcs)
            for b, _ in node.srcs:
                b.add_reader(node)
        if id(buf) in written:
            kept.append(buf)
            continue
        first = seen.setdefault(_key(buf), buf)
        if first is buf:
            kept.append(buf)
        else:
            alias[id(buf)] = first
    return kept, alias


def fold_constants(order: list[Buffer]) -> int:
    """Turn elementwise nodes whose inputs are all constants into constants."""
    folded = 0
    for buf in order:
        node = buf.node
        if not node.srcs or node.op not in ELEMENTWISE and node.op != "cast":
            continue
        if not all(b.pending and b.node.op == "const" for b, _ in node.srcs):
            continue
        values = [np.asarray(b.node.arg, dtype=b.dtype.np) for b, _ in node.srcs]
        try:
            with np.errstate(all="ignore"):
                if node.op == "cast":
                    value = values[0].astype(node.dtype.np)
                else:
                    value = np.asarray(ELEMENTWISE[node.op].numpy(*values)).astype(node.dtype.np)
        except (ArithmeticError, ValueError):
            continue  # folding is only a shortcut: the kernel computes what NumPy refuses
        node.op, node.srcs, node.arg = "const", (), value.item()
        folded += 1
    return folded


# -- rewrite: the softmax idiom --------------------------------------------------------
def _plain(view: View, buf: Buffer) -> bool:
    """`view` reads pending `buf` whole, in its own shape and storage order."""
    return view.shape == buf.node.shape and view.offset == 0 and view.is_contiguous()


def _keepdims_broadcast(view: View, red: Buffer, shape: tuple[int, ...], axes) -> bool:
    """`view` reads the keepdims reduction `red` broadcast over `shape` (`x - m`)."""
    kshape = tuple(1 if d in axes else n for d, n in enumerate(shape))
    if red.node.shape != kshape or view.shape != shape or view.offset != 0:
        return False
    cs = View.contiguous(kshape).strides
    return all(n == 1 or s == (0 if d in axes else cs[d])
               for d, (n, s) in enumerate(zip(shape, view.strides)))


def _softmax_parts(y: Buffer, reads: Counter, requested: set[int]) -> tuple | None:
    """(x, x's view, axes, max, sub, exp, sum) when pending `y` is
    `e / e.sum(axes, keepdims)` with `e = exp(x - x.max(axes, keepdims))` and
    nothing but `y` needs `e`, the max or the sum; else None."""
    ny = y.node
    if ny.op != "truediv" or not ny.dtype.is_float:
        return None
    (e, ve), (s, vs) = ny.srcs
    if not (e.pending and s.pending and s.node.op == "reduce" and s.node.arg[0] == "sum"):
        return None
    axes, shape = s.node.arg[1], ny.shape
    if e.node.op != "exp" or s.node.srcs[0][0] is not e or not _plain(s.node.srcs[0][1], e) \
            or not _plain(ve, e) or not _keepdims_broadcast(vs, s, shape, axes):
        return None
    (d, vd), = e.node.srcs
    if not (d.pending and d.node.op == "sub" and _plain(vd, d)):
        return None
    (x, vx), (m, vm) = d.node.srcs
    if not (m.pending and m.node.op == "reduce" and m.node.arg == ("max", axes)) \
            or m.node.srcs[0][0] is not x or m.node.srcs[0][1] != vx \
            or not _keepdims_broadcast(vm, m, shape, axes):
        return None
    inner = (m, d, e, s)
    if any(b.dtype != ny.dtype for b in (x, *inner)) or any(id(b) in requested for b in inner):
        return None
    if (reads[id(m)], reads[id(d)], reads[id(e)], reads[id(s)]) != (1, 1, 2, 1):
        return None
    return x, vx, axes, *inner


def _new(op: str, srcs: tuple, arg, dtype: DType, shape: tuple[int, ...], where: str,
         device: str) -> Buffer:
    return Buffer.pending_from(Node(op, srcs, arg, dtype, shape, where), device)


LSE_PARTS = ("max", "log_sum")  # the logsumexp parts a softmax reads (ops.logsumexp_part)


def lse_part_view(shape: tuple[int, ...], kshape: tuple[int, ...], part: int) -> View:
    """How `x - m` over `shape` reads part `part` of a keepdims logsumexp
    with LSE_PARTS (a buffer of shape kshape + (2,), parts interleaved),
    broadcast along the reduced axes."""
    cs = View.contiguous(kshape).strides
    n = len(LSE_PARTS)
    return View(shape, tuple(0 if k == 1 else n * c for k, c in zip(kshape, cs)), part)


def _log_softmax_nodes(x: Buffer, vx: View, axes, m: Buffer, d: Buffer) -> Buffer:
    """x - lse, lse = logsumexp(x, axes), as (x - max) - log_sum from one
    pass that gives both parts (NaN where the max is not finite: what
    `e / sum(e)` gives for rows holding +inf or only -inf).

    Not x - (max + log_sum): once |max| is about 1e16 (float32's min, a
    fully masked attention row, included) the sum rounds log_sum away, and
    rounded to float32 it puts |lse| * eps into every exponent. Both parts
    are in x's dtype; the max is exact there.
    """
    dev, dtype, kshape, shape = m.device, x.dtype, m.node.shape, d.node.shape
    pair = _new("reduce", ((x, vx),), ("logsumexp", axes, LSE_PARTS), dtype,
                kshape + (len(LSE_PARTS),), m.node.where, dev)
    x_m = _new("sub", ((x, vx), (pair, lse_part_view(shape, kshape, 0))), None, dtype, shape,
               d.node.where, dev)
    return _new("sub", ((x_m, View.contiguous(shape)), (pair, lse_part_view(shape, kshape, 1))),
                None, dtype, shape, d.node.where, dev)


def rewrite_softmax(order: list[Buffer], requested: set[int]) -> int:
    """Rewrite `e / e.sum(axes, keepdims)`, `e = exp(x - x.max(axes, keepdims))`,
    into `exp((x - max) - log_sum)`, both parts of one online logsumexp:
    two passes over x (the reduction, one elementwise kernel) instead of
    four, and `e` is never
    written. Only the division's node changes; the max, `e` and the sum are
    left as they were (a tensor still holding one of them computes it later),
    and the rewrite is skipped when the sync asks for one of them or another
    node reads it. Returns the number of rewrites; the caller re-gathers.
    """
    if not any(buf.node.op == "truediv" for buf in order):
        return 0  # the common case, cheap: this runs on every sync, cache hits included
    reads = Counter(id(b) for buf in order for b, _ in buf.node.srcs)
    done = 0
    for y in order:
        parts = _softmax_parts(y, reads, requested)
        if parts is None:
            continue
        x, vx, axes, m, d, _e, _s = parts
        z = _log_softmax_nodes(x, vx, axes, m, d)
        shape = y.node.shape
        y.node = Node("exp", ((z, View.contiguous(shape)),), None, y.dtype, shape, y.node.where)
        done += 1
    return done
