"""Group pending nodes into kernels by explicit rules.

One pass over the graph from consumers to producers. Each node either
joins the kernel of its consumers (it is inlined, so its result never
touches memory) or becomes the output of a kernel of its own; every such
break has a reason, which `lazy.explain` shows and docs/fusion.md lists:

- "requested": the sync asked for it (a live tensor or an explicit target);
- "read by N kernels": its consumers ended up in different kernels;
- "extern": matmul runs as its own BLAS kernel, and a device transfer as a
  copy; what they read must be in memory;
- "one reduction per kernel": a reduction feeding another reduction;
- "reduction read through a view": a consumer reads a reduction's result
  broadcast or permuted, which needs the whole result first;
- "epilogue reads through a view": same for an elementwise value computed
  after the reduction;
- "kernel op cap": the kernel already holds config.max_kernel_ops ops;
- "write": a scatter (setitem, in-place op) makes a new version of a
  storage, which is always written to memory;
- "base of a write": the version a scatter writes into must be in memory;
- "read at computed positions": what advanced indexing gathers from.

Constants and `iota` (arange) are never materialized for fusion's sake:
every kernel that reads one computes it inline.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .config import config
from .graph import Buffer
from .view import View

@dataclass
class Group:
    root: Buffer                 # the buffer this kernel writes
    why: str                     # why root is materialized
    kind: str = "elementwise"    # "elementwise", "reduce", "scatter" or "extern"
    members: list[Buffer] = field(default_factory=list)  # inlined, root included
    reduce: Buffer | None = None
    side: dict[int, str] = field(default_factory=dict)   # reduce kernels: "full" or "out"
    trivial: bool = True         # every member is read in storage order (epilogue-ready)


def is_trivial(view: View, buf: Buffer) -> bool:
    """A view that reads `buf` whole, in storage order: a pure reshape."""
    return view.size == buf.size and view.offset == 0 and view.is_contiguous()


def is_free(buf: Buffer) -> bool:
    """Constants and aranges are recomputed by every kernel that reads them."""
    return buf.node.op in ("const", "iota")


def reason_to_materialize(buf: Buffer, users: list, group_of: dict, requested: set) -> str | None:
    if id(buf) in requested:
        return "requested"
    if buf.node.op == "scatter":
        return "write"
    for u, _, i in users:
        if i == 0 and u.node.op == "scatter":
            return "base of a write"
        if i == 0 and u.node.op == "gather":
            return "read at computed positions"
    groups = {id(group_of[id(u)]) for u, _, _ in users if id(u) in group_of}
    if any(group_of[id(u)].kind == "extern" for u, _, _ in users if id(u) in group_of):
        return "extern"
    if is_free(buf):
        return None
    if len(groups) > 1:
        return f"read by {len(groups)} kernels"
    return None


def can_fuse(buf: Buffer, group: Group, users: list) -> str | None:
    """None if `buf` can be inlined into `group` (all its readers are there), else why not."""
    if group.kind == "extern" or buf.node.op in ("matmul", "to_device"):
        return "extern"
    if len(group.members) >= config.max_kernel_ops:
        return "kernel op cap"
    if buf.node.op == "reduce":
        if group.kind == "reduce":
            return "one reduction per kernel"
        if group.kind == "scatter" or not group.trivial or \
                not all(is_trivial(v, buf) for _, v, _ in users):
            return "reduction read through a view"
        return None
    if group.kind == "reduce":
        sides = {"full" if u is group.reduce else group.side[id(u)] for u, _, _ in users}
        if len(sides) > 1:
            return "read before and after the reduction"
        if sides == {"out"} and not all(is_trivial(v, buf) for _, v, _ in users):
            return "epilogue reads through a view"
    return None


def join(buf: Buffer, group: Group, users: list) -> None:
    group.members.append(buf)
    if buf.node.op == "reduce":
        group.kind, group.reduce = "reduce", buf
        for m in group.members[:-1]:
            group.side[id(m)] = "out"
        group.side[id(buf)] = "out"
    elif group.kind == "reduce":
        group.side[id(buf)] = "full" if any(u is group.reduce for u, _, _ in users) \
            else group.side[id(users[0][0])]
    elif not all(is_trivial(v, buf) for _, v, _ in users):
        group.trivial = False


def fuse(order: list[Buffer], requested: set[int]) -> list[Group]:
    """Kernels in an order that runs producers first."""
    users: dict[int, list] = defaultdict(list)  # id -> [(reader, view, src index)]
    for buf in order:
        for i, (src, view) in enumerate(buf.node.srcs):
            if src.pending:
                users[id(src)].append((buf, view, i))
    group_of: dict[int, Group] = {}
    groups: list[Group] = []
    for buf in reversed(order):
        readers = users.get(id(buf), [])
        why = reason_to_materialize(buf, readers, group_of, requested)
        if why is None and is_free(buf):
            continue  # inlined wherever it is read
        if why is None:
            group = group_of[id(readers[0][0])]
            why = can_fuse(buf, group, readers)
            if why is None:
                join(buf, group, readers)
                group_of[id(buf)] = group
                continue
        kind = {"matmul": "extern", "to_device": "extern",
                "scatter": "scatter"}.get(buf.node.op, "elementwise")
        group = Group(root=buf, why=why, kind=kind)
        if group.kind != "extern":
            group.members.append(buf)
            if buf.node.op == "reduce":
                group.kind, group.reduce = "reduce", buf
                group.side[id(buf)] = "out"
        group_of[id(buf)] = group
        groups.append(group)
    groups.reverse()
    for g in groups:
        g.members.reverse()  # producers first
    return groups
