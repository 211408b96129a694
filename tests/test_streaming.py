"""Streaming stores (loops._streamed_rows): large elementwise outputs are
computed in 64-byte-aligned blocks through an L1 buffer and written with
non-temporal stores. Values are compared with the reference interpreter
for every dtype, offset, row length and thread count, with the size
threshold lowered so that small launches stream too."""

from __future__ import annotations

import platform

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cpu_backend import CPUBackend
from cpu_backend import launch as launch_mod
from cpu_backend.keys import STREAM
from cpu_backend.loops import STREAM_BLOCK, TILE_ROWS, TILE_SQUARE, TILE_STREAM, stream_eligible
from scheduler.dtypes import ALL, float32, float64, int32
from scheduler.kernel_ir import Cast, Input, Kernel, Launch, Load, Output
from scheduler.view import View

from cpu_backend_helpers import assert_same, contiguous_kernel, run_both, values
from ir_strategies import binop

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
X86 = platform.machine().lower() in ("x86_64", "amd64")
needs_x86 = pytest.mark.skipif(not X86, reason="streaming stores are compiled for x86-64 only")

BE1, BE2 = CPUBackend(num_threads=1), CPUBackend(num_threads=2)


@pytest.fixture
def stream_all(monkeypatch):
    """Every eligible launch streams, however small (the threshold is the cache size)."""
    monkeypatch.setattr(launch_mod, "stream_min_bytes", lambda threads: 1)
    for be in (BE1, BE2):
        be._prepared.clear()  # decisions are remembered per launch
    yield
    for be in (BE1, BE2):
        be._prepared.clear()


def _add_kernel(d, ndim=1, inner=1):
    return Kernel(ndim, 0, (Input(d, inner=inner), Input(d, inner=1)), (), None,
                  (Output(d, binop("add", Load(0, d), Load(1, d)), inner=1),))


def _run_streamed(k, launch, inputs, out_size, be):
    ours, ref = run_both(k, launch, inputs, [out_size], be)
    assert_same(ours, ref)
    return be.jit.lookup(k)


@needs_x86
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # it only patches a constant
@given(d=st.sampled_from(ALL), n=st.integers(0, 3000), in_off=st.integers(0, 20),
       out_off=st.integers(0, 20), threads=st.sampled_from([1, 2]))
def test_values_any_offset(stream_all, d, n, in_off, out_off, threads):
    """Heads before the first 64-byte boundary, whole blocks, tails: every
    element once, with the value the interpreter gives."""
    be = BE1 if threads == 1 else BE2
    rng = np.random.default_rng(n + in_off + out_off)
    k = _add_kernel(d)
    x, y = values(rng, d, n + in_off), values(rng, d, n + in_off)
    launch = Launch((n,), [[View((n,), (1,), in_off)], [View((n,), (1,), in_off)]],
                    [View((n,), (1,), out_off)])
    c = _run_streamed(k, launch, [x, y], n + out_off, be)
    if n * d.itemsize >= STREAM_BLOCK:
        assert STREAM in c.variants  # the streaming variant ran


@needs_x86
@pytest.mark.parametrize("cols", [1, 15, 16, 17, 64, 100, 1000, 1029])
def test_rows_of_a_2d_launch(stream_all, cols):
    """Each row finds its own boundary: rows of a sliced 2-D output start
    anywhere within a cache line."""
    rows = 37
    rng = np.random.default_rng(cols)
    k = _add_kernel(float32, ndim=2)
    x, y = values(rng, float32, rows * (cols + 3)), values(rng, float32, rows * cols)
    src = View((rows, cols), (cols + 3, 1), 2)  # x[:, 2:cols+2] of a (rows, cols + 3) array
    out = View((rows, cols), (cols + 5, 1), 1)  # into out[:, 1:cols+1] of (rows, cols + 5)
    launch = Launch((rows, cols), [[src], [View.contiguous((rows, cols))]], [out])
    _run_streamed(k, launch, [x, y], rows * (cols + 5), BE2)


@needs_x86
def test_threads_split_big_launch(stream_all):
    """Past the single-thread size, chunks are streamed by both threads."""
    n = 300_001
    rng = np.random.default_rng(1)
    k = contiguous_kernel(lambda a, b: binop("mul", a, b), [float64, float64], float64)
    x, y = values(rng, float64, n), values(rng, float64, n)
    launch = Launch((n,), [[View.contiguous((n,))]] * 2, [View.contiguous((n,))])
    _run_streamed(k, launch, [x, y], n, BE2)
    assert len(BE2._prepare(BE2.jit.lookup(k), k, launch).split.table) > 1


@needs_x86
def test_strided_input_version(stream_all):
    """The stride-2 copy of the inner loop (x[:, 0] of an (n, 2) array) streams too."""
    n = 5000
    rng = np.random.default_rng(2)
    k = _add_kernel(int32, inner=None)
    x, y = values(rng, int32, 2 * n), values(rng, int32, n)
    launch = Launch((n,), [[View((n,), (2,), 1)], [View.contiguous((n,))]],
                    [View.contiguous((n,))])
    _run_streamed(k, launch, [x, y], n, BE1)


def test_decision_follows_output_size(monkeypatch):
    """TILE_STREAM from the threshold on, for eligible kernels only."""
    monkeypatch.setattr(launch_mod, "stream_min_bytes", lambda threads: 2000 * threads)
    monkeypatch.setattr(launch_mod, "_triple", lambda: "x86_64")
    k = _add_kernel(float32)

    def tile(kernel, n):
        views = [[View.contiguous((n,))] for _ in kernel.inputs]
        return launch_mod.choose_tile(kernel, Launch((n,), views, [View.contiguous((n,))]),
                                      threads=2)
    assert tile(k, 999) == TILE_ROWS and tile(k, 1000) == TILE_STREAM
    # the threshold grows with the threads that write the output
    assert launch_mod.choose_tile(k, Launch((1000,), [[View.contiguous((1000,))]] * 2,
                                            [View.contiguous((1000,))]), threads=3) == TILE_ROWS
    two_out = Kernel(1, 0, k.inputs, (), None, k.outputs * 2)
    strided_out = Kernel(1, 0, k.inputs, (), None, (Output(float32, k.outputs[0].expr),))
    assert tile(two_out, 10_000) == TILE_ROWS
    assert tile(strided_out, 10_000) == TILE_ROWS
    # rows shorter than a block never hold one: their launch does not stream
    k2 = _add_kernel(float32, ndim=2)
    for cols, want in ((STREAM_BLOCK // 4 - 1, TILE_ROWS), (STREAM_BLOCK // 4, TILE_STREAM)):
        shape = (10_000 // cols + 1, cols)
        views = [[View.contiguous(shape)] for _ in k2.inputs]
        assert launch_mod.choose_tile(k2, Launch(shape, views, [View.contiguous(shape)]),
                                      threads=2) == want, cols
    monkeypatch.setattr(launch_mod, "_triple", lambda: "aarch64")
    assert tile(k, 10_000) == TILE_ROWS
    # a transposed operand still takes the square tiles
    monkeypatch.setattr(launch_mod, "_triple", lambda: "x86_64")
    k2 = _add_kernel(float32, ndim=2, inner=None)
    views = [[View((100, 100), (1, 100), 0)], [View.contiguous((100, 100))]]
    assert launch_mod.choose_tile(k2, Launch((100, 100), views, [View.contiguous((100, 100))])) \
        == TILE_SQUARE


def test_eligibility():
    k = _add_kernel(float64)
    assert stream_eligible(k, "x86_64-unknown-linux-gnu")
    assert not stream_eligible(k, "aarch64-unknown-linux-gnu")
    assert STREAM_BLOCK % 64 == 0
    # the in-place variant never streams
    from cpu_backend.codegen import generate
    assert "!nontemporal" not in str(generate(k, "x86_64-unknown-linux-gnu", "", 0))


def test_threshold_from_env(monkeypatch):
    launch_mod.stream_min_bytes.cache_clear()
    try:
        monkeypatch.setenv("LAZY_STREAM_BYTES", "12345")
        assert launch_mod.stream_min_bytes(2) == 12345
        launch_mod.stream_min_bytes.cache_clear()
        monkeypatch.delenv("LAZY_STREAM_BYTES")
        one = launch_mod.stream_min_bytes(1)
        assert one == launch_mod.private_cache_bytes() and launch_mod.stream_min_bytes(4) == 4 * one
    finally:
        launch_mod.stream_min_bytes.cache_clear()


def _fake_sysfs(root, caches):
    for i, (level, size, shared) in enumerate(caches):
        d = root / f"index{i}"
        d.mkdir()
        (d / "level").write_text(f"{level}\n")
        (d / "size").write_text(f"{size}\n")
        (d / "shared_cpu_list").write_text(f"{shared}\n")
    return str(root)


@pytest.mark.parametrize("caches, expected", [
    # a 2-CPU virtual machine that lists the socket's whole L3 as its own
    ([(1, "48K", "0"), (1, "32K", "0"), (2, "2048K", "0"), (3, "266240K", "0-1")], 2 << 20),
    # an L2 shared by two hyperthreads counts half for each
    ([(1, "32K", "0,64"), (2, "1024K", "0,64"), (3, "32M", "0-7,64-71")], 512 << 10),
    # a bigger per-CPU share in a lower level wins; the last level never counts
    ([(1, "64K", "0"), (2, "512K", "0-3"), (3, "8M", "0-3")], 128 << 10),
    # only one level: its share
    ([(1, "64K", "0"), (1, "1M", "0-3")], 256 << 10),
])
def test_private_cache_from_sysfs(tmp_path, caches, expected):
    assert launch_mod.private_cache_bytes(_fake_sysfs(tmp_path, caches)) == expected


def test_private_cache_without_sysfs(tmp_path):
    assert launch_mod.private_cache_bytes(str(tmp_path / "absent")) == launch_mod.DEFAULT_PRIVATE
    unreadable = _fake_sysfs(tmp_path, [(1, "junk", "0"), (2, "1M", "")])
    assert launch_mod.private_cache_bytes(unreadable) == launch_mod.DEFAULT_PRIVATE


@needs_x86
def test_only_the_variant_holds_streaming_code(stream_all):
    """The base kernel (what small launches and compile latency see) has no
    streaming path; the variant has the non-temporal stores and the fence."""
    k = _add_kernel(float32)
    base, _ = BE1.compile(k)
    assert "vmovnt" not in BE1.jit.assembly(k)
    v = BE1.jit.variant(base, STREAM)
    assert v is not base and v.address != base.address
    from cpu_backend.codegen import generate
    text = str(generate(k, BE1.jit.triple, BE1.jit.data_layout, STREAM))
    assert "!nontemporal" in text and "llvm.x86.sse.sfence" in text
    base_text = str(generate(k, BE1.jit.triple, BE1.jit.data_layout))
    assert "!nontemporal" not in base_text
    # the streamed blocks prefetch their inputs' lines ahead; the base kernel does not
    assert "llvm.prefetch" in text and "llvm.prefetch" not in base_text


def test_stream_prefetch_off(monkeypatch):
    from cpu_backend import loops
    from cpu_backend.codegen import generate
    monkeypatch.setattr(loops, "STREAM_PREFETCH", 0)
    text = str(generate(_add_kernel(float32), "x86_64-unknown-linux-gnu", "", STREAM))
    assert "!nontemporal" in text and "llvm.prefetch" not in text


def _prefetches(k) -> int:
    from cpu_backend.codegen import generate
    return str(generate(k, "x86_64-unknown-linux-gnu", "", STREAM)).count('call void @"llvm.prefetch')


def test_stream_prefetch_covers_each_inputs_block():
    """A streamed block asks for every line its inputs' part of it covers:
    a stride-2 input (x[:, 0] of an (n, 2) array) twice the lines of a unit
    one in the stride-2 copy of the loop, a float64 input of a float32
    output twice those of a float32 one."""
    lines = STREAM_BLOCK // 64  # a unit-stride float32 input of a float32 block
    unit = _prefetches(_add_kernel(float32))
    # the runtime-stride copy asks for the unit span; the stride-2 copy for twice it
    assert _prefetches(_add_kernel(float32, inner=None)) - 2 * unit == lines
    wide = Kernel(1, 0, (Input(float64, inner=1), Input(float32, inner=1)), (), None,
                  (Output(float32, binop("add", Cast(Load(0, float64), float32),
                                         Load(1, float32)), inner=1),))
    assert _prefetches(wide) - unit == lines


@needs_x86
def test_in_place_write_takes_the_in_place_variant(stream_all):
    """x = x * 2 + 1 in place: read where written, so no buffered blocks."""
    n = 4096
    k = contiguous_kernel(lambda a: binop("add", a, a), [float32], float32)
    x = np.arange(n, dtype=np.float32)
    expect = x + x
    launch = Launch((n,), [[View.contiguous((n,))]], [View.contiguous((n,))])
    c, _ = BE1.compile(k)
    BE1.run(c, k, launch, [x], [x])
    np.testing.assert_array_equal(x, expect)
    assert 0 in c.variants and STREAM not in c.variants
