"""Kernel IR building blocks and hypothesis strategies shared by backend tests.

Used by tests/test_cpu_backend.py (LLVM) and tests/cuda_emu/random_ir.py
(CUDA under emulation), so both backends are tested on the same kinds of
random kernels.
"""
from __future__ import annotations

from hypothesis import strategies as st

from scheduler.dtypes import ALL, bool_, float32, float64, int64, result_type
from scheduler.kernel_ir import Cast, Op
from scheduler.ops import ELEMENTWISE
from scheduler.view import View


def binop(name, a, b):
    """Op with the scheduler's casting: operands cast to the compute dtype."""
    prim = ELEMENTWISE[name]
    comp = prim.compute_dtype(result_type(a.dtype, b.dtype))
    args = tuple(x if x.dtype == comp else Cast(x, comp) for x in (a, b))
    return Op(name, args, prim.result_dtype(comp))


def unop(name, a):
    prim = ELEMENTWISE[name]
    comp = prim.compute_dtype(a.dtype)
    return Op(name, (a if a.dtype == comp else Cast(a, comp),), prim.result_dtype(comp))


def _span(shape, strides):
    lo = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0 and n > 0)
    hi = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0 and n > 0)
    return lo, hi


@st.composite
def view_chain(draw, shape, nchain):
    """First view over `shape`, then `nchain` chained views; (views, buffer size)."""
    views, cur = [], tuple(shape)
    for level in range(nchain + 1):
        strides = tuple(draw(st.integers(-3, 3)) for _ in cur)
        lo, hi = _span(cur, strides)
        off = -lo + draw(st.integers(0, 2))
        need = off + hi + 1
        views.append(View(cur, strides, off))
        if level < nchain:
            if draw(st.booleans()):
                cur = (need + draw(st.integers(0, 2)),)
            else:
                a = draw(st.integers(1, 3))
                cur = (a, -(-need // a))
    return views, need


@st.composite
def out_view(draw, shape):
    """Non-overlapping output view: permuted, maybe flipped, maybe gapped."""
    r = len(shape)
    perm = draw(st.permutations(range(r))) if r else []
    gap = draw(st.sampled_from([1, 1, 2]))
    strides = [0] * r
    acc = gap
    for ax in reversed(perm):
        strides[ax] = acc
        acc *= max(shape[ax], 1)
    strides = [s if n != 1 or draw(st.booleans()) else 0 for s, n in zip(strides, shape)]
    strides = [-s if draw(st.booleans()) and r and s else s for s in strides]
    lo, hi = _span(shape, strides)
    return View(tuple(shape), tuple(strides), -lo), hi - lo + 1


@st.composite
def expr_tree(draw, leaves, depth, ops, float_casts_only=False):
    pool = list(leaves)

    def gen(d):
        if d == 0 or draw(st.integers(0, 3)) == 0:
            return draw(st.sampled_from(pool))
        if draw(st.integers(0, 5)) == 0:
            x = gen(d - 1)
            targets = [float32, float64] if float_casts_only else list(ALL)
            e = Cast(x, draw(st.sampled_from(targets)))
        else:
            name = draw(st.sampled_from(ops))
            prim = ELEMENTWISE[name]
            args = [gen(d - 1) for _ in range(prim.arity)]
            head = []
            if name == "where":
                c = args[0]
                head, args = [c if c.dtype == bool_ else Cast(c, bool_)], args[1:]
            dt = result_type(*[a.dtype for a in args])
            if dt.kind not in prim.kinds:
                dt = int64 if "i" in prim.kinds else float64
            comp = prim.compute_dtype(dt)
            args = [a if a.dtype == comp else Cast(a, comp) for a in args]
            e = Op(name, tuple(head + args), prim.result_dtype(comp))
        pool.append(e)  # later nodes may share it: a DAG, emitted once
        return e
    return gen(depth)
