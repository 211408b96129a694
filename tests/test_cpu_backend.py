"""Differential tests: CPUBackend against the NumPy reference interpreter.

Kernels are built by hand and by hypothesis (random shapes, strides incl.
negative and 0, offsets, view chains, every dtype and op, reductions with
epilogues and out-space loads, iota inputs, scalars). `scheduler.interpret`
defines the semantics; ints and bools must match bitwise, floats exactly
except where an op or a reordered sum allows rounding differences.
"""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpu_backend import CPUBackend
from cpu_backend.jit import JIT
from cpu_backend.pack import LaunchPlan
from scheduler import interpret
from scheduler.dtypes import ALL, DType, bool_, float32, float64, int32, int64, result_type
from scheduler.kernel_ir import (Cast, Gather, Input, Kernel, Launch, Load, Op, Output, Reduce,
                                 Reduced, Scalar, pack_launch, postorder)
from scheduler.ops import ELEMENTWISE, REDUCTIONS
from scheduler.view import View

# NumPy warns about NaN/overflow casts inside the reference; that is expected here.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BE = CPUBackend()
TRANSCENDENTAL = {"exp", "log", "sin", "cos", "tanh", "sigmoid", "pow",
                  "philox_normal_f32", "philox_normal_f64"}  # Box-Muller: log, sin, cos
EXACT_OPS = sorted(set(ELEMENTWISE) - TRANSCENDENTAL)
SMOOTH_OPS = ["add", "sub", "mul", "maximum", "minimum", "neg", "abs", "copy"]


# -- helpers -----------------------------------------------------------------------------
def values(rng: np.random.Generator, d: DType, n: int, special: bool = True) -> np.ndarray:
    """Quarter-integers (sums are exact in any order), small ints, a few extremes."""
    if d.is_bool:
        return rng.random(n) < 0.5
    if d.is_int:
        x = rng.integers(-20, 21, n).astype(d.np)
        if special and n:
            info = np.iinfo(d.np)
            x[rng.random(n) < 0.05] = info.min
            x[rng.random(n) < 0.05] = info.max
        return x
    x = (rng.integers(-32, 33, n) / 4).astype(d.np)
    if special and n:
        for v in (np.nan, np.inf, -np.inf, -0.0):
            x[rng.random(n) < 0.03] = v
    return x


def run_both(k: Kernel, launch: Launch, inputs, out_sizes, backend: CPUBackend = BE):
    """(ours, reference) output buffers, both pre-filled with the same junk."""
    ours = [np.full(n, 7, o.dtype.np) for n, o in zip(out_sizes, k.outputs)]
    ref = [x.copy() for x in ours]
    ok, why = backend.supports(k)
    assert ok, why
    c, _ = backend.compile(k)
    backend.run(c, k, launch, inputs, ours)
    interpret.run(k, launch, inputs, ref)
    return ours, ref


def assert_same(ours, ref, exact: bool = True) -> None:
    for a, b in zip(ours, ref):
        if a.dtype.kind == "f" and not exact:
            scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isinf(b), 0, b)), initial=0)))
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * scale, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)


def contiguous_kernel(expr_fn, in_dtypes, out_dtype, ndim=1):
    loads = [Load(i, d) for i, d in enumerate(in_dtypes)]
    e = expr_fn(*loads)
    return Kernel(ndim, 0, tuple(Input(d, inner=1) for d in in_dtypes), (), None,
                  (Output(out_dtype, e, inner=1),))


def run_flat(k: Kernel, arrays, backend: CPUBackend = BE):
    n = len(arrays[0])
    launch = Launch((n,), [[View.contiguous((n,))] for _ in arrays], [View.contiguous((n,))])
    return run_both(k, launch, list(arrays), [n], backend)


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


# -- random kernels ----------------------------------------------------------------------
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


@st.composite
def random_kernel(draw, reduce: bool):
    ndim = draw(st.integers(0 if not reduce else 1, 3))
    n_reduce = draw(st.integers(1, ndim)) if reduce else 0
    n_out = ndim - n_reduce
    shape = tuple(draw(st.sampled_from([1, 2, 3, 4, 5, 0])) if draw(st.integers(0, 12))
                  else 0 for _ in range(ndim))
    shape = tuple(n if n else (0 if draw(st.integers(0, 3)) == 0 else 1) for n in shape)
    # interpret.run cannot reshape an empty out space to (out..., -1): keep it non-empty
    shape = tuple(max(n, 1) if d < n_out else n for d, n in enumerate(shape))
    n_in = draw(st.integers(1, 3))
    inputs, views, sizes = [], [], []
    for _ in range(n_in):
        iota = draw(st.integers(0, 5)) == 0
        dt = int64 if iota else draw(st.sampled_from(ALL))
        space = "out" if reduce and n_out and draw(st.integers(0, 2)) == 0 else "full"
        sp_shape = shape if space == "full" else shape[:n_out]
        nchain = draw(st.sampled_from([0, 0, 1, 2]))
        vs, size = draw(view_chain(sp_shape, nchain))
        inner = None
        if vs[0].strides and vs[0].strides[-1] in (0, 1) and draw(st.booleans()):
            inner = vs[0].strides[-1]
        inputs.append(Input(dt, space, tuple(v.ndim for v in vs[1:]), inner, iota))
        views.append(vs)
        sizes.append(size)
    scalars = tuple(draw(st.lists(st.sampled_from(ALL), max_size=2)))
    full_leaves = [Load(i, x.dtype) for i, x in enumerate(inputs)]
    full_leaves += [Scalar(i, d) for i, d in enumerate(scalars)]
    red, inexact = None, False
    if reduce:
        op = draw(st.sampled_from(sorted(REDUCTIONS)))
        x = draw(expr_tree(full_leaves, 3, EXACT_OPS))
        r = REDUCTIONS[op]
        red = Reduce(op, x, r.acc_dtype(x.dtype), r.result_dtype(x.dtype))
        inexact = op in ("sum", "prod") and red.acc.is_float
        out_leaves = [Load(i, x.dtype) for i, x in enumerate(inputs) if x.space == "out"]
        out_leaves += [Scalar(i, d) for i, d in enumerate(scalars)] + [Reduced(red.dtype)] * 3
    else:
        out_leaves = full_leaves
    outputs = []
    for _ in range(draw(st.integers(1, 2))):
        if reduce and draw(st.booleans()):
            e = Reduced(red.dtype)
        else:
            ops = SMOOTH_OPS if inexact else EXACT_OPS
            e = draw(expr_tree(out_leaves, 3, ops, float_casts_only=inexact))
        od = draw(st.sampled_from([e.dtype] * 3 + list(ALL))) if not inexact else e.dtype
        outputs.append(Output(od, e))
    out_views, out_sizes = [], []
    for _ in outputs:
        v, size = draw(out_view(shape[:n_out]))
        out_views.append(v)
        out_sizes.append(size)
    outputs = [Output(o.dtype, o.expr, 1 if v.strides and v.strides[-1] == 1
                      and draw(st.booleans()) else None) for o, v in zip(outputs, out_views)]
    k = Kernel(ndim, n_reduce, tuple(inputs), scalars, red, tuple(outputs))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    bufs = [None if inp.iota else values(rng, inp.dtype, n) for inp, n in zip(inputs, sizes)]
    svals = [values(rng, d, 1, special=False)[0].item() for d in scalars]
    launch = Launch(shape, views, out_views, svals)
    return k, launch, bufs, out_sizes, inexact


SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


@SETTINGS
@given(random_kernel(reduce=False))
def test_random_elementwise(case):
    k, launch, bufs, sizes, _ = case
    ours, ref = run_both(k, launch, bufs, sizes)
    assert_same(ours, ref)
    # the tiled elementwise order (forced) gives the same results
    ours, ref = run_both(k, launch, bufs, sizes, BE_TILED)
    assert_same(ours, ref)
    # the backend's cached per-structure packing equals the reference packing
    for got, want in zip(LaunchPlan.of(k).pack(launch), pack_launch(k, launch)):
        np.testing.assert_array_equal(got, want)


BE_TILED = CPUBackend(loop_order="tiled")


@SETTINGS
@given(random_kernel(reduce=True), st.sampled_from(["auto", "tiled"]))
def test_random_reduction(case, order):
    """Both reduction loop orders (per-element and tiled along the out axis)."""
    k, launch, bufs, sizes, inexact = case
    be = BE if order == "auto" else BE_TILED
    if math.prod(launch.shape) == 0 and REDUCTIONS[k.reduce.op].identity is None:
        with pytest.raises(ValueError):
            run_both(k, launch, bufs, sizes, be)
        return
    ours, ref = run_both(k, launch, bufs, sizes, be)
    assert_same(ours, ref, exact=not inexact)


# -- every op, every dtype ---------------------------------------------------------------
def _op_cases():
    for name, prim in ELEMENTWISE.items():
        for d in ALL:
            if d.kind in prim.kinds and name != "where":
                yield name, d


@pytest.mark.parametrize("name,d", list(_op_cases()))
def test_op_matches_numpy(name, d):
    rng = np.random.default_rng(hash((name, d.name)) % 2**32)
    n = 300
    prim = ELEMENTWISE[name]
    a = values(rng, d, n)
    b = values(rng, d, n)
    if name == "pow" and d.is_int:  # NumPy raises on negative integer exponents
        b = np.abs(rng.integers(0, 70, n)).astype(d.np)
    if name == "pow" and d.is_float:
        a = np.abs(a)
    if prim.arity == 1:
        k = contiguous_kernel(lambda x: unop(name, x), [d], None)
    else:
        k = contiguous_kernel(lambda x, y: binop(name, x, y), [d, d], None)
    e = k.outputs[0].expr
    k = Kernel(1, 0, k.inputs, (), None, (Output(e.dtype, e, inner=1),))
    ours, ref = run_flat(k, [a, b][: prim.arity])
    if name in TRANSCENDENTAL and e.dtype.is_float:
        rtol = 2e-6 if e.dtype == float32 else 1e-13
        np.testing.assert_allclose(ours[0], ref[0], rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(ours[0], ref[0])


def test_where_all_dtypes():
    rng = np.random.default_rng(1)
    for d in ALL:
        c, a, b = values(rng, bool_, 100), values(rng, d, 100), values(rng, d, 100)
        k = contiguous_kernel(lambda c, x, y: Op("where", (c, x, y), d), [bool_, d, d], d)
        ours, ref = run_flat(k, [c, a, b])
        np.testing.assert_array_equal(ours[0], ref[0])


@pytest.mark.parametrize("src", ALL, ids=lambda d: d.name)
def test_casts(src):
    specials = {"f": [np.nan, np.inf, -np.inf, -0.0, 0.5, -1.5, 3e9, -3e9, 1e20, 2.0**31,
                      2.0**63, -(2.0**63), 2147483520.0],
                "i": [0, 1, -1, 2**31, -(2**31) - 1], "b": [True, False]}[src.kind]
    rng = np.random.default_rng(2)
    x = np.concatenate([values(rng, src, 64),
                        np.array(specials).astype(src.np) if src.kind != "i"
                        else np.array(specials, np.int64).astype(src.np)])
    for dst in ALL:
        k = contiguous_kernel(lambda a: Cast(a, dst), [src], dst)
        ours, ref = run_flat(k, [x])
        np.testing.assert_array_equal(ours[0], ref[0], err_msg=f"{src.name}->{dst.name}")


def test_int_division_by_zero_and_overflow():
    for d in (int32, int64):
        lo = np.iinfo(d.np).min
        a = np.array([7, -7, 7, -7, 0, lo, lo, 5, -5, lo], d.np)
        b = np.array([0, 0, 2, 2, 0, -1, 1, -3, 3, 0], d.np)
        for name in ("floordiv", "mod"):
            k = contiguous_kernel(lambda x, y: Op(name, (x, y), d), [d, d], d)
            ours, ref = run_flat(k, [a, b])
            np.testing.assert_array_equal(ours[0], ref[0], err_msg=f"{name} {d.name}")
            assert ours[0][0] == 0 and ours[0][1] == 0  # x // 0 == x % 0 == 0, no trap


def test_float_floordiv_mod_edges():
    v = np.array([5.0, -5.0, 0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 7.5, 1e300])
    a, b = np.repeat(v, len(v)), np.tile(v, len(v))
    for d in (float32, float64):
        for name in ("floordiv", "mod"):
            k = contiguous_kernel(lambda x, y: Op(name, (x, y), d), [d, d], d)
            ours, ref = run_flat(k, [a.astype(d.np), b.astype(d.np)])
            np.testing.assert_array_equal(ours[0], ref[0])
            np.testing.assert_array_equal(np.signbit(ours[0]), np.signbit(ref[0]))


# -- reductions by hand --------------------------------------------------------------------
def reduce_kernel(op, d, n_reduce=1, ndim=2, epilogue=None, inner=1):
    r = REDUCTIONS[op]
    red = Reduce(op, Load(0, d), r.acc_dtype(d), r.result_dtype(d))
    e = epilogue(Reduced(red.dtype)) if epilogue else Reduced(red.dtype)
    return Kernel(ndim, n_reduce, (Input(d, inner=inner),), (), red, (Output(e.dtype, e, 1),))


def run_reduce(k, shape, data, backend=BE):
    n_out = len(shape) - k.n_reduce
    out_shape = shape[:n_out]
    launch = Launch(shape, [[View.contiguous(shape)]], [View.contiguous(out_shape)])
    return run_both(k, launch, [data], [math.prod(out_shape)], backend)


def test_nan_max_argmax():
    x = np.array([[1.0, np.nan, 5.0, np.nan], [3.0, 9.0, 9.0, -1.0], [np.nan, 0, 0, 0],
                  [-np.inf, -np.inf, -np.inf, -np.inf]], np.float32)
    for op in ("max", "min", "argmax", "argmin"):
        ours, ref = run_reduce(reduce_kernel(op, float32), x.shape, x.ravel())
        np.testing.assert_array_equal(ours[0], ref[0])
    ours, _ = run_reduce(reduce_kernel("argmax", float32), x.shape, x.ravel())
    assert list(ours[0]) == [1, 1, 0, 0]  # first NaN wins; first of ties; all -inf -> 0


def test_float32_sum_16m_accurate():
    n = 1 << 24
    x = np.random.default_rng(3).random(n, dtype=np.float32)
    k = reduce_kernel("sum", float32, ndim=1)
    launch = Launch((n,), [[View.contiguous((n,))]], [View.contiguous(())])
    out = np.empty(1, np.float32)
    c, _ = BE.compile(k)
    BE.run(c, k, launch, [x], [out])
    exact = np.sum(x, dtype=np.float64)
    assert abs(float(out[0]) - exact) <= 1e-6 * exact


def _big_cases():
    rng = np.random.default_rng(4)
    x = rng.standard_normal(600_000).astype(np.float32)
    x[rng.integers(0, x.size, 20)] = np.nan
    ties = np.round(rng.random(600_000) * 3).astype(np.float64)
    ints = rng.integers(-1000, 1000, 600_000).astype(np.int32)
    return [("argmax", float32, (2, 300_000), x), ("argmin", float32, (1, 600_000), x),
            ("argmax", float64, (3, 200_000), ties), ("max", float32, (2, 300_000), x),
            ("sum", int32, (1, 600_000), ints), ("all", int32, (2, 300_000), ints),
            ("any", int32, (600_000, 1), ints), ("prod", int32, (300, 2000), ints),
            ("sum", float32, (2, 300_000), np.nan_to_num(x)),
            ("sum", float32, (600, 1000), np.nan_to_num(x))]


def test_thread_count_independence():
    one, two = CPUBackend(num_threads=1), CPUBackend(num_threads=2)
    assert one.num_threads == 1 and two.num_threads == 2
    for op, d, shape, data in _big_cases():
        k = reduce_kernel(op, d, epilogue=None)
        a, ref = run_reduce(k, shape, data, one)
        b, _ = run_reduce(k, shape, data, two)
        exact = not (op == "sum" and d.is_float)
        assert_same(a, ref, exact)
        assert_same(b, ref, exact)
        assert_same(b, a, exact)
    # elementwise, split over the out range
    rng = np.random.default_rng(5)
    a, b = rng.random(300_001), rng.random(300_001)
    k = contiguous_kernel(lambda x, y: binop("add", binop("mul", x, x), y), [float64] * 2, float64)
    (r1,), ref = run_flat(k, [a, b], one)
    (r2,), _ = run_flat(k, [a, b], two)
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_array_equal(r1, ref[0])


def test_env_sets_thread_count(monkeypatch):
    monkeypatch.setenv("LAZY_NUM_THREADS", "3")
    assert CPUBackend().num_threads == 3


def test_reduction_epilogue_and_out_space_load():
    """mean-and-center style: out = Reduced / n + bias[out], with bias an out-space load."""
    rng = np.random.default_rng(6)
    shape = (4, 3, 5)
    x = values(rng, float64, 60, special=False)
    bias = values(rng, float64, 4, special=False)
    red = Reduce("sum", Load(0, float64), float64, float64)
    scaled = Op("mul", (Reduced(float64), Scalar(0, float64)), float64)
    e = Op("add", (scaled, Load(1, float64)), float64)
    k = Kernel(3, 2, (Input(float64, inner=1), Input(float64, "out", inner=1)), (float64,), red,
               (Output(float64, e, 1), Output(int64, Cast(Reduced(float64), int64), 1)))
    launch = Launch(shape, [[View.contiguous(shape)], [View.contiguous((4,))]],
                    [View.contiguous((4,))] * 2, [1 / 15])
    ours, ref = run_both(k, launch, [x, bias], [4, 4])
    assert_same(ours, ref, exact=False)


def test_empty_reductions():
    k = reduce_kernel("sum", float32)
    ours, ref = run_reduce(k, (3, 0), np.empty(0, np.float32))
    assert list(ours[0]) == [0, 0, 0]
    with pytest.raises(ValueError):
        run_reduce(reduce_kernel("max", float32), (3, 0), np.empty(0, np.float32))


def test_iota_through_view_chain():
    """arange(12).reshape(3, 4).T: iota positions through a chained view."""
    k = Kernel(2, 0, (Input(int64, chain=(2,), iota=True),), (), None,
               (Output(int64, Load(0, int64), 1),))
    first = View((4, 3), (1, 4), 0)          # transpose of a (3, 4) logical tensor
    chained = View((3, 4), (8, 2), 1)        # that tensor is a strided view of storage
    launch = Launch((4, 3), [[first, chained]], [View.contiguous((4, 3))])
    ours, ref = run_both(k, launch, [None], [12])
    np.testing.assert_array_equal(ours[0], ref[0])
    assert ours[0][1] == 8 * 1 + 2 * 0 + 1


# -- compile cache ---------------------------------------------------------------------------
def test_compile_once_per_structure(tmp_path):
    be = CPUBackend(jit=JIT(cache_dir=tmp_path))
    k = contiguous_kernel(lambda x, y: binop("add", x, y), [float32, float32], float32, ndim=1)
    _, info = be.compile(k)
    assert info.cache == "miss" and info.ms > 0
    for n in (10, 1000):
        ours, ref = run_flat(k, [np.arange(n, dtype=np.float32)] * 2, be)
        np.testing.assert_array_equal(ours[0], ref[0])
    _, info = be.compile(k)
    assert info.cache == "hit" and info.ms == 0
    k64 = contiguous_kernel(lambda x, y: binop("add", x, y), [float64, float64], float64)
    _, info = be.compile(k64)
    assert info.cache == "miss" and info.new == "new dtypes"
    kr = Kernel(1, 0, tuple(Input(float32) for _ in range(2)), (), None, k.outputs)
    assert be.compile(kr)[1].new == "new contiguity"
    k2 = Kernel(2, 0, k.inputs, (), None, k.outputs)
    assert be.compile(k2)[1].new == "new rank"
    k3 = contiguous_kernel(lambda x, y: binop("mul", x, y), [float32, float32], float32)
    assert be.compile(k3)[1].new == "new structure"
    assert len(be.jit) == 5


def test_concurrent_compile_is_single(tmp_path):
    be = CPUBackend(jit=JIT(cache_dir=tmp_path))
    k = contiguous_kernel(lambda x: unop("exp", x), [float64], float64)
    infos = []
    threads = [threading.Thread(target=lambda: infos.append(be.compile(k)[1])) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(i.cache for i in infos) == ["hit", "hit", "hit", "miss"]


def test_protocol_surface():
    k = reduce_kernel("sum", float32)
    assert BE.name == "llvm" and BE.device == "cpu"
    assert BE.available()[0]
    text = BE.source(k)
    assert "define void" in text and "lazy_" in text
    bad = Kernel(1, 0, (Input(float32),), (), None,
                 (Output(float32, Op("frobnicate", (Load(0, float32),), float32)),))
    ok, why = BE.supports(bad)
    assert not ok and "frobnicate" in why
    launch = Launch((10, 10), [[View.contiguous((10, 10))]], [View.contiguous((10,))])
    assert BE.cost(k, launch) > 0
    assert BE.allocate(5, int32).dtype == np.int32


def test_deep_and_shared_expressions_compile():
    """Kernel's own hash/repr recurse (RecursionError at ~300-1000 levels) and
    expand sharing (2**depth); the backend's structural key does neither."""
    x = Load(0, float64)
    deep = x
    for _ in range(3000):
        deep = Op("neg", (deep,), float64)
    shared = x
    for _ in range(200):
        shared = Op("add", (shared, shared), float64)
    data = values(np.random.default_rng(8), float64, 64, special=False)
    for e, expect in ((deep, data), (shared, data * 2.0 ** 200)):
        k = Kernel(1, 0, (Input(float64, inner=1),), (), None, (Output(float64, e, 1),))
        be = CPUBackend(jit=JIT(cache_dir=None))
        c, info = be.compile(k)
        assert info.cache in ("miss", "disk")
        assert be.compile(k)[1].cache == "hit"
        out = np.empty(64)
        be.run(c, k, Launch((64,), [[View.contiguous((64,))]], [View.contiguous((64,))]),
               [data], [out])
        np.testing.assert_array_equal(out, expect)


def test_shared_subexpression_emitted_once():
    x = Load(0, float64)
    s = Op("mul", (x, x), float64)
    for _ in range(14):  # a DAG: 2**15 nodes as a tree, 16 when shared
        s = Op("add", (s, s), float64)
    k = Kernel(1, 0, (Input(float64, inner=1),), (), None, (Output(float64, s, 1),))
    assert len(postorder([s])) == 16
    assert BE.source(k).count("fadd") == 14


@pytest.mark.parametrize("op", ["sum", "max", "argmax", "argmin", "any", "prod"])
def test_column_reduction_tiled(op):
    """x.<op>(axis=0): out axis contiguous, reduce axis strided -> tiled order."""
    from cpu_backend.launch import choose_tile
    rng = np.random.default_rng(7)
    rows, cols = 700, 301
    d = float64 if op != "any" else int32
    x = values(rng, d, rows * cols)
    if op == "prod":
        x = np.where(np.abs(x) > 2, 1, x).astype(d.np)
    k = reduce_kernel(op, d, inner=None)
    shape = (cols, rows)
    launch = Launch(shape, [[View(shape, (1, cols), 0)]], [View.contiguous((cols,))])
    assert choose_tile(k, launch) == 1
    for be in (CPUBackend(num_threads=1), CPUBackend(num_threads=2)):
        ours, ref = run_both(k, launch, [x], [cols], be)
        assert_same(ours, ref, exact=op not in ("sum", "prod"))


def test_disk_cache_roundtrip_and_fail_soft(tmp_path, monkeypatch):
    k = contiguous_kernel(lambda x: unop("sqrt", x), [float64], float64)
    x = np.arange(50, dtype=np.float64)
    first = CPUBackend(jit=JIT(cache_dir=tmp_path))
    assert first.compile(k)[1].cache == "miss"
    files = list(tmp_path.glob("*.o"))
    assert len(files) == 1
    again = CPUBackend(jit=JIT(cache_dir=tmp_path))  # a "new process"
    c, info = again.compile(k)
    assert info.cache == "disk"
    ours, ref = run_flat(k, [x], again)
    np.testing.assert_array_equal(ours[0], ref[0])
    assert "define void" in again.source(k)
    # corrupt entry: ignored, recompiled, rewritten
    files[0].write_bytes(files[0].read_bytes()[:-7] + b"garbage")
    fresh = CPUBackend(jit=JIT(cache_dir=tmp_path))
    assert fresh.compile(k)[1].cache == "miss"
    ours, ref = run_flat(k, [x], fresh)
    np.testing.assert_array_equal(ours[0], ref[0])
    assert CPUBackend(jit=JIT(cache_dir=tmp_path)).compile(k)[1].cache == "disk"
    # a cache "directory" that is a file, and a disabled cache: runs still work
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    for jit in (JIT(cache_dir=blocker / "sub"), None):
        if jit is None:
            monkeypatch.setenv("LAZY_DISK_CACHE", "0")
            jit = JIT(cache_dir=tmp_path)
        assert jit.disk.dir is None and jit.disk.status.startswith("off")
        be = CPUBackend(jit=jit)
        assert be.compile(k)[1].cache == "miss"
        ours, ref = run_flat(k, [x], be)
        np.testing.assert_array_equal(ours[0], ref[0])


@pytest.mark.parametrize("d", [float32, float64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "log"])
def test_vector_math_accuracy(name, d):
    """vmath.py's exp/tanh: within a few ulp of NumPy over the whole range,
    with NaN, +-inf, -0.0, overflow and subnormal results right."""
    lim = 110 if d == float32 else 760
    x = np.concatenate([np.linspace(-lim, lim, 200_001), np.linspace(-1, 1, 20_001),
                        np.geomspace(1e-30, 1, 1000), -np.geomspace(1e-30, 1, 1000),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 88.72283935546875, 88.7228470,
                         -103.97208, -87.5, -100.0, 709.78, 709.79, -745.13, -740.0]]).astype(d.np)
    if name == "log":
        info = np.finfo(d.np)
        x = np.concatenate([np.abs(x), np.geomspace(info.smallest_subnormal, info.max / 2, 100_000),
                            np.linspace(0.5, 2, 100_001), [-1.0, info.smallest_subnormal,
                                                           info.tiny, info.max]]).astype(d.np)
    k = contiguous_kernel(lambda a: unop(name, a), [d], d)
    (ours,), (ref,) = run_flat(k, [x])
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_array_equal(np.signbit(ours[ours == 0]), np.signbit(ref[ours == 0]))
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(ours[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)])
    ulps = np.abs(ours[finite].astype(np.float64) - ref[finite]) / np.spacing(np.abs(ref[finite]))
    assert ulps.max() <= 6  # NumPy's own float32 log is up to 3.8 ulp off; ours < 2


# -- advanced indexing: Gather reads, Output.pos writes, in-place aliasing ---------------------
BE2 = CPUBackend(num_threads=2)


def dummy_view(rank: int) -> View:
    """The launch view of an indirect input: all-zero strides, never used."""
    return View((1,) * rank, (0,) * rank, 0)


def positions_with_negatives(rng, n_src: int, count: int) -> np.ndarray:
    """User indices in [-n, n) with repeats, normalized the way the caller does."""
    idx = rng.integers(-n_src, n_src, count)
    idx[: count // 4] = idx[0]  # a run of one repeated position
    return np.where(idx < 0, idx + n_src, idx).astype(np.int64)


@pytest.mark.parametrize("d", ALL, ids=lambda d: d.name)
def test_gather_elementwise(d):
    """out = src[pos] (op) other, pos an int64 load through a transposed view;
    the same kernel reads pos as int32 with the negative-index fix-up in the IR."""
    rng = np.random.default_rng(10)
    src = values(rng, d, 37)
    shape = (5, 41)
    pos = positions_with_negatives(rng, 37, 5 * 41)
    other = values(rng, d, 5 * 41)
    g = Gather(0, Load(1, int64), d)
    e = Op("maximum", (g, Load(2, d)), d) if not d.is_bool else Op("xor", (g, Load(2, d)), d)
    k = Kernel(2, 0, (Input(d, indirect=True, inner=0), Input(int64), Input(d, inner=1)), (), None,
               (Output(d, e, 1), Output(d, g, 1)))
    pos_t = View(shape, (1, 5), 0)  # pos stored transposed
    launch = Launch(shape, [[dummy_view(2)], [pos_t], [View.contiguous(shape)]],
                    [View.contiguous(shape)] * 2)
    ours, ref = run_both(k, launch, [src, pos, other], [5 * 41] * 2)
    assert_same(ours, ref)
    np.testing.assert_array_equal(ours[1].reshape(shape), src[pos.reshape(shape[::-1]).T])
    # int32 user indices, negatives wrapped inside the kernel: where(i < 0, i + n, i)
    i32 = Load(1, int32)
    n = Scalar(0, int32)
    wrapped = Op("where", (Op("lt", (i32, Scalar(1, int32)), bool_), Op("add", (i32, n), int32),
                           i32), int32)
    k32 = Kernel(1, 0, (Input(d, indirect=True), Input(int32, inner=1)), (int32, int32), None,
                 (Output(d, Gather(0, wrapped, d), 1),))
    idx = rng.integers(-37, 37, 3000).astype(np.int32)
    launch = Launch((3000,), [[dummy_view(1)], [View.contiguous((3000,))]],
                    [View.contiguous((3000,))], [37, 0])
    ours, ref = run_both(k32, launch, [src, idx], [3000])
    assert_same(ours, ref)
    np.testing.assert_array_equal(ours[0], src[idx])


@pytest.mark.parametrize("d", ALL, ids=lambda d: d.name)
def test_gather_in_reduction_prologue_and_epilogue(d):
    """sum/max/argmax over src[pos] (full space), plus a gather in the epilogue
    at out-space positions; both loop orders and a threaded partial split."""
    rng = np.random.default_rng(11)
    src = values(rng, d, 50)
    small = values(rng, float64, 9, special=False)
    for op in ("sum", "max", "argmax"):
        r = REDUCTIONS[op]
        x = Gather(0, Load(1, int64), d)
        red = Reduce(op, x, r.acc_dtype(d), r.result_dtype(d))
        epi = binop("add", Cast(Reduced(red.dtype), float64), Gather(2, Load(3, int64), float64))
        k = Kernel(2, 1, (Input(d, indirect=True), Input(int64, inner=None),
                          Input(float64, "out", indirect=True), Input(int64, "out", inner=1)),
                   (), red, (Output(float64, epi, 1), Output(red.dtype, Reduced(red.dtype), 1)))
        for shape, pos_view, be in (((6, 300), View((6, 300), (300, 1), 0), BE),  # row
                                    ((64, 40), View((64, 40), (1, 64), 0), BE_TILED),  # column
                                    ((2, 70_000), View((2, 70_000), (70_000, 1), 0), BE2)):
            n_out = shape[0]  # BE2 on 2 x 70000: per-thread partials, then the fold
            pos = positions_with_negatives(rng, 50, math.prod(shape))
            opos = rng.integers(0, 9, n_out)
            launch = Launch(shape, [[dummy_view(2)], [pos_view], [dummy_view(1)],
                                    [View.contiguous((n_out,))]],
                            [View.contiguous((n_out,))] * 2)
            ours, ref = run_both(k, launch, [src, pos, small, opos], [n_out] * 2, be)
            assert_same(ours, ref, exact=not (op == "sum" and d.is_float))


@pytest.mark.parametrize("d", ALL, ids=lambda d: d.name)
def test_output_pos_duplicates_last_wins(d):
    """dst[pos] = f(val) with many duplicate positions: the last write wins, as
    in NumPy, also for work large enough that the launcher would split it."""
    rng = np.random.default_rng(12)
    for count, size in ((50, 20), (200_000, 1000)):
        val = values(rng, d, count)
        pos = positions_with_negatives(rng, size, count)
        e = Op("neg", (Load(0, d),), d) if d.kind in "if" else Op("invert", (Load(0, d),), d)
        # a second output, stored through its view, in the same kernel
        k = Kernel(1, 0, (Input(d, inner=1), Input(int64, inner=1)), (), None,
                   (Output(d, e, 1, pos=Load(1, int64)), Output(d, Load(0, d), 1)))
        launch = Launch((count,), [[View.contiguous((count,))]] * 2,
                        [View.contiguous((count,))] * 2)
        for be in (BE, BE2):
            ours, ref = run_both(k, launch, [val, pos], [size, count], be)
            assert_same(ours, ref)
            expect = np.full(size, 7, d.np)
            with np.errstate(all="ignore"):
                expect[pos] = -val if d.kind in "if" else ~val
            np.testing.assert_array_equal(ours[0], expect)


def test_output_pos_2d_with_gathered_values_and_int32_positions():
    """A scatter whose values are themselves gathered: dst[p] = src[q] * 2 over a
    2-D domain, int32 positions read through a strided view."""
    rng = np.random.default_rng(13)
    shape = (30, 17)
    n = math.prod(shape)
    src = values(rng, float32, 100, special=False)
    q = rng.integers(0, 100, n)
    p = rng.integers(0, 64, 2 * n).astype(np.int32)  # read with stride 2
    val = binop("mul", Gather(0, Load(1, int64), float32), Scalar(0, float32))
    k = Kernel(2, 0, (Input(float32, indirect=True), Input(int64, inner=1), Input(int32)),
               (float32,), None, (Output(float32, val, 1, pos=Load(2, int32)),))
    launch = Launch(shape, [[dummy_view(2)], [View.contiguous(shape)],
                            [View(shape, (2 * shape[1], 2), 0)]],
                    [View.contiguous(shape)], [2.0])
    ours, ref = run_both(k, launch, [src, q, p], [64])
    assert_same(ours, ref)
    expect = np.full(64, 7, np.float32)
    expect[p[::2]] = src[q] * 2
    np.testing.assert_array_equal(ours[0], expect)


def _in_place(k: Kernel, launch: Launch, x: np.ndarray, expect: np.ndarray, be,
              others=(), at: int = 0) -> None:
    """Run with the output the same memory as input `at` (the others given)."""
    ok, why = be.supports(k)
    assert ok, why
    c, _ = be.compile(k)
    ins = list(others)
    ins.insert(at, x)
    be.run(c, k, launch, ins, [x])
    np.testing.assert_array_equal(x, expect)
    assert list(c.variants) == [at]  # the in-place variant (loads via the output pointer)


@pytest.mark.parametrize("n", [7, 1000, 300_001])
def test_in_place_identical_views(n):
    """x[1:n-1] = x[1:n-1] * 2 + 1 and x[::3] = -x[::3] in place (each element is
    read where it is written): no noalias assumption, vectorized or threaded."""
    rng = np.random.default_rng(14)
    for be in (BE, CPUBackend(num_threads=4)):
        for d in (float64, int32):
            x = values(rng, d, n, special=False)
            e = binop("add", binop("mul", Load(0, d), Scalar(0, d)), Scalar(1, d))
            k = Kernel(1, 0, (Input(d, inner=1),), (d, d), None, (Output(d, e, 1),))
            v = View((n - 2,), (1,), 1)
            expect = x.copy()
            expect[1:n - 1] = expect[1:n - 1] * 2 + 1
            _in_place(k, Launch((n - 2,), [[v]], [v], [2, 1]), x, expect, be)
            m = -(-n // 3)
            v = View((m,), (3,), 0)
            k = Kernel(1, 0, (Input(d),), (), None, (Output(d, Op("neg", (Load(0, d),), d)),))
            expect = x.copy()
            expect[::3] = -expect[::3]
            _in_place(k, Launch((m,), [[v]], [v]), x, expect, be)
            # x[1:] = y + x[1:]: the aliased input is the second one
            y = values(rng, d, n - 1, special=False)
            k = Kernel(1, 0, (Input(d, inner=1), Input(d, inner=1)), (), None,
                       (Output(d, binop("add", Load(0, d), Load(1, d)), 1),))
            v = View((n - 1,), (1,), 1)
            expect = x.copy()
            expect[1:] = y + expect[1:]
            _in_place(k, Launch((n - 1,), [[View.contiguous((n - 1,))], [v]], [v]), x, expect, be,
                      [y], at=1)


@pytest.mark.parametrize("n", [8, 1000, 300_000])
def test_in_place_disjoint_views(n):
    """x[::2] = x[1::2] * 3 (interleaved, stride 2 both ways) and x[:h] = x[h:]
    and x[h:] = x[:h] + 1 (a short distance apart when small) in place."""
    rng = np.random.default_rng(15)
    h = n // 2
    for be in (BE, CPUBackend(num_threads=4)):
        x = values(rng, float32, n, special=False)
        e = binop("mul", Load(0, float32), Scalar(0, float32))
        k = Kernel(1, 0, (Input(float32),), (float32,), None, (Output(float32, e),))
        expect = x.copy()
        expect[::2] = expect[1::2] * 3
        _in_place(k, Launch((h,), [[View((h,), (2,), 1)]], [View((h,), (2,), 0)], [3.0]),
                  x, expect, be)
        k1 = Kernel(1, 0, (Input(float32, inner=1),), (float32,), None, (Output(float32, e, 1),))
        expect = x.copy()
        expect[:h] = expect[h:2 * h] * 2
        _in_place(k1, Launch((h,), [[View((h,), (1,), h)]], [View((h,), (1,), 0)], [2.0]),
                  x, expect, be)
        expect = x.copy()
        expect[h:2 * h] = expect[:h] * 0.5
        _in_place(k1, Launch((h,), [[View((h,), (1,), 0)]], [View((h,), (1,), h)], [0.5]),
                  x, expect, be)
        # 2-D: rows written where they are read (a transposed walk of the same block)
        r = int(math.isqrt(n)) or 1
        blk = View((r, r), (1, r), 0)
        expect = x.copy()
        expect[: r * r] = expect[: r * r] * 4
        k2 = Kernel(2, 0, (Input(float32),), (float32,), None, (Output(float32, e),))
        _in_place(k2, Launch((r, r), [[blk]], [blk], [4.0]), x, expect, be)


def test_supports_rejects_instead_of_crashing():
    f, i = Load(0, float64), Load(1, int64)
    ins = (Input(float64, indirect=True), Input(int64))
    red = Reduce("sum", Load(1, int64), int64, int64)
    bad = {
        "reduction": Kernel(2, 1, ins, (), red, (Output(int64, Reduced(int64), pos=Load(1, int64)),)),
        "integer": Kernel(1, 0, ins, (), None, (Output(float64, f, pos=Cast(i, float64)),)),
        "Gather position": Kernel(1, 0, ins, (), None,
                                  (Output(float64, Gather(0, Cast(i, float64), float64)),)),
        "iota": Kernel(1, 0, (Input(int64, iota=True), Input(int64)), (), None,
                       (Output(int64, Gather(0, i, int64)),)),
        "inputs": Kernel(1, 0, ins, (), None, (Output(float64, Gather(5, i, float64)),)),
        "scalar": Kernel(1, 0, ins, (), None, (Output(float64, Scalar(3, float64)),)),
        "unknown": Kernel(1, 0, ins, (), None, (Output(float64, "not an expr"),)),
    }
    for word, k in bad.items():
        ok, why = BE.supports(k)
        assert not ok and word in why, (word, why)
    ok, why = BE.supports(Kernel(1, 0, ins, (), None, (Output(float64, f, pos=i),)))
    assert ok and "one thread" in why


def test_structural_key_separates_gather_pos_indirect(tmp_path):
    from cpu_backend.keys import structural_key
    i = Load(1, int64)
    plain = Kernel(1, 0, (Input(float64), Input(int64)), (), None, (Output(float64, Load(0, float64)),))
    variants = [
        plain,
        Kernel(1, 0, (Input(float64, indirect=True), Input(int64)), (), None,
               (Output(float64, Load(0, float64)),)),
        Kernel(1, 0, (Input(float64, indirect=True), Input(int64)), (), None,
               (Output(float64, Gather(0, i, float64)),)),
        Kernel(1, 0, (Input(float64), Input(int64)), (), None,
               (Output(float64, Load(0, float64), pos=i),)),
        Kernel(1, 0, (Input(float64), Input(int64)), (), None,
               (Output(float64, Load(0, float64), pos=Op("neg", (i,), int64)),)),
    ]
    keys = [structural_key(k) for k in variants]
    assert len(set(keys)) == len(keys)
    twin = Kernel(1, 0, (Input(float64), Input(int64)), (), None,
                  (Output(float64, Load(0, float64), pos=Load(1, int64)),))
    assert structural_key(twin) == keys[3]
    be = CPUBackend(jit=JIT(cache_dir=tmp_path))
    compiled = [be.compile(k)[0] for k in variants]
    assert len({c.name for c in compiled}) == len(variants)
    assert [c.in_order for c in compiled] == [False, False, False, True, True]
    assert be.compile(twin)[0] is compiled[3]


@pytest.mark.parametrize("d", [float32, float64], ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_accuracy(name, d):
    """vmath.py's sin/cos: within 1 ulp of NumPy for random bit patterns (every
    exponent, so the Payne-Hanek reduction up to 1e308 / 3e38), dense small
    arguments and multiples of pi/2; NaN for inf/NaN, -0.0 kept by sin."""
    rng = np.random.default_rng(16)
    ibits = np.uint32 if d == float32 else np.uint64
    pattern = rng.integers(0, np.iinfo(ibits).max, 100_000, dtype=np.uint64).astype(ibits).view(d.np)
    halfpi = np.arange(-2000, 2001) * (np.pi / 2)
    x = np.concatenate([pattern, np.linspace(-1e4, 1e4, 100_001), halfpi, np.nextafter(halfpi, 0),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e22, np.pi / 4,
                         np.nextafter(np.pi / 4, 1)]]).astype(d.np)
    k = contiguous_kernel(lambda a: unop(name, a), [d], d)
    assert "@llvm.sin" not in BE.source(k) and "@llvm.cos" not in BE.source(k)
    (ours,), (ref,) = run_flat(k, [x])
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    zero = ref == 0
    np.testing.assert_array_equal(np.signbit(ours[zero]), np.signbit(ref[zero]))
    fin = np.isfinite(ref)
    ulps = np.abs(ours[fin].astype(np.float64) - ref[fin]) / np.spacing(np.abs(ref[fin]))
    assert ulps.max() <= 1
    if d == float64:  # glibc is 8 ulp off here (mpmath, 2000 bits: -4.687165924254628e-19)
        hard = np.array([5.319372648326541e+255])
        if name == "cos":
            (got,), _ = run_flat(k, [hard])
            assert got[0] == -4.687165924254628e-19


# -- elementwise tiled order (transposed operands) ----------------------------------------
def _transpose_case(d: DType, shape, rng):
    """out = maximum(a + b.T-like, c): a contiguous, b transposed on the last two axes,
    c flipped on the last axis and broadcast (stride 0) on the first; the output
    is stored through a transposed view. (kernel, launch, inputs, out size)."""
    loads = [Load(0, d), Load(1, d), Load(2, d)]
    k = Kernel(len(shape), 0, (Input(d, inner=1), Input(d), Input(d)), (), None,
               (Output(d, Cast(binop("maximum", binop("add", loads[0], loads[1]), loads[2]), d)),))
    n = math.prod(shape)
    a = View.contiguous(shape)
    bt = View.contiguous(shape[:-2] + (shape[-1], shape[-2]))
    b = View(shape, bt.strides[:-2] + (bt.strides[-1], bt.strides[-2]), 0)
    c_st = list(View.contiguous(shape).strides)
    c_st[0] = 0
    c_st[-1] = -c_st[-1]
    c = View(shape, tuple(c_st), max(shape[-1] - 1, 0))
    o = View(shape, b.strides, 0)  # the output's innermost stride is large too
    launch = Launch(shape, [[a], [b], [c]], [o])
    return k, launch, [values(rng, d, n), values(rng, d, n), values(rng, d, n)], n


TILE_SHAPES = [(0, 5), (5, 0), (1, 1), (1, 37), (37, 1), (2, 3), (130, 17), (17, 130),
               (257, 33), (3, 130, 17), (2, 1, 40), (2, 3, 4, 5)]
ORDERS = [CPUBackend(num_threads=1, loop_order="tiled"), CPUBackend(num_threads=2),
          CPUBackend(num_threads=2, loop_order="per-element")]


@pytest.mark.parametrize("d", ALL, ids=lambda d: d.name)
def test_elementwise_tiled_transposed(d):
    rng = np.random.default_rng(5)
    for shape in TILE_SHAPES:
        k, launch, bufs, n = _transpose_case(d, shape, rng)
        for be in ORDERS:
            ours, ref = run_both(k, launch, bufs, [n], be)
            assert_same(ours, ref)


@pytest.mark.parametrize("shape", [(300, 260), (3, 170, 150), (1, 70000), (70000, 1)])
def test_elementwise_tiled_threads(shape):
    """Large enough to split over threads: tiles are divided between them."""
    from cpu_backend.launch import choose_tile
    rng = np.random.default_rng(6)
    k, launch, bufs, n = _transpose_case(float32, shape, rng)
    assert choose_tile(k, launch) == int(shape[-1] > 1 and shape[-2] > 1)
    for be in (CPUBackend(num_threads=2, loop_order="tiled"), CPUBackend(num_threads=3),
               CPUBackend(num_threads=2, loop_order="per-element")):
        ours, ref = run_both(k, launch, bufs, [n], be)
        assert_same(ours, ref)


def test_elementwise_tile_choice():
    """A + A.T tiles; contiguous, small-stride and chained operands do not."""
    from cpu_backend.launch import choose_tile
    d, n = float32, 64
    k = Kernel(2, 0, (Input(d, inner=1), Input(d)), (), None,
               (Output(d, Op("add", (Load(0, d), Load(1, d)), d), inner=1),))
    a = View.contiguous((n, n))
    at = View((n, n), (1, n), 0)
    assert choose_tile(k, Launch((n, n), [[a], [at]], [a])) == 1
    assert choose_tile(k, Launch((n, n), [[a], [a]], [a])) == 0
    assert choose_tile(k, Launch((n, n), [[a], [View((n, n), (2 * n, 2), 0)]], [a])) == 0
    assert choose_tile(k, Launch((n, n), [[a], [at]], [a]), "per-element") == 0
    assert choose_tile(k, Launch((n, n), [[a], [a]], [a]), "tiled") == 1
    flat = Kernel(1, 0, k.inputs, (), None, k.outputs)  # rank 1: never tiled
    v = View.contiguous((n,))
    assert choose_tile(flat, Launch((n,), [[v], [View((n,), (n,), 0)]], [v]), "tiled") == 0
    # a chained input is read correctly in the tiled order
    kc = Kernel(2, 0, (Input(d, inner=1), Input(d, chain=(1,))), (), None, k.outputs)
    x = np.arange(n * n, dtype=np.float32)
    launch = Launch((n, n), [[a], [at, View((n * n,), (1,), 0)]], [a])
    for be in (CPUBackend(loop_order="tiled"), CPUBackend()):
        ours, ref = run_both(kc, launch, [x, x], [n * n], be)
        assert_same(ours, ref)
