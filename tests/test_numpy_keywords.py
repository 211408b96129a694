"""NumPy's keywords of lazy.numpy's native functions (`order=`, `out=`,
`dtype=`, `casting=`, `mode=`, `retstep=`, `sparse=`, ...), against NumPy:
NumPy programs run under `python -m lazy` pass them, and a missing one was a
TypeError. Split from test_numpy_arrays.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import lazy.numpy as lnp
from conftest import same

pytestmark = pytest.mark.usefixtures("fresh_log")


# -- NumPy keywords of the native functions ---------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda m, a, b: m.concatenate([a, b], axis=1, dtype=m.float32),
    lambda m, a, b: m.concatenate([a, b], None, dtype=m.int64, casting="unsafe"),
    lambda m, a, b: m.stack([a, b], 1, dtype=m.float32),
    lambda m, a, b: m.stack([a, b], axis=-1, dtype=m.int32, casting="unsafe")])
def test_concatenate_and_stack_take_dtype_and_casting(fn):
    """NumPy casts each input to `dtype` under `casting`; lazyrt raised TypeError."""
    a, b = np.arange(6.0).reshape(2, 3) / 3, np.arange(6, dtype=np.int64).reshape(2, 3) * 7
    same(fn(lnp, lnp.asarray(a), lnp.asarray(b)), fn(np, a, b))


@pytest.mark.parametrize("name, shape", [("concatenate", (4, 3)), ("stack", (2, 2, 3))])
@pytest.mark.parametrize("out_np", [False, True])
def test_concatenate_and_stack_write_out(name, shape, out_np):
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    want = getattr(np, name)([a, -a], out=np.zeros(shape, np.float32))
    out = np.zeros(shape, np.float32) if out_np else lnp.zeros(shape, dtype=lnp.float32)
    got = getattr(lnp, name)([lnp.asarray(a), lnp.asarray(-a)], out=out)
    assert got is out
    same(lnp.asarray(out), want)


@pytest.mark.parametrize("m", [np, lnp])
def test_concatenate_and_stack_refuse_what_numpy_refuses(m):
    x = m.asarray(np.arange(3.0))
    with pytest.raises(TypeError, match=r"Cannot cast array data from dtype\('float64'\) to "
                                        r"dtype\('int64'\) according to the rule 'same_kind'"):
        m.concatenate([x, x], dtype=m.int64)
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        m.stack([x], out=m.zeros((1, 3), dtype=m.float32), casting="safe")
    with pytest.raises(TypeError, match="only takes `out` or `dtype`"):
        m.concatenate([x], out=m.zeros(3), dtype=m.float64)
    with pytest.raises(ValueError, match="casting must be one of"):
        m.concatenate([x], casting="bad")
    with pytest.raises(ValueError):
        m.concatenate([x, x], out=m.zeros(5))


@pytest.mark.parametrize("view", [lambda a: a, lambda a: a.T, lambda a: a[:, ::2],
                                  lambda a: a[::-1], lambda a: a.transpose(1, 0, 2)[:, ::-1]],
                         ids=["C", "F", "strided", "reversed", "permuted_reversed"])
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_ravel_and_reshape_take_order(view, order):
    """NumPy's order= (F: first index fastest; A: F for a Fortran-contiguous
    array; K: memory order) with its views and copies: a write to the base
    shows through the result exactly when it does in NumPy."""
    base = np.arange(24.0).reshape(2, 3, 4)
    t = lnp.asarray(base.copy())
    calls = [lambda m, x: m.ravel(x, order=order)]
    if order != "K":
        calls.append(lambda m, x: m.reshape(x, (-1, 2), order=order))
    for call in calls:
        want, got = call(np, view(base)), call(lnp, view(t))
        base[0, 0, 0] = t[0, 0, 0] = -1.0 - float(t[0, 0, 0])
        same(got, want)


@pytest.mark.parametrize("m", [np, lnp])
def test_reshape_order_errors_and_copy(m):
    x = m.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="order 'K' is not permitted for reshaping"):
        m.reshape(x, (3, 2), order="K")
    with pytest.raises(ValueError, match=r"order must be one of 'C', 'F', 'A', or 'K' \(got 'X'\)"):
        m.ravel(x, order="X")
    c = m.reshape(x, (3, 2), order="F", copy=True)
    x[0, 0] = 9.0
    same(lnp.asarray(c), np.arange(6.0).reshape(2, 3).reshape(3, 2, order="F"))
    v = m.reshape(m.asarray(np.arange(6.0).reshape(2, 3)).T, (6,), order="F", copy=False)
    assert v.shape == (6,)


@pytest.mark.parametrize("mode, indices, axis", [
    ("wrap", [0, 5, -7, 13], None), ("clip", [-3, 2, 99], 1), ("wrap", [[4, -1], [2, 3]], 0),
    ("clip", [True, False], 2), ("raise", [1, -1], 1)])
def test_take_mode_and_out(mode, indices, axis):
    a = np.arange(24.0).reshape(2, 3, 4)
    want = np.take(a, indices, axis=axis, mode=mode)
    same(lnp.take(lnp.asarray(a), indices, axis=axis, mode=mode), want)
    out = lnp.zeros(want.shape, dtype=lnp.int64)
    got = np.take(lnp.asarray(a), lnp.asarray(np.asarray(indices)), axis, out, mode)
    assert got is out
    same(out, np.take(a, indices, axis=axis, mode=mode, out=np.zeros(want.shape, np.int64)))


@pytest.mark.parametrize("m", [np, lnp])
def test_take_refuses_what_numpy_refuses(m):
    with pytest.raises(ValueError, match="clipmode must be one of 'clip', 'raise', or 'wrap'"):
        m.take(m.asarray(np.arange(3.0)), [0], mode="x")
    with pytest.raises(IndexError, match="cannot do a non-empty take from an empty axes"):
        m.take(m.asarray(np.zeros(0)), [1], mode="wrap")


@pytest.mark.parametrize("args, kw", [
    ((0, 1, 5), dict(retstep=True)), ((0, 1, 1), dict(retstep=True)),
    ((np.float32(0), 1, 3), dict(retstep=True)),
    (([0, 1], [0, 2], 3), dict(retstep=True, axis=1)),
    ((np.array([0.0, 1.0]), np.array([[2.0], [3.0]]), 4), dict(axis=-1)),
    ((np.array([1, 2]), 5, 4), dict(dtype=np.int64, endpoint=False)),
    ((0, np.array([1.0, 2.0], np.float32), 3), dict(retstep=True)),
    ((0, 10, 5), dict(axis=0, dtype=np.int32)), ((0, 1, 4), dict(axis=-1))])
def test_linspace_retstep_axis_and_array_ends(args, kw):
    """NumPy broadcasts array start/stop (samples along `axis`) and returns the step."""
    want = np.linspace(*args, **kw)
    got = lnp.linspace(*(lnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args), **kw)
    if kw.get("retstep"):
        (want, want_step), (got, got_step) = want, got
        np.testing.assert_array_equal(np.asarray(got_step), want_step)
        assert np.asarray(got_step).dtype == np.asarray(want_step).dtype
    same(got, want)


@pytest.mark.parametrize("kw", [{}, dict(indexing="ij"), dict(sparse=True),
                                dict(sparse=True, indexing="ij", copy=False), dict(copy=False)])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_meshgrid_sparse_and_copy(kw, n):
    """NumPy's tuple of grids; copy=False gives views of the inputs."""
    inputs = [np.arange(3.0), np.arange(4), np.arange(2.0) * 5][:n]
    ts = [lnp.asarray(a.copy()) for a in inputs]
    want, got = np.meshgrid(*inputs, **kw), lnp.meshgrid(*ts, **kw)
    assert type(got) is type(want)
    for a, t in zip(inputs, ts):
        a[0] = t[0] = 42
    same(got, want)


def test_repeat_takes_numpy_keywords():
    a = np.arange(6).reshape(2, 3)
    same(lnp.repeat(lnp.asarray(a), repeats=3), np.repeat(a, repeats=3))
    same(lnp.repeat(a=lnp.asarray(a), repeats=[1, 2], axis=0), np.repeat(a=a, repeats=[1, 2], axis=0))
    same(np.repeat(lnp.asarray(a), repeats=2, axis=1), np.repeat(a, repeats=2, axis=1))


@pytest.mark.parametrize("name", ["concatenate", "stack", "reshape", "ravel", "take",
                                  "linspace", "meshgrid", "repeat"])
def test_signatures_are_numpys(name):
    import inspect
    want = inspect.signature(getattr(np, name)).parameters
    got = inspect.signature(getattr(lnp, name)).parameters
    assert [(p.name, p.kind, p.default) for p in got.values()][-len(want) + 1:] == \
        [(p.name, p.kind, p.default) for p in want.values()][-len(want) + 1:]
