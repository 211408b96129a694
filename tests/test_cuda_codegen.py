"""The CUDA backend without a GPU: every generated source is compiled with NVRTC
(compute_80 and compute_90) and run on the CPU under the host emulation of the
CUDA thread model (tests/cuda_emu), compared with `scheduler.interpret`.

The corpus (tests/cuda_emu/corpus.py) is real kernels from the scheduler's
plans: every op and dtype, casts, strided / broadcast / negative-stride /
chained views, iota, scalars, every reduction over any axes with prologue and
epilogue fusion, empty and size-1 cases. Each reduction runs under every
launch strategy (block, thread, warp per output, two-pass partials).
Hypothesis adds random Kernel IR (tests/cuda_emu/random_ir.py). Kernels with
sibling reductions (several in one loop) are built directly as Kernel IR, so
they do not depend on fusion's choices, and checked against NumPy. Sources are
deduplicated and compiled in batches, so the module stays fast.
"""
from __future__ import annotations

import math
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazy
from cuda_backend import CUDABackend
from cuda_backend.codegen import generate
from cuda_backend.launch import plan_launch
from cuda_backend import nvrtc
from cuda_backend.nvrtc import ARCHS, OPTIONS
from cuda_emu import emulator
from cuda_emu.check import assert_outputs, nvrtc_check
from cuda_emu.corpus import REDUCE_MODES, Case, cases_from, corpus, values
from cuda_emu.random_ir import lazy_case, random_case, with_reference
from scheduler.dtypes import as_dtype, bool_, float32, float64, int64
from scheduler.kernel_ir import (Cast, Input, Kernel, Launch, Load, Op, Output, Reduce, Reduced,
                                 Scalar)
from scheduler.ops import REDUCTIONS
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


# -- sibling reductions: several reductions over one domain in one loop --------------------
def _red(op: str, x) -> Reduce:
    r = REDUCTIONS[op]
    return Reduce(op, x, r.acc_dtype(x.dtype), r.result_dtype(x.dtype))


@dataclass(frozen=True)
class Siblings:
    """Reductions of input x (and scalar 0 of x's dtype) in one kernel, an optional
    epilogue over their results, and what NumPy gives for a (outputs, reduced) array."""
    dtype: str
    reductions: Callable  # (x, zero) -> [Reduce]
    numpy: Callable       # a -> [result of each reduction over the last axis]
    epilogue: Callable | None = None        # [Reduced] -> Expr, one more output
    numpy_epilogue: Callable | None = None  # [NumPy results] -> its NumPy result


def _mean_of_positives(r):
    return Op("truediv", (Cast(r[0], float64), Cast(r[1], float64)), float64)


SIBLINGS = {
    "min+max": Siblings("float32", lambda x, z: [_red("min", x), _red("max", x)],
                        lambda a: [a.min(-1), a.max(-1)],
                        lambda r: Op("sub", (r[1], r[0]), r[0].dtype), lambda w: w[1] - w[0]),
    "sum+count": Siblings("float32", lambda x, z: [_red("sum", x),
                                                   _red("sum", Op("gt", (x, z), bool_))],
                          lambda a: [a.sum(-1), (a > 0).sum(-1)], _mean_of_positives,
                          lambda w: w[0].astype(np.float64) / w[1].astype(np.float64)),
    "nanmax+sum": Siblings("float32", lambda x, z: [_red("nanmax", x), _red("sum", x)],
                           lambda a: [np.fmax.reduce(a, axis=-1), a.sum(-1)]),
    "any+all": Siblings("int32", lambda x, z: [_red("any", Op("lt", (x, z), bool_)),
                                               _red("all", Op("ne", (x, z), bool_))],
                        lambda a: [(a < 0).any(-1), (a != 0).all(-1)]),
    "sum+prod+max+all": Siblings(
        "int32", lambda x, z: [_red("sum", x), _red("prod", x), _red("max", x),
                               _red("all", Op("ne", (x, z), bool_))],
        lambda a: [a.sum(-1), a.prod(-1), a.max(-1), (a != 0).all(-1)]),
}
# name -> (out shape, reduce extent, outputs adjacent in memory, the strategy the
# launcher picks on the emulation's 2 SMs); every case also runs under every strategy
SIBLING_DOMAINS = {
    "rows": ((5,), 300, False, [0]),
    "short_rows": ((9,), 20, False, [1]),
    "many_rows": ((130,), 40, False, [4]),
    "columns": ((37,), 300, True, [5]),
    "long_columns": ((5,), 1200, True, [5, 3]),
    "full": ((), 10000, False, [2, 3]),
}


def _sibling_data(rng, dtype: str, shape) -> np.ndarray:
    """Values over the domain, (outputs, reduced); floats get a NaN, a whole NaN
    output, an inf and -0.0 in the first outputs, ints a zero and a negative in some."""
    if dtype == "int32" and len(shape) == 2:
        a = rng.integers(1, 10, shape).astype(np.int32)
        a[::3, rng.integers(shape[1])] = 0
        a[::2, rng.integers(shape[1])] = -4
        return a
    a = values(rng, dtype, shape, special=dtype != "float32")
    if dtype == "float32" and len(shape) == 2 and shape[0] >= 3:
        a[0, 3], a[1], a[2, 5], a[2, 7] = np.nan, np.nan, np.inf, -0.0
    return a


def sibling_case(name: str, domain: str, seed: int = 0) -> Case:
    """A kernel of `SIBLINGS[name]` over `SIBLING_DOMAINS[domain]`, built directly as
    Kernel IR (independent of fusion's choices), with NumPy's results."""
    sib = SIBLINGS[name]
    out_shape, n_red, columns, _ = SIBLING_DOMAINS[domain]
    shape = (*out_shape, n_red)
    dt = as_dtype(sib.dtype)
    x, zero = Load(0, dt), Scalar(0, dt)
    reds = sib.reductions(x, zero)
    got = [Reduced(r.dtype, index=i) for i, r in enumerate(reds)]
    exprs = got + ([sib.epilogue(got)] if sib.epilogue else [])
    rng = np.random.default_rng([seed, zlib.crc32(f"{name}/{domain}".encode())])
    data = _sibling_data(rng, sib.dtype, shape)
    if columns:  # stored transposed: the outputs' elements are neighbours in memory
        memory, strides = np.ascontiguousarray(data.T), (1, out_shape[0])
    else:
        memory, strides = data, View.contiguous(shape).strides
    kernel = Kernel(len(shape), 1, (Input(dt, "full", (), None if columns else 1),), (dt,),
                    reds[0], tuple(Output(e.dtype, e) for e in exprs), tuple(reds[1:]))
    launch = Launch(shape, [[View(shape, strides, 0)]],
                    [View.contiguous(out_shape)] * len(exprs), [0])
    return Case(f"siblings/{name}/{domain}", kernel, launch, [memory.reshape(-1)],
                _numpy_results(sib, data), False, REDUCE_MODES)


def _numpy_results(sib: Siblings, data: np.ndarray) -> list[np.ndarray]:
    """NumPy's result for each output, flat."""
    with np.errstate(all="ignore"):
        want = [np.asarray(w) for w in sib.numpy(data)]
        if sib.epilogue:
            want.append(np.asarray(sib.numpy_epilogue(want)))
    return [w.reshape(-1) for w in want]


SIBLING_CASES = [sibling_case(n, d) for n in SIBLINGS for d in SIBLING_DOMAINS]
SIBLING_SOURCES = list({s.name: s for s in (generate(c.kernel)
                                            for c in SIBLING_CASES)}.values())


@pytest.fixture(scope="module")
def sibling_libs():
    return build_many(SIBLING_SOURCES)


def test_sibling_kernels_are_one_loop():
    """One state field per reduction, in its own accumulator dtype, and one partial
    buffer each; the reductions' shared load is emitted once per element."""
    case = sibling_case("sum+count", "rows")
    src = generate(case.kernel)
    assert "struct St { double v0; i64 v1; };" in src.source
    assert "st.v0 = lz_add(st.v0, ((double)(" in src.source
    assert "st.v1 = lz_add(st.v1, ((i64)(" in src.source
    assert src.source.count("= in0[") == 1
    pv = [(p.kind, p.index, p.ctype) for p in src.params if p.kind in ("pv", "pi")]
    assert pv == [("pv", 0, "double* __restrict__"), ("pv", 1, "i64* __restrict__")]
    assert "pv[w] = (double)st.v0; pv1[w] = (i64)st.v1;" in src.source
    assert "/* 2 axes, 1 reduced, sum, sum */" in src.source.replace(f"{src.name}: ", "")
    assert CUDABackend().supports(case.kernel) == (True, "all ops lowered to CUDA C")


@pytest.mark.parametrize("arch", ARCHS)
def test_nvrtc_compiles_sibling_kernels(arch):
    srcs = SIBLING_SOURCES + [generate(c.kernel, packed=True) for c in SIBLING_CASES[::6]]
    assert nvrtc_check(srcs, arch) == len(srcs)


@pytest.mark.parametrize("case", SIBLING_CASES, ids=[c.name for c in SIBLING_CASES])
def test_emulated_sibling_reductions(case, sibling_libs):
    """Every strategy, forced (with 3 partials too), against NumPy's values and dtypes;
    the launcher's own choice for this domain is among them."""
    *_, picked = SIBLING_DOMAINS[case.name.split("/")[-1]]
    calls = plan_launch(case.kernel, case.launch, sms=2, block=64, max_grid=3).calls
    assert [c.mode for c in calls] == picked
    run_case(case, sibling_libs)


def test_sibling_reductions_geometry_and_packed(sibling_libs):
    """Other block and grid sizes, and sizes passed in device arrays."""
    picks = [c for c in SIBLING_CASES if c.name.endswith(("/rows", "/columns", "/full"))]
    for case in picks[::2]:
        for block, grid in ((32, 1), (128, 2), (96, 5)):
            run_case(case, sibling_libs, block=block, max_grid=grid)
    srcs = [generate(c.kernel, packed=True) for c in picks[1::2]]
    lib = emulator.build(srcs)
    for case, src in zip(picks[1::2], srcs):
        for mode, nparts in case.modes:
            outs = case.fresh(lambda e: np.full(len(e), 7, e.dtype))
            emulator.run(case.kernel, case.launch, case.inputs, outs, lib=lib, src=src,
                         mode=mode, nparts=nparts)
            assert_outputs(case, outs, f"(packed, mode {mode}, nparts {nparts})")


def test_sibling_reductions_through_the_backend(monkeypatch, sibling_libs, tmp_path):
    """CUDABackend.run allocates one partial buffer per reduction, in its dtype."""
    from cuda_emu import fake_cupy
    nvrtc.version()  # CuPy's real NVRTC binding loads before the fake takes "cupy"
    monkeypatch.setenv("LAZY_CACHE_DIR", str(tmp_path))
    cp = fake_cupy.install(monkeypatch, sibling_libs)
    for case in SIBLING_CASES:
        if not case.name.endswith(("/long_columns", "/full", "/many_rows")):
            continue
        for mode, nparts in case.modes:
            be = CUDABackend(mode=mode, nparts=nparts)
            compiled, _ = be.compile(case.kernel)
            outs = case.fresh(lambda e: cp.full(len(e), 7, e.dtype))
            be.run(compiled, case.kernel, case.launch, case.inputs, outs)
            assert_outputs(case, outs, f"(CUDABackend, mode {mode}, nparts {nparts})")


def test_empty_sibling_reductions(monkeypatch, sibling_libs, tmp_path):
    """Zero-size: identities where every reduction has one, else ValueError (as NumPy's
    max of an empty axis), also when a sibling, not Kernel.reduce, has none."""
    from cuda_emu import fake_cupy
    nvrtc.version()  # CuPy's real NVRTC binding loads before the fake takes "cupy"
    monkeypatch.setenv("LAZY_CACHE_DIR", str(tmp_path))
    cp = fake_cupy.install(monkeypatch, sibling_libs)
    for name in ("sum+count", "any+all", "sum+prod+max+all"):
        case = sibling_case(name, "rows")
        empty = Launch((5, 0), [[View((5, 0), (0, 1), 0)]], case.launch.outputs, [0])
        data = np.zeros((5, 0), case.inputs[0].dtype)
        lib = sibling_libs[generate(case.kernel).name]
        if name != "sum+prod+max+all":
            want = _numpy_results(SIBLINGS[name], data)
            outs = [np.full(5, 7, w.dtype) for w in want]
            emulator.run(case.kernel, empty, [data.reshape(-1)], outs, lib=lib)
            for got, w in zip(outs, want):
                assert got.dtype == w.dtype
                np.testing.assert_array_equal(got, w)
            continue
        with pytest.raises(ValueError, match="zero-size array to reduction"):
            np.max(data, axis=1)
        outs = [np.zeros(5, o.dtype.np) for o in case.kernel.outputs]
        with pytest.raises(ValueError, match="zero-size reduction with max"):
            emulator.run(case.kernel, empty, [data.reshape(-1)], outs, lib=lib)
        with pytest.raises(ValueError, match="zero-size reduction with max"):
            CUDABackend().run(None, case.kernel, empty, [cp.asarray(data.reshape(-1))],
                              [cp.zeros(5, o.dtype.np) for o in case.kernel.outputs])


def test_supports_rejects_malformed_siblings():
    case = sibling_case("min+max", "rows")
    k = case.kernel
    x = k.reduce.expr
    ok = CUDABackend().supports
    bad = {
        "reduction 'argmax' cannot share a loop: siblings are all, any, max, min, nanmax, "
        "nanmin, prod, sum": replace(k, siblings=(Reduce("argmax", x, float32, int64),)),
        "reduction 'logsumexp' cannot share a loop": replace(
            k, reduce=Reduce("logsumexp", x, float64, float32)),
        "Reduced index 2 out of range: the kernel has 2 reductions": replace(
            k, outputs=k.outputs + (Output(float32, Reduced(float32, index=2)),)),
        "Reduced index -1 out of range": replace(
            k, outputs=(Output(float32, Reduced(float32, index=-1)),)),
        "max has no part 'log_sum'": replace(
            k, outputs=(Output(float32, Reduced(float32, "log_sum", 1)),)),
        "sibling reductions without Kernel.reduce": replace(k, reduce=None),
        "Reduced inside its own reduction": replace(
            k, siblings=(Reduce("max", Reduced(float32), float32, float32),)),
    }
    for why, kernel in bad.items():
        got = ok(kernel)
        assert not got[0] and got[1].startswith(why), (why, got)


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
