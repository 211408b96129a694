"""The reduction kernel body: per-element accumulate, combine, epilogue.

State is a struct `St {v, i}` (i: flat reduce index, used by argmax/argmin,
-1 = no element yet; for logsumexp, v is the running max and i, in the
accumulator dtype, the sum of exp(x - v)). `comb` is associative and commutative for every op,
so any split of the reduce range over threads, warps, blocks and partial
chunks gives NumPy's answer:
- sum/prod wrap for ints; float32 accumulates in float64 (the IR's `acc`);
- max/min propagate NaN; bool max/min are or/and;
- argmax/argmin keep the better value, NaN beating everything, and on a tie
  (or two NaNs) the smaller index: the first occurrence, as np.argmax;
- logsumexp rescales the pair with the smaller max by exp(lo - hi), one exp
  per combine (cpu_backend/reduction.py has the same rule and its edge cases).

All strategies live in one compiled function and `mode` picks one at
launch time, so a shape needing another strategy never recompiles:
0 block per output, 1 thread per output, 2 partials (block per chunk of
`nparts` chunks per output), 3 finalize partials, 4 warp per output,
5 column tiles (the 32 lanes of a warp take 32 neighbouring outputs, so
loads coalesce when outputs are adjacent in memory; the warps of a block
split the reduce range and combine through shared memory; with nparts > 1
they write partials that mode 3 finalizes).
Every `__syncthreads` and shuffle is reached by the whole block or warp
(loop bounds are uniform), which the host emulation checks.

Sibling reductions (`Kernel.siblings`, ops.SIBLING_REDUCTIONS only) share
the loop: St is then `{v0, v1, ...}`, one value per reduction in its own
accumulator dtype and no index (no sibling needs one), so every strategy
above reads each element once for all of them. `comb` folds each field by
its op's rule, which keeps the pair associative and commutative; partials
go to one buffer per reduction (`pv`, `pv1`, ...) and `fin` hands each
`Reduced` its field by `index`. A kernel with one reduction keeps the
`{v, i}` form and its source text, so compiled images cached on disk stay
valid.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from scheduler.dtypes import DType, int64
from scheduler.kernel_ir import Load, Reduced, Scalar, postorder
from scheduler.ops import SIBLING_REDUCTIONS

if TYPE_CHECKING:  # pragma: no cover
    from .codegen import _Gen


def identity(op: str, d: DType) -> str:
    """Identity of the combine for `op` in accumulator dtype `d`, as C."""
    from .codegen import ctype
    t = ctype(d)
    if op == "sum":
        return f"({t})0"
    if op == "prod":
        return f"({t})1"
    if op in ("any", "all"):
        return "true" if op == "all" else "false"
    if op in ("nanmax", "nanmin") and d.is_float:
        return f"({t})lz_nan()"
    high = op in ("min", "argmin", "nanmin")
    if d.is_bool:
        return "true" if high else "false"
    if d.is_float:
        return f"({t})({'' if high else '-'}lz_inf())"
    if d.itemsize == 4:
        return "(int)2147483647" if high else "(int)(-2147483647 - 1)"
    return "(i64)9223372036854775807LL" if high else "(i64)(-9223372036854775807LL - 1)"


def second_partial(op: str, acc: DType) -> DType | None:
    """Dtype of the state's second field in partial buffers (`pi`), None when unused."""
    if op in ("argmax", "argmin"):
        return int64
    return acc if op == "logsumexp" else None


def fold(op: str, d: DType, x: str, y: str) -> str:
    """`op`'s combine of two values `x`, `y` in accumulator dtype `d`, as C: the
    rule of every reduction whose state is one value (ops.SIBLING_REDUCTIONS)."""
    if op in ("sum", "prod"):
        return f"lz_{'add' if op == 'sum' else 'mul'}({x}, {y})"
    if op in ("any", "all"):
        return f"{x} {'||' if op == 'any' else '&&'} {y}"
    if op in ("max", "min"):
        return f"lz_{op}({x}, {y})"
    if op in ("nanmax", "nanmin"):  # no NaN in bool and integers: max, min
        return f"lz_{'f' if d.is_float else ''}{op[3:]}({x}, {y})"
    raise ValueError(f"{op} keeps more than one value")


def combine(op: str, d: DType) -> list[str]:
    """Body of `comb(St a, St b) -> St` for `op` in accumulator dtype `d`."""
    if op in SIBLING_REDUCTIONS:
        return [f"return St{{{fold(op, d, 'a.v', 'b.v')}, 0}};"]
    if op == "logsumexp":
        from .codegen import ctype
        t = ctype(d)
        return ["const bool gt = b.v > a.v;", f"const {t} hi = lz_max(a.v, b.v);",
                f"{t} lo = (gt ? a.v : b.v) - hi;", f"if (lo != lo) lo = ({t})0;",
                f"const {t} e = lz_exp(lo);",
                "return St{hi, gt ? a.i * e + b.i : a.i + b.i * e};"]
    cmp = ">" if op == "argmax" else "<"
    if d.is_float:
        def better(x: str, y: str) -> str:
            return f"({x}.v {cmp} {y}.v || ({x}.v != {x}.v && {y}.v == {y}.v))"
    else:
        def better(x: str, y: str) -> str:
            return f"({x}.v {cmp} {y}.v)"
    return ["if (a.i < 0) return b;", "if (b.i < 0) return a;",
            f"if {better('b', 'a')} return b;", f"if {better('a', 'b')} return a;",
            "return b.i < a.i ? b : a;"]


def partial_name(i: int) -> str:
    """Partial buffer of reduction `i` of `Kernel.reductions`: `pv`, then `pv1`, ..."""
    return f"pv{i or ''}"


COL_BLOCK = 256  # most threads per block in the column-tile strategy (its shared tile)


class Reduction:
    """A reduction kernel's body: one reduction, state `{v, i}`, or siblings
    over the same domain, state `{v0, v1, ...}` (the module docstring)."""

    def __init__(self, gen: "_Gen"):
        self.g = gen
        self.k = gen.k
        self.red = gen.k.reduce
        self.reds = gen.k.reductions
        self.multi = bool(gen.k.siblings)
        self.fields = [f"v{n}" for n in range(len(self.reds))] if self.multi else ["v", "i"]

    def state(self) -> None:
        """`St`, its identity `ident` and its combine `comb`."""
        from .codegen import ctype
        e, red = self.g.emit, self.red
        if self.multi:
            e("struct St { " + " ".join(f"{ctype(r.acc)} v{n};" for n, r in enumerate(self.reds))
              + " };", 1)
            e("const St ident = {" + ", ".join(identity(r.op, r.acc) for r in self.reds) + "};", 1)
            e("auto comb = [](St a, St b) -> St {", 1)
            e("return St{" + ", ".join(fold(r.op, r.acc, f"a.v{n}", f"b.v{n}")
                                       for n, r in enumerate(self.reds)) + "};", 2)
            e("};", 1)
            return
        is_lse = red.op == "logsumexp"
        e(f"struct St {{ {ctype(red.acc)} v; {ctype(red.acc) if is_lse else 'i64'} i; }};", 1)
        e(f"const St ident = {{{identity(red.op, red.acc)}, {'0' if is_lse else '-1'}}};", 1)
        e("auto comb = [](St a, St b) -> St {", 1)
        for line in combine(red.op, red.acc):
            e(line, 2)
        e("};", 1)

    def stores(self, at: str) -> str:
        """Statements writing `st` to the partial buffers at element `at`."""
        from .codegen import mtype
        text = "".join(f"{partial_name(n)}[{at}] = ({mtype(r.acc)})st.{self.fields[n]}; "
                       for n, r in enumerate(self.reds))
        return text + (f"pi[{at}] = st.i; " if self.second else "")

    def loaded(self, at: str) -> str:
        """The state read back from the partial buffers at element `at`."""
        vals = [f"({partial_name(n)}[{at}] != 0)" if r.acc.is_bool else f"{partial_name(n)}[{at}]"
                for n, r in enumerate(self.reds)]
        if not self.multi:
            vals.append(f"pi[{at}]" if self.second else "0")
        return f"St{{{', '.join(vals)}}}"

    @property
    def second(self) -> bool:
        return second_partial(self.red.op, self.red.acc) is not None

    def emit(self) -> None:
        g, k, red = self.g, self.k, self.red
        from .codegen import cast, ctype
        acc, is_arg, is_lse = red.acc, red.op in ("argmax", "argmin"), red.op == "logsumexp"
        e = g.emit
        g.header()
        red_n = " * ".join(f"n{d}" for d in range(k.n_out, k.ndim)) or "1"
        e(f"const u64 n_red = (u64)({red_n});", 1)
        self.state()
        # full-space inputs: per-output base positions, then the element
        full = [i for i, inp in enumerate(k.inputs) if inp.space == "full"]
        nb = max(len(full), 1)
        e("auto bases = [&](u64 o, i64* b) {", 1)
        idx = g.unravel("o", 0, k.n_out, "o", 2)
        for j, i in enumerate(full):
            slot = g.lay.inputs[i][0]
            e(f"b[{j}] = {g.dot(g.a(slot.offset), idx, slot, 0, k.inputs[i].inner)};", 2)
        if not full:
            e("b[0] = 0; (void)o;", 2)
        e("};", 1)
        e("auto elem = [&](St& st, const i64* b, u64 r) {", 1)
        ridx = g.unravel("r", k.n_out, k.ndim, "r", 2)
        pos: dict[int, str] = {}

        def leaf(x):
            if isinstance(x, Load):
                i = x.input
                if i not in pos:
                    slot = g.lay.inputs[i][0]
                    p = g.fresh("p")
                    e(f"const i64 {p} = "
                      f"{g.dot(f'b[{full.index(i)}]', ridx, slot, k.n_out, k.inputs[i].inner)};", 2)
                    pos[i] = p
                return g.load(i, pos[i], 2)
            if isinstance(x, Scalar):
                return g.scalar_leaf(x)
            raise TypeError(f"{x} is not allowed in a reduction prologue")
        vals = g.evaluate([r.expr for r in self.reds], leaf, 2)  # siblings share subexpressions
        xs = [cast(vals[id(r.expr)], r.expr.dtype, r.acc) for r in self.reds]
        if self.multi:
            for n, (r, x) in enumerate(zip(self.reds, xs)):
                e(f"st.v{n} = {fold(r.op, r.acc, f'st.v{n}', x)};", 2)
        elif is_lse:  # the element is the pair (x, 1), or (-inf, 0)
            e(f"const {ctype(acc)} xv = {xs[0]};", 2)
            e(f"st = comb(st, St{{xv, xv == {identity('max', acc)} ? 0 : 1}});", 2)
        else:
            e(f"st = comb(st, St{{{xs[0]}, {'(i64)r' if is_arg else '0'}}});", 2)
        e("};", 1)
        # combine across a warp, then across the block through shared memory
        e("auto warp_comb = [&](St st) -> St {", 1)
        e("for (int d = 16; d > 0; d >>= 1) {", 2)
        moves = " ".join(f"o.{f} = lz_shfl(st.{f}, d);" for f in self.fields)
        e(f"St o; {moves} st = comb(st, o);", 3)
        e("}", 2)
        e("return st;", 2)
        e("};", 1)
        e("__shared__ St sh[32];", 1)
        e(f"__shared__ St colsh[{COL_BLOCK}];", 1)
        e("auto block_comb = [&](St st) -> St {", 1)
        e("const unsigned lane = threadIdx.x & 31u, wid = threadIdx.x >> 5;", 2)
        e("st = warp_comb(st);", 2)
        e("if (lane == 0) sh[wid] = st;", 2)
        e("__syncthreads();", 2)
        e("if (wid == 0) { st = lane < (blockDim.x >> 5) ? sh[lane] : ident; "
          "st = warp_comb(st); }", 2)
        e("__syncthreads();", 2)
        e("return st;", 2)
        e("};", 1)
        # epilogue: once per output element
        e("auto fin = [&](u64 o, St st) {", 1)
        res = "st.i" if is_arg else "st.v"
        if is_lse:  # m + log(s) for a finite max (v - v == 0), else the max itself
            res = "(st.v - st.v == 0 ? st.v + lz_log(st.i) : st.v)"
        # logsumexp's parts: "max" is v; "log_sum" is log(s) for a finite max, else NaN (v - v)
        values = {"": (res, int64_or(acc, is_arg)), "max": ("st.v", acc),
                  "log_sum": ("(st.v - st.v == 0 ? lz_log(st.i) : st.v - st.v)", acc)}
        reads = dict.fromkeys(x for o in k.outputs for x in postorder([o.expr])
                              if isinstance(x, Reduced))
        names = {}
        for n, x in enumerate(reads):
            names[x] = f"red{n}"
            value, dtype = (f"st.v{x.index}", self.reds[x.index].acc) if self.multi \
                else values[x.part]
            e(f"const {ctype(x.dtype)} red{n} = {cast(value, dtype, x.dtype)};", 2)
        g.out_space(g.unravel("o", 0, k.n_out, "o", 2), 2, reduced=names)
        e("};", 1)
        # strategies
        e(f"i64 b[{nb}];", 1)
        e("const u64 gtid = (u64)blockIdx.x * blockDim.x + threadIdx.x;", 1)
        e("const u64 gsize = (u64)blockDim.x * gridDim.x;", 1)
        e("if (mode == 1) {  /* thread per output */", 1)
        e("for (u64 o = gtid; o < n_out; o += gsize) {", 2)
        e("bases(o, b); St st = ident;", 3)
        e("for (u64 r = 0; r < n_red; ++r) elem(st, b, r);", 3)
        e("fin(o, st);", 3)
        e("}", 2)
        e("} else if (mode == 4) {  /* warp per output */", 1)
        e("const unsigned lane = threadIdx.x & 31u;", 2)
        e("for (u64 o = gtid >> 5; o < n_out; o += gsize >> 5) {", 2)
        e("bases(o, b); St st = ident;", 3)
        strided(e, "lane", "n_red", "32", 3, not is_arg)
        e("st = warp_comb(st);", 3)
        e("if (lane == 0) fin(o, st);", 3)
        e("}", 2)
        e("} else if (mode == 0) {  /* block per output */", 1)
        e("for (u64 o = blockIdx.x; o < n_out; o += gridDim.x) {", 2)
        e("bases(o, b); St st = ident;", 3)
        strided(e, "threadIdx.x", "n_red", "blockDim.x", 3, not is_arg)
        e("st = block_comb(st);", 3)
        e("if (threadIdx.x == 0) fin(o, st);", 3)
        e("}", 2)
        e("} else if (mode == 2) {  /* partials: nparts chunks per output */", 1)
        e("const u64 P = (u64)nparts, chunk = (n_red + P - 1) / P;", 2)
        e("for (u64 w = blockIdx.x; w < n_out * P; w += gridDim.x) {", 2)
        e("const u64 o = w / P, lo = (w % P) * chunk;", 3)
        e("const u64 hi = lo + chunk < n_red ? lo + chunk : n_red;", 3)
        e("bases(o, b); St st = ident;", 3)
        strided(e, "lo + threadIdx.x", "hi", "blockDim.x", 3, not is_arg)
        e("st = block_comb(st);", 3)
        e(f"if (threadIdx.x == 0) {{ {self.stores('w')}}}", 3)
        e("}", 2)
        e("} else if (mode == 5) {  /* column tiles: lanes take 32 neighbouring outputs */", 1)
        e("const unsigned lane = threadIdx.x & 31u, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;", 2)
        e("const u64 P = (u64)nparts, chunk = (n_red + P - 1) / P, tiles = (n_out + 31) / 32;", 2)
        e("for (u64 w = blockIdx.x; w < tiles * P; w += gridDim.x) {", 2)
        e("const u64 o = (w / P) * 32 + lane, p = w % P, lo = p * chunk;", 3)
        e("const u64 hi = lo + chunk < n_red ? lo + chunk : n_red;", 3)
        e("St st = ident;", 3)
        e("if (o < n_out) {", 3)
        e("bases(o, b);", 4)
        strided(e, "lo + wid", "hi", "nw", 4, not is_arg)
        e("}", 3)
        e("colsh[threadIdx.x] = st;", 3)
        e("__syncthreads();", 3)
        e("if (wid == 0) {", 3)
        e("for (unsigned k = 1; k < nw; ++k) st = comb(st, colsh[k * 32 + lane]);", 4)
        e(f"if (o < n_out) {{ if (P == 1) fin(o, st); else {{ {self.stores('o * P + p')}}} }}", 4)
        e("}", 3)
        e("__syncthreads();", 3)
        e("}", 2)
        e("} else {  /* 3: finalize partials */", 1)
        e("const u64 P = (u64)nparts;", 2)
        e("for (u64 o = blockIdx.x; o < n_out; o += gridDim.x) {", 2)
        e("St st = ident;", 3)
        e(f"for (u64 p = threadIdx.x; p < P; p += blockDim.x) "
          f"st = comb(st, {self.loaded('o * P + p')});", 3)
        e("st = block_comb(st);", 3)
        e("if (threadIdx.x == 0) fin(o, st);", 3)
        e("}", 2)
        e("}", 1)


def strided(e, lo: str, hi: str, step: str, ind: int, unroll: bool) -> None:
    """`for (r = lo; r < hi; r += step) elem(st, b, r)`, unrolled with four states
    in flight. `comb` is associative and commutative, so they fold into `st` in
    any order. On an H100 (docs/gpu.md) this took a float32 sum of 256 MB from
    0.204 to 0.188 ms and a column sum from 0.192 to 0.161; argmax went from
    0.216 to 0.306 (its state is twice as wide), so arg reductions keep one."""
    if not unroll:
        e(f"for (u64 r = {lo}; r < {hi}; r += {step}) elem(st, b, r);", ind)
        return
    e("{", ind)
    e("St s1 = ident, s2 = ident, s3 = ident;", ind + 1)
    e(f"const u64 step = {step};", ind + 1)
    e(f"u64 r = {lo};", ind + 1)
    e(f"for (; r + 3 * step < {hi}; r += 4 * step) {{", ind + 1)
    e("elem(st, b, r); elem(s1, b, r + step); elem(s2, b, r + 2 * step); "
      "elem(s3, b, r + 3 * step);", ind + 2)
    e("}", ind + 1)
    e(f"for (; r < {hi}; r += step) elem(st, b, r);", ind + 1)
    e("st = comb(comb(st, s1), comb(s2, s3));", ind + 1)
    e("}", ind)


def int64_or(acc: DType, is_arg: bool) -> DType:
    from scheduler.dtypes import int64
    return int64 if is_arg else acc
