"""Group pending nodes into kernels by explicit rules.

One pass over the graph from consumers to producers. Each node either
joins the kernel of its consumers (it is inlined, so its result never
touches memory) or becomes the output of a kernel of its own; every such
break has a reason, which `lazy.explain` shows and docs/fusion.md lists:

- "requested": the sync asked for it (a live tensor or an explicit target);
- "read by N kernels": its consumers ended up in different kernels;
- "extern": matmul runs as its own BLAS kernel, a device transfer as a
  copy, and cumsum/cumprod as NumPy's (CuPy's); what they read must be in
  memory;
- "one reduction per kernel": a reduction feeding another reduction;
- "reductions over different domains", "{op} shares no loop", "reduction
  cap": why a reduction cannot run beside another in one loop (below);
- "reduction read through a view": a consumer reads a reduction's result
  broadcast or permuted, which needs the whole result first;
- "reduction parts": a reduction that writes several parts of its
  accumulator (the softmax's max and log-sum, interleaved) is a kernel of
  its own, read through views;
- "epilogue reads through a view": same for an elementwise value computed
  after the reduction;
- "kernel op cap": the kernel would compute more than config.max_kernel_ops
  ops. An op counts once per distinct view path it is evaluated along
  (`y[::-1] + y.T.reshape(...)` evaluates `y`'s expression twice), so
  chains that read each step through several views are cut before the
  expression, and its compile time, grows exponentially;
- "write": a scatter (setitem, in-place op) makes a new version of a
  storage, which is always written to memory;
- "base of a write": the version a scatter writes into must be in memory;
- "read at computed positions": what advanced indexing gathers from;
- "random, read through N views": a `rand`/`randn` value that one
  kernel would read at N different positions per loop element
  (`X[:, 0]` and `X[:, 1]`) would run N Philox streams side by side in
  every vector lane; that measured 1.2-2.5x slower than writing the
  numbers once and loading them (docs/fusion.md, "Random numbers").

A requested buffer whose readers all sit in one elementwise kernel does
not get a kernel of its own when that kernel's reads of it tile it (each
element read exactly once, through views that strides can express): it
becomes an extra output of that kernel, written where it is computed
("requested: extra output"). So `X = exp(A); y = X[:, 0]**2 +
X[:, 1]**3` is one kernel that writes both X and y (with `randn(n, 2)` in
place of `exp(A)`, the random rule above applies first).

Reductions over the same domain share one loop when neither needs the
other (siblings.py).

Constants, `param` scalars and `iota` (arange) are never materialized for fusion's sake:
every kernel that reads one computes it inline.

A value read by several kernels is recomputed in each of them instead of
written once (`recompute`) when it and the pending values it is made of
are a few cheap elementwise ops that nothing else reads, and reading
their inputs again in each kernel moves fewer bytes than writing the
value and reading it back: `y = a * b; y - y.mean(1, keepdims=True)`
reads a and b twice and writes no `y`. A pending reduction it reads is a
leaf, written by its own kernel and read by each: `(x - x.mean(1)) /
x.std(1)` reads x three times and writes no `x - mean`. `lazy.explain`
lists such ops under each kernel that recomputes them.

An expensive value computed from a reduction and read through a broadcast
(`x / x.std(0)`'s square root) is computed once, by the reduction's kernel,
not at every element of its reader (`computed_per_element`).
"""
from __future__ import annotations

from collections import defaultdict

from .config import config
from .graph import Buffer
from .group import Group, groups_of, is_free, is_trivial, reads_after_loop, reads_in_order
from .ops import ELEMENTWISE, EXTERN_OPS, RANDOM_OPS
from .siblings import Reductions, merge_siblings, sibling_error, sibling_group
from .view import Path, View, extend

MAX_PATHS = 16  # reads of one buffer inside a kernel that an extra output may tile
RECOMPUTE_NODES = 8  # most pending nodes a value is recomputed from, in each reader
# Ops cheap enough to compute again in each reader: one or two vector
# instructions. Not exp and the like: `t = exp(x); t.sum(); t.max()` of 16.8M
# float32 took 11.7-12.2 ms recomputing exp in both reductions against
# 10.2-10.7 writing t (64 MB, which stays in this host's L3) once (measured
# before those two became one kernel: sibling reductions).
RECOMPUTE_OPS = frozenset({"abs", "add", "and", "cast", "ceil", "copy", "copysign", "eq",
                           "floor", "ge", "gt", "invert", "le", "lt", "maximum", "minimum",
                           "mul", "ne", "neg", "or", "rint", "signbit", "sub", "trunc",
                           "where", "xor"})
_RANDOM = frozenset(op for by_dtype in RANDOM_OPS.values() for op in by_dtype.values())
# Evaluations per element from which an op outside RECOMPUTE_OPS read
# through a broadcast is computed once instead (`computed_per_element`)
BROADCAST_TIMES = 8

def reason_to_materialize(buf: Buffer, users: list, group_of: dict, requested: set,
                          copies: dict) -> str | None:
    if id(buf) in requested:
        return "requested"
    if buf.node.op == "scatter":
        return "write"
    for u, _, i in users:
        if i == 0 and u.node.op == "scatter":
            return "base of a write"
        if i == 0 and u.node.op == "gather":
            return "read at computed positions"
    groups = {id(g): g for u, _, _ in users for g in groups_of(u, group_of, copies)}
    if any(g.kind == "extern" for g in groups.values()):
        return "extern"
    if is_free(buf):
        return None
    if len(groups) > 1:
        return f"read by {len(groups)} kernels"
    return None


def start_paths(buf: Buffer) -> tuple[Path, ...]:
    """Where a kernel rooted at `buf` starts evaluating its sources: a
    reduction's over its input's domain, a write's over the written values'."""
    node = buf.node
    if node.op == "reduce":
        return ((View.contiguous(node.srcs[0][1].shape),),)
    if node.op == "scatter":
        return ((View.contiguous(node.srcs[1][1].shape),),)
    return ((View.contiguous(node.shape),),)


def paths_through(buf: Buffer, group: Group, readers: list) -> tuple[Path, ...]:
    """The distinct paths along which `group`'s loop would evaluate `buf`
    (lowering builds one expression per path); all readers are members."""
    if buf.node.op == "reduce":
        return start_paths(buf)  # its sources run over its input's domain
    return read_paths(buf, group, readers)


def read_paths(buf: Buffer, group: Group, readers: list) -> tuple[Path, ...]:
    """The distinct paths along which `group`'s loop reads `buf`."""
    found: dict[Path, None] = {}
    for u, view, _ in readers:
        for p in group.paths[id(u)]:
            found[extend(p, view)] = None
    return tuple(found)


def can_fuse(buf: Buffer, group: Group, users: list, paths: tuple[Path, ...]) -> str | None:
    """None if `buf` can be inlined into `group` (all its readers are there),
    evaluated along `paths` (paths_through), else why not."""
    if group.kind == "extern" or buf.node.op in EXTERN_OPS:
        return "extern"
    if group.ops + len(paths) > config.max_kernel_ops:
        return "kernel op cap"
    if buf.node.op == "reduce":
        if group.kind == "reduce" and not reads_after_loop(group, users):
            return "one reduction per kernel"
        if len(buf.node.arg) > 2:
            return "reduction parts"
        if group.kind == "scatter" or not reads_in_order(group, users, buf):
            return "reduction read through a view"
        return sibling_error(buf, group) if group.kind == "reduce" else None
    if group.kind == "reduce":
        sides = {"full" if u.node.op == "reduce" else group.side[id(u)] for u, _, _ in users}
        if len(sides) > 1:
            return "read before and after the reduction"
        if sides == {"out"} and not all(is_trivial(v, buf) for _, v, _ in users):
            return "epilogue reads through a view"
    return None


def join(buf: Buffer, group: Group, users: list, paths: tuple[Path, ...]) -> None:
    group.paths[id(buf)] = paths
    group.ops += len(paths)
    group.members.append(buf)
    if buf.node.op == "reduce":
        if group.kind == "reduce":
            group.siblings.append(buf)
        else:
            group.kind, group.reduce = "reduce", buf
            for m in group.members[:-1]:
                group.side[id(m)] = "out"
        group.side[id(buf)] = "out"
    elif group.kind == "reduce":
        group.side[id(buf)] = "full" if any(u.node.op == "reduce" for u, _, _ in users) \
            else group.side[id(users[0][0])]
    elif not all(is_trivial(v, buf) for _, v, _ in users):
        group.trivial = False


def tiles(views: list[View], size: int) -> bool:
    """Do these same-shaped views together address 0..size-1 exactly once?

    Equal strides and evenly spaced offsets stack into one view with an
    extra axis; that view, with its reversed axes turned forward (`x[::-1]`
    walks the same elements), must be a permutation of a contiguous layout.
    """
    if size == 0 or len({v.strides for v in views}) != 1:
        return False
    views = sorted(views, key=lambda v: v.offset)
    shape, strides = list(views[0].shape), list(views[0].strides)
    if len(views) > 1:
        step = views[1].offset - views[0].offset
        if any(b.offset - a.offset != step for a, b in zip(views, views[1:])):
            return False
        shape.append(len(views))
        strides.append(step)
    start = views[0].offset + sum((n - 1) * s for s, n in zip(strides, shape) if s < 0)
    axes = sorted(((abs(s), n) for s, n in zip(strides, shape) if n != 1), reverse=True)
    expected = 1
    for s, n in reversed(axes):
        if s != expected:
            return False
        expected *= n
    return start == 0 and expected == size


def read_views(buf: Buffer, group: Group, readers: list) -> list[View] | None:
    """The views through which `group`'s loop reads `buf`, or None when a
    read needs chained views (strides cannot say it) or there are too many."""
    paths = read_paths(buf, group, readers)
    if len(paths) > MAX_PATHS or any(len(p) > 1 for p in paths):
        return None
    return [p[0] for p in paths]  # the same element read twice is written once


def random_read_twice(buf: Buffer, group: Group, readers: list) -> str | None:
    """Why a random op must not be computed inside `group`, or None.

    Each view a kernel reads it through is its own Philox stream per loop
    element, and two or more of them side by side overflow the vector
    registers (docs/fusion.md, "Random numbers"). CPU only: that is where
    it was measured; a GPU thread has several times the registers.
    """
    if buf.node.op not in _RANDOM or group.kind not in ("elementwise", "reduce") or \
            buf.device != "cpu":
        return None
    views = read_views(buf, group, readers)
    if views is not None and len(views) < 2:
        return None
    return f"random, read through {len(views) if views else 'chained'} views"


def computed_per_element(buf: Buffer, paths: tuple[Path, ...]) -> str | None:
    """Why an expensive value that a kernel would evaluate at every element
    of a broadcast (`x / x.std(0)`: a division and a square root per element
    of x, for one std per column) is better computed once, or None.

    Only for a value computed from a pending reduction, through a few
    elementwise ops: the reduction's kernel then takes it as an epilogue,
    so no kernel is added. Where the broadcast runs along rows, LLVM hoists
    the value out of the row loop already, and this changes nothing."""
    evaluations = sum(p[0].size for p in paths)
    if not _broadcast_expensive(buf, evaluations):
        return None
    times = evaluations // max(buf.size, 1)
    return f"{buf.node.op} read through a broadcast: computed once, not {times} times"


def _broadcast_expensive(buf: Buffer, evaluations: int) -> bool:
    """Is pending `buf` an expensive elementwise value computed from a
    reduction, evaluated at least BROADCAST_TIMES times per element where
    it is read (`evaluations` in all)?"""
    op = buf.node.op
    if op not in ELEMENTWISE or op in RECOMPUTE_OPS or op in _RANDOM:
        return False
    return evaluations >= BROADCAST_TIMES * buf.size and _from_reduction(buf)


def _from_reduction(buf: Buffer) -> bool:
    """Is `buf` computed from a pending reduction, through at most
    RECOMPUTE_NODES elementwise ops?"""
    stack, seen = [buf], {id(buf)}
    while stack and len(seen) <= RECOMPUTE_NODES:
        for src, _ in stack.pop().node.srcs:
            if not src.pending or is_free(src) or id(src) in seen:
                continue
            if src.node.op == "reduce":
                return True
            if src.node.op in ELEMENTWISE:
                seen.add(id(src))
                stack.append(src)
    return False


def extra_output_group(buf: Buffer, readers: list, group_of: dict, copies: dict
                       ) -> tuple[Group, tuple[Path, ...]] | None:
    """The kernel that can write requested `buf` as an extra output, and the
    paths it evaluates `buf` along; None if there is none. A reduction kernel
    only for a reduction its epilogue reads (a sibling: `y = x.sum(1) -
    x.max(1)` with the max kept)."""
    groups = {id(g) for u, _, _ in readers for g in groups_of(u, group_of, copies)}
    if not readers or len(groups) != 1 or is_free(buf) or buf.node.op == "scatter":
        return None
    group = group_of.get(id(readers[0][0]))
    takes = "elementwise", *(("reduce",) if buf.node.op == "reduce" else ())
    if group is None or group.kind not in takes or \
            any(i == 0 and u.node.op in ("scatter", "gather") for u, _, i in readers):
        return None
    paths = paths_through(buf, group, readers)
    if can_fuse(buf, group, readers, paths) is not None or \
            random_read_twice(buf, group, readers) is not None:
        return None
    views = read_views(buf, group, readers)
    return (group, paths) if views is not None and tiles(views, buf.size) else None


def recompute(buf: Buffer, users: dict, group_of: dict, copies: dict, requested: set,
              position: dict[int, int]) -> bool:
    """Evaluate `buf`, read by several kernels, inside each of them instead of
    writing it, together with the pending values only it reads; True if done.

    Only for a few (RECOMPUTE_NODES) cheap elementwise nodes
    (RECOMPUTE_OPS: no transcendental, division or random op), none
    requested or read by anything else, and only when it moves fewer bytes
    per element: each kernel reads the inputs it does not read already,
    against one kernel reading them all, writing `buf` and each reader
    reading it back. Every kernel must be able to take all of them
    (`can_fuse`); otherwise nothing changes.
    """
    nodes = _private_subtree(buf, users, requested)
    if nodes is None:
        return False
    targets: dict[int, tuple[Group, list]] = {}
    for r in users[id(buf)]:
        for g in groups_of(r[0], group_of, copies):
            targets.setdefault(id(g), (g, []))[1].append(r)
    if any(g.kind not in ("elementwise", "reduce") for g, _ in targets.values()):
        return False
    inside = {id(n) for n in nodes}
    leaves = {id(src): _per_element(src, buf) for n in nodes for src, _ in n.node.srcs
              if id(src) not in inside and not (src.pending and is_free(src))}
    write = sum(leaves.values()) + buf.dtype.itemsize * (len(targets) + 1)
    extra = 0.0
    for g, _ in targets.values():
        has = _realized_reads(g)
        extra += sum(n for i, n in leaves.items() if i not in has)
    if extra > write:
        return False
    nodes.sort(key=lambda n: -position[id(n)])  # readers first
    saved = [(g, dict(g.paths), g.ops, len(g.members), dict(g.side), g.trivial)
             for g, _ in targets.values()]
    for g, readers in targets.values():
        for n in nodes:
            rs = readers if n is buf else users[id(n)]
            paths = paths_through(n, g, rs)
            if can_fuse(n, g, rs, paths) is not None:
                for g2, paths2, ops, size, side, trivial in saved:  # undo every join
                    g2.paths, g2.ops, g2.side, g2.trivial = paths2, ops, side, trivial
                    del g2.members[size:]
                return False
            join(n, g, rs, paths)
    kernels = [g for g, _ in targets.values()]
    note = (f"{', '.join(f'{n.node.op}@{n.node.where}' for n in reversed(nodes))} "
            f"(read by {len(kernels)} kernels; recomputing reads {extra:.3g} B/element more, "
            f"writing it would move {write:.3g})")
    for g in kernels:
        g.recomputed.append(note)
    for n in nodes:
        copies[id(n)] = kernels
        group_of[id(n)] = kernels[0]
    return True


def _per_element(leaf: Buffer, buf: Buffer) -> float:
    """Bytes of `leaf` read per element of `buf`: a smaller one (a
    reduction's result, broadcast) is read once per element of its own."""
    return leaf.dtype.itemsize * min(1.0, leaf.size / max(buf.size, 1))


def _private_subtree(buf: Buffer, users: dict, requested: set) -> list[Buffer] | None:
    """`buf` and the pending nodes it is computed from, when they are a few
    RECOMPUTE_OPS and none but `buf` is requested or read from outside
    them; else None.

    The walk stops where a value is written by a kernel of its own: a
    pending reduction, or a mean's division of one read through a
    broadcast (`_broadcast_expensive`). Its (smaller) result is then read
    like an input."""
    nodes, seen, stack = [], {id(buf)}, [buf]
    while stack:
        b = stack.pop()
        if b.node.op not in RECOMPUTE_OPS:
            return None
        nodes.append(b)
        for src, _ in b.node.srcs:
            if src.pending and not is_free(src) and id(src) not in seen and \
                    src.node.op != "reduce" and not _broadcast_expensive(src, buf.size):
                seen.add(id(src))
                stack.append(src)
        if len(nodes) + len(stack) > RECOMPUTE_NODES:
            return None
    for n in nodes[1:]:
        if id(n) in requested or any(id(u) not in seen for u, _, _ in users[id(n)]):
            return None
    return nodes


def _realized_reads(g: Group) -> set[int]:
    """Ids of the buffers in memory that `g`'s members read so far."""
    return {id(src) for m in g.members for src, _ in m.node.srcs if not src.pending}


def fuse(order: list[Buffer], requested: set[int]) -> list[Group]:
    """Kernels in an order that runs producers first."""
    users: dict[int, list] = defaultdict(list)  # id -> [(reader, view, src index)]
    for buf in order:
        for i, (src, view) in enumerate(buf.node.srcs):
            if src.pending:
                users[id(src)].append((buf, view, i))
    position = {id(b): i for i, b in enumerate(order)}
    group_of: dict[int, Group] = {}
    copies: dict[int, list[Group]] = {}  # recomputed nodes -> the kernels computing them
    groups: list[Group] = []
    created: dict[int, int] = {}  # group id -> when it was made (made later, runs earlier)
    reds = Reductions()
    for buf in reversed(order):
        if id(buf) in copies:
            continue  # recomputed with a reader (`recompute`)
        readers = users.get(id(buf), [])
        why = reason_to_materialize(buf, readers, group_of, requested, copies)
        if why is not None and why.startswith("read by") and \
                recompute(buf, users, group_of, copies, requested, position):
            continue
        if why == "requested":
            found = extra_output_group(buf, readers, group_of, copies)
            if found is not None:
                group, paths = found
                join(buf, group, readers, paths)
                group.extra.append(buf)
                group_of[id(buf)] = group
                continue
        if why is None and is_free(buf):
            continue  # inlined wherever it is read
        if why is None:
            group = group_of[id(readers[0][0])]
            paths = paths_through(buf, group, readers)
            why = can_fuse(buf, group, readers, paths) or \
                random_read_twice(buf, group, readers) or computed_per_element(buf, paths)
            if why is None:
                join(buf, group, readers, paths)
                group_of[id(buf)] = group
                if buf.node.op == "reduce":
                    if buf is group.reduce:  # an epilogue's kernel that now reduces
                        merge_siblings(group, group_of, copies, groups, created, reds)
                    reds.add(buf)
                continue
        op = buf.node.op
        if op == "reduce":  # written, but maybe by a reduction loop made already
            group = sibling_group(buf, users, group_of, copies, created, reds)
            reds.add(buf)
            if group is not None:
                join(buf, group, readers, start_paths(buf))
                group.extra.append(buf)
                group_of[id(buf)] = group
                continue
        kind = "extern" if op in EXTERN_OPS else "scatter" if op == "scatter" else "elementwise"
        group = Group(root=buf, why=why, kind=kind)
        if group.kind != "extern":
            group.members.append(buf)
            group.paths[id(buf)], group.ops = start_paths(buf), 1
            if buf.node.op == "reduce":
                group.kind, group.reduce = "reduce", buf
                group.side[id(buf)] = "out"
        group_of[id(buf)] = group
        created[id(group)] = len(created)  # not len(groups): merging removes groups
        groups.append(group)
    groups.reverse()
    for g in groups:
        g.members.reverse()  # producers first
    return groups
