"""cumsum / cumprod: deferred extern kernels (lazy/scan.py), checked against NumPy
and PyTorch. The suite runs with LAZY_FALLBACK=error, so none of these is a fallback."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numpy.exceptions import AxisError

import lazy
import lazy.numpy as lnp
from conftest import DTYPE_NAMES, same, sample


@pytest.fixture
def log():
    lazy.sync()
    lazy.log.clear()
    return lazy.log


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from(DTYPE_NAMES), op=st.sampled_from(["cumsum", "cumprod"]),
       axis_pick=st.integers(-4, 3), flat=st.booleans(), seed=st.integers(0, 2 ** 16),
       view=st.sampled_from(["plain", "transposed", "reversed"]))
def test_scans_match_numpy_exactly(shape, dtype, op, axis_pick, flat, seed, view):
    """Values, dtype and shape as NumPy's, through views, every axis, None included."""
    a = sample(shape, dtype, np.random.default_rng(seed), low=-2, high=3)
    t = lazy.asarray(a)
    if view == "transposed":
        a, t = a.T, t.T
    elif view == "reversed" and a.ndim:
        a, t = a[::-1], t[::-1]
    axis = None if flat or a.ndim == 0 else axis_pick % a.ndim - (a.ndim if axis_pick < 0 else 0)
    same(getattr(lnp, op)(t, axis=axis), getattr(np, op)(a, axis=axis))
    same(getattr(t, op)(axis), getattr(a, op)(axis))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_dtype_argument_casts_first(dtype):
    a = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    x = lnp.asarray(a)
    same(lnp.cumsum(x, 1, dtype), np.cumsum(a, 1, dtype))
    same(lnp.cumprod(x + 0.5, axis=0, dtype=dtype), np.cumprod(a + 0.5, axis=0, dtype=dtype))


def test_cumulative_functions_of_the_array_api():
    a = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    x = lnp.asarray(a)
    same(lnp.cumulative_sum(x, axis=1), np.cumulative_sum(a, axis=1))
    same(lnp.cumulative_sum(x[0], include_initial=True),
         np.cumulative_sum(a[0], include_initial=True))
    same(lnp.cumulative_prod(x, axis=0, dtype=lnp.float64, include_initial=True),
         np.cumulative_prod(a, axis=0, dtype=np.float64, include_initial=True))
    same(lnp.cumulative_sum(x[:, :0], axis=1, include_initial=True),
         np.cumulative_sum(a[:, :0], axis=1, include_initial=True))
    same(lnp.cumulative_sum(x[0, 0]), np.cumulative_sum(a[0, 0]))


def test_torch_dim_keyword_matches_torch():
    torch = pytest.importorskip("torch")
    a = sample((4, 5), "float32", np.random.default_rng(1))
    t, tt = lazy.asarray(a), torch.from_numpy(a)
    np.testing.assert_allclose(t.cumsum(dim=1).numpy(), tt.cumsum(dim=1).numpy(), rtol=1e-6)
    np.testing.assert_allclose(t.cumprod(dim=0).numpy(), tt.cumprod(dim=0).numpy(), rtol=1e-6)
    np.testing.assert_array_equal(t.int().cumsum(dim=-1).numpy(),
                                  tt.int().cumsum(dim=-1).numpy())


def test_a_scan_is_deferred_and_fuses_with_its_neighbours(log):
    """Nothing runs before the sync; the scan is one extern kernel between the kernel
    computing its input and the kernel reading it, and the plan says why."""
    a = sample((6, 7), "float32", np.random.default_rng(2))
    x = lazy.asarray(a)
    y = (lnp.cumsum(lnp.exp(x) * 0.5, axis=1) + x).sum(axis=0)
    assert len(log) == 0 and not log.syncs
    plan = lazy.explain(y)
    assert [k.name for k in plan.kernels] == ["e0_exp_mul", "cumsum_1", "r2_add_sum"]
    assert [k.fusion for k in plan.kernels] == ["extern", "extern", "requested"]
    scan = plan.kernels[1]
    assert (scan.backend, scan.reason) == \
        ("numpy", "extern cumsum: NumPy's cumsum (the kernel IR has no scan)")
    np.testing.assert_allclose(y.numpy(), (np.cumsum(np.exp(a) * 0.5, axis=1) + a).sum(axis=0),
                               rtol=1e-5)
    assert [(r.kernel, r.backend) for r in log] == \
        [("e0_exp_mul", "llvm"), ("cumsum_1", "numpy"), ("r2_add_sum", "llvm")]
    assert log.counters.fallbacks == 0
    assert log.syncs[0].kernels == 3


def test_the_schedule_cache_replans_nothing_and_new_values_flow(log):
    """The same graph again is a schedule-cache hit that computes the new inputs."""
    for k in range(3):
        a = np.arange(10, dtype=np.float64) + k
        y = lnp.cumprod(lazy.asarray(a) / 4, axis=0) * 2
        same(y, np.cumprod(a / 4, axis=0) * 2)
    assert [s.schedule for s in log.syncs] == ["miss", "hit", "hit"]


def test_bad_axes_raise_at_the_call():
    x = lazy.asarray(np.zeros((2, 3), np.float32))
    with pytest.raises(AxisError, match=r"axis 2 is out of range for a tensor of 2 dimensions "
                                        r"\(expected a value in \[-2, 1\]\)"):
        lnp.cumsum(x, axis=2)
    with pytest.raises(TypeError, match="axis must be an int, got float"):
        x.cumprod(1.0)
    with pytest.raises(TypeError, match="pass either axis or dim, not both"):
        x.cumsum(0, dim=0)
    with pytest.raises(ValueError, match=r"an input of 2 dimensions \(shape \(2, 3\)\) needs an "
                                         r"axis, got None"):
        lnp.cumulative_sum(x)
    with pytest.raises(TypeError, match="not understood|dtype"):
        lnp.cumsum(x, 0, "not a dtype")
