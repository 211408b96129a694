"""matmul / @ against NumPy: 1-D, 2-D and batched shape rules, dtypes, strided operands."""
from __future__ import annotations

import numpy as np
import pytest

import lazy
from conftest import DTYPE_NAMES, assert_close, backends_used, sample

pytestmark = pytest.mark.usefixtures("strict_fallback")

RNG = np.random.default_rng(7)

SHAPES = [
    ((3,), (3,)), ((3,), (3, 4)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((1, 1), (1, 1)),
    ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (4, 3, 5)), ((4, 2, 3), (3,)),
    ((3,), (2, 3, 4)), ((0, 3), (3, 4)), ((2, 0), (0, 4)), ((2, 3), (3, 0)),
    ((0, 2, 3), (3, 4)), ((1, 2, 3), (7, 3, 2)), ((6, 1, 2, 3), (1, 5, 3, 2)),
    ((17, 33), (33, 9)),
]


@pytest.mark.parametrize("sa, sb", SHAPES, ids=str)
def test_matmul_shapes(sa, sb):
    a, b = sample(sa, "float64", RNG), sample(sb, "float64", RNG)
    A, B = lazy.asarray(a), lazy.asarray(b)
    expected = np.asarray(np.matmul(a, b))
    assert_close(A @ B, expected)
    assert_close(lazy.matmul(A, B), expected)
    assert_close(A.matmul(B), expected)


@pytest.mark.parametrize("da", DTYPE_NAMES)
@pytest.mark.parametrize("db", DTYPE_NAMES)
def test_matmul_dtypes(da, db):
    a, b = sample((3, 4), da, RNG), sample((4, 2), db, RNG)
    expected = np.matmul(a, b)
    assert_close(lazy.asarray(a) @ lazy.asarray(b), expected)


def test_matmul_strided_operands():
    base = sample((6, 8), "float32", RNG)
    A = lazy.asarray(base)
    for la, na in [(A.T, base.T), (A[::2, ::-1], base[::2, ::-1]),
                   (A[1:, 1::2], base[1:, 1::2])]:
        for lb, nb in [(A, base), (A[:, ::-1], base[:, ::-1]), (A[::-1, :3], base[::-1, :3])]:
            if na.shape[-1] != nb.shape[0]:
                continue
            assert_close(la @ lb, na @ nb, rtol=1e-5, atol=1e-5)
    v = lazy.asarray(np.arange(4.0))[None].expand(3, 4)  # stride-0 operand
    assert_close(v @ A[:4], np.broadcast_to(np.arange(4.0), (3, 4)) @ base[:4])


def test_matmul_with_numpy_and_pending_operands():
    a = sample((3, 4), "float32", RNG)
    b = sample((4, 5), "float32", RNG)
    A = lazy.asarray(a) * 2 + 1  # pending producer
    assert_close(A @ b, (a * 2 + 1) @ b, atol=1e-5)
    assert isinstance(b.T @ A.T, lazy.Tensor)  # ndarray on the left defers to the tensor
    assert_close(b.T @ A.T, b.T @ (a * 2 + 1).T, atol=1e-5)


def test_matmul_is_lazy_and_uses_blas():
    a, b = sample((8, 6), "float32", RNG), sample((6, 3), "float32", RNG)
    lazy.log.clear()
    C = lazy.maximum(lazy.asarray(a) @ lazy.asarray(b), 0.0) + 1
    assert len(lazy.log) == 0
    C.sync()
    assert backends_used() == ["blas+llvm"]  # BLAS with the epilogue fused
    assert_close(C, np.maximum(a @ b, 0) + 1, atol=1e-5)


@pytest.mark.parametrize("sa, sb", [((3,), (4,)), ((2, 3), (4, 5)), ((2, 3), (2,)),
                                    ((3,), (4, 2)), ((2, 2, 3), (3, 2, 4)),
                                    ((3, 2, 3), (2, 3, 4))])
def test_matmul_shape_errors(sa, sb):
    A, B = lazy.ones(*sa), lazy.ones(*sb)
    with pytest.raises(ValueError):
        np.matmul(np.ones(sa), np.ones(sb))
    with pytest.raises(ValueError) as info:
        A @ B
    msg = str(info.value)
    assert str(sa) in msg or str(sb) in msg or "broadcast" in msg


def test_matmul_0d_raises():
    with pytest.raises(ValueError, match="0-dimensional|dimension"):
        lazy.tensor(2.0) @ lazy.ones(3)
    with pytest.raises(ValueError):
        lazy.ones(3) @ lazy.tensor(2.0)
