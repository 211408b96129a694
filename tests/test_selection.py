"""Advanced indexing through the affine selection (lazy/selection.py): the
positions written on the host, or computed in the gather's kernel for large
results, against NumPy for random keys on random views (hypothesis); what
the parse leaves to the general path; one kernel and no result-size
positions buffer for a large selection; and the per-row hoisted load that
lets that kernel vectorize."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lazy
from lazy import indexing, selection
from scheduler.realize import plan
from test_advanced_indexing import READ_KEYS, R_IDS, SHAPE, base, check_gather

pytestmark = pytest.mark.usefixtures("strict_fallback")


@pytest.fixture(params=["host", "computed"])
def where(request, monkeypatch):
    """Both ways to get positions: written on the host, or (threshold 0)
    computed in the gather's kernel whenever the key has a slice axis."""
    if request.param == "computed":
        monkeypatch.setattr(indexing, "COMPUTED_POSITIONS", 0)
    return request.param


@pytest.mark.parametrize("name, key", READ_KEYS, ids=R_IDS)
def test_every_read_key_both_ways(where, name, key):
    t, a = base(seed=5)
    check_gather(t[key], t, a[key])
    big_t, big_a = base((6, 6, 7), "float32", seed=6)  # through a permuted, reversed view
    v = big_t.permute(1, 0, 2)[1:, ::-1][:, 1:, 1:][:4]
    av = big_a.transpose(1, 0, 2)[1:, ::-1][:, 1:, 1:][:4]
    assert v.shape == SHAPE
    check_gather(v[key], big_t, av[key])


def _views(draw, a: np.ndarray):
    """A random view of `a`: a permutation, then a slice with any step per axis."""
    perm = draw(st.permutations(range(a.ndim)))
    a = a.transpose(perm)
    key = []
    for n in a.shape:
        step = draw(st.sampled_from([1, 1, 2, -1, -2]))
        lo = draw(st.integers(0, n // 2))
        key.append(slice(lo, None, step) if step > 0 else slice(n - 1 - lo, None, step))
    return perm, tuple(key)


def _key_item(draw, n: int, rest: tuple[int, ...]):
    """(item, axes used) for an axis of length n, `rest` the lengths after it."""
    kind = draw(st.sampled_from(["slice", "slice", "slice", "int", "array", "array", "mask",
                                 "mask2"]))
    if kind == "slice":
        lo, hi = draw(st.integers(-n - 1, n + 1)), draw(st.integers(-n - 1, n + 1))
        return slice(lo, hi, draw(st.sampled_from([None, 1, 2, -1, -3]))), 1
    if kind == "int" and n:
        return draw(st.integers(-n, n - 1)), 1
    if kind == "mask2" and rest:
        return np.array(draw(st.lists(st.booleans(), min_size=n * rest[0],
                                      max_size=n * rest[0]))).reshape(n, rest[0]), 2
    if kind in ("mask", "mask2"):
        return np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool), 1
    size = draw(st.sampled_from([1, 2, 3]))
    vals = draw(st.lists(st.integers(-n, n - 1), min_size=size, max_size=size)) if n else []
    return np.array(vals, np.int64).reshape(-1), 1


@st.composite
def cases(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    a = np.arange(int(np.prod(shape)) * 2, dtype=np.float64)[::2].reshape(shape) * 1.5
    perm, vkey = _views(draw, a)
    av = a.transpose(perm)[vkey]
    items, axis = [], 0
    for _ in range(draw(st.sampled_from([av.ndim, av.ndim, draw(st.integers(1, av.ndim))]))):
        if axis >= av.ndim:
            break
        item, used = _key_item(draw, av.shape[axis], av.shape[axis + 1:])
        items.append((item, axis))
        axis += used
    if not any(isinstance(k, np.ndarray) for k, _ in items):  # make one slice an index array
        n, (_, ax) = draw(st.sampled_from(list(enumerate(items))))
        items[n] = (np.array([av.shape[ax] - 1]), ax)
    items = [k for k, _ in items]
    if av.ndim >= 3 and draw(st.integers(0, 3)) == 0:  # indices apart, after a slice
        last = av.ndim - 1
        items = [_key_item(draw, av.shape[0], ())[0] if draw(st.booleans()) else slice(None),
                 np.array(draw(st.lists(st.integers(0, av.shape[1] - 1), min_size=2, max_size=2))),
                 Ellipsis, np.array([av.shape[last] - 1, 0])]
        if isinstance(items[0], np.ndarray) and items[0].ndim == 2:
            items[0] = slice(None)
        return a, perm, vkey, tuple(items)
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return a, perm, vkey, tuple(items)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.booleans())
def test_random_keys_on_random_views_match_numpy(case, computed):
    a, perm, vkey, key = case
    av = a.transpose(perm)[vkey]
    try:
        expected = av[key]
    except IndexError:  # the same error, at the indexing line
        with pytest.raises(IndexError):
            lazy.tensor(a).permute(*perm)[vkey][key]
        return
    old = indexing.COMPUTED_POSITIONS
    indexing.COMPUTED_POSITIONS = 0 if computed else old
    try:
        t = lazy.tensor(a)
        r = t.permute(*perm)[vkey][key]
    finally:
        indexing.COMPUTED_POSITIONS = old
    assert r.shape == expected.shape
    np.testing.assert_array_equal(r.numpy(), expected)
    w = a.copy()
    w.transpose(perm)[vkey][key] = -7.0
    tw = lazy.tensor(a)
    tw.permute(*perm)[vkey][key] = -7.0
    np.testing.assert_array_equal(tw.numpy(), w)


@pytest.mark.parametrize("key", [
    (None, np.array([0])), (np.array([0]), None), True, np.array(True),
    np.array([7]), np.array([-8]), np.array([True, False]), (np.array([0, 1]), np.array([0, 1, 2])),
    (slice(1, 3),)])
def test_parse_leaves_other_keys_to_the_general_path(key):
    """newaxis, boolean scalars, out-of-bounds and unbroadcastable indices,
    mismatched masks: None, so that NumPy's own rules answer them; and a
    key of slices alone, which is a view."""
    key = key if isinstance(key, tuple) else (key,)
    assert selection.parse((7, 3), (3, 1), 0, key) is None


def test_parse_describes_adjacent_and_separated_indices():
    """NumPy's placement of the broadcast dims: where the indices stand when
    they are adjacent, in front when a slice or an Ellipsis separates them."""
    i, j = np.array([[0], [1]]), np.array([1, 2, 0])
    shape, strides = (4, 5, 6, 7), (210, 42, 7, 1)
    a = np.empty(shape)
    for key in [(slice(None), i, j), (i, slice(None), j), (slice(None), i, Ellipsis, j),
                (slice(1, 3), 2, j), (1, slice(None), j), (Ellipsis, i, j)]:
        sel = selection.parse(shape, strides, 0, key)
        assert sel.shape == a[key].shape, key
        pos = np.arange(a.size).reshape(shape)[key]
        np.testing.assert_array_equal(sel.positions(), pos)


def test_large_selection_is_one_kernel_reading_no_positions_buffer(fresh_log):
    """M[idx] of 2000 rows: the row offsets come from the host (2000 int64)
    and the column term from an iota, added in the gather's kernel: one
    kernel, whose bytes are the rows read and written plus the index, not
    a 16 MB int64 position per element."""
    rng = np.random.default_rng(0)
    m = rng.standard_normal((5000, 1000), dtype=np.float32)
    idx = rng.integers(-5000, 5000, 2000)
    r = lazy.asarray(m)[idx]
    assert [k.name for k in lazy.explain(r).kernels] == ["e0_mul_add_gather"]
    np.testing.assert_array_equal(r.numpy(), m[idx])
    (rec,) = list(lazy.log)
    assert rec.nbytes == 2 * r.numpy().nbytes + idx.nbytes


def test_hoisted_row_load_lets_the_gather_vectorize():
    """The row's index is loaded once before the inner loop (codegen.Hoisted):
    the optimized loop reads each row with vector loads."""
    from cpu_backend.backend import _shared_jit
    m = lazy.asarray(np.ones((400, 1000), np.float32))
    r = m[np.arange(300)]
    (step,) = plan([r._buf]).steps
    opt = _shared_jit().optimized_ir(step.kernel).split("define", 1)[1]
    assert "load <16 x float>" in opt or "load <8 x float>" in opt
    np.testing.assert_array_equal(r.numpy(), np.ones((300, 1000), np.float32))
