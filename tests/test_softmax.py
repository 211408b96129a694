"""logsumexp, softmax, log_softmax and the softmax rewrite (issue 5, W4).

Values against float64 NumPy references (scipy's logsumexp semantics: -inf
for empty or all -inf, +inf with a +inf, NaN with a NaN; softmax rows with
+inf or only -inf are NaN, as `e / e.sum()` gives), kernel counts for the
user's softmax idiom (two kernels once rewritten, the four-kernel plan when
an intermediate is still wanted), the schedule cache over the rewrite, and
the CPU backend's thread splits and loop orders.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazy
from cpu_backend import CPUBackend
from cpu_backend_helpers import BE_TILED, reduce_kernel, run_both
from cuda_backend import CUDABackend
from lazy import runtime
from scheduler import interpret
from scheduler.kernel_ir import Input, Kernel, Launch, Load, Output, Reduce, Reduced
from scheduler.ops import REDUCTIONS, logsumexp_part
from scheduler.passes import LSE_PARTS
from scheduler.schedule_cache import cache as schedule_cache
from scheduler.view import View

pytestmark = pytest.mark.usefixtures("fresh_log")

TOL = {"float32": 1e-5, "float64": 1e-12}


# -- references (float64) ------------------------------------------------------------------
def ref_logsumexp(x, axis=None, keepdims=False):
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
        shift = np.where(np.isfinite(m), m, 0.0)
        out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    return out if keepdims else np.squeeze(out, axis=axis)


def ref_softmax(x, axis=None):
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
        return e / e.sum(axis=axis, keepdims=True)


def ref_log_softmax(x, axis=None):
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        z = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
        return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def close(got: lazy.Tensor, want: np.ndarray, dtype: str, scale: float = 1.0) -> None:
    """`scale`: magnitude of the values (absolute error of x - max - log_sum)."""
    g = got.numpy()
    assert g.dtype == np.dtype(dtype) and g.shape == want.shape
    tol = TOL[dtype]
    with np.errstate(over="ignore"):  # -6e38 is -inf in float32, as the kernel's x - max is
        want = want.astype(dtype)
    np.testing.assert_allclose(g, want, rtol=tol, atol=tol * scale, equal_nan=True)


def kernels() -> list[str]:
    return [k.kernel for k in lazy.log]


def softmax_idiom(x, axis=1):
    e = lazy.exp(x - x.max(axis=axis, keepdims=True))
    return e, e / e.sum(axis=axis, keepdims=True)


# -- values ----------------------------------------------------------------------------------
@st.composite
def data(draw):
    shape = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 3, 5, 17, 130]), min_size=1,
                                max_size=3)))
    nd = len(shape)
    axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                          st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd,
                                   unique=True).map(tuple)))
    dtype = draw(st.sampled_from(["float32", "float64"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal(shape) * draw(st.sampled_from([1.0, 30.0, 1e4]))
    specials = draw(st.sampled_from(["none", "-inf", "+inf", "nan", "-inf row"]))
    if x.size:
        flat = x.reshape(-1)
        if specials == "-inf row" and x.ndim:
            x[(0,) * (x.ndim - 1)] = -np.inf  # a whole last-axis row
        elif specials != "none":
            flat[rng.random(x.size) < 0.15] = {"-inf": -np.inf, "+inf": np.inf,
                                               "nan": np.nan}[specials]
    return x.astype(dtype), axis, dtype


def _scale(x: np.ndarray) -> float:
    finite = np.abs(x[np.isfinite(x)])
    return max(1.0, float(finite.max(initial=0.0))) + math.log(max(x.size, 1))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data(), st.booleans())
def test_values_like_numpy(case, keepdims):
    x, axis, dtype = case
    t = lazy.asarray(x)
    close(lazy.logsumexp(t, axis=axis, keepdims=keepdims), ref_logsumexp(x, axis, keepdims),
          dtype, _scale(x))
    close(lazy.softmax(t, axis=axis), ref_softmax(x, axis), dtype)
    close(lazy.log_softmax(t, axis=axis), ref_log_softmax(x, axis), dtype, _scale(x))
    if axis is not None and not isinstance(axis, tuple) and x.size:
        close(softmax_idiom(t, axis)[1], ref_softmax(x, axis), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_edge_rows(dtype):
    inf, nan = np.inf, np.nan
    x = np.array([[-inf, -inf, -inf], [inf, 1, 2], [nan, 1, 2], [1e4, 1e4, -1e4],
                  [-1e4, -1e4, -inf], [inf, -inf, 0]], dtype)
    lse = lazy.logsumexp(lazy.asarray(x), axis=1).numpy()
    want = [-inf, inf, nan, 1e4 + math.log(2), -1e4 + math.log(2), inf]
    np.testing.assert_allclose(lse, np.array(want, dtype), rtol=TOL[dtype])
    sm = lazy.softmax(lazy.asarray(x), axis=1)
    close(sm, ref_softmax(x, 1), dtype)
    sm = sm.numpy()
    assert np.isnan(sm[:3]).all() and np.isnan(sm[5]).all()  # +inf, -inf-only, NaN rows
    np.testing.assert_allclose(sm[3], [0.5, 0.5, 0.0], rtol=1e-3)
    ls = lazy.log_softmax(lazy.asarray(x), axis=1)
    close(ls, ref_log_softmax(x, 1), dtype)


def test_empty_and_scalar():
    assert lazy.logsumexp(lazy.zeros((3, 0)), axis=1).tolist() == [-np.inf] * 3
    assert lazy.logsumexp(lazy.zeros(0)).item() == -np.inf
    assert lazy.softmax(lazy.zeros((0, 4)), axis=1).shape == (0, 4)
    assert lazy.softmax(lazy.asarray(np.float32(3.0))).item() == 1.0
    assert lazy.logsumexp(lazy.asarray(np.float64(-np.inf))).item() == -np.inf


def test_dtypes_and_torch_names():
    i = lazy.asarray(np.arange(6).reshape(2, 3))
    assert lazy.logsumexp(i, axis=1).dtype == lazy.float64  # ints compute in float64
    close(lazy.softmax(i, dim=1), ref_softmax(np.arange(6).reshape(2, 3), 1), "float64")
    close(lazy.log_softmax(i, dim=-1), ref_log_softmax(np.arange(6).reshape(2, 3), -1), "float64")
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    close(lazy.softmax(lazy.asarray(x)), ref_softmax(x), "float32")  # axis=None: all, as scipy
    close(lazy.logsumexp(lazy.asarray(x), dim=0, keepdim=True),
          ref_logsumexp(x, 0, keepdims=True), "float32")


# -- the rewrite ---------------------------------------------------------------------------
X = np.random.default_rng(2).standard_normal((64, 300)).astype(np.float32) * 5


def test_w4_idiom_is_two_kernels():
    x = lazy.asarray(X)
    y = softmax_idiom(x)[1]
    lazy.sync()
    names = kernels()
    assert len(names) == 2 and "logsumexp" in names[0], names
    assert lazy.log.syncs[-1].rewritten == 1 and "1 rewritten" in lazy.log.syncs[-1].line()
    close(y, ref_softmax(X, 1), "float32")


def test_explain_shows_the_rewrite():
    y = softmax_idiom(lazy.asarray(X))[1]
    text = str(lazy.explain(y))
    assert "1 rewritten) -> 2 kernels" in text and "logsumexp" in text, text
    close(y, ref_softmax(X, 1), "float32")  # explain changed nothing y computes


@pytest.mark.parametrize("axis", [0, -1])
def test_rewrite_other_axes_and_large_values(axis):
    xn = X * 2000  # exp would overflow without the shift
    y = softmax_idiom(lazy.asarray(xn), axis)[1]
    lazy.sync()
    assert len(kernels()) == 2
    close(y, ref_softmax(xn, axis), "float32")


F32_MIN, F64_MIN = float(np.finfo(np.float32).min), float(np.finfo(np.float64).min)
FAR = {"float32": [[1e8, 1e8, 1e8 - 64], [-3e7, -3e7 + 2, 5.0], [1e16, 1e16, 0.0],
                   [-1e16, -1e16, -2e16], [3e38, 3e38, -3e38], [F32_MIN] * 3],
       "float64": [[1e16, 1e16, 1e16 - 4], [1e300, 1e300, 0.0], [-1e200, 1e200, 1e200],
                   [F64_MIN] * 3, [F32_MIN] * 3, [3.0, 1.0, 2.0]]}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("how", ["idiom", "softmax", "log_softmax"])
def test_logits_of_any_magnitude(how, dtype):
    """Tied logits of 1e16 (or 1e300) are 0.5 each and a row of the dtype's
    min (a fully masked attention row) is 1/3 each, as NumPy's `e / e.sum()`
    gives. The softmax reads the max and the log-sum as two parts of one
    pass: max + log_sum rounds log_sum away at that size (1.0 each), and a
    float32 logsumexp put |lse| * eps into every exponent (1.0 at 1e8)."""
    xn = np.array(FAR[dtype], dtype)
    x = lazy.asarray(xn)
    y = {"idiom": lambda: softmax_idiom(x)[1], "softmax": lambda: lazy.softmax(x, axis=1),
         "log_softmax": lambda: lazy.log_softmax(x, axis=1)}[how]()
    lazy.sync(y)
    assert kernels() == ["r0_logsumexp", "e1_sub_exp" if how != "log_softmax" else "e1_sub"]
    ref = ref_log_softmax(xn, 1) if how == "log_softmax" else ref_softmax(xn, 1)
    close(y, ref, dtype)  # 0.5 for the ties, 1/3 for the rows of the min


def test_keeping_e_alive_keeps_the_plan():
    x = lazy.asarray(X)
    e, y = softmax_idiom(x)
    lazy.sync()  # e is live, so requested: it must be computed and written
    names = kernels()
    assert not any("logsumexp" in n for n in names) and len(names) >= 3, names
    assert lazy.log.syncs[-1].rewritten == 0
    close(e, np.exp(X.astype(np.float64) - X.max(1, keepdims=True)), "float32")
    close(y, ref_softmax(X, 1), "float32")


@pytest.mark.parametrize("wanted", ["max", "sum", "other reader"])
def test_an_intermediate_wanted_elsewhere_disables_the_rewrite(wanted):
    x = lazy.asarray(X)
    m = x.max(axis=1, keepdims=True)
    e = lazy.exp(x - m)
    s = e.sum(axis=1, keepdims=True)
    y = e / s
    other = {"max": m, "sum": s, "other reader": e * 2}[wanted]
    del e
    lazy.sync(y, other)
    assert not any("logsumexp" in n for n in kernels())
    close(y, ref_softmax(X, 1), "float32")


def test_unrequested_live_intermediate_still_computes_later():
    """sync(y) rewrites y only; `e`, held but not asked for, keeps its own graph."""
    x = lazy.asarray(X)
    e, y = softmax_idiom(x)
    lazy.sync(y)
    assert any("logsumexp" in n for n in kernels())
    close(y, ref_softmax(X, 1), "float32")
    close(e, np.exp(X.astype(np.float64) - X.max(1, keepdims=True)), "float32")


def test_not_the_idiom_is_left_alone():
    x = lazy.asarray(X)
    e = lazy.exp(x - x.max(axis=1, keepdims=True))
    y = e / e.sum(axis=0, keepdims=True)  # a different axis
    del e
    lazy.sync()
    assert not any("logsumexp" in n for n in kernels())
    m = np.exp(X.astype(np.float64) - X.max(1, keepdims=True))
    close(y, m / m.sum(0, keepdims=True), "float32")


def test_schedule_cache_reuses_the_rewritten_plan():
    schedule_cache.clear()
    rng = np.random.default_rng(3)
    for i in range(3):
        xn = rng.standard_normal((64, 300)).astype(np.float32) * (i + 1)
        y = softmax_idiom(lazy.asarray(xn))[1]
        lazy.sync()
        assert lazy.log.syncs[-1].schedule == ("miss" if i == 0 else "hit")
        assert lazy.log.syncs[-1].kernels == 2
        close(y, ref_softmax(xn, 1), "float32")
    e, y = softmax_idiom(lazy.asarray(xn))  # e alive: other targets, another plan
    lazy.sync()
    assert lazy.log.syncs[-1].schedule == "miss" and lazy.log.syncs[-1].kernels >= 3
    close(y, ref_softmax(xn, 1), "float32")


# -- CPU backend: thread splits and loop orders ----------------------------------------------
@pytest.mark.parametrize("shape", [(2, 100_000), (300, 700)])
@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_thread_splits_agree(shape, threads):
    """Few long rows split the reduce range into per-thread (max, sum) partials;
    many rows split the outputs; every split gives the reference."""
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(math.prod(shape)) * 50).astype(np.float32)
    x[: shape[1] // 2] = -np.inf  # row 0 starts with -inf: the empty partials
    k = reduce_kernel("logsumexp", lazy.float32)
    launch = Launch(shape, [[View.contiguous(shape)]], [View.contiguous(shape[:1])])
    ours, ref = run_both(k, launch, [x], [shape[0]], CPUBackend(num_threads=threads))
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-6)


@pytest.mark.parametrize("dtype", [lazy.float32, lazy.float64])
@pytest.mark.parametrize("n", [1, 64, 65, 400])
def test_column_reduction_tiled_order(dtype, n):
    """Down columns, LSE_ROWS reduce steps per block (a last one partial):
    the interpreter's values, -inf elements and all."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(n * 70) * 100).astype(dtype.np)
    x[::7] = -np.inf
    k = reduce_kernel("logsumexp", dtype, inner=None)
    launch = Launch((70, n), [[View((70, n), (1, 70), 0)]], [View.contiguous((70,))])
    ours, ref = run_both(k, launch, [x], [70], BE_TILED)
    np.testing.assert_allclose(ours[0], ref[0], rtol=TOL[dtype.name])


# -- the reduction's parts (max and log-sum), as the softmax reads them ------------------------
def parts_kernel(d, inner=1):
    """logsumexp's two parts, interleaved in one buffer (as scheduler/lowering.py writes them)."""
    red = Reduce("logsumexp", Load(0, d), REDUCTIONS["logsumexp"].acc_dtype(d), d)
    outs = (Output(d, Reduced(d, "max")), Output(d, Reduced(d, "log_sum"), follows=0, delta=1))
    return Kernel(2, 1, (Input(d, inner=inner),), (), red, outs)


@pytest.mark.parametrize("dtype", [lazy.float32, lazy.float64])
@pytest.mark.parametrize("shape, threads, order", [((2, 100_000), 1, "rows"),
                                                   ((2, 100_000), 3, "rows"),
                                                   ((300, 700), 2, "rows"),
                                                   ((70, 400), 1, "columns"),
                                                   ((5, 0), 1, "rows")])
def test_parts_kernel_against_the_interpreter(shape, threads, order, dtype):
    """Every thread split and loop order gives the interpreter's parts: the max
    exactly, log(sum(exp(x - max))) for a finite max, NaN for the rest (rows
    of only -inf, with +inf or NaN, and empty ones)."""
    rows, n = shape
    rng = np.random.default_rng(6)
    logical = (rng.standard_normal(shape) * 50).astype(dtype.np)
    if n:
        logical[0, : n // 2] = -np.inf  # row 0 starts with -inf: the empty partials
        for r, v in ((1, np.inf), (2, np.nan), (3, -np.inf)) if rows > 3 else ():
            logical[r, 0 if v == -np.inf else 5:] = v
    x = (logical if order == "rows" else logical.T).reshape(-1)  # in memory
    first = View.contiguous(shape) if order == "rows" else View(shape, (1, rows), 0)
    launch = Launch(shape, [[first]], [View((rows,), (2,), 0), View((rows,), (2,), 1)])
    k = parts_kernel(dtype, inner=1 if order == "rows" else None)
    be = BE_TILED if order == "columns" else CPUBackend(num_threads=threads)
    assert be.supports(k)[0]
    ours, ref = np.full(2 * rows, 7, dtype.np), np.full(2 * rows, 7, dtype.np)
    be.run(be.compile(k)[0], k, launch, [x], [ours, ours])
    interpret.run(k, launch, [x], [ref, ref])
    np.testing.assert_array_equal(ours[0::2], ref[0::2])
    tol = TOL[dtype.name]  # log_sum is added to exponents: its absolute error is what counts
    np.testing.assert_allclose(ours[1::2], ref[1::2], rtol=tol, atol=tol, equal_nan=True)
    if rows > 3 and n:
        assert np.isnan(ref[3:8:2]).all() and np.isfinite(ref[9::2]).all()  # rows 1-3: NaN


def test_a_part_the_op_lacks_is_refused():
    k = parts_kernel(lazy.float32)
    bad = Kernel(2, 1, k.inputs, (), Reduce("sum", Load(0, lazy.float32), lazy.float64,
                                            lazy.float32), k.outputs)
    assert CPUBackend().supports(bad) == (False, "sum has no part 'max'")
    assert CUDABackend().supports(bad) == (False, "sum has no part 'max'")


def test_a_reduction_with_parts_is_a_kernel_of_its_own():
    """A reader of the parts buffer never takes the reduction in ("reduction
    parts"), even one that reads it whole and in storage order."""
    xn = np.random.default_rng(7).standard_normal((4, 9)).astype(np.float32) * 30
    t = lazy.asarray(xn)
    pair = runtime.make("reduce", ((t._buf, t._view),), ("logsumexp", (1,), LSE_PARTS),
                        lazy.float32, (4, 1, 2), "cpu")
    y = pair + 1
    assert [k.fusion for k in lazy.explain(y).kernels] == ["reduction parts", "requested"]
    got = y.numpy()
    want = np.stack([logsumexp_part(p, xn, axis=1) for p in LSE_PARTS], axis=-1)[:, None]
    np.testing.assert_allclose(got, (want + 1).astype(np.float32), rtol=1e-6)
