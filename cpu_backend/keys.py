"""Structural cache keys for kernels, linear in size and without recursion.

A `Kernel` is structurally its own key, but its dataclass `hash()`/`==`/
`repr()` recurse through the expression and expand shared subexpressions:
`repr` (hence `Kernel.digest()`) hits the recursion limit at a depth of
~300 ops, `hash` at ~1000, and a DAG that reuses a node at every level costs
2**depth. `structural_key` serializes the same information iteratively, with
hash-consing, so two kernels get equal keys exactly when they are equal
(`==`), whatever object sharing they were built with. `describe_new` names
what differs from kernels seen before, for the compile log.
"""
from __future__ import annotations

import hashlib
import itertools
import re

from scheduler.kernel_ir import Cast, Gather, Kernel, Load, Op, Reduced, Scalar, postorder


def structural_key(k: Kernel) -> str:
    sig_id: dict[str, int] = {}
    node_id: dict[int, int] = {}
    lines: list[str] = []
    roots = [r.expr for r in k.reductions] + [o.expr for o in k.outputs]
    roots += [o.pos for o in k.outputs if o.pos is not None]
    for e in postorder(roots):
        if isinstance(e, Load):
            sig = f"load({e.input}) {e.dtype!r}"
        elif isinstance(e, Scalar):
            sig = f"scalar({e.slot}) {e.dtype!r}"
        elif isinstance(e, Reduced):
            sig = f"reduced{f'({e.part})' if e.part else ''}#{e.index} {e.dtype!r}"
        elif isinstance(e, Cast):
            sig = f"cast(%{node_id[id(e.x)]}) {e.dtype!r}"
        elif isinstance(e, Gather):
            sig = f"gather({e.input},%{node_id[id(e.pos)]}) {e.dtype!r}"
        elif isinstance(e, Op):
            args = ",".join(f"%{node_id[id(a)]}" for a in e.args)
            sig = f"{e.name}({args}) {e.dtype!r}"
        else:
            raise TypeError(f"unknown expression node {type(e).__name__}")
        if sig not in sig_id:
            sig_id[sig] = len(sig_id)
            lines.append(sig)
        node_id[id(e)] = sig_id[sig]
    ins = ",".join(f"Input({i.dtype!r},{i.space},chain={i.chain!r},inner={i.inner!r},"
                   f"iota={i.iota},indirect={i.indirect},out_inner={i.out_inner!r})"
                   for i in k.inputs)
    red = ",".join(f"{r.op}(%{node_id[id(r.expr)]}) acc={r.acc!r} {r.dtype!r}"
                   for r in k.reductions) or "none"
    outs = ",".join(f"Output({o.dtype!r},%{node_id[id(o.expr)]},inner={o.inner!r},pos="
                    f"{'-' if o.pos is None else '%' + str(node_id[id(o.pos)])},"
                    f"follows={o.follows},delta={o.delta})"
                    for o in k.outputs)
    scal = ",".join(repr(d) for d in k.scalars)
    return (f"ndim={k.ndim} n_reduce={k.n_reduce} inputs=[{ins}] scalars=[{scal}] "
            f"reduce={red} outputs=[{outs}] nodes=[{'; '.join(lines)}]")


def variant_key(key: str, variant: int | str | None) -> str:
    """Key of a variant compiled only when a run needs it (loops.py): an int
    is the in-place variant (that input may be the output's own memory, read
    where it is written), "stream" the streaming-store one."""
    if variant is None:
        return key
    return f"{key} streamed" if variant == STREAM else f"{key} in_place_alias={variant}"


STREAM = "stream"  # variant_key's name of the streaming-store variant


def key_digest(key: str) -> str:
    return hashlib.sha1(key.encode()).hexdigest()[:16]


_ASPECTS = {
    "dtypes": (re.compile(r"lazy\.(bool|int32|int64|float32|float64)"), "lazy.T"),
    "rank": (re.compile(r"(ndim|n_reduce)=\d+|chain=\([^)]*\)"), "R"),
    "contiguity": (re.compile(r"inner=(None|-?\d+)"), "inner=?"),
}
_SUBSETS = [s for n in (1, 2, 3) for s in itertools.combinations(_ASPECTS, n)]


class NewnessTracker:
    """Says what a cache miss has that no earlier kernel had."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, ...], set[str]] = {s: set() for s in _SUBSETS}
        self._count = 0

    def describe(self, key: str) -> str:
        """The smallest set of aspects which, ignored, match an earlier kernel."""
        norm = {}
        for s in _SUBSETS:
            text = key
            for a in s:
                pat, rep = _ASPECTS[a]
                text = pat.sub(rep, text)
            norm[s] = text
        new = "new structure" if self._count else "new structure (first kernel)"
        for s in _SUBSETS:
            if norm[s] in self._seen[s]:
                new = "new " + " and ".join(s)
                break
        for s in _SUBSETS:
            self._seen[s].add(norm[s])
        self._count += 1
        return new
