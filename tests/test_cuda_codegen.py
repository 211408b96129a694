"""The CUDA backend without a GPU: every generated source is compiled with NVRTC
(compute_80 and compute_90) and run on the CPU under the host emulation of the
CUDA thread model (tests/cuda_emu), compared with `scheduler.interpret`.

The corpus (tests/cuda_emu/corpus.py) is real kernels from the scheduler's
plans: every op and dtype, casts, strided / broadcast / negative-stride /
chained views, iota, scalars, every reduction over any axes with prologue and
epilogue fusion, empty and size-1 cases. Each reduction runs under every
launch strategy (block, thread, warp per output, two-pass partials).
Hypothesis adds random Kernel IR (tests/cuda_emu/random_ir.py). Sources are
deduplicated and compiled in batches, so the module stays fast.
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazy
from cuda_backend import CUDABackend
from cuda_backend.codegen import generate
from cuda_backend.launch import plan_launch
from cuda_backend.nvrtc import ARCHS, OPTIONS
from cuda_emu import emulator
from cuda_emu.check import assert_outputs, nvrtc_check
from cuda_emu.corpus import Case, cases_from, corpus
from cuda_emu.random_ir import lazy_case, random_case, with_reference
from scheduler.kernel_ir import Launch
from scheduler.realize import plan
from scheduler.view import View

CORPUS = corpus()
SOURCES = list({s.name: s for s in (generate(c.kernel) for c in CORPUS)}.values())


def build_many(sources, chunks: int = 2):
    """Emulation libraries for `sources`, built in parallel chunks; name -> library."""
    chunks = 1 if len(sources) < 40 else chunks  # each library pays ~1 s of header parsing
    size = max(1, math.ceil(len(sources) / chunks))
    parts = [sources[i:i + size] for i in range(0, len(sources), size)]
    with ThreadPoolExecutor(len(parts) or 1) as pool:
        libs = list(pool.map(emulator.build, parts))
    return {s.name: lib for part, lib in zip(parts, libs) for s in part}


@pytest.fixture(scope="module")
def libs():
    return build_many(SOURCES)


def run_case(case: Case, libs, **kw) -> None:
    for mode, nparts in case.modes:
        outs = case.fresh(lambda e: np.full(len(e), 7, e.dtype))
        emulator.run(case.kernel, case.launch, case.inputs, outs,
                     lib=libs[generate(case.kernel).name], mode=mode, nparts=nparts, **kw)
        assert_outputs(case, outs, f"(mode {mode}, nparts {nparts})")


# -- NVRTC --------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ARCHS)
def test_nvrtc_compiles_corpus(arch):
    assert nvrtc_check(SOURCES, arch) == len(SOURCES)


def test_nvrtc_error_shows_source_and_log():
    from cuda_backend.nvrtc import NVRTCError, compile_ptx
    with pytest.raises(NVRTCError) as info:
        compile_ptx('extern "C" __global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n')
    msg = str(info.value)
    assert "undefined_name" in msg and "error" in msg.lower()
    assert "    2    x[0] = undefined_name;" in msg  # numbered source


# -- emulation against the reference interpreter ------------------------------------------
@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_emulated_corpus(case, libs):
    run_case(case, libs)


def test_block_sizes_and_grids(libs):
    """Results do not depend on the geometry: one warp, many warps, one block, many."""
    picks = [c for c in CORPUS if c.kernel.reduce is not None][::9]
    picks += [c for c in CORPUS if c.kernel.reduce is None][::15]
    for case in picks:
        for block, grid in ((32, 1), (128, 2), (96, 5)):
            run_case(case, libs, block=block, max_grid=grid)


def test_packed_arguments(libs):
    """Kernels too large for by-value parameters read sizes from device arrays."""
    picks = [c for c in CORPUS if c.inputs and any(len(v) > 1 for v in c.launch.inputs)][:6]
    picks += [c for c in CORPUS if c.kernel.reduce is not None and c.kernel.scalars][:4]
    srcs = [generate(c.kernel, packed=True) for c in picks]
    assert all(s.packed and "A[" in s.source for s in srcs)
    for arch in ARCHS:
        nvrtc_check(srcs, arch)
    lib = emulator.build(srcs)
    for case, src in zip(picks, srcs):
        for mode, nparts in case.modes:
            outs = case.fresh(lambda e: np.full(len(e), 7, e.dtype))
            emulator.run(case.kernel, case.launch, case.inputs, outs, lib=lib, src=src,
                         mode=mode, nparts=nparts)
            assert_outputs(case, outs, f"(packed, mode {mode}, nparts {nparts})")


def test_float32_sum_accuracy_16m():
    """float32 sums accumulate in float64: within 1e-6 of the float64 sum for 16M values."""
    x = np.random.default_rng(7).random(1 << 24, dtype=np.float32)
    t = lazy.asarray(x)
    [step] = plan([t.sum()._buf]).steps
    assert step.kernel.reduce.acc.name == "float64"
    exact = float(np.sum(x, dtype=np.float64))
    for mode, sms in ((None, 4), (0, 2), (5, 2)):
        out = np.zeros(1, np.float32)
        emulator.run(step.kernel, step.launch, [x], [out], mode=mode, sms=sms,
                     block=256)
        assert abs(float(out[0]) - exact) <= 1e-6 * exact, (mode, float(out[0]), exact)


def test_empty_reduction_without_identity_raises():
    """lazy rejects these at build time; the backend still refuses a zero-size launch."""
    t = lazy.asarray(np.zeros((3, 4), np.float32))
    [step] = plan([t.max(axis=1)._buf]).steps
    empty = Launch((3, 0), [[View((3, 0), (4, 1), 0)]], [View((3,), (1,), 0)])
    with pytest.raises(ValueError, match="zero-size"):
        emulator.run(step.kernel, empty, [step.inputs[0].array], [np.zeros(3, np.float32)])


# -- random Kernel IR (hypothesis) ---------------------------------------------------------
SETTINGS = settings(max_examples=3, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def _check_batch(cases: list[Case]) -> None:
    cases = [c for c in (with_reference(c) for c in cases) if c is not None]
    srcs = list({s.name: s for s in (generate(c.kernel) for c in cases)}.values())
    for arch in ARCHS:
        nvrtc_check(srcs, arch)
    libs = build_many(srcs)
    for case in cases:
        run_case(case, libs)


@SETTINGS
@given(st.lists(random_case(reduce=False), min_size=16, max_size=16))
def test_random_elementwise(cases):
    _check_batch(cases)


@SETTINGS
@given(st.lists(random_case(reduce=True), min_size=16, max_size=16))
def test_random_reductions(cases):
    _check_batch(cases)


@settings(SETTINGS, max_examples=4)
@given(st.lists(lazy_case(), min_size=12, max_size=12))
def test_random_lazy_expressions(tensors):
    """Random view chains and op chains built with the lazy API, planned by the scheduler."""
    cases = []
    with np.errstate(all="ignore"):
        for n, t in enumerate(tensors):
            cases += cases_from(f"lazy{n}", [t])
    _check_batch(cases)


# -- the backend object, without a GPU -----------------------------------------------------
def test_available_says_why_not():
    ok, why = CUDABackend().available()
    if ok:
        pytest.skip(f"a CUDA device is present: {why}")
    assert why.startswith("cuda unavailable: ")
    assert any(w in why for w in ("driver", "CuPy", "device")), why


def test_source_without_gpu():
    x = lazy.asarray(np.ones((4, 5), np.float32))
    [step] = plan([(x * 2).sum(axis=1)._buf]).steps
    be = CUDABackend()
    src = be.source(step.kernel)
    name = f"lazy_{step.kernel.digest()}"
    assert f'extern "C" __global__ void {name}(' in src
    assert "__shfl_down_sync" in src and "__syncthreads" in src
    assert be.supports(step.kernel) == (True, "all ops lowered to CUDA C")


def test_new_shape_same_source():
    """Shapes, strides and offsets are arguments: a new shape reuses the kernel."""
    def kernel_for(shape, sl):
        a = lazy.asarray(np.ones(shape, np.float32))
        return plan([(a[sl] * 3 + 1)._buf]).steps[0].kernel
    k1 = kernel_for((10, 7), (slice(1, None, 2), slice(None)))
    k2 = kernel_for((300, 9), (slice(5, None, 3), slice(None)))
    assert generate(k1).source == generate(k2).source


def test_launch_geometry_fills_device():
    x = lazy.asarray(np.ones(1 << 24, np.float32))
    [step] = plan([(x * 2)._buf]).steps
    p = plan_launch(step.kernel, step.launch, sms=132)
    assert p.calls[0].grid == 132 * 32 and p.calls[0].block == 256
    [full] = plan([x.sum()._buf]).steps
    p = plan_launch(full.kernel, full.launch, sms=132)
    assert [c.mode for c in p.calls] == [2, 3] and p.calls[0].nparts > 100
    rows = lazy.asarray(np.ones((100000, 64), np.float32))
    assert plan_launch(*_kl(rows.sum(axis=1)), sms=132).calls[0].mode == 4
    p = plan_launch(*_kl(rows.sum(axis=0)), sms=132)  # 64 adjacent outputs: column tiles
    assert [c.mode for c in p.calls] == [5, 3] and p.calls[0].grid == 2 * p.calls[0].nparts
    cols = lazy.asarray(np.ones((64, 100000), np.float32))
    p = plan_launch(*_kl(cols.sum(axis=0)), sms=132)
    assert [c.mode for c in p.calls] == [5] and p.calls[0].grid == 3125


def _kl(t):
    [step] = plan([t._buf]).steps
    return step.kernel, step.launch



def test_backend_compile_and_run_under_emulation(monkeypatch, libs, tmp_path):
    """CUDABackend itself (NVRTC to a cubin, disk cache, binding, partial buffers,
    strategies) with a CuPy stand-in that launches under the emulation: the GPU
    code path, minus the GPU."""
    from cuda_emu import fake_cupy
    monkeypatch.setenv("LAZY_CACHE_DIR", str(tmp_path))
    cp = fake_cupy.install(monkeypatch, libs)
    picks = [c for c in CORPUS if c.kernel.reduce is not None][::6]
    picks += [c for c in CORPUS if c.kernel.reduce is None][::12]
    for case in picks:
        for mode, nparts in case.modes:
            be = CUDABackend(mode=mode, nparts=nparts)
            compiled, info = be.compile(case.kernel)
            assert info.cache in ("miss", "disk") and be.compile(case.kernel)[1].cache == "hit"
            outs = case.fresh(lambda e: cp.full(len(e), 7, e.dtype))
            be.run(compiled, case.kernel, case.launch, case.inputs, outs)
            assert_outputs(case, outs, f"(CUDABackend, mode {mode}, nparts {nparts})")
    assert list(tmp_path.glob("cuda-*.img")), "compiled images were not cached on disk"
    info = CUDABackend().compile(picks[0].kernel)[1]  # a new backend: from the disk cache
    assert info.cache == "disk"
    assert {"--fmad=false", "--ftz=false"} <= set(OPTIONS)


# -- the emulation itself ------------------------------------------------------------------
def test_emulator_shuffle_and_shared_memory():
    src = r'''extern "C" __global__ void probe(long long* out, long long* sum) {
  __shared__ long long s[128];
  long long v = (long long)blockIdx.x * 1000 + threadIdx.x;
  out[blockIdx.x * blockDim.x + threadIdx.x] = __shfl_down_sync(0xffffffffu, v, 3);
  s[threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.x == 0) { long long t = 0; for (unsigned i = 0; i < blockDim.x; ++i) t += s[i];
                          sum[blockIdx.x] = t; }
}'''
    lib = emulator.build([src])
    out, total = np.zeros(2 * 96, np.int64), np.zeros(2, np.int64)
    emulator.launch_raw(lib, "probe", 2, 96, [out, total])
    t = np.arange(96)
    for b in range(2):
        v = b * 1000 + t
        want = np.where(t % 32 + 3 < 32, v + 3, v)  # lanes past the warp keep their value
        np.testing.assert_array_equal(out[b * 96:(b + 1) * 96], want)
        assert total[b] == v.sum()


def test_emulator_reports_divergent_barrier():
    src = r'''extern "C" __global__ void bad(float* x) {
  if (threadIdx.x < 32) __syncthreads();
  x[threadIdx.x] = 1;
}'''
    with pytest.raises(emulator.EmulationError, match="divergent barrier"):
        emulator.launch_raw(emulator.build([src]), "bad", 1, 64, [np.zeros(64, np.float32)])


def test_without_cupy(monkeypatch):
    """No CuPy at all: sources still generate, available() says why, nothing raises."""
    import sys

    from cuda_backend import backend
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy -> ImportError
    backend.probe.cache_clear()
    try:
        ok, why = CUDABackend().available()
        assert not ok and why.startswith("cuda unavailable: CuPy is not installed"), why
        x = lazy.asarray(np.ones(8, np.float32))
        assert "__global__" in CUDABackend().source(plan([(x + 1)._buf]).steps[0].kernel)
    finally:
        backend.probe.cache_clear()
