"""NumPy's `initial=` and `where=` on sum, prod, max and min, `where=` on mean,
var, std, any and all, and `mean=` on var and std: native (no fallback),
against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazy
import lazy.numpy as lnp
from conftest import assert_close, backends_used

pytestmark = [pytest.mark.usefixtures("strict_fallback"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

RNG = np.random.default_rng(11)
ARRAYS = {"bool": RNG.random((3, 4)) < 0.5, "int32": RNG.integers(-5, 6, (3, 4), np.int32),
          "int64": RNG.integers(-5, 6, (3, 4)),
          "float32": RNG.normal(size=(3, 4)).astype(np.float32), "float64": RNG.normal(size=(3, 4))}
MASK_SHAPES = [(3, 4), (4,), (3, 1), ()]
AXES = [None, 0, 1, -1, (0, 1)]


def check(got: lazy.Tensor, expected: object, dt: str) -> None:
    expected = np.asarray(expected)
    assert got.dtype.np == expected.dtype and got.shape == expected.shape
    assert_close(got, expected, rtol=1e-5 if "32" in str(expected.dtype) else 1e-12)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(ARRAYS)), st.sampled_from(["sum", "prod", "max", "min"]),
       st.sampled_from(AXES), st.booleans(), st.sampled_from(MASK_SHAPES),
       st.sampled_from([None, -2, 0, 3, 2.5]), st.integers(0, 2**16))
def test_initial_and_where_match_numpy(dt, op, axis, keepdims, mask_shape, initial, seed):
    a = ARRAYS[dt]
    mask = np.random.default_rng(seed).random(mask_shape) < 0.6
    if op in ("max", "min") and initial is None:
        initial = 1  # NumPy refuses where= on max/min without one (tested below)
    kw = dict(axis=axis, keepdims=keepdims, where=mask)
    if initial is not None:  # (NumPy reads an explicit initial=None as "no identity")
        kw["initial"] = initial
    check(getattr(lnp, op)(lnp.asarray(a), **kw), getattr(np, op)(a, **kw), dt)
    kw.pop("where")
    check(getattr(lnp, op)(lnp.asarray(a), **kw), getattr(np, op)(a, **kw), dt)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(ARRAYS)), st.sampled_from(["mean", "var", "std"]),
       st.sampled_from(AXES), st.booleans(), st.sampled_from(MASK_SHAPES),
       st.sampled_from([0, 1]), st.integers(0, 2**16))
def test_where_on_mean_var_std_matches_numpy(dt, op, axis, keepdims, mask_shape, ddof, seed):
    """Elements left out do not count in N either; an all-False slice is NaN."""
    a = ARRAYS[dt]
    mask = np.random.default_rng(seed).random(mask_shape) < 0.6
    kw = dict(axis=axis, keepdims=keepdims, where=mask)
    if op != "mean":
        kw["ddof"] = ddof
    check(getattr(lnp, op)(lnp.asarray(a), **kw), getattr(np, op)(a, **kw), dt)


WITH_NAN = np.where(RNG.random((3, 4)) < 0.2, np.nan, np.where(RNG.random((3, 4)) < 0.4, 0.0, 1.5))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(ARRAYS) + ["nan"]), st.sampled_from(["any", "all"]),
       st.sampled_from(AXES), st.booleans(), st.sampled_from(MASK_SHAPES), st.integers(0, 2**16))
def test_where_on_any_and_all_matches_numpy(dt, op, axis, keepdims, mask_shape, seed):
    """Left-out elements are the op's identity: an all-False slice is True for
    all and False for any; NaN is true, as in NumPy."""
    a = WITH_NAN if dt == "nan" else ARRAYS[dt]
    mask = np.random.default_rng(seed).random(mask_shape) < 0.5
    kw = dict(axis=axis, keepdims=keepdims, where=mask)
    expected = getattr(np, op)(a, **kw)
    check(getattr(lnp, op)(lnp.asarray(a), **kw), expected, dt)
    check(getattr(lnp.asarray(a), op)(**kw), expected, dt)


def test_any_and_all_take_out_and_refuse_initial_as_numpy():
    a, m = ARRAYS["int64"], np.array([True, False, True, False])
    out = np.ones(3, bool)
    assert lnp.asarray(a).all(axis=1, out=out, where=m) is out
    np.testing.assert_array_equal(out, np.all(a, axis=1, where=m))
    with pytest.raises(TypeError, match="initial"):
        lnp.asarray(a).any(initial=1)
    with pytest.raises(TypeError, match="initial"):
        a.any(initial=1)


@pytest.mark.parametrize("dt", ["int64", "float32", "float64"])
@pytest.mark.parametrize("op", ["var", "std"])
def test_var_and_std_take_a_precomputed_mean(dt, op):
    a = ARRAYS[dt]
    for axis in (None, 0, 1):
        mu = np.mean(a, axis=axis, keepdims=True)
        check(getattr(lnp, op)(lnp.asarray(a), axis=axis, mean=lnp.asarray(mu), ddof=1),
              getattr(np, op)(a, axis=axis, mean=mu, ddof=1), dt)


def test_tensor_methods_take_numpys_reduction_arguments():
    """NumPy code under `python -m lazy` calls these on tensors."""
    a = ARRAYS["float64"]
    m = a > 0
    t = lnp.asarray(a)
    check(t.sum(where=m), a.sum(where=m), "float64")
    check(t.prod(1, initial=2.0), a.prod(1, initial=2.0), "float64")
    check(t.max(axis=0, initial=0.5), a.max(axis=0, initial=0.5), "float64")
    check(t.min(0, where=m, initial=9.0), a.min(0, where=m, initial=9.0), "float64")
    check(t.mean(1, where=m, keepdims=True), a.mean(1, where=m, keepdims=True), "float64")
    check(t.var(where=m), a.var(where=m), "float64")
    check(t.std(0, ddof=1, mean=t.mean(0, keepdims=True)),
          a.std(0, ddof=1, mean=a.mean(0, keepdims=True)), "float64")
    out = np.empty(4)
    assert t.sum(0, out=out) is out
    np.testing.assert_allclose(out, a.sum(0))


def test_empty_max_with_initial_is_initial():
    a = np.zeros((0, 3))
    check(lnp.max(lnp.asarray(a), axis=0, initial=5), np.max(a, axis=0, initial=5), "float64")
    check(lnp.min(lnp.asarray(a), initial=-1.5), np.min(a, initial=-1.5), "float64")


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.max(x, where=x > 0),
    lambda xp, x: xp.min(x, axis=0, where=x > 0),
    lambda xp, x: xp.sum(x, where=xp.ones((3, 4), dtype=xp.int64)),
], ids=["max without initial", "min without initial", "int mask"])
def test_errors_are_numpys(call):
    a = ARRAYS["float64"]
    with pytest.raises((ValueError, TypeError)) as expected:
        call(np, a)
    with pytest.raises(expected.type) as got:
        call(lnp, lnp.asarray(a))
    assert str(got.value) == str(expected.value)


def test_a_masked_sum_is_one_fused_kernel_run_at_sync():
    x = lnp.asarray(ARRAYS["float32"]) * 2
    lazy.log.clear()
    s = lnp.sum(x, axis=1, where=x > 0, initial=1.0)
    assert len(lazy.log) == 0
    lazy.sync(s)
    assert len(lazy.log) == 1 and set(backends_used()) == {"llvm"}
    a = ARRAYS["float32"] * 2
    check(s, np.sum(a, axis=1, where=a > 0, initial=1.0), "float32")


@pytest.mark.parametrize("shape", [(2, 3, 4), (3, 3)])
def test_a_mask_that_does_not_broadcast_to_the_input_raises_naming_both_shapes(shape):
    """NumPy raises ValueError too, in words about its axis remapping."""
    with pytest.raises(ValueError):
        np.sum(ARRAYS["float64"], where=np.ones(shape, bool))
    with pytest.raises(ValueError, match=r"\(3, 4\)") as got:
        lnp.sum(lnp.asarray(ARRAYS["float64"]), where=np.ones(shape, bool))
    assert str(shape) in str(got.value)
