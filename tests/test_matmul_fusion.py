"""Elementwise prologues and epilogues fused around BLAS matmul, panel by panel."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazy
from scheduler import matmul_fusion

# fresh_log: garbage of earlier tests (tensors held by a traceback cycle until the GC
# runs) must not add kernels to these tests' `lazy.sync()`.
pytestmark = pytest.mark.usefixtures("fresh_log")

RNG = np.random.default_rng(11)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def kernels_of_last_sync():
    last = lazy.log.syncs[-1].id
    return [k for k in lazy.log if k.sync_id == last]


@pytest.fixture
def small_panels(monkeypatch):
    """Panels of a few rows, so every test runs several BLAS calls per product."""
    monkeypatch.setattr(matmul_fusion, "PANEL_BYTES", 1)
    monkeypatch.setattr(matmul_fusion, "MIN_PANEL_ROWS", 3)


def test_prologue_matmul_epilogue_is_one_step(small_panels):
    an, bn, bias = f32(10, 7), f32(7, 5), f32(5)
    a, b = lazy.asarray(an), lazy.asarray(bn)
    y = lazy.maximum((2 * a) @ b + lazy.asarray(bias), 0)
    lazy.sync()
    (k,) = kernels_of_last_sync()
    assert k.backend == "blas+llvm" and k.kernel.startswith("m")
    assert [op.split("@")[0] for op in k.ops] == ["mul", "matmul", "add", "maximum"]
    assert "prologue and epilogue fused" in k.reason
    assert k.nbytes == (10 * 7 + 7 * 5 + 5 + 10 * 5) * 4  # the product is never in memory
    np.testing.assert_allclose(y.numpy(), np.maximum((2 * an) @ bn + bias, 0), rtol=1e-5,
                               atol=1e-5)


def test_both_prologues_matmul_epilogue_is_one_step(small_panels):
    """`b`'s prologue runs once, whole, into scratch; `a`'s per panel."""
    an, bn, bias = f32(10, 7), f32(7, 5), f32(5)
    a, b = lazy.asarray(an), lazy.asarray(bn)
    y = lazy.maximum((2 * a) @ lazy.exp(b - 1) + lazy.asarray(bias), 0)
    lazy.sync()
    (k,) = kernels_of_last_sync()
    assert k.backend == "blas+llvm"
    assert [op.split("@")[0] for op in k.ops] == ["mul", "sub", "exp", "matmul", "add", "maximum"]
    assert "a's prologue, b's prologue and epilogue fused" in k.reason
    assert k.nbytes == (10 * 7 + 7 * 5 + 5 + 10 * 5) * 4  # neither operand's expression counted
    np.testing.assert_allclose(y.numpy(), np.maximum((2 * an) @ np.exp(bn - 1) + bias, 0),
                               rtol=1e-5, atol=1e-5)


def test_b_prologue_alone_and_its_plan_reused_with_new_data(small_panels):
    for i in range(3):
        an, bn = f32(9, 4), f32(4, 6)
        y = lazy.asarray(an) @ (lazy.asarray(bn) * 3 + 1) - 2
        lazy.sync()
        (k,) = kernels_of_last_sync()
        assert "b's prologue and epilogue fused" in k.reason and "a's" not in k.reason
        assert lazy.log.syncs[-1].schedule == ("miss" if i == 0 else "hit")
        np.testing.assert_allclose(y.numpy(), an @ (bn * 3 + 1) - 2, rtol=1e-5, atol=1e-5)
    planned = lazy.explain(lazy.asarray(an) @ (lazy.asarray(bn) * 3 + 1) - 2).kernels
    assert len(planned) == 1 and "b's prologue and epilogue fused" in planned[0].reason


@pytest.mark.parametrize("case", ["kept", "read by the epilogue", "read transposed",
                                  "same as a"])
def test_b_prologue_that_must_exist_is_its_own_kernel(small_panels, case):
    an, bn = f32(6, 6), f32(6, 6)
    a, b = lazy.asarray(an), lazy.asarray(bn)
    p = b * 2
    if case == "kept":
        y = a @ p + 1
        ref = an @ (bn * 2) + 1
    elif case == "read by the epilogue":
        y = a @ p + p
        ref = an @ (bn * 2) + bn * 2
    elif case == "read transposed":
        y = a @ p.T + 1
        ref = an @ (bn * 2).T + 1
        del p
    else:
        y = p @ p + 1
        ref = (bn * 2) @ (bn * 2) + 1
        del p
    lazy.sync()
    ks = kernels_of_last_sync()
    assert [k.kernel.split("_")[1] for k in ks] == ["mul", "matmul"]
    assert "b's prologue" not in ks[1].reason
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_epilogue_reads_other_operands_through_any_view(small_panels):
    """Only the product must be read in storage order; the epilogue's other
    operands (broadcast rows, a transposed matrix) are sliced per panel too."""
    an, bn, cn, col = f32(11, 4), f32(4, 6), f32(6, 11), f32(11, 1)
    c, k = lazy.asarray(cn), lazy.asarray(col)
    y = lazy.tanh(lazy.asarray(an) @ lazy.asarray(bn) * c.T - k)
    lazy.sync()
    assert [r.backend for r in kernels_of_last_sync()] == ["blas+llvm"]
    np.testing.assert_allclose(y.numpy(), np.tanh(an @ bn * cn.T - col), rtol=1e-5, atol=1e-6)


def test_prologue_reading_a_transposed_input(small_panels):
    xn, bn = f32(5, 9), f32(5, 4)
    x = lazy.asarray(xn)
    y = (lazy.exp(x.T) - 1) @ lazy.asarray(bn) + 1
    lazy.sync()
    (k,) = kernels_of_last_sync()
    assert [op.split("@")[0] for op in k.ops] == ["exp", "sub", "matmul", "add"]
    np.testing.assert_allclose(y.numpy(), (np.exp(xn.T) - 1) @ bn + 1, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["product kept", "read twice", "read transposed",
                                  "batched", "reduction reads it"])
def test_product_that_must_exist_is_not_fused(case):
    an, bn = f32(2, 6, 6), f32(6, 6)
    a, b = lazy.asarray(an[0]), lazy.asarray(bn)
    if case == "product kept":
        p = a @ b
        y = p + 1
        ref = an[0] @ bn + 1
    elif case == "read twice":
        p = a @ b
        y, z = p + 1, (p * 2).sum()
        ref = an[0] @ bn + 1
    elif case == "read transposed":
        y = (a @ b).T + 1
        ref = (an[0] @ bn).T + 1
    elif case == "batched":
        y = lazy.asarray(an) @ b + 1
        ref = an @ bn + 1
    else:
        y = (a @ b).sum(axis=0)
        ref = (an[0] @ bn).sum(axis=0)
    lazy.sync()
    backends = [k.backend for k in kernels_of_last_sync()]
    assert "blas" in backends and "blas+llvm" not in backends
    np.testing.assert_allclose(y.numpy(), ref, rtol=1e-5, atol=1e-5)
    if case == "read twice":  # the second reader saw the same product
        np.testing.assert_allclose(z.numpy(), (an[0] @ bn * 2).sum(), rtol=1e-5)


def test_fused_plan_is_reused_with_new_data(small_panels):
    for i in range(3):
        an, bn = f32(8, 3), f32(3, 8)
        y = lazy.sqrt(lazy.abs(lazy.asarray(an) * 3 @ lazy.asarray(bn)))
        lazy.sync()
        assert lazy.log.syncs[-1].schedule == ("miss" if i == 0 else "hit")
        np.testing.assert_allclose(y.numpy(), np.sqrt(np.abs(an * 3 @ bn)), rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 20), k=st.integers(1, 9), n=st.integers(1, 9),
       rows=st.integers(1, 7), dtype=st.sampled_from(["float32", "float64", "int64"]))
def test_panels_against_numpy(m, k, n, rows, dtype):
    old = matmul_fusion.PANEL_BYTES, matmul_fusion.MIN_PANEL_ROWS
    matmul_fusion.PANEL_BYTES, matmul_fusion.MIN_PANEL_ROWS = 1, rows
    try:
        an = (RNG.standard_normal((m, k)) * 4).astype(dtype)
        bn = (RNG.standard_normal((k, n)) * 4).astype(dtype)
        en = (RNG.standard_normal((m, n)) * 4).astype(dtype)
        y = lazy.maximum((lazy.asarray(an) + 1) @ (lazy.asarray(bn) - 2) - lazy.asarray(en), 2)
        lazy.sync()
        assert [r.backend for r in kernels_of_last_sync()] == ["blas+llvm"]
        np.testing.assert_allclose(y.numpy(), np.maximum((an + 1) @ (bn - 2) - en, 2),
                                   rtol=1e-5, atol=1e-4)
    finally:
        matmul_fusion.PANEL_BYTES, matmul_fusion.MIN_PANEL_ROWS = old
