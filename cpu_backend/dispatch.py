"""One native call per kernel launch.

A launch used to cost a dozen small Python steps: an address lookup per
buffer (`ctypes.c_char.from_buffer`), a NumPy array of pointers, NumPy
arrays for partial accumulators, the pool's fields written one by one, then
separate ctypes calls to post, join and fold. Warm, that is ~10 us. After
a big array operation has evicted the caches (a 64 MB reduction, say) each
of those steps costs 10-40 us, and together they were a quarter of the
Python in a cold sync (docs/performance_history.md, "Dispatch in one native call").

`lazy_launch(state, fn, record, buffers, given)` does all of it in one call:

* `record`: int64 fields fixed per prepared launch (`launch_record`): the
  packed arguments, scalars, control-block table and chunk count, the fold
  block (0 for none) and the byte sizes of the partial buffers.
* `buffers`: the tuple of arrays the kernel reads and writes (None for an
  iota input). Their data pointers are read from the objects themselves:
  a tuple keeps its items right after its size, and NumPy's array struct
  its data pointer right after the object header (the field PyArray_DATA
  reads). `object_layout` checks both offsets against what Python reports,
  once per process; where they disagree, `given` carries the pointers,
  looked up in Python, and `buffers` is None.
* partial accumulators are malloc'd before the chunks run and freed after
  the fold; the pointer table lives on the native stack.
* `state`: the pool's state when the caller owns the pool (the chunks go
  to every thread, threadpool.py), or null: the chunks run here, in order.

Returns 0, or -1 when a partial buffer could not be allocated (nothing ran).
The call runs without the GIL (ctypes releases it); the tuple holds every
array alive until it returns, and an array's data pointer never moves while
something references it.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np
from llvmlite import ir

RECORD_FIXED = 6  # args, scalars, ctl, chunks, final, partial count; then the byte sizes

_I64 = ir.IntType(64)
_I8P = ir.IntType(8).as_pointer()
_KERNEL = ir.FunctionType(ir.VoidType(), [_I8P] * 4)


def object_layout() -> tuple[int, int, int] | None:
    """(tuple size offset, tuple items offset, array data offset), or None
    when this interpreter lays its objects out otherwise."""
    size_at, items_at = tuple.__basicsize__ - 8, tuple.__basicsize__
    data_at = object.__basicsize__
    if tuple.__itemsize__ != 8 or np.ndarray.__basicsize__ < data_at + 8:
        return None
    a = np.arange(3.0)
    b = np.zeros(7, np.float32)[2:]  # a view: its data pointer is not its base's
    t = (a, None, b)
    word = ctypes.c_int64.from_address
    if word(id(t) + size_at).value != len(t):
        return None
    if any(word(id(t) + items_at + 8 * i).value != id(x) for i, x in enumerate(t)):
        return None
    if any(word(id(x) + data_at).value != x.__array_interface__["data"][0] for x in (a, b)):
        return None
    return size_at, items_at, data_at


@dataclass(frozen=True)
class LaunchRecord:
    """The int64 fields `lazy_launch` reads, with their address and chunk
    count looked up once (kept alive by whoever holds the launch)."""
    array: np.ndarray
    address: int
    chunks: int


def launch_record(args: int, scalars: int, table: int, chunks: int, final: int,
                  partial_bytes: list[int]) -> LaunchRecord:
    array = np.array([args, scalars, table, chunks, final, len(partial_bytes), *partial_bytes],
                     np.int64)
    return LaunchRecord(array, array.__array_interface__["data"][0], chunks)


def for_range(b: ir.IRBuilder, lo: ir.Value, hi: ir.Value, body) -> None:
    """for (i = lo; i < hi; i++) body(i), leaving `b` after the loop (body may
    nest loops: the latch is wherever it leaves `b`)."""
    fn = b.function
    pre = b.block
    head, step, out = (fn.append_basic_block(x) for x in ("for", "for.body", "for.end"))
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(_I64)
    i.add_incoming(lo, pre)
    b.cbranch(b.icmp_signed("<", i, hi), step, out)
    b.position_at_end(step)
    body(i)
    i.add_incoming(b.add(i, ir.Constant(_I64, 1)), b.block)
    b.branch(head)
    b.position_at_end(out)


def emit_launch(mod: ir.Module, post: ir.Function | None, join: ir.Function | None,
                slots: dict[str, int], layout: tuple[int, int, int] | None) -> ir.Function:
    """Add `i64 lazy_launch(i64* state, i64 fn, i64* record, i8* buffers,
    i64* given)` to the pool's module (`slots`: the state's field indexes).
    Without a pool (no post and join) every launch runs on its caller."""
    p64 = _I64.as_pointer()
    fn = ir.Function(mod, ir.FunctionType(_I64, [p64, _I64, p64, _I8P, p64]), "lazy_launch")
    state, kfn, rec, objs, given = fn.args
    malloc = ir.Function(mod, ir.FunctionType(_I8P, [_I64]), "malloc")
    free = ir.Function(mod, ir.FunctionType(ir.VoidType(), [_I8P]), "free")
    c = lambda v: ir.Constant(_I64, v)  # noqa: E731
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    args, scalars, ctl, chunks, final, nparts = (b.load(b.gep(rec, [c(i)]))
                                                 for i in range(RECORD_FIXED))

    # how many buffers: from `given` (its first word) or the tuple's size
    from_given, from_objs, counted = (fn.append_basic_block(x)
                                      for x in ("given", "objects", "counted"))
    use_given = b.icmp_unsigned("!=", b.ptrtoint(given, _I64), c(0))
    b.cbranch(use_given, from_given, from_objs)
    b.position_at_end(from_given)
    k_given = b.load(given)
    b.branch(counted)
    b.position_at_end(from_objs)
    size_at, items_at, data_at = layout or (0, 0, 0)
    k_objs = b.load(b.inttoptr(b.add(b.ptrtoint(objs, _I64), c(size_at)), p64)) if layout \
        else c(0)
    b.branch(counted)
    b.position_at_end(counted)
    k = b.phi(_I64)
    k.add_incoming(k_given, from_given)
    k.add_incoming(k_objs, from_objs)
    ptrs = b.alloca(_I64, b.add(k, nparts), name="ptrs")

    def from_object(i, slot):  # the tuple's item i: None, or an array's data pointer
        item = b.load(b.inttoptr(b.add(b.ptrtoint(objs, _I64),
                                       b.add(c(items_at), b.mul(i, c(8)))), p64))
        with b.if_else(b.icmp_unsigned("==", item, c(id(None)))) as (none, array):
            with none:
                b.store(c(0), slot)
            with array:
                b.store(b.load(b.inttoptr(b.add(item, c(data_at)), p64)), slot)

    def pointer(i):
        slot = b.gep(ptrs, [i])
        if layout is None:
            b.store(b.load(b.gep(given, [b.add(i, c(1))])), slot)
            return
        with b.if_else(use_given) as (then, otherwise):
            with then:
                b.store(b.load(b.gep(given, [b.add(i, c(1))])), slot)
            with otherwise:
                from_object(i, slot)
    for_range(b, c(0), k, pointer)

    # partial accumulators; if one cannot be had, free the others and run nothing
    failed = b.alloca(_I64, name="failed")
    b.store(c(0), failed)

    def allocate(j):  # a slot of 0 bytes (a launch without partials) stays null
        nbytes = b.load(b.gep(rec, [b.add(j, c(RECORD_FIXED))]))
        slot = b.gep(ptrs, [b.add(k, j)])
        b.store(c(0), slot)
        with b.if_then(b.icmp_unsigned("!=", nbytes, c(0))):
            p = b.ptrtoint(b.call(malloc, [nbytes]), _I64)
            b.store(p, slot)
            with b.if_then(b.icmp_unsigned("==", p, c(0))):
                b.store(c(1), failed)
    for_range(b, c(0), nparts, allocate)

    def release():
        for_range(b, c(0), nparts, lambda j: b.call(free, [b.inttoptr(
            b.load(b.gep(ptrs, [b.add(k, j)])), _I8P)]))

    run, oom = fn.append_basic_block("run"), fn.append_basic_block("oom")
    b.cbranch(b.icmp_unsigned("!=", b.load(failed), c(0)), oom, run)
    b.position_at_end(oom)
    release()  # free(NULL) is a no-op
    b.ret(c(-1))

    b.position_at_end(run)
    kernel = b.inttoptr(kfn, _KERNEL.as_pointer())
    a8, p8, s8 = b.inttoptr(args, _I8P), b.bitcast(ptrs, _I8P), b.inttoptr(scalars, _I8P)

    def here():  # every chunk on this thread, in order
        for_range(b, c(0), chunks, lambda i: b.call(kernel, [
            a8, p8, b.inttoptr(b.add(ctl, b.mul(i, c(8 * slots["ctl_len"]))), _I8P), s8]))

    if post is None:
        here()
    else:
        with b.if_else(b.icmp_unsigned("==", b.ptrtoint(state, _I64), c(0))) as (alone, pooled):
            with alone:
                here()
            with pooled:  # the fields first; post publishes them with its seq_cst store
                for name, v in (("fn", kfn), ("args", args), ("ptrs", b.ptrtoint(ptrs, _I64)),
                                ("scalars", scalars), ("ctl", ctl)):
                    b.store(v, b.gep(state, [c(slots[name])]))
                b.call(post, [state, chunks])
                b.call(join, [state, chunks])
    with b.if_then(b.icmp_unsigned("!=", final, c(0))):  # fold the partials
        b.call(kernel, [a8, p8, b.inttoptr(final, _I8P), s8])
    release()
    b.ret(c(0))
    return fn


def pointers(buffers: tuple) -> np.ndarray:
    """`given` for an interpreter whose layout `object_layout` rejected:
    the count, then each buffer's data pointer (0 for None)."""
    return np.array([len(buffers)] + [0 if x is None else x.__array_interface__["data"][0]
                                      for x in buffers], np.int64)
