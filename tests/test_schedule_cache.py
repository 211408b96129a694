"""The schedule cache: same graph structure reuses its plan; anything else re-plans."""
import numpy as np
import pytest

import lazy

pytestmark = pytest.mark.usefixtures("fresh_log")


def last_sync():
    return lazy.log.syncs[-1]


def step(x, y, k=2.0):
    a = x * k + y
    return lazy.sqrt(lazy.abs(lazy.exp(a) - 1)) / 2 - x


def ref(x, y, k=2.0):
    a = x * k + y
    return np.sqrt(np.abs(np.exp(a) - 1)) / 2 - x


def test_repeated_graph_reuses_the_plan_with_new_data():
    for i in range(4):
        x, y = lazy.rand(50), lazy.rand(50)
        z = step(x, y)
        lazy.sync(z)
        assert last_sync().schedule == ("miss" if i == 0 else "hit")
        np.testing.assert_allclose(z.numpy(), ref(x.numpy(), y.numpy()), rtol=1e-5)
    assert [s.schedule for s in lazy.log.syncs if s.cause == "sync()"] == ["miss"] + ["hit"] * 3
    assert [k.cache for k in lazy.log][-1] == "hit"


@pytest.mark.parametrize("change", ["shape", "dtype", "view", "constant", "negative zero",
                                    "same input twice", "requested set"])
def test_anything_structural_misses_and_stays_correct(change):
    x, y = lazy.rand(40), lazy.rand(40)
    lazy.sync(step(x, y))
    if change == "shape":
        x, y = lazy.rand(41), lazy.rand(41)
        z, want = step(x, y), None
    elif change == "dtype":
        x, y = lazy.rand(40, dtype=lazy.float64), lazy.rand(40, dtype=lazy.float64)
        z = step(x, y)
    elif change == "view":
        x, y = lazy.rand(80)[::2], lazy.rand(40)
        z = step(x, y)
    elif change == "constant":
        z = step(x, y, k=3.0)
        want = ref(x.numpy(), y.numpy(), k=3.0)
    elif change == "negative zero":
        x = x + 0.5                      # strictly positive
        z0 = 1 / (x * 0.0)               # +0.0 -> +inf
        lazy.sync(z0)
        z = 1 / (x * -0.0)               # -0.0 -> -inf: must not reuse the 0.0 plan
        lazy.sync(z)
        assert last_sync().schedule == "miss"
        assert np.all(np.isneginf(z.numpy())) and np.all(np.isposinf(z0.numpy()))
        return
    elif change == "same input twice":
        z = step(x, x)
        want = ref(x.numpy(), x.numpy())
    else:  # one more tensor asked for: a different set of outputs
        a = x * 2.0 + y
        z = lazy.sqrt(lazy.abs(lazy.exp(a) - 1)) / 2 - x
        lazy.sync(z, a)
        assert last_sync().schedule == "miss"
        np.testing.assert_allclose(a.numpy(), x.numpy() * 2 + y.numpy(), rtol=1e-6)
        return
    lazy.sync(z)
    assert last_sync().schedule == "miss"
    if change in ("shape", "dtype", "view"):
        want = ref(x.numpy(), y.numpy())
    np.testing.assert_allclose(z.numpy(), want, rtol=1e-5)


def test_a_new_kernel_op_cap_misses():
    """max_kernel_ops decides where fusion cuts, so a plan made under one cap
    must not be reused under another."""
    kernels = []
    try:
        for cap in (None, 4):
            lazy.config.max_kernel_ops = cap
            x, y = lazy.rand(40), lazy.rand(40)  # built on the same lines: same structure
            z = step(x, y)
            lazy.sync(z)
            assert last_sync().schedule == "miss"
            kernels.append(len([k for k in lazy.log if k.sync_id == last_sync().id]))
            np.testing.assert_allclose(z.numpy(), ref(x.numpy(), y.numpy()), rtol=1e-5)
    finally:
        lazy.config.max_kernel_ops = None
    assert kernels[0] == 1 and kernels[1] > 1


def test_writes_still_decide_in_place_at_run_time():
    x = lazy.zeros(100)
    for i in range(3):
        x += 1
        lazy.sync()
    assert last_sync().schedule == "hit"
    assert list(lazy.log)[-1].reason.endswith("write in place")
    keep = x * 1            # now a pending reader of the current version...
    x += 1                  # ...so this write must copy, although its plan is cached
    lazy.sync(x)
    assert list(lazy.log)[-1].reason.endswith("still read by 1 pending op(s)")
    np.testing.assert_array_equal(x.numpy(), np.full(100, 4.0))
    np.testing.assert_array_equal(keep.numpy(), np.full(100, 3.0))


def test_a_reused_plan_keeps_no_buffer_alive():
    """Instantiating a cached plan must not build reference cycles: a dropped
    result's buffer is freed at once (its memory goes back to the pool), not at
    the next garbage collection."""
    import gc
    import weakref
    x = lazy.asarray(np.arange(100, dtype=np.float32))
    gc.disable()
    try:
        for i in range(3):
            y = step(x, x)
            lazy.sync(y)
            assert last_sync().schedule == ("miss" if i == 0 else "hit")
            dead = weakref.ref(y._buf)
            del y
            assert dead() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("build", [
    lambda X: (X - X.mean(0)).T @ (X - X.mean(0)),
    lambda X: (X * 2) @ (X * 2).T,
    lambda X: (X.reshape(4, 5, 5) + 1) @ (X.reshape(4, 5, 5) + 1)],
    ids=["covariance", "gram", "batched"])
def test_a_cached_plan_feeds_a_library_call_its_merged_operands(build):
    """A matmul (an extern step: NumPy's BLAS) whose operands are equal
    expressions: the plan merges them into one kernel. On a hit the graph's
    own matmul node still names the duplicate, which no step computes, and
    the second iteration raised AttributeError from the BLAS call."""
    rng = np.random.default_rng(0)
    for i in range(3):
        x = rng.standard_normal((20, 5))
        y = build(lazy.asarray(x))
        got = y.numpy()
        assert last_sync().schedule == ("miss" if i == 0 else "hit")
        np.testing.assert_allclose(got, build(x), rtol=1e-12, atol=1e-12)
