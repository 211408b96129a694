"""Sorting on host arrays: the CPU side of the `sort` and `argsort` extern
kernels (scheduler/ops.py, SORTS), and of `searchsorted` where LLVM is
unavailable (cpu_backend/search.py runs it otherwise).

The kernel IR has no sort, so these run NumPy's own functions (its AVX-512
sorts where NumPy has them) on the operands' memory, as matmul runs on
BLAS. What they gain over a fallback: nothing syncs at the call, the
kernels before and after them fuse as usual, and since NumPy lets go of
the GIL while it sorts, independent rows (and independent search keys) are
split over threads. Each thread sorts whole rows, so the result is NumPy's
on any thread count. A long 1-D sort is cut by value into a bucket per
thread first (`_sort_buckets`, a sample sort).
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor, wait
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from .pool import MIN_BYTES, empty, pool

MIN_SPLIT = 1 << 16  # fewer elements run on one thread: a hand-off to another costs ~50 us


# partition(x, splitters, out): x's elements into out by bucket between the
# sorted splitters, each bucket in x's order; returns the buckets' bounds
# (the CPU backend's, cpu_backend/partition.py)
Partition = Callable[[np.ndarray, np.ndarray, np.ndarray], list[int]]
# take(src, order, into): into = src gathered by `order` along the sort axis
Take = Callable[[np.ndarray, np.ndarray, np.ndarray], None]
SAMPLE = 4096     # elements a 1-D sort's splitters are chosen from
MAX_BUCKETS = 64  # a 1-D sort's buckets at most (cpu_backend/partition.py's limit)


class _Scratch:
    """A sort's temporaries: arrays from the pool, given back to it when the
    sort is done (`with _Scratch() as new: a = new(shape, dtype)`). glibc
    maps arrays of 40-80 MB fresh on every call, and their first touch costs
    about as much as the pass that fills them. A view of one of them keeps it
    from being handed out again, as for any pooled array (pool.py)."""

    def __init__(self) -> None:
        self._flat: list[np.ndarray] = []

    def __enter__(self) -> _Scratch:
        return self

    def __call__(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        n = math.prod(shape)
        flat = pool.take(n, np.dtype(dtype))
        flat = empty(n, dtype) if flat is None else flat
        self._flat.append(flat)
        return flat.reshape(shape)

    def __exit__(self, *exc: Any) -> None:
        for flat in self._flat:
            if flat.nbytes >= MIN_BYTES:
                pool.give(flat)
        self._flat.clear()


def run(op: str, inputs: list[np.ndarray], out: np.ndarray, arg: Any, threads: int,
        partition: Partition | None = None) -> int:
    """out[...] = op(*inputs), `arg` being the node's (scheduler/ops.py, SORTS);
    returns the number of threads that ran it. With `partition`, a large 1-D
    sort and a large 1-D stable argsort run on every thread too
    (`_sort_buckets`, `_keyed_argsort_1d`)."""
    if op == "searchsorted":
        a, v = inputs
        return _split(lambda part: _search(a, v[part], out[part], arg), v.shape, None, threads)
    (x,) = inputs
    axis, kind = arg
    if partition is not None and x.ndim == 1 and threads > 1 and x.size >= MIN_SPLIT:
        if op == "sort" and kind in ("stable", "any"):
            return _sort_buckets(x, out, kind, threads, partition)
        if op == "argsort" and kind == "stable" and x.size < 2 ** 31:
            parts = _even_parts(len(x), threads)

            def take(src: np.ndarray, order: np.ndarray, into: np.ndarray) -> None:
                _run_parts(lambda p: np.take(src, order[p], out=into[p], mode="clip"), parts,
                           threads)  # "clip": in bounds already, and unbuffered
            with _Scratch() as new:
                _radix_argsort(_digits(x, 0, new), out, new, take,
                               lambda d, o: _keyed_argsort_1d(d, o, threads, partition))
            return threads
    work = _sort if op == "sort" else _argsort
    return _split(lambda part: work(x[part], out[part], axis, kind), x.shape, axis, threads)


def _sort_buckets(x: np.ndarray, out: np.ndarray, kind: str, threads: int,
                  partition: Partition) -> int:
    """A 1-D sort on every thread (a sample sort): x is split by value into a
    bucket per thread, each bucket keeping x's order, and each thread sorts
    one bucket (as `_sort` sorts a row, stably for "stable") into its place.
    The splitters are quantiles of an evenly spaced sample of x; equal
    elements share a bucket, so data with few distinct values may leave a
    thread little to do, but the result does not depend on the split.
    Returns the number of buckets that held anything."""
    sample = np.sort(x[::max(1, len(x) // SAMPLE)])
    sample = sample[:len(sample) - int(np.count_nonzero(sample != sample))]  # NaNs, at the end
    if not len(sample):  # all NaN: nothing to split by
        return _split(lambda part: _sort(x[part], out[part], 0, kind), x.shape, 0, threads)
    k = min(threads, MAX_BUCKETS)
    splitters = sample[[len(sample) * b // k for b in range(1, k)]]
    src = np.ascontiguousarray(x)
    buckets = pool.take(len(x), x.dtype)
    buckets = np.empty_like(src) if buckets is None else buckets
    bounds = partition(src, splitters, buckets)
    parts = [(slice(lo, hi),) for lo, hi in zip(bounds, bounds[1:]) if hi > lo]
    _run_parts(lambda part: _sort(buckets[part], out[part], 0, kind), parts, threads)
    if buckets.nbytes >= MIN_BYTES:
        pool.give(buckets)
    return len(parts)


def _sort(x: np.ndarray, out: np.ndarray, axis: int, kind: str) -> None:
    """A sorted copy of x in out. "stable" uses NumPy's default (fastest) sort,
    whose result a stable sort's differs from only for elements that compare
    equal: those are indistinguishable in an integer, and in a float only
    -0.0/+0.0 and NaN payloads differ, which `_restore_ties` puts back.
    "any" is that sort without the restore."""
    np.copyto(out, x)
    out.sort(axis=axis, kind=None if kind in ("stable", "any") else kind)
    if kind == "stable" and out.dtype.kind == "f":
        _restore_ties(x, out, axis)


def _restore_ties(x: np.ndarray, out: np.ndarray, axis: int) -> None:
    """Zeros and NaNs of each sorted row in x's order: boolean indexing visits
    rows in the same order on both sides, so each row gets its own back. A
    row's NaNs are at its end, so the NaN pass runs only if a row ends in one;
    when only some rows hold a zero (or NaN), only those are gathered and
    written back (4096 rows holding two zeros: 23 -> 7 ms on one thread)."""
    src, dst = np.moveaxis(x, axis, -1), np.moveaxis(out, axis, -1)
    has_nan = dst.size and np.isnan(dst[..., -1]).any()  # NaNs sort last: one look per row
    for same in (lambda v: v == 0,) + ((np.isnan,) if has_nan else ()):
        picked = same(src)
        rows = picked.any(axis=-1)
        if rows.all() or not dst.flags.c_contiguous:
            dst[same(dst)] = src[picked]
        elif rows.any():  # only the rows that hold one: a few, usually
            at = np.flatnonzero(rows)
            n = src.shape[-1]
            into, back = dst.reshape(-1, n)[at], src.reshape(-1, n)[at]
            into[same(into)] = back[same(back)]
            dst.reshape(-1, n)[at] = into


def _argsort(x: np.ndarray, out: np.ndarray, axis: int, kind: str) -> None:
    if kind != "stable" or not x.size or x.shape[axis] >= 2 ** 31:
        out[...] = np.argsort(x, axis=axis, kind=kind)
        return

    def take(src: np.ndarray, order: np.ndarray, into: np.ndarray) -> None:
        into[...] = np.take_along_axis(src, order, axis)
    with _Scratch() as new:
        _radix_argsort(_digits(x, axis, new), out, new, take,
                       lambda d, o: _keyed_argsort(d, o, axis))


def _digits(x: np.ndarray, axis: int, new: _Scratch) -> list[np.ndarray]:
    """x's order as 32-bit digits, least significant first, for a stable
    argsort by keyed sorts (`_radix_argsort`); rows must be shorter than
    2**31 (the keys' index half).

    32-bit data is one digit as it is; int64 data whose values span less
    than 2**32 is one too, shifted into int32 (one pass for the range, one
    for the shift). Other 64-bit data is two: a key in the order NumPy sorts
    (for floats, the bits made monotonic, -0.0 as +0.0 and every NaN one
    NaN above +inf, as NumPy ties them), cut into its low half, read as
    unsigned, and its high half. NumPy's stable argsort of 64-bit data is a
    merge sort on one thread: 10M float64 in 1.8-2.0 s."""
    if x.dtype.itemsize <= 4:
        return [x]
    if x.dtype == np.int64:
        lo, hi = int(x.min()), int(x.max())
        if hi - lo < 2 ** 32:
            # int64 scalars: x - lo lies in [0, 2**32) even where lo + 2**31 would overflow
            return [(x - np.int64(lo) - np.int64(2 ** 31)).astype(np.int32)]
        key = new(x.shape, np.int64)
        np.copyto(key, x)
    else:
        key, flip = new(x.shape, np.int64), new(x.shape, np.uint64)
        np.add(x, 0.0, out=key.view(np.float64))  # -0.0 + 0.0 is +0.0
        np.right_shift(key, 63, out=flip.view(np.int64))  # all ones for a negative
        np.right_shift(flip, np.uint64(1), out=flip)       # ... but the sign bit
        np.bitwise_xor(key, flip.view(np.int64), out=key)
        nan = np.isnan(x, out=new(x.shape, np.bool_))
        if nan.any():
            key[nan] = 0x7FF8000000000000  # above +inf's key
    halves = key.view(np.int32).reshape(*key.shape, 2)  # little-endian: (low, high)
    low = new(x.shape, np.int32)
    np.bitwise_xor(halves[..., 0], np.int32(-2 ** 31), out=low)  # unsigned order as signed
    return [low, halves[..., 1]]


def _radix_argsort(digits: list[np.ndarray], out: np.ndarray, new: _Scratch, take: Take,
                   argsort32: Callable[[np.ndarray, np.ndarray], None]) -> None:
    """A stable argsort by `digits` (least significant first) into `out`: a
    radix sort whose passes are stable argsorts of 32-bit data (`argsort32`,
    a keyed sort). Each later pass sorts its digit read in the order the
    passes before it left, which it keeps among equal digits; `take(src,
    order, into)` gathers src along the sort axis. Two passes (10M float64,
    two threads) take about a third of NumPy's merge sort."""
    if len(digits) == 1:
        argsort32(digits[0], out)
        return
    low, high = digits
    first = new(out.shape, np.int64)
    argsort32(low, first)
    high_in_order = new(out.shape, np.int32)
    take(high, first, high_in_order)
    second = new(out.shape, np.int64)
    argsort32(high_in_order, second)
    take(first, second, out)


def _keyed_argsort(x: np.ndarray, out: np.ndarray, axis: int) -> None:
    """A stable argsort of 32-bit data as one sort of int64 keys (`_keys`):
    NumPy's default int64 sort (AVX-512 where NumPy has it) then does the
    work of its stable argsort (a merge sort), 4.6x faster here."""
    rows = np.moveaxis(x, axis, -1)
    keys = np.empty(rows.shape, np.int64)
    _keys(rows, keys, 0)
    keys.sort(axis=-1)
    np.copyto(np.moveaxis(out, axis, -1), _low(keys))


def _keyed_argsort_1d(x: np.ndarray, out: np.ndarray, threads: int,
                      partition: Partition) -> None:
    """`_keyed_argsort` of one long row on every thread: the keys built and
    read back in parts, and sorted as a sample sort (`_sort_buckets`)."""
    parts = _even_parts(len(x), threads)
    with _Scratch() as new:
        keys = new((len(x),), np.int64)
        _run_parts(lambda part: _keys(x[part], keys[part], part[0].start), parts, threads)
        _sort_buckets(keys, keys, "any", threads, partition)
        low = _low(keys)
        _run_parts(lambda part: np.copyto(out[part], low[part]), parts, threads)


def _even_parts(n: int, threads: int) -> list[tuple[slice]]:
    """[0, n) cut into `threads` parts as even as can be."""
    bounds = [n * i // threads for i in range(threads + 1)]
    return [(slice(lo, hi),) for lo, hi in zip(bounds, bounds[1:])]


def _keys(rows: np.ndarray, keys: np.ndarray, first: int) -> None:
    """int64 keys of 32-bit rows: the value's key in the high half, its index
    along the row (from `first`) in the low half, so equal values order by
    index. A float's key is its bits made monotonic (a negative's magnitude
    bits flipped), with -0.0 turned into +0.0 and every NaN into one NaN, as
    NumPy's order ties them."""
    halves = keys.view(np.int32).reshape(*keys.shape, 2)  # little-endian: (low, high)
    low, high = halves[..., 0], halves[..., 1]
    if rows.dtype.kind == "f":
        np.add(rows, np.float32(0), out=high.view(np.float32))  # -0.0 + 0.0 is +0.0
        np.right_shift(high, 31, out=low)  # low as scratch: all ones for a negative
        np.bitwise_and(low, 0x7FFFFFFF, out=low)
        np.bitwise_xor(high, low, out=high)
        nan = np.isnan(rows)
        if nan.any():
            high[nan] = 0x7FC00000  # above +inf's key
    else:
        np.copyto(high, rows, casting="unsafe")
    low[...] = np.arange(first, first + rows.shape[-1], dtype=np.int32)


def _low(keys: np.ndarray) -> np.ndarray:
    """The index halves of int64 keys."""
    return keys.view(np.int32).reshape(*keys.shape, 2)[..., 0]


def _search(a: np.ndarray, v: np.ndarray, out: np.ndarray, side: str) -> None:
    out[...] = np.searchsorted(a, v, side=side)


def _split(work: Callable[[Any], None], shape: tuple[int, ...], keep: int | None,
           threads: int) -> int:
    """Run `work(index)` on slices that split the largest axis other than
    `keep` (the sort axis) into `threads` parts, the calling thread taking the
    first; small or unsplittable work runs whole. Returns the parts run."""
    sizes = [(n, d) for d, n in enumerate(shape) if d != keep and n > 1]
    total = int(np.prod(shape)) if shape else 1
    if threads < 2 or not sizes or total < MIN_SPLIT:
        work(...)
        return 1
    n, d = max(sizes)
    k = min(threads, n)
    bounds = [n * i // k for i in range(k + 1)]
    _run_parts(work, [(slice(None),) * d + (slice(lo, hi),) for lo, hi in zip(bounds, bounds[1:])],
               threads)
    return k


def _run_parts(work: Callable[[Any], None], parts: list, threads: int) -> None:
    """work(part) for every part, the calling thread taking the first."""
    pending = [_executor(threads - 1, os.getpid()).submit(work, p) for p in parts[1:]]
    try:
        work(parts[0])
    finally:
        wait(pending)  # no part may still write `out` once the step is over
    for f in pending:
        f.result()  # raises what a part raised


@lru_cache(maxsize=None)
def _executor(workers: int, pid: int) -> ThreadPoolExecutor:
    """Threads kept for the sorts (NumPy's code runs on them without the GIL).
    Per process: a forked child has the parent's executor but none of its
    threads, so work handed to it would wait forever."""
    return ThreadPoolExecutor(workers, thread_name_prefix="lazyrt-sort")
