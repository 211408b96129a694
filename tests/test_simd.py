"""cpu_backend/simd.py: the generator's own vector loops for elementwise rows.

Which kernels get them (`simd.lanes`, read from the generated IR too); that
they compute exactly what the scalar emitters compute (every vectorized op
and dtype, bit for bit against the same kernel left to LLVM's vectorizer);
and, with hypothesis, random kernels over rows of 0-70 elements whose
operands step by 1, -1, 2 and 0, against the reference interpreter.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpu_backend import CPUBackend, simd
from cpu_backend.jit import JIT
from scheduler.dtypes import ALL, bool_, float32, float64, int32, int64
from scheduler.kernel_ir import Cast, Gather, Input, Kernel, Launch, Load, Op, Output, Scalar
from scheduler.ops import ELEMENTWISE
from scheduler.view import View

from cpu_backend_helpers import BE, contiguous_kernel, run_both, run_flat, values
from ir_strategies import _span, binop, expr_tree, unop

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _vector_kinds(name: str) -> str:
    return simd._VECTOR_OPS.get(name, "")


def test_lanes_is_one_register_of_the_widest_type():
    add = lambda x, y: binop("add", x, y)  # noqa: E731
    assert simd.lanes(contiguous_kernel(add, [float32, float32], float32)) == 16
    assert simd.lanes(contiguous_kernel(add, [float32, float64], float64)) == 8
    assert simd.lanes(contiguous_kernel(add, [int32, int32], int32)) == 16
    gt = contiguous_kernel(lambda x, y: binop("gt", x, y), [float32, float32], bool_)
    assert simd.lanes(gt) is None  # bool in memory: LLVM's vectorizer, 4x wider
    where = contiguous_kernel(lambda x, y: Op("where", (binop("gt", x, y), x, y), float32),
                              [float32, float32], float32)
    assert simd.lanes(where) == 16  # bool in registers only


def test_row_invariant_values_leave_the_loop_wide():
    """A float64 value that is the same along a row (read at inner stride 0,
    as softmax's float64 logsumexp split into hi + lo) is computed once per
    row, so its float64 ops do not halve a float32 loop; the same value read
    along the row does. Values against the interpreter on rows of 37."""
    def kernel(inner):
        c = Cast(binop("add", Load(1, float64), Load(1, float64)), float32)
        return Kernel(2, 0, (Input(float32, inner=1), Input(float64, inner=inner)), (), None,
                      (Output(float32, binop("sub", Load(0, float32), c), inner=1),))
    assert simd.lanes(kernel(0)) == 16
    assert simd.lanes(kernel(1)) == 8
    assert "load <16 x float>" in BE.source(kernel(0))
    rng = np.random.default_rng(5)
    x, c = values(rng, float32, 3 * 37), rng.standard_normal(3) * 1e3
    launch = Launch((3, 37), [[View.contiguous((3, 37))], [View((3, 37), (1, 0), 0)]],
                    [View.contiguous((3, 37))])
    ours, ref = run_both(kernel(0), launch, [x, c], [3 * 37])
    np.testing.assert_array_equal(ours[0], ref[0])


def test_out_of_scope_kernels_keep_llvms_vectorizer():
    ipow = contiguous_kernel(lambda x, y: binop("pow", x, y), [int64, int64], int64)
    gather = Kernel(1, 0, (Input(int64, inner=1), Input(float32, indirect=True)), (), None,
                    (Output(float32, Gather(1, Load(0, int64), float32), inner=1),))
    chained = Kernel(1, 0, (Input(float32, chain=(1,)),), (), None,
                     (Output(float32, Load(0, float32), inner=1),))
    positional = Kernel(1, 0, (Input(float32, inner=1),), (), None,
                        (Output(float32, Load(0, float32), pos=Scalar(0, int64)),))
    for k in (ipow, gather, chained, positional):
        assert simd.lanes(k) is None
    assert "<8 x i64>" not in BE.source(ipow)
    exp = contiguous_kernel(lambda x: unop("exp", x), [float32], float32)
    src = BE.source(exp)
    assert "load <16 x float>" in src and "store <16 x float>" in src


def test_runtime_strides_other_than_two_stay_scalar():
    """A row copy with an inner stride known only at run time, or an output
    that does not step by 1, gets no vector loop (LLVM's copy of the former
    is "scalar" too: loops.inner_hint)."""
    from llvmlite import ir
    i64 = ir.IntType(64)
    run = ir.Function(ir.Module(), ir.FunctionType(i64, [i64]), "f").args[0]
    one, two = ir.Constant(i64, 1), ir.Constant(i64, 2)
    assert simd.steps_fit([two, None], [one])
    assert not simd.steps_fit([run], [one])
    assert not simd.steps_fit([one], [two])


def _op_cases():
    for name in sorted(ELEMENTWISE):
        for d in ALL:
            prim = ELEMENTWISE[name]
            if d.kind not in prim.kinds or d.kind not in _vector_kinds(name) or d.is_bool or \
                    name == "where" or (name == "log2" and d == float64):
                continue
            if not prim.result_dtype(prim.compute_dtype(d)).is_bool:
                yield name, d


@pytest.mark.parametrize("name,d", list(_op_cases()), ids=lambda v: getattr(v, "name", v))
def test_vector_loop_matches_llvms_bit_for_bit(name, d, monkeypatch):
    """The same kernel with simd.py's loop and with LLVM's vectorizer (lanes
    patched to None): the emitters are shared, so every bit must agree,
    NaN payloads and signed zeros included, in the vector body and the
    scalar remainder (301 elements: 18 vectors of 16 and 13 more)."""
    rng = np.random.default_rng(zlib.crc32(f"{name} {d.name}".encode()))
    arity = ELEMENTWISE[name].arity
    data = [values(rng, d, 301) for _ in range(arity)]
    if d.is_float:  # wide magnitudes too: exp overflow, the trig slow path
        for x in data:
            x[::7] *= d.np.type(1e3 if d == float32 else 1e30)
    build = (lambda x: unop(name, x)) if arity == 1 else (lambda x, y: binop(name, x, y))
    k = contiguous_kernel(build, [d] * arity, None)
    e = k.outputs[0].expr
    k = Kernel(1, 0, k.inputs, (), None, (Output(e.dtype, e, inner=1),))
    assert simd.lanes(k) is not None
    ours, ref = run_flat(k, data)
    monkeypatch.setattr(simd, "lanes", lambda k: None)
    llvm_path = CPUBackend(jit=JIT(cache_dir=None))
    assert "load <" not in llvm_path.source(k)  # (sincos.py's vector functions load nothing)
    theirs, _ = run_flat(k, data, llvm_path)
    a, b = ours[0], theirs[0]
    if a.dtype.kind == "f":
        a, b = a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}")
    np.testing.assert_array_equal(a, b)
    if e.dtype.is_float and name not in ("copysign",):
        np.testing.assert_allclose(ours[0], ref[0], rtol=2e-6 if e.dtype == float32 else 1e-13,
                                   atol=1e-30, equal_nan=True)


# -- random kernels over long rows ----------------------------------------------------------
_OPS = sorted(n for n, p in ELEMENTWISE.items()
              if set(p.kinds) <= set(_vector_kinds(n)) and n not in
              ("exp", "expm1", "log", "log10", "sin", "cos", "tan", "tanh", "sigmoid", "sqrt"))


_MEMORY = [d for d in ALL if not d.is_bool]  # dtypes of operands in memory (simd.lanes)


@st.composite
def long_rows(draw):
    """A 2-D elementwise kernel whose last axis runs 0-70 elements, inputs
    stepping by 1, -1, 0 (compile-time) or 2 (the runtime-stride copy)."""
    rows, cols = draw(st.integers(1, 3)), draw(st.integers(0, 70))
    shape = (rows, cols)
    inputs, views, sizes = [], [], []
    for _ in range(draw(st.integers(1, 3))):
        step = draw(st.sampled_from([1, 1, -1, 2, 0]))
        row = draw(st.sampled_from([1, -1, 0])) * max(1, cols * abs(step))
        lo, hi = _span(shape, (row, step))
        off = -lo + draw(st.integers(0, 2))
        views.append([View(shape, (row, step), off)])
        sizes.append(off + hi + 1)
        inputs.append(Input(draw(st.sampled_from(_MEMORY)), inner=None if step == 2 else step))
    scalars = tuple(draw(st.lists(st.sampled_from(ALL), max_size=2)))
    leaves = [Load(i, x.dtype) for i, x in enumerate(inputs)]
    leaves += [Scalar(i, d) for i, d in enumerate(scalars)]
    outputs = []
    for _ in range(draw(st.integers(1, 2))):
        e = draw(expr_tree(leaves, 3, _OPS))
        od = e.dtype if not e.dtype.is_bool else float32
        outputs.append(Output(draw(st.sampled_from([od, od] + _MEMORY)), e, inner=1))
    k = Kernel(2, 0, tuple(inputs), scalars, None, tuple(outputs))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bufs = [values(rng, inp.dtype, n) for inp, n in zip(inputs, sizes)]
    svals = [values(rng, d, 1, special=False)[0].item() for d in scalars]
    launch = Launch(shape, views, [View.contiguous(shape)] * len(outputs), svals)
    return k, launch, bufs, [rows * cols] * len(outputs)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(long_rows())
def test_random_long_rows_match_interpreter(case):
    k, launch, bufs, sizes = case
    assert simd.lanes(k) is not None
    ours, ref = run_both(k, launch, bufs, sizes)
    for a, b in zip(ours, ref):
        np.testing.assert_array_equal(a, b)


def test_in_place_row_reads_before_it_writes():
    """The in-place variant reads through the output's own pointer: a whole
    vector is loaded before any of it is stored."""
    import lazy
    a = lazy.asarray(np.arange(1000, dtype=np.float32))
    for _ in range(2):  # the second run compiles and takes the in-place copy
        a[3:990] = a[3:990] * 2 + 1
    expect = np.arange(1000, dtype=np.float32)
    for _ in range(2):
        expect[3:990] = expect[3:990] * 2 + 1
    np.testing.assert_array_equal(a.numpy(), expect)


def test_streamed_rows_use_vector_loops():
    """The streaming variant's 256-byte blocks and its direct head and tail
    run simd.py's loops too (their values: tests/test_streaming.py)."""
    from cpu_backend.codegen import generate
    from cpu_backend.keys import STREAM
    k = contiguous_kernel(lambda x: binop("mul", x, x), [float32], float32)
    src = str(generate(k, "x86_64-unknown-linux-gnu", "", STREAM))
    stores = [ln for ln in src.splitlines() if "store <16 x float>" in ln]
    streamed = [ln for ln in stores if "!nontemporal" in ln]
    assert len(streamed) == 4  # a 256-byte block, copied out 64 bytes at a time
    assert len(stores) - len(streamed) == 2  # into the block; the direct head and tail
