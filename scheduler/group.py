"""A kernel in the making (`Group`), and what every fusion rule asks of a node.

Kept apart from fusion.py's walk so that the rules in other modules
(siblings.py, matmul_fusion.py) and the lowering can share them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .graph import Buffer
from .view import Path, View


@dataclass
class Group:
    root: Buffer                 # the buffer this kernel writes
    why: str                     # why root is materialized
    kind: str = "elementwise"    # "elementwise", "reduce", "scatter" or "extern"
    members: list[Buffer] = field(default_factory=list)  # inlined, root included
    reduce: Buffer | None = None
    siblings: list[Buffer] = field(default_factory=list)  # more reductions in its loop
    side: dict[int, str] = field(default_factory=dict)   # reduce kernels: "full" or "out"
    trivial: bool = True         # every member is read in storage order (epilogue-ready)
    extra: list[Buffer] = field(default_factory=list)  # requested members, also written
    core: object = None          # a MatmulCore this epilogue runs with (matmul_fusion)
    paths: dict[int, tuple[Path, ...]] = field(default_factory=dict)  # member -> where evaluated
    ops: int = 0                 # ops the kernel computes: paths summed over members
    recomputed: list[str] = field(default_factory=list)  # `recompute`'s notes, for explain


def is_trivial(view: View, buf: Buffer) -> bool:
    """A view that reads `buf` whole, in storage order: a pure reshape."""
    return view.size == buf.size and view.offset == 0 and view.is_contiguous()


def reads_after_loop(group: Group, users: list) -> bool:
    """Do `users`, members of reduction kernel `group`, all run after its
    loop (in the epilogue), none being a reduction itself?"""
    return not any(u.node.op == "reduce" or group.side.get(id(u)) == "full"
                   for u, _, _ in users)


def reads_in_order(group: Group, users: list, buf: Buffer) -> bool:
    """Do `users` read `buf` whole in storage order, in a kernel that reads
    everything so (what an epilogue reading a reduction's result needs)?"""
    return group.trivial and all(is_trivial(v, buf) for _, v, _ in users)


def is_free(buf: Buffer) -> bool:
    """Constants, run-time scalars and aranges are recomputed by every kernel
    that reads them."""
    return buf.node.op in ("const", "iota", "param")


def groups_of(u: Buffer, group_of: dict, copies: dict) -> list[Group]:
    """The kernels that compute `u`: one, or each that recomputes it."""
    if id(u) in copies:
        return copies[id(u)]
    return [group_of[id(u)]] if id(u) in group_of else []
