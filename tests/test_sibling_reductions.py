"""Sibling reductions: reductions over the same domain share one loop
(docs/fusion.md, rule 8), on every CPU loop order, as accurate as one kernel
each, and never when one needs the other or a kernel between them."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazy
import lazy.numpy as lnp
from scheduler import siblings


def synced(*ts):
    lazy.log.clear()
    lazy.sync(*ts)
    return list(lazy.log)


def test_min_and_max_read_the_data_once():
    a = np.random.default_rng(0).standard_normal((300, 500)).astype(np.float32)
    x = lazy.asarray(a)
    lo, hi = x.min(), x.max()
    ks = synced(lo, hi)
    assert [k.kernel for k in ks] == ["r0_min_max"]
    assert ks[0].nbytes == a.nbytes + 8  # the data once, two results
    for t, want in ((lo, a.min()), (hi, a.max())):
        assert t.numpy() == want and t.dtype == "float32" and t.shape == ()


def test_a_pending_source_is_computed_once_in_the_loop_and_never_written():
    a = np.random.default_rng(1).standard_normal((64, 400)).astype(np.float32)
    x = lazy.asarray(a)
    y = x * 2 + 1
    s, m, n = y.sum(1), y.max(1), (y > 0).sum(1)
    ks = synced(s, m, n)
    assert len(ks) == 1 and ks[0].nbytes == a.nbytes + 64 * (4 + 4 + 8)
    yn = a * np.float32(2) + np.float32(1)
    np.testing.assert_allclose(s.numpy(), yn.sum(1), rtol=1e-5)
    np.testing.assert_array_equal(m.numpy(), yn.max(1))
    np.testing.assert_array_equal(n.numpy(), (yn > 0).sum(1))
    assert (s.dtype, m.dtype, n.dtype) == ("float32", "float32", "int64")


def test_siblings_read_by_one_epilogue_are_one_kernel():
    """nanmean's sum and count, and a normalization's range."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((50, 70))
    a[rng.random(a.shape) < 0.1] = np.nan
    x = lazy.asarray(a)
    mean = lnp.nanmean(x, axis=1)
    ks = synced(mean)
    assert len(ks) == 1 and {"sum", "truediv"} <= {o.split("@")[0] for o in ks[0].ops}
    np.testing.assert_allclose(mean.numpy(), np.nanmean(a, axis=1), rtol=1e-12)
    b = np.abs(a[:, :10]) + 1
    y = lazy.asarray(b)
    spread = y.max() - y.min()
    ks = synced(spread)
    assert [k.kernel for k in ks] == ["r0_min_max_sub"]
    assert spread.numpy() == np.nanmax(b) - np.nanmin(b) or np.isnan(spread.numpy())


@pytest.mark.parametrize("shape, axis, order", [
    ((40, 3000), 1, "rows"),
    ((3000, 40), 0, "column tiles"),
    ((1 << 20,), None, "a split reduce range, partials folded"),
    ((300, 200, 30), (0, 2), "two reduced axes"),
])
def test_every_loop_order_matches_numpy(shape, axis, order):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape).astype(np.float32)
    a.flat[::97] = np.nan
    b = np.where(np.isnan(a), 0, a)
    x, y = lazy.asarray(a), lazy.asarray(b)
    sets = [
        ((x.sum(axis), a.sum(axis, dtype=np.float64).astype(np.float32)),
         (lnp.nanmax(x, axis=axis), np.nanmax(a, axis=axis)),
         ((x > 0).any(axis), (a > 0).any(axis)),
         (lnp.nanmin(x, axis=axis), np.nanmin(a, axis=axis))),
        ((y.max(axis), b.max(axis)), ((y < 3).all(axis), (b < 3).all(axis)),
         (y.min(axis), b.min(axis)),  # float32 products accumulate in float64
         ((y * 1e-3 + 1).prod(axis),
          (b * np.float32(1e-3) + 1).astype(np.float64).prod(axis).astype(np.float32))),
    ]
    for pairs in sets:
        got = [g for g, _ in pairs]
        assert len(synced(*got)) == 1, order
        for g, w in pairs:
            assert g.shape == w.shape and g.dtype == w.dtype, order
            np.testing.assert_allclose(g.numpy(), w, rtol=2e-6, err_msg=order)


def test_strided_rows_and_integers():
    a = np.random.default_rng(4).integers(-1000, 1000, (30, 900), dtype=np.int32)
    x = lazy.asarray(a)[:, ::3]
    got = x.sum(1), x.min(1), x.max(1), x.prod(1)
    assert len(synced(*got)) == 1
    v = a[:, ::3]
    for g, w in zip(got, (v.sum(1), v.min(1), v.max(1), v.prod(1))):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.numpy(), w)


def test_a_float_sum_beside_others_keeps_its_compensation():
    """A sibling float64 sum adds blocks and joins them by Neumaier's
    addition, as a sum alone does: 4M values of 0.1 within 2 ulp of the
    exact sum (one long lane-wise loop was 2e-13 off)."""
    n = 1 << 22
    a = np.full(n, 0.1)
    x = lazy.asarray(a)
    s, m = x.sum(), x.max()
    assert len(synced(s, m)) == 1
    exact = math.fsum(a)
    assert abs(float(s.numpy()) - exact) <= 2 * math.ulp(exact)
    assert m.numpy() == 0.1


def test_a_reduction_that_feeds_another_is_not_a_sibling():
    a = np.random.default_rng(5).standard_normal((40, 60))
    x = lazy.asarray(a)
    mu = x.mean(1, keepdims=True)
    var = ((x - mu) ** 2).sum(1)
    ks = synced(mu, var)
    assert len(ks) == 2
    np.testing.assert_allclose(var.numpy(), ((a - a.mean(1, keepdims=True)) ** 2).sum(1))
    y = x.sum(1)
    z = (x * y[:, None]).max(1)  # y is requested, and z's loop reads it
    assert len(synced(y, z)) == 2
    np.testing.assert_allclose(z.numpy(), (a * a.sum(1)[:, None]).max(1))


def test_not_when_a_kernel_that_runs_first_reads_it():
    """`k` reads y and runs before z's kernel: y computed there would be too late."""
    a = np.random.default_rng(6).standard_normal((40, 60))
    x = lazy.asarray(a)
    y = x.sum(1)
    k = x * y[:, None]
    z = x.max(1)
    assert len(synced(y, k, z)) == 3
    np.testing.assert_allclose(k.numpy(), a * a.sum(1)[:, None])
    np.testing.assert_array_equal(z.numpy(), a.max(1))


def test_the_reasons_when_they_cannot_share():
    a = np.random.default_rng(7).standard_normal((30, 30)).astype(np.float32)
    x = lazy.asarray(a)
    cases = [(x.sum(0) + x.sum(1), "reductions over different domains"),
             (x.max(1) + x.argmax(1), "argmax shares no loop")]
    for t, why in cases:
        assert why in [k.fusion for k in lazy.explain(t).kernels]
    np.testing.assert_allclose(cases[0][0].numpy(), a.sum(0) + a.sum(1), atol=1e-5)
    np.testing.assert_allclose(cases[1][0].numpy(), a.max(1) + a.argmax(1))
    # at most four reductions share a loop
    many = [x.sum(1), x.max(1), x.min(1), (x > 0).sum(1), (x < 0).any(1)]
    assert len(synced(*many)) == 2
    np.testing.assert_array_equal(many[4].numpy(), (a < 0).any(1))


def test_the_cached_schedule_replays_siblings_with_new_data():
    rng = np.random.default_rng(8)
    for _ in range(3):
        a = rng.standard_normal((20, 50)).astype(np.float32)
        x = lazy.asarray(a)
        lo, hi = x.min(1), x.max(1)
        ks = synced(lo, hi)
        np.testing.assert_array_equal(lo.numpy(), a.min(1))
        np.testing.assert_array_equal(hi.numpy(), a.max(1))
    assert len(ks) == 1 and ks[0].cache == "hit"
    assert lazy.log.syncs[-1].schedule == "hit"


def test_the_numpy_interpreter_runs_them_the_same(monkeypatch):
    """Small work may run a kernel through scheduler/interpret.py instead."""
    from scheduler import realize, small_work
    fresh = small_work.SmallWork()
    monkeypatch.setattr(small_work, "small_work", fresh)
    monkeypatch.setattr(realize, "small_work", fresh)
    monkeypatch.setattr(small_work, "PRIOR_COMPILE_MS", 1e9)  # never worth compiling
    monkeypatch.setenv("LAZY_SMALL_WORK", "1")
    a = np.random.default_rng(9).standard_normal((7, 9)).astype(np.float32)
    x = lazy.asarray(a)
    got = (x.min(0), x.max(0), (x > 0).sum(0), lnp.nanmax(x * 2, axis=0))
    ks = synced(*got)
    assert [k.backend for k in ks] == ["numpy"]
    for g, w in zip(got, (a.min(0), a.max(0), (a > 0).sum(0), (a * 2).max(0))):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g.numpy(), w)


def test_which_reduction_an_output_reads_is_part_of_the_cache_key():
    """Kernels that differ only in which Reduced an output reads (`max - min`
    against `min - max` over the same siblings) must not share compiled
    code, in memory or on disk."""
    from dataclasses import replace

    from cpu_backend.keys import structural_key
    from scheduler.kernel_ir import Op
    from scheduler.realize import plan
    x = lazy.asarray(np.arange(20, dtype=np.float32).reshape(4, 5) ** 2)
    (step,) = plan([(x.max(1) - x.min(1))._buf]).steps
    k1 = step.kernel
    (out,) = k1.outputs
    assert isinstance(out.expr, Op) and out.expr.name == "sub"
    assert sorted(a.index for a in out.expr.args) == [0, 1]
    flipped = replace(out.expr, args=out.expr.args[::-1])
    k2 = replace(k1, outputs=(replace(out, expr=flipped),))
    assert structural_key(k1) != structural_key(k2) and k1.digest() != k2.digest()


_OPS = {
    "sum": (lambda t, ax: t.sum(ax), lambda a, ax: a.sum(ax)),
    "max": (lambda t, ax: t.max(ax), lambda a, ax: a.max(ax)),
    "min": (lambda t, ax: t.min(ax), lambda a, ax: a.min(ax)),
    "nanmax": (lambda t, ax: lnp.nanmax(t, axis=ax), lambda a, ax: np.nanmax(a, axis=ax)),
    "count": (lambda t, ax: (t > 0).sum(ax), lambda a, ax: (a > 0).sum(ax)),
    "any": (lambda t, ax: (t < -1).any(ax), lambda a, ax: (a < -1).any(ax)),
    "prod": (lambda t, ax: (t * 0.01 + 1).prod(ax), lambda a, ax: (a * 0.01 + 1).prod(ax)),
}


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
       ops=st.lists(st.sampled_from(sorted(_OPS)), min_size=2, max_size=4, unique=True),
       dtype=st.sampled_from(["float32", "float64", "int32"]), data=st.data())
def test_random_sibling_sets_match_numpy(shape, ops, dtype, data):
    axes = data.draw(st.sets(st.integers(0, len(shape) - 1)))
    axis = tuple(sorted(axes)) if axes and len(axes) < len(shape) else None
    rng = np.random.default_rng(len(shape) * 7 + len(ops))
    a = (rng.standard_normal(shape) * 4).astype(dtype)
    x = lazy.asarray(a)
    got = [_OPS[o][0](x, axis) for o in ops]
    assert len(synced(*got)) == 1
    for o, g in zip(ops, got):
        w = np.asarray(_OPS[o][1](a, axis))
        assert g.shape == w.shape and g.dtype == w.dtype, (o, g.dtype, w.dtype)
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-5 if dtype == "float32" else 1e-12,
                                   err_msg=o)


def test_aminmax_is_pytorchs_and_reads_the_data_once():
    a = np.random.default_rng(10).standard_normal((6, 7, 8)).astype(np.float32)
    x = lazy.asarray(a)
    for dim, keepdim in ((None, False), (None, True), (1, False), (-1, True)):
        r = lazy.aminmax(x, dim=dim, keepdim=keepdim)
        assert r._fields == ("min", "max")
        assert len(synced(*r)) == 1
        axis = None if dim is None else dim
        want = a.min(axis, keepdims=keepdim), a.max(axis, keepdims=keepdim)
        for got, w in zip(r, want):
            assert got.shape == w.shape and got.dtype == "float32"
            np.testing.assert_array_equal(got.numpy(), w)
    lo, hi = x.aminmax(dim=0)
    np.testing.assert_array_equal(hi.numpy(), a.max(0))
    with pytest.raises(TypeError, match="'dim' must be int, not tuple"):
        lazy.aminmax(x, dim=(0, 1))
    with pytest.raises(ValueError, match="identity"):
        lazy.aminmax(lazy.asarray(np.zeros(0)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_nan_anywhere_in_a_row_is_the_max_and_the_min(dtype):
    """The blocked row max/min (one reduction, and a max and a min sharing
    one "is NaN") see a NaN in any block and at the row's ragged end."""
    rng = np.random.default_rng(11)
    a = rng.standard_normal((6, 2500)).astype(dtype)
    for row, col in enumerate((0, 1023, 1024, 2047, 2499)):
        a[row, col] = np.nan
    a[5, 7], a[5, 2400] = np.inf, -np.inf
    x = lazy.asarray(a)
    alone = x.max(1), x.min(1)
    for t in alone:
        assert len(synced(t)) == 1
    both = x.max(1), x.min(1)
    assert len(synced(*both)) == 1
    for got in (alone, both):
        np.testing.assert_array_equal(got[0].numpy(), a.max(1))
        np.testing.assert_array_equal(got[1].numpy(), a.min(1))
    assert np.isnan(both[0].numpy()[:5]).all() and both[1].numpy()[5] == -np.inf


def test_counts_add_int32_lanes_per_block_exactly():
    """A count (an integer sum of a bool, or of a bool cast to an integer)
    adds each block in int32 and the blocks in int64: alone, beside others,
    along contiguous rows, strided rows and the whole array."""
    rng = np.random.default_rng(12)
    a = rng.standard_normal((5, 7001)).astype(np.float32)
    for x, v in ((lazy.asarray(a), a), (lazy.asarray(a)[:, ::3], a[:, ::3])):
        for axis in (1, None):
            alone = (x > 0).sum(axis)
            assert len(synced(alone)) == 1
            both = (x > 0).sum(axis), (x < 1).astype("int32").sum(axis), x.max(axis)
            assert len(synced(*both)) == 1
            for got, w in ((alone, (v > 0).sum(axis)), (both[0], (v > 0).sum(axis)),
                           (both[1], (v < 1).astype(np.int32).sum(axis))):
                assert got.dtype == w.dtype
                np.testing.assert_array_equal(got.numpy(), w)


def test_merging_is_refused_when_one_kernel_reads_the_other():
    """`s + t[::-1]` reads t through a view: t's kernel must run first, so
    s's kernel (the sum with its epilogue) is not merged into it."""
    a = np.random.default_rng(13).standard_normal((40, 60))
    x = lazy.asarray(a)
    s, t = x.sum(1), x.max(1)
    u = s + t[::-1]
    assert len(synced(u, t)) == 2
    np.testing.assert_allclose(u.numpy(), a.sum(1) + a.max(1)[::-1])


def test_a_reduction_with_its_epilogue_merges_with_one_made_before():
    """Whichever is built first, `x.mean(1)` and `x.max(1)` are one kernel:
    the mean's kernel (sum, then divide) merges with the max's."""
    a = np.random.default_rng(14).standard_normal((40, 60))
    x = lazy.asarray(a)
    for first_max in (False, True):
        if first_max:
            mx = x.max(1)
            mean = x.mean(1)
        else:
            mean = x.mean(1)
            mx = x.max(1)
        ks = synced(mean, mx)
        assert len(ks) == 1, [k.kernel for k in ks]
        np.testing.assert_allclose(mean.numpy(), a.mean(1))
        np.testing.assert_array_equal(mx.numpy(), a.max(1))
    y, z = x.sum(1) + 1, x.max(1)
    assert len(synced(y, z)) == 1
    np.testing.assert_allclose(y.numpy(), a.sum(1) + 1)


_STEP = st.tuples(st.sampled_from(["add", "multiply", "maximum", "sum", "max", "min", "mean"]),
                  st.integers(0, 99), st.integers(0, 99), st.sampled_from([0, 1, None]))


@settings(max_examples=40, deadline=None)
@given(steps=st.lists(_STEP, min_size=2, max_size=8), kept=st.integers(1, 255))
def test_random_graphs_of_reductions_match_numpy(steps, kept):
    """Reductions beside, after and inside each other's kernels, some kept
    and some synced later: whatever fusion merges, every value is NumPy's."""
    rng = np.random.default_rng(len(steps))
    a, b = rng.standard_normal((6, 9)), rng.standard_normal((6, 9))
    pool = [(lazy.asarray(a), a), (lazy.asarray(b), b)]
    for op, i, j, axis in steps:
        (t, v), (u, w) = pool[i % len(pool)], pool[j % len(pool)]
        if op in ("add", "multiply", "maximum"):
            pool.append((getattr(lazy, op)(t, u), getattr(np, op)(v, w)))
        else:
            pool.append((getattr(t, op)(axis, keepdims=True),
                         getattr(v, op)(axis, keepdims=True)))
    chosen = [p for n, p in enumerate(pool[2:]) if kept >> (n % 8) & 1] or pool[-1:]
    lazy.sync(*(t for t, _ in chosen))
    for t, v in pool[2:]:
        np.testing.assert_allclose(t.numpy(), v, rtol=1e-12, atol=1e-12)


def test_kernel_order_holds_after_a_merge_removed_a_kernel():
    """A merge removes a kernel from the walk's list; the next kernel made
    must still count as made later (it once took a removed kernel's number,
    and a reduction moved into a kernel that ran after its reader)."""
    a = np.random.default_rng(15).standard_normal((8, 16))
    x = lazy.asarray(a)
    s = x.sum(1)
    d = s[::-1] * 2
    mn, mx = x.min(1), x.max(1)
    b = mn + 1
    lazy.sync(s, d, b, mx)
    np.testing.assert_allclose(d.numpy(), a.sum(1)[::-1] * 2)
    np.testing.assert_allclose(b.numpy(), a.min(1) + 1)
    np.testing.assert_array_equal(mx.numpy(), a.max(1))


def test_reductions_on_different_devices_never_share_a_kernel(cuda):
    a = np.random.default_rng(16).standard_normal((8, 16))
    x = lazy.asarray(a)
    xc = x.to("cuda")
    s, m = x.sum(1), xc.max(1)
    ks = synced(s, m)
    assert sorted(k.device for k in ks if k.kernel.startswith("r")) == ["cpu", "cuda"]
    np.testing.assert_allclose(s.numpy(), a.sum(1))
    np.testing.assert_array_equal(m.numpy(), a.max(1))
    mx, y = xc.max(1), x.sum(1) + 1  # the merge path too
    lazy.sync(mx, y)
    np.testing.assert_allclose(y.numpy(), a.sum(1) + 1)


def test_reductions_of_two_versions_of_a_written_tensor_stay_apart():
    """`x[0] += 1` between them: sharing a loop would save nothing and would
    keep the old version alive, turning the in-place write into a copy."""
    a = np.random.default_rng(17).standard_normal((8, 16))
    x = lazy.asarray(a.copy())
    s = x.sum(1)
    x[0] += 1
    m = x.max(1)
    ks = synced(s, m, x)
    assert len([k for k in ks if k.kernel.startswith("r")]) == 2
    assert not any("copy" in k.kernel for k in ks), [k.kernel for k in ks]
    b = a.copy()
    b[0] += 1
    np.testing.assert_allclose(s.numpy(), a.sum(1))
    np.testing.assert_array_equal(m.numpy(), b.max(1))


def test_a_float32_sibling_sum_on_a_strided_row_adds_in_float64():
    a = np.full((4, 60000), 0.1, np.float32)
    x = lazy.asarray(a)[:, ::3]
    s, m = x.sum(1), x.max(1)
    assert len(synced(s, m)) == 1
    exact = np.float64(np.float32(0.1)) * 20000
    assert np.abs(s.numpy() / exact - 1).max() < 1e-7


def test_a_kept_reduction_that_its_siblings_epilogue_reads_is_written_there():
    """`y = x.sum(1) - x.max(1)`, keeping either reduction as well: one
    kernel writing y and the kept one."""
    a = np.random.default_rng(18).standard_normal((40, 60))
    x = lazy.asarray(a)
    for keep_max in (True, False):
        s, m = x.sum(1), x.max(1)
        y = s - m
        kept = m if keep_max else s
        assert len(synced(y, kept)) == 1
        np.testing.assert_allclose(y.numpy(), a.sum(1) - a.max(1))
        np.testing.assert_allclose(kept.numpy(), a.max(1) if keep_max else a.sum(1))


def _spy_on_candidates(monkeypatch):
    """Per new reduction, how many indexed reductions the search looked at
    and how many kernels it offered."""
    looked, offered = [], []
    candidates, kernels = siblings.Reductions.candidates, siblings.Reductions.kernels

    def counted(self, red):
        looked.append(0)
        for r in candidates(self, red):
            looked[-1] += 1
            yield r

    def spied(self, red, group_of, created):
        found = kernels(self, red, group_of, created)
        offered.append(len(found))
        return found
    monkeypatch.setattr(siblings.Reductions, "candidates", counted)
    monkeypatch.setattr(siblings.Reductions, "kernels", spied)
    return looked, offered


def test_a_chain_of_reductions_offers_almost_no_candidates(monkeypatch):
    """`x = x - x.sum(1)` repeated: every reduction shares its sources with
    every other and each reads the one before, so the search skips them
    (looking at them all took seconds to plan 800 links). Only a
    descendant whose bounded source walk (SOURCE_WALK) reached the
    reduction's input but stopped before the reduction itself is offered,
    for `sibling_group` to refuse."""
    looked, offered = _spy_on_candidates(monkeypatch)
    a = np.random.default_rng(19).standard_normal((8, 16))
    x, want = lazy.asarray(a), a.copy()
    for _ in range(60):
        x = x - x.sum(1, keepdims=True) * 0.01
        want = want - want.sum(1, keepdims=True) * 0.01
    synced(x)
    assert len(offered) == 60 and max(offered) <= 2
    assert max(looked) == siblings.CANDIDATES  # a bounded search, full each time
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-12)


def test_a_wide_fan_out_still_finds_siblings_within_the_bound(monkeypatch):
    """300 reductions of one input: each search stops at CANDIDATES, the
    latest made first, and still fills every kernel to MAX_REDUCTIONS."""
    looked, _ = _spy_on_candidates(monkeypatch)
    a = np.random.default_rng(20).standard_normal((16, 24))
    x = lazy.asarray(a)
    ys = [(x * i).sum(1) for i in range(300)]
    ks = synced(*ys)
    assert len(ks) == 300 // siblings.MAX_REDUCTIONS
    assert max(looked) == siblings.CANDIDATES
    for i, y in enumerate(ys):
        np.testing.assert_allclose(y.numpy(), (a * i).sum(1), rtol=1e-12)


def test_every_link_of_a_long_chain_shares_its_loop():
    """`x = (x - x.min()) / (x.max() - x.min() + 1)`, 120 times: each link's
    min and max share a loop however much is computed from them later (a
    check that walked readers' readers ran out of nodes and refused)."""
    a = np.random.default_rng(21).standard_normal((8, 12))
    x, want = lazy.asarray(a), a.copy()
    for _ in range(120):
        x = (x - x.min()) / (x.max() - x.min() + 1)
        want = (want - want.min()) / (want.max() - want.min() + 1)
    ks = synced(x)
    assert len(ks) == 240 and sum(k.kernel.endswith("min_max") for k in ks) == 120
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("axis", [None, 1, 0])
def test_nanvar_computes_its_mean_beside_its_two_sums(axis):
    """nanvar's mean is the sum over the count, both reductions of one loop;
    the count is read again by the second pass. The division runs in the
    first kernel's epilogue (computed once, rule 9), reading its sibling
    count there, so nanvar stays two kernels."""
    rng = np.random.default_rng(22)
    a = rng.standard_normal((40, 48)).astype(np.float32)
    a[rng.random(a.shape) < 0.1] = np.nan
    v = lnp.nanvar(lazy.asarray(a), axis=axis)
    ks = synced(v)
    assert len(ks) == 2
    first = [op.split("@")[0] for op in ks[0].ops]
    assert first.count("sum") == 2 and first[-1] == "truediv"
    np.testing.assert_allclose(v.numpy(), np.nanvar(a, axis=axis), rtol=1e-5)
