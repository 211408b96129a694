"""Kernel IR -> CUDA C: one `extern "C" __global__` function per Kernel.

Parameters, in this order (`Param` records each, so the CuPy launcher and
the test emulator bind arguments the same way):

    sizes/strides/offsets   `long long a<i>` for each slot of `arg_layout`
    scalars                 `long long s<i>` (float slots: float64 bits)
    inputs                  `const T* __restrict__ in<i>` (none for iota)
    outputs                 `T* __restrict__ out<i>`
    reductions only         partial buffers `pv` (and `pi` for argmax/argmin,
                            logsumexp), then `pv1`, `pv2`, ... for sibling
                            reductions (each in its accumulator dtype),
                            `int mode`, `long long nparts`

Sizes travel as by-value parameters (no device copy per launch, and they
sit in the constant bank). A kernel with more than `MAX_BY_VALUE` numbers
takes two device arrays `A`, `S` instead (the 4 KiB parameter limit).
Shapes are never baked in, so a new shape reuses the compiled module.

Elementwise kernels are a grid-stride loop over the out space. Reductions
compile every strategy into one function and `mode` picks at launch (see
launch.py): 0 block per output, 1 thread per output, 2 block partials of
`nparts` chunks per output, 3 finalize partials, 4 warp per output. The
combine is `__shfl_down_sync` within a warp, then shared memory across
warps. Expressions are emitted in post-order, one `const` per node.
"""
from __future__ import annotations

from dataclasses import dataclass

from scheduler.dtypes import DType, bool_, int64
from scheduler.kernel_ir import (Cast, Expr, Gather, Kernel, Load, Op, Reduced, Scalar,
                                arg_layout, postorder)
from scheduler.ops import ELEMENTWISE, op_compute_dtype

from .prelude import PRELUDE
from .reduce import Reduction, partial_name, second_partial

MAX_BY_VALUE = 400
CTYPE = {"bool": "bool", "int32": "int", "int64": "i64", "float32": "float", "float64": "double"}


def ctype(d: DType) -> str:
    """Register type of `d`."""
    return CTYPE[d.name]


def mtype(d: DType) -> str:
    """Memory type of `d` (bool is one byte, as in NumPy)."""
    return "u8" if d.is_bool else CTYPE[d.name]


@dataclass(frozen=True)
class Param:
    kind: str   # arg, scalar, A, S, in, out, pv, pi, mode, nparts
    index: int  # slot / input / output number (0 otherwise)
    ctype: str  # C type of the parameter


@dataclass(frozen=True)
class CudaSource:
    name: str
    source: str
    params: tuple[Param, ...]
    reduce: bool
    packed: bool  # sizes and scalars in device arrays instead of by value


def function_name(kernel: Kernel) -> str:
    return f"lazy_{kernel.digest()}"


def cast(x: str, src: DType, dst: DType) -> str:
    """NumPy `astype` between the five dtypes, as a C expression."""
    if src == dst:
        return x
    if dst.is_bool:
        return f"({x} != 0)"
    if src.is_float and dst.is_int:
        return f"lz_f2i{dst.itemsize * 8}((double)({x}))"
    return f"(({ctype(dst)})({x}))"


_UNARY_CALL = {n: f"lz_{n}" for n in ("abs", "exp", "expm1", "log", "log2", "log10", "sqrt",
                                      "sin", "cos", "tan", "tanh", "sigmoid", "asin", "acos",
                                      "atan", "signbit", "floor", "ceil", "trunc", "rint")}
_BINARY_CALL = {"add": "lz_add", "sub": "lz_sub", "mul": "lz_mul", "floordiv": "lz_floordiv",
                "mod": "lz_mod", "pow": "lz_pow", "maximum": "lz_max", "minimum": "lz_min",
                "atan2": "lz_atan2", "copysign": "lz_copysign", "nextafter": "lz_nextafter"}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_BITWISE = {"and": ("&", "&&"), "or": ("|", "||"), "xor": ("^", "!=")}


def op_expr(name: str, d: DType, args: list[str]) -> str:
    """C expression for op `name` on operands of compute dtype `d`."""
    if name == "copy":
        return args[0]
    if name == "neg":
        return f"lz_neg({args[0]})"
    if name == "invert":
        return f"(!{args[0]})" if d.is_bool else f"(~{args[0]})"
    if name in _UNARY_CALL:
        return f"{_UNARY_CALL[name]}({args[0]})"
    if name in _BINARY_CALL:
        return f"{_BINARY_CALL[name]}({args[0]}, {args[1]})"
    if name == "truediv":
        return f"({args[0]} / {args[1]})"
    if name in _COMPARE:
        return f"({args[0]} {_COMPARE[name]} {args[1]})"
    if name in _BITWISE:
        sym = _BITWISE[name][1 if d.is_bool else 0]
        return f"(({ctype(d)})({args[0]} {sym} {args[1]}))"
    if name == "where":
        return f"({args[0]} ? {args[1]} : {args[2]})"
    if name.startswith("philox_"):  # (counter, seed) -> random number: prelude.py
        return f"lz_{name}({args[0]}, {args[1]})"
    raise NotImplementedError(f"no CUDA lowering for op {name!r}")


SUPPORTED_OPS = frozenset(ELEMENTWISE)


class _Gen:
    """Emits one kernel. `lines` collects the body; `tmp` numbers values."""

    def __init__(self, k: Kernel, packed: bool):
        self.k, self.lay, self.packed = k, arg_layout(k), packed
        self.lines: list[str] = []
        self.n = 0

    def a(self, i: int) -> str:
        return f"A[{i}]" if self.packed else f"a{i}"

    def fresh(self, stem: str = "v") -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def emit(self, line: str, ind: int) -> None:
        self.lines.append("  " * ind + line)

    # -- parameters -------------------------------------------------------------------
    def params(self) -> list[Param]:
        k = self.k
        ps = [Param("A", 0, "const i64* __restrict__"), Param("S", 0, "const i64* __restrict__")] \
            if self.packed else \
            [Param("arg", i, "i64") for i in range(self.lay.size)] + \
            [Param("scalar", i, "i64") for i in range(len(k.scalars))]
        ps += [Param("in", i, f"const {mtype(inp.dtype)}* __restrict__")
               for i, inp in enumerate(k.inputs) if not inp.iota]
        ps += [Param("out", i, f"{mtype(o.dtype)}* __restrict__") for i, o in enumerate(k.outputs)]
        if k.reduce is not None:
            ps += [Param("pv", i, f"{mtype(r.acc)}* __restrict__")
                   for i, r in enumerate(k.reductions)]
            second = second_partial(k.reduce.op, k.reduce.acc)
            if second is not None:
                ps.append(Param("pi", 0, f"{mtype(second)}* __restrict__"))
            ps += [Param("mode", 0, "int"), Param("nparts", 0, "i64")]
        return ps

    @staticmethod
    def param_name(p: Param) -> str:
        return {"arg": f"a{p.index}", "scalar": f"s{p.index}", "in": f"in{p.index}",
                "out": f"out{p.index}", "pv": partial_name(p.index)}.get(p.kind, p.kind)

    # -- index arithmetic --------------------------------------------------------------
    def unravel(self, flat: str, lo: int, hi: int, stem: str, ind: int) -> list[str]:
        """Digits of `flat` over domain axes [lo, hi) (C order), as variable names."""
        names = [f"{stem}{d}" for d in range(hi - lo)]
        if not names:
            return names
        q, rem = self.fresh("q"), self.fresh("m")
        self.emit(f"u64 {q} = {flat}, {rem};", ind)
        for j in reversed(range(1, len(names))):
            self.emit(f"{q} = lz_udivmod({q}, (u64)n{lo + j}, &{rem}); "
                      f"const i64 {names[j]} = (i64){rem};", ind)
        self.emit(f"const i64 {names[0]} = (i64){q};", ind)
        return names

    def dot(self, base: str, idx: list[str], slot, first_axis: int, inner: int | None) -> str:
        """base + sum(idx[d] * stride[first_axis + d]); the last stride may be fixed."""
        terms = [base]
        last = slot.rank - 1
        for d, name in enumerate(idx):
            ax = first_axis + d
            if ax == last and inner is not None:
                if inner:  # 1 or -1; 0 adds nothing
                    terms.append(name if inner == 1 else f"-{name}")
                continue
            terms.append(f"{name} * {self.a(slot.strides + ax)}")
        return " + ".join(terms)

    def chain(self, i: int, pos: str, ind: int) -> str:
        """Apply input i's chained views to position `pos`; returns the variable."""
        for slot in self.lay.inputs[i][1:]:
            acc, q, rem = self.fresh("c"), self.fresh("q"), self.fresh("m")
            self.emit(f"i64 {acc} = {self.a(slot.offset)};", ind)
            self.emit(f"u64 {q} = (u64)({pos}), {rem};", ind)
            for d in reversed(range(slot.rank)):
                n, s = self.a(slot.shape + d), self.a(slot.strides + d)
                if d:
                    self.emit(f"{q} = lz_udivmod({q}, (u64){n}, &{rem}); "
                              f"{acc} += (i64){rem} * {s};", ind)
                else:
                    self.emit(f"{acc} += (i64){q} * {s};", ind)
            pos = acc
        return pos

    def load(self, i: int, pos: str, ind: int) -> tuple[str, DType]:
        """Value of input i at first-view position `pos` (through its chain)."""
        inp = self.k.inputs[i]
        p = self.chain(i, pos, ind)
        if inp.iota:
            return p, int64
        v = self.fresh()
        read = f"in{i}[{p}]"
        self.emit(f"const {ctype(inp.dtype)} {v} = "
                  f"{f'({read} != 0)' if inp.dtype.is_bool else read};", ind)
        return v, inp.dtype

    # -- expressions -------------------------------------------------------------------
    def evaluate(self, roots: list[Expr], leaf, ind: int) -> dict[int, str]:
        """Emit `roots` in post-order; leaf(e) gives (C expr, dtype) for leaves."""
        vals: dict[int, str] = {}
        for e in postorder(roots):
            if isinstance(e, Op):
                prim = ELEMENTWISE[e.name]
                comp = op_compute_dtype(e.name, [x.dtype for x in e.args])
                args = [cast(vals[id(x)], x.dtype,
                             bool_ if e.name == "where" and n == 0 else comp)
                        for n, x in enumerate(e.args)]
                expr = cast(op_expr(e.name, comp, args), prim.result_dtype(comp), e.dtype)
            elif isinstance(e, Cast):
                expr = cast(vals[id(e.x)], e.x.dtype, e.dtype)
            elif isinstance(e, Gather):  # advanced indexing: a read at a computed position
                read = f"in{e.input}[{vals[id(e.pos)]}]"
                d = self.k.inputs[e.input].dtype
                expr = cast(f"({read} != 0)" if d.is_bool else read, d, e.dtype)
            else:
                expr, d = leaf(e)
                expr = cast(expr, d, e.dtype)
            v = self.fresh()
            self.emit(f"const {ctype(e.dtype)} {v} = {expr};", ind)
            vals[id(e)] = v
        return vals

    def scalar_value(self, slot: int) -> str:
        """Scalar `slot` decoded from its int64 bits (float slots hold float64 bits)."""
        bits = f"S[{slot}]" if self.packed else f"s{slot}"
        d = self.k.scalars[slot]
        if d.is_float:
            return f"(({ctype(d)})lz_f64_bits({bits}))"
        return f"({bits} != 0)" if d.is_bool else f"(({ctype(d)}){bits})"

    def scalar_leaf(self, e: Scalar) -> tuple[str, DType]:
        return f"c{e.slot}", self.k.scalars[e.slot]

    def store(self, vals: dict[int, str], idx: list[str], ind: int) -> None:
        for n, o in enumerate(self.k.outputs):
            slot = self.lay.outputs[n]
            pos = vals[id(o.pos)] if o.pos is not None else \
                self.dot(self.a(slot.offset), idx, slot, 0, o.inner)
            v = cast(vals[id(o.expr)], o.expr.dtype, o.dtype)
            self.emit(f"out{n}[{pos}] = ({mtype(o.dtype)})({v});", ind)

    def out_space(self, idx: list[str], ind: int,
                  reduced: dict[Reduced, str] | None = None) -> None:
        """Out-space loads, output expressions and stores at out index `idx`;
        `reduced` names the variable holding each `Reduced` value."""
        pos: dict[int, str] = {}

        def leaf(e):
            if isinstance(e, Load):
                i = e.input
                if i not in pos:
                    slot = self.lay.inputs[i][0]
                    p = self.fresh("p")
                    self.emit(f"const i64 {p} = "
                              f"{self.dot(self.a(slot.offset), idx, slot, 0, self.k.inputs[i].inner)};",
                              ind)
                    pos[i] = p
                return self.load(i, pos[i], ind)
            if isinstance(e, Scalar):
                return self.scalar_leaf(e)
            if isinstance(e, Reduced) and reduced is not None:
                return reduced[e], e.dtype
            raise TypeError(e)
        roots = [o.expr for o in self.k.outputs] + [o.pos for o in self.k.outputs
                                                     if o.pos is not None]
        self.store(self.evaluate(roots, leaf, ind), idx, ind)

    # -- kernels -----------------------------------------------------------------------
    def header(self) -> None:
        k = self.k
        for d in range(k.ndim):
            self.emit(f"const i64 n{d} = {self.a(d)};", 1)
        out = " * ".join(f"n{d}" for d in range(k.n_out)) or "1"
        self.emit(f"const u64 n_out = (u64)({out});", 1)
        for i, d in enumerate(k.scalars):  # decoded once, not per element
            self.emit(f"const {ctype(d)} c{i} = {self.scalar_value(i)}; (void)c{i};", 1)

    def elementwise(self) -> None:
        self.header()
        if any(o.pos is not None for o in self.k.outputs):
            # stores at computed positions run in order on one thread, so the
            # last of duplicate positions wins, as in NumPy
            self.emit("if (blockIdx.x != 0 || threadIdx.x != 0) return;", 1)
            self.emit("for (u64 t = 0; t < n_out; ++t) {", 1)
        else:
            self.emit("const u64 step = (u64)blockDim.x * gridDim.x;", 1)
            self.emit("for (u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x; t < n_out; "
                      "t += step) {", 1)
        idx = self.unravel("t", 0, self.k.n_out, "i", 2)
        self.out_space(idx, 2)
        self.emit("}", 1)

    def source(self) -> CudaSource:
        k = self.k
        if k.reduce is None:
            self.elementwise()
        else:
            Reduction(self).emit()
        params = self.params()
        plist = ",\n    ".join(f"{p.ctype} {self.param_name(p)}" for p in params)
        name = function_name(k)
        text = (f"{PRELUDE}\n/* {name}: {k.ndim} axes, {k.n_reduce} reduced"
                f"{''.join(', ' + r.op for r in k.reductions)} */\n"
                f"extern \"C\" __global__ void {name}(\n    {plist}) {{\n"
                + "\n".join(self.lines) + "\n}\n")
        return CudaSource(name, text, tuple(params), k.reduce is not None, self.packed)


def generate(kernel: Kernel, packed: bool | None = None) -> CudaSource:
    """CUDA C for `kernel`; `packed` forces the device-array argument form."""
    if packed is None:
        packed = arg_layout(kernel).size + len(kernel.scalars) > MAX_BY_VALUE
    return _Gen(kernel, packed).source()
