"""The CUDA test corpus: real kernels, taken from the scheduler's own plans.

Each entry builds lazy expressions; `scheduler.realize.plan` turns them into
exactly the Kernel IR, Launch and input buffers the CUDA backend would get.
Steps that read an earlier step's output get the reference result of that
step (so every kernel is checked on its own against `interpret.run`).
Shared by tests/test_cuda_codegen.py (NVRTC + host emulation) and
tests/gpu/test_gpu_suite.py (real GPU).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import lazy
import lazy.numpy as lnp
from scheduler import interpret
from scheduler.graph import host_view
from scheduler.kernel_ir import Kernel, Launch, Op, postorder
from scheduler.realize import plan

INEXACT_OPS = {"exp", "expm1", "log", "sin", "cos", "tan", "tanh", "sigmoid", "pow", "asin", "acos", "atan",
               "atan2"}
DTYPES = ["bool", "int32", "int64", "float32", "float64"]
# every reduction strategy, and the two-pass ones with a forced 3-way split
REDUCE_MODES = ((None, None), (0, None), (1, None), (2, None), (2, 3), (4, None), (5, None),
                (5, 3))


@dataclass
class Case:
    name: str
    kernel: Kernel
    launch: Launch
    inputs: list                       # flat NumPy arrays (None for iota)
    expected: list[np.ndarray] = field(default_factory=list)  # interpret.run's outputs, one
    # per kernel output; outputs that write one buffer (a reduction's parts) share its array
    inexact: bool = False              # transcendental ops: compare with a tolerance
    modes: tuple = ((None, None),)     # (mode, nparts) to run; None: the default choice

    def fresh(self, make: Callable[[np.ndarray], object]) -> list:
        """Output arrays to run the kernel into, `make(expected)` for each distinct
        buffer, shared by the outputs that write it (as the scheduler binds them)."""
        made: dict[int, object] = {}
        for e in self.expected:
            if id(e) not in made:
                made[id(e)] = make(e)
        return [made[id(e)] for e in self.expected]


def values(rng: np.random.Generator, dtype: str, shape, special: bool = True) -> np.ndarray:
    """Quarter-integers (exact sums in any order), small ints, some extremes and NaN/inf."""
    n = int(np.prod(shape))
    if dtype == "bool":
        x = rng.random(n) < 0.5
    elif dtype.startswith("int"):
        x = rng.integers(-9, 10, n).astype(dtype)
        if special and n > 4:
            info = np.iinfo(dtype)
            x[rng.random(n) < 0.04] = info.min
            x[rng.random(n) < 0.04] = info.max
            x[rng.random(n) < 0.08] = 0
    else:
        x = (rng.integers(-32, 33, n) / 4).astype(dtype)
        if special and n > 4:
            for v in (np.nan, np.inf, -np.inf, -0.0):
                x[rng.random(n) < 0.03] = v
    return x.reshape(shape)


def is_inexact(k: Kernel) -> bool:
    if k.reduce is not None and k.reduce.op == "logsumexp":
        return True
    roots = [o.expr for o in k.outputs] + ([k.reduce.expr] if k.reduce else [])
    return any(isinstance(e, Op) and e.name in INEXACT_OPS for e in postorder(roots))


def cases_from(name: str, tensors: list) -> list[Case]:
    """Plan `tensors` and turn every kernel step into a Case with reference outputs."""
    sched = plan([t._buf for t in tensors if t._buf.pending])
    known: dict[int, np.ndarray] = {}
    out = []
    for n, step in enumerate(sched.steps):
        def arr(b):
            return b.array if b.array is not None else known[id(b)]
        if step.kernel is None:  # extern matmul: compute with NumPy for later steps
            node = step.group.root.node
            res = np.matmul(*[host_view(arr(b), v) for b, v in node.srcs])
            known[id(step.outputs[0])] = np.ascontiguousarray(res).reshape(-1)
            continue
        ins = [None if b is None else arr(b) for b in step.inputs]
        ref = [np.zeros(b.size, b.dtype.np) for b in step.outputs]
        per_output = [ref[i] for i in step.out_index]
        interpret.run(step.kernel, step.launch, ins, per_output)
        for b, r in zip(step.outputs, ref):
            known[id(b)] = r
        modes = REDUCE_MODES if step.kernel.reduce is not None else ((None, None),)
        out.append(Case(f"{name}/{n}:{step.name}", step.kernel, step.launch, ins, per_output,
                        is_inexact(step.kernel), modes))
    return out


def _arr(rng, dtype, shape, **kw):
    return lazy.asarray(values(rng, dtype, shape, **kw))


def builders() -> dict[str, Callable[[np.random.Generator], list]]:
    """name -> function(rng) returning the lazy tensors to plan."""
    B: dict[str, Callable] = {}

    # -- elementwise: every op on every dtype it takes, fused a few per kernel ---------
    for d in DTYPES:
        def arith(rng, d=d):
            a, b = _arr(rng, d, (7, 5)), _arr(rng, d, (7, 5))
            outs = [a + b, a * b, lazy.maximum(a, b), lazy.minimum(a, b), a == b, a != b,
                    a < b, a <= b, a > b, a >= b, abs(a), a // b, a % b]
            if d != "bool":
                outs += [a - b, -a]
            if d in ("bool", "int32", "int64"):
                outs += [a & b, a | b, a ^ b, ~a]
            if d != "bool":
                outs += [a / b]
            return outs
        B[f"ops/{d}"] = arith
        for e in DTYPES:
            B[f"cast/{d}->{e}"] = lambda rng, d=d, e=e: [_arr(rng, d, (33,)).astype(e)]
        B[f"where/{d}"] = lambda rng, d=d: [lazy.where(_arr(rng, "bool", (4, 6)),
                                                       _arr(rng, d, (4, 6)), _arr(rng, d, (6,)))]
    for d in ("float32", "float64", "int32", "int64", "bool"):
        def trans(rng, d=d):
            a = _arr(rng, d, (6, 7))
            outs = [lazy.exp(a), lazy.log(abs(a)), lazy.sqrt(abs(a)), lazy.sin(a), lazy.cos(a),
                    lazy.tanh(a), lazy.sigmoid(a)]
            if d.startswith("float"):
                outs += [a ** _arr(rng, d, (6, 7)), lnp.expm1(a * 0.25)]
            return outs
        B[f"transcendental/{d}"] = trans
    B["pow/int"] = lambda rng: [lazy.asarray(rng.integers(-3, 4, (5, 6)).astype("int64"))
                                ** lazy.asarray(rng.integers(0, 5, (5, 6)).astype("int64")),
                                lazy.asarray(rng.integers(-3, 4, 9).astype("int32")) ** 3]
    B["mixed/promote"] = lambda rng: [_arr(rng, "int32", (3, 4)) + _arr(rng, "float32", (4,)),
                                      _arr(rng, "bool", (3, 4)) * 2.5 + _arr(rng, "int64", (3, 1)),
                                      _arr(rng, "float32", (5,)) * 1.5 - 2]
    # -- views: strided, broadcast, negative strides, chains, iota ---------------------
    B["view/transpose"] = lambda rng: [_arr(rng, "float32", (6, 5)).T * 2 + 1]
    B["view/negative"] = lambda rng: [_arr(rng, "int32", (8, 9))[::-2, ::-3] + 1]
    B["view/broadcast"] = lambda rng: [_arr(rng, "float64", (4, 1, 3)) * _arr(rng, "float64", (5, 1))]
    B["view/offset"] = lambda rng: [_arr(rng, "int64", (10, 10))[3:7, 2:9:2] * 3]
    B["view/expand"] = lambda rng: [_arr(rng, "float32", (3,)).expand(4, 3) + _arr(rng, "float32", (4, 3))]

    def chained(rng):
        x = _arr(rng, "float32", (6, 8))
        y = (x.T * 2)[1:, ::2].reshape(-1)[3:20] + 1
        z = (_arr(rng, "int32", (5, 6)) + 1).T.reshape(30)[::3]
        return [y, z]
    B["view/chain"] = chained
    B["view/diagonal"] = lambda rng: [(_arr(rng, "float32", (5, 5)) + 1).diagonal() * 2]
    B["iota"] = lambda rng: [lazy.arange(24).reshape(4, 6).T * 2, lazy.eye(5) * 3,
                             lazy.linspace(0, 1, 9) + 1]
    B["rank0"] = lambda rng: [lazy.asarray(np.float32(2.5)) * 2]
    B["scalars"] = lambda rng: [_arr(rng, "float32", (7,)) * 0.1 + 3,
                                _arr(rng, "int64", (7,)) * 3 - 7, _arr(rng, "bool", (7,)) | True]
    B["size1"] = lambda rng: [_arr(rng, "float64", (1, 1)) + 1, _arr(rng, "int32", (1,)) * 2]
    # -- reductions: every op, axes, prologue and epilogue fusion ----------------------
    for op in ("sum", "prod", "max", "min", "argmax", "argmin", "any", "all"):
        for d in DTYPES:
            def red(rng, op=op, d=d):
                x = _arr(rng, d, (5, 37))
                if op == "prod" and d.startswith("float"):
                    x = lazy.asarray(rng.choice([-1.0, 1.0, 0.5, 2.0], (5, 37)).astype(d))
                f = getattr(x, op)
                # other axes change only strides (runtime), except for a few dtypes
                return [f(axis=1), f(axis=0), f()] if d in ("float32", "int64") else [f(axis=1)]
            B[f"reduce/{op}/{d}"] = red
    B["reduce/axes3"] = lambda rng: [_arr(rng, "float32", (4, 5, 6)).sum(axis=(0, 2)),
                                     _arr(rng, "int32", (4, 5, 6)).max(axis=(1,)),
                                     _arr(rng, "float64", (4, 5, 6)).argmin(axis=2),
                                     _arr(rng, "float32", (4, 5, 6)).transpose(2, 0, 1).sum(axis=(1, 2))]
    B["reduce/prologue"] = lambda rng: [(_arr(rng, "float32", (9, 40)) * 2 + 1).sum(axis=1),
                                        (_arr(rng, "float64", (30, 7)).T ** 2).max(axis=1),
                                        (_arr(rng, "int32", (6, 6)) > 0).any(axis=0)]
    B["reduce/epilogue"] = lambda rng: [(_arr(rng, "float32", (9, 40)).sum(axis=1) * 0.5 + 1),
                                        _arr(rng, "float64", (8, 50)).mean(axis=1),
                                        (lazy.exp(_arr(rng, "float32", (6, 70))).sum(axis=1) + 2)]
    B["reduce/softmax"] = lambda rng: [_softmax(_arr(rng, "float32", (5, 33), special=False))]
    for d in ("float32", "float64"):
        def lse(rng, d=d):
            x = _arr(rng, d, (6, 37))  # quarter-integers with NaN, +-inf, -0.0
            rows = lazy.asarray(np.array([[-np.inf] * 5, [np.inf, 1, 2, -np.inf, 3],
                                          [1e4, -1e4, 1e4, 0, 1], [-1e4] * 5], d))
            far = lazy.asarray(np.array([[1e16, 1e16, 0, 1e16, 1],  # ties: max + log_sum
                                         [np.finfo(d).min] * 5], d))  # is max, log_sum lost
            return [lazy.logsumexp(x, axis=1), lazy.logsumexp(x, axis=0), lazy.logsumexp(x),
                    lazy.logsumexp(rows, axis=1), lazy.logsumexp(_arr(rng, d, (3, 0)), axis=1),
                    lazy.softmax(x * 100, axis=1), lazy.log_softmax(x, axis=0),
                    lazy.softmax(far, axis=1), lazy.log_softmax(rows, axis=1)]
        B[f"reduce/logsumexp/{d}"] = lse
    B["reduce/view"] = lambda rng: [_arr(rng, "int64", (12, 10))[::-2, 1::3].sum(axis=0),
                                    _arr(rng, "float32", (20, 3)).T.argmax(axis=1)]
    B["reduce/empty"] = lambda rng: [_arr(rng, "float32", (3, 0)).sum(axis=1),
                                     _arr(rng, "int64", (0, 4)).prod(axis=0),
                                     _arr(rng, "bool", (2, 0)).all(axis=1)]
    B["reduce/size1"] = lambda rng: [_arr(rng, "float64", (1, 1)).sum(), _arr(rng, "int32", (7, 1)).argmax(axis=1)]
    B["reduce/large"] = lambda rng: [_arr(rng, "float32", (3, 20000), special=False).sum(axis=1),
                                     _arr(rng, "float32", (50000,)).argmax(),
                                     _arr(rng, "int32", (700, 40)).sum(axis=0)]
    B["reduce/iota"] = lambda rng: [lazy.arange(100).reshape(10, 10).sum(axis=1)]
    return B


def _softmax(x):
    m = x.max(axis=1, keepdims=True)
    e = lazy.exp(x - m)
    return e / e.sum(axis=1, keepdims=True)


def corpus(seed: int = 0) -> list[Case]:
    """Every Case of `builders()`, deterministic for `seed`."""
    out = []
    for name, build in builders().items():
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        with np.errstate(all="ignore"):
            out += cases_from(name, build(rng))
    return out
