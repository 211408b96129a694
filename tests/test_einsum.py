"""einsum (lazy/einsum.py): views, fused products and sums, and matmuls,
checked against NumPy's einsum. This module runs under LAZY_FALLBACK=error,
so none of it is a fallback."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazy
import lazy.numpy as lnp
from conftest import sample

pytestmark = pytest.mark.usefixtures("strict_fallback")

LETTERS = "abcdA"


@st.composite
def expressions(draw):
    """1-3 operands over a few labels, some repeated in one operand (a
    diagonal), some of length 1 in one operand (broadcast), maybe a
    `...`, and an explicit output (any order, any subset) or NumPy's implicit one."""
    size = {l: draw(st.integers(1, 4)) for l in LETTERS}
    n_ops = draw(st.integers(1, 3))
    ellipsis = draw(st.booleans())
    dots = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2)) if ellipsis else []
    terms, shapes = [], []
    for _ in range(n_ops):
        ls = draw(st.lists(st.sampled_from(LETTERS), min_size=0, max_size=3))
        shape = [1 if draw(st.integers(0, 5)) == 0 else size[l] for l in ls]
        for l in set(ls):  # a repeated label's axes have one length
            same = [shape[i] for i, x in enumerate(ls) if x == l]
            shape = [max(same) if x == l else n for x, n in zip(ls, shape)]
        term = "".join(ls)
        if ellipsis and draw(st.booleans()):
            k = draw(st.integers(0, len(dots)))
            pos = draw(st.integers(0, len(ls)))
            term = term[:pos] + "..." + term[pos:]
            shape = shape[:pos] + dots[len(dots) - k:] + shape[pos:]
        terms.append(term)
        shapes.append(tuple(shape))
    used = sorted({c for t in terms for c in t if c.isalpha()})
    subscripts = ",".join(terms)
    if draw(st.booleans()):
        out = draw(st.permutations(used).flatmap(
            lambda p: st.integers(0, len(p)).map(lambda k: "".join(p[:k]))))
        if any("..." in t for t in terms):
            out = "..." + out
        subscripts += "->" + out
    return subscripts, shapes


@settings(max_examples=120, deadline=None)
@given(expr=expressions(), dtype=st.sampled_from(["float64", "float32", "int32", "int64",
                                                  "bool"]),
       seed=st.integers(0, 2 ** 16))
def test_einsum_matches_numpy(expr, dtype, seed):
    subscripts, shapes = expr
    rng = np.random.default_rng(seed)
    arrays = [sample(s, dtype, rng) for s in shapes]
    want = np.asarray(np.einsum(subscripts, *arrays))
    got = lnp.einsum(subscripts, *(lazy.asarray(a) for a in arrays))
    assert (got.shape, got.dtype.name) == (want.shape, want.dtype.name), subscripts
    if dtype == "float32":  # NumPy sums float32 in float32; lazyrt in float64 blocks
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)
    else:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_nothing_runs_before_a_sync_and_each_form_is_one_kernel(fresh_log):
    """A matrix product is one matmul, a product summed where a letter goes
    one fused reduction, a broadcast product one elementwise kernel."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((6, 5)), rng.standard_normal((5, 4))
    x, y = lazy.asarray(a), lazy.asarray(b)
    cases = [("ij,jk->ik", (x, y), (a, b), ["matmul"]),
             ("ij,ij->i", (x, x), (a, a), ["mul sum"]),
             ("i,j->ij", (x[0], y[0]), (a[0], b[0]), ["mul"]),
             ("ij,jk,k->i", (x, y, y[0]), (a, b, b[0]), ["mul sum", "mul sum"])]
    results = [lnp.einsum(s, *ts) for s, ts, _, _ in cases]
    assert len(lazy.log) == 0
    for (s, _, arrays, ops), r in zip(cases, results):
        lazy.log.clear()
        np.testing.assert_allclose(r.numpy(), np.einsum(s, *arrays), rtol=1e-12)
        assert [" ".join(o.split("@")[0] for o in rec.ops) for rec in lazy.log] == ops, s


def test_a_prologue_and_epilogue_fuse_into_the_matmul(fresh_log):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((64, 32)), rng.standard_normal((32, 16))
    r = lnp.maximum(lnp.einsum("ij,jk->ik", lazy.asarray(a) * 2, lazy.asarray(b)) + 1, 0)
    np.testing.assert_allclose(r.numpy(), np.maximum(np.einsum("ij,jk->ik", a * 2, b) + 1, 0),
                               rtol=1e-12)
    assert [rec.kernel.split("_")[0] for rec in lazy.log] == ["m0"], lazy.log.table()


def test_a_view_of_one_operand_is_a_view_as_numpys():
    a = np.arange(16.0).reshape(4, 4)
    x = lazy.asarray(a.copy())
    diag, t = lnp.einsum("ii->i", x), lnp.einsum("ij->ji", x)
    assert lazy.shares_memory(diag, x) and lazy.shares_memory(t, x)
    assert np.shares_memory(np.einsum("ii->i", a), a)
    diag[1] = -1.0  # writes through, as through NumPy's view
    a[1, 1] = -1.0
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal(t.numpy(), a.T)


@pytest.mark.parametrize("subscripts, shapes", [
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),  # broadcast axes line up from the right
    ("i...,...->...i", [(3, 2, 1), (4,)]),
    ("ij...,j", [(2, 3), (3,)]),                  # "..." of no axes
])
def test_broadcast_axes_match_numpy(subscripts, shapes):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in shapes]
    got, want = lnp.einsum(subscripts, *map(lazy.asarray, arrays)), np.einsum(subscripts, *arrays)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_numpys_other_arguments():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    x, y = lazy.asarray(a), lazy.asarray(b)
    np.testing.assert_allclose(lnp.einsum(x, [0, 1], y, [1, 2], [0, 2]).numpy(),
                               np.einsum(a, [0, 1], b, [1, 2], [0, 2]), rtol=1e-12)
    np.testing.assert_allclose(lnp.einsum(x, [Ellipsis, 1]).numpy(),
                               np.einsum(a, [Ellipsis, 1]))
    f = lnp.einsum("ij,jk", x.astype("float32"), y.astype("float32"), dtype="float64")
    assert f.dtype.name == "float64"
    out = lazy.zeros((3, 2), dtype="float64")
    assert lnp.einsum("ij,jk", x, y, out=out, optimize=True) is out
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-12)
    with pytest.raises(TypeError, match="Cannot cast array data from dtype\\('float64'\\) to "
                                        "dtype\\('int32'\\) according to the rule 'safe'"):
        lnp.einsum("ij,jk", x, y, dtype="int32")
    assert np.einsum("ij,jk", a, b, dtype="int32", casting="unsafe").dtype == np.int32
    assert lnp.einsum("ij,jk", x, y, dtype="int32", casting="unsafe").dtype.name == "int32"


@pytest.mark.parametrize("subscripts, shapes, message", [
    ("ij,jk", [(2, 3)], "fewer operands provided to einstein sum"),
    ("ij", [(2, 3), (3,)], "more operands provided to einstein sum"),
    ("ij", [(2, 3, 4)], "operand has more dimensions than subscripts given"),
    ("ijk", [(2, 3)], "too many subscripts for operand 0"),
    ("ij->k", [(2, 3)], "output subscript 'k' which never appeared in an input"),
    ("ij->ii", [(2, 3)], "output subscript 'i' multiple times"),
    ("i1", [(2, 3)], "invalid subscript '1' in einstein sum subscripts string"),
    ("i.i", [(2, 3)], "contains a '.' that is not part of an ellipsis"),
    ("ii->i", [(2, 3)], r"collapsing index 'i' don't match \(2 != 3\)"),
    ("...i->i", [(2, 3)], "no '...' ellipsis provided to broadcast"),
    ("ij,jk", [(2, 3), (4, 5)], "labelled 'j' has length 3 in an earlier operand but 4"),
])
def test_bad_subscripts_raise_numpys_error_at_the_call(subscripts, shapes, message):
    arrays = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError):
        np.einsum(subscripts, *arrays)
    with pytest.raises(ValueError, match=message):
        lnp.einsum(subscripts, *(lazy.asarray(a) for a in arrays))


def test_on_the_emulated_gpu(cuda):
    """The same plan on device cuda: cuBLAS's matmul and our fused kernels."""
    from cuda_lazy_helpers import check
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    x, y = lazy.asarray(a, device="cuda"), lazy.asarray(b, device="cuda")
    check(lnp.einsum("ij,jk->ik", x, y), np.einsum("ij,jk->ik", a, b))
    check(lnp.einsum("ij,ij->j", x, x), np.einsum("ij,ij->j", a, a))
    check(lnp.einsum("ii", x[:3]), np.einsum("ii", a[:3]))
    with pytest.raises(ValueError, match="expected all operands on the same device, but "
                                         "found cpu and cuda"):
        lazy.einsum("ij,jk", lazy.asarray(a), y)


def test_the_torch_form_matches_torch():
    """lazy.einsum takes operands one by one or as one list, as torch.einsum."""
    import torch
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    want = torch.einsum("ij,jk->ik", torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_allclose(lazy.einsum("ij,jk->ik", lazy.asarray(a), lazy.asarray(b)).numpy(),
                               want, rtol=1e-12)
    np.testing.assert_allclose(lazy.einsum("ij,jk->ik", [lazy.asarray(a), lazy.asarray(b)]).numpy(),
                               want, rtol=1e-12)
