"""Explicit SIMD inner loops for elementwise rows.

LLVM's loop vectorizer makes three copies of every inner loop it widens
(the vector body, a vector epilogue, a scalar remainder), and choosing the
width and the interleave count, then generating code for all three, was
most of an elementwise kernel's compile time (W2: 31 ms compiled, 15 ms
with no vectorizer at all). So where an elementwise row is simple enough,
the generator writes the vector loop itself: the same emitters (lowering.py
and the math modules take vectors as well as scalars) over `lanes` elements
at a time, then the rest of the row (fewer than `lanes` elements) as one
step of masked loads and stores where the host has AVX-512, else as a
scalar loop, and tells LLVM to vectorize neither (`row_loop`).

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

from functools import lru_cache
from typing import Callable

import llvmlite.binding as llvm
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


def load(b: ir.IRBuilder, p: ir.Value, step: int, n: int, rem: ir.Value | None = None
         ) -> ir.Value:
    """Elements p[0], p[step], ..., p[(n-1) step] as one vector; with `rem`
    (an i32 below n), only the first `rem` of them are read, the other
    lanes being 0 (a masked load: nothing past them is touched)."""
    elem = p.type.pointee
    if step == 0:
        return splat(b, b.load(p), n)
    if step == -1:
        p = b.gep(p, [ir.Constant(I64, 1 - n)], inbounds=True)
    width = 2 * n if step == 2 else n
    vp = b.bitcast(p, ir.VectorType(elem, width).as_pointer())
    if rem is None:
        wide = b.load(vp, align=_size(elem))
    elif step == 1:
        wide = _masked(b, "load", vp, lanes_below(b, rem, n))
    elif step == -1:  # p[-i] sits in lane n - 1 - i
        wide = _masked(b, "load", vp, b.not_(lanes_below(b, b.sub(ir.Constant(I32, n), rem), n)))
    else:  # element i in lane 2 i: lanes up to 2 (rem - 1)
        wide = _masked(b, "load", vp, lanes_below(b, b.sub(b.add(rem, rem), ir.Constant(I32, 1)),
                                                  width))
    if step == 1:
        return wide
    picks = [2 * i for i in range(n)] if step == 2 else [n - 1 - i for i in range(n)]
    return b.shuffle_vector(wide, ir.Constant(wide.type, ir.Undefined),
                            ir.Constant(ir.VectorType(I32, n), picks))


def store(b: ir.IRBuilder, v: ir.Value, p: ir.Value, rem: ir.Value | None = None) -> None:
    """Store vector `v` at p[0], p[1], ... (an output contiguous along the row);
    with `rem`, only its first `rem` lanes (a masked store)."""
    vp = b.bitcast(p, v.type.as_pointer())
    if rem is None:
        b.store(v, vp, align=_size(p.type.pointee))
    else:
        _masked(b, "store", vp, lanes_below(b, rem, v.type.count), v)


def lanes_below(b: ir.IRBuilder, rem: ir.Value, n: int) -> ir.Value:
    """The mask of lanes 0 .. rem - 1 of n (`rem` an i32)."""
    iota = ir.Constant(ir.VectorType(I32, n), list(range(n)))
    return b.icmp_unsigned("<", iota, splat(b, rem, n))


def _masked(b: ir.IRBuilder, op: str, vp: ir.Value, mask: ir.Value,
            value: ir.Value | None = None) -> ir.Value | None:
    """llvm.masked.load (masked-off lanes 0) or llvm.masked.store through vp."""
    vty = vp.type.pointee
    elem = vty.element
    kind = "f32" if isinstance(elem, ir.FloatType) else "f64" if isinstance(elem, ir.DoubleType) \
        else f"i{elem.width}"
    name = f"llvm.masked.{op}.v{vty.count}{kind}.p0"
    align = ir.Constant(I32, _size(elem))
    fn = b.module.globals.get(name)
    if op == "load":
        fn = fn or ir.Function(b.module, ir.FunctionType(vty, [vp.type, I32, mask.type, vty]), name)
        return b.call(fn, [vp, align, mask, ir.Constant(vty, None)])
    fn = fn or ir.Function(b.module, ir.FunctionType(ir.VoidType(), [vty, vp.type, I32, mask.type]),
                           name)
    b.call(fn, [value, vp, align, mask])
    return None


@lru_cache(maxsize=None)
def masked_tails() -> bool:
    """Whether a row's last vector step runs masked (`row_loop`): where the
    host has AVX-512, whose masked loads and stores cost what plain ones do
    and never touch a masked-off lane. Elsewhere LLVM would expand them lane
    by lane, and a scalar loop finishes the row instead."""
    return "+avx512f" in llvm.get_host_cpu_features().flatten().split(",")


def _size(ty: ir.Type) -> int:
    """Bytes of a scalar type in memory (the alignment of its loads)."""
    return 8 if isinstance(ty, ir.DoubleType) else 4 if isinstance(ty, ir.FloatType) \
        else ty.width // 8


def row_loop(g, cnt: ir.Value, n: int, body: Callable[[ir.Value], None],
             wide: bool = False) -> None:
    """for j in [0, cnt) step n: body(j) with `g.lanes` = n (vector values);
    then the rest of the row: with masked tails (`masked_tails`), one more
    step masked to the row's end (`g.rem`: its lanes in the row, an i32),
    else body(j) on scalars. A row shorter than n is then one masked step,
    not up to n - 1 scalar ones (1M rows of 8 float32, `A * w[:, None]`:
    2.5 -> 1.6 ms). Masking every step instead, in one loop, compiled less
    but ran W2 and W4 5-10% slower. LLVM is told to vectorize neither loop
    ("simd", "scalar" in codegen.LOOP_HINTS).

    `wide`: an input is read with step 2, whose whole step loads 2n elements,
    one past its last: the row's last n elements (at least one) are then
    left to the rest, which reads no further than the row, lest the element
    after a row at the end of mapped memory be read."""
    b = g.b
    shift = ir.Constant(I64, n.bit_length() - 1)
    zero = ir.Constant(I64, 0)
    upto = b.select(b.icmp_signed(">", cnt, zero), b.sub(cnt, ir.Constant(I64, 1)), zero) \
        if wide else cnt
    whole = b.shl(b.lshr(upto, shift), shift)

    def vector(j, rem=None):
        g.lanes, g.rem = n, rem
        try:
            body(j)
        finally:
            g.lanes, g.rem = None, None
    g.counted_loop(zero, b.lshr(upto, shift), [],
                   lambda i, _: vector(g.mul(i, ir.Constant(I64, n))) or [], "simd")
    if masked_tails():
        left = b.sub(cnt, whole)
        with b.if_then(b.icmp_signed(">", left, zero)):
            vector(whole, b.trunc(left, I32))
        return
    g.counted_loop(whole, cnt, [], lambda j, _: body(j) or [], "scalar")
