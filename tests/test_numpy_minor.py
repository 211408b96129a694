"""Smaller NumPy 2 behaviours, against NumPy (values, dtypes, shapes): shifts
of bools, a NumPy scalar of a dtype lazyrt lacks on the left of a ufunc,
`casting=` on ufunc calls and `ufunc.outer` without `out=`, a negative
NumPy integer exponent, and NumPy's ndarray methods on tensors.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import lazy
import lazy.numpy as lnp
from scheduler.backends import FallbackError
from conftest import same

pytestmark = pytest.mark.usefixtures("fresh_log")

BOOLS = np.array([[True, False, True], [False, True, True]])
ROW = np.array([True, False, True])
INTS = np.array([1, 5, -3], dtype=np.int32)


# -- 1. shifts of bools ---------------------------------------------------------------
SHIFTS = {"a<<True": lambda m, a, b, i: a << True, "a>>True": lambda m, a, b, i: a >> True,
          "True<<a": lambda m, a, b, i: True << a, "a<<b": lambda m, a, b, i: a << b,
          "a>>b": lambda m, a, b, i: a >> b, "a<<1": lambda m, a, b, i: a << 1,
          "a<<int32": lambda m, a, b, i: a << i, "int32>>a": lambda m, a, b, i: i >> a,
          "np.left_shift": lambda m, a, b, i: np.left_shift(a, True),
          "np.right_shift": lambda m, a, b, i: np.right_shift(a, b),
          "m.left_shift": lambda m, a, b, i: m.left_shift(a, True),
          "m.bitwise_right_shift": lambda m, a, b, i: m.bitwise_right_shift(True, a),
          "m.bitwise_left_shift": lambda m, a, b, i: m.bitwise_left_shift(i, a)}


@pytest.mark.parametrize("fn", SHIFTS.values(), ids=SHIFTS.keys())
def test_shifts_of_bools_promote_as_numpy(fn):
    """NumPy shifts bools as int8 (`bools << True` is int8 [2, 0]); lazyrt
    raised "expected integer operands". lazyrt lacks int8: bool with bool
    gives int64, as its `**` and `//` of bools; with an integer, its dtype."""
    want = fn(np, BOOLS, ROW, INTS)
    got = fn(lnp, lnp.asarray(BOOLS), lnp.asarray(ROW), lnp.asarray(INTS))
    if want.dtype == np.int8:
        want = want.astype(np.int64)
    same(got, want)


def test_inplace_shift_of_bools_raises_as_numpy():
    """NumPy cannot cast the int8 result back into bools (UFuncTypeError, a
    TypeError); lazyrt says so too, and the tensor keeps its values."""
    a, t = BOOLS.copy(), lnp.asarray(BOOLS.copy())
    with pytest.raises(TypeError, match=r"Cannot cast ufunc 'left_shift' output .*'bool'"):
        a <<= True
    for shift in (lambda x: x.__ilshift__(True), lambda x: x.__irshift__(ROW),
                  lambda x: np.left_shift(x, True, out=x)):
        with pytest.raises(TypeError, match=r"(can't be|Cannot) cast .*bool"):
            shift(t)
    same(t, BOOLS)


# -- 2. a NumPy scalar of a dtype lazyrt lacks, on the left ---------------------------
@pytest.mark.parametrize("dtype, scalar", [
    (np.int32, np.uint8(3)), (np.float32, np.float16(1.5)), (np.int64, np.uint8(200)),
    (np.int32, np.int8(-2)), (np.int32, np.uint64(3)), (np.float64, np.uint16(7))])
@pytest.mark.parametrize("fn", [
    lambda m, s, x: s * x, lambda m, s, x: x * s,
    lambda m, s, x: s + x, lambda m, s, x: s - x, lambda m, s, x: x - s,
    lambda m, s, x: np.multiply(s, x), lambda m, s, x: np.add(x, s),
    lambda m, s, x: np.subtract(s, x), lambda m, s, x: np.maximum(s, x),
    lambda m, s, x: m.multiply(s, x), lambda m, s, x: m.maximum(x, s)])
def test_numpy_scalar_lazyrt_lacks_on_the_left_is_native(dtype, scalar, fn):
    """`np.uint8(3) * t` reaches `t.__array_ufunc__` (the scalar defers), which
    ran it as a NumPy fallback (FallbackError under LAZY_FALLBACK=error); it is
    native now, with NumPy's dtype and exact values (200, not -56)."""
    a = np.array([[-2, 0, 3], [4, 100, -7]], dtype=dtype)
    same(fn(lnp, scalar, lnp.asarray(a)), fn(np, scalar, a))
    assert lazy.log.counters.fallbacks == 0


# -- 3. casting= without out= ----------------------------------------------------------
F32 = np.array([1.5, -2.0, 0.25], dtype=np.float32)
I64 = np.array([2, 0, -1], dtype=np.int64)
SQUARES = np.array([1, 4, 9], dtype=np.int32)


@pytest.mark.parametrize("name, x, y, casting", [
    ("add", INTS, 1.5, "no"), ("add", INTS, 1, "no"), ("add", F32, 1.5, "no"),
    ("add", F32, 2, "equiv"), ("add", INTS, True, "no"), ("add", INTS, I64, "equiv"),
    ("add", INTS, I64, "safe"), ("add", INTS, 1.5, "same_kind"), ("add", INTS, 1.5, "unsafe"),
    ("multiply", I64, F32, "safe"), ("multiply", I64, F32, "same_kind"),
    ("subtract", 2.5, INTS, "no"), ("maximum", np.float64(2), F32, "equiv"),
    ("maximum", np.float32(2), F32, "no"), ("divide", INTS, INTS, "no"),
    ("divide", INTS, INTS, "safe"), ("less", INTS, 1.5, "no"), ("sqrt", SQUARES, None, "no"),
    ("sqrt", SQUARES, None, "same_kind"), ("left_shift", BOOLS, True, "no"),
    ("multiply", np.uint8(3), INTS, "no"), ("multiply", np.uint8(3), INTS, "safe")])
@pytest.mark.parametrize("via", ["numpy", "lazy.numpy"])
def test_casting_applies_to_inputs_without_out(name, x, y, casting, via):
    """NumPy checks each input's cast to the loop's dtype under `casting=`
    (`np.add(int32, 1.5, casting="no")` needs float64: UFuncTypeError);
    lazyrt ignored it without `out=` and returned float64. Python numbers
    are weak (`np.add(int32, 1, casting="no")` is fine), a Python bool is not."""
    args = (x,) if y is None else (x, y)
    lazy_args = tuple(lnp.asarray(v) if isinstance(v, np.ndarray) else v for v in args)
    fn = getattr(np if via == "numpy" else lnp, name)
    try:
        want = getattr(np, name)(*args, casting=casting)
    except TypeError as e:
        with pytest.raises(TypeError) as info:
            fn(*lazy_args, casting=casting)
        assert str(info.value) == str(e)  # names the dtypes (or Python type) and the rule
        assert f"rule '{casting}'" in str(e)
        return
    same(fn(*lazy_args, casting=casting), want)


def test_casting_applies_to_inputs_with_out():
    """With `out=` only the output's cast was checked: float64 into float64
    passed, though input 0 (int32) cannot become float64 under 'no'."""
    out = lnp.zeros(3, dtype=lnp.float64)
    with pytest.raises(TypeError, match=r"input 0 from dtype\('int32'\) to "
                                        r"dtype\('float64'\) with casting rule 'no'"):
        np.add(lnp.asarray(INTS), 1.5, out=out, casting="no")
    np.add(lnp.asarray(INTS), 1, out=out, casting="safe")
    same(out, np.add(INTS, 1, out=np.zeros(3), casting="safe"))


def test_casting_error_is_raised_when_the_op_is_built():
    """The check is at the user's call, and nothing pending is lost."""
    t = lnp.asarray(INTS) * 2
    with pytest.raises(TypeError, match="casting rule 'no'"):
        np.add(t, 1.5, casting="no")
    same(t, INTS * 2)


# -- 4. a NumPy integer exponent -------------------------------------------------------
POWERS = {"**": lambda m, t, e: t ** e, "np.power": lambda m, t, e: np.power(t, e),
          "m.power": lambda m, t, e: m.power(t, e)}


@pytest.mark.parametrize("exponent", [np.int8(-2), np.int32(-1), np.int64(-3), np.int64(3),
                                      np.int32(2), np.float32(-2)], ids=repr)
@pytest.mark.parametrize("base", [INTS, ROW, INTS.astype(np.float32)], ids=["int32", "bool",
                                                                          "float32"])
@pytest.mark.parametrize("fn", POWERS.values(), ids=POWERS.keys())
def test_numpy_integer_exponent_known_when_built(fn, base, exponent):
    """A negative NumPy integer exponent of an integer or bool base raises
    when the op is built, as NumPy does and as a Python int already did
    (it gave 0 for |base| > 1); otherwise NumPy's values and dtype."""
    try:
        with np.errstate(divide="ignore"):  # False ** -2.0 is inf
            want = fn(np, base, exponent)
    except ValueError as e:
        # np.power(bools, np.int8(-2)) is int8, which lazyrt lacks: NumPy's
        # fallback runs it and raises (FallbackError where fallbacks are errors)
        if fn is POWERS["np.power"] and base.dtype == bool and exponent.dtype == np.int8:
            with pytest.raises((ValueError, FallbackError)):
                fn(lnp, lnp.asarray(base), exponent)
            return
        with pytest.raises(ValueError, match=str(e)):
            fn(lnp, lnp.asarray(base), exponent)
        return
    same(fn(lnp, lnp.asarray(base), exponent), want)


@pytest.mark.parametrize("casting", ["no", "safe", "same_kind"])
@pytest.mark.parametrize("other", [F32, 1.5, 2, INTS], ids=["float32", "1.5", "2", "int32"])
def test_casting_applies_to_outer(other, casting):
    """`np.add.outer(int32_t, 1.5, casting="no")` was computed (float64);
    NumPy refuses. outer makes a Python number an array first, so even `2`
    is int64 there and int32 may not become int64 under 'no'."""
    args = (INTS, other)
    lazy_args = (lnp.asarray(INTS), lnp.asarray(other) if isinstance(other, np.ndarray) else other)
    try:
        want = np.multiply.outer(*args, casting=casting)
    except TypeError as e:
        with pytest.raises(TypeError, match=re.escape(str(e))):
            np.multiply.outer(*lazy_args, casting=casting)
        return
    same(np.multiply.outer(*lazy_args, casting=casting), want)


# -- ndarray methods ---------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda x: x.swapaxes(0, 1), lambda x: x.swapaxes(-1, 0),
    lambda x: x.dot(np.arange(4.0)), lambda x: x.T.dot(x),
    lambda x: x.trace(), lambda x: x.trace(1), lambda x: x[None].trace(0, 1, 2),
    lambda x: (x / 7).round(), lambda x: (x / 7).round(2), lambda x: x.conj(),
    lambda x: x.conjugate(), lambda x: x[::-1].argsort(), lambda x: x[:, ::-1].argsort(0),
], ids=["swapaxes", "swapaxes-neg", "dot-vec", "dot-mat", "trace", "trace-offset",
        "trace-axes", "round", "round-2", "conj", "conjugate", "argsort", "argsort-0"])
def test_ndarray_methods_match_numpys(call, allow_fallback):
    """NumPy code run under `python -m lazy` calls these on tensors; they
    used to raise AttributeError."""
    a = (np.arange(12.0).reshape(3, 4) * 5) % 7
    same(call(lazy.asarray(a)), np.asarray(call(a)))


def test_ndarray_cumsum_fill_put_and_item_match_numpys(allow_fallback):
    a = np.arange(12.0).reshape(3, 4)
    t = lazy.asarray(a.copy())
    same(t.cumsum(), a.cumsum())
    same(t.cumsum(1), a.cumsum(1))
    same(t.cumsum(0, np.int64), a.cumsum(0, np.int64))
    assert [t.item(5), t.item(-1), t.item(1, 2), t.item((2, 3))] == \
        [a.item(5), a.item(-1), a.item(1, 2), a.item((2, 3))]
    with pytest.raises(IndexError):
        t.item(12)
    with pytest.raises(ValueError, match="12 elements"):
        t.item()
    row = t[1]
    assert t.fill(2.5) is None
    assert t.put([0, 5], [7.0, 8.0]) is None
    want = np.full((3, 4), 2.5)
    want.put([0, 5], [7.0, 8.0])
    same(t, want)
    same(row, want[1])  # a view sees both writes
