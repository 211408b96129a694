"""Sibling reductions: reductions over the same domain (input shape and
reduced axes) that run in one loop (`Kernel.siblings`), read once.

Three ways in, each from fusion.fuse's walk (docs/fusion.md, rule 8):
- both are read by one epilogue in storage order (`x.sum(1) / (x > 0).sum(1)`):
  `can_fuse` asks `sibling_error`;
- a reduction that must be written anyway (`lo, hi = x.min(), x.max()`)
  joins a reduction kernel already made that shares a source with it and
  runs before everything that reads it (`sibling_group`);
- a kernel whose epilogue has just gained its reduction merges with such
  a kernel made before (`merge_siblings`): `x.mean(1), x.max(1)` is one
  kernel whichever was built first.

Only ops.SIBLING_REDUCTIONS, at most MAX_REDUCTIONS in a kernel, all on
one device.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from .config import config
from .graph import Buffer
from .group import Group, groups_of, is_free, reads_after_loop, reads_in_order
from .ops import EXTERN_OPS, SIBLING_REDUCTIONS

MAX_REDUCTIONS = 4  # reductions sharing one loop (each a carry in registers)
SOURCE_WALK = 64    # most nodes walked for a reduction's sources, nearest first
CANDIDATES = 64     # most indexed reductions looked at for one new reduction


def domain(red: Buffer) -> tuple:
    """What a reduction loops over: its input's shape and the axes it reduces."""
    return red.node.srcs[0][1].shape, tuple(sorted(red.node.arg[1]))


def sibling_error(buf: Buffer, group: Group) -> str | None:
    """None if reduction `buf` can share `group`'s reduction loop, else why not."""
    for op in (buf.node.arg[0], group.reduce.node.arg[0]):
        if op not in SIBLING_REDUCTIONS:
            return f"{op} shares no loop"
    if buf.device != group.reduce.device:
        return "reductions on different devices"
    if domain(buf) != domain(group.reduce):
        return "reductions over different domains"
    if len(group.siblings) + 1 >= MAX_REDUCTIONS:
        return "reduction cap"
    if group.ops + 1 > config.max_kernel_ops:
        return "kernel op cap"
    return None


@dataclass
class Reductions:
    """The reductions grouped so far in a walk, indexed by what they read
    (`_sources`): where a new reduction finds the kernels it could share a
    loop with, without looking at every kernel.

    The search is bounded (CANDIDATES reductions, nearest source first)
    and skips reductions that read the new one or that it reads: in a
    chain `x = x - x.sum(1, keepdims=True)`, every reduction shares its
    sources with every other, and none can share a loop. Looking at all of
    them made 800 links take 6 s to plan, against 0.23 s before sibling
    reductions."""
    memo: dict[int, dict[int, None]] = field(default_factory=dict)  # id -> _sources
    reading: dict[int, list[Buffer]] = field(default_factory=lambda: defaultdict(list))

    def add(self, red: Buffer) -> None:
        for s in _sources(red, self.memo):
            self.reading[s].append(red)

    def kernels(self, red: Buffer, group_of: dict, created: dict[int, int]) -> list[Group]:
        """Kernels with a reduction that shares a source with `red` and is
        neither read by it nor reads it, made latest first."""
        mine = _sources(red, self.memo)
        found = {id(group_of[id(r)]): group_of[id(r)] for r in self.candidates(red)
                 if id(r) not in mine and id(red) not in self.memo[id(r)]}
        return sorted(found.values(), key=lambda g: -created[id(g)])

    def candidates(self, red: Buffer) -> Iterator[Buffer]:
        """Indexed reductions that share a source with `red`: nearest source
        first, latest added first, at most CANDIDATES."""
        looked = 0
        for s in _sources(red, self.memo):
            for r in reversed(self.reading.get(s, ())):
                if looked == CANDIDATES:
                    return
                looked += 1
                yield r


def sibling_group(buf: Buffer, users: dict, group_of: dict, copies: dict,
                  created: dict[int, int], reds: Reductions) -> Group | None:
    """A reduction kernel already made that can compute reduction `buf` in its
    loop and write it, or None.

    It must share a source with `buf` (else one loop saves nothing), and
    run before every kernel that reads `buf` (and so before their readers):
    kernels made later in this walk run earlier. (A reduction with parts, logsumexp,
    is no SIBLING_REDUCTIONS op: `sibling_error` refuses it.)"""
    for g in reds.kernels(buf, group_of, created):
        if sibling_error(buf, g) is None and \
                _runs_before_readers(buf, g, users, group_of, copies, created):
            return g
    return None


def merge_siblings(group: Group, group_of: dict, copies: dict, groups: list[Group],
                   created: dict[int, int], reds: Reductions) -> None:
    """Merge `group`, which has just gained its reduction, with a reduction
    kernel made before that can share its loop, so that `x.mean(1)` beside a
    written `x.max(1)` is one kernel whichever was built first.

    The merged kernel takes the slot of the one made later (it runs first),
    so the other's inputs must come from kernels that run before that
    slot, and neither may read the other."""
    red = group.reduce
    for other in reds.kernels(red, group_of, created):
        if other is group or sibling_error(red, other) is not None or \
                len(other.siblings) + len(group.siblings) + 2 > MAX_REDUCTIONS or \
                other.ops + group.ops > config.max_kernel_ops:
            continue
        first, later = sorted((group, other), key=lambda g: created[id(g)])
        if _can_move(first, later, group_of, copies, created):
            _absorb(later, first, group_of, copies, groups)
            return


def _can_move(first: Group, later: Group, group_of: dict, copies: dict,
              created: dict[int, int]) -> bool:
    """Can `first`'s work run in `later`'s slot, beside `later`'s own?"""
    ids = {id(m) for m in first.members}, {id(m) for m in later.members}
    for members, mine, theirs in ((first.members, ids[0], ids[1]),
                                  (later.members, ids[1], ids[0])):
        for m in members:
            for src, _ in m.node.srcs:
                if id(src) in theirs:
                    return False  # one reads the other
                if members is first.members and src.pending and id(src) not in mine and \
                        any(created[id(k)] <= created[id(later)]
                            for k in groups_of(src, group_of, copies)):
                    return False  # an input of first's computed too late
    return True


def _absorb(into: Group, other: Group, group_of: dict, copies: dict,
            groups: list[Group]) -> None:
    """`other`'s members, reductions and outputs become `into`'s. A value
    both recomputed (`recompute`) is now computed once, along both's paths."""
    have = {id(m) for m in into.members}
    for m in other.members:
        if id(m) in have:
            into.paths[id(m)] = tuple(dict.fromkeys(into.paths[id(m)] + other.paths[id(m)]))
        else:
            into.members.append(m)
            into.paths[id(m)], into.side[id(m)] = other.paths[id(m)], other.side[id(m)]
    into.siblings += [other.reduce, *other.siblings]
    into.extra += [other.root, *other.extra]
    into.ops += other.ops
    into.trivial = into.trivial and other.trivial
    into.recomputed += [note for note in other.recomputed if note not in into.recomputed]
    for m in other.members:
        group_of[id(m)] = into
    for key, kernels in copies.items():  # recomputed values: `other` was one of their kernels
        if any(k is other for k in kernels):
            copies[key] = [k for k in kernels if k is not other and k is not into] + [into]
    groups.remove(other)


def _sources(red: Buffer, memo: dict) -> dict[int, None]:
    """Ids of what a reduction reads, nearest first: its input and the
    pending values and buffers that is computed from (up to SOURCE_WALK of
    them; constants aside), not looking past a node that gets a kernel of
    its own (a write, an extern such as a transfer): its readers share
    nothing through it."""
    if id(red) in memo:
        return memo[id(red)]
    src = red.node.srcs[0][0]
    found, queue = {id(src): None}, [src]
    for b in queue:  # breadth first: the queue grows while it is read
        if len(found) >= SOURCE_WALK:
            break
        if not b.pending or b.node.op == "scatter" or b.node.op in EXTERN_OPS:
            continue
        for s, _ in b.node.srcs:
            if id(s) not in found and not (s.pending and is_free(s)):
                found[id(s)] = None
                queue.append(s)
    memo[id(red)] = found
    return found


def _runs_before_readers(buf: Buffer, g: Group, users: dict, group_of: dict, copies: dict,
                         created: dict[int, int]) -> bool:
    """Does kernel `g` run before every other kernel that reads `buf`, and
    read it, if at all, in its epilogue, in storage order?

    The epilogue's read is what `sibling_error` allows when one epilogue
    reads both reductions: nanvar's mean, the sum divided by the count,
    computed by the sum's kernel while the count is also read later.
    Direct readers are enough: a kernel that reads a reader's value runs
    after the reader's kernel, so after `g` too. (A walk through every
    reader's readers, bounded at 512 nodes, refused the min and max of
    each link of a 300-link chain and planned in twice the time.)"""
    readers = users.get(id(buf), [])
    inside = []
    for r in readers:
        found = groups_of(r[0], group_of, copies)
        if not found or any(k is not g and created[id(k)] > created[id(g)] for k in found):
            return False
        if any(k is g for k in found):
            inside.append(r)
    return not inside or reads_after_loop(g, inside) and reads_in_order(g, inside, buf)
