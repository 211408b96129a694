"""The rest of a row after simd.py's whole vector steps: one masked step
where the host has AVX-512 (`simd.masked_tails`), else a scalar loop. Both
run here (the scalar one by switching the masked one off, in a JIT of its
own: the switch is not in the cache key), for every row length up to two
vectors and a half, each load step the vector loop reads with (1, -1, 2,
0), and outputs padded with junk that must survive: a masked step reads
and writes nothing past its row."""
from __future__ import annotations

import numpy as np
import pytest

from cpu_backend import CPUBackend, simd
from cpu_backend.jit import JIT
from scheduler.dtypes import float32, float64, int32, int64
from scheduler.kernel_ir import Input, Kernel, Launch, Load, Output, Scalar
from scheduler.view import View

from cpu_backend_helpers import assert_same, run_both, values
from ir_strategies import binop


@pytest.fixture(params=[True, False] if simd.masked_tails() else [False],
                ids=lambda masked: "masked" if masked else "scalar")
def backend(request, monkeypatch, tmp_path):
    monkeypatch.setattr(simd, "masked_tails", lambda: request.param)
    return CPUBackend(jit=JIT(cache_dir=tmp_path))


@pytest.mark.parametrize("d", [float32, float64, int32, int64], ids=lambda d: d.name)
@pytest.mark.parametrize("step", [1, -1, 2, 0])
def test_every_row_length(backend, d, step):
    x0, y0 = Load(0, d), Load(1, d)
    k = Kernel(2, 0, (Input(d, inner=step), Input(d, inner=1)), (d,), None,
               (Output(d, binop("add", binop("mul", x0, Scalar(0, d)), y0), inner=1),))
    assert simd.lanes(k)  # the vector loop takes it
    rng = np.random.default_rng(step + 10)
    rows = 3
    for cols in range(0, 41):
        span = 2 * cols + 1  # a row of x: room for stride 2 and for the reversed start
        x, y = values(rng, d, rows * span), values(rng, d, rows * cols)
        start = {1: 0, 2: 0, 0: 0, -1: max(cols - 1, 0)}[step]
        xv = View((rows, cols), (span, step), start)
        out = View((rows, cols), (cols + 3, 1), 1)  # junk between rows and after the last
        launch = Launch((rows, cols), [[xv], [View.contiguous((rows, cols))]], [out],
                        [np.array(3, d.np)])
        ours, ref = run_both(k, launch, [x, y], [rows * (cols + 3) + 2], backend)
        assert_same(ours, ref)


def _guarded(nbytes: int, at_end: bool) -> np.ndarray:
    """nbytes of memory that end right before (at_end) or start right after an
    unreadable page: a read past that edge faults."""
    import ctypes
    import mmap
    page = mmap.PAGESIZE
    body = -(-nbytes // page) * page
    region = mmap.mmap(-1, body + 2 * page)
    base = ctypes.addressof(ctypes.c_char.from_buffer(region))
    libc = ctypes.CDLL(None, use_errno=True)
    for at in (base, base + body + page):
        assert libc.mprotect(ctypes.c_void_p(at), page, 0) == 0  # PROT_NONE
    mem = np.frombuffer(region, np.uint8)
    _guarded.keep.append(region)  # unmapped at exit, not while a view is alive
    return mem[page + body - nbytes: page + body] if at_end else mem[page: page + nbytes]


_guarded.keep = []


@pytest.mark.parametrize("cols", [21, 32])
@pytest.mark.parametrize("step", [1, -1, 2])
def test_a_row_ending_at_an_unreadable_page(backend, step, cols):
    """The last row's last element (the first, reversed) lies next to a page
    that faults when read: the tail's masked load must not touch it, as a
    plain vector load of the whole step would; a stride-2 row never takes
    its last whole step as one wide load, which reads one element past it
    (rows of 32: two whole steps of 16)."""
    d = float32
    k = Kernel(2, 0, (Input(d, inner=step),), (), None,
               (Output(d, binop("mul", Load(0, d), Load(0, d)), inner=1),))
    rng = np.random.default_rng(4)
    rows, span = 2, 2 * cols
    start = cols - 1 if step == -1 else 0
    last = start + (rows - 1) * span + (step * (cols - 1) if step > 0 else 0)
    n = last + 1
    x = _guarded(n * d.itemsize, at_end=step > 0).view(d.np)
    x[...] = values(rng, d, n)
    launch = Launch((rows, cols), [[View((rows, cols), (span, step), start)]],
                    [View.contiguous((rows, cols))])
    ours, ref = run_both(k, launch, [x], [rows * cols], backend)
    assert_same(ours, ref)
