"""sort / argsort / searchsorted: deferred extern kernels (lazy/sorting.py,
scheduler/sorting.py), checked against NumPy and PyTorch. This module runs
under LAZY_FALLBACK=error, so none of these is a fallback."""
from __future__ import annotations

import re
import time

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st
from numpy.exceptions import AxisError

import lazy
import lazy.numpy as lnp
from conftest import DTYPE_NAMES, same, sample
from scheduler import backends, sorting

pytestmark = pytest.mark.usefixtures("strict_fallback")

BITS = {"float32": np.uint32, "float64": np.uint64}


def tricky(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Data full of ties; floats also hold -0.0, +0.0, NaN and a NaN with another payload,
    which compare equal to their kind but differ in bits."""
    if dtype not in BITS:
        return sample(shape, dtype, rng, low=-2, high=3)
    bits = [0x7FC00001, 0xFFC00000] if dtype == "float32" else \
        [0x7FF8000000000001, 0xFFF8000000000000]
    nans = list(np.array(bits, BITS[dtype]).view(dtype))  # another payload, a negative NaN
    return rng.choice(np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.nan, *nans], dtype), shape)


def bitwise(a: np.ndarray) -> np.ndarray:
    return a.view(BITS[a.dtype.name]) if a.dtype.name in BITS else a


def stable_order(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """A stable sort's indices by Python's own sort: NaNs last (first descending),
    equal elements in their original order either way. Independent of NumPy's sorts."""
    def row_order(row: np.ndarray) -> list[int]:
        def key(i: int):
            v = row[i]
            nan = bool(v != v)
            num = 0.0 if nan else float(v)
            return (not nan, -num, i) if descending else (nan, num, i)
        return sorted(range(len(row)), key=key)
    moved = np.moveaxis(a, axis, -1)
    idx = np.array([row_order(r) for r in moved.reshape(-1, moved.shape[-1])], np.int64)
    return np.moveaxis(idx.reshape(moved.shape), -1, axis)


@settings(max_examples=80, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(DTYPE_NAMES), axis_pick=st.integers(0, 2),
       descending=st.booleans(), seed=st.integers(0, 2 ** 16),
       view=st.sampled_from(["plain", "transposed", "reversed"]))
def test_stable_sorts_match_a_reference_sort_bit_for_bit(shape, dtype, axis_pick, descending,
                                                         seed, view):
    """The default (stable) sort and argsort, every axis, both directions, through
    views: the indices a stable sort gives, and the values at them to the bit."""
    a = tricky(shape, dtype, np.random.default_rng(seed))
    t = lazy.asarray(a)
    if view == "transposed":
        a, t = a.T, t.T
    elif view == "reversed":
        a, t = a[::-1], t[::-1]
    axis = axis_pick % a.ndim
    want = stable_order(a, axis, descending)
    same(lnp.argsort(t, axis=axis, descending=descending), want)
    got = lnp.sort(t, axis=axis, descending=descending)
    same(got, np.take_along_axis(a, want, axis))
    np.testing.assert_array_equal(bitwise(got.numpy()), bitwise(np.take_along_axis(a, want, axis)))


@pytest.mark.parametrize("kind", ["quicksort", "heapsort", "stable", "mergesort"])
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_numpy_kinds_give_numpys_result(kind, dtype):
    """An explicit kind runs NumPy's sort of that kind: its result, bit for bit."""
    a = tricky((6, 40), dtype, np.random.default_rng(3))
    x = lnp.asarray(a)
    for axis in (0, 1, None):
        got = lnp.sort(x, axis=axis, kind=kind)
        want = np.sort(a, axis=axis, kind=kind)
        same(got, want)
        np.testing.assert_array_equal(bitwise(got.numpy()), bitwise(want))
        same(lnp.argsort(x, axis=axis, kind=kind), np.argsort(a, axis=axis, kind=kind))
    same(x.argsort(0, "q"), a.argsort(0, "q"))  # NumPy reads the kind by its first letter


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("shape, axis", [((300, 400), 1), ((300, 400), 0), ((3, 50, 600), 1),
                                         ((200_000,), 0)])
def test_rows_split_over_threads_give_numpys_result(threads, shape, axis):
    """Above MIN_SPLIT the rows (never a row) are split over the threads; the
    result is the same bits on any thread count, a stable float sort included."""
    a = tricky(shape, "float32", np.random.default_rng(5))
    assert a.size >= sorting.MIN_SPLIT
    out = np.empty_like(a)
    parts = sorting.run("sort", [a], out, (axis, "stable"), threads)
    assert parts == (1 if a.ndim == 1 else threads)
    np.testing.assert_array_equal(out.view(np.uint32), np.sort(a, axis, kind="stable")
                                  .view(np.uint32))
    idx = np.empty(a.shape, np.int64)
    sorting.run("argsort", [a], idx, (axis, "stable"), threads)
    np.testing.assert_array_equal(idx, np.argsort(a, axis, kind="stable"))
    keys = np.sort(a.reshape(-1)[:1000])
    pos = np.empty(a.shape, np.int64)
    assert sorting.run("searchsorted", [keys, a], pos, "right", threads) == threads
    np.testing.assert_array_equal(pos, np.searchsorted(keys, a, "right"))


@pytest.mark.parametrize("a", [np.array([[2 ** 31 - 1, -2 ** 31, 0, -1, 2 ** 31 - 1, -2 ** 31]] * 3,
                                        np.int32),
                               np.array([[True, False, True, False, False]] * 2),
                               np.array([[np.inf, -np.inf, 3e38, -3e38, 1e-45, -1e-45]],
                                        np.float32)])
def test_stable_argsort_of_32_bit_data_at_the_extremes(a):
    """32-bit data argsorts as int64 keys (value high, index low): the extremes
    of each dtype still order as NumPy's stable argsort orders them."""
    for axis in (0, 1):
        same(lnp.argsort(lazy.asarray(a), axis=axis), np.argsort(a, axis=axis, kind="stable"))


@pytest.mark.parametrize("base, span", [(-2 ** 63, 2 ** 32 - 1), (2 ** 63 - 2 ** 32, 2 ** 32 - 1),
                                        (-5, 1000), (0, 2 ** 32), (-2 ** 62, 2 ** 63)])
@pytest.mark.parametrize("n", [1000, 200_000])
def test_stable_argsort_of_int64_data_in_any_span(base, span, n):
    """int64 data spanning less than 2**32 argsorts as 32-bit keys (shifted
    into int32), at both ends of int64; wider spans as two 32-bit digits
    (sorting._radix_argsort). Both are NumPy's stable result, rows and one
    long row."""
    rng = np.random.default_rng(12)
    a = (base + rng.integers(0, span, n, dtype=np.uint64).astype(object)).astype(np.int64)
    a[:3] = [base, base + span - 1, base]  # both ends of the span, and a tie
    want = np.argsort(a, kind="stable")
    same(lnp.argsort(lazy.asarray(a)), want)
    m = a[: n // 100 * 100].reshape(100, -1)
    same(lnp.argsort(lazy.asarray(m), axis=1), np.argsort(m, axis=1, kind="stable"))


def _bounds(be):
    """The backend's partition as sorting.run takes it: the bounds alone."""
    return lambda x, splitters, out: be.partition(x, splitters, out)[0]


@pytest.mark.parametrize("threads", [2, 3, 5])
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_one_row_is_split_by_value_over_threads(tmp_path, threads, dtype):
    """A long 1-D sort is a sample sort: bucketed by value (cpu_backend/
    partition.py), one bucket per thread. Stable to the bit on any count."""
    from cpu_backend import CPUBackend
    from cpu_backend.jit import JIT
    be = CPUBackend(num_threads=threads, jit=JIT(cache_dir=tmp_path))
    rng = np.random.default_rng(threads)
    x = tricky((200_003,), dtype, rng)
    if dtype in BITS:
        x[::3] = rng.standard_normal(len(x[::3]))
    elif dtype != "bool":  # many values, many ties
        x = rng.integers(-30_000, 30_000, len(x)).astype(dtype)
    out = np.empty_like(x)
    parts = sorting.run("sort", [x], out, (0, "stable"), threads, _bounds(be))
    np.testing.assert_array_equal(bitwise(out), bitwise(np.sort(x, kind="stable")))
    assert parts == (2 if dtype == "bool" else threads)  # equal elements share a bucket
    idx = np.empty(x.shape, np.int64)  # 32-bit data: int64 keys, built and sorted in parts
    sorting.run("argsort", [x], idx, (0, "stable"), threads, _bounds(be))
    np.testing.assert_array_equal(idx, np.argsort(x, kind="stable"))


def test_the_log_shows_the_split_functions_compile(fresh_log):
    """A long row's sort runs the partition function: the record says how that
    was found (compiled, from disk, or already loaded), as for any kernel; a
    sort of rows compiles nothing."""
    x = np.random.default_rng(3).standard_normal(100_000)
    same(lnp.sort(lazy.asarray(x)), np.sort(x))
    same(lnp.sort(lazy.asarray(x.reshape(250, 400)), axis=1), np.sort(x.reshape(250, 400), 1))
    one_row, rows = [r for r in lazy.log if r.kernel.startswith("sort")]
    assert one_row.cache.split(" ")[0] in ("miss", "disk", "hit") and one_row.compile_ms >= 0
    assert (rows.cache, rows.compile_ms) == ("-", 0.0)


def test_buckets_keep_the_data_in_order(tmp_path):
    """Bucket b holds the elements from splitter b - 1 up to splitter b, in
    their original order (NaNs in the last), at the bounds returned."""
    from cpu_backend import CPUBackend
    from cpu_backend.jit import JIT
    be = CPUBackend(num_threads=3, jit=JIT(cache_dir=tmp_path))
    x = tricky((100_000,), "float64", np.random.default_rng(1))
    x[::2] = np.arange(50_000) % 7 - 3.0
    splitters = np.array([-1.0, 0.0, 2.5])
    out = np.empty_like(x)
    bounds, _ = be.partition(x, splitters, out)
    edges = [-np.inf, *splitters, np.inf]
    for b, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        inside = (x >= edges[b]) & (x < edges[b + 1]) | (np.isnan(x) & (b == len(splitters)))
        np.testing.assert_array_equal(bitwise(out[lo:hi]), bitwise(x[inside]))
    assert bounds[0] == 0 and bounds[-1] == len(x)


def test_a_row_of_nans_has_no_splitters_and_sorts_on_one_thread(tmp_path):
    from cpu_backend import CPUBackend
    from cpu_backend.jit import JIT
    be = CPUBackend(num_threads=2, jit=JIT(cache_dir=tmp_path))
    x = np.full(100_000, np.nan, np.float32)
    x[::5] = np.array([0xFFC00001], np.uint32).view(np.float32)[0]
    out = np.empty_like(x)
    assert sorting.run("sort", [x], out, (0, "stable"), 2, _bounds(be)) == 1
    np.testing.assert_array_equal(bitwise(out), bitwise(x))


def _child_sort(a: np.ndarray) -> np.ndarray:
    return lnp.sort(lazy.asarray(a), axis=1).numpy()


def test_a_forked_child_sorts_on_threads_of_its_own(monkeypatch):
    """A child forked after the parent's sorts started their threads has
    the executor but not its threads: it must make its own, not wait."""
    import multiprocessing as mp
    monkeypatch.setattr(backends, "_sort_threads", lambda: 2)  # on any core count
    a = np.random.default_rng(2).standard_normal((400, 400))
    np.testing.assert_array_equal(_child_sort(a), np.sort(a, axis=1))  # the parent's threads
    with mp.get_context("fork").Pool(1) as p:
        got = p.apply_async(_child_sort, (a,)).get(timeout=60)
    np.testing.assert_array_equal(got, np.sort(a, axis=1))


@pytest.mark.parametrize("axis", [0, 1])
def test_ties_are_restored_in_the_rows_that_hold_them_only(axis):
    """Most rows without a zero or NaN: the restore visits only the others
    (scheduler/sorting.py, `_restore_ties`), and they still come out stable."""
    a = np.random.default_rng(6).standard_normal((6, 40)).astype(np.float32) + 5
    a[2, [3, 9, 17, 30]] = [-0.0, 0.0, 0.0, -0.0]
    a[4, [1, 8]] = [np.nan, np.array([0xFFC00001], np.uint32).view(np.float32)[0]]
    a = a if axis == 1 else a.T.copy()
    out = np.empty_like(a)
    sorting.run("sort", [a], out, (axis, "stable"), 1)
    np.testing.assert_array_equal(out.view(np.uint32),
                                  np.sort(a, axis=axis, kind="stable").view(np.uint32))


def test_small_work_stays_on_the_calling_thread():
    a = np.arange(sorting.MIN_SPLIT - 1, 0, -1).reshape(-1, 1)
    out = np.empty_like(a)
    assert sorting.run("sort", [a], out, (0, "stable"), 4) == 1
    np.testing.assert_array_equal(out, np.sort(a, 0))


def test_a_failing_part_raises_once_every_part_has_finished():
    """An error in one thread's rows reaches the sync, but only after the other
    parts are done: none may still be writing the output after the step."""
    finished = []

    def work(part):
        lo = part[-1].start
        if lo == 1:
            raise RuntimeError("boom")
        if lo > 1:
            time.sleep(0.05)
        finished.append(lo)
    with pytest.raises(RuntimeError, match="boom"):
        sorting._split(work, (1 << 16, 4), 0, 4)
    assert sorted(finished) == [0, 2, 3]


def test_sorting_is_deferred_and_fuses_with_its_neighbours(fresh_log):
    """Nothing runs before the sync; each sort is one extern kernel between the
    kernel computing its input and the kernel reading it, and the plan says why."""
    a = sample((6, 7), "float32", np.random.default_rng(2))
    x = lazy.asarray(a)
    y = lnp.sort(lnp.exp(x) * 0.5, axis=1)[:, -2:] + x[:, :2]
    assert len(lazy.log) == 0 and not lazy.log.syncs
    plan = lazy.explain(y)
    assert [k.name for k in plan.kernels] == ["e0_exp_mul", "sort_1", "e2_add"]
    assert [k.fusion for k in plan.kernels] == ["extern", "extern", "requested"]
    why = ("numpy", f"extern sort: NumPy's sort, whole rows (one row: buckets by value, split "
                    f"by an LLVM loop) over {backends._sort_threads()} threads from 65536 "
                    f"elements (the kernel IR has no sort)")
    assert (plan.kernels[1].backend, plan.kernels[1].reason) == why
    np.testing.assert_allclose(y.numpy(), np.sort(np.exp(a) * 0.5, axis=1)[:, -2:] + a[:, :2],
                               rtol=1e-6)  # exp within an ulp of NumPy's
    assert [(r.kernel, r.backend) for r in lazy.log] == \
        [("e0_exp_mul", "llvm"), ("sort_1", "numpy"), ("e2_add", "llvm")]
    assert lazy.log.counters.fallbacks == 0 and lazy.log.syncs[0].kernels == 3


def test_rows_across_memory_are_made_contiguous_by_fused_copies(fresh_log):
    """A large sort along an axis that is not contiguous (a column sort, a
    transposed view) copies its rows contiguous in the kernel computing them,
    sorts those, and copies back into NumPy's layout in the reading kernel."""
    a = tricky((300, 400), "float32", np.random.default_rng(4))
    x = lazy.asarray(a)
    y = lnp.sort(x * 2, axis=0) + 1
    assert [k.name for k in lazy.explain(y).kernels] == ["e0_mul_copy", "sort_1", "e2_copy_add"]
    np.testing.assert_array_equal(bitwise(y.numpy()),
                                  bitwise(np.sort(a * 2, axis=0, kind="stable") + 1))
    i = lnp.argsort(x, axis=0, descending=True)
    assert [k.name for k in lazy.explain(i).kernels] == ["e0_copy", "argsort_1", "e2_copy_sub"]
    same(i, stable_order(a, 0, True))
    z = lnp.sort(x.T, axis=1)  # already last: one copy in, none back
    assert [k.name for k in lazy.explain(z).kernels] == ["e0_copy", "sort_1"]
    for t, want in ((y, a * 2), (i, a), (z, a.T)):
        assert t.stride() == (want.shape[1], 1)  # C-contiguous, as NumPy's result
    np.testing.assert_array_equal(bitwise(z.numpy()), bitwise(np.sort(a.T, axis=1, kind="stable")))


def test_descending_is_views_and_one_fused_subtraction(fresh_log):
    """Descending order adds no kernel for values (reversed views around the sort),
    and one elementwise kernel for indices: n - 1 - the reversed indices."""
    a = np.array([[3, 1, 3, 0], [2, 2, 5, 2]])
    x = lazy.asarray(a)
    v, i = lnp.sort(x, descending=True), lnp.argsort(x, descending=True)
    assert [k.name for k in lazy.explain(v).kernels] == ["sort_0"]
    assert [k.name for k in lazy.explain(i).kernels] == ["argsort_0", "e1_sub"]
    same(v, [[3, 3, 1, 0], [5, 2, 2, 2]])
    same(i, [[0, 2, 1, 3], [2, 0, 1, 3]])


def test_the_schedule_cache_replans_nothing_and_new_values_flow(fresh_log):
    for k in range(3):
        a = (np.arange(12, dtype=np.float64) * (7 + k)) % 5
        y = lnp.argsort(lazy.asarray(a) * 2) + 1
        same(y, np.argsort(a * 2, kind="stable") + 1)
    assert [s.schedule for s in lazy.log.syncs] == ["miss", "hit", "hit"]


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(side):
    """Sides, NaNs (sorted last), keys of any shape and a Python scalar, mixed
    dtypes in their common type, an empty array and `sorter`."""
    s = np.array([-1.5, 0, 2, 2, 5, 9, np.nan])
    v = np.array([[np.nan, 2], [6, -3], [9, 0]])
    same(lnp.searchsorted(lnp.asarray(s), lnp.asarray(v), side=side),
         np.searchsorted(s, v, side=side))
    same(lnp.searchsorted(lnp.asarray(s), 2, side=side), np.asarray(np.searchsorted(s, 2, side)))
    ints = np.array([1, 3, 3, 8], np.int32)
    same(lnp.searchsorted(lnp.asarray(ints), 3.5, side=side),
         np.asarray(np.searchsorted(ints, 3.5, side=side)))
    same(lnp.searchsorted(lnp.asarray(ints), lnp.asarray(v), side=side),
         np.searchsorted(ints, v, side=side))
    same(lnp.searchsorted(lnp.asarray(np.zeros(0)), lnp.asarray(v), side=side),
         np.searchsorted(np.zeros(0), v, side=side))
    u = np.array([5.0, -1, 9, 2])
    order = np.argsort(u)
    same(lnp.searchsorted(lnp.asarray(u), lnp.asarray(v), side=side, sorter=order),
         np.searchsorted(u, v, side=side, sorter=order))
    same(np.searchsorted(lnp.asarray(s), lnp.asarray(v), side), np.searchsorted(s, v, side))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 70), keys=st.integers(0, 100), dtype=st.sampled_from(DTYPE_NAMES),
       side=st.sampled_from(["left", "right"]), seed=st.integers(0, 2 ** 16),
       layout=st.sampled_from(["plain", "reversed", "strided"]))
def test_the_llvm_search_is_numpys(n, keys, dtype, side, seed, layout):
    """Every dtype and side, ties and NaNs, any count of keys (whole groups of
    GROUP and the rest), a sorted array read through a reversed or strided view."""
    rng = np.random.default_rng(seed)
    pool = tricky((2 * n,), dtype, rng)
    a = np.sort(pool, kind="stable")
    if layout == "reversed":
        held, a = a[::-1].copy(), a
        t = lazy.asarray(held)[::-1]
    elif layout == "strided":
        a = a[::2]
        t = lazy.asarray(np.repeat(a, 2))[::2]
    else:
        t = lazy.asarray(a)
    v = np.concatenate([pool, tricky((keys,), dtype, rng)])[:keys]
    same(lnp.searchsorted(t, lazy.asarray(v), side=side), np.searchsorted(a, v, side=side))


@pytest.mark.parametrize("threads", [1, 3])
def test_the_llvm_search_splits_keys_over_threads(tmp_path, threads):
    from cpu_backend import CPUBackend
    from cpu_backend.jit import JIT
    be = CPUBackend(num_threads=threads, jit=JIT(cache_dir=tmp_path))
    rng = np.random.default_rng(9)
    a = np.sort(rng.standard_normal(50_000))
    v = rng.standard_normal((300, 333)).T  # not contiguous: searched as a copy
    out = np.empty(v.shape, np.int64)
    _, info = be.searchsorted(a, v, "right", out)
    np.testing.assert_array_equal(out, np.searchsorted(a, v, "right"))
    assert info.cache in ("miss", "disk")


@pytest.mark.skipif(not __import__("llvmlite.binding").binding.get_process_triple()
                    .startswith("x86_64"), reason="x86's cmov converter only")
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32"])
def test_the_search_steps_are_selects_in_machine_code(dtype):
    """No key's step of the binary search is a branch, for any dtype: x86's
    cmov converter, which made each integer key's step one (45 conditional
    jumps, and 10x slower on random keys), is off while the search compiles."""
    from cpu_backend import CPUBackend
    from cpu_backend.jit import without_lsr
    from cpu_backend.search import GROUP, search_ir
    jit = CPUBackend().jit
    mod = jit.optimize(search_ir("left", dtype, jit.triple, jit.data_layout))
    with without_lsr(keep_cmov=True):
        asm = jit.tm.emit_assembly(mod)
    branches = len(re.findall(r"\bj(l|ge|g|le|b|a|ae|be|s|ns)\b", asm))
    assert branches < GROUP, (dtype, branches)  # loop control only, not a branch per key


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(DTYPE_NAMES), axis_pick=st.integers(-1, 2),
       kth_pick=st.lists(st.integers(-50, 50), min_size=1, max_size=3),
       seed=st.integers(0, 2 ** 16))
def test_partition_and_argpartition_are_valid_partitions(shape, dtype, axis_pick, kth_pick,
                                                         seed):
    """NumPy leaves the order within each side open, so the check is the
    contract: the kth elements are NumPy's, nothing larger before them,
    nothing smaller after; argpartition's indices are a permutation that
    takes `a` to such a partition."""
    a = tricky(shape, dtype, np.random.default_rng(seed))
    axis = None if axis_pick == -1 else axis_pick % len(shape)
    flat = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else axis
    n = flat.shape[ax]
    kth = sorted({k % n for k in kth_pick})
    got = lnp.partition(lazy.asarray(a), kth, axis=axis).numpy()
    idx = np.argpartition(lazy.asarray(a), kth, axis=axis).numpy()
    want = np.sort(flat, axis=ax)  # NaNs last, as a partition puts them
    for result in (got, np.take_along_axis(flat, idx, ax)):
        for k in kth:
            np.testing.assert_array_equal(np.take(result, k, ax), np.take(want, k, ax))
        np.testing.assert_array_equal(np.sort(result, axis=ax), want)  # same elements per row
    assert (np.sort(idx, axis=ax) == np.arange(n).reshape([-1 if d == ax else 1
                                                           for d in range(flat.ndim)])).all()


def test_partition_checks_kth_and_kind_at_the_call():
    x = lazy.asarray(np.arange(5.0))
    for kth, err, msg in [(5, ValueError, r"kth\(=5\) out of bounds \(5\)"),
                          (-6, ValueError, r"kth\(=-1\) out of bounds \(5\)"),
                          ([1, 7], ValueError, r"kth\(=7\) out of bounds \(5\)"),
                          (1.5, TypeError, "Partition index must be integer")]:
        with pytest.raises(err, match=msg):
            lnp.partition(x, kth)
        with pytest.raises(err, match=msg):
            np.argpartition(x, kth)
    with pytest.raises(ValueError, match="select kind must be 'introselect' \\(got 'quick'\\)"):
        lnp.partition(x, 1, kind="quick")


def test_numpys_own_functions_on_tensors_are_deferred(fresh_log):
    """np.sort / np.argsort / np.searchsorted on tensors dispatch here: no sync."""
    a = np.array([[4.0, -1, 2], [0, 3, 3]])
    x = lazy.asarray(a)
    got = [np.sort(x), np.argsort(x, axis=0), np.searchsorted(lnp.sort(x[0]), x), x.argsort()]
    assert isinstance(got[0], lazy.Tensor) and len(lazy.log) == 0
    want = [np.sort(a), np.argsort(a, axis=0), np.searchsorted(np.sort(a[0]), a), a.argsort()]
    same(got, want)


def test_the_argsort_method_takes_numpys_and_pytorchs_arguments():
    a = np.array([[3.0, 1, 2, 1], [0, 5, 4, 5]])
    x, t = lazy.asarray(a), torch.from_numpy(a)
    same(x.argsort(), a.argsort(kind="stable"))
    same(x.argsort(0, "heapsort"), a.argsort(0, "heapsort"))
    same(x.argsort(axis=None), a.argsort(axis=None, kind="stable"))
    np.testing.assert_array_equal(x.argsort(dim=1, descending=True).numpy(),
                                  t.argsort(dim=1, descending=True, stable=True).numpy())
    np.testing.assert_array_equal(x.argsort(dim=0, stable=True).numpy(),
                                  t.argsort(dim=0, stable=True).numpy())
    with pytest.raises(ValueError, match="Cannot specify order when the array has no fields"):
        x.argsort(order="f")


def test_torch_forms_match_torch():
    """lazy.sort returns (values, indices) as torch.sort does; stable or not, both are a
    stable sort's, so they agree with each other bit for bit."""
    a = tricky((4, 9), "float32", np.random.default_rng(11))
    x, t = lazy.asarray(a), torch.from_numpy(a)
    for dim in (0, 1, -1):
        for descending in (False, True):
            values, indices = lazy.sort(x, dim, descending)
            want = torch.sort(t, dim=dim, descending=descending, stable=True)
            np.testing.assert_array_equal(bitwise(values.numpy()), bitwise(want.values.numpy()))
            np.testing.assert_array_equal(indices.numpy(), want.indices.numpy())
            np.testing.assert_array_equal(
                lazy.argsort(x, dim, descending, stable=True).numpy(),
                torch.argsort(t, dim=dim, descending=descending, stable=True).numpy())
    assert lazy.sort(x).values.dtype == lazy.float32 and lazy.sort(x).indices.dtype == lazy.int64
    v, i = lazy.sort(lazy.asarray(np.float32(2.5)))
    assert (v.shape, i.shape, v.item(), i.item()) == ((), (), 2.5, 0)  # as torch.sort of 0-d
    seq = torch.tensor([1.0, 2, 2, 5])
    keys = torch.tensor([[2.0, 6], [0, 5]])
    for right in (False, True):
        np.testing.assert_array_equal(
            lazy.searchsorted(lazy.asarray(seq.numpy()), lazy.asarray(keys.numpy()),
                              right=right).numpy(),
            torch.searchsorted(seq, keys, right=right).numpy())


def test_bad_arguments_raise_at_the_call():
    x = lazy.asarray(np.zeros((2, 3), np.float32))
    with pytest.raises(AxisError, match=r"axis 2 is out of range for a tensor of 2 dimensions"):
        lnp.sort(x, axis=2)
    with pytest.raises(AxisError, match="axis -3 is out of range"):
        lnp.argsort(x, axis=-3)
    with pytest.raises(ValueError, match="sort kind must be one of 'quicksort', 'heapsort', "
                                         "'stable' or 'mergesort', got 'bubble'"):
        lnp.sort(x, kind="bubble")
    with pytest.raises(ValueError, match=r"the sorted array must be 1-D, got shape \(2, 3\)"):
        lnp.searchsorted(x, 1.0)
    with pytest.raises(ValueError, match="side must be 'left' or 'right', got 'middle'"):
        lnp.searchsorted(x[0], 1.0, side="middle")
    with pytest.raises(ValueError, match=r"sorter must be 1-D integers of the sorted array's "
                                         r"length 3, got float32 of shape \(3,\)"):
        lnp.searchsorted(x[0], 1.0, sorter=x[0])


def test_without_llvm_the_sorts_run_on_one_thread_and_say_so(fresh_log, monkeypatch):
    monkeypatch.setattr(backends, "_llvm", lambda: (None, "llvm unavailable: test"))
    monkeypatch.setenv("LAZY_FALLBACK", "allow")  # the kernels around it fall back
    a = np.arange(12, dtype=np.int64).reshape(3, 4) % 5
    same(lnp.sort(lazy.asarray(a), axis=0), np.sort(a, axis=0))
    (rec,) = [r for r in lazy.log if r.kernel.startswith("sort")]
    assert (rec.backend, rec.reason) == \
        ("numpy", "extern sort: NumPy's sort, whole rows over 1 thread from 65536 elements "
                  "(the kernel IR has no sort)")
