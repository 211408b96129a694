"""lazy.numpy's elementwise functions take NumPy's ufunc keywords and methods
(out=, where=, dtype=, reduce, outer, accumulate), so NumPy code that uses them
runs under `python -m lazy`. Each result is compared with NumPy's."""
import numpy as np
import pytest

import lazy
import lazy.numpy as lnp

A = np.arange(6.0).reshape(2, 3) - 2
B = np.array([1.0, -2.0, 3.0])


@pytest.mark.parametrize("out_kind", ["tensor", "ndarray"])
@pytest.mark.parametrize("positional", [False, True])
def test_out_is_written_and_returned(out_kind, positional):
    want = np.zeros((2, 3))
    np.add(A, B, want)
    out = lnp.zeros((2, 3)) if out_kind == "tensor" else np.zeros((2, 3))
    got = lnp.add(lnp.asarray(A), B, out) if positional else \
        lnp.add(lnp.asarray(A), B, out=out)
    assert got is out
    np.testing.assert_array_equal(out.numpy() if out_kind == "tensor" else out, want)


def test_out_broadcasts_the_operands_and_where_keeps_out_elsewhere():
    want = np.full((2, 3), 7.0)
    np.multiply(A, 2, out=want, where=A > 0)
    out = lnp.full((2, 3), 7.0)
    lnp.multiply(lnp.asarray(A), 2, out=out, where=lnp.asarray(A) > 0)
    np.testing.assert_array_equal(out.numpy(), want)
    want = np.zeros((2, 3))
    np.negative(B, out=want)  # (3,) into (2, 3)
    out = lnp.zeros((2, 3))
    lnp.negative(lnp.asarray(B), out=out)
    np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.parametrize("out_kind", ["tensor", "ndarray"])
def test_out_casting_defaults_are_numpys(out_kind):
    """A float result into an int out: the reducing methods cast unsafely (they
    take no casting=), a call refuses under same_kind and truncates under
    casting="unsafe"."""
    f = np.array([1.5, 2.5, 3.7])

    def out(shape):
        return lnp.zeros(shape, dtype=lnp.int64) if out_kind == "tensor" else \
            np.zeros(shape, np.int64)

    def value(o):
        return o.numpy() if out_kind == "tensor" else o
    for method, shape, args in [("reduce", (), (f,)), ("accumulate", (3,), (f,)),
                                ("reduceat", (2,), (f, [0, 1]))]:
        got, want = out(shape), np.zeros(shape, np.int64)
        getattr(np.add, method)(*args, out=want)
        getattr(lnp.add, method)(lnp.asarray(args[0]), *args[1:], out=got)
        np.testing.assert_array_equal(value(got), want)
    with pytest.raises(TypeError, match="same_kind"):
        lnp.multiply(lnp.asarray(f), 2, out=out(3))
    got = out(3)
    lnp.multiply(lnp.asarray(f), 2, out=got, casting="unsafe")
    np.testing.assert_array_equal(value(got), np.multiply(f, 2, out=np.zeros(3, np.int64),
                                                          casting="unsafe"))


@pytest.mark.parametrize("mask", [np.array([1, 0, 1]), np.array([1.0, 0.0, 1.0])])
def test_where_of_a_non_bool_array_is_refused_as_numpy_does(mask):
    """NumPy casts an array where= to bool only under the "safe" rule (it was
    accepted here); Python data is converted, as NumPy's."""
    with pytest.raises(TypeError, match="Cannot cast"):
        np.add(np.arange(3.0), 1, out=np.zeros(3), where=mask)
    x, out = lnp.asarray(np.arange(3.0)), lnp.zeros(3)
    for m in (mask, lnp.asarray(mask)):
        with pytest.raises(TypeError, match=rf"dtype\('{mask.dtype}'\) to dtype\('bool'\)"):
            lnp.add(x, 1, out=out, where=m)
    want = np.zeros(3)
    np.add(np.arange(3.0), 1, out=want, where=[1, 0, 1])
    lnp.add(x, 1, out=out, where=[1, 0, 1])
    np.testing.assert_array_equal(out.numpy(), want)


def test_out_of_a_narrower_kind_is_refused_as_numpy_does():
    with pytest.raises(TypeError, match="Cannot cast"):
        lnp.add(lnp.asarray(A), 1.5, out=lnp.zeros((2, 3), dtype=lnp.int64))
    with pytest.raises(TypeError):
        np.add(A, 1.5, out=np.zeros((2, 3), np.int64))


def test_dtype_and_methods_match_numpy():
    t = lnp.asarray(A)
    got = lnp.sqrt(lnp.abs(t), dtype=np.float32)
    assert got.dtype == lnp.float32
    np.testing.assert_allclose(got.numpy(), np.sqrt(np.abs(A), dtype=np.float32))
    np.testing.assert_array_equal(lnp.maximum.reduce(t, axis=1).numpy(), np.maximum.reduce(A, 1))
    np.testing.assert_array_equal(lnp.add.outer(lnp.asarray(B), B).numpy(), np.add.outer(B, B))
    np.testing.assert_array_equal(lnp.add.accumulate(t, axis=1).numpy(),
                                  np.add.accumulate(A, axis=1))
    assert (lnp.add.nin, lnp.add.nout, lnp.add.identity) == (2, 1, 0)
    assert lnp.multiply.__name__ == "multiply"


def test_plain_operands_still_give_a_lazy_tensor():
    got = lnp.add(A, B, dtype=np.float32)
    assert isinstance(got, lazy.Tensor) and got.dtype == lnp.float32
    np.testing.assert_array_equal(got.numpy(), np.add(A, B, dtype=np.float32))
    syncs = len(lazy.log.syncs)
    plain = lnp.add(A, B)
    assert isinstance(plain, lazy.Tensor) and len(lazy.log.syncs) == syncs  # lazy: no sync yet
    np.testing.assert_array_equal(plain.numpy(), A + B)


def test_reduce_where_picks_the_elements_read_not_the_outputs_written():
    x = np.arange(9.0).reshape(3, 3)
    m = np.array([True, False, True])
    want = np.add.reduce(x, axis=0, where=m, out=np.full(3, 9.0))
    got = lnp.add.reduce(lnp.asarray(x), axis=0, where=m, out=lnp.full(3, 9.0))
    np.testing.assert_array_equal(got.numpy(), want)  # was [9, 9, 15]: where masked the output


def test_casting_reaches_numpy_when_the_call_falls_back():
    x = np.array([1.5, -2.5, 3.7])
    want = np.add(x, 1, out=np.zeros(3, np.int64), dtype=np.int64, casting="unsafe")
    got = lnp.add(lnp.asarray(x), 1, out=lnp.zeros(3, dtype=lnp.int64), dtype=np.int64,
                  casting="unsafe")
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("call", [
    lambda m, o: m.add(m.ones((1, 3)), 1, out=o(3)),
    lambda m, o: m.add.reduce(m.ones((2, 3)), axis=0, out=o((2, 3)))], ids=["call", "reduce"])
def test_out_shapes_numpy_refuses_are_refused(call):
    with pytest.raises(ValueError):
        call(np, np.zeros)
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        call(lnp, lnp.zeros)
    with pytest.raises(TypeError, match="return arrays must be of ArrayType"):
        lnp.add(lnp.ones(3), 1, out=[0, 0, 0])


def test_a_leading_python_number_stays_weak():
    v32 = np.ones(3, np.float32)
    assert lnp.multiply(2, v32, out=None).dtype == np.multiply(2, v32, out=None).dtype
    i32 = np.arange(3, dtype=np.int32)
    assert lnp.add(1, i32, where=True).dtype == lnp.int32
    out = lnp.zeros(3, dtype=lnp.float32)
    np.testing.assert_array_equal(np.add(0.1, v32, out=out).numpy(), np.add(0.1, v32))


def test_ufuncs_copy_and_pickle_by_name_and_carry_numpys_names():
    import copy
    import pickle
    for f in (lnp.add, lnp.power, lnp.sqrt, lnp.fmax):
        assert copy.copy(f) is f and copy.deepcopy(f) is f
        assert pickle.loads(pickle.dumps(f)) is f
    assert (lnp.power.__name__, lnp.abs.__name__, lnp.arctan2.__name__) == \
        ("power", "absolute", "arctan2")
    assert "reduce" in dir(lnp.add)


def test_fallback_ufuncs_take_keywords_and_methods_too():
    x = np.array([1.0, 5.0, -3.0])
    t = lnp.asarray(x)
    assert lnp.fmax is lnp.fmax
    assert float(lnp.fmax.reduce(t)) == np.fmax.reduce(x)
    out = lnp.zeros(3)
    assert lnp.fmax(t, 2.0, out=out) is out
    np.testing.assert_array_equal(out.numpy(), np.fmax(x, 2.0))
    arr = np.zeros(3)
    assert lnp.fmax(t, 2.0, out=arr) is arr
    np.testing.assert_array_equal(arr, np.fmax(x, 2.0))
    q, r = lnp.zeros(3), lnp.zeros(3)
    lnp.divmod(t, 2, out=(q, r))
    np.testing.assert_array_equal(q.numpy(), np.divmod(x, 2)[0])
    np.testing.assert_array_equal(r.numpy(), np.divmod(x, 2)[1])
