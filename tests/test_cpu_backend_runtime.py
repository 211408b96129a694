"""CPU backend: the in-memory cache, threads and the protocol; Gather reads,
positional stores and in-place aliasing; the tiled elementwise order. Compared with
the reference interpreter, as in test_cpu_backend.py. The disk cache is in
test_disk_cache.py."""

from __future__ import annotations

import math
import re
import threading
from dataclasses import replace

import llvmlite.binding as llvm
import numpy as np
import pytest

from cpu_backend import CPUBackend, simd
from cpu_backend.jit import JIT, _features, without_lsr
from cpu_backend.keys import structural_key
from scheduler.dtypes import ALL, DType, bool_, float32, float64, int32, int64
from scheduler.kernel_ir import (Cast, Gather, Input, Kernel, Launch, Load, Op, Output, Reduce,
                                 Reduced, Scalar, postorder)
from scheduler.ops import REDUCTIONS
from scheduler.view import View

from cpu_backend_helpers import (BE, BE_TILED, assert_same, contiguous_kernel, reduce_kernel,
                                 run_both, run_flat, run_reduce, values)
from ir_strategies import binop, unop  # noqa: E402

# NumPy warns about NaN/overflow casts inside the reference; that is expected here.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")



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


def test_loops_llvm_vectorizes_use_the_widest_vectors(tmp_path):
    """LLVM's tuning for Intel's AVX-512 server cores prefers 256-bit vectors;
    jit._features turns that off, so a float32 sum's loop adds the host's
    widest registers: zmm with AVX-512 (the machines here), else ymm."""
    assert "-prefer-256-bit" in _features().split(",")
    host = llvm.get_host_cpu_features()
    widest = "zmm" if host.get("avx512f") else "ymm" if host.get("avx") else "xmm"
    asm = JIT(cache_dir=tmp_path).assembly(reduce_kernel("sum", float32))
    assert re.search(rf"addps\s[^\n]*%{widest}", asm), f"no {widest} add in the float32 sum"


def test_code_generation_skips_lsr_and_restores_the_option(tmp_path):
    """The JIT generates code without Loop Strength Reduction (jit.without_lsr),
    both the object it runs (here: as stored in the disk cache) and the
    assembly it shows, and sets LLVM's process-wide option back to its
    default: code that another llvmlite user generates afterwards is what it
    was before."""
    jit = JIT(cache_dir=tmp_path)
    k = contiguous_kernel(lambda x, y: binop("add", x, y), [float32, float32], float32)
    optimized = str(jit.optimize(jit.ir(k)))

    def elsewhere(emit) -> str | bytes:  # another llvmlite user's code generation
        return emit(llvm.parse_assembly(optimized))
    asm, obj = elsewhere(jit.tm.emit_assembly), elsewhere(jit.tm.emit_object)
    assert jit.assembly(k) != asm  # LSR rewrites this loop's addressing
    jit.compile(k)
    ran = jit.disk.load(jit.disk.key(structural_key(k)))
    assert ran is not None and ran != obj
    with without_lsr():
        assert ran == elsewhere(jit.tm.emit_object)
    jit.compile(reduce_kernel("sum", float32))
    assert (elsewhere(jit.tm.emit_assembly), elsewhere(jit.tm.emit_object)) == (asm, obj)


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
    src = BE.source(k)  # once in simd.py's vector loop, once in the row's rest: a
    masked = simd.masked_tails()  # masked vector step, or a scalar loop
    assert src.count("fadd <8 x double>") == (28 if masked else 14)
    assert src.count("fadd double") == (0 if masked else 14)


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


@pytest.mark.parametrize("cols, rows", [(301, 700), (3, 30_000), (4096, 40), (4097, 40),
                                        (9000, 9)])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_column_reduction_splits(cols, rows, threads):
    """Tiled (column) reductions hand each thread whole rows of all outputs when
    they fit one tile (partials folded after), else chunks of columns, each one
    tile where it fits; values as NumPy's for every split (argmax: exact)."""
    from cpu_backend.codegen import MODE_PARTIAL
    from cpu_backend.launch import Launcher
    from cpu_backend.reduce_loops import MAX_TILE
    rng = np.random.default_rng(cols + rows)
    shape = (cols, rows)
    launch = Launch(shape, [[View(shape, (1, cols), 0)]], [View.contiguous((cols,))])
    for op in ("sum", "argmax"):
        k = reduce_kernel(op, float64, inner=None)
        split = Launcher(threads).split(k, shape, False, 1)
        widths = set(split.table[:, 8])
        if threads > 1 and cols <= MAX_TILE and cols * rows >= 1 << 16 and rows >= 4 * threads:
            assert set(split.table[:, 0]) == {MODE_PARTIAL} and widths == {cols}
        else:
            assert widths <= set(range(1, MAX_TILE + 1))
        x = values(rng, float64, rows * cols)
        ours, ref = run_both(k, launch, [x], [cols], CPUBackend(num_threads=threads))
        assert_same(ours, ref, exact=op == "argmax")


@pytest.mark.parametrize("threads", [2, 16, 64])
def test_partial_sums_fold_as_accurately_as_numpy_on_any_thread_count(threads):
    """A full sum splits into 4 parts per thread; the parts fold with
    compensation. A plain fold of 61 parts (16 threads) left 1M values of
    0.1 eight ulps off, where NumPy's pairwise sum is six ulps off."""
    from cpu_backend.codegen import MODE_PARTIAL
    from cpu_backend.launch import Launcher
    n = 1 << 20
    k = reduce_kernel("sum", float64, n_reduce=1, ndim=1)
    assert set(Launcher(threads).split(k, (n,), False).table[:, 0]) == {MODE_PARTIAL}
    x = np.full(n, 0.1)
    launch = Launch((n,), [[View.contiguous((n,))]], [View.contiguous(())])
    out = np.zeros(1)
    be = CPUBackend(num_threads=threads)
    be.run(be.compile(k)[0], k, launch, [x], [out])
    exact = math.fsum(x)
    assert abs(out[0] - exact) <= abs(x.sum() - exact), (out[0], x.sum(), exact)


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
def test_in_place_identical_views(n, tmp_path):
    """x[1:n-1] = x[1:n-1] * 2 + 1 and x[::3] = -x[::3] in place (each element is
    read where it is written): no noalias assumption, vectorized or threaded."""
    rng = np.random.default_rng(14)
    jit = JIT(cache_dir=tmp_path)  # its own: other tests' variants would show in c.variants
    for be in (CPUBackend(jit=jit), CPUBackend(num_threads=4, jit=jit)):
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
def test_in_place_disjoint_views(n, tmp_path):
    """x[::2] = x[1::2] * 3 (interleaved, stride 2 both ways) and x[:h] = x[h:]
    and x[h:] = x[:h] + 1 (a short distance apart when small) in place."""
    rng = np.random.default_rng(15)
    h = n // 2
    jit = JIT(cache_dir=tmp_path)  # its own: other tests' variants would show in c.variants
    for be in (CPUBackend(jit=jit), CPUBackend(num_threads=4, jit=jit)):
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
    # sibling reductions (Kernel.siblings)
    x = (Input(float64),)
    s, m = Reduce("sum", Load(0, float64), float64, float64), \
        Reduce("max", Load(0, float64), float64, float64)
    arg = Reduce("argmax", Load(0, float64), float64, int64)

    def two(first, second, read=1):
        return Kernel(2, 1, x, (), first, (Output(float64, Reduced(float64, index=read)),),
                      (second,) if second else ())
    bad["cannot share a loop"] = two(s, arg)
    bad["without a reduction"] = replace(two(s, m), reduce=None, ndim=1, n_reduce=0)
    bad["kernel has 2"] = two(s, m, read=2)
    bad["own loop"] = two(s, replace(m, expr=Reduced(float64)))
    for word, k in bad.items():
        ok, why = BE.supports(k)
        assert not ok and word in why, (word, why)
    ok, why = BE.supports(Kernel(1, 0, ins, (), None, (Output(float64, f, pos=i),)))
    assert ok and "one thread" in why
    assert BE.supports(two(s, m)) == (True, "all ops lowered")


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


# -- reversed rows (inner stride -1) ------------------------------------------------------------
@pytest.mark.parametrize("n", [2, 17, 1003, 70_001])
def test_reversed_rows_are_a_fixed_stride_and_vectorize(n):
    """A view with innermost stride -1 (flip, x[::-1]) is lowered with that
    stride fixed (Input.inner / Output.inner == -1), so LLVM vectorizes its
    loop; reads, writes and reductions through it match NumPy, odd lengths
    and the threaded split included."""
    import lazy
    import lazy.numpy as lnp
    from cpu_backend.backend import _shared_jit
    from lazy.explain import plan
    rng = np.random.default_rng(n)  # small integers: sums are exact, argmax meets ties
    xn = rng.integers(-50, 50, n).astype(np.float32)
    mn = rng.integers(-50, 50, (3, n)).astype(np.float32)
    x, m = lazy.asarray(xn), lazy.asarray(mn)

    y = lnp.flip(x) * 2 + x
    (step,) = plan([y._buf]).steps
    assert sorted(i.inner for i in step.kernel.inputs) == [-1, 1]
    opt = _shared_jit().optimized_ir(step.kernel).split("define", 1)[1]
    assert re.search(r"load <(16|8) x float>|masked\.load\.v(16|8)f32", opt)  # masked: a tail
    np.testing.assert_array_equal(y.numpy(), xn[::-1] * 2 + xn)

    np.testing.assert_array_equal(m[:, ::-1].sum(axis=1).numpy(), mn[:, ::-1].sum(axis=1))
    np.testing.assert_array_equal(m[::-1, ::-1].argmax(axis=1).numpy(), mn[::-1, ::-1].argmax(axis=1))
    out = lazy.zeros(n, dtype="float32")
    out[::-1] = x * 3
    lazy.sync(out)
    np.testing.assert_array_equal(out.numpy(), (xn * 3)[::-1])


@pytest.mark.parametrize("shape, n_reduce", [((5, 2, 0), 2), ((5, 0, 0), 2), ((1, 2, 0), 2),
                                             ((5, 3, 2, 0), 3), ((5, 2, 0, 3), 3)])
@pytest.mark.parametrize("backend", [BE, BE_TILED], ids=["auto", "tiled"])
def test_a_reduce_range_of_several_axes_that_is_empty(shape, n_reduce, backend):
    """The first row's index of a flat range divides by the extents: with a
    zero among them, the tiled order divided by zero before checking that
    the range was empty (SIGFPE, found by a randomized run of
    test_random_reduction). The identity comes out instead."""
    for op, d in (("sum", float64), ("sum", int32), ("logsumexp", float32)):
        ours, ref = run_reduce(reduce_kernel(op, d, n_reduce, len(shape), inner=None), shape,
                               np.zeros(0, d.np), backend)
        assert_same(ours, ref)
