"""A thread pool whose dispatch loop is native code.

Why not `concurrent.futures`: a submit/result round trip costs 30-60 us
here, and each worker then runs Python (under the GIL, against the caller's
own Python) before its kernel starts. For a 1.5 ms row sum that is a tenth
of the time. Here a launch is one table of control blocks (one per chunk,
codegen.CTL) and every thread, the caller included, takes chunks from it
in native code with an atomic add, calling the kernel's entry point
directly, without the GIL. Between launches the workers spin for a while
(SPIN_SECONDS, 0.3 ms, as a count of polls timed when the pool is
compiled) so that back-to-back kernels start at once, then sleep in the
kernel (a Linux futex on the launch tag) until the next
launch wakes them: a worker never needs the GIL, not even to wake up.
The caller, once its own chunks are done, polls briefly and then sleeps
on `done` too, so that its core is free for a worker another process
preempted.

The shared state is one int64 array (`_S_*` slots). Its `word` packs the
launch generation (bits 48-63), the chunk count n (32-47), the chunks
taken from the back (16-31) and those taken from the front (0-15); bits
32-63 are the launch tag, which workers compare and sleep on. A thread
claims a chunk by a fetch-add on the whole word, so a claim names its own
generation and can never run a chunk of a launch whose fields are not
fully written. The caller takes chunks from the front (0, 1, ...) and
the workers from the back (n-1, n-2, ...), meeting wherever the load puts
them. With two threads each reads one contiguous stretch, and the worker
starts on the end of the data that a front-to-back pass before (a
producer kernel, NumPy) left in the cache, instead of both threads
starting on the cold front and evicting that end before they reach it.
The fields of a launch are read only after a valid claim (front + back <
n before the add), and the caller rewrites them only after every claimed
chunk reported `done`: no stale read is possible. A launch that finds the
pool busy (another Python thread is launching) runs all its chunks on the
calling thread instead of waiting. Where there is no futex (not Linux),
every launch runs on the calling thread.
"""
from __future__ import annotations

import atexit
import ctypes
import platform
import sys
import threading
import time
import weakref

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from .dispatch import LaunchRecord, emit_launch, object_layout, pointers

CTL_LEN = 9               # int64 fields per control block (codegen.CTL)
MAX_CHUNKS = 1 << 12      # n and both claim counts have 16 bits; a count may pass n by the thread count
SPIN_SECONDS = 3e-4       # a worker polls this long for the next launch before it sleeps
JOIN_SPIN_SECONDS = 6e-5  # the caller polls this long for the last chunks before it sleeps

_S_WORD, _S_DONE, _S_SLEEPERS = 0, 8, 16  # each on its own cache line
_S_FN, _S_ARGS, _S_PTRS, _S_SCALARS, _S_CTL, _S_STOP, _S_JOINER = 24, 25, 26, 27, 28, 29, 30
_S_JOIN_SPIN = 31         # the caller's polls before it sleeps (JOIN_SPIN_SECONDS)
_S_SIZE = 32

# futex(2): the syscall number per Linux architecture; private wait/wake ops
_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine()) \
    if sys.platform.startswith("linux") else None
_FUTEX_WAIT, _FUTEX_WAKE = 128, 129

_I64, _I8P = ir.IntType(64), ir.IntType(8).as_pointer()
_KERNEL = ir.FunctionType(ir.VoidType(), [_I8P] * 4)


def _slot(b: ir.IRBuilder, state: ir.Value, i: int) -> ir.Value:
    return b.gep(state, [ir.Constant(_I64, i)])


def _pause(b: ir.IRBuilder) -> None:
    """The spin-wait hint (x86 `pause`): saves power and frees the core's
    other hardware thread; elsewhere the poll loop simply has none."""
    if not llvm.get_process_triple().startswith(("x86_64", "i686", "i386")):
        return
    fn = b.module.globals.get("llvm.x86.sse2.pause") or \
        ir.Function(b.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
    b.call(fn, [])


def _claims(mod: ir.Module, syscall: ir.Function) -> ir.Function:
    """i64 claims(i64* state, i64 back): run chunks, from the front (back = 0)
    or the back (1), until a claim fails; returns that claim's launch tag
    (the word's bits 32-63: every chunk of that launch is taken). After each
    chunk, a caller asleep in join is woken to count again."""
    fn = ir.Function(mod, ir.FunctionType(_I64, [_I64.as_pointer(), _I64]), "lazy_pool_claims")
    fn.linkage = "internal"
    state, back = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    loop, body, out = (fn.append_basic_block(n) for n in ("claim", "run", "out"))
    b.branch(loop)
    b.position_at_end(loop)
    step = b.shl(ir.Constant(_I64, 1), b.mul(back, ir.Constant(_I64, 16)))
    w = b.atomic_rmw("add", _slot(b, state, _S_WORD), step, "seq_cst")
    mask = ir.Constant(_I64, 0xFFFF)
    front, taken = b.and_(w, mask), b.and_(b.lshr(w, ir.Constant(_I64, 16)), mask)
    n = b.and_(b.lshr(w, ir.Constant(_I64, 32)), mask)
    b.cbranch(b.icmp_unsigned("<", b.add(front, taken), n), body, out)
    b.position_at_end(body)
    idx = b.select(b.trunc(back, ir.IntType(1)),
                   b.sub(b.sub(n, ir.Constant(_I64, 1)), taken), front)
    ptr = [b.inttoptr(b.load(_slot(b, state, s)), _I8P) for s in (_S_ARGS, _S_PTRS)]
    ctl = b.add(b.load(_slot(b, state, _S_CTL)), b.mul(idx, ir.Constant(_I64, 8 * CTL_LEN)))
    scalars = b.inttoptr(b.load(_slot(b, state, _S_SCALARS)), _I8P)
    kernel = b.inttoptr(b.load(_slot(b, state, _S_FN)), _KERNEL.as_pointer())
    b.call(kernel, ptr + [b.inttoptr(ctl, _I8P), scalars])
    b.atomic_rmw("add", _slot(b, state, _S_DONE), ir.Constant(_I64, 1), "seq_cst")
    joiner = b.load_atomic(_slot(b, state, _S_JOINER), "seq_cst", 8)
    wake = fn.append_basic_block("wake")
    b.cbranch(b.icmp_unsigned("!=", joiner, ir.Constant(_I64, 0)), wake, loop)
    b.position_at_end(wake)
    _futex(b, syscall, _slot(b, state, _S_DONE), 0, _FUTEX_WAKE, ir.Constant(_I64, 1))
    b.branch(loop)
    b.position_at_end(out)
    b.ret(b.lshr(w, ir.Constant(_I64, 32)))
    return fn


def _load_word(b: ir.IRBuilder, state: ir.Value, slot: int) -> ir.Value:
    return b.load_atomic(_slot(b, state, slot), "acquire", 8)


def _module(layout: tuple[int, int, int] | None) -> ir.Module:
    """The pool's functions (where there is a futex) and lazy_launch (dispatch.py)."""
    mod = ir.Module("lazy_threadpool")
    post, join = _pool(mod) if _SYS_FUTEX is not None else (None, None)
    _polls(mod)
    emit_launch(mod, post, join, {"fn": _S_FN, "args": _S_ARGS, "ptrs": _S_PTRS,
                                  "scalars": _S_SCALARS, "ctl": _S_CTL, "ctl_len": CTL_LEN},
                layout)
    return mod


def _pool(mod: ir.Module) -> tuple[ir.Function, ir.Function]:
    """post, join and worker (the latter called by name); returns post and join."""
    syscall = ir.Function(mod, ir.FunctionType(_I64, [_I64], var_arg=True), "syscall")
    claims = _claims(mod, syscall)
    sptr = _I64.as_pointer()

    # i64 post(state, n): publish the launch whose fields the caller has
    # written, and wake the workers that sleep
    post = ir.Function(mod, ir.FunctionType(_I64, [sptr, _I64]), "lazy_pool_post")
    state, n = post.args
    entry, wake, out = (post.append_basic_block(x) for x in ("entry", "wake", "out"))
    b = ir.IRBuilder(entry)
    b.store_atomic(ir.Constant(_I64, 0), _slot(b, state, _S_DONE), "seq_cst", 8)
    gen = b.add(b.lshr(_load_word(b, state, _S_WORD), ir.Constant(_I64, 48)), ir.Constant(_I64, 1))
    word = b.or_(b.shl(gen, ir.Constant(_I64, 48)), b.shl(n, ir.Constant(_I64, 32)))
    b.store_atomic(word, _slot(b, state, _S_WORD), "seq_cst", 8)
    sleepers = b.load_atomic(_slot(b, state, _S_SLEEPERS), "seq_cst", 8)
    b.cbranch(b.icmp_unsigned("!=", sleepers, ir.Constant(_I64, 0)), wake, out)
    b.position_at_end(wake)
    _futex(b, syscall, _slot(b, state, _S_WORD), 4, _FUTEX_WAKE, ir.Constant(_I64, 2 ** 31 - 1))
    b.branch(out)
    b.position_at_end(out)
    b.ret(gen)

    # void join(state, n): take chunks, then wait until all n are done:
    # poll, then sleep on `done` (an idle core lets the scheduler move a
    # worker that another process preempted mid-chunk onto it)
    join = ir.Function(mod, ir.FunctionType(ir.VoidType(), [sptr, _I64]), "lazy_pool_join")
    state, n = join.args
    entry, wait, spin, sleep, nap, out = (join.append_basic_block(x) for x in
                                          ("entry", "wait", "spin", "sleep", "nap", "out"))
    b = ir.IRBuilder(entry)
    b.call(claims, [state, ir.Constant(_I64, 0)])
    b.branch(wait)
    b.position_at_end(wait)
    count = b.phi(_I64)
    count.add_incoming(ir.Constant(_I64, 0), entry)
    done = _load_word(b, state, _S_DONE)
    b.cbranch(b.icmp_unsigned(">=", done, n), out, spin)
    b.position_at_end(spin)
    nxt = b.add(count, ir.Constant(_I64, 1))
    count.add_incoming(nxt, spin)
    count.add_incoming(nxt, nap)
    _pause(b)
    b.cbranch(b.icmp_unsigned("<", count, b.load(_slot(b, state, _S_JOIN_SPIN))), wait, sleep)
    # say we sleep, then look again: a chunk finishing in between either
    # sees the flag (and wakes us) or is seen here
    b.position_at_end(sleep)
    b.store_atomic(ir.Constant(_I64, 1), _slot(b, state, _S_JOINER), "seq_cst", 8)
    again = b.load_atomic(_slot(b, state, _S_DONE), "seq_cst", 8)
    b.cbranch(b.icmp_unsigned(">=", again, n), out, nap)
    b.position_at_end(nap)
    _futex(b, syscall, _slot(b, state, _S_DONE), 0, _FUTEX_WAIT,
           b.and_(again, ir.Constant(_I64, 0xFFFFFFFF)))
    b.branch(wait)
    b.position_at_end(out)
    b.store_atomic(ir.Constant(_I64, 0), _slot(b, state, _S_JOINER), "seq_cst", 8)
    b.ret_void()

    # i64 worker(state, seen, spins): serve launches until the pool stops
    # (returns -1); after `spins` polls without a launch, sleep on the futex
    work = ir.Function(mod, ir.FunctionType(_I64, [sptr, _I64, _I64]), "lazy_pool_worker")
    state, seen0, spins = work.args
    entry, poll, serve, idle, spin, sleep, wait, woke, stop = (
        work.append_basic_block(x) for x in
        ("entry", "poll", "serve", "idle", "spin", "sleep", "wait", "woke", "stop"))
    b = ir.IRBuilder(entry)
    b.branch(poll)
    b.position_at_end(poll)
    seen, count = b.phi(_I64), b.phi(_I64)
    seen.add_incoming(seen0, entry)
    count.add_incoming(ir.Constant(_I64, 0), entry)
    tag = b.lshr(_load_word(b, state, _S_WORD), ir.Constant(_I64, 32))
    b.cbranch(b.icmp_unsigned("!=", tag, seen), serve, idle)
    b.position_at_end(serve)
    served = b.call(claims, [state, ir.Constant(_I64, 1)])
    seen.add_incoming(served, serve)
    count.add_incoming(ir.Constant(_I64, 0), serve)
    # STOP is looked at only here, after the claims: shutdown posts n = 0,
    # so its launch has nothing to claim, and a claim that failed on that post
    # leaves its tag in `seen`, where `poll` would never see it as new
    b.cbranch(b.icmp_unsigned("!=", _load_word(b, state, _S_STOP), ir.Constant(_I64, 0)),
              stop, poll)
    b.position_at_end(idle)
    nxt = b.add(count, ir.Constant(_I64, 1))
    b.cbranch(b.icmp_unsigned("<", nxt, spins), spin, sleep)
    b.position_at_end(spin)
    _pause(b)
    seen.add_incoming(seen, spin)
    count.add_incoming(nxt, spin)
    b.branch(poll)
    # count as a sleeper, then look again: a launch posted in between either
    # sees the count (and wakes us) or is seen here; the futex itself only
    # sleeps while the launch tag is still `seen`
    b.position_at_end(sleep)
    one = ir.Constant(_I64, 1)
    b.atomic_rmw("add", _slot(b, state, _S_SLEEPERS), one, "seq_cst")
    again = b.lshr(b.load_atomic(_slot(b, state, _S_WORD), "seq_cst", 8), ir.Constant(_I64, 32))
    b.cbranch(b.icmp_unsigned("==", again, seen), wait, woke)
    b.position_at_end(wait)
    _futex(b, syscall, _slot(b, state, _S_WORD), 4, _FUTEX_WAIT,
           b.and_(seen, ir.Constant(_I64, 0xFFFFFFFF)))
    b.branch(woke)
    b.position_at_end(woke)
    b.atomic_rmw("sub", _slot(b, state, _S_SLEEPERS), one, "seq_cst")
    seen.add_incoming(seen, woke)
    count.add_incoming(ir.Constant(_I64, 0), woke)
    b.branch(poll)
    b.position_at_end(stop)
    b.ret(ir.Constant(_I64, -1))
    return post, join


def _polls(mod: ir.Module) -> None:
    """i64 polls(state, n): n idle polls as the worker's and the caller's
    (an acquire load of the word, then `pause`), to time one (_Native.poll_seconds)."""
    fn = ir.Function(mod, ir.FunctionType(_I64, [_I64.as_pointer(), _I64]), "lazy_pool_polls")
    state, n = fn.args
    entry, loop, out = (fn.append_basic_block(x) for x in ("entry", "loop", "out"))
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i, acc = b.phi(_I64), b.phi(_I64)
    i.add_incoming(ir.Constant(_I64, 0), entry)
    acc.add_incoming(ir.Constant(_I64, 0), entry)
    nxt_acc = b.xor(acc, _load_word(b, state, _S_WORD))
    _pause(b)
    nxt = b.add(i, ir.Constant(_I64, 1))
    i.add_incoming(nxt, loop)
    acc.add_incoming(nxt_acc, loop)
    b.cbranch(b.icmp_unsigned("<", nxt, n), loop, out)
    b.position_at_end(out)
    b.ret(nxt_acc)


def _futex(b: ir.IRBuilder, syscall: ir.Function, slot: ir.Value, offset: int, op: int,
           value: ir.Value) -> None:
    """futex(op) on the 32-bit half of a state slot at byte `offset`: 4 is
    the word's launch tag (generation and n), 0 the low half of `done`, on
    the little-endian machines _SYS_FUTEX lists. glibc's `syscall` reads
    every argument as a long, so all are passed as i64."""
    addr = b.add(b.ptrtoint(slot, _I64), ir.Constant(_I64, offset))
    zero = ir.Constant(_I64, 0)
    b.call(syscall, [ir.Constant(_I64, _SYS_FUTEX), addr, ir.Constant(_I64, op), value,
                     zero, zero, zero])


class _Native:
    """The compiled dispatch functions: one MCJIT engine per process."""

    def __init__(self) -> None:
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_triple(llvm.get_process_triple())
        tm = target.create_target_machine(opt=2, jit=True)
        self.layout = object_layout()
        mod = llvm.parse_assembly(str(_module(self.layout)))
        mod.verify()
        self.engine = llvm.create_mcjit_compiler(mod, tm)
        self.engine.finalize_object()
        addr = self.engine.get_function_address
        if _SYS_FUTEX is not None:
            self.post = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)(
                addr("lazy_pool_post"))
            self.worker = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                           ctypes.c_int64)(addr("lazy_pool_worker"))
        self._launch = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p)(
            addr("lazy_launch"))
        self._polls = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)(
            addr("lazy_pool_polls"))
        self.poll_seconds = self._time_polls()

    def _time_polls(self, n: int = 20_000) -> float:
        """Seconds per idle poll, the best of a few runs: `pause` takes ~28 ns
        on Zen 4 and 15-20 on an Emerald Rapids Xeon, so spins are set as times
        and turned into poll counts here (10,000 polls, 0.3 ms on the first,
        left a worker asleep ~0.1 ms after a sync on the second:
        docs/performance.md)."""
        word = np.zeros(_S_SIZE, np.int64)
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            self._polls(word.ctypes.data, n)
            best = min(best, time.perf_counter() - t0)
        return max(best / n, 1e-10)

    def polls_for(self, seconds: float) -> int:
        """How many idle polls take about `seconds` here."""
        return max(1, round(seconds / self.poll_seconds))

    def launch(self, state: int | None, fn: int, record: int, buffers: tuple) -> int:
        """dispatch.py's lazy_launch: the buffers' pointers read natively, or
        looked up here where `object_layout` found an unexpected layout."""
        if self.layout is not None:
            return self._launch(state, fn, record, buffers, None)
        given = pointers(buffers)
        return self._launch(state, fn, record, None, given.ctypes.data)


_NATIVE: _Native | None = None
_NATIVE_LOCK = threading.Lock()
_POOLS: weakref.WeakSet = weakref.WeakSet()


def native() -> _Native:
    """The dispatch functions, compiled on first use."""
    global _NATIVE
    with _NATIVE_LOCK:
        if _NATIVE is None:
            _NATIVE = _Native()
        return _NATIVE


class ThreadPool:
    """`threads - 1` workers plus the calling thread, started on first use."""

    def __init__(self, threads: int, spin: int | None = None, join_spin: int | None = None):
        """`spin`, `join_spin`: idle polls before a worker, and the caller
        waiting for the last chunks, sleep (default: SPIN_SECONDS and
        JOIN_SPIN_SECONDS' worth on this CPU)."""
        self.threads, self.spin, self.join_spin = threads, spin, join_spin
        raw = np.zeros(_S_SIZE + 8, np.int64)
        skip = (-raw.ctypes.data % 64) // 8  # the word on its own cache line
        self._state = raw[skip: skip + _S_SIZE]
        self._addr = self._state.ctypes.data
        self._busy = threading.Lock()     # one launch at a time owns the state
        self._threads: list[threading.Thread] = []
        self._native: _Native | None = None

    def _start(self) -> None:
        seen = self._tag()
        self._threads = [threading.Thread(target=self._serve, args=(seen,), name=f"lazy-cpu-{i}",
                                          daemon=True) for i in range(self.threads - 1)]
        for t in self._threads:
            t.start()
        _POOLS.add(self)

    def prepare(self) -> _Native:
        """Compile the dispatch code now (~15-25 ms, once per process), so that it
        is not counted in the first kernel's logged run time."""
        if self._native is None:
            nat = native()
            if self.spin is None:
                self.spin = nat.polls_for(SPIN_SECONDS)
            if self.join_spin is None:
                self.join_spin = nat.polls_for(JOIN_SPIN_SECONDS)
            self._state[_S_JOIN_SPIN] = self.join_spin
            self._native = nat
        return self._native

    def _tag(self) -> int:
        return (int(self._state[_S_WORD]) >> 32) & 0xFFFFFFFF

    def _serve(self, seen: int) -> None:
        self._native.worker(self._addr, seen, self.spin)  # returns when the pool stops

    @property
    def sleepers(self) -> int:
        """Workers asleep on the futex now (tests)."""
        return int(self._state[_S_SLEEPERS])

    def launch(self, fn: int, record: LaunchRecord, buffers: tuple) -> None:
        """Run `record`'s launch with the kernel at address `fn` over
        `buffers`: on every thread when it has several chunks and no other
        Python thread is launching, else on this thread; returns when every
        chunk is done."""
        chunks = record.chunks
        if not 0 < chunks <= MAX_CHUNKS:
            raise ValueError(f"a launch needs 1 to {MAX_CHUNKS} chunks, got {chunks}")
        nat = self._native if self._native is not None else self.prepare()
        if chunks < 2 or self.threads == 1 or _SYS_FUTEX is None or \
                not self._busy.acquire(blocking=False):
            rc = nat.launch(None, fn, record.address, buffers)
        else:
            try:
                if not self._threads:
                    self._start()
                rc = nat.launch(self._addr, fn, record.address, buffers)
            finally:
                self._busy.release()
        if rc:
            raise MemoryError("a kernel launch could not allocate its partial accumulators")

    def shutdown(self) -> None:
        """Stop and join the workers (at exit, before the JIT's code is freed)."""
        with self._busy:
            if not self._threads:
                return
            self._state[_S_STOP] = 1
            self._native.post(self._addr, 0)
            for t in self._threads:
                t.join()
            self._threads = []
            self._state[_S_STOP] = 0


@atexit.register
def _stop_all() -> None:
    for pool in list(_POOLS):
        pool.shutdown()
