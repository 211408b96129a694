"""Fusion rules, tested by counting kernels in the log (docs/fusion.md)."""
import numpy as np
import pytest

import lazy


pytestmark = pytest.mark.usefixtures("fresh_log")


def kernels_of_last_sync():
    last = lazy.log.syncs[-1].id
    return [k for k in lazy.log if k.sync_id == last]


def test_random_read_through_two_views_is_written_first():
    """Two views of one randn in one kernel would run two Philox streams per
    vector lane (slower than writing it once): randn gets its own kernel,
    kept or not, and the reader loads it."""
    for kept in (True, False):
        lazy.manual_seed(0)
        X = lazy.randn(1000, 2)
        y = X[:, 0] ** 2 + X[:, 1] ** 3
        why = {k.name: k.fusion for k in lazy.explain(*((X, y) if kept else (y,))).kernels}
        assert why == {"e0_add_philox_normal_f32":
                       "requested" if kept else "random, read through 2 views",
                       "e1_mul_add": "requested"}
        lazy.sync(*((X, y) if kept else (y,)))
        # randn's own ops (counter = iota + offset, philox), then the expression's
        assert [[op.split("@")[0] for op in k.ops] for k in kernels_of_last_sync()] == [
            ["add", "philox_normal_f32"], ["mul", "mul", "mul", "add"]]
        lazy.manual_seed(0)
        x = lazy.randn(1000, 2).numpy()
        np.testing.assert_allclose(y.numpy(), x[:, 0] ** 2 + x[:, 1] ** 3, rtol=1e-5, atol=1e-6)


def test_random_read_through_two_views_by_a_reduction_is_written_first():
    lazy.manual_seed(2)
    X = lazy.rand(500, 2)
    s = (X[:, 0] * X[:, 1]).sum()
    del X
    assert [k.fusion for k in lazy.explain(s).kernels] == ["random, read through 2 views",
                                                          "requested"]
    lazy.sync(s)
    assert [k.kernel for k in kernels_of_last_sync()] == ["e0_add_philox_uniform_f32",
                                                          "r1_mul_sum"]
    lazy.manual_seed(2)
    x = lazy.rand(500, 2).numpy().astype(np.float64)
    np.testing.assert_allclose(s.item(), (x[:, 0] * x[:, 1]).sum(), rtol=1e-5)


@pytest.mark.parametrize("read", [lambda X: X * 2 + 1, lambda X: X[:, 1] ** 2 - X[:, 1],
                                  lambda X: (X ** 2).sum(axis=1)])
def test_random_read_through_one_view_is_computed_where_it_is_read(read):
    lazy.manual_seed(1)
    y = read(lazy.randn(1000, 2))
    lazy.sync(y)
    (k,) = kernels_of_last_sync()
    assert "philox_normal_f32" in [op.split("@")[0] for op in k.ops]
    lazy.manual_seed(1)
    np.testing.assert_allclose(y.numpy(), read(lazy.randn(1000, 2).numpy()), rtol=1e-5,
                               atol=1e-5)


def test_elementwise_chain_fuses_through_views():
    a = lazy.arange(24, dtype=lazy.float32).reshape(4, 6)
    b = (a * 2 + 1).T[1:, ::-2]          # view of a pending elementwise result
    c = lazy.exp(b - 3).reshape(-1)[::3]  # more views, more elementwise
    lazy.sync(c)
    assert len(kernels_of_last_sync()) == 1
    an = np.arange(24, dtype=np.float32).reshape(4, 6)
    ref = np.exp((an * 2 + 1).T[1:, ::-2] - 3).reshape(-1)[::3]
    np.testing.assert_allclose(c.numpy(), ref, rtol=1e-6)


def test_non_strided_view_of_computed_result_still_fuses():
    # reshape of a transposed computed result cannot be one strided view;
    # it is chained (unravel at run time) instead of breaking the kernel.
    a = lazy.arange(12, dtype=lazy.float64).reshape(3, 4)
    b = (a + 1).T.reshape(2, 6) * 10
    lazy.sync(b)
    assert len(kernels_of_last_sync()) == 1
    an = np.arange(12, dtype=np.float64).reshape(3, 4)
    np.testing.assert_array_equal(b.numpy(), ((an + 1).T.reshape(2, 6)) * 10)


def test_elementwise_producers_fuse_into_reduction():
    x = lazy.rand(64, 32)
    s = (lazy.sqrt(x) * 3 + x * x).sum(axis=1)
    lazy.sync(s)
    (k,) = kernels_of_last_sync()
    assert k.kernel.startswith("r")
    xn = x.numpy().astype(np.float64)
    np.testing.assert_allclose(s.numpy(), (np.sqrt(xn) * 3 + xn * xn).sum(1), rtol=1e-5)


def test_elementwise_consumer_of_reduction_fuses_as_epilogue():
    x = lazy.rand(50, 40)
    lazy.sync(x)  # data, not a third kernel's worth of pending random numbers
    m = x.mean(axis=0)                  # sum, then divide: one kernel
    z = lazy.sqrt(x.sum(axis=1) * 2) + 1
    lazy.sync(m, z)
    assert len(kernels_of_last_sync()) == 2
    xn = x.numpy()
    np.testing.assert_allclose(m.numpy(), xn.mean(0), rtol=1e-5)
    np.testing.assert_allclose(z.numpy(), np.sqrt(xn.sum(1) * 2) + 1, rtol=1e-5)


def test_reduction_read_through_broadcast_breaks_the_kernel():
    x = lazy.rand(8, 16)
    lazy.sync(x)
    y = x - x.max(axis=1, keepdims=True)   # softmax-style: needs the whole max first
    lazy.sync(y)
    ks = kernels_of_last_sync()
    assert len(ks) == 2
    plan_reason = "reduction read through a view"
    assert any(plan_reason in k.fusion for k in lazy.explain(x - x.max(1, keepdims=True)).kernels)
    xn = x.numpy()
    np.testing.assert_allclose(y.numpy(), xn - xn.max(1, keepdims=True))


def test_reduction_of_reduction_is_two_kernels():
    x = lazy.rand(6, 7, 8)
    y = x.sum(axis=2).max(axis=1)
    lazy.sync(y)
    assert len(kernels_of_last_sync()) == 2
    np.testing.assert_allclose(y.numpy(), x.numpy().sum(2).max(1), rtol=1e-5)


def test_value_read_by_two_kernels_is_materialized_once():
    x = lazy.rand(10, 10)
    t = lazy.exp(x) + 1
    a, b = t.sum(0), t.max(1)   # reductions over other axes: t is written once, read twice
    lazy.sync(a, b)
    assert len(kernels_of_last_sync()) == 3
    tn = np.exp(x.numpy()) + 1
    np.testing.assert_allclose(a.numpy(), tn.sum(0), rtol=1e-5)
    np.testing.assert_allclose(b.numpy(), tn.max(1), rtol=1e-6)  # exp: within an ulp
    t = lazy.exp(x) + 1
    reasons = [k.fusion for k in lazy.explain(t.sum(0), t.max(1)).kernels]
    assert "read by 2 kernels" in reasons


def _data(*shape, n=4, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


def test_cheap_value_read_by_two_kernels_is_recomputed_in_each():
    """`y = a * b` read by a reduction and by the kernel after it: computed
    in both (a and b read twice), never written; explain says so under each
    kernel, with the bytes that decided it; the cached schedule replays it."""
    def centered(an, bn):
        y = lazy.asarray(an) * lazy.asarray(bn)
        return y - y.mean(axis=1, keepdims=True)

    for seed in (0, 1):
        an, bn, _, _ = _data(30, 40, seed=seed)
        r = centered(an, bn)
        if seed == 0:
            plan = lazy.explain(r)
            assert [k.name for k in plan.kernels] == ["r0_mul_sum_truediv", "e1_mul_sub"]
            for k in plan.kernels:
                [note] = k.recomputed
                assert note.startswith("mul@") and "(read by 2 kernels; recomputing reads " \
                    "16 B/element more, writing it would move 20)" in note
                assert f"recomputed here, not written: {note}" in str(plan)
        lazy.sync(r)
        assert len(kernels_of_last_sync()) == 2
        assert lazy.log.syncs[-1].schedule == "hit"  # explain planned it first
        y_ = an * bn
        np.testing.assert_allclose(r.numpy(), y_ - y_.mean(axis=1, keepdims=True), rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.parametrize("case", ["transcendental", "division", "bytes", "requested",
                                  "shared ancestor", "too many nodes",
                                  "both sides of a reduction"])
def test_values_that_stay_written_once(case):
    """What `recompute` refuses, each with the plain rule's result: an exp
    (recomputing it measured slower), a division of whole arrays, a value
    whose inputs outweigh it, a kept one, an input also read elsewhere, a
    long chain, and a kernel that reads the value before and after its
    reduction (the join is undone in every kernel it was tried in)."""
    an, bn, cn, dn = _data(30, 40)
    a, b, c, d = (lazy.asarray(v) for v in (an, bn, cn, dn))
    if case == "transcendental":
        t, t_ = lazy.exp(a), np.exp(an)
    elif case == "division":  # one per element: only a broadcast one is recomputed
        t, t_ = a / b, an / bn
    elif case == "bytes":  # four inputs read twice (32 B) outweigh writing t (4 + 3 * 4 + 16)
        t, t_ = a * b + c * d, an * bn + cn * dn
    elif case == "too many nodes":
        t, t_ = a, an
        for _ in range(9):
            t, t_ = t * 1.5 + 0.25, t_ * np.float32(1.5) + np.float32(0.25)
    else:
        t, t_ = a * b, an * bn
    outs = [t.sum(axis=1), t.max(axis=0)]  # two domains: no shared loop (rule 8)
    wants = [t_.sum(axis=1), t_.max(axis=0)]
    if case == "requested":
        outs.append(t)
        wants.append(t_)
    elif case == "shared ancestor":  # a * b also feeds t2 = a * b + 1, read by a third kernel
        t2 = t + 1
        outs, wants = [t2.sum(axis=1), t2.max(axis=1), t.min(axis=1)], \
            [(t_ + 1).sum(axis=1), (t_ + 1).max(axis=1), t_.min(axis=1)]
    elif case == "both sides of a reduction":  # after a kernel that could take it
        outs = [outs[1], t.sum(axis=1) + t[:, 0]]
        wants = [wants[1], t_.sum(axis=1) + t_[:, 0]]
    plan = lazy.explain(*outs)
    if case != "shared ancestor":  # there t2 is recomputed, t not
        assert not any(k.recomputed for k in plan.kernels)
        computing_t = [k.name for k in plan.kernels
                       if any(op.startswith(f"{t._buf.node.op}@") for op in k.ops)]
        assert len(computing_t) == 1, computing_t  # nothing half-joined is left behind
    assert any(k.fusion in ("read by 2 kernels", "read by 3 kernels", "requested")
               for k in plan.kernels)
    lazy.sync(*outs)
    for o, w in zip(outs, wants):
        np.testing.assert_allclose(o.numpy(), w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis", [1, 0])
def test_a_value_centred_by_a_reduction_is_recomputed_not_written(axis):
    """`(x - x.mean(axis)) / x.std(axis)`: x - mean is read by the variance's
    reduction and by the output; it is recomputed in both, so three
    kernels read x and none writes x - mean. The mean (a division of the
    sum) and the std (a square root of the variance) are computed once per
    row or column, by their reductions' kernels, not per element of x."""
    xn = np.random.default_rng(3).standard_normal((30, 40)).astype(np.float32)
    x, n = lazy.asarray(xn), xn.shape[1 - axis]  # n: the sums' size
    y = (x - x.mean(axis, keepdims=True)) / (x.std(axis, keepdims=True) + 1e-3)
    plan = lazy.explain(y)
    ops = [[op.split("@")[0] for op in k.ops] for k in plan.kernels]
    assert ops == [["sum", "truediv"], ["sub", "mul", "sum", "truediv", "sqrt"],
                   ["sub", "add", "truediv"]]
    assert [k.fusion for k in plan.kernels] == [
        "read by 2 kernels", f"sqrt read through a broadcast: computed once, not {40 * 30 // n} "
        "times", "requested"]
    for k in plan.kernels[1:]:
        [note] = k.recomputed
        assert note.startswith("sub@") and \
            f"recomputing reads {2 * (4 + 4 * n / xn.size):.3g} B/element more" in note
    lazy.sync(y)
    assert [k.nbytes for k in kernels_of_last_sync()] == [  # x - mean is never in memory
        xn.nbytes + 4 * n, xn.nbytes + 4 * n * 2, xn.nbytes * 2 + 4 * n * 2]
    want = (xn - xn.mean(axis, keepdims=True)) / (xn.std(axis, keepdims=True) + np.float32(1e-3))
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)


def test_an_expensive_broadcast_value_is_computed_once_only_from_a_reduction():
    """A square root of a column sum, read by every row, is the sum kernel's
    epilogue; the same of realized data, or read at most BROADCAST_TIMES - 1
    times per element, stays in the reading kernel (no kernel is added)."""
    xn = np.abs(np.random.default_rng(4).standard_normal((64, 50))) + 1
    x = lazy.asarray(xn)
    names = [k.name for k in lazy.explain(x / lazy.sqrt(x.sum(0))).kernels]
    assert names == ["r0_sum_sqrt", "e1_truediv"]
    v = lazy.asarray(xn[0])
    assert [k.name for k in lazy.explain(x / lazy.sqrt(v)).kernels] == ["e0_sqrt_truediv"]
    short = x[:7]  # sqrt of the sums read 7 times each
    assert [k.name for k in lazy.explain(short / lazy.sqrt(short.sum(0))).kernels] == [
        "r0_sum", "e1_sqrt_truediv"]
    y = x / lazy.sqrt(x.sum(0))
    np.testing.assert_allclose(y.numpy(), xn / np.sqrt(xn.sum(0)), rtol=1e-12)


def test_shared_subexpression_inside_one_kernel_is_not_split():
    x = lazy.randn(1000)
    t = x * 3 - 1
    y = lazy.where(t > 0, t, -t)
    lazy.sync(y)
    assert len(kernels_of_last_sync()) == 1
    tn = x.numpy() * 3 - 1
    np.testing.assert_allclose(y.numpy(), np.abs(tn), rtol=1e-6)


@pytest.mark.parametrize("read", [lambda a: a[::-1] * 2, lambda a: a[::-1, ::-1].T + 1,
                                  lambda a: a[::-1, 0] + a[::-1, 1] * a[::-1, 2]],
                         ids=["flipped", "flipped-transposed", "reversed-columns"])
def test_live_intermediate_read_through_negative_strides_is_an_extra_output(read):
    xn = np.arange(24, dtype=np.float32).reshape(8, 3)
    a = lazy.asarray(xn) * 3
    b = read(a)
    lazy.sync()
    assert len(kernels_of_last_sync()) == 1
    np.testing.assert_array_equal(a.numpy(), xn * 3)
    np.testing.assert_array_equal(b.numpy(), read(xn * 3))


def test_live_intermediate_is_an_extra_output_of_its_reader():
    x = lazy.rand(4, 6)
    lazy.sync(x)
    a = x + 1        # the user still holds a: sync() must realize it
    b = a.T * 2      # b's loop reads every element of a once (through a transpose)
    lazy.sync()
    (k,) = kernels_of_last_sync()
    assert k.nbytes == 3 * 24 * 4  # reads x, writes a and b
    np.testing.assert_allclose(b.numpy(), (x.numpy() + 1).T * 2, rtol=1e-6)
    np.testing.assert_allclose(a.numpy(), x.numpy() + 1, rtol=1e-6)


@pytest.mark.parametrize("read", [lambda a: a[::2] * 2, lambda a: a[:, :1] + a, lambda a: a.sum()],
                         ids=["part", "twice", "reduction"])
def test_live_intermediate_its_reader_does_not_tile_is_its_own_kernel(read):
    """An extra output must be written exactly once per element by the loop that
    reads it: a partial read, a broadcast read or a reduction's prologue cannot."""
    xn = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = lazy.asarray(xn) + 1
    b = read(a)
    lazy.sync()
    assert len(kernels_of_last_sync()) == 2
    np.testing.assert_allclose(a.numpy(), xn + 1)
    np.testing.assert_allclose(b.numpy(), read(xn + 1), rtol=1e-6)


@pytest.mark.parametrize("axis", [None, 1])
def test_live_reduction_read_by_one_epilogue_is_its_extra_output(axis):
    """`z = (x*x).sum(); w = sqrt(z)` with both kept: the reduction's kernel
    writes z and runs sqrt as its epilogue, one kernel (the op cap's path
    count once broke this by measuring z over its input's domain)."""
    xn = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = lazy.asarray(xn)
    z = (x * x).sum(axis=axis)
    w = lazy.sqrt(z) * 2
    lazy.sync(z, w)
    assert [k.kernel for k in kernels_of_last_sync()] == ["r0_mul_sum_sqrt"]
    np.testing.assert_allclose(z.numpy(), (xn * xn).sum(axis=axis), rtol=1e-6)
    np.testing.assert_allclose(w.numpy(), np.sqrt((xn * xn).sum(axis=axis)) * 2, rtol=1e-6)


def test_kernel_op_cap_below_one_is_refused():
    try:
        for bad in (0, -3, 2.5):
            with pytest.raises(ValueError, match="max_kernel_ops must be an int of at least 1"):
                lazy.config.max_kernel_ops = bad
    finally:
        lazy.config.max_kernel_ops = None
    assert lazy.config.max_kernel_ops == 128


def test_matmul_is_an_extern_blas_kernel_between_fused_kernels():
    a, b = lazy.rand(16, 8), lazy.rand(8, 4)
    c = ((a * 2) @ (b + 1)).sum(axis=0)
    lazy.sync(c)
    backends = [k.backend for k in kernels_of_last_sync()]
    assert backends == ["llvm", "llvm", "blas", "llvm"]
    np.testing.assert_allclose(c.numpy(), ((a.numpy() * 2) @ (b.numpy() + 1)).sum(0), rtol=1e-5)


def test_kernel_op_cap_cuts_long_chains_into_cached_kernels():
    lazy.config.max_kernel_ops = 16
    try:
        x = lazy.arange(10)
        y = x
        for _ in range(64):
            y = y + 1
        lazy.sync(y)
    finally:
        lazy.config.max_kernel_ops = None
    ks = kernels_of_last_sync()
    assert len(ks) == 4
    assert sum(k.cache == "hit" for k in ks) >= 2  # same structure: compiled once
    np.testing.assert_array_equal(y.numpy(), np.arange(10) + 64)


def _expanded_ops(kernel) -> int:
    """Op nodes the compiled kernel evaluates, each shared subtree once."""
    from scheduler.kernel_ir import Op, postorder
    roots = [o.expr for o in kernel.outputs] + ([kernel.reduce.expr] if kernel.reduce else [])
    return sum(isinstance(e, Op) for e in postorder(roots))


@pytest.mark.parametrize("cap", [None, 16])
def test_kernel_op_cap_counts_each_view_an_op_is_evaluated_through(cap):
    """`y[::-1]*0.5 + y.T.reshape(...)*0.25` evaluates y's expression along two
    view paths that strides cannot fold together, so one fused kernel of N
    such steps grew as 2**N (N=8: one kernel of thousands of ops, seconds to
    compile; N=12: minutes). The cap counts ops per path and cuts the chain."""
    from lazy.explain import plan
    lazy.config.max_kernel_ops = cap
    try:
        a = np.arange(30, dtype=np.float32).reshape(6, 5)
        y, ref = lazy.asarray(a.copy()), a.copy()
        for _ in range(10):
            y = y[::-1] * 0.5 + y.T.reshape(6, 5) * 0.25
            ref = ref[::-1] * 0.5 + ref.T.reshape(6, 5) * 0.25
        steps = plan([y._buf]).steps
        sizes = [_expanded_ops(s.kernel) for s in steps]
        assert max(sizes) <= lazy.config.max_kernel_ops, sizes
        assert len(steps) > 1
        np.testing.assert_allclose(y.numpy(), ref, rtol=1e-6)
    finally:
        lazy.config.max_kernel_ops = None


def test_duplicate_nodes_are_merged():
    x = lazy.rand(10)
    a = lazy.exp(x) * 2
    b = lazy.exp(x) * 2
    c = a + b
    lazy.sync(c)
    assert lazy.log.syncs[-1].merged == 3  # exp, the constant 2, and mul
    assert len(kernels_of_last_sync()) == 1
    np.testing.assert_allclose(c.numpy(), 4 * np.exp(x.numpy()), rtol=1e-6)


def test_merged_duplicates_that_are_both_live_do_not_share_memory():
    x = lazy.rand(10)
    a, b = x + 1, x + 1
    lazy.sync(a, b)
    assert not lazy.shares_memory(a, b)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_constants_are_folded():
    c = (lazy.full((5,), 2.0) * 3 + 1) / 2   # all constant: folds to 3.5
    x = lazy.rand(5)
    y = x + c
    lazy.sync(y)
    assert lazy.log.syncs[-1].folded == 3
    np.testing.assert_allclose(y.numpy(), x.numpy() + 3.5, rtol=1e-6)


def test_a_constant_numpy_refuses_to_fold_is_left_to_the_kernel():
    """NumPy raises on an integer to a negative integer power; the kernels
    give the truncated answer, and so must the fold (and a fold that fails
    must not break the sync of every other live tensor)."""
    good = lazy.arange(4) * 10
    p = lazy.full((4,), 2) ** lazy.asarray(np.array([-1, -2, 0, 3]))
    q = lazy.full((3,), -1) ** lazy.full((3,), -3)
    r = lazy.arange(4) << -1
    lazy.sync()
    assert p.tolist() == [0, 0, 1, 8] and q.tolist() == [-1, -1, -1]
    assert r.tolist() == [0, 0, 0, 0] and good.tolist() == [0, 10, 20, 30]


def test_a_fold_that_numpy_refuses_leaves_the_node_to_the_kernel(monkeypatch):
    """With NumPy's own power as the reference (which raises on negative
    integer exponents), folding gives up and the kernel computes it."""
    import dataclasses
    from scheduler import ops
    monkeypatch.setitem(ops.ELEMENTWISE, "pow",
                        dataclasses.replace(ops.ELEMENTWISE["pow"], numpy=np.power))
    q = lazy.full((3,), 2) ** lazy.full((3,), -1)
    lazy.sync(q)
    assert q.tolist() == [0, 0, 0] and lazy.log.syncs[-1].folded == 0


def test_constant_target_becomes_a_fill_kernel():
    z = lazy.zeros(3, 4) + 7
    lazy.sync(z)
    assert len(kernels_of_last_sync()) == 1
    np.testing.assert_array_equal(z.numpy(), np.full((3, 4), 7, np.float32))
    assert z.stride() == (4, 1)


def test_new_shape_with_same_structure_does_not_recompile():
    def f(n):
        x = lazy.asarray(np.linspace(0, 1, n * 3, dtype=np.float32).reshape(n, 3))
        return (x[:, 0] * 2 + lazy.sin(x[:, 2])).sum()
    lazy.sync(f(100))
    lazy.sync(f(12345))
    caches = [k.cache for k in lazy.log]
    assert caches[-1] == "hit", caches


def test_new_dtype_recompiles_and_says_why():
    def f(dtype):  # a structure no other test builds
        x = lazy.tensor(np.linspace(0, 1, 7), dtype=dtype)  # data: rand is an op per dtype
        return lazy.tanh(lazy.sigmoid(x) * 3 - lazy.cos(x)) / 0.75
    lazy.sync(f(lazy.float64))
    lazy.sync(f(lazy.float32))
    first, second = list(lazy.log)
    assert first.cache.startswith("miss"), first.cache
    assert second.cache == "miss (new dtypes)", second.cache


def test_extra_output_read_through_columns_is_one_interleaved_store_stream():
    """A kept (n, 3) result read column by column is written by its reader's kernel
    through three views; the second and third follow the first (one base pointer)."""
    from scheduler.realize import plan
    xn = np.arange(36, dtype=np.float32).reshape(12, 3)
    x = lazy.asarray(xn) * 2 - 1
    y = x[:, 0] * x[:, 1] + x[:, 2]
    (step,) = plan([x._buf, y._buf]).steps
    assert [(o.follows, o.delta) for o in step.kernel.outputs] == [(None, 0), (None, 0),
                                                                  (1, 1), (1, 2)]
    lazy.sync()
    assert len(kernels_of_last_sync()) == 1
    xr = xn * 2 - 1
    np.testing.assert_array_equal(x.numpy(), xr)
    np.testing.assert_allclose(y.numpy(), xr[:, 0] * xr[:, 1] + xr[:, 2])
