"""Differential tests: CPUBackend against the NumPy reference interpreter.

Kernels are built by hand and by hypothesis (random shapes, strides incl.
negative and 0, offsets, view chains, every dtype and op, reductions with
epilogues and out-space loads, iota inputs, scalars). `scheduler.interpret`
defines the semantics; ints and bools must match bitwise, floats exactly
except where an op or a reordered sum allows rounding differences.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cpu_backend import CPUBackend
from cpu_backend.pack import LaunchPlan
from scheduler.dtypes import ALL, bool_, float32, float64, int32, int64
from scheduler.kernel_ir import (Cast, Input, Kernel, Launch, Load, Op, Output, Reduce,
                                 Reduced, Scalar, pack_launch)
from scheduler.lowering import FIXED_INNER
from scheduler.ops import ELEMENTWISE, REDUCTIONS
from scheduler.view import View

from cpu_backend_helpers import (BE, BE_TILED, assert_same, contiguous_kernel, reduce_kernel,
                                 run_both, run_flat, run_reduce, values)  # noqa: E402

# NumPy warns about NaN/overflow casts inside the reference; that is expected here.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

TRANSCENDENTAL = {"exp", "expm1", "log", "sin", "cos", "tan", "tanh", "sigmoid", "pow", "asin", "acos",
                  "atan", "atan2", "log2", "log10",
                  "philox_normal_f32", "philox_normal_f64"}  # Box-Muller: log, sin, cos
EXACT_OPS = sorted(set(ELEMENTWISE) - TRANSCENDENTAL)
SMOOTH_OPS = ["add", "sub", "mul", "maximum", "minimum", "neg", "abs", "copy"]


from ir_strategies import binop, expr_tree, out_view, unop, view_chain  # noqa: E402


# -- random kernels ----------------------------------------------------------------------
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
        if vs[0].strides and vs[0].strides[-1] in FIXED_INNER and draw(st.booleans()):
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
        inexact = op in ("sum", "prod", "logsumexp") and red.acc.is_float
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
    outputs = [Output(o.dtype, o.expr, v.strides[-1] if v.strides and v.strides[-1] in (1, -1)
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
    if name == "pow" and d.is_int:  # negative exponents too: the truncated answer
        b = rng.integers(-4, 70, n).astype(d.np)
        a[:6], b[:6] = [1, -1, -1, 0, 2, -2], [-3, -3, -2, -1, -1, -1]
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


@pytest.mark.parametrize("shape", [(300_000, 8), (37, 300), (1000, 9), (17, 4100), (5, 16)])
def test_float32_column_sum_accurate(shape):
    """Column sums (the tiled order) add float32 blocks of SUM_ROWS steps into
    float64 accumulators: as accurate as the row sums, whatever the row count
    (a tail shorter than a block, a tile split, per-thread partials)."""
    from cpu_backend.launch import choose_tile
    x = np.random.default_rng(5).random(shape, dtype=np.float32)
    n_rows, n_cols = shape
    k = reduce_kernel("sum", float32, ndim=2, inner=None)
    launch = Launch((n_cols, n_rows), [[View((n_cols, n_rows), (1, n_cols), 0)]],
                    [View.contiguous((n_cols,))])
    assert choose_tile(k, launch) == 1
    exact = np.sum(x, axis=0, dtype=np.float64)
    for be in (CPUBackend(num_threads=1), CPUBackend(num_threads=2)):
        out = np.empty(n_cols, np.float32)
        c, _ = be.compile(k)
        be.run(c, k, launch, [x.ravel()], [out])
        np.testing.assert_allclose(out, exact, rtol=1e-6)


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


