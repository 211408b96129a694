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
from scheduler.kernel_ir import Launch
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


def close(got: lazy.Tensor, want: np.ndarray, dtype: str, scale: float = 1.0,
          lse: float = 0.0) -> None:
    """`scale`: magnitude of the values (absolute error of x - lse); `lse`: of
    logsumexp, which a float64 softmax rounds to float64 (relative error ~
    |lse| * eps). A float32 softmax splits its float64 lse into hi + lo: no
    such term."""
    g = got.numpy()
    assert g.dtype == np.dtype(dtype) and g.shape == want.shape
    tol = TOL[dtype] + (2 * np.finfo(dtype).eps * lse if dtype == "float64" else 0.0)
    np.testing.assert_allclose(g, want.astype(dtype), rtol=tol, atol=tol * scale, equal_nan=True)


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
    close(lazy.softmax(t, axis=axis), ref_softmax(x, axis), dtype, lse=_scale(x))
    close(lazy.log_softmax(t, axis=axis), ref_log_softmax(x, axis), dtype, _scale(x))
    if axis is not None and not isinstance(axis, tuple) and x.size:
        close(softmax_idiom(t, axis)[1], ref_softmax(x, axis), dtype, lse=_scale(x))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_edge_rows(dtype):
    inf, nan = np.inf, np.nan
    x = np.array([[-inf, -inf, -inf], [inf, 1, 2], [nan, 1, 2], [1e4, 1e4, -1e4],
                  [-1e4, -1e4, -inf], [inf, -inf, 0]], dtype)
    lse = lazy.logsumexp(lazy.asarray(x), axis=1).numpy()
    want = [-inf, inf, nan, 1e4 + math.log(2), -1e4 + math.log(2), inf]
    np.testing.assert_allclose(lse, np.array(want, dtype), rtol=TOL[dtype])
    sm = lazy.softmax(lazy.asarray(x), axis=1)
    close(sm, ref_softmax(x, 1), dtype, lse=1e4)
    sm = sm.numpy()
    assert np.isnan(sm[:3]).all() and np.isnan(sm[5]).all()  # +inf, -inf-only, NaN rows
    np.testing.assert_allclose(sm[3], [0.5, 0.5, 0.0], rtol=1e-3)
    ls = lazy.log_softmax(lazy.asarray(x), axis=1)  # float64 lse split: no |lse| term
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
    close(y, ref_softmax(xn, axis), "float32", lse=_scale(xn))


@pytest.mark.parametrize("how", ["idiom", "softmax", "log_softmax"])
def test_float32_logits_far_from_zero_keep_float32_accuracy(how):
    """Two tied float32 logits of 1e8 are 0.5 each, as NumPy's `e / e.sum()`
    gives: logsumexp (1e8 + log 2) is not a float32, and rounding it put
    |lse| * eps into each exponent (1.0 each). The float64 lse is split
    into float32 hi + lo instead, in two kernels still."""
    xn = np.array([[1e8, 1e8, 1e8 - 64], [-3e7, -3e7 + 2, 5.0]], np.float32)
    x = lazy.asarray(xn)
    y = {"idiom": lambda: softmax_idiom(x)[1], "softmax": lambda: lazy.softmax(x, axis=1),
         "log_softmax": lambda: lazy.log_softmax(x, axis=1)}[how]()
    lazy.sync(y)
    assert len(kernels()) == 2
    ref = ref_log_softmax(xn, 1) if how == "log_softmax" else ref_softmax(xn, 1)
    close(y, ref, "float32", scale=1.0)
    if how != "log_softmax":
        assert y.numpy()[0, 0] == np.float32(0.5)


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


def test_column_reduction_tiled_order():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(400 * 70) * 100).astype(np.float64)
    x[::7] = -np.inf
    k = reduce_kernel("logsumexp", lazy.float64, inner=None)
    launch = Launch((70, 400), [[View((70, 400), (1, 70), 0)]], [View.contiguous((70,))])
    ours, ref = run_both(k, launch, [x], [70], BE_TILED)
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-12)
