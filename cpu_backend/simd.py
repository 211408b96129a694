"""Explicit SIMD inner loops for elementwise rows.

LLVM's loop vectorizer makes three copies of every inner loop it widens
(the vector body, a vector epilogue, a scalar remainder), and choosing the
width and the interleave count, then generating code for all three, was
most of an elementwise kernel's compile time (W2: 31 ms compiled, 15 ms
with no vectorizer at all). So where an elementwise row is simple enough,
the generator writes the vector loop itself: the same emitters (lowering.py
and the math modules take vectors as well as scalars) over `lanes` elements
at a time, then a scalar loop over the rest of the row (fewer than `lanes`
elements), and tells LLVM to vectorize neither.

"Simple enough" (`lanes` and `steps_fit`): no reduction, no gather, no
in-order (`Output.pos`) store and no bool in memory; every op in
`_VECTOR_OPS` for its dtype; every operand a plain view (no chain, no
iota) whose inner stride is a compile-time constant in `_LOAD_STEPS` (0
splats one element, -1 reverses a wide load, 2 takes the even lanes of a
load twice as wide); every output contiguous along the row. Everything
else keeps LLVM's vectorizer, as before. The lanes are one register of the
widest type that varies along the row (`row_invariant`).

No runtime alias check is needed, unlike in LLVM's vectorized loops: the
scheduler gives a kernel an input that shares memory with an output only
when it is read exactly where it is written (scheduler/inplace.py); other
overlapping inputs are copies.
"""
from __future__ import annotations

from typing import Callable

from llvmlite import ir

from scheduler.dtypes import DType
from scheduler.kernel_ir import Cast, Gather, Kernel, Load, Op, Scalar, children, postorder
from scheduler.ops import op_compute_dtype

from .lowering import I32, I64

VECTOR_BYTES = 64  # one AVX-512 register; LLVM splits wider types where the host has less
MAX_LANES = 16     # sincos.py's widest vector versions (float32)
_LOAD_STEPS = (0, 1, -1, 2)

# Ops whose emitters take vectors, by the kinds of compute dtype they do
# it for ("b" bool, "i" int, "f" float). Not here: integer pow (a loop per
# element), float floordiv/mod (frem, a libm call per lane), nextafter and
# float64 log2 (libm calls), pow, the inverse trigonometric functions and
# the random-number ops (not written for vectors); integer floordiv/mod,
# which LLVM's vectorizer ran about 9% faster (it picks 8 float64 lanes
# for their float64 estimate, where one register of int32 is 16).
_VECTOR_OPS: dict[str, str] = {
    **{n: "bif" for n in ("copy", "neg", "abs", "add", "mul", "maximum", "minimum",
                          "eq", "ne", "lt", "le", "gt", "ge", "where", "and", "or", "xor",
                          "invert")},
    "sub": "if",
    **{n: "f" for n in ("exp", "expm1", "log", "log10", "sqrt", "sin", "cos", "tan", "tanh",
                        "sigmoid", "floor", "ceil", "trunc", "rint", "copysign", "signbit",
                        "truediv")},
}


def _compute_dtype(e: Op) -> DType:
    return op_compute_dtype(e.name, [a.dtype for a in e.args])


def _vectorizes(e: Op) -> bool:
    d = _compute_dtype(e)
    if e.name == "log2" and d.is_float:
        return d.itemsize == 4  # float64 log2 is a libm call
    return d.kind in _VECTOR_OPS.get(e.name, "")


def lanes(k: Kernel) -> int | None:
    """Lanes of `k`'s explicit vector loops (one 64-byte register of its
    widest type, at most MAX_LANES), or None when `k` keeps LLVM's loop
    vectorizer (see the module docstring)."""
    if k.reduce is not None or any(o.pos is not None for o in k.outputs):
        return None
    if any(i.chain or i.iota for i in k.inputs):
        return None
    if any(x.dtype.is_bool for x in k.inputs + k.outputs):
        return None  # bytes in memory: LLVM's 64 lanes ran 15% faster than our 16
    fixed = row_invariant(k)
    widest = max([i.dtype.itemsize for i in k.inputs if i.inner != 0 or i.indirect]
                 + [o.dtype.itemsize for o in k.outputs])
    for e in postorder([o.expr for o in k.outputs]):
        if isinstance(e, Gather) or (isinstance(e, Op) and not _vectorizes(e)):
            return None
        if id(e) in fixed:
            continue
        widest = max(widest, e.dtype.itemsize)
        if isinstance(e, Op):
            widest = max(widest, _compute_dtype(e).itemsize)
    return min(MAX_LANES, VECTOR_BYTES // widest)


def row_invariant(k: Kernel) -> set[int]:
    """Ids of the exprs that have one value per row: built only from inputs
    read at inner stride 0 (loops.py loads them once per row), scalars and
    constants. Their dtype does not set the loop's width: LLVM hoists their
    ops out of the row loop, so a float64 computed once per row (a float64
    row statistic cast to float32, say) leaves a float32 loop 16 lanes wide."""
    fixed: set[int] = set()
    for e in postorder([o.expr for o in k.outputs]):
        if isinstance(e, Load):
            inp = k.inputs[e.input]
            if inp.inner == 0 and not inp.indirect and not inp.iota:
                fixed.add(id(e))
        elif isinstance(e, Scalar) or \
                (isinstance(e, (Op, Cast)) and all(id(c) in fixed for c in children(e))):
            fixed.add(id(e))
    return fixed


def steps_fit(in_steps: list[ir.Value | None], out_steps: list[ir.Value]) -> bool:
    """Whether one copy of a row loop, with these inner strides (None: an input
    that is not read through its view), can load and store whole vectors."""
    def const(s, allowed) -> bool:
        return isinstance(s, ir.Constant) and s.constant in allowed
    return all(s is None or const(s, _LOAD_STEPS) for s in in_steps) and \
        all(const(s, (1,)) for s in out_steps)


def splat(b: ir.IRBuilder, v: ir.Value, n: int) -> ir.Value:
    """`v` in each of `n` lanes."""
    vec = ir.VectorType(v.type, n)
    one = b.insert_element(ir.Constant(vec, ir.Undefined), v, ir.Constant(I32, 0))
    return b.shuffle_vector(one, ir.Constant(vec, ir.Undefined),
                            ir.Constant(ir.VectorType(I32, n), [0] * n))


def load(b: ir.IRBuilder, p: ir.Value, step: int, n: int) -> ir.Value:
    """Elements p[0], p[step], ..., p[(n-1) step] as one vector."""
    elem = p.type.pointee
    if step == 0:
        return splat(b, b.load(p), n)
    if step == -1:
        p = b.gep(p, [ir.Constant(I64, 1 - n)], inbounds=True)
    width = 2 * n if step == 2 else n
    wide = b.load(b.bitcast(p, ir.VectorType(elem, width).as_pointer()), align=_size(elem))
    if step == 1:
        return wide
    picks = [2 * i for i in range(n)] if step == 2 else [n - 1 - i for i in range(n)]
    return b.shuffle_vector(wide, ir.Constant(wide.type, ir.Undefined),
                            ir.Constant(ir.VectorType(I32, n), picks))


def store(b: ir.IRBuilder, v: ir.Value, p: ir.Value) -> None:
    """Store vector `v` at p[0], p[1], ... (an output contiguous along the row)."""
    b.store(v, b.bitcast(p, v.type.as_pointer()), align=_size(p.type.pointee))


def _size(ty: ir.Type) -> int:
    """Bytes of a scalar type in memory (the alignment of its loads)."""
    return 8 if isinstance(ty, ir.DoubleType) else 4 if isinstance(ty, ir.FloatType) \
        else ty.width // 8


def row_loop(g, cnt: ir.Value, n: int, body: Callable[[ir.Value], None]) -> None:
    """for j in [0, cnt) step n: body(j) with `g.lanes` = n (vector values);
    then body(j) on scalars for the rest of the row. LLVM is told to
    vectorize neither loop ("simd", "scalar" in codegen.LOOP_HINTS)."""
    b = g.b
    shift = ir.Constant(I64, n.bit_length() - 1)
    whole = b.shl(b.lshr(cnt, shift), shift)

    def vector(j, _):
        g.lanes = n
        try:
            body(g.mul(j, ir.Constant(I64, n)))
        finally:
            g.lanes = None
        return []
    g.counted_loop(ir.Constant(I64, 0), b.lshr(cnt, shift), [], vector, "simd")
    g.counted_loop(whole, cnt, [], lambda j, _: body(j) or [], "scalar")
