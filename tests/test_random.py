"""Counter-based random numbers: rand/randn are Philox4x32-10 inside kernels.

The NumPy reference (scheduler/ops.py) against Random123's known answers;
reproducibility (same seed, same numbers; consecutive calls continue the
counter); the LLVM backend against the reference (uniforms bit for bit,
normals within an ulp or two) on any thread count; statistics; fusion
(a random tensor nothing else keeps is never materialized); nothing runs
before a sync; and the CUDA source (NVRTC, host emulation).
"""
from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import lazy
from cuda_emu import emulator
from cpu_backend import CPUBackend
from scheduler import interpret
from scheduler.dtypes import int64
from scheduler.kernel_ir import Input, Kernel, Launch, Load, Op, Output, Scalar
from scheduler.ops import ELEMENTWISE, RANDOM_OPS, philox4x32, philox_words
from scheduler.realize import plan
from scheduler.view import View

OPS = ["philox_uniform_f32", "philox_uniform_f64", "philox_normal_f32", "philox_normal_f64"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def reference(op: str, first: int, n: int, seed: int) -> np.ndarray:
    return ELEMENTWISE[op].numpy(np.arange(first, first + n, dtype=np.int64), np.int64(seed))


def kernels_of_last_sync():
    last = lazy.log.syncs[-1].id
    return [k for k in lazy.log if k.sync_id == last]


def assert_normal_close(got: np.ndarray, want: np.ndarray, ulps: int) -> None:
    """Within `ulps` units in the last place of the reference value."""
    assert got.dtype == want.dtype
    tol = ulps * np.spacing(np.abs(want))
    bad = np.abs(got.astype(np.float64) - want.astype(np.float64)) > tol
    assert not bad.any(), (f"{bad.sum()} of {bad.size} beyond {ulps} ulp, e.g. "
                           f"{got[bad][:3]} vs {want[bad][:3]}")


# -- the reference ----------------------------------------------------------------------------
def test_philox_known_answers():
    """Random123 tests/kat_vectors, the three philox4x32 10 lines."""
    f = 0xFFFFFFFF
    cases = [((0, 0, 0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
             ((f, f, f, f, f, f), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0),
              (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for args, want in cases:
        assert tuple(int(w) for w in philox4x32(*args)) == want


def test_words_use_counter_and_seed_halves():
    c, s = np.int64(-2), np.int64(0x0123456789ABCDEF)
    got = philox_words(c, s)
    want = philox4x32(0xFFFFFFFE, 0xFFFFFFFF, 0, 0, 0x89ABCDEF, 0x01234567)
    assert [int(x) for x in got] == [int(x) for x in want]


def test_reference_words_to_floats():
    x0, x1, x2, x3 = (int(w) for w in philox_words(np.int64(5), np.int64(9)))
    u32 = reference("philox_uniform_f32", 5, 1, 9)[0]
    assert u32 == np.float32((x0 >> 8) / 2 ** 24)
    u64 = reference("philox_uniform_f64", 5, 1, 9)[0]
    assert u64 == (((x1 << 32 | x0) >> 11) / 2 ** 53)
    n32 = reference("philox_normal_f32", 5, 1, 9)[0]
    z = math.sqrt(-2 * math.log((x0 + 1) / 2 ** 32)) * math.cos(2 * math.pi * x1 / 2 ** 32)
    assert abs(float(n32) - z) <= 1e-6 * max(1, abs(z))
    for op in OPS:
        assert ELEMENTWISE[op].numpy(np.arange(3), np.int64(1)).dtype == ELEMENTWISE[op].result.np


def test_uniform_extremes_stay_in_range():
    """Word 0 all ones gives the largest value below 1; u1 never reaches 0 (no -inf)."""
    assert np.float32((0xFFFFFFFF >> 8) / 2 ** 24) < 1
    assert ((2 ** 53 - 1) / 2 ** 53) < 1
    from scheduler.ops import box_muller
    assert np.isfinite(box_muller(np.array([2.0 ** -32, 2.0 ** -53]), np.array([0.0, 0.5]))).all()


# -- reproducibility ---------------------------------------------------------------------------
def test_same_seed_same_numbers_and_counter_continues():
    lazy.manual_seed(42)
    a, b = lazy.rand(100), lazy.randn(7, 3)
    av, bv = a.numpy(), b.numpy()
    np.testing.assert_array_equal(av, reference("philox_uniform_f32", 0, 100, 42))
    assert_normal_close(bv.reshape(-1), reference("philox_normal_f32", 100, 21, 42), 1)
    lazy.manual_seed(42)
    np.testing.assert_array_equal(lazy.rand(100).numpy(), av)
    np.testing.assert_array_equal(lazy.randn(7, 3).numpy(), bv)
    lazy.manual_seed(42)  # consecutive calls take consecutive counters
    whole = lazy.rand(10).numpy()
    lazy.manual_seed(42)
    np.testing.assert_array_equal(np.concatenate([lazy.rand(4).numpy(), lazy.rand(2, 3).numpy()
                                                  .reshape(-1)]), whole)


def test_different_seeds_and_calls_differ():
    lazy.manual_seed(1)
    a, b = lazy.rand(1000).numpy(), lazy.rand(1000).numpy()
    lazy.manual_seed(2)
    c = lazy.rand(1000).numpy()
    assert (a != b).mean() > 0.99 and (a != c).mean() > 0.99


def test_seed_is_taken_mod_2_64():
    lazy.manual_seed(2 ** 64 - 1)
    a = lazy.rand(5).numpy()
    lazy.manual_seed(-1)
    np.testing.assert_array_equal(lazy.rand(5).numpy(), a)
    np.testing.assert_array_equal(a, reference("philox_uniform_f32", 0, 5, -1))
    with pytest.raises(TypeError):
        lazy.manual_seed(1.5)


def test_unseeded_generator_seeds_itself():
    code = ("import lazy; print(lazy.rand(4).numpy().tolist())")
    env = dict(os.environ, LAZY_DEVICE="cpu")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, cwd=ROOT, check=True).stdout for _ in range(2)]
    assert outs[0] != outs[1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_views_of_random_tensors_are_the_same_numbers(dtype):
    lazy.manual_seed(5)
    x = lazy.randn(30, 4, dtype=dtype)
    col = x[::-2, 1] * 1    # a fused view: the kernel computes counters through it
    full = x.numpy()
    np.testing.assert_array_equal(col.numpy(), full[::-2, 1])


# -- the LLVM backend against the reference ---------------------------------------------------
def _kernel(op: str) -> Kernel:
    """out[i] = op(i + offset, seed): iota plus a scalar, as rand/randn build it."""
    ctr = Op("add", (Load(0, int64), Scalar(0, int64)), int64)
    e = Op(op, (ctr, Scalar(1, int64)), ELEMENTWISE[op].result)
    return Kernel(1, 0, (Input(int64, inner=1, iota=True),), (int64, int64), None,
                  (Output(e.dtype, e, inner=1),))


def _run(be: CPUBackend, op: str, n: int, offset: int, seed: int) -> np.ndarray:
    k = _kernel(op)
    ok, why = be.supports(k)
    assert ok, why
    launch = Launch((n,), [[View.contiguous((n,))]], [View.contiguous((n,))], [offset, seed])
    out = np.full(n, 7, k.outputs[0].dtype.np)
    c, _ = be.compile(k)
    be.run(c, k, launch, [None], [out])
    return out


@pytest.mark.parametrize("op", OPS)
def test_llvm_matches_reference(op):
    n, offset, seed = 300_001, 2 ** 40 - 5, -0x123456789ABCDEF
    got = _run(CPUBackend(), op, n, offset, seed)
    k = _kernel(op)
    want = np.zeros(n, k.outputs[0].dtype.np)
    interpret.run(k, Launch((n,), [[View.contiguous((n,))]], [View.contiguous((n,))],
                            [offset, seed]), [None], [want])
    if "uniform" in op:
        np.testing.assert_array_equal(got, want)
    else:  # float32: rounded from float64, so the same bits but for near-ties
        assert_normal_close(got, want, 1 if op.endswith("f32") else 4)
        if op.endswith("f32"):
            assert (got != want).mean() < 1e-4


@pytest.mark.parametrize("op", OPS)
def test_thread_count_does_not_change_numbers(op):
    n = 200_003  # above the launcher's single-thread size: split across threads
    outs = [_run(CPUBackend(num_threads=t), op, n, 17, 99) for t in (1, 2, 3)]
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


def test_lazy_num_threads_end_to_end():
    code = ("import lazy, hashlib; lazy.manual_seed(7); x = lazy.randn(300000, 2); "
            "y = lazy.rand(100000, dtype='float64'); "
            "print(hashlib.sha1(x.numpy().tobytes() + y.numpy().tobytes()).hexdigest())")
    outs = []
    for t in ("1", "2"):
        env = dict(os.environ, LAZY_NUM_THREADS=t, LAZY_DEVICE="cpu")
        outs.append(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                   text=True, env=env, cwd=ROOT, check=True).stdout)
    assert outs[0] == outs[1] and len(outs[0].strip()) == 40


# -- statistics (1M samples) ---------------------------------------------------------------------
def _ks(sorted_x: np.ndarray, cdf: np.ndarray) -> float:
    n = len(sorted_x)
    i = np.arange(1, n + 1)
    return float(max((i / n - cdf).max(), (cdf - (i - 1) / n).max()))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_statistics(dtype):
    lazy.manual_seed(2024)
    n = 1_000_000
    x = lazy.rand(n, dtype=dtype).numpy().astype(np.float64)
    assert x.min() >= 0 and x.max() < 1
    assert abs(x.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    assert abs(x.var() - 1 / 12) < 0.002
    xs = np.sort(x)
    assert _ks(xs, xs) < 1.95 / math.sqrt(n)  # KS critical value at 0.1%
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 5 / math.sqrt(n)  # neighbours independent


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_statistics(dtype):
    erf = np.frompyfunc(math.erf, 1, 1)

    def ndtr(v):  # the standard normal CDF, exactly (no SciPy needed)
        return (0.5 * (1.0 + erf(np.asarray(v) / math.sqrt(2.0)))).astype(np.float64)

    lazy.manual_seed(2025)
    n = 1_000_000
    x = lazy.randn(n, dtype=dtype).numpy().astype(np.float64)
    assert np.isfinite(x).all()
    assert abs(x.mean()) < 5 / math.sqrt(n)
    assert abs(x.std() - 1) < 5 / math.sqrt(2 * n)
    assert abs(np.mean(x ** 3)) < 5 * math.sqrt(15 / n)       # skewness
    assert abs(np.mean(x ** 4) - 3) < 5 * math.sqrt(96 / n)   # kurtosis
    xs = np.sort(x)
    assert _ks(xs, ndtr(xs)) < 1.95 / math.sqrt(n)
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 5 / math.sqrt(n)
    assert 0.0026 < np.mean(np.abs(x) > 3) < 0.0028 + 5 * math.sqrt(0.0027 / n)


# -- laziness and fusion -------------------------------------------------------------------------
def test_random_tensors_are_lazy_and_a_kept_one_is_an_extra_output_of_its_reader():
    """randn builds a pending Philox node; the sync that needs it generates it inside
    the consumer's kernel and, since the program keeps x, writes x there too
    (read through two views, it would get a kernel of its own: test_fusion.py)."""
    lazy.log.clear()
    lazy.manual_seed(11)
    x = lazy.randn(1000, 2)
    assert x._buf.pending and len(lazy.log) == 0  # nothing ran
    y = x ** 2 + lazy.exp(x)
    lazy.sync()
    (k,) = kernels_of_last_sync()
    assert "philox_normal_f32" in [op.split("@")[0] for op in k.ops]
    assert k.nbytes == 2 * 1000 * 2 * 4  # writes x and y, reads nothing
    expected = _pending_normal(11, (1000, 2)).numpy()
    np.testing.assert_array_equal(x.numpy(), expected)
    np.testing.assert_allclose(y.numpy(), expected ** 2 + np.exp(expected), rtol=1e-5,
                               atol=1e-6)


def test_random_numbers_do_not_depend_on_how_they_are_fused():
    """Counters are taken when randn is called: the same seed gives the same numbers
    whether x is synced alone, fused into a reader, or read by two kernels."""
    lazy.manual_seed(5)
    alone = lazy.randn(300, 2).numpy()
    lazy.manual_seed(5)
    fused = lazy.randn(300, 2)
    y = fused * 2
    lazy.sync()
    lazy.manual_seed(5)
    shared = lazy.randn(300, 2)
    s, m = shared.sum(), shared + 1
    lazy.sync()
    np.testing.assert_array_equal(fused.numpy(), alone)
    np.testing.assert_array_equal(shared.numpy(), alone)
    np.testing.assert_array_equal(y.numpy(), alone * 2)
    np.testing.assert_allclose(s.item(), alone.sum(dtype=np.float64), rtol=1e-5)
    np.testing.assert_array_equal(m.numpy(), alone + 1)


def _pending_normal(seed: int, shape: tuple) -> lazy.Tensor:
    """The Philox expression randn builds, by hand: the reference for its numbers."""
    n = int(np.prod(shape))
    counter = lazy.arange(n).reshape(shape)
    return lazy.elementwise.apply(RANDOM_OPS["normal"]["float32"], counter, seed)


def test_philox_ops_fuse_into_their_consumers():
    """The generator is an elementwise op: pending, it costs no memory of its own."""
    x = _pending_normal(3, (1000, 2))
    y = x[:, 0] ** 2
    del x
    lazy.sync(y)
    (k,) = kernels_of_last_sync()
    assert "philox_normal_f32" in [op.split("@")[0] for op in k.ops]
    assert k.nbytes == 1000 * 4  # only y is written: x never exists in memory
    np.testing.assert_array_equal(y.numpy(), _pending_normal(3, (1000, 2)).numpy()[:, 0] ** 2)
    s = (_pending_normal(4, (64, 32)) * 2).sum(axis=1)
    lazy.sync(s)
    (k,) = kernels_of_last_sync()
    assert k.kernel.startswith("r")


def test_live_random_tensor_and_consumer():
    lazy.manual_seed(11)
    X = lazy.randn(1000, 2)
    y = X[:, 0] ** 2 + X[:, 1] ** 3
    lazy.sync()
    x = X.numpy()
    np.testing.assert_allclose(y.numpy(), x[:, 0] ** 2 + x[:, 1] ** 3, rtol=1e-5, atol=1e-6)
    assert_normal_close(x.reshape(-1), reference("philox_normal_f32", 0, 2000, 11), 1)


def test_dtypes_shapes_and_errors():
    assert lazy.rand(0, 3).shape == (0, 3) and lazy.rand(0, 3).numpy().shape == (0, 3)
    assert lazy.randn().shape == () and np.isfinite(lazy.randn().item())
    assert lazy.rand(2, 3, dtype="float64").numpy().dtype == np.float64
    assert lazy.randn((4, 5)).dtype == lazy.float32
    with pytest.raises(TypeError):
        lazy.randn(3, dtype=lazy.int32)
    with pytest.raises(ValueError):
        lazy.rand(-1)
    assert set(RANDOM_OPS) == {"uniform", "normal"}


# -- CUDA: NVRTC and the host emulation ------------------------------------------------------
def _cuda_cases():
    from cuda_emu.corpus import cases_from
    lazy.manual_seed(77)
    made = [lazy.rand(3000, device="cpu") * 1, lazy.rand(1000, 3, dtype="float64") + 0,
            lazy.randn(2000, 3)[:, ::2] * 1, lazy.randn(500, 4, dtype="float64").sum(axis=1),
            lazy.randn(4000, 2)[:, 0] ** 2]
    return cases_from("random", made)


def test_cuda_random_sources_compile_with_nvrtc():
    from cuda_backend.codegen import generate
    from cuda_backend.nvrtc import ARCHS
    from cuda_emu.check import nvrtc_check
    cases = _cuda_cases()
    srcs = [generate(c.kernel) for c in cases]
    assert all("lz_philox" in s.source for s in srcs)
    for arch in ARCHS:
        assert nvrtc_check(srcs, arch) == len({s.source for s in srcs})


def test_cuda_random_under_emulation_matches_reference():
    from cuda_backend.codegen import generate
    cases = _cuda_cases()
    lib = emulator.build(list({s.name: s for s in (generate(c.kernel) for c in cases)}.values()))
    for case in cases:
        for mode, nparts in case.modes:
            outs = case.fresh(lambda e: np.full(len(e), 7, e.dtype))
            emulator.run(case.kernel, case.launch, case.inputs, outs, lib=lib, mode=mode,
                         nparts=nparts)
            for got, want in zip(outs, case.expected):
                if case.kernel.reduce is not None:  # a sum of normals: summation order
                    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
                elif "normal" in case.name:  # log/sin/cos: glibc's here, NumPy's there
                    assert_normal_close(got, want, 4)
                else:
                    np.testing.assert_array_equal(got, want, err_msg=case.name)


def test_cuda_plan_generates_on_the_device():
    """device='cuda' builds the same pending node (no host data, no transfer)."""
    from scheduler import backends
    ok, _ = backends.device_status("cuda")
    if not ok:
        pytest.skip("no CUDA device (the emulated device tests cover placement)")
    x = lazy.randn(10, device="cuda")
    assert x._buf.pending and x.device == "cuda"
    assert plan([x._buf]).steps[0].kernel is not None
