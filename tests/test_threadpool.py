"""The native thread pool: every control block runs exactly once, whatever
the chunk count, the spin setting, sleeping workers or concurrent launches.

The kernel here is a real JIT-compiled function with the kernels' C
signature: it adds 1 to out[start:end) (ctl[1], ctl[2]) of the buffer at
ptrs[0], so a chunk run twice, or never, shows in the counts."""
import threading
import time

import numpy as np
import pytest
from llvmlite import ir

from cpu_backend import CPUBackend
from cpu_backend.dispatch import launch_record
from cpu_backend.threadpool import (_S_JOIN_SPIN, _S_STOP, JOIN_SPIN_SECONDS, MAX_CHUNKS,
                                    SPIN_SECONDS, ThreadPool, native)
from cpu_backend_helpers import contiguous_kernel, jit_address, reduce_kernel, run_flat, run_reduce
from scheduler.dtypes import float64
from ir_strategies import binop

I64, I32 = ir.IntType(64), ir.IntType(32)
PTR = ir.IntType(8).as_pointer()


@pytest.fixture(scope="module")
def bump():
    """(address, engine) of `for i in [ctl[1], ctl[2]): out[i] += 1`."""
    mod = ir.Module("bump")
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [PTR] * 4), "bump")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ptrs = b.bitcast(fn.args[1], I64.as_pointer().as_pointer())
    out = b.load(ptrs)
    ctl = b.bitcast(fn.args[2], I64.as_pointer())
    start, end = (b.load(b.gep(ctl, [ir.Constant(I64, i)])) for i in (1, 2))
    head, body, done = (fn.append_basic_block(n) for n in ("head", "body", "done"))
    entry = b.block
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(start, entry)
    b.cbranch(b.icmp_signed("<", i, end), body, done)
    b.position_at_end(body)
    p = b.gep(out, [i])
    b.store(b.add(b.load(p), ir.Constant(I64, 1)), p)
    i.add_incoming(b.add(i, ir.Constant(I64, 1)), body)
    b.branch(head)
    b.position_at_end(done)
    b.ret_void()
    yield jit_address(mod, "bump")


def run_table(pool: ThreadPool, bump, counts: np.ndarray, table: np.ndarray) -> None:
    """One launch of `bump` over `counts` with these control blocks."""
    record = launch_record(0, 0, table.ctypes.data, len(table), 0, [])
    pool.launch(bump[0], record, (counts,))


def launch(pool: ThreadPool, bump, counts: np.ndarray, chunks: int) -> None:
    edges = np.linspace(0, len(counts), chunks + 1).astype(np.int64)
    table = np.zeros((chunks, 9), np.int64)
    table[:, 1], table[:, 2] = edges[:-1], edges[1:]
    run_table(pool, bump, counts, table)


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("spin", [0, 1, 10_000])
def test_every_chunk_runs_exactly_once(bump, threads, spin):
    pool = ThreadPool(threads, spin=spin)
    counts = np.zeros(50_000, np.int64)
    rng = np.random.default_rng(0)
    rounds = 300
    for r in range(rounds):
        launch(pool, bump, counts, int(rng.integers(1, 64)))
        if r % 50 == 0:
            time.sleep(0.002)  # long enough for spinning workers to go to sleep
    pool.shutdown()
    assert (counts == rounds).all()


def yield_while(b: ir.IRBuilder, waiting) -> None:
    """Emit: while waiting() (an i1 built at each test), sched_yield, at most
    10M times; so that a chunk can wait for the other thread's, even on a
    loaded or single core, without hanging a test that has gone wrong."""
    fn = b.function
    sched_yield = b.module.globals.get("sched_yield") or \
        ir.Function(b.module, ir.FunctionType(I32, []), "sched_yield")
    wait, pause, go = (fn.append_basic_block(n) for n in ("wait", "yield", "go"))
    pre = b.block
    b.branch(wait)
    b.position_at_end(wait)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), pre)
    b.cbranch(b.and_(waiting(), b.icmp_unsigned("<", i, ir.Constant(I64, 10_000_000))),
              pause, go)
    b.position_at_end(pause)
    b.call(sched_yield, [])
    i.add_incoming(b.add(i, ir.Constant(I64, 1)), pause)
    b.branch(wait)
    b.position_at_end(go)


@pytest.fixture(scope="module")
def stamp():
    """(address, engine) of a kernel that records, for chunk c = ctl[1], the
    order it started in (a fetch-add on out[0]) at out[1 + 2c] and its
    thread's id (gettid) at out[2 + 2c]. The chunk that starts first waits,
    yielding (at most 10M times), until a second chunk has started, so both
    threads take part in every launch even on a loaded or single core."""
    mod = ir.Module("stamp")
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [PTR] * 4), "stamp")
    gettid = ir.Function(mod, ir.FunctionType(I32, []), "gettid")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    out = b.load(b.bitcast(fn.args[1], I64.as_pointer().as_pointer()))
    c = b.load(b.gep(b.bitcast(fn.args[2], I64.as_pointer()), [ir.Constant(I64, 1)]))
    order = b.atomic_rmw("add", out, ir.Constant(I64, 1), "seq_cst")
    slot = b.add(ir.Constant(I64, 1), b.mul(c, ir.Constant(I64, 2)))
    b.store(order, b.gep(out, [slot]))
    b.store(b.zext(b.call(gettid, []), I64), b.gep(out, [b.add(slot, ir.Constant(I64, 1))]))
    with b.if_then(b.icmp_unsigned("==", order, ir.Constant(I64, 0))):
        yield_while(b, lambda: b.icmp_unsigned("<", b.load_atomic(out, "seq_cst", 8),
                                               ir.Constant(I64, 2)))
    b.ret_void()
    yield jit_address(mod, "stamp")


def test_the_caller_takes_chunks_from_the_front_and_the_worker_from_the_back(stamp):
    """Two threads: each runs one contiguous stretch, the caller's ascending
    from chunk 0 and the worker's descending from the last chunk, so the
    worker starts on the end a front-to-back pass before left in the cache."""
    pool = ThreadPool(2)
    chunks, me = 64, threading.get_native_id()
    for _ in range(200):
        out = np.zeros(1 + 2 * chunks, np.int64)
        table = np.zeros((chunks, 9), np.int64)
        table[:, 1] = np.arange(chunks)
        pool.launch(stamp[0], launch_record(0, 0, table.ctypes.data, chunks, 0, []), (out,))
        order, thread = out[1::2], out[2::2]
        assert sorted(order) == list(range(chunks))
        mine = thread == me
        k = int(mine.sum())
        assert 0 < k < chunks, f"one thread ran every chunk: {thread}"
        assert mine[:k].all() and not mine[k:].any(), f"not two contiguous stretches: {thread}"
        assert (np.diff(order[:k]) > 0).all()  # the caller: from chunk 0 up
        assert (np.diff(order[k:]) < 0).all()  # the worker: from the last chunk down
    pool.shutdown()


def test_a_worker_whose_last_claim_meets_the_stop_post_still_stops():
    """A worker's last, failing claim can land on shutdown's own post (n = 0),
    whose tag it then holds as seen: it must still look at STOP, not sleep
    forever. Made deterministic here: the worker's chunk (the last one; the
    caller's chunk 0 waits for it to start) makes that post itself, as
    shutdown would, right before the worker's next claim."""
    mod = ir.Module("stop_post")
    fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [PTR] * 4), "stop_post")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ctl = b.bitcast(fn.args[2], I64.as_pointer())
    c, addr, flag = (b.load(b.gep(ctl, [ir.Constant(I64, i)])) for i in (1, 2, 3))
    state, started = b.inttoptr(addr, I64.as_pointer()), b.inttoptr(flag, I64.as_pointer())
    with b.if_else(b.icmp_unsigned("==", c, ir.Constant(I64, 0))) as (caller, worker):
        with caller:  # wait until the worker has taken chunk 1
            yield_while(b, lambda: b.icmp_unsigned("==", b.load_atomic(started, "seq_cst", 8),
                                                   ir.Constant(I64, 0)))
        with worker:  # shutdown's post: STOP, then a word with n = 0
            b.store_atomic(ir.Constant(I64, 1), started, "seq_cst", 8)
            b.store_atomic(ir.Constant(I64, 1), b.gep(state, [ir.Constant(I64, _S_STOP)]),
                           "seq_cst", 8)
            word = b.load_atomic(state, "seq_cst", 8)
            gen = b.add(b.lshr(word, ir.Constant(I64, 48)), ir.Constant(I64, 1))
            b.store_atomic(b.shl(gen, ir.Constant(I64, 48)), state, "seq_cst", 8)
    b.ret_void()
    kernel = jit_address(mod, "stop_post")

    pool = ThreadPool(2)
    started = np.zeros(1, np.int64)
    table = np.zeros((2, 9), np.int64)
    table[:, 1] = 0, 1
    table[:, 2], table[:, 3] = pool._addr, started.ctypes.data
    pool.launch(kernel[0], launch_record(0, 0, table.ctypes.data, 2, 0, []), (started,))
    assert started[0] == 1, "the worker never took its chunk: nothing was tested"
    worker, = pool._threads
    worker.join(10)
    stuck = worker.is_alive()
    pool._native.post(pool._addr, 0)  # a stuck worker would wake to this, and stop
    worker.join()
    pool._threads = []
    assert not stuck, "a worker whose last claim met the stop post slept on"


def test_sleeping_workers_wake_for_the_next_launch(bump):
    pool = ThreadPool(2, spin=1)
    counts = np.zeros(1000, np.int64)
    launch(pool, bump, counts, 8)
    deadline = time.monotonic() + 5
    while pool.sleepers != 1 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert pool.sleepers == 1  # the worker sleeps on the futex
    launch(pool, bump, counts, 8)
    pool.shutdown()
    assert (counts == 2).all()


def test_launches_from_several_python_threads(bump):
    """A launch that finds the pool busy runs its chunks on its own thread."""
    pool = ThreadPool(2)
    arrays = [np.zeros(20_000, np.int64) for _ in range(4)]

    def user(counts):
        for _ in range(200):
            launch(pool, bump, counts, 16)
    ts = [threading.Thread(target=user, args=(a,)) for a in arrays]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    pool.shutdown()
    for a in arrays:
        assert (a == 200).all()


def test_shutdown_then_run_restarts_the_workers(bump):
    pool = ThreadPool(2)
    counts = np.zeros(1000, np.int64)
    launch(pool, bump, counts, 4)
    pool.shutdown()
    assert not pool._threads
    launch(pool, bump, counts, 4)
    assert len(pool._threads) == 1
    pool.shutdown()
    assert (counts == 2).all()


def test_chunk_count_is_checked(bump):
    pool = ThreadPool(2)
    with pytest.raises(ValueError, match=f"1 to {MAX_CHUNKS} chunks, got {MAX_CHUNKS + 1}"):
        launch(pool, bump, np.zeros(MAX_CHUNKS + 1, np.int64), MAX_CHUNKS + 1)
    pool.shutdown()


def test_kernels_from_several_python_threads_agree_with_the_interpreter():
    """Real reduction and elementwise kernels through one backend's pool,
    from four Python threads at once."""
    backend = CPUBackend(num_threads=2)
    rng = np.random.default_rng(3)
    data = [rng.integers(-20, 21, 600_000).astype(np.float64) / 4 for _ in range(4)]
    k_sum = reduce_kernel("sum", float64)
    k_ew = contiguous_kernel(lambda x: binop("mul", x, x), [float64], float64)
    failures = []

    def user(x):
        for _ in range(10):
            for ours, ref in (run_reduce(k_sum, (1, len(x)), x, backend),
                              run_flat(k_ew, [x], backend)):
                if not all(np.array_equal(a, b) for a, b in zip(ours, ref)):
                    failures.append((ours, ref))
    ts = [threading.Thread(target=user, args=(x,)) for x in data]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    backend.launcher.shutdown()
    assert not failures


def _child_sum(x):
    import lazy
    return float(lazy.asarray(x).sum().numpy())


def test_a_forked_child_runs_parallel_kernels():
    """After fork the child has the state but not the worker threads: its
    launches must still finish (on its own thread) instead of waiting."""
    import multiprocessing as mp

    import lazy
    x = np.arange(1 << 20, dtype=np.float64)
    assert float(lazy.asarray(x).sum().numpy()) == x.sum()  # the parent's pool is running
    with mp.get_context("fork").Pool(1) as p:
        got = p.apply_async(_child_sum, (x,)).get(timeout=60)
    assert got == x.sum()


def test_more_threads_than_chunk_slots():
    """LAZY_NUM_THREADS beyond MAX_CHUNKS / CHUNKS_PER_THREAD: the split is capped."""
    from cpu_backend.launch import CHUNKS_PER_THREAD, Launcher
    threads = MAX_CHUNKS // CHUNKS_PER_THREAD + 1
    split = Launcher(threads).split(reduce_kernel("sum", float64), (1, 1 << 26), False)
    assert len(split.table) <= MAX_CHUNKS
    split = Launcher(threads).split(contiguous_kernel(lambda x: x, [float64], float64),
                                    (1 << 30,), False)
    assert len(split.table) <= MAX_CHUNKS


def test_spins_are_times_turned_into_polls_on_this_cpu():
    """`pause` lasts ~28 ns on Zen 4 and 15-20 on a Xeon: a fixed poll count
    spun 0.3 ms on one and about 0.1 ms on the other. The defaults are
    times, counted in polls as timed here; explicit counts are kept."""
    nat = native()
    assert 0 < nat.poll_seconds < 1e-5
    assert nat.polls_for(1e-3) == round(1e-3 / nat.poll_seconds)
    pool = ThreadPool(2)
    pool.prepare()
    assert (pool.spin, pool.join_spin) == (nat.polls_for(SPIN_SECONDS),
                                           nat.polls_for(JOIN_SPIN_SECONDS))
    assert pool._state[_S_JOIN_SPIN] == pool.join_spin  # what the caller's join reads
    given = ThreadPool(2, spin=7, join_spin=3)
    given.prepare()
    assert (given.spin, given.join_spin, given._state[_S_JOIN_SPIN]) == (7, 3, 3)


@pytest.mark.parametrize("join_spin", [1, None])
def test_a_caller_asleep_for_the_last_chunk_is_woken(bump, join_spin):
    """Uneven chunks: the thread with the short one polls past its join
    spin, then sleeps on `done` until the long one finishes (a lost wake-up
    would hang here, so the launches run on a watched thread)."""
    pool = ThreadPool(2, join_spin=join_spin)
    counts = np.zeros(3_000_000, np.int64)
    table = np.zeros((2, 9), np.int64)
    table[0, 1:3] = 0, 10
    table[1, 1:3] = 10, len(counts)
    finished = threading.Event()

    def launches():
        for _ in range(30):
            run_table(pool, bump, counts, table)
        finished.set()
    threading.Thread(target=launches, daemon=True).start()
    assert finished.wait(120), "a launch never returned: the waiting caller was not woken"
    pool.shutdown()
    assert (counts == 30).all()


def test_the_dispatch_loop_is_compiled_with_the_backend_not_in_a_kernel(monkeypatch):
    """Its one-time compile must not land in the first kernel's logged run
    time: every backend has it ready, one thread too (each launch is a
    call into it, dispatch.py)."""
    import cpu_backend.threadpool as tp
    monkeypatch.setattr(tp, "_NATIVE", None)
    CPUBackend(num_threads=1)
    assert tp._NATIVE is not None
