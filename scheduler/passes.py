"""Graph passes run at every sync before fusion.

All walks are iterative: a chain of 100k pending ops must not hit
Python's recursion limit.
"""
from __future__ import annotations

import numpy as np

from .graph import Buffer, Node, const_key
from .ops import ELEMENTWISE


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


def _key(node: Node) -> tuple:
    if node.op == "param":  # equal today, maybe not when the plan is reused
        return ("param", id(node))
    arg = const_key(node.arg) if node.op == "const" else node.arg
    return (node.op, arg, node.dtype, node.shape,
            tuple((id(b), v) for b, v in node.srcs))


def merge_duplicates(order: list[Buffer]) -> tuple[list[Buffer], dict[int, Buffer]]:
    """Common-subexpression elimination over the gathered graph.

    Returns the surviving buffers and a map from each merged duplicate's id
    to the buffer that computes it; consumers are rewired in place.
    """
    seen: dict[tuple, Buffer] = {}
    alias: dict[int, Buffer] = {}
    kept: list[Buffer] = []
    for buf in order:
        node = buf.node
        if any(id(b) in alias for b, _ in node.srcs):
            node.srcs = tuple((alias.get(id(b), b), v) for b, v in node.srcs)
            for b, _ in node.srcs:
                b.add_reader(node)
        first = seen.setdefault(_key(node), buf)
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
        with np.errstate(all="ignore"):
            if node.op == "cast":
                value = values[0].astype(node.dtype.np)
            else:
                value = np.asarray(ELEMENTWISE[node.op].numpy(*values)).astype(node.dtype.np)
        node.op, node.srcs, node.arg = "const", (), value.item()
        folded += 1
    return folded
