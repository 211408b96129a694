"""The native launch (cpu_backend/dispatch.py): the pointer table it builds
from the buffer objects, its fallback where the object layout is not the
expected one, partial buffers, and a failed allocation.

The kernel here is a real JIT-compiled function with the kernels' C
signature that copies the pointer table it was given (ctl[1] entries) into
the int64 array that is its own first buffer, so the test reads exactly
what a kernel would have received."""
import numpy as np
import pytest
from llvmlite import ir

import cpu_backend.threadpool as tp
from cpu_backend import CPUBackend
from cpu_backend.dispatch import RECORD_FIXED, launch_record, object_layout
from cpu_backend.threadpool import ThreadPool
from cpu_backend_helpers import jit_address, reduce_kernel, run_reduce
from scheduler.dtypes import float64

I64 = ir.IntType(64)
PTR = ir.IntType(8).as_pointer()


@pytest.fixture(scope="module")
def dump():
    """Address of `for i in [0, ctl[1]): ((i64*)ptrs[0])[i] = ptrs[i]`."""
    mod = ir.Module("dump")
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [PTR] * 4), "dump")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ptrs = b.bitcast(fn.args[1], I64.as_pointer())
    out = b.inttoptr(b.load(ptrs), I64.as_pointer())
    n = b.load(b.gep(b.bitcast(fn.args[2], I64.as_pointer()), [ir.Constant(I64, 1)]))
    head, body, done = (fn.append_basic_block(x) for x in ("head", "body", "done"))
    entry = b.block
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    b.cbranch(b.icmp_signed("<", i, n), body, done)
    b.position_at_end(body)
    b.store(b.load(b.gep(ptrs, [i])), b.gep(out, [i]))
    i.add_incoming(b.add(i, ir.Constant(I64, 1)), body)
    b.branch(head)
    b.position_at_end(done)
    b.ret_void()
    yield jit_address(mod, "dump")


def _addr(x: np.ndarray) -> int:
    return x.__array_interface__["data"][0]


def _table_of(dump_addr, pool, buffers, partial_bytes, chunks=1):
    """Run `dump` once per chunk; return the pointer table it saw."""
    n = len(buffers) + len(partial_bytes)
    table = np.zeros((chunks, 9), np.int64)
    table[:, 1] = n
    record = launch_record(0, 0, table.ctypes.data, chunks, 0, partial_bytes)
    pool.launch(dump_addr, record, buffers)
    return buffers[0][:n].copy()


def test_this_interpreter_has_the_expected_object_layout():
    """The pointers are read from the objects here (the fast path); the
    fallback below is for interpreters built otherwise."""
    assert object_layout() is not None


@pytest.mark.parametrize("fallback", [False, True])
@pytest.mark.parametrize("chunks", [1, 3])
def test_the_kernel_gets_each_buffers_data_pointer(dump, monkeypatch, fallback, chunks):
    if fallback:  # as on an interpreter whose layout object_layout rejects
        monkeypatch.setattr(tp, "object_layout", lambda: None)
        monkeypatch.setattr(tp, "_NATIVE", None)
    pool = ThreadPool(2)
    assert (pool.prepare().layout is None) == fallback
    out = np.zeros(16, np.int64)
    base = np.arange(10.0)
    view = base[3:]          # an offset view: its own data pointer, not its base's
    ro = np.arange(4, dtype=np.float32)
    ro.flags.writeable = False
    seen = _table_of(dump[0], pool, (out, None, view, ro), [0, 0], chunks)
    pool.shutdown()
    assert seen.tolist() == [_addr(out), 0, _addr(view), _addr(ro), 0, 0]
    assert _addr(view) == _addr(base) + 3 * 8


def test_partial_buffers_are_allocated_per_launch(dump):
    pool = ThreadPool(1)
    out = np.zeros(8, np.int64)
    seen = _table_of(dump[0], pool, (out,), [24, 0, 8])
    assert seen[0] == _addr(out) and seen[2] == 0
    assert seen[1] != 0 and seen[3] != 0 and seen[1] != seen[3]


def test_a_failed_partial_allocation_raises_and_runs_nothing(dump):
    pool = ThreadPool(1)
    out = np.zeros(8, np.int64)
    table = np.zeros((1, 9), np.int64)
    table[:, 1] = 1
    record = launch_record(0, 0, table.ctypes.data, 1, 0, [16, 1 << 62])
    assert len(record.array) == RECORD_FIXED + 2
    with pytest.raises(MemoryError, match="partial accumulators"):
        pool.launch(dump[0], record, (out,))
    assert not out.any()


@pytest.mark.parametrize("threads", [1, 2])
def test_real_kernels_through_the_fallback_agree(monkeypatch, threads):
    """A reduction split into per-thread partials (malloc'd by the launch)
    and folded, through a backend whose launches take the `given` path."""
    monkeypatch.setattr(tp, "object_layout", lambda: None)
    monkeypatch.setattr(tp, "_NATIVE", None)
    backend = CPUBackend(num_threads=threads)
    assert backend.launcher.pool.prepare().layout is None
    x = np.random.default_rng(1).integers(-50, 50, 300_000).astype(np.float64)
    ours, ref = run_reduce(reduce_kernel("sum", float64), (1, len(x)), x, backend)
    backend.launcher.shutdown()
    assert all(np.array_equal(a, b) for a, b in zip(ours, ref))
