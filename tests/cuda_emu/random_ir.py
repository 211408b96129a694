"""Hypothesis strategies for random Kernel IR (CUDA tests).

Random shapes (incl. 0 and 1), first views with negative and zero strides
and offsets, chained views, iota inputs, out-space inputs, scalars of every
dtype, expression DAGs over every exact op with casts, every reduction with
epilogues, and output views that are permuted, flipped and gapped.
Transcendental ops are left to the corpus (their rounding differs by
platform); sums of quarter-integers are exact in any order, so results
compare bitwise.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from scheduler.dtypes import ALL, int64
from scheduler.kernel_ir import Input, Kernel, Launch, Load, Output, Reduce, Reduced, Scalar
from scheduler.lowering import FIXED_INNER
from scheduler.ops import ELEMENTWISE, REDUCTIONS

from .corpus import REDUCE_MODES, Case, values

EXACT_OPS = sorted(set(ELEMENTWISE) - {"exp", "expm1", "log", "sin", "cos", "tan", "tanh", "sigmoid", "pow",
                                       "asin", "acos", "atan", "atan2",
                                       "philox_normal_f32", "philox_normal_f64"})
# logsumexp rounds like exp and log: the corpus covers it under every strategy
EXACT_REDUCTIONS = sorted(set(REDUCTIONS) - {"logsumexp"})


from ir_strategies import expr_tree, out_view, view_chain  # shared with the CPU backend tests


@st.composite
def random_case(draw, reduce: bool) -> Case:
    ndim = draw(st.integers(1 if reduce else 0, 3))
    n_reduce = draw(st.integers(1, ndim)) if reduce else 0
    n_out = ndim - n_reduce
    # interpret.run cannot reduce into an empty out space: out axes of a reduction are > 0
    shape = tuple(draw(st.sampled_from([1, 2, 3, 4, 6] if reduce and d < n_out
                                       else [1, 2, 3, 5, 7, 0])) for d in range(ndim))
    if reduce and draw(st.integers(0, 4)) == 0:  # a long reduce axis: partials do work
        shape = shape[:-1] + (draw(st.integers(40, 300)),)
    inputs, views, sizes = [], [], []
    for n in range(draw(st.integers(1, 3))):
        iota = draw(st.integers(0, 5)) == 0
        dt = int64 if iota else draw(st.sampled_from(ALL))
        space = "out" if reduce and n and n_out and draw(st.integers(0, 2)) == 0 else "full"
        vs, size = draw(view_chain(shape if space == "full" else shape[:n_out],
                                   draw(st.sampled_from([0, 0, 1, 2]))))
        inner = vs[0].strides[-1] if vs[0].strides and vs[0].strides[-1] in FIXED_INNER \
            and draw(st.booleans()) else None
        inputs.append(Input(dt, space, tuple(v.ndim for v in vs[1:]), inner, iota))
        views.append(vs)
        sizes.append(size)
    scalars = tuple(draw(st.lists(st.sampled_from(ALL), max_size=2)))
    full = [Load(i, x.dtype) for i, x in enumerate(inputs) if x.space == "full"]
    full += [Scalar(i, d) for i, d in enumerate(scalars)]
    red, leaves = None, full
    if reduce:
        op = draw(st.sampled_from(EXACT_REDUCTIONS))
        x = draw(expr_tree(full, 3, EXACT_OPS))
        r = REDUCTIONS[op]
        red = Reduce(op, x, r.acc_dtype(x.dtype), r.result_dtype(x.dtype))
        leaves = [Load(i, x.dtype) for i, x in enumerate(inputs) if x.space == "out"]
        leaves += [Scalar(i, d) for i, d in enumerate(scalars)] + [Reduced(red.dtype)] * 3
    outputs, out_views, out_sizes = [], [], []
    for _ in range(draw(st.integers(1, 2))):
        e = Reduced(red.dtype) if reduce and draw(st.booleans()) else \
            draw(expr_tree(leaves, 3, EXACT_OPS))
        v, size = draw(out_view(shape[:n_out]))
        inner = v.strides[-1] if v.strides and v.strides[-1] in (1, -1) and draw(st.booleans()) \
            else None
        outputs.append(Output(draw(st.sampled_from([e.dtype] * 3 + list(ALL))), e, inner))
        out_views.append(v)
        out_sizes.append(size)
    k = Kernel(ndim, n_reduce, tuple(inputs), scalars, red, tuple(outputs))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bufs = [None if inp.iota else values(rng, inp.dtype.name, (n,))
            for inp, n in zip(inputs, sizes)]
    svals = [values(rng, d.name, (1,), special=False)[0].item() for d in scalars]
    launch = Launch(shape, views, out_views, svals)
    expected = [np.full(n, 7, o.dtype.np) for n, o in zip(out_sizes, outputs)]
    return Case(f"random/{k.digest()}", k, launch, bufs, expected, False,
                REDUCE_MODES if reduce else ((None, None),))


def with_reference(case: Case) -> Case | None:
    """Fill `expected` from interpret.run; None when the reference rejects the case."""
    from scheduler import interpret
    try:
        with np.errstate(all="ignore"):
            interpret.run(case.kernel, case.launch, case.inputs, case.expected)
    except ValueError:  # empty reduction without identity: both must raise, tested elsewhere
        return None
    return case



# -- random lazy expressions: kernels as the scheduler builds them --------------------------
_UNARY = ["neg", "abs", "exp", "sin", "sqrt", "tanh", "sigmoid", "invert"]
_BINARY = ["add", "sub", "mul", "truediv", "floordiv", "mod", "maximum", "minimum", "lt", "eq",
           "and", "xor"]


@st.composite
def lazy_view(draw, t):
    """A random chain of view ops on lazy tensor `t` (slices with any step, transposes,
    reshapes that may need a copy, broadcasts)."""
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["slice", "T", "reshape", "expand", "flip"]))
        if kind == "slice" and t.ndim:
            d = draw(st.integers(0, t.ndim - 1))
            step = draw(st.sampled_from([1, 2, -1, -2, 3]))
            key = (slice(None),) * d + (slice(None, None, step),)
            t = t[key]
        elif kind == "T":
            t = t.T
        elif kind == "reshape" and t.size:
            t = t.reshape(-1) if t.ndim > 1 else t.reshape(1, -1)
        elif kind == "expand":
            t = t.expand(draw(st.integers(1, 3)), *t.shape)
        elif kind == "flip" and t.ndim:
            t = t[::-1]
    return t


@st.composite
def lazy_case(draw):
    """(name, tensors): a random elementwise chain over viewed operands, maybe reduced."""
    import lazy
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=3)))
    dts = ["bool", "int32", "int64", "float32", "float64"]
    t = draw(lazy_view(lazy.asarray(values(rng, draw(st.sampled_from(dts)), shape))))
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            name = draw(st.sampled_from(_UNARY))
            try:
                t = getattr(lazy, {"neg": "negative", "invert": "invert"}.get(name, name))(t)
            except TypeError:  # op not defined for this dtype
                continue
        else:
            other = lazy.asarray(values(rng, draw(st.sampled_from(dts)), t.shape[-1:] or (1,)))
            fn = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
                  "floordiv": "floor_divide", "mod": "remainder", "maximum": "maximum",
                  "minimum": "minimum", "lt": "less", "eq": "equal", "and": "bitwise_and",
                  "xor": "bitwise_xor"}[draw(st.sampled_from(_BINARY))]
            try:
                t = getattr(lazy, fn)(t, other) if draw(st.booleans()) \
                    else getattr(lazy, fn)(other, t)
            except TypeError:
                continue
    if t.ndim and draw(st.booleans()):
        op = draw(st.sampled_from(["sum", "max", "min", "argmax", "any", "prod"]))
        axis = draw(st.integers(0, t.ndim - 1))
        if t.shape[axis] or op in ("sum", "any", "prod"):
            t = getattr(t, op)(axis=axis)
            if draw(st.booleans()):
                t = t * 2
    return t
