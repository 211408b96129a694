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
