"""Short rows with a row-broadcast operand run k rows at a time
(cpu_backend/short_rows.py): the same kernel over merged rows, a tail
launch for the rows left over, each result equal to NumPy's."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazy
from cpu_backend import CPUBackend
from cpu_backend.short_rows import MERGED_ROW, merge
from scheduler.realize import plan


def _step(t: lazy.Tensor):
    [step] = plan([t._buf]).steps
    return step


def test_p_minus_c_is_merged_with_a_tail():
    rows, n = 3001, 3
    k = MERGED_ROW // n
    p = np.arange(rows * n, dtype=np.float32).reshape(rows, n)
    c = np.array([0.5, -1.0, 2.0], np.float32)
    y = lazy.asarray(p) - lazy.asarray(c)
    step = _step(y)
    m = merge(step.kernel, step.launch)
    assert m is not None and m.k == k
    assert m.main.shape == (rows // k, k * n) and m.tail.shape == (rows % k, n)
    assert [i for i, _ in m.repeated] == [next(i for i, b in enumerate(step.inputs)
                                               if b.size == n)]
    np.testing.assert_array_equal(y.numpy(), p - c)


@pytest.mark.parametrize("make", [
    lambda p, c: lazy.asarray(np.ones((3, 1000), np.float32)).T - c,  # P in column order
    lambda p, c: p[:, :2] - c[:2],              # rows of 2 inside rows of 3: no merge
    lambda p, c: (p - c).sum(axis=1),           # a reduction
    lambda p, c: p[:40] - c,                    # fewer than 2k rows: nothing to gain
])
def test_what_is_not_merged(make):
    p = lazy.asarray(np.ones((1000, 3), np.float32))
    c = lazy.asarray(np.ones(3, np.float32))
    y = make(p, c)
    steps = plan([y._buf]).steps
    assert all(merge(s.kernel, s.launch) is None for s in steps if s.kernel is not None)


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 3000), n=st.sampled_from([2, 3, 5, 16, 31, 63, 64, 70]),
       seed=st.integers(0, 2 ** 16),
       c_step=st.sampled_from([1, -1, 2]), dtype=st.sampled_from(["float32", "float64",
                                                                  "int32", "int64"]),
       form=st.sampled_from(["sub", "rsub", "where", "inplace", "iota", "iota_row"]),
       threads=st.sampled_from([1, 2, 3]))
def test_merged_rows_match_numpy(rows, n, seed, c_step, dtype, form, threads):
    """Any row count (a tail or none), a broadcast row read forwards, backwards
    or at stride 2, several dtypes, an in-place write, an iota (the positions
    of `arange`) beside the broadcast row or as one; the kernel alone on 1-3
    threads too."""
    rng = np.random.default_rng(seed)
    p = rng.integers(-50, 50, (rows, n)).astype(dtype)
    c_all = rng.integers(-50, 50, 2 * n + 1).astype(dtype)

    def row(a):  # forwards, backwards or at stride 2: the same on NumPy and lazy arrays
        return a[::c_step][:n] if c_step > 0 else a[::-1][:n]

    def build():
        x, cv = lazy.asarray(p.copy()), row(lazy.asarray(c_all))
        c = row(c_all)
        if form == "sub":
            return x - cv, p - c
        if form == "rsub":
            return cv * 2 - x, c * 2 - p
        if form == "where":
            return lazy.where(x > cv, x, cv), np.where(p > c, p, c)
        if form == "inplace":
            x -= cv
            return x, p - c
        if form == "iota_row":  # the broadcast row is positions: no memory to repeat
            return x + lazy.arange(n, dtype=dtype) + cv, p + np.arange(n, dtype=dtype) + c
        pos = lazy.arange(rows * n, dtype=dtype).reshape(rows, n)
        return pos + cv, np.arange(rows * n, dtype=dtype).reshape(rows, n) + c

    y, want = build()
    np.testing.assert_array_equal(y.numpy(), want)
    if form == "inplace":
        return
    y, _ = build()
    step = _step(y)
    be = CPUBackend(num_threads=threads)
    out = np.full(rows * n, 7, step.kernel.outputs[0].dtype.np)
    be.run(be.compile(step.kernel)[0], step.kernel, step.launch,
           [None if b is None else b.array for b in step.inputs], [out])
    np.testing.assert_array_equal(out.reshape(rows, n), want)
