"""cumsum / cumprod: deferred extern kernels (lazy/scan.py), checked against NumPy
and PyTorch. This module runs under LAZY_FALLBACK=error, so none of these is a fallback."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numpy.exceptions import AxisError

import lazy
import lazy.numpy as lnp
from conftest import DTYPE_NAMES, same, sample
from cpu_backend import CPUBackend
from cpu_backend.jit import JIT

pytestmark = pytest.mark.usefixtures("strict_fallback")


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


@pytest.mark.parametrize("dtype", ["bool", "int32"])
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scans_in_bool_and_int32_as_numpy(dtype, op):
    """dtype=bool scans with or/and (NumPy's add and multiply on bools); int32 wraps."""
    rng = np.random.default_rng(4)
    b = rng.random((5, 7)) < 0.3
    big = rng.integers(-2 ** 20, 2 ** 20, (5, 7)).astype(np.int32)
    for a in (b, big):
        for axis in (0, 1, None):
            same(getattr(lnp, op)(lazy.asarray(a), axis=axis, dtype=dtype),
                 getattr(np, op)(a, axis=axis, dtype=dtype))


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
    np.testing.assert_allclose(lazy.cumsum(t, dim=0).numpy(), torch.cumsum(tt, dim=0).numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(lazy.cumprod(t, 1).numpy(), torch.cumprod(tt, 1).numpy(),
                               rtol=1e-6)


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
        ("llvm", "extern cumsum: an LLVM loop, in NumPy's order (the kernel IR has no scan)")
    np.testing.assert_allclose(y.numpy(), (np.cumsum(np.exp(a) * 0.5, axis=1) + a).sum(axis=0),
                               rtol=1e-5)
    assert [(r.kernel, r.backend) for r in log] == \
        [("e0_exp_mul", "llvm"), ("cumsum_1", "llvm"), ("r2_add_sum", "llvm")]
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


# -- the CPU's scan function (cpu_backend/scan.py) -----------------------------------------
@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("case", ["rows", "columns", "one chain", "transposed", "permuted",
                                  "reversed"])
def test_the_llvm_scan_is_numpys_to_the_bit_on_any_thread_count(tmp_path, threads, case):
    """Inputs above the threading threshold: rows split across threads, or lanes
    when there is one row, or one chain on one thread; chains across memory
    (`a.T` along its rows) scanned as blocks of lanes; strided and unmergeable
    views (a C-ordered copy first) give the same bits as NumPy's sequential scan."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((300, 400)).astype(np.float32)
    x, axis = {"rows": (a, 1), "columns": (a, 0), "one chain": (a.reshape(-1)[:70_001], 0),
               "transposed": (a.T, 1),
               "permuted": (a.reshape(30, 10, 400).transpose(1, 0, 2), 2),
               "reversed": (a[::-1, ::-2], 0)}[case]
    be = CPUBackend(num_threads=threads, jit=JIT(cache_dir=tmp_path))
    for op in ("cumsum", "cumprod"):
        out = np.empty(x.shape, x.dtype)
        be.scan(op, x, axis, out)
        np.testing.assert_array_equal(out, getattr(np, op)(x, axis=axis))
    ints = (x * 4).astype(np.int64)
    out = np.empty(ints.shape, np.int64)
    be.scan("cumprod", ints, axis, out)  # int64 wraps as NumPy's does
    np.testing.assert_array_equal(out, np.cumprod(ints, axis=axis))


def test_scan_chunks_split_rows_then_lanes():
    from cpu_backend.scan import _split
    assert _split(300, 1, 2) == [(0, 38, 0, 1), (38, 76, 0, 1), (76, 114, 0, 1),
                                 (114, 152, 0, 1), (152, 190, 0, 1), (190, 228, 0, 1),
                                 (228, 266, 0, 1), (266, 300, 0, 1)]
    assert _split(1, 400, 2) == [(0, 1, 0, 128), (0, 1, 128, 256), (0, 1, 256, 384),
                                 (0, 1, 384, 400)]
    assert _split(1, 1, 2) == [(0, 1, 0, 1)]
    assert _split(300, 400, 1) == [(0, 300, 0, 400)]
    assert _split(1, 100, 2) == [(0, 1, 0, 100)]  # too few lanes to share


def test_scan_functions_compile_once_and_load_from_disk(tmp_path, monkeypatch):
    """A function per (op, dtype), in memory and on disk like kernels: a second
    JIT over the same cache directory (a new process) loads it."""
    monkeypatch.delenv("LAZY_DISK_CACHE", raising=False)
    x = np.arange(1, 6, dtype=np.float64)
    out = np.empty_like(x)
    be = CPUBackend(jit=JIT(cache_dir=tmp_path))
    _, info = be.scan("cumsum", x, 0, out)
    assert (info.cache, info.new) == ("miss", "new function") and info.ms > 0
    assert be.scan("cumsum", x, 0, out)[1].cache == "hit"
    assert be.scan("cumprod", x, 0, out)[1].cache == "miss"
    again = CPUBackend(jit=JIT(cache_dir=tmp_path))
    assert again.scan("cumsum", x, 0, out)[1].cache == "disk"
    np.testing.assert_array_equal(out, np.cumsum(x))


def test_the_log_shows_what_the_scan_compiled(log):
    """The scan's record carries the function's compile, as a kernel's does."""
    x = lazy.asarray(np.arange(5, dtype=np.int32))
    for _ in range(2):
        lnp.cumprod(x, dtype=lnp.int32).numpy()
    first, second = [r for r in log if r.kernel.startswith("cumprod")]
    assert first.cache in ("hit", "disk") or first.cache.startswith("miss (new function")
    assert (first.compile_ms == 0) == (first.cache == "hit")
    assert (second.cache, second.compile_ms) == ("hit", 0.0)


def test_without_llvm_the_scan_is_numpys_and_says_so(log, monkeypatch):
    """Where the JIT cannot load, the extern runs NumPy's function (the kernels
    around it fall back as usual), and the record names NumPy and why."""
    from scheduler import backends
    monkeypatch.setattr(backends, "_llvm", lambda: (None, "llvm unavailable: test"))
    monkeypatch.setenv("LAZY_FALLBACK", "allow")
    a = np.arange(1, 13, dtype=np.int64).reshape(3, 4)
    same(lnp.cumprod(lazy.asarray(a), axis=0), np.cumprod(a, axis=0))
    (rec,) = [r for r in log if r.kernel.startswith("cumprod")]
    assert (rec.backend, rec.reason, rec.cache) == \
        ("numpy", "extern cumprod: NumPy's cumprod (llvm unavailable: test)", "-")


@pytest.mark.parametrize("ufunc", [np.add, np.multiply])
def test_numpys_add_and_multiply_accumulate_are_scans(log, ufunc):
    """`np.add.accumulate(t)` is cumsum along axis 0 (NumPy's dtype rule is the
    same); the other forms are not lowered (NumPy's, a fallback)."""
    a = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    b = np.array([True, False, True])
    t, tb = lazy.asarray(a), lazy.asarray(b)
    same(ufunc.accumulate(t), ufunc.accumulate(a))
    same(ufunc.accumulate(t, axis=-1, dtype=np.float64), ufunc.accumulate(a, axis=-1,
                                                                         dtype=np.float64))
    same(ufunc.accumulate(tb), ufunc.accumulate(b))
    out = lazy.zeros((3, 4), dtype=lazy.int64)
    ufunc.accumulate(t, axis=1, out=out)
    same(out, ufunc.accumulate(a, axis=1))
    assert log.counters.fallbacks == 0
    with pytest.raises(lazy.FallbackError, match=f"{ufunc.__name__}.accumulate is not lowered"):
        ufunc.accumulate(t, axis=None)  # NumPy's ValueError, were fallbacks allowed
