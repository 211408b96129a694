"""May a write reuse the old version's memory? (a named decision, logged)

A write (scatter) produces a new version of a storage from the old one.
Running it in place is safe when nothing can observe the old version
afterwards and the kernel itself never reads an element it has already
overwritten. Otherwise the old version is copied first; NumPy's semantics
(`x[1:] = x[:-1]` reads the old values) require it.
"""
from __future__ import annotations

import numpy as np

from .interpret import positions
from .lowering import Step
from .view import View

_EXACT_LIMIT = 1 << 20  # elements up to which overlaps are checked exactly


def _disjoint(a: View, b: View) -> bool:
    (lo1, hi1), (lo2, hi2) = a.span(), b.span()
    if hi1 < lo2 or hi2 < lo1:
        return True
    if a.size + b.size > _EXACT_LIMIT:
        return False
    pa = positions(a, [], a.shape).reshape(-1)
    pb = positions(b, [], b.shape).reshape(-1)
    return not np.intersect1d(pa, pb).size


def can_write_in_place(step: Step, held: set[int]) -> tuple[bool, str]:
    """(True, "in place") or (False, why the old version is copied)."""
    base = step.base
    if not getattr(base.array.flags, "writeable", True):  # CuPy arrays are always writable
        return False, "copy: the old version is read-only memory"
    group = step.group
    inlined = [m for m in group.members if m is not group.root]
    member_nodes = {id(m.node) for m in group.members if m.node is not None}
    # A value inlined here that a live tensor or another pending op still
    # reads will be computed again later, from the old version.
    for m in inlined:
        if id(m) in held or any(id(r) not in member_nodes for r in m.live_readers()):
            return False, "copy: an inlined value that reads the old version is still needed"
    others = [n for n in base.live_readers() if id(n) not in member_nodes]
    if others:
        return False, f"copy: the old version is still read by {len(others)} pending op(s)"
    out = step.launch.outputs[0]
    pos_write = step.kernel.outputs[0].pos is not None
    for buf, spec, views in zip(step.inputs, step.kernel.inputs, step.launch.inputs):
        if buf is not base:
            continue
        if spec.indirect or pos_write:
            return False, "copy: the kernel reads the old version at computed positions"
        first, chain = views[0], views[1:]
        if not chain and first == out:
            continue  # reads each element exactly where it writes it
        if chain or not _disjoint(first, out):
            return False, "copy: the kernel reads elements it overwrites"
    return True, "in place"


def aliased_inputs(step: Step, target: object) -> list[int]:
    """Inputs other than the old version whose memory may be `target`'s
    (two tensors over one NumPy array, e.g. `t = asarray(a); t[1:] = a[:-1]`).
    The kernel reads a copy of each: it must see the values from before
    the write, as NumPy's `a[1:] = a[:-1]` does."""
    if not isinstance(target, np.ndarray):
        return []  # device memory: tensors never share it with another buffer
    return [i for i, b in enumerate(step.inputs)
            if b is not None and b is not step.base and isinstance(b.array, np.ndarray)
            and np.may_share_memory(b.array, target)]
