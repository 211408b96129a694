"""The CUDA differential suite on a real GPU (skipped where there is none).

Runs the same corpus and random Kernel IR as tests/test_cuda_codegen.py, but
through `CUDABackend` (NVRTC cubin for the device's own arch, CuPy module,
real launches) instead of the host emulation, under every reduction
strategy, and compares with `scheduler.interpret`. On a GPU machine:

    pip install -e ".[test,cuda]" && python -m pytest tests/gpu -v
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda_backend import CUDABackend, matmul, probe

OK, WHY = probe()
pytestmark = pytest.mark.skipif(not OK, reason=f"no CUDA device ({WHY})")

if OK:
    import cupy

    from cuda_emu.check import assert_outputs
    from cuda_emu.corpus import corpus
    from cuda_emu.random_ir import random_case, with_reference
    CORPUS = corpus()
else:  # keep collection cheap and import-safe without CuPy
    CORPUS = []

F32_TOL = 1e-5  # CUDA's float32 exp/log/pow are within a few ulp, NumPy's within one
BACKENDS: dict = {}


def backend(mode, nparts=None):
    if (mode, nparts) not in BACKENDS:
        BACKENDS[(mode, nparts)] = CUDABackend(mode=mode, nparts=nparts)
    return BACKENDS[(mode, nparts)]


def run_on_gpu(case, mode=None, nparts=None):
    be = backend(mode, nparts)
    ok, why = be.supports(case.kernel)
    assert ok, why
    compiled, _ = be.compile(case.kernel)
    ins = [None if x is None else cupy.asarray(x) for x in case.inputs]
    outs = case.fresh(lambda e: cupy.full(len(e), 7, e.dtype))
    be.run(compiled, case.kernel, case.launch, ins, outs)
    cupy.cuda.get_current_stream().synchronize()
    return [o.get() for o in outs]


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_gpu_corpus(case):
    for mode, nparts in case.modes:
        assert_outputs(case, run_on_gpu(case, mode, nparts), f"(GPU, mode {mode}, {nparts})",
                       F32_TOL)


SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@SETTINGS
@given(st.data())
def test_gpu_random(data):
    case = with_reference(data.draw(random_case(reduce=data.draw(st.booleans()))))
    if case is None:
        return
    for mode, nparts in case.modes:
        assert_outputs(case, run_on_gpu(case, mode, nparts), f"(GPU, mode {mode}, {nparts})",
                       F32_TOL)


def test_gpu_float32_sum_accuracy_16m():
    import lazy
    from scheduler.realize import plan
    x = np.random.default_rng(7).random(1 << 24, dtype=np.float32)
    [step] = plan([lazy.asarray(x).sum()._buf]).steps
    exact = float(np.sum(x, dtype=np.float64))
    for mode in (None, 0, 2, 5):
        be = backend(mode)
        out = cupy.zeros(1, np.float32)
        be.run(be.compile(step.kernel)[0], step.kernel, step.launch, [cupy.asarray(x)], [out])
        assert abs(float(out.get()[0]) - exact) <= 1e-6 * exact


def test_gpu_new_shape_is_a_cache_hit():
    import lazy
    from scheduler.realize import plan
    be = CUDABackend()
    kernels = [plan([(lazy.asarray(np.ones(n, np.float32))[::2] * 3)._buf]).steps[0].kernel
               for n in (10, 1001)]
    assert be.compile(kernels[0])[1].cache == "miss"
    assert be.compile(kernels[1])[1].cache == "hit"


def test_gpu_matmul_cublas():
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 33)), rng.random((33, 17))
    out = cupy.empty((64, 17))
    matmul(cupy.asarray(a), cupy.asarray(b), out)
    np.testing.assert_allclose(out.get(), a @ b, rtol=1e-12)
